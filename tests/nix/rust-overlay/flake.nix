{
  description = "Stand-in for rust-overlay (ci/check-nix.sh): fromRustupToolchainFile only";

  # Declared like the real rust-overlay's, so ballast's `follows` has something
  # to redirect; never fetched, because it follows ballast's nixpkgs.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-26.05";

  outputs = {nixpkgs, ...}: {
    overlays.default = final: _prev: {
      rust-bin.fromRustupToolchainFile = file: let
        toolchain = (builtins.fromTOML (builtins.readFile file)).toolchain;
      in
        final.stubDerivation {
          kind = "rust-toolchain";
          name = "rust-${toolchain.channel}";
        }
        // {
          stub = {
            kind = "rust-toolchain";
            inherit toolchain;
            # Which nixpkgs this input got: the probe checks the follows.
            nixpkgs = nixpkgs.outPath;
          };
        };
    };
  };
}
