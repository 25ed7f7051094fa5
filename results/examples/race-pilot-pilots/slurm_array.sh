#!/usr/bin/env bash
# Runs the 24 pilots of grid `race-pilot` as a Slurm array, from this plan folder:
#   sbatch --chdir=PLAN PLAN/slurm_array.sh   (or: cd PLAN && sbatch slurm_array.sh)
# Each task's output goes to slurm-<job>_<task>.out here. Time limit: 1.5 x the longest expected run + 30 minutes.
#SBATCH --job-name=rlfrontier-race-pilot
#SBATCH --array=0-23
#SBATCH --nodes=1
#SBATCH --gres=gpu:8
#SBATCH --time=04:19:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
# Slurm runs a copy of this script in the submission's working directory (--chdir).
if [ ! -d launch ]; then
  echo "run from the plan folder: sbatch --chdir=PLAN PLAN/slurm_array.sh (launch/ not found in $PWD)" >&2
  exit 2
fi
RUNS=('p001' 'p002' 'p003' 'p004' 'p005' 'p006' 'p007' 'p008' 'p009' 'p010' 'p011' 'p012' 'p013' 'p014' 'p015' 'p016' 'p017' 'p018' 'p019' 'p020' 'p021' 'p022' 'p023' 'p024')
RUN="${RUNS[$SLURM_ARRAY_TASK_ID]}"
echo "pilot $RUN"
bash "launch/$RUN.sh"
