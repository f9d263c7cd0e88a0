# `nix flake check`. Each check runs the same command or ci/ script that CI
# runs without Nix, so every policy has one home.
{
  pkgs,
  craneLib,
  sources,
  build,
}: let
  inherit (build) commonArgs cargoArtifacts cli;
  inherit (sources) src;
in {
  # The package builds.
  inherit cli;

  # Every test of the workspace, once (the package sets doCheck = false).
  nextest = craneLib.cargoNextest (commonArgs
    // {
      inherit cargoArtifacts;
      cargoNextestExtraArgs = "--workspace";
    });

  # The doctests, which nextest does not run (the crate READMEs' examples).
  doctest = craneLib.cargoDocTest (commonArgs
    // {
      inherit cargoArtifacts;
      cargoTestExtraArgs = "--workspace";
    });

  # The read-back tests: jemalloc really runs with the compiled-in malloc_conf.
  # cargoTest runs `cargo test ${cargoExtraArgs} ${cargoTestExtraArgs}`:
  # `--locked` stays in the former (from commonArgs) and the test selection
  # goes in the latter, with no `--` before it (what follows `--` is passed
  # to the test harness, not to cargo).
  jemalloc-conf = craneLib.cargoTest (commonArgs
    // {
      inherit cargoArtifacts;
      cargoTestExtraArgs = "-p ballast-allocator --test jemalloc_conf --test jemalloc_conf_control";
    });

  # The shipped binary exports a strong `_rjem_malloc_conf` (read with nm).
  malloc-conf-symbol = pkgs.runCommand "ballast-malloc-conf-symbol" {nativeBuildInputs = [pkgs.binutils];} ''
    bash ${src}/ci/check-malloc-conf-symbol.sh ${cli}/bin/cli
    touch $out
  '';

  # The same proof bytes under every allocator policy and thread count it tries.
  proof-equality = pkgs.runCommand "ballast-proof-equality" {} ''
    bash ${src}/ci/check-proof-equality.sh ${cli}/bin/cli
    touch $out
  '';

  clippy = craneLib.cargoClippy (commonArgs
    // {
      inherit cargoArtifacts;
      cargoClippyExtraArgs = "--workspace --all-targets -- --deny warnings";
    });

  # The API docs build without a warning (broken intra-doc links and such).
  cargo-doc = craneLib.cargoDoc (commonArgs
    // {
      inherit cargoArtifacts;
      cargoDocExtraArgs = "--workspace --no-deps";
      RUSTDOCFLAGS = "--deny warnings";
    });

  # Licenses, banned crates and sources (deny.toml); the advisories check needs
  # the RustSec database, which is fetched over the network, so it is left out.
  cargo-deny = craneLib.cargoDeny {
    inherit src;
    pname = "ballast";
    cargoDenyChecks = "bans licenses sources";
  };

  fmt = craneLib.cargoFmt {
    inherit src;
    pname = "ballast";
    cargoExtraArgs = "--all";
  };

  # alejandra and deadnix over the flake's Nix files, via the lint step of
  # ci/check-nix.sh with the tools taken from PATH.
  nix-fmt =
    pkgs.runCommand "ballast-nix-fmt" {
      src = sources.nix;
      nativeBuildInputs = [pkgs.alejandra pkgs.deadnix];
    } ''
      cd "$src"
      BALLAST_NIX_TOOLS=path bash ci/check-nix.sh lint
      touch $out
    '';
}
