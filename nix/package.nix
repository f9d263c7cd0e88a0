# The `cli` package, built the crane way: the workspace's dependencies once
# (`cargoArtifacts`, shared with the checks), then the `cli` binary on top.
{
  pkgs,
  craneLib,
  src,
  platform,
}: let
  commonArgs = {
    inherit src;
    # The version comes from [workspace.package] in the root Cargo.toml.
    pname = "ballast";
    strictDeps = true;
    # Every cargo invocation uses the committed Cargo.lock as it is.
    cargoExtraArgs = "--locked";

    # Same page size wherever the binary is built (see `platforms` in flake.nix).
    # Set for the dependencies too: tikv-jemalloc-sys is built there.
    JEMALLOC_SYS_WITH_LG_PAGE = platform.jemallocLgPage;

    # With JEMALLOC_OVERRIDE (or its <TARGET>_ form) set, tikv-jemalloc-sys links
    # that library instead of its bundled, `_rjem_`-prefixed jemalloc. An
    # unprefixed library then silently ignores the `_rjem_malloc_conf` that
    # ballast compiles in, and the allocator policy is lost. nixpkgs'
    # rust-jemalloc-sys setup hook sets it, so refuse to build rather than ship that.
    preBuild = ''
      if overrides=$(env | grep -E '^([A-Za-z0-9_]+_)?JEMALLOC_OVERRIDE='); then
        echo "error: JEMALLOC_OVERRIDE is set:" >&2
        echo "$overrides" >&2
        echo "error: ballast must link the bundled, _rjem_-prefixed jemalloc of tikv-jemalloc-sys;" >&2
        echo "error: with an override its compiled-in _rjem_malloc_conf is ignored." >&2
        echo "error: remove rust-jemalloc-sys from the build inputs or unset the variable." >&2
        exit 1
      fi
    '';
  };

  cargoArtifacts = craneLib.buildDepsOnly commonArgs;

  cli = craneLib.buildPackage (commonArgs
    // {
      inherit cargoArtifacts;
      pname = "cli";
      cargoExtraArgs = "--locked -p cli";
      # The tests run once, in the nextest and jemalloc-conf checks.
      doCheck = false;
      # The CUDA backend dlopen()s libcuda at run time: put the NixOS driver
      # directory (/run/opengl-driver/lib) in the binary's RUNPATH.
      nativeBuildInputs = [pkgs.autoAddDriverRunpath];
      # No stripAllList: stdenv strips debug info only (strip -S), so .symtab
      # keeps `_rjem_malloc_conf` for ci/check-malloc-conf-symbol.sh.
      meta = {
        description = "ballast STARK prover: prove, verify and doctor";
        mainProgram = "cli";
        license = [pkgs.lib.licenses.mit pkgs.lib.licenses.asl20];
      };
    });
in {
  inherit commonArgs cargoArtifacts cli;
}
