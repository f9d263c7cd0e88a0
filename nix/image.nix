# OCI image whose entrypoint is the cli. `nix build .#image` yields a script
# that streams the image: `./result | docker load`.
{
  pkgs,
  cli,
  platform,
}:
pkgs.dockerTools.streamLayeredImage {
  name = "ballast";
  tag = cli.version;
  # Scratch space for the prover; everything else is cli's own closure.
  # (The creation date stays at dockerTools' fixed epoch default: reproducible.)
  extraCommands = "mkdir -m 1777 tmp";
  config = {
    Entrypoint = ["${cli}/bin/cli"];
    Env = [
      # Read by the NVIDIA container runtime: expose every GPU, and mount
      # libcuda (compute) plus nvidia-smi and NVML (utility).
      "NVIDIA_VISIBLE_DEVICES=all"
      "NVIDIA_DRIVER_CAPABILITIES=compute,utility"
      # Nix's glibc does not read the container's ld.so.cache, which the
      # toolkit updates, so name the directories it mounts the driver into.
      "LD_LIBRARY_PATH=${platform.driverLibDirs}"
    ];
  };
}
