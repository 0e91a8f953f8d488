#!/usr/bin/env bash
# Runs a command as one rank of a dgcn job started by srun or mpirun: maps the
# launcher's own variables to the torchrun ones dgcn reads (RANK, WORLD_SIZE,
# LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), then execs it.
#
#   srun --ntasks-per-node 2 scripts/rank-env.sh build/bin/dgcn-mnist ...
#   mpirun -np 4 -x MASTER_ADDR=node0 scripts/rank-env.sh build/bin/dgcn-mnist ...
#
# MASTER_ADDR: under Slurm the first host of the job unless set; under mpirun
# it must be set (node 0's address). MASTER_PORT defaults to 29500.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: rank-env.sh COMMAND [ARGS...]" >&2; exit 2; }

if [ -n "${SLURM_PROCID:-}" ]; then
  export RANK=$SLURM_PROCID WORLD_SIZE=${SLURM_NTASKS:?SLURM_NTASKS unset}
  export LOCAL_RANK=${SLURM_LOCALID:?SLURM_LOCALID unset}
  # SLURM_TASKS_PER_NODE looks like "2(x3)" or "2,1"; this node's count is
  # SLURM_NTASKS_PER_NODE when --ntasks-per-node was given.
  export LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE:-${SLURM_TASKS_PER_NODE%%[(,]*}}
  if [ -z "${MASTER_ADDR:-}" ]; then
    MASTER_ADDR=$(scontrol show hostnames "${SLURM_JOB_NODELIST:?SLURM_JOB_NODELIST unset}" | head -n 1)
    export MASTER_ADDR
  fi
elif [ -n "${OMPI_COMM_WORLD_RANK:-}" ]; then
  export RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE
  export LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK LOCAL_WORLD_SIZE=$OMPI_COMM_WORLD_LOCAL_SIZE
elif [ -n "${PMI_RANK:-}" ]; then  # MPICH / Intel MPI (Hydra)
  export RANK=$PMI_RANK WORLD_SIZE=$PMI_SIZE
  export LOCAL_RANK=${MPI_LOCALRANKID:?MPI_LOCALRANKID unset} LOCAL_WORLD_SIZE=${MPI_LOCALNRANKS:?MPI_LOCALNRANKS unset}
else
  echo "rank-env.sh: neither Slurm (SLURM_PROCID) nor MPI (OMPI_COMM_WORLD_RANK, PMI_RANK) variables are set" >&2
  exit 2
fi
: "${MASTER_ADDR:?rank-env.sh: set MASTER_ADDR to the address of node 0 (mpirun -x MASTER_ADDR=...)}"
export MASTER_PORT=${MASTER_PORT:-29500}
exec "$@"
