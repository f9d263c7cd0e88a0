{
  description = "Stand-in for nixpkgs (ci/check-nix.sh): only what ballast's flake calls";

  # `import nixpkgs { ... }` reads default.nix; `lib` is the fake library.
  outputs = _: {lib = import ./lib.nix;};
}
