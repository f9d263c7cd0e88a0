# What must hold of ballast's flake, read from the arguments the stand-in
# inputs recorded. Each result is { name; ok; got; }, `got` being the value
# seen (shown when an assertion fails).
{
  ballast,
  nixpkgs,
}: let
  inherit (builtins) all any attrNames elem filter genList length map stringLength substring;

  systems = {
    x86_64-linux = {
      lgPage = "12";
      driverLibDirs = "/usr/lib64:/usr/lib/x86_64-linux-gnu";
    };
    aarch64-linux = {
      lgPage = "16";
      driverLibDirs = "/usr/lib64:/usr/lib/aarch64-linux-gnu";
    };
  };

  expectedChecks = ["cli" "clippy" "doctest" "fmt" "jemalloc-conf" "malloc-conf-symbol" "nextest" "nix-fmt" "proof-equality"];

  assertion = name: ok: got: {inherit name ok got;};

  plain = builtins.unsafeDiscardStringContext;

  hasInfix = needle: haystack: let
    n = stringLength needle;
    h = plain haystack;
  in
    any (i: substring i n h == plain needle) (genList (i: i) (stringLength h - n + 1));

  # A command line as words, to test for exact flags.
  words = command: filter (word: builtins.isString word && word != "") (builtins.split "[[:space:]]+" (plain command));

  # `sequence` occurs as consecutive words of `command`.
  hasWords = sequence: command: let
    ws = words command;
    n = length sequence;
  in
    any (i: genList (j: builtins.elemAt ws (i + j)) n == sequence) (genList (i: i) (length ws - n + 1));

  sameDrv = a: b: (a.drvPath or null) == (b.drvPath or null) && a ? drvPath;

  names = map (drv: drv.name);

  # The fileset description of the stand-in lib, flattened to
  # [ { kind; rel; included; keeps; } ], `rel` relative to the source root.
  flatten = root: included: set:
    if set.kind == "unions"
    then builtins.concatMap (flatten root included) set.members
    else if set.kind == "difference"
    then flatten root included set.include ++ flatten root (!included) set.exclude
    else [
      {
        inherit (set) kind;
        inherit included;
        keeps = set.keeps or null;
        rel = let
          path = plain set.path;
          prefix = plain root;
        in
          if path == prefix
          then "."
          else substring (stringLength prefix + 1) (stringLength path) path;
      }
    ];
  entries = source: flatten source.root true source.fileset;
  hasEntry = source: entry: elem entry (map (e: {inherit (e) kind rel included;}) (entries source));

  forSystem = system: expected: let
    packages = ballast.packages.${system};
    checks = ballast.checks.${system};
    apps = ballast.apps.${system};
    inherit (packages) cli image;
    deps = cli.cargoArtifacts;
    src = cli.src;
    nixFmtCommand = checks.nix-fmt.stub.args.buildCommand;
    nixFiles = checks.nix-fmt.stub.args.src;
    shell = ballast.devShells.${system}.default;
    imageConfig = image.stub.args.config;
    toolchain = cli.stub.toolchain.toolchain or {};
    n = name: "${system}: ${name}";
    scriptCheck = check: script: [
      (assertion (n "${check} runs bash ${script} on the built cli")
        (checks.${check}.stub.kind == "runCommand" && hasInfix "bash ${src}/${script} ${cli}/bin/cli" checks.${check}.stub.args.buildCommand)
        checks.${check}.stub.args.buildCommand)
      (assertion (n "${script} is in the source tree") (builtins.pathExists "${src}/${script}") "${src}/${script}")
    ];
  in
    [
      # The package.
      (assertion (n "packages.cli is crane's buildPackage") (cli.stub.kind == "buildPackage") cli.stub.kind)
      (assertion (n "packages.default is packages.cli") (sameDrv packages.default cli) packages.default.name)
      (assertion (n "cli: pname and meta.mainProgram are cli") (cli.pname == "cli" && cli.meta.mainProgram or null == "cli") [cli.pname (cli.meta.mainProgram or null)])
      (assertion (n "cli: cargo runs with --locked -p cli") (elem "--locked" (words cli.stub.command) && hasWords ["-p" "cli"] cli.stub.command) cli.stub.command)
      (assertion (n "cli: doCheck = false (tests run in the checks)") (cli.stub.args.doCheck or true == false) (cli.stub.args.doCheck or null))
      (assertion (n "cli: dependencies come from buildDepsOnly with --locked") (deps.stub.kind or null == "buildDepsOnly" && elem "--locked" (words deps.stub.command)) (deps.stub.command or null))
      (assertion (n "cli and its dependencies: JEMALLOC_SYS_WITH_LG_PAGE = ${expected.lgPage}")
        (cli.stub.args.JEMALLOC_SYS_WITH_LG_PAGE or null == expected.lgPage && deps.stub.args.JEMALLOC_SYS_WITH_LG_PAGE or null == expected.lgPage)
        [(cli.stub.args.JEMALLOC_SYS_WITH_LG_PAGE or null) (deps.stub.args.JEMALLOC_SYS_WITH_LG_PAGE or null)])
      (assertion (n "cli and its dependencies: preBuild refuses JEMALLOC_OVERRIDE")
        (all (args: hasInfix "JEMALLOC_OVERRIDE" (args.preBuild or "") && hasInfix "exit 1" (args.preBuild or "")) [cli.stub.args deps.stub.args])
        (cli.stub.args.preBuild or null))
      (assertion (n "cli: autoAddDriverRunpath is a native build input")
        (any (drv: sameDrv drv nixpkgsFor.${system}.autoAddDriverRunpath) (cli.stub.args.nativeBuildInputs or []))
        (names (cli.stub.args.nativeBuildInputs or [])))
      (assertion (n "cli: symbols are kept (no stripAllList, no stripAll)") (!(cli.stub.args ? stripAllList || cli.stub.args ? stripAll)) (attrNames cli.stub.args))
      (assertion (n "toolchain: rust-toolchain.toml via rust-overlay (1.95.0 with clippy and rustfmt)")
        (toolchain.channel or null == "1.95.0" && all (c: elem c (toolchain.components or [])) ["clippy" "rustfmt"])
        toolchain)
      (assertion (n "nixpkgs is imported without allowing unfree packages")
        (!(cli.stub.nixpkgsConfig.allowUnfree or false) && !(cli.stub.nixpkgsConfig ? allowUnfreePredicate))
        (attrNames cli.stub.nixpkgsConfig))
      (assertion (n "rust-overlay's nixpkgs follows ballast's nixpkgs") (cli.stub.toolchain.nixpkgs or null == nixpkgs.outPath) (cli.stub.toolchain.nixpkgs or null))

      # The app.
      (assertion (n "apps.cli and apps.default run \${cli}/bin/cli")
        (all (app: app.type == "app" && app.program == "${cli}/bin/cli") [apps.cli apps.default])
        [apps.cli.program apps.default.program])

      # The checks.
      (assertion (n "checks are exactly ${toString expectedChecks}") (attrNames checks == expectedChecks) (attrNames checks))
      (assertion (n "checks.cli is packages.cli") (sameDrv checks.cli cli) checks.cli.name)
      (assertion (n "nextest: cargoNextest over the workspace with --locked")
        (checks.nextest.stub.kind == "cargoNextest" && all (w: elem w (words checks.nextest.stub.command)) ["--locked" "--workspace"])
        checks.nextest.stub.command)
      (assertion (n "doctest: cargoDocTest over the workspace with --locked")
        (checks.doctest.stub.kind == "cargoDocTest" && all (w: elem w (words checks.doctest.stub.command)) ["--doc" "--locked" "--workspace"])
        checks.doctest.stub.command)
      (assertion (n "jemalloc-conf: cargo test --locked -p ballast-allocator --test jemalloc_conf --test jemalloc_conf_control")
        (checks.jemalloc-conf.stub.kind
          == "cargoTest"
          && elem "--locked" (words checks.jemalloc-conf.stub.command)
          && hasWords ["-p" "ballast-allocator"] checks.jemalloc-conf.stub.command
          && hasWords ["--test" "jemalloc_conf"] checks.jemalloc-conf.stub.command
          && hasWords ["--test" "jemalloc_conf_control"] checks.jemalloc-conf.stub.command
          && !(elem "--" (words checks.jemalloc-conf.stub.command))
          && !(hasWords ["-p" "cli"] checks.jemalloc-conf.stub.command))
        checks.jemalloc-conf.stub.command)
      (assertion (n "malloc-conf-symbol: binutils (nm) is a native build input")
        (any (drv: sameDrv drv nixpkgsFor.${system}.binutils) (checks.malloc-conf-symbol.stub.args.nativeBuildInputs or []))
        (names (checks.malloc-conf-symbol.stub.args.nativeBuildInputs or [])))
      (assertion (n "clippy: --locked --workspace --all-targets -- --deny warnings")
        (checks.clippy.stub.kind
          == "cargoClippy"
          && all (w: elem w (words checks.clippy.stub.command)) ["--locked" "--workspace" "--all-targets"]
          && hasWords ["--" "--deny" "warnings"] checks.clippy.stub.command)
        checks.clippy.stub.command)
      (assertion (n "fmt: cargoFmt") (checks.fmt.stub.kind == "cargoFmt") checks.fmt.stub.kind)
      (assertion (n "nix-fmt: runs ci/check-nix.sh lint with alejandra and deadnix")
        (hasInfix "ci/check-nix.sh lint" nixFmtCommand
          && all (tool: elem tool (names checks.nix-fmt.stub.args.nativeBuildInputs)) ["alejandra" "deadnix"])
        nixFmtCommand)
      (assertion (n "cargo checks share the package's dependency artifacts and source")
        (all (c: sameDrv c.cargoArtifacts deps && plain c.src.outPath == plain src.outPath) [checks.nextest checks.doctest checks.jemalloc-conf checks.clippy])
        (map (c: c.cargoArtifacts.name or null) [checks.nextest checks.doctest checks.jemalloc-conf checks.clippy]))
      (assertion (n "cargo builds use the rust-toolchain.toml toolchain")
        (all (c: c.stub.toolchain.toolchain.channel or null == "1.95.0") [deps checks.nextest checks.jemalloc-conf checks.clippy checks.fmt])
        (map (c: c.stub.toolchain.toolchain.channel or null) [deps checks.nextest checks.jemalloc-conf checks.clippy checks.fmt]))

      # The source.
      (assertion (n "src: rooted at the flake, with the cargo sources, ci/, the CUDA kernels and the tests")
        (plain src.root
          == plain ballast.outPath
          && all (hasEntry src) [
            {
              kind = "commonCargoSources";
              rel = ".";
              included = true;
            }
            {
              kind = "path";
              rel = "ci";
              included = true;
            }
            {
              kind = "maybeMissing";
              rel = "crates/cuda/kernels";
              included = true;
            }
            {
              kind = "maybeMissing";
              rel = "tests";
              included = true;
            }
          ])
        (entries src))
      (assertion (n "src: keeps the crates' README.md, which every lib.rs includes at compile time")
        (builtins.any (e: e.kind == "fileFilter" && e.rel == "crates" && e.included && e.keeps == ["README.md"]) (entries src))
        (entries src))
      (assertion (n "src: leaves out ci/tools and tests/nix")
        (all (rel:
          hasEntry src {
            kind = "maybeMissing";
            inherit rel;
            included = false;
          }) ["ci/tools" "tests/nix"])
        (entries src))
      (assertion (n "nix-fmt: its source is the .nix files and ci/check-nix.sh")
        (hasEntry nixFiles {
            kind = "fileFilter";
            rel = ".";
            included = true;
          }
          && hasEntry nixFiles {
            kind = "path";
            rel = "ci/check-nix.sh";
            included = true;
          }
          && builtins.any (e: e.kind == "fileFilter" && e.keeps == ["flake.nix"]) (flatten nixFiles.root true nixFiles.fileset))
        (entries nixFiles))

      # The image.
      (assertion (n "image: streamLayeredImage with entrypoint \${cli}/bin/cli")
        (image.stub.kind == "streamLayeredImage" && imageConfig.Entrypoint == ["${cli}/bin/cli"])
        imageConfig.Entrypoint)
      (assertion (n "image: NVIDIA runtime variables and LD_LIBRARY_PATH=${expected.driverLibDirs}")
        (all (e: elem e imageConfig.Env) [
          "NVIDIA_VISIBLE_DEVICES=all"
          "NVIDIA_DRIVER_CAPABILITIES=compute,utility"
          "LD_LIBRARY_PATH=${expected.driverLibDirs}"
        ])
        imageConfig.Env)

      # The shell and the formatter.
      (assertion (n "devShell: inherits every check and has the ci/ tools")
        (shell.stub.kind
          == "devShell"
          && attrNames shell.stub.args.checks == expectedChecks
          && all (tool: elem tool (names shell.stub.args.packages)) ["cargo-nextest" "alejandra" "deadnix" "binutils" "python3"])
        (names shell.stub.args.packages))
      (assertion (n "formatter is alejandra") (ballast.formatter.${system}.name == "alejandra") ballast.formatter.${system}.name)
    ]
    ++ scriptCheck "malloc-conf-symbol" "ci/check-malloc-conf-symbol.sh"
    ++ scriptCheck "proof-equality" "ci/check-proof-equality.sh";

  nixpkgsFor = builtins.mapAttrs (system: _: import nixpkgs {inherit system;}) systems;

  # What the cargo flags above name must exist in the workspace: real crane
  # would fail on them only at build time.
  manifest = path: builtins.fromTOML (builtins.readFile "${ballast}/${path}");
  hasTestTarget = name:
    builtins.pathExists "${ballast}/crates/allocator/tests/${name}.rs"
    || elem name (map (test: test.name or null) ((manifest "crates/allocator/Cargo.toml").test or []));
  workspace = [
    (assertion "workspace: Cargo.lock exists (every build passes --locked)" (builtins.pathExists "${ballast}/Cargo.lock") null)
    (assertion "workspace: crates/cli is the package `cli` (-p cli)" ((manifest "crates/cli/Cargo.toml").package.name or null == "cli") null)
    (assertion "workspace: crates/allocator is the package `ballast-allocator`"
      ((manifest "crates/allocator/Cargo.toml").package.name or null == "ballast-allocator")
      null)
    (assertion "workspace: ballast-allocator has the test targets jemalloc_conf and jemalloc_conf_control"
      (all hasTestTarget ["jemalloc_conf" "jemalloc_conf_control"])
      (map hasTestTarget ["jemalloc_conf" "jemalloc_conf_control"]))
  ];
in
  map (output:
    assertion "outputs exist for exactly x86_64-linux and aarch64-linux: ${output}"
    (attrNames ballast.${output} == ["aarch64-linux" "x86_64-linux"])
    (attrNames ballast.${output})) ["packages" "apps" "checks" "devShells" "formatter"]
  ++ workspace
  ++ builtins.concatLists (builtins.attrValues (builtins.mapAttrs forSystem systems))
