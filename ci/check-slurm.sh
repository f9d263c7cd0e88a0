#!/usr/bin/env bash
# A real Slurm cluster on this machine — munged, slurmctld and slurmd, one node that
# advertises two (count-only) GPUs — and the operator's scripts in deploy/slurm/
# submitted to it unchanged: a job array whose tasks run `cli prove --parts`, the
# bundle job after it, and the proof compared byte for byte with a single-host one.
#
#   ci/check-slurm.sh CLI [PROVE_FLAGS...]
#
# Needs root (the daemons run as root, state in a scratch directory; nothing in
# /etc is changed) and installs slurm-wlm and munge with apt-get when missing.
# Without PROVE_FLAGS the statement is a 4-segment keccak chain of 2^12-row segments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

cli=$(realpath "${1:?usage: ci/check-slurm.sh CLI [PROVE_FLAGS...]}")
shift
statement=("$@")
((${#statement[@]})) || statement=(--log-rows 12 --segments 4)
parts=4

die() {
  echo "ci/check-slurm.sh: $*" >&2
  exit 1
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  [[ $(id -u) == 0 ]] || die "slurm-wlm and munge are not installed, and installing them needs root"
  echo "installing slurm-wlm and munge (apt-get) ..."
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null
fi
[[ $(id -u) == 0 ]] || die "the single-node cluster's daemons run as root"

dir=$(mktemp -d "${TMPDIR:-/tmp}/ballast-slurm.XXXXXX")
cleanup() {
  [[ -f $dir/slurmd.pid ]] && kill "$(cat "$dir/slurmd.pid")" 2>/dev/null || true
  [[ -f $dir/slurmctld.pid ]] && kill "$(cat "$dir/slurmctld.pid")" 2>/dev/null || true
  [[ -f $dir/munged.pid ]] && kill "$(cat "$dir/munged.pid")" 2>/dev/null || true
  sleep 1
  rm -rf "$dir"
}
trap cleanup EXIT

# Free ports for slurmctld and slurmd, so a cluster already on this machine is not disturbed.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
host=$(hostname -s)
mkdir -p "$dir"/{munge,ctld,spool,work}
chmod 700 "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=ballast-ci
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host CPUs=$(nproc) Gres=gpu:2 State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# Two stand-in GPUs: the scheduler allocates them as it would real ones (and sets
# CUDA_VISIBLE_DEVICES); the "device files" are /dev/null and /dev/zero, and with
# task/none nothing is bound, so the cli finds no CUDA device and proves on the CPU.
printf 'NodeName=%s Name=gpu File=%s\n' "$host" /dev/null "$host" /dev/zero >"$dir/gres.conf"
export SLURM_CONF=$dir/slurm.conf

slurmctld
slurmd
for ((i = 0; i < 60; i++)); do
  state=$(sinfo --noheader --nodes="$host" --format=%t 2>/dev/null || true)
  [[ $state == idle || $state == inval || $state == drain* ]] && break
  sleep 1
done
if [[ $state != idle ]]; then
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  die "the node did not become idle (state '$state')"
fi
echo "cluster up: $(sbatch --version), node $host idle ($(sinfo --noheader --format='%c CPUs, gres %G'))"

work=$dir/work
echo "single-host proof: cli prove ${statement[*]}"
"$cli" prove "${statement[@]}" -o "$dir/single.bin" >/dev/null

cd "$work"
export BALLAST_CLI=$cli BALLAST_PARTS_DIR=$work
echo "submitting: deploy/slurm/submit.sh $parts --wait ${statement[*]}"
start=$SECONDS
if ! "$root/deploy/slurm/submit.sh" "$parts" --wait "${statement[@]}" | tee "$dir/submit.out"; then
  tail -n 5 "$work"/*.out >&2 || true
  die "the Slurm jobs failed"
fi
echo "jobs done in $((SECONDS - start)) s:"
array=$(sed -n 's/^prove: job array \([0-9]*\) .*/\1/p' "$dir/submit.out")
tres=$(scontrol show job --oneliner "$array" | grep -o 'TresPerNode=[^ ]*' | sort -u)
[[ $tres == "TresPerNode=gres:gpu:1" ]] || die "the array's tasks did not each get one GPU from the scheduler ($tres)"
echo "  each of the $parts array tasks was allocated one GPU by Slurm ($tres)"
for out in "$work"/ballast-prove-*.out; do
  echo "  $(basename "$out"): $(grep -E '^part:' "$out" | head -n 1)"
done
grep -E '^valid proof' "$work"/ballast-bundle-*.out | sed 's/^/  /'
cmp "$dir/single.bin" "$work/proof.bin" ||
  die "the job array's bundled proof differs from the single-host proof"
echo "  ok: the bundled proof is the single-host proof, byte for byte ($(stat -c %s "$work/proof.bin") bytes, sha256 $(sha256sum "$work/proof.bin" | cut -c1-16))"

# An array that does not start at 0 would leave parts unproven: its tasks refuse to
# run, and the bundle job, which depends on them, never runs.
mkdir "$dir/bad" && cd "$dir/bad"
export BALLAST_PARTS_DIR=$dir/bad
array=$(sbatch --parsable --array=1-4 "$root/deploy/slurm/prove-part.sbatch" "${statement[@]}")
status=0
bundle=$(sbatch --parsable --wait --dependency="afterok:${array%%;*}" --kill-on-invalid-dep=yes \
  "$root/deploy/slurm/bundle.sbatch" 4 2>/dev/null) || status=$?
state=$(scontrol show job --oneliner "${bundle%%;*}" | grep -o 'JobState=[A-Z_]*' || true)
if [[ $state == JobState=COMPLETED || -e $dir/bad/proof.bin ]]; then
  die "an array 1-4 was bundled (exit $status, $state)"
fi
echo "  the bundle job after an array 1-4: ${state#JobState=}, no proof.bin"
grep -h "the array must be" "$dir"/bad/ballast-prove-*.out | head -n 1 | sed 's/^/  refused, as it must be: /'
echo "ci/check-slurm.sh: ok"
