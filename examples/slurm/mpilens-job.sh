#!/bin/bash
# Every mpilens benchmark program on two nodes, as a Slurm batch job (docs/cluster.md):
#   sbatch examples/slurm/mpilens-job.sh
#   mpilens report results/mpilens-<job id>        # afterwards, on any machine
# Settings, from sbatch's environment (sbatch --export=ALL,NAME=VALUE,...):
#   MPILENS_BIN   where the programs are (cmake --install's <prefix>/bin)   default $HOME/mpilens/bin
#   MPILENS_PMI   srun's PMI plugin for the MPI they were built with:
#                 pmix for Open MPI, pmi2 for MPICH                           default pmix
#   MPILENS_OUT   results directory                                          default results/mpilens-<job id>
#   <PROGRAM>_OPTIONS   the options of one program, e.g. OVERLAP_OPTIONS="--preset quick --bench sender"
#SBATCH --job-name=mpilens
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --time=02:00:00
#SBATCH --output=mpilens-%j.out
set -eu
# module load openmpi hwloc        # the MPI library the programs were built with

BIN=${MPILENS_BIN:-$HOME/mpilens/bin}
PMI=${MPILENS_PMI:-pmix}
OUT=${MPILENS_OUT:-results/mpilens-$SLURM_JOB_ID}
mkdir -p "$OUT"

run() { # program options...: one program on every task of the job, its results in $OUT
  local program=$1
  shift
  echo "== $program on $SLURM_JOB_NUM_NODES nodes ($SLURM_JOB_NODELIST), $SLURM_NTASKS tasks"
  srun --mpi="$PMI" "$BIN/mpilens-$program" "$@" --output "$OUT/$program.jsonl"
}

# Word splitting of the *_OPTIONS variables is wanted: each holds several options.
# shellcheck disable=SC2086
{
  run sanity ${SANITY_OPTIONS:---preset quick}
  run overlap ${OVERLAP_OPTIONS:---preset quick}
  run progress ${PROGRESS_OPTIONS:---preset quick}
  run coll ${COLL_OPTIONS:---op bcast,reduce,allreduce}
  run piggyback ${PIGGYBACK_OPTIONS:---sizes 1:1M}
}
echo "results: $OUT (mpilens report $OUT)"
