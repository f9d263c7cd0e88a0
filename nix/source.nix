# The source tree that builds and checks see, as a fileset: exactly what cargo
# and the checks read, so editing docs (but docs/protocol.md, whose layout table
# a test reads) or Nix files rebuilds nothing.
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
          # (rust-toolchain.toml, deny.toml, .cargo/config.toml, ...).
          (craneLib.fileset.commonCargoSources root)
          # Every crate's lib.rs is documented by `include_str!("../README.md")`.
          (lib.fileset.fileFilter (file: file.name == "README.md") ../crates)
          # The scripts the checks run: the same ones CI runs without Nix.
          ../ci
          # CUDA kernels read at compile time: *.cu and the committed *.ptx.
          (lib.fileset.maybeMissing ../crates/cuda/kernels)
          # The proof-format table a test of ballast-stark compares with the code.
          ../docs/protocol.md
        ]
        # Committed fixtures of each crate's tests (golden proofs and such).
        ++ map (name: lib.fileset.maybeMissing (../crates + "/${name}/tests/fixtures")) crateDirs))
      (lib.fileset.unions [
        # Only ci/check-nix.sh uses the Nix-formatter wrapper crate: leaving it
        # out keeps the build independent of it.
        (lib.fileset.maybeMissing ../ci/tools)
        # The cargo-fuzz targets are their own workspace with their own lock file, run by
        # ci/check-fuzz.sh; nothing the flake builds or checks reads them.
        (lib.fileset.maybeMissing ../fuzz)
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
