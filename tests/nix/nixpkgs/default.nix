# Stand-in for `import nixpkgs { system; overlays; config; }`. Each package is
# a trivial derivation carrying `stub.kind` and `stub.args`, the arguments it
# was made with, for tests/nix/probe/assertions.nix to read.
{
  system,
  overlays ? [],
  config ? {},
}: let
  lib = import ./lib.nix;

  # A real derivation that builds nothing of interest. `env` holds string-like
  # attributes put into the derivation, so references such as "${cli}/bin/cli"
  # are checked to be derivations when it is instantiated.
  stubDerivation = {
    kind,
    name,
    args ? {},
    env ? {},
  }:
    derivation ({
        inherit name system;
        builder = "/bin/sh";
        args = ["-c" "echo ${kind} > $out"];
      }
      // env)
    // {stub = {inherit kind args;};};

  tool = name:
    stubDerivation {
      kind = "package";
      inherit name;
    };

  base = {
    inherit lib system config stubDerivation;

    runCommand = name: env: buildCommand:
      stubDerivation {
        kind = "runCommand";
        inherit name;
        args = env // {inherit buildCommand;};
        env = env // {inherit buildCommand;};
      };

    dockerTools.streamLayeredImage = args:
      stubDerivation {
        kind = "streamLayeredImage";
        name = "${args.name}-stream";
        inherit args;
      };

    autoAddDriverRunpath = tool "auto-add-driver-runpath-hook";
    alejandra = tool "alejandra";
    binutils = tool "binutils";
    cargo-nextest = tool "cargo-nextest";
    deadnix = tool "deadnix";
    git = tool "git";
    python3 = tool "python3";
  };
in
  lib.fix (final: builtins.foldl' (prev: overlay: prev // overlay final prev) base overlays)
