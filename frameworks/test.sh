#!/usr/bin/env bash
# The real-framework tests: the pilot loop against the frameworks it targets, installed from PyPI
# at the versions frameworks/versions.toml pins (`.ci/run` runs this on every clean machine).
#
#   veRL: every generated script of frameworks/grids/verl-*.toml (each reward kind, PPO with a
#         critic and offload, LoRA, the vLLM and SGLang rollouts, sequence parallelism, sampled
#         validation) is run with a `python3` that records its overrides; frameworks/verl_check.py
#         composes them with veRL's own Hydra config and checks the trainer reads each one.
#   TRL:  frameworks/trl_fixture.py builds a tiny model and dataset; the generated scripts of
#         frameworks/grids/trl-*.toml (LoRA with update_epochs 2 and G 6; full fine-tuning) run
#         unchanged on TRL, with only pass-through arguments (a few steps, --use_cpu); collect
#         --plan and fit read what TRL wrote.
#   Both: the key lists of src/config/ equal what frameworks/keys.py reads from the installed
#         packages.
#
# Environment: RLFRONTIER_BIN (default target/debug/rlfrontier, built if missing),
# FRAMEWORKS_WORK (default target/frameworks: virtual environments, kept between runs, and the
# runs themselves). Prints `frameworks: N passed, M failed` and exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=${RLFRONTIER_BIN:-$root/target/debug/rlfrontier}
[ -x "$bin" ] || cargo build -q
work=${FRAMEWORKS_WORK:-$root/target/frameworks}
mkdir -p "$work"
passed=0
failed=0
check() { # NAME COMMAND...: runs the command, counts it, prints its output on failure
  local name=$1 log
  shift
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    tail -n 40 "$log" | sed 's/^/     /'
  fi
  rm -f "$log"
}
pins() { # FRAMEWORK [KEY]: the pinned requirements of versions.toml
  python3 -c 'import sys, tomllib; d = tomllib.load(open("frameworks/versions.toml", "rb"))[sys.argv[1]]; v = d[sys.argv[2]]; print(" ".join(v) if isinstance(v, list) else v)' "$1" "${2:-packages}"
}
started=$(date +%s)
echo "frameworks: disk before: $(df -h --output=avail "$work" | tail -1 | tr -d ' ') free"
# PyPI's torch wheel is a CUDA build that loads its CUDA libraries even on the CPU: the TRL
# environment takes about 6 GB (measured 5.9 GB; plain `pip install`, 81 s on this network).
free_kib=$(df --output=avail "$work" | tail -1)
if [ ! -d "$work/venv-trl" ] && [ "$free_kib" -lt $((10 * 1024 * 1024)) ]; then
  echo "frameworks: FAIL: under 10 GiB free in $work for the TRL environment (about 6 GB)"
  echo "frameworks: 0 passed, 1 failed"
  exit 1
fi

# --- veRL: configs only (hydra-core and omegaconf read veRL's YAML; veRL itself is not imported).
verl_venv=$work/venv-verl
if [ ! -x "$verl_venv/bin/python" ] || ! "$verl_venv/bin/python" -c 'import hydra, omegaconf' 2>/dev/null; then
  rm -rf "$verl_venv"
  python3 -m venv "$verl_venv"
  read -r verl_pin hydra_pins <<<"$(pins verl)"
  "$verl_venv/bin/pip" install -q --no-deps "$verl_pin"
  # shellcheck disable=SC2086
  "$verl_venv/bin/pip" install -q $hydra_pins
fi
check "veRL key list (src/config/verl_keys.txt) = installed $(pins verl target)" \
  "$verl_venv/bin/python" frameworks/keys.py check verl src/config/verl_keys.txt
