#!/bin/sh
# sweep-array.sh — one shard of an epochsim sweep per Slurm array task (docs/cluster.md):
#   sbatch --array=0-3 configs/cluster/sweep-array.sh OUTDIR [SWEEP ARGUMENTS...]
# Task I of the array 0..N-1 runs `epochsim sweep ARGUMENTS --shard I/N -o OUTDIR/shard-I --resume`,
# so a task that is requeued or resubmitted finishes its file instead of starting over. Then:
#   epochsim sweep merge -o OUT OUTDIR/shard-*
# N is the array's last index + 1; when resubmitting only some tasks (--array=2) set SHARDS=N.
# EPOCHSIM names the binary (default: epochsim on PATH).
#SBATCH --job-name=epochsim-sweep
#SBATCH --array=0-3
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=epochsim-sweep-%A-%a.log
set -eu
out=${1:?usage: sbatch --array=0-N sweep-array.sh OUTDIR [SWEEP ARGUMENTS...]}
shift
i=${SLURM_ARRAY_TASK_ID:?not a Slurm array task: submit with sbatch --array=0-N}
n=${SHARDS:-$((SLURM_ARRAY_TASK_MAX + 1))}
mkdir -p "$out"
exec "${EPOCHSIM:-epochsim}" sweep "$@" --shard "$i/$n" -o "$out/shard-$i" --resume --quiet \
  -j "${SLURM_CPUS_PER_TASK:-1}"
