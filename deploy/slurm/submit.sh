#!/usr/bin/env bash
# Proves one ballast statement on a Slurm cluster: a job array of K parts, one GPU
# each, then the job that bundles and verifies them. Prints the two job ids.
#
#   deploy/slurm/submit.sh K [--wait] [cli prove flags...] [-- cli verify flags...]
#
#   deploy/slurm/submit.sh 8 --segments 64      # proof.bin once both jobs are done
#
# Site options (partition, account, time, CPUs) go in sbatch's own environment
# variables, which it reads for both jobs: SBATCH_PARTITION, SBATCH_ACCOUNT,
# SBATCH_TIMELIMIT, ... BALLAST_CLI and BALLAST_PARTS_DIR as for prove-part.sbatch.
# --wait returns when the bundle job ends: 0 once it has written and verified
# proof.bin, 1 if it failed or never ran (a part failed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage="usage: $0 K [--wait] [cli prove flags...] [-- cli verify flags...]"
count=${1:?$usage}
[[ $count =~ ^[1-9][0-9]*$ ]] || {
  echo "submit.sh: K must be a positive number, got '$count'" >&2
  exit 2
}
shift
wait=()
if [[ ${1:-} == --wait ]]; then
  wait=(--wait)
  shift
fi
prove=()
while (($#)) && [[ $1 != -- ]]; do
  prove+=("$1")
  shift
done
[[ ${1:-} != -- ]] || shift

array=$(sbatch --parsable --array="0-$((count - 1))" "$here/prove-part.sbatch" "${prove[@]}")
array=${array%%;*}
echo "prove: job array $array (tasks 0-$((count - 1)))"
status=0
bundle=$(sbatch --parsable "${wait[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  "$here/bundle.sbatch" "$count" "$@") || status=$?
if [[ -z $bundle ]]; then
  echo "submit.sh: the bundle job was not submitted; cancelling the array" >&2
  scancel "$array" || true
  exit 2
fi
bundle=${bundle%%;*}
echo "bundle: job $bundle"
((${#wait[@]})) || exit 0
# sbatch --wait gives the job's exit code, which is 0 for a job cancelled before it
# ran (a failed part cancels it): only a COMPLETED bundle job made the proof.
state=$(scontrol show job --oneliner "$bundle" | grep -o 'JobState=[A-Z_]*' || true)
if ((status != 0)) || [[ $state != JobState=COMPLETED ]]; then
  echo "submit.sh: the bundle job ended ${state#JobState=} (exit $status): a part failed, or see ballast-bundle-$bundle.out" >&2
  exit 1
fi
