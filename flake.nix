{
  description = "ballast: a reproducible STARK prover (the cli binary, an OCI image and CI checks)";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-26.05";
    # crane has had no inputs since 0.19, so there is no nixpkgs to make follow.
    crane.url = "github:ipetkov/crane";
    rust-overlay = {
      url = "github:oxalica/rust-overlay";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs = {
    self,
    nixpkgs,
    crane,
    rust-overlay,
  }: let
    # Systems are listed by hand rather than taken from flake-utils' defaults:
    # the CUDA driver story and the OCI image are Linux-only, and each system
    # pins facts below that must not be guessed from the machine that builds.
    platforms = {
      x86_64-linux = {
        # log2 of jemalloc's page size. jemalloc's configure would otherwise
        # probe the page size of the *builder*, so the binary would depend on
        # where it was built; nixpkgs' own jemalloc pins it the same way.
        jemallocLgPage = "12";
        # Where the NVIDIA container toolkit mounts the driver libraries.
        driverLibDirs = "/usr/lib64:/usr/lib/x86_64-linux-gnu";
      };
      aarch64-linux = {
        # 64 KiB: correct on kernels with 4, 16 and 64 KiB pages alike.
        jemallocLgPage = "16";
        driverLibDirs = "/usr/lib64:/usr/lib/aarch64-linux-gnu";
      };
    };

    # Everything ballast builds for one system.
    forSystem = system: platform: let
      # The default config refuses unfree packages: nothing unfree may enter
      # the closure (cache.nixos.org builds free packages only).
      pkgs = import nixpkgs {
        inherit system;
        overlays = [rust-overlay.overlays.default];
      };
      # rust-toolchain.toml is the one source of the toolchain, for rustup and Nix alike.
      craneLib = (crane.mkLib pkgs).overrideToolchain (p: p.rust-bin.fromRustupToolchainFile ./rust-toolchain.toml);
      sources = import ./nix/source.nix {
        inherit craneLib;
        inherit (pkgs) lib;
      };
      build = import ./nix/package.nix {
        inherit pkgs craneLib platform;
        inherit (sources) src;
      };
      image = import ./nix/image.nix {
        inherit pkgs platform;
        inherit (build) cli;
      };
    in {
      inherit pkgs image;
      inherit (build) cli;
      # The Kubernetes deployment: an Indexed Job proving the parts of one
      # statement on GPU pods, and the Job that bundles them (docs/deploy.md).
      k8s-job = pkgs.callPackage ./nix/k8s.nix {inherit image;};
      checks = import ./nix/checks.nix {
        inherit pkgs craneLib sources build;
      };
      devShell = import ./nix/shell.nix {
        inherit pkgs craneLib;
        checks = self.checks.${system};
      };
    };

    perSystem = builtins.mapAttrs forSystem platforms;
    eachSystem = f: builtins.mapAttrs (_: f) perSystem;
  in {
    packages = eachSystem (s: {
      inherit (s) cli image k8s-job;
      default = s.cli;
    });

    apps = eachSystem (s: let
      cli = {
        type = "app";
        program = "${s.cli}/bin/cli";
        meta.description = "Run the ballast prover CLI (prove, verify, doctor)";
      };
    in {
      inherit cli;
      default = cli;
    });

    checks = eachSystem (s: s.checks);

    devShells = eachSystem (s: {default = s.devShell;});

    formatter = eachSystem (s: s.pkgs.alejandra);
  };
}