verl_work=$work/verl
rm -rf "$verl_work"
mkdir -p "$verl_work/args" "$verl_work/bin"
# A python3 that records what a script passes to `python3 -m verl.trainer.main_ppo`.
cat >"$verl_work/bin/python3" <<'SH'
#!/bin/sh
printf '%s\n' "$@" > "$ARGS_OUT/$RUN.args"
SH
chmod +x "$verl_work/bin/python3"
for grid in frameworks/grids/verl-*.toml; do
  name=$(basename "$grid" .toml)
  check "plan $name --framework verl" "$bin" plan "$grid" --pilot-budget "1e19 flops" \
    --max-pilots 16 --framework verl --out "$verl_work/$name" --quiet
  for script in "$verl_work/$name"/launch/*.sh; do
    RUN="$name-$(basename "$script" .sh)" ARGS_OUT="$verl_work/args" PATH="$verl_work/bin:/usr/bin:/bin" \
      TRAIN_FILES=train.parquet VAL_FILES=val.parquet MODEL_PATH=Qwen/Qwen2.5-1.5B bash "$script"
  done
done
check "every override of $(ls "$verl_work/args" | wc -l) veRL scripts composes and is read by veRL" \
  "$verl_venv/bin/python" frameworks/verl_check.py "$verl_work"/args/*.args

# --- TRL: a CPU-only PyTorch (its CUDA wheels are not needed to run on the CPU) and TRL's stack.
trl_venv=$work/venv-trl
if [ ! -x "$trl_venv/bin/python" ] || ! "$trl_venv/bin/python" -c 'import trl, torch' 2>/dev/null; then
  rm -rf "$trl_venv"
  python3 -m venv "$trl_venv"
  # shellcheck disable=SC2046
  "$trl_venv/bin/pip" install -q $(pins trl torch) $(pins trl)
fi
check "TRL key list (src/config/trl_keys.txt) = installed $(pins trl target)" \
  "$trl_venv/bin/python" frameworks/keys.py check trl src/config/trl_keys.txt
trl_work=$work/trl
rm -rf "$trl_work"
mkdir -p "$trl_work"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
check "tiny model and dataset" "$trl_venv/bin/python" frameworks/trl_fixture.py "$trl_work/fixture"
metric="eval_rewards/accuracy_reward/mean"
for grid in frameworks/grids/trl-*.toml; do
  name=$(basename "$grid" .toml)
  plan=$trl_work/$name
  check "plan $name --framework trl" "$bin" plan "$grid" --pilot-budget "1e15 flops" \
    --max-pilots 2 --framework trl --out "$plan" --quiet
  for script in "$plan"/launch/*.sh; do
    run=$(basename "$script" .sh)
    # The script unchanged: its documented variables, and pass-through arguments for a short
    # CPU run (12 optimizer steps, evaluated and saved every 4; a log line per step).
    check "TRL runs $name/$run" env -C "$plan" PATH="$trl_venv/bin:$PATH" \
      DATASET="$trl_work/fixture/data" MODEL_PATH="$trl_work/fixture/model" \
      bash "launch/$run.sh" --max_steps 12 --eval_steps 4 --save_steps 4 --logging_steps 1 --use_cpu
  done
  check "collect --plan $name" "$bin" collect "$plan"/runs/*/checkpoint-*/trainer_state.json \
    --plan "$plan" --metric "$metric" --out "$plan/results.csv"
  check "fit --logs $name" "$bin" fit --plan "$plan" --out "$plan/fit" --bootstrap 20 --quiet \
    --logs "$plan"/runs/*/checkpoint-*/trainer_state.json
done
# The step axis is RL iterations: 12 optimizer steps are 6 iterations at update_epochs 2 and 12 at
# 1; every run has step 0; no run has a step twice.
check "steps are iterations, from 0, once each" python3 - "$trl_work" <<'PY'
import csv, sys
expect = {"trl-lora": [0, 2, 4, 6], "trl-full": [0, 4, 8, 12]}
for plan, steps in expect.items():
    rows = list(csv.DictReader(open(f"{sys.argv[1]}/{plan}/results.csv")))
    runs = sorted({r["run_id"] for r in rows})
    assert len(runs) == 2, (plan, runs)
    for run in runs:
        got = [int(r["step"]) for r in rows if r["run_id"] == run]
        assert got == steps, (plan, run, got, steps)
    fitted = list(csv.DictReader(open(f"{sys.argv[1]}/{plan}/fit/results.csv")))
    assert fitted == rows, f"{plan}: fit --logs collected other rows than collect"
print("ok")
PY
check "calibrate-hw reads TRL's step_time" "$bin" calibrate-hw \
  --log "$(ls "$trl_work"/trl-full/runs/p001/checkpoint-*/trainer_state.json | tail -1)" \
  --model qwen2.5-0.5b --gpus 1 --group-size 4 --prompts-per-step 2 --max-response-len 16 \
  --framework trl --engine transformers-generate --out "$trl_work/calibrated.toml"

echo "frameworks: disk after: $(df -h --output=avail "$work" | tail -1 | tr -d ' ') free;" \
  "venvs $(du -sh "$verl_venv" | cut -f1) (veRL) and $(du -sh "$trl_venv" | cut -f1) (TRL);" \
  "$(($(date +%s) - started)) s"
echo "frameworks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
