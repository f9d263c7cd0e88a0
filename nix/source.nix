# The source tree that builds and checks see, as a fileset: exactly what cargo
# and the checks read, so editing docs or Nix files rebuilds nothing.
{
  lib,
  craneLib,
}: let
  root = ../.;

  crateDirs = builtins.attrNames (lib.filterAttrs (_: type: type == "directory") (
    if builtins.pathExists ../crates
    then builtins.readDir ../crates
    else {}
  ));
in {
  src = lib.fileset.toSource {
    inherit root;
    fileset =
      lib.fileset.difference
      (lib.fileset.unions ([
          # Cargo.toml and Cargo.lock files, *.rs, and every *.toml
          # (rust-toolchain.toml, .config/nextest.toml, ...).
          (craneLib.fileset.commonCargoSources root)
          # Every crate's lib.rs is documented by `include_str!("../README.md")`.
          (lib.fileset.fileFilter (file: file.name == "README.md") ../crates)
          # The scripts the checks run: the same ones CI runs without Nix.
          ../ci
          # CUDA kernels read at compile time: *.cu and the committed *.ptx.
          (lib.fileset.maybeMissing ../crates/cuda/kernels)
          # The cross-crate test package and its data.
          (lib.fileset.maybeMissing ../tests)
        ]
        # Committed fixtures of each crate's tests (golden proofs and such).
        ++ map (name: lib.fileset.maybeMissing (../crates + "/${name}/tests/fixtures")) crateDirs))
      (lib.fileset.unions [
        # Only ci/check-nix.sh uses these: the Nix-formatter wrapper crate and
        # the stand-in flakes. Leaving them out keeps the build independent of them.
        (lib.fileset.maybeMissing ../ci/tools)
        (lib.fileset.maybeMissing ../tests/nix)
      ]);
  };

  # The flake's own Nix files and the script that lints them (the nix-fmt check).
  nix = lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions [
      (lib.fileset.fileFilter (file: file.hasExt "nix") root)
      ../ci/check-nix.sh
    ];
  };
}
