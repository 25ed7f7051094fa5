//! `rlfrontier cost`'s flags for how training-side passes are cut into micro-batches, and the
//! run settings they set (`rlfrontier::config::MicroBatching`, `max_tokens_per_gpu`,
//! `gradient_checkpointing`, `offload`). veRL and TRL files set them through the importers.

use clap::Args;
use rlfrontier::config::RunSettings;

/// Micro-batching, padding and activation recomputation of the training passes.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Training passes")]
pub struct TrainingPassFlags {
    /// Token budget per GPU of an update micro-batch (veRL `ppo_max_token_len_per_gpu` with
    /// `use_dynamic_bsz`) [default: 16384].
    #[arg(long)]
    pub max_tokens_per_gpu: Option<u64>,
    /// Sequences per GPU per update micro-batch instead of a token budget (veRL
    /// `ppo_micro_batch_size_per_gpu` without `use_dynamic_bsz`; TRL
    /// `per_device_train_batch_size`).
    #[arg(long)]
    pub micro_batch_sequences: Option<u64>,
    /// Sequences per GPU per log-prob micro-batch (veRL `log_prob_micro_batch_size_per_gpu`).
    #[arg(long)]
    pub log_prob_micro_batch_sequences: Option<u64>,
    /// Token budget per GPU of a log-prob micro-batch (veRL `log_prob_max_token_len_per_gpu`)
    /// [default: the update's].
    #[arg(long)]
    pub log_prob_max_tokens_per_gpu: Option<u64>,
    /// Recompute activations in the backward pass (the default; veRL
    /// `enable_gradient_checkpointing`).
    #[arg(long, overrides_with = "no_gradient_checkpointing")]
    pub gradient_checkpointing: bool,
    /// Keep activations instead (faster, more memory).
    #[arg(long)]
    pub no_gradient_checkpointing: bool,
    /// Remove padding: pack sequences (the default; veRL `use_remove_padding`, TRL
    /// `padding_free`).
    #[arg(long, overrides_with = "no_remove_padding")]
    pub remove_padding: bool,
    /// Pad each micro-batch of sequences to its longest and compute the padding.
    #[arg(long)]
    pub no_remove_padding: bool,
    /// Keep the policy's (and critic's) weights and gradients in host memory between passes
    /// (veRL `fsdp_config.param_offload`): each pass copies them in and out.
    #[arg(long, overrides_with = "no_param_offload")]
    pub param_offload: bool,
    /// Keep them on the GPU (the default).
    #[arg(long)]
    pub no_param_offload: bool,
    /// Keep the optimizer's moments in host memory between updates (veRL
    /// `fsdp_config.optimizer_offload`).
    #[arg(long, overrides_with = "no_optimizer_offload")]
    pub optimizer_offload: bool,
    /// Keep them on the GPU (the default).
    #[arg(long)]
    pub no_optimizer_offload: bool,
    /// Keep the reference model's weights in host memory between its passes (veRL
    /// `ref.fsdp_config.param_offload`).
    #[arg(long, overrides_with = "no_reference_offload")]
    pub reference_offload: bool,
    /// Keep them on the GPU (the default).
    #[arg(long)]
    pub no_reference_offload: bool,
    /// Move the offloaded state off the GPUs once per step, for a colocated rollout, and back
    /// once for training (slime's `offload_train`, OpenRLHF's `--deepspeed_enable_sleep`),
    /// instead of around every pass (veRL).
    #[arg(long, overrides_with = "no_offload_per_step")]
    pub offload_per_step: bool,
    /// Move it around every pass (the default, as veRL does).
    #[arg(long)]
    pub no_offload_per_step: bool,
    /// Ulysses sequence-parallel degree of the training passes (veRL
    /// `ulysses_sequence_parallel_size`) [default: 1].
    #[arg(long)]
    pub sequence_parallel: Option<u64>,
}

/// `on` when the switch is given, `off` when its negation is, else `current`.
fn switch(on: bool, off: bool, current: bool) -> bool {
    if off { false } else { on || current }
}

impl TrainingPassFlags {
    /// Writes the flags into `run`, keeping its defaults where a flag is absent.
    pub fn apply(&self, run: &mut RunSettings) {
        if let Some(n) = self.max_tokens_per_gpu {
            run.max_tokens_per_gpu = n as f64;
        }
        let mb = &mut run.micro_batching;
        mb.update_sequences = self.micro_batch_sequences.or(mb.update_sequences);
        mb.log_prob_sequences = self
            .log_prob_micro_batch_sequences
            .or(mb.log_prob_sequences);
        if let Some(n) = self.log_prob_max_tokens_per_gpu {
            mb.log_prob_max_tokens_per_gpu = Some(n as f64);
        }
        if self.no_gradient_checkpointing {
            run.gradient_checkpointing = false;
        } else if self.gradient_checkpointing {
            run.gradient_checkpointing = true;
        }
        if self.no_remove_padding {
            mb.remove_padding = false;
        } else if self.remove_padding {
            mb.remove_padding = true;
        }
        if let Some(n) = self.sequence_parallel {
            run.sequence_parallel = n;
        }
        let o = &mut run.offload;
        o.params = switch(self.param_offload, self.no_param_offload, o.params);
        o.optimizer = switch(
            self.optimizer_offload,
            self.no_optimizer_offload,
            o.optimizer,
        );
        o.reference = switch(
            self.reference_offload,
            self.no_reference_offload,
            o.reference,
        );
        o.per_step = switch(self.offload_per_step, self.no_offload_per_step, o.per_step);
    }
}
