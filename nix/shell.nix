# `nix develop`: the toolchain from rust-toolchain.toml, every check's inputs,
# and the tools the ci/ scripts call.
{
  pkgs,
  craneLib,
  checks,
}:
craneLib.devShell {
  inherit checks;
  packages = [
    pkgs.cargo-nextest
    pkgs.alejandra
    pkgs.deadnix
    pkgs.binutils # nm, for ci/check-malloc-conf-symbol.sh
    pkgs.python3 # ci/check-flake-lock.py
    pkgs.git # ci/check-nix.sh lists the tracked files
  ];
  # ci/check-nix.sh: use the alejandra and deadnix above instead of
  # installing its pinned copies with cargo.
  BALLAST_NIX_TOOLS = "path";
}
