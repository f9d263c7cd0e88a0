{
  description = "Stand-in for crane (ci/check-nix.sh): builders that record their arguments";

  # Like crane since 0.19: no inputs; the caller's pkgs comes in through mkLib.
  outputs = _: {mkLib = pkgs: import ./lib.nix {inherit pkgs;};};
}
