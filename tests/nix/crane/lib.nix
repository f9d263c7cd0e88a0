# Stand-in for `crane.mkLib pkgs`. Each builder returns a trivial derivation
# whose `stub.args` are the arguments it got and whose `stub.command` is the
# cargo command line real crane would run, built with crane's own defaults
# (`--locked` for most builders, nothing for cargoNextest and cargoFmt).
{
  pkgs,
  toolchain ? null,
}: let
  # What the builders share: the arguments, the command and the toolchain.
  mkCargo = kind: pnameSuffix: command: args:
    pkgs.stubDerivation {
      inherit kind args;
      name = "${args.pname or "cargo-package"}${pnameSuffix}-${args.version or "0.1.0"}";
      env = {inherit (args) src;};
    }
    // {
      inherit (args) src;
      pname = args.pname or "cargo-package";
      version = args.version or "0.1.0";
      meta = args.meta or {};
      cargoArtifacts = args.cargoArtifacts or null;
      stub = {
        inherit kind args command;
        toolchain = toolchain.stub or null;
        # The config the caller imported nixpkgs with (unfree must stay off).
        nixpkgsConfig = pkgs.config;
      };
    };

  self = {
    overrideToolchain = f:
      import ./lib.nix {
        inherit pkgs;
        toolchain = f pkgs;
      };

    fileset.commonCargoSources = path:
      (pkgs.lib.fileset.coerce path) // {kind = "commonCargoSources";};

    buildDepsOnly = args:
      mkCargo "buildDepsOnly" "-deps"
      "cargo build --profile release ${args.cargoExtraArgs or "--locked"}"
      args;

    buildPackage = args:
      mkCargo "buildPackage" ""
      "cargo build --profile release ${args.cargoExtraArgs or "--locked"}"
      (args // {cargoArtifacts = args.cargoArtifacts or (self.buildDepsOnly args);});

    # crane requires cargoArtifacts for these, so the stand-in does too.
    cargoTest = {cargoArtifacts, ...} @ args:
      mkCargo "cargoTest" "-test"
      "cargo test --profile release ${args.cargoExtraArgs or "--locked"} ${args.cargoTestExtraArgs or ""}"
      (args // {inherit cargoArtifacts;});

    cargoDocTest = {cargoArtifacts, ...} @ args:
      mkCargo "cargoDocTest" "-doctest"
      "cargo test --profile release --doc ${args.cargoExtraArgs or "--locked"} ${args.cargoTestExtraArgs or ""}"
      (args // {inherit cargoArtifacts;});

    cargoNextest = {cargoArtifacts, ...} @ args:
      mkCargo "cargoNextest" "-nextest"
      "cargo nextest run --cargo-profile release ${args.cargoExtraArgs or ""} ${args.cargoNextestExtraArgs or ""}"
      (args // {inherit cargoArtifacts;});

    cargoClippy = {cargoArtifacts, ...} @ args:
      mkCargo "cargoClippy" "-clippy"
      "cargo clippy --profile release ${args.cargoExtraArgs or "--locked"} ${args.cargoClippyExtraArgs or "--all-targets"}"
      (args // {inherit cargoArtifacts;});

    cargoFmt = args:
      mkCargo "cargoFmt" "-fmt"
      "cargo fmt ${args.cargoExtraArgs or ""} -- --check ${args.rustFmtExtraArgs or ""}"
      args;

    devShell = args:
      pkgs.stubDerivation {
        kind = "devShell";
        name = "nix-shell";
        inherit args;
      };
  };
in
  self
