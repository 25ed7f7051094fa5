//! `cost`'s flags in their help groups: the RL levers, the cluster, the task, the agent, the
//! supervised stages and ownership. Every default is read from `rlfrontier::config`.

use clap::Args;
use rlfrontier::catalog::Catalog;
use rlfrontier::config::{
    Budget, Levers, Ownership, RlStart, RunSettings, SUPERVISED_DEFAULTS, Schedule, Task,
};
use rlfrontier::error::{Error, Result};

/// The RL levers of one run: the axes a grid sweeps.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "RL levers")]
pub struct LeverFlags {
    /// Prompts per step, B.
    #[arg(long, default_value_t = Levers::default().prompts_per_step, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub prompts_per_step: u64,
    /// Responses per prompt, G.
    #[arg(long, default_value_t = Levers::default().group_size, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub group_size: u64,
    /// Response cap, tokens.
    #[arg(long, default_value_t = Levers::default().max_response_len, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_response_len: u64,
    /// Update epochs per rollout batch.
    #[arg(long, default_value_t = Levers::default().update_epochs, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub update_epochs: u64,
    /// Run this many iterations.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub steps: Option<u64>,
    /// Spend this budget, as "2000 usd", "500 gpu-h" or "1e18 flops".
    #[arg(long)]
    pub budget: Option<Budget>,
    /// Make this many passes over the training set (veRL `trainer.total_epochs`): with
    /// --dataset-prompts the steps are floor(dataset prompts / prompts per step) × passes, as
    /// veRL's dataloader (drop_last) counts them.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub data_epochs: Option<u64>,
    /// Run a reference-model pass every step (KL term) [default].
    #[arg(long, overrides_with = "no_kl_reference")]
    pub kl_reference: bool,
    /// No reference-model pass.
    #[arg(long)]
    pub no_kl_reference: bool,
    /// KL coefficient (a reference pass with coefficient 0 is reported as waste).
    #[arg(long, default_value_t = RunSettings::default().kl_coef)]
    pub kl_coef: f64,
    /// Prefill each prompt once per group [default].
    #[arg(long, overrides_with = "no_prefix_cache")]
    pub prefix_cache: bool,
    /// Prefill each prompt G times.
    #[arg(long)]
    pub no_prefix_cache: bool,
    /// DAPO-style dynamic sampling.
    #[arg(long, overrides_with = "no_dynamic_sampling")]
    pub dynamic_sampling: bool,
    /// No dynamic sampling [default].
    #[arg(long)]
    pub no_dynamic_sampling: bool,
    /// Fixed seconds per step for weight sync and bookkeeping.
    #[arg(long, default_value_t = RunSettings::default().step_overhead_seconds)]
    pub step_overhead_seconds: f64,
    /// Seconds before the first step (model loading, engine start), once per run [default: 120 s
    /// plus 15 s per billion parameters, from published start-up times].
    #[arg(long)]
    pub startup_seconds: Option<f64>,
    /// Save a checkpoint every N steps (veRL `trainer.save_freq`; 0: never; the default is veRL's
    /// example scripts' most common value).
    #[arg(long, default_value_t = RunSettings::default().checkpoint_every_steps)]
    pub checkpoint_every_steps: u64,
    /// Seconds one checkpoint takes [default: 12 bytes per trained parameter over
    /// --checkpoint-write-gb-per-second per node].
    #[arg(long)]
    pub checkpoint_seconds: Option<f64>,
    /// Checkpoint write bandwidth per node, GB/s.
    #[arg(long, default_value_t = RunSettings::default().checkpoint_write_gb_per_second)]
    pub checkpoint_write_gb_per_second: f64,
    /// Validate every N steps (veRL `trainer.test_freq`; 0: never; the default is the reasoning
    /// recipes' median).
    #[arg(long, default_value_t = RunSettings::default().validation_every_steps)]
    pub validation_every_steps: u64,
    /// Prompts in the validation set (the default: MATH-500).
    #[arg(long, default_value_t = RunSettings::default().validation_prompts)]
    pub validation_prompts: u64,
    /// Responses per validation prompt (veRL `val_kwargs.n`, TRL `num_generations_eval`).
    #[arg(long, default_value_t = RunSettings::default().validation_samples_per_prompt)]
    pub validation_samples_per_prompt: u64,
    /// One validation pass before the first step (veRL `trainer.val_before_train`) [default].
    #[arg(long, overrides_with = "no_validation_before_training")]
    pub validation_before_training: bool,
    /// No validation pass before the first step.
    #[arg(long)]
    pub no_validation_before_training: bool,
    /// Unexpected interruptions per GPU-day, each a restart from the last checkpoint [default:
    /// Llama 3's 4.7e-4].
    #[arg(long, default_value_t = RunSettings::default().restarts_per_gpu_day)]
    pub restarts_per_gpu_day: f64,
    /// Raise the response cap in stages within the run: `CAP:STEPS,CAP:STEPS,...`, each segment
    /// with its steps (and, optionally, its logged mean response tokens: `CAP:STEPS:MEAN`); with
    /// --budget the last segment is its cap alone and runs until the budget is spent. Replaces
    /// --max-response-len and --steps.
    #[arg(long, value_name = "SEGMENTS")]
    pub cap_schedule: Option<String>,
    /// Prompts per generation batch under --dynamic-sampling (veRL DAPO recipe
    /// `gen_batch_size`) [default: the train batch].
    #[arg(long)]
    pub generation_batch_prompts: Option<u64>,
    /// The share of generated groups --dynamic-sampling drops, as the run logs it [default: the
    /// pass-rate profile's groups whose answers all agree].
    #[arg(long)]
    pub dynamic_sampling_filter_rate: Option<f64>,
    /// Prompts per optimizer step (veRL `ppo_mini_batch_size`).
    #[arg(long, default_value_t = RunSettings::default().mini_batch_prompts)]
    pub mini_batch_prompts: u64,
}

