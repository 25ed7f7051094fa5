#!/usr/bin/env bash
# rlfrontier pilot p024 of grid `race-pilot` (verl).
# qwen2.5-7b lora:256, reward prm:qwen2.5-math-prm-7b, G = 8, cap 1024 tokens, 8 update epoch(s), 16 prompts per step.
# Pilot budget 3e17 flops: 8 iterations, evaluated every 1; expected $1.52 (0.51 GPU-hours, 0.06 h) on 8 x h100-sxm.
# Set TRAIN_FILES/VAL_FILES (veRL) or DATASET (TRL), and MODEL_PATH to override the model.
# Log the held-out metric at every evaluation and collect it as run_id,step,metric,value rows for `rlfrontier fit`.
set -euo pipefail
: "${TRAIN_FILES:?set TRAIN_FILES to your training parquet}"
: "${VAL_FILES:?set VAL_FILES to your held-out parquet}"
DEFAULT_MODEL_PATH='Qwen/Qwen2.5-7B'
MODEL_PATH="${MODEL_PATH:-$DEFAULT_MODEL_PATH}"
# Reward: prm:qwen2.5-math-prm-7b (a process reward model: step scores need a reward manager that aggregates them). Newer veRL spells these reward.reward_model.enable / reward.reward_model.model_path.
DEFAULT_LOG_PATH='metrics/p024.jsonl'
export VERL_FILE_LOGGER_PATH="${VERL_FILE_LOGGER_PATH:-$DEFAULT_LOG_PATH}"
mkdir -p "$(dirname "$VERL_FILE_LOGGER_PATH")"
python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  data.train_files="$TRAIN_FILES" \
  data.val_files="$VAL_FILES" \
  data.train_batch_size=16 \
  data.max_prompt_length=512 \
  data.max_response_length=1024 \
  actor_rollout_ref.model.path="$MODEL_PATH" \
  actor_rollout_ref.model.enable_gradient_checkpointing=True \
  actor_rollout_ref.model.lora_rank=256 \
  actor_rollout_ref.model.lora_alpha=256 \
  actor_rollout_ref.model.target_modules=all-linear \
  actor_rollout_ref.actor.ppo_mini_batch_size=16 \
  actor_rollout_ref.actor.ppo_epochs=8 \
  actor_rollout_ref.actor.use_kl_loss=True \
  actor_rollout_ref.actor.kl_loss_coef=0.001 \
  actor_rollout_ref.actor.use_dynamic_bsz=True \
  actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.enforce_eager=False \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.5 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
  reward_model.enable=True \
  reward_model.model.path='Qwen/Qwen2.5-Math-PRM-7B' \
  trainer.total_training_steps=8 \
  trainer.test_freq=1 \
  trainer.val_before_train=True \
  trainer.n_gpus_per_node=8 \
  trainer.nnodes=1 \
  trainer.logger='["console","file"]' \
  trainer.project_name='rlfrontier-race-pilot' \
  trainer.experiment_name='p024' \
  "$@"
