# Stand-in for nixpkgs' `lib`: only the functions ballast's Nix files call.
# The fileset functions describe the set instead of copying files, so the
# assertions can read what a source contains. As in the real lib.fileset, a
# path given directly must exist, while `maybeMissing` accepts a missing one.
let
  fileset = rec {
    # A path or a fileset, as a fileset description.
    coerce = value:
      if builtins.isPath value
      then
        if builtins.pathExists value
        then {
          _type = "fileset";
          kind = "path";
          path = toString value;
        }
        else throw "lib.fileset (stand-in): ${toString value} does not exist"
      else if (value._type or null) == "fileset"
      then value
      else throw "lib.fileset (stand-in): expected a path or a fileset, got ${builtins.typeOf value}";

    unions = list: {
      _type = "fileset";
      kind = "unions";
      members = map coerce list;
    };

    difference = include: exclude: {
      _type = "fileset";
      kind = "difference";
      include = coerce include;
      exclude = coerce exclude;
    };

    maybeMissing = path: {
      _type = "fileset";
      kind = "maybeMissing";
      path = toString path;
      exists = builtins.pathExists path;
    };

    # Records which of a few sample file names the predicate keeps.
    fileFilter = predicate: path: let
      file = name: {
        inherit name;
        type = "regular";
        hasExt = ext: builtins.match ".*\\.${ext}" name != null;
      };
    in
      (coerce path)
      // {
        kind = "fileFilter";
        keeps = builtins.filter (name: predicate (file name)) ["flake.nix" "main.rs" "Cargo.toml" "kernel.cu" "notes.md" "README.md"];
      };

    # The source is the (unfiltered) flake tree; `fileset` says what the real
    # one would keep.
    toSource = {
      root,
      fileset,
    }: let
      description = coerce fileset;
    in {
      # Using the source as a string checks the whole description, as
      # building the real one would.
      outPath = builtins.deepSeq description (toString root);
      root = toString root;
      fileset = description;
    };
  };
in {
  inherit fileset;

  filterAttrs = predicate: set:
    builtins.listToAttrs (builtins.concatMap (name: let
      value = set.${name};
    in
      if predicate name value
      then [{inherit name value;}]
      else []) (builtins.attrNames set));

  fix = f: let
    x = f x;
  in
    x;

  licenses = {
    mit.spdxId = "MIT";
    asl20.spdxId = "Apache-2.0";
  };
}