/// The cluster.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Cluster")]
pub struct ClusterFlags {
    /// GPU id (see `rlfrontier catalog gpus`).
    #[arg(long, default_value = "h100-sxm")]
    pub gpu: String,
    /// GPUs in the cluster.
    #[arg(long, default_value_t = 8)]
    pub gpus: u64,
    /// Price per GPU-hour [default: the catalog's].
    #[arg(long)]
    pub usd_per_gpu_hour: Option<f64>,
    /// `colocated`, `async` or `separate` [default: the framework's placement].
    #[arg(long)]
    pub schedule: Option<Schedule>,
    /// RL framework whose defaults apply: `verl`, `trl` or `openrlhf` (placement, rollout
    /// memory share, sequences in flight, tensor parallelism, log-prob passes).
    #[arg(long, default_value_t = rlfrontier::config::DEFAULT_FRAMEWORK)]
    pub framework: rlfrontier::config::Framework,
    /// Rollout engine profile (see `rlfrontier catalog engines`).
    #[arg(long, default_value = rlfrontier::catalog::DEFAULT_ENGINE)]
    pub engine: String,
    /// Share of each GPU's memory the rollout engine may use (veRL
    /// `rollout.gpu_memory_utilization`, TRL `vllm_gpu_memory_utilization`) [default: the
    /// framework's].
    #[arg(long)]
    pub rollout_gpu_memory_utilization: Option<f64>,
    /// The rollout engine's cap on sequences in flight per replica (vLLM `max_num_seqs`)
    /// [default: the framework's, else the engine's].
    #[arg(long)]
    pub max_num_seqs: Option<u64>,
    /// Tensor-parallel degree of a rollout replica (veRL `rollout.tensor_model_parallel_size`)
    /// [default: the framework's; larger when the model needs it].
    #[arg(long)]
    pub rollout_tensor_parallel: Option<u64>,
}

