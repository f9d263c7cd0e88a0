# Kubernetes manifests that prove one statement across many GPU hosts: an
# Indexed Job whose pod I runs `cli prove <statement> --parts K` (the cli reads
# I from JOB_COMPLETION_INDEX) and writes part-I.bin to a shared volume, and a
# Job that bundles the parts into proof.bin and verifies it. docs/deploy.md
# says how to apply them. Every parameter can be changed with .override:
#
#   nix build --impure --expr '(builtins.getFlake (toString ./.))
#     .packages.x86_64-linux.k8s-job.override { parts = 8; proveArgs = ["--segments" "64"]; }'
{
  lib,
  linkFarm,
  writeText,
  image,
  # Prefix of every object's name; one statement per name.
  name ? "ballast",
  # The statement: `cli prove` flags (none: the embedded default statement).
  proveArgs ? [],
  # How many parts (completions) the statement is split into, and how many
  # pods run at once.
  parts ? 4,
  parallelism ? parts,
  # GPUs per proving pod.
  gpusPerPod ? 1,
  # Where the cluster pulls the image from: the tag `docker load` gives the
  # image of .#image by default; a registry path once it has been pushed.
  imageRef ? "${image.imageName}:${image.imageTag}",
  # The shared ReadWriteMany volume the parts and the proof are written to.
  storage ? "10Gi",
  storageClassName ? null,
  # Retries of one part before the Job gives up on it.
  retriesPerPart ? 2,
  # `cli verify` flags for the bundled proof (e.g. --min-security-bits).
  verifyArgs ? [],
}:
assert lib.assertMsg (builtins.isInt parts && parts >= 1) "k8s-job: parts must be a positive integer";
assert lib.assertMsg (builtins.isInt parallelism && parallelism >= 1) "k8s-job: parallelism must be a positive integer"; let
  labels = {
    "app.kubernetes.io/name" = "ballast";
    "app.kubernetes.io/instance" = name;
  };
  claimName = "${name}-parts";
  mountPath = "/parts";
  volumes = [
    {
      name = "parts";
      persistentVolumeClaim = {inherit claimName;};
    }
  ];
  volumeMounts = [
    {
      name = "parts";
      inherit mountPath;
    }
  ];
  # A container running the image's entrypoint (the cli) in the shared volume.
  container = containerName: args: {
    name = containerName;
    image = imageRef;
    imagePullPolicy = "IfNotPresent";
    inherit args volumeMounts;
    workingDir = mountPath;
  };
  partFiles = builtins.genList (i: "part-${toString i}.bin") parts;

  manifests = {
    volume = {
      apiVersion = "v1";
      kind = "PersistentVolumeClaim";
      metadata = {
        name = claimName;
        inherit labels;
      };
      spec =
        {
          accessModes = ["ReadWriteMany"];
          resources.requests.storage = storage;
        }
        // lib.optionalAttrs (storageClassName != null) {inherit storageClassName;};
    };

    prove = {
      apiVersion = "batch/v1";
      kind = "Job";
      metadata = {
        name = "${name}-prove";
        inherit labels;
      };
      spec = {
        completionMode = "Indexed";
        completions = parts;
        inherit parallelism;
        backoffLimitPerIndex = retriesPerPart;
        template = {
          metadata = {inherit labels;};
          spec = {
            restartPolicy = "Never";
            containers = [
              ((container "prove" (["prove"] ++ proveArgs ++ ["--parts" (toString parts)]))
                // {resources.limits."nvidia.com/gpu" = gpusPerPod;})
            ];
            inherit volumes;
          };
        };
      };
    };

    bundle = {
      apiVersion = "batch/v1";
      kind = "Job";
      metadata = {
        name = "${name}-bundle";
        inherit labels;
      };
      spec = {
        backoffLimit = 0;
        template = {
          metadata = {inherit labels;};
          spec = {
            restartPolicy = "Never";
            initContainers = [(container "bundle" (["bundle"] ++ partFiles ++ ["-o" "proof.bin"]))];
            containers = [(container "verify" (["verify"] ++ verifyArgs ++ ["proof.bin"]))];
            inherit volumes;
          };
        };
      };
    };
  };
in
  linkFarm "${name}-k8s-job" [
    {
      name = "10-parts-volume.json";
      path = writeText "${name}-parts-volume.json" (builtins.toJSON manifests.volume);
    }
    {
      name = "20-prove-job.json";
      path = writeText "${name}-prove-job.json" (builtins.toJSON manifests.prove);
    }
    {
      name = "30-bundle-job.json";
      path = writeText "${name}-bundle-job.json" (builtins.toJSON manifests.bundle);
    }
  ]
  // {inherit manifests;}
