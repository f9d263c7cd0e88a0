{
  description = "Structural assertions on ballast's flake, evaluated against the stand-in inputs";

  # ci/check-nix.sh replaces every URL below with --override-input (absolute
  # path: URLs of a temporary copy). ballast's nixpkgs and crane follow these;
  # its rust-overlay is overridden as `ballast/rust-overlay`, so that the
  # `follows` of ballast's own flake.nix decides which nixpkgs that one gets.
  inputs = {
    nixpkgs.url = "path:../nixpkgs";
    crane.url = "path:../crane";
    ballast = {
      url = "path:../../..";
      inputs = {
        nixpkgs.follows = "nixpkgs";
        crane.follows = "crane";
      };
    };
  };

  outputs = {
    ballast,
    nixpkgs,
    ...
  }: let
    results = import ./assertions.nix {inherit ballast nixpkgs;};
    failed = builtins.filter (result: !result.ok) results;
  in {
    # `nix eval --json .#report`: what passed, and what failed with the value seen.
    report = {
      passed = map (result: result.name) (builtins.filter (result: result.ok) results);
      failed = map (result: {inherit (result) name got;}) failed;
    };
  };
}