/// The task: lengths and pass rates.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Task")]
pub struct TaskFlags {
    /// Mean prompt tokens [default: 256, or the prompt cap when it is shorter].
    #[arg(long)]
    pub prompt_tokens: Option<u64>,
    /// The prompt cap (veRL `data.max_prompt_length`), at least the mean prompt: veRL pads every
    /// prompt to it, which the training passes compute when padding is kept
    /// (--no-remove-padding) [default: the mean prompt, no prompt padding].
    #[arg(long)]
    pub max_prompt_tokens: Option<u64>,
    /// Mean response tokens as the training log reports them: the mean of generated (capped)
    /// lengths at --max-response-len (veRL `response_length/mean`, TRL
    /// `completions/mean_length`) [default: the uncapped default below, capped].
    #[arg(long, conflicts_with = "uncapped_mean_response_tokens")]
    pub mean_response_tokens: Option<f64>,
    /// The share of responses cut at the cap, as logged (veRL `response_length/clip_ratio`, TRL
    /// `completions/clipped_ratio`): with --mean-response-tokens it pins the length spread.
    #[arg(
        long,
        requires = "mean_response_tokens",
        conflicts_with = "response_length_cv"
    )]
    pub clip_ratio: Option<f64>,
    /// Mean response tokens the policy would write with no cap (the lognormal's own mean).
    #[arg(long, default_value_t = Task::default().mean_response_tokens)]
    pub uncapped_mean_response_tokens: f64,
    /// Logged mean response tokens at the end of the run, when lengths grow or shrink during
    /// training (linear in steps) [default: constant].
    #[arg(long)]
    pub mean_response_tokens_end: Option<f64>,
    /// Coefficient of variation of response lengths (lognormal).
    #[arg(long, default_value_t = Task::default().response_length_cv)]
    pub response_length_cv: f64,
    /// Mean per-prompt pass rate of the base policy.
    #[arg(long, default_value_t = Task::default().pass_rate_mean)]
    pub pass_rate_mean: f64,
    /// Concentration of the Beta pass-rate profile.
    #[arg(long, default_value_t = Task::default().pass_rate_concentration)]
    pub pass_rate_concentration: f64,
    /// The policy's measured score on the target benchmark before RL, 0-1 [default: the outcome
    /// prior's size-dependent guess].
    #[arg(long)]
    pub base_score: Option<f64>,
    /// Where RL starts: `base` (zero RL from a pretrained model), `instruct` (an instruct, SFT or
    /// DPO'd chat checkpoint), `distilled` (a reasoning model distilled from long chains of
    /// thought) or `tuned` (one of the two, not said); the outcome prior's time scale, reachable
    /// gain and interval differ by kind.
    #[arg(long, default_value_t = Task::default().start)]
    pub start: RlStart,
    /// Distinct prompts in the training set: past one pass over them the outcome prior counts
    /// repeated prompts at its `data_reuse` [default: every step's prompts are fresh].
    #[arg(long)]
    pub dataset_prompts: Option<f64>,
}

/// Multi-turn episodes: tools, sandboxes, an API judge.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Agents (multi-turn episodes, tools, sandboxes, API judges)")]
pub struct AgentFlags {
    /// Mean model turns per episode; every turn but the last calls a tool (1: single-turn).
    /// With more than one, --mean-response-tokens is per turn.
    #[arg(long, default_value_t = 1.0)]
    pub turns: f64,
    /// Tokens one tool call returns into the context.
    #[arg(long, default_value_t = 0.0)]
    pub observation_tokens: f64,
    /// Coefficient of variation of the turns across episodes (0: every episode takes --turns).
    #[arg(long, default_value_t = 0.0)]
    pub turns_cv: f64,
    /// Mean seconds one tool call takes.
    #[arg(long, default_value_t = 0.0)]
    pub tool_seconds: f64,
    /// 99th percentile of one tool call's latency, seconds (0: every call takes the mean); a
    /// round of calls then waits for its slowest.
    #[arg(long, default_value_t = 0.0)]
    pub tool_seconds_p99: f64,
    /// Share of tool calls that fail and are retried until they succeed.
    #[arg(long, default_value_t = 0.0)]
    pub tool_failure_rate: f64,
    /// `sync` (every sequence waits at each tool call) or `async` (others keep decoding).
    #[arg(long, default_value = "sync")]
    pub environment_wait: rlfrontier::config::EnvironmentWait,
    /// US$ per hour of one sandbox running one tool call or reward test.
    #[arg(long, default_value_t = 0.0)]
    pub sandbox_usd_per_hour: f64,
    /// Sandbox seconds per rollout to compute the reward (running tests).
    #[arg(long, default_value_t = 0.0)]
    pub reward_sandbox_seconds: f64,
    /// An API judge from the catalog's dated price list (`rlfrontier catalog apis`); the
    /// --judge-usd-* flags override its prices.
    #[arg(long, value_name = "ID")]
    pub judge_api: Option<String>,
    /// An API judge's price per million input tokens (setting any --judge-* flag prices the
    /// reward through an API).
    #[arg(long)]
    pub judge_usd_per_million_input: Option<f64>,
    /// The API judge's price per million output tokens.
    #[arg(long)]
    pub judge_usd_per_million_output: Option<f64>,
    /// Tokens the API judge writes per rollout [default: 64].
    #[arg(long)]
    pub judge_output_tokens: Option<f64>,
    /// The API's rate limit in tokens per minute (0: none) [default: 0].
    #[arg(long)]
    pub judge_tokens_per_minute: Option<f64>,
}

