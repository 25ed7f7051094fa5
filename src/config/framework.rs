//! RL framework profiles: what veRL, TRL and OpenRLHF do by default that changes a step's cost
//! (placement of generation and training, the rollout engine's memory share, sequences in
//! flight and tensor parallelism, which log-prob passes run). Each value cites the framework's
//! config file or trainer code at the commit read; any of them can be overridden in the grid or
//! on the `cost` command line.

use std::fmt;

use super::{OldLogprob, Schedule};
use crate::error::suggestion;

/// An RL post-training framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// veRL (volcengine/verl).
    Verl,
    /// TRL's GRPOTrainer (huggingface/trl).
    Trl,
    /// OpenRLHF's Ray PPO trainer.
    Openrlhf,
}

named_enum!(Framework { Verl => "verl", Trl => "trl", Openrlhf => "openrlhf" });

/// The defaults of a framework that the ledger prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameworkProfile {
    /// Where generation and training run.
    pub schedule: Schedule,
    /// Share of each GPU's memory the rollout engine may use.
    pub rollout_gpu_memory_utilization: f64,
    /// The rollout engine's `max_num_seqs`, when the framework sets it (None: the engine's own
    /// default).
    pub max_num_seqs: Option<u64>,
    /// The rollout replicas' tensor-parallel degree.
    pub rollout_tensor_parallel: u64,
    /// When old-policy log-probs are recomputed.
    pub old_logprob: OldLogprob,
    /// What a training pass computes when padding is kept (not removed).
    pub padding: PaddingWidth,
    /// Where these values come from.
    pub source: &'static str,
}

/// How wide a framework pads its sequences for the training passes when padding is not
/// removed (veRL `use_remove_padding = false`, TRL without `padding_free`): the padded
/// positions are computed like real tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaddingWidth {
    /// Every sequence at the fixed widths of the batch tensors: the prompt left-padded to the
    /// prompt cap and the response right-padded to the response cap. veRL's dataset pads each
    /// prompt to `data.max_prompt_length` (`verl/utils/dataset/rl_dataset.py`,
    /// `postprocess_data(max_length=self.max_prompt_length, left_pad=True)`) and its rollout each
    /// response to `response_length` (`pad_2d_list_to_length(response, pad_token_id,
    /// max_length=self.config.response_length)` in the vLLM rollout), so without padding removal
    /// the actor, reference and critic run over `max_prompt_length + response_length` positions
    /// per sequence.
    FixedWidths,
    /// Each micro-batch padded to its own longest sequence (a collator's dynamic padding: TRL,
    /// OpenRLHF without packing).
    LongestInMicroBatch,
}

impl Framework {
    /// The framework's defaults.
    pub fn profile(self) -> FrameworkProfile {
        match self {
            // volcengine/verl@b178a3cd: verl/trainer/config/_generated_ppo_trainer.yaml
            // (rollout.gpu_memory_utilization: 0.5 l.201, enforce_eager: false l.203,
            // tensor_model_parallel_size: 2 l.206, max_num_seqs: 256 l.212); the hybrid engine
            // colocates rollout and training; verl/trainer/ppo/ray_trainer.py l.1500-1502
            // recomputes old_log_prob every step unless rollout-correction bypass mode is on
            // (default off).
            Framework::Verl => FrameworkProfile {
                schedule: Schedule::Colocated,
                rollout_gpu_memory_utilization: 0.5,
                max_num_seqs: Some(256),
                rollout_tensor_parallel: 2,
                old_logprob: OldLogprob::Always,
                padding: PaddingWidth::FixedWidths,
                source: "volcengine/verl@b178a3cd _generated_ppo_trainer.yaml (rollout gpu_memory_utilization 0.5, max_num_seqs 256, tensor_model_parallel_size 2, enforce_eager false); ray_trainer.py recomputes old_log_prob every step",
            },
            // huggingface/trl@f2cd5771: trl/trainer/grpo_config.py (vllm_mode "colocate" l.585,
            // vllm_gpu_memory_utilization 0.3 l.647, vllm_tensor_parallel_size 1 l.662,
            // vllm_importance_sampling_correction True l.916); grpo_trainer.py l.2561-2562
            // computes old per-token log-probs whenever vLLM's importance-sampling correction
            // is on.
            Framework::Trl => FrameworkProfile {
                schedule: Schedule::Colocated,
                rollout_gpu_memory_utilization: 0.3,
                max_num_seqs: None,
                rollout_tensor_parallel: 1,
                old_logprob: OldLogprob::Always,
                padding: PaddingWidth::LongestInMicroBatch,
                source: "huggingface/trl@f2cd5771 grpo_config.py (vllm_mode colocate, vllm_gpu_memory_utilization 0.3, vllm_tensor_parallel_size 1, importance-sampling correction on); grpo_trainer.py computes old log-probs with it",
            },
            // OpenRLHF/OpenRLHF@3c3be623: openrlhf/cli/train_ppo_ray.py (separate actor, ref,
            // critic and vLLM groups unless --train.colocate_all, l.224-226;
            // --vllm.gpu_memory_utilization 0.95 l.251-253; enforce_eager off l.243);
            // openrlhf/trainer/ppo_utils/experience_maker.py l.154 runs the actor forward for
            // every experience batch. Generation and training alternate (no async by default).
            Framework::Openrlhf => FrameworkProfile {
                schedule: Schedule::Separate,
                rollout_gpu_memory_utilization: 0.95,
                max_num_seqs: None,
                rollout_tensor_parallel: 1,
                old_logprob: OldLogprob::Always,
                padding: PaddingWidth::LongestInMicroBatch,
                source: "OpenRLHF/OpenRLHF@3c3be623 train_ppo_ray.py (separate vLLM and training groups, vllm gpu_memory_utilization 0.95, CUDA graphs); experience_maker.py computes action log-probs every batch",
            },
        }
    }
}

/// The framework runs use when none is named: veRL, the most used open RL framework and the
/// one the pilot plan's launch scripts target first.
pub const DEFAULT_FRAMEWORK: Framework = Framework::Verl;