impl AgentFlags {
    /// The agent settings, validated (`catalog` prices `--judge-api`).
    pub(super) fn agent(&self, catalog: &Catalog) -> Result<rlfrontier::config::Agent> {
        let listed = match &self.judge_api {
            Some(id) => Some(
                catalog
                    .api(id)
                    .map_err(|m| Error::in_flag("--judge-api", m))?
                    .clone(),
            ),
            None => None,
        };
        let judge = [
            self.judge_usd_per_million_input
                .or(listed.as_ref().map(|a| a.usd_per_million_input_tokens)),
            self.judge_usd_per_million_output,
            self.judge_output_tokens,
            self.judge_tokens_per_minute,
        ];
        let agent = rlfrontier::config::Agent {
            turns: self.turns,
            observation_tokens: self.observation_tokens,
            turns_cv: self.turns_cv,
            tool_seconds: self.tool_seconds,
            tool_seconds_p99: self.tool_seconds_p99,
            tool_failure_rate: self.tool_failure_rate,
            wait: self.environment_wait,
            sandbox_usd_per_hour: self.sandbox_usd_per_hour,
            reward_sandbox_seconds: self.reward_sandbox_seconds,
            api_judge: judge
                .iter()
                .any(Option::is_some)
                .then(|| rlfrontier::config::ApiJudge {
                    usd_per_million_input_tokens: judge[0].unwrap_or(0.0),
                    usd_per_million_output_tokens: self
                        .judge_usd_per_million_output
                        .or(listed.as_ref().map(|a| a.usd_per_million_output_tokens))
                        .unwrap_or(0.0),
                    output_tokens: self.judge_output_tokens.unwrap_or(64.0),
                    tokens_per_minute: self.judge_tokens_per_minute.unwrap_or(0.0),
                }),
        };
        agent.validate().map_err(|(field, message)| {
            let flag = match field {
                "judge_usd_per_million_input" => "--judge-usd-per-million-input".to_string(),
                "judge_usd_per_million_output" => "--judge-usd-per-million-output".to_string(),
                "judge_output_tokens" => "--judge-output-tokens".to_string(),
                "judge_tokens_per_minute" => "--judge-tokens-per-minute".to_string(),
                other => format!("--{}", other.replace('_', "-")),
            };
            Error::in_flag(&flag, message)
        })?;
        Ok(agent)
    }
}

/// SFT, reward-model and DPO stages.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Supervised stages (--algo sft|rm|dpo)")]
pub struct SupervisedFlags {
    /// SFT: demonstrations.
    #[arg(long)]
    pub examples: Option<f64>,
    /// SFT: tokens per demonstration (prompt + answer).
    #[arg(long, default_value_t = SUPERVISED_DEFAULTS.tokens_per_example)]
    pub tokens_per_example: f64,
    /// RM and DPO: preference pairs.
    #[arg(long)]
    pub pairs: Option<f64>,
    /// RM and DPO: tokens per sequence of a pair (prompt + one response).
    #[arg(long, default_value_t = SUPERVISED_DEFAULTS.tokens_per_pair)]
    pub tokens_per_pair: f64,
    /// SFT, RM, DPO: epochs over the data.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub epochs: u64,
    /// RM training: the reward model's backbone [default: the policy's shape with a scalar head].
    #[arg(long)]
    pub rm_model: Option<String>,
    /// DPO: reference log-probs computed once before training instead of every epoch.
    #[arg(long)]
    pub precomputed_reference: bool,
}

/// An owned cluster, for buy-versus-build.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Own cluster (buy versus build)")]
pub struct OwnershipFlags {
    /// All-in cost of one of your GPUs per hour.
    #[arg(long)]
    pub own_gpu_usd_per_hour: Option<f64>,
    /// Purchase price of one GPU (with its share of the server and network).
    #[arg(long)]
    pub gpu_capex_usd: Option<f64>,
    /// Years over which the purchase is amortised.
    #[arg(long, default_value_t = Ownership::default().amortization_years)]
    pub amortization_years: f64,
    /// Share of hours the GPUs do useful work.
    #[arg(long, default_value_t = Ownership::default().utilization)]
    pub utilization: f64,
    /// Power, hosting and operations per GPU-hour.
    #[arg(long, default_value_t = Ownership::default().opex_usd_per_gpu_hour)]
    pub opex_usd_per_gpu_hour: f64,
}
