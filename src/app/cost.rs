//! `rlfrontier cost`: one run's ledger per phase and bucket, the waste with the lever that
//! removes each line, the cost per point of improvement, where to run it, and a verdict.
//!
//! The flags come in groups (the RL levers first, then the cluster, the task, the supervised
//! stages and ownership); every default is read from `rlfrontier::config`, the same source grids
//! and `compare` use.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use rlfrontier::catalog::Catalog;
use rlfrontier::config::{
    Algorithm, Budget, Finetune, Hardware, Levers, Ownership, Reward, RewardKind, RlStart,
    RunSettings, SUPERVISED_DEFAULTS, Schedule, Stop, Task,
};
use rlfrontier::costing::{
    PricedStage, RunRequest, SupervisedData, price, render, reward_model_like,
};
use rlfrontier::error::{Error, Result};
use rlfrontier::ledger::lengths::LoggedLengths;

use super::{CatalogFlag, emit, json_text};

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
    /// Seconds before the first step (model loading, engine start), once per run.
    #[arg(long, default_value_t = 0.0)]
    pub startup_seconds: f64,
    /// Save a checkpoint every N steps (veRL `trainer.save_freq`; 0: never).
    #[arg(long, default_value_t = 0)]
    pub checkpoint_every_steps: u64,
    /// Seconds one checkpoint takes.
    #[arg(long, default_value_t = 0.0)]
    pub checkpoint_seconds: f64,
    /// Validate every N steps (veRL `trainer.test_freq`; 0: never).
    #[arg(long, default_value_t = 0)]
    pub validation_every_steps: u64,
    /// Prompts in the validation set.
    #[arg(long, default_value_t = 0)]
    pub validation_prompts: u64,
    /// Responses per validation prompt (veRL `val_kwargs.n`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub validation_samples_per_prompt: u64,
    /// Prompts per generation batch under --dynamic-sampling (veRL DAPO recipe
    /// `gen_batch_size`) [default: the train batch].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub generation_batch_prompts: Option<u64>,
    /// Prompts per optimizer step (veRL `ppo_mini_batch_size`).
    #[arg(long, default_value_t = RunSettings::default().mini_batch_prompts, value_parser = clap::value_parser!(u64).range(1..))]
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
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
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
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_num_seqs: Option<u64>,
    /// Tensor-parallel degree of a rollout replica (veRL `rollout.tensor_model_parallel_size`)
    /// [default: the framework's; larger when the model needs it].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub rollout_tensor_parallel: Option<u64>,
}

/// The task: lengths and pass rates.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Task")]
pub struct TaskFlags {
    /// Mean prompt tokens.
    #[arg(long, default_value_t = Task::default().prompt_tokens as u64, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub prompt_tokens: u64,
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
    fn agent(&self, catalog: &Catalog) -> Result<rlfrontier::config::Agent> {
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

/// Arguments of `cost`: the levers of one run.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("length").args(["steps", "budget"])))]
pub struct CostArgs {
    /// Policy model id (see `rlfrontier catalog models`).
    #[arg(long)]
    pub model: String,
    /// `full` or `lora:RANK`.
    #[arg(long, default_value = "full")]
    pub finetune: Finetune,
    /// `rule`, `orm:MODEL`, `prm:MODEL` or `judge:MODEL`.
    #[arg(long, default_value = "rule")]
    pub reward: String,
    /// `grpo`, `ppo` (RL; need --steps or --budget), `sft`, `rm` or `dpo` (supervised; need
    /// --examples or --pairs).
    #[arg(long = "algo", alias = "algorithm", default_value = "grpo")]
    pub stage: PricedStage,
    /// Expected gain in points of the benchmark [default: the outcome prior's prediction].
    #[arg(long)]
    pub gain: Option<f64>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the run from a veRL launch script or a file of Hydra overrides; flags given on the
    /// command line win over the file.
    #[arg(long, value_name = "FILE", conflicts_with = "from_trl")]
    pub from_verl: Option<PathBuf>,
    /// Read the run from a TRL GRPO config (YAML, JSON, or a `trl grpo`/`accelerate launch`
    /// command); flags given on the command line win over the file.
    #[arg(long, value_name = "FILE")]
    pub from_trl: Option<PathBuf>,
    /// With --from-verl or --from-trl: stop on a key outside the framework's schema (a typo)
    /// instead of listing it and pricing the framework's default.
    #[arg(long)]
    pub strict: bool,
    /// RL levers.
    #[command(flatten)]
    pub levers: LeverFlags,
    /// The cluster.
    #[command(flatten)]
    pub cluster: ClusterFlags,
    /// The task.
    #[command(flatten)]
    pub task: TaskFlags,
    /// Micro-batches, padding and recomputation of the training passes.
    #[command(flatten)]
    pub training: super::training_flags::TrainingPassFlags,
    /// Agents.
    #[command(flatten)]
    pub agent: AgentFlags,
    /// Supervised stages.
    #[command(flatten)]
    pub supervised: SupervisedFlags,
    /// Own cluster.
    #[command(flatten)]
    pub ownership: OwnershipFlags,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// `x` when it is finite and 0 or more, else an error naming the flag.
fn non_negative(flag: &str, x: f64) -> Result<f64> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(Error::in_flag(
            flag,
            format!("{x} must be a finite number, 0 or more"),
        ))
    }
}

/// `x` when it is positive and finite, else an error naming the flag.
/// The highest price per GPU-hour `cost` accepts (as grids do).
const MAX_USD_PER_GPU_HOUR: f64 = 1000.0;

fn positive(flag: &str, x: f64) -> Result<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(Error::in_flag(
            flag,
            format!("{x} must be a positive, finite number"),
        ))
    }
}

/// A positive, finite number no larger than its physical bound (`(max, what)`).
fn positive_at_most(flag: &str, x: f64, (max, what): (f64, &str)) -> Result<f64> {
    let x = positive(flag, x)?;
    if x > max {
        return Err(Error::in_flag(
            flag,
            format!("{x} is above {max} ({what}); check the units"),
        ));
    }
    Ok(x)
}

impl CostArgs {
    /// The policy, checked to be a generator.
    fn policy(&self, catalog: &Catalog) -> Result<rlfrontier::catalog::ModelSpec> {
        let policy = catalog
            .resolve_model(&self.model)
            .map_err(|m| Error::in_flag("--model", m))?;
        if let Finetune::Lora(rank) = self.finetune
            && rank > policy.hidden
        {
            return Err(Error::in_flag(
                "--finetune",
                format!(
                    "`lora:{rank}` is above the hidden size of `{}` ({}); use a rank below it, or `full`",
                    policy.id, policy.hidden
                ),
            ));
        }
        if !policy.lm_head {
            return Err(Error::in_flag(
                "--model",
                format!("`{}` is a reward model and cannot be the policy", policy.id),
            ));
        }
        Ok(policy)
    }

    /// The reward of an RL run, or the reward model a reward-model stage trains.
    fn reward(&self, catalog: &Catalog, policy: &rlfrontier::catalog::ModelSpec) -> Result<Reward> {
        if self.stage != PricedStage::RewardModel {
            return Reward::parse(&self.reward, catalog).map_err(|m| Error::in_flag("--reward", m));
        }
        let model = match &self.supervised.rm_model {
            Some(id) => catalog
                .model(id)
                .map_err(|m| Error::in_flag("--rm-model", m))?
                .clone(),
            None => reward_model_like(policy),
        };
        Ok(Reward {
            kind: RewardKind::Orm,
            model: Some(model),
        })
    }

    /// The cluster, at the catalog's price unless overridden.
    fn hardware(&self, catalog: &Catalog) -> Result<Hardware> {
        let c = &self.cluster;
        let gpu = catalog
            .gpu(&c.gpu)
            .map_err(|m| Error::in_flag("--gpu", m))?
            .clone();
        let engine = catalog
            .engine(&c.engine)
            .map_err(|m| Error::in_flag("--engine", m))?
            .clone();
        let mut hardware = Hardware::new(gpu, c.gpus, engine, c.framework);
        if let Some(x) = c.usd_per_gpu_hour {
            hardware.usd_per_gpu_hour = positive("--usd-per-gpu-hour", x)?;
            if x > MAX_USD_PER_GPU_HOUR {
                return Err(Error::in_flag(
                    "--usd-per-gpu-hour",
                    format!(
                        "{x} dollars per GPU-hour is beyond any real price (at most {MAX_USD_PER_GPU_HOUR}, as in grids; the price is per GPU, not per node)"
                    ),
                ));
            }
        }
        if let Some(schedule) = c.schedule {
            hardware.schedule = schedule;
        }
        if let Some(x) = c.rollout_gpu_memory_utilization {
            if !(x > 0.0 && x < 1.0) {
                return Err(Error::in_flag(
                    "--rollout-gpu-memory-utilization",
                    format!("{x} must lie strictly between 0 and 1 (a share of GPU memory)"),
                ));
            }
            hardware.rollout_gpu_memory_utilization = x;
        }
        if let Some(n) = c.max_num_seqs {
            hardware.max_num_seqs = n;
        }
        if let Some(n) = c.rollout_tensor_parallel {
            hardware.rollout_tensor_parallel = n;
        }
        if hardware.schedule != Schedule::Colocated && c.gpus < 2 {
            return Err(Error::in_flag(
                "--gpus",
                format!(
                    "the {} schedule needs at least 2 GPUs; use --schedule colocated",
                    hardware.schedule
                ),
            ));
        }
        Ok(hardware)
    }

    /// The task, validated.
    fn task(&self) -> Result<Task> {
        let t = &self.task;
        if !(t.pass_rate_mean > 0.0 && t.pass_rate_mean < 1.0) {
            return Err(Error::in_flag(
                "--pass-rate-mean",
                format!("{} must lie strictly between 0 and 1", t.pass_rate_mean),
            ));
        }
        let cv = positive_at_most(
            "--response-length-cv",
            t.response_length_cv,
            rlfrontier::config::MAX_LENGTH_CV,
        )?;
        let cap = self.levers.max_response_len as f64;
        let fit = |flag: &str, mean: f64, clip_ratio: Option<f64>| {
            LoggedLengths {
                mean_tokens: positive(flag, mean)?,
                cap_tokens: cap,
                clip_ratio,
            }
            .uncapped(cv)
            .map_err(|e| Error::in_flag(flag, e.0))
        };
        let (mean, cv) = match t.mean_response_tokens {
            Some(m) => fit("--mean-response-tokens", m, t.clip_ratio)?,
            None => (
                positive_at_most(
                    "--uncapped-mean-response-tokens",
                    t.uncapped_mean_response_tokens,
                    rlfrontier::config::MAX_RESPONSE_TOKENS,
                )?,
                cv,
            ),
        };
        // The end of the run keeps the spread fitted at its start.
        let end = match t.mean_response_tokens_end {
            Some(m) => Some(
                LoggedLengths {
                    mean_tokens: positive("--mean-response-tokens-end", m)?,
                    cap_tokens: cap,
                    clip_ratio: None,
                }
                .uncapped(cv)
                .map_err(|e| Error::in_flag("--mean-response-tokens-end", e.0))?
                .0,
            ),
            None => None,
        };
        Ok(Task {
            prompt_tokens: t.prompt_tokens as f64,
            mean_response_tokens: mean,
            mean_response_tokens_end: end,
            response_length_cv: cv,
            pass_rate_mean: t.pass_rate_mean,
            start: t.start,
            dataset_prompts: t
                .dataset_prompts
                .map(|d| {
                    positive_at_most(
                        "--dataset-prompts",
                        d,
                        rlfrontier::config::MAX_DATASET_PROMPTS,
                    )
                })
                .transpose()?,
            pass_rate_concentration: positive_at_most(
                "--pass-rate-concentration",
                t.pass_rate_concentration,
                rlfrontier::config::MAX_PASS_RATE_CONCENTRATION,
            )?,
        })
    }

    /// The run settings, validated.
    fn run_settings(&self, catalog: &Catalog) -> Result<RunSettings> {
        let l = &self.levers;
        if !(l.step_overhead_seconds.is_finite() && l.step_overhead_seconds >= 0.0) {
            return Err(Error::in_flag(
                "--step-overhead-seconds",
                "must be a finite number of seconds, 0 or more",
            ));
        }
        if !(l.kl_coef.is_finite() && l.kl_coef >= 0.0) {
            return Err(Error::in_flag(
                "--kl-coef",
                "must be a finite number, 0 or more",
            ));
        }
        let mut run = RunSettings {
            algorithm: match self.stage {
                PricedStage::Rl(algorithm) => algorithm,
                _ => Algorithm::Grpo,
            },
            kl_reference: !l.no_kl_reference,
            kl_coef: l.kl_coef,
            prefix_cache: !l.no_prefix_cache,
            dynamic_sampling: l.dynamic_sampling && !l.no_dynamic_sampling,
            framework: self.cluster.framework,
            old_logprob: self.cluster.framework.profile().old_logprob,
            startup_seconds: non_negative("--startup-seconds", l.startup_seconds)?,
            checkpoint_every_steps: l.checkpoint_every_steps,
            checkpoint_seconds: non_negative("--checkpoint-seconds", l.checkpoint_seconds)?,
            validation_every_steps: l.validation_every_steps,
            validation_prompts: l.validation_prompts,
            validation_samples_per_prompt: l.validation_samples_per_prompt,
            generation_batch_prompts: l.generation_batch_prompts,
            mini_batch_prompts: l.mini_batch_prompts,
            agent: self.agent.agent(catalog)?,
            ..RunSettings::default()
        };
        self.training.apply(&mut run);
        Ok(run)
    }

    /// The steps of `--data-epochs` passes over `--dataset-prompts` prompts: veRL's
    /// `total_training_steps = len(train_dataloader) × total_epochs`, its dataloader dropping the
    /// last partial batch (volcengine/verl `verl/trainer/ppo/ray_trainer.py`,
    /// `_create_dataloader`: `drop_last=True`).
    fn steps_from_data_epochs(&self) -> Result<u64> {
        let l = &self.levers;
        let epochs = l.data_epochs.unwrap_or(1);
        let Some(prompts) = self.task.dataset_prompts else {
            return Err(Error::in_flag(
                "--dataset-prompts",
                format!(
                    "{epochs} passes over the training set (--data-epochs, veRL's trainer.total_epochs) need its size: give --dataset-prompts N, or --steps N"
                ),
            ));
        };
        let per_epoch = (prompts / l.prompts_per_step as f64).floor() as u64;
        if per_epoch == 0 {
            return Err(Error::in_flag(
                "--dataset-prompts",
                format!(
                    "{prompts} prompts do not fill one batch of {} prompts per step",
                    l.prompts_per_step
                ),
            ));
        }
        Ok(per_epoch * epochs)
    }

    /// How long the run lasts, and the data a supervised stage needs.
    fn stop_and_data(&self) -> Result<(Stop, SupervisedData)> {
        let (l, s) = (&self.levers, &self.supervised);
        let stop = match (l.steps, l.budget, self.stage.is_rl()) {
            (Some(n), _, _) => Stop::Iterations(n),
            (None, Some(budget), _) => Stop::Budget(budget),
            (None, None, true) if l.data_epochs.is_some() => {
                Stop::Iterations(self.steps_from_data_epochs()?)
            }
            (None, None, true) => {
                return Err(Error::in_flag(
                    "--steps",
                    "give --steps N or --budget \"2000 usd\" for an RL run",
                ));
            }
            (None, None, false) => Stop::Iterations(s.epochs),
        };
        match self.stage {
            PricedStage::Sft if s.examples.is_none() => {
                return Err(Error::in_flag(
                    "--examples",
                    "SFT needs --examples N (and --tokens-per-example)",
                ));
            }
            PricedStage::RewardModel | PricedStage::Dpo if s.pairs.is_none() => {
                return Err(Error::in_flag(
                    "--pairs",
                    "RM and DPO need --pairs N (and --tokens-per-pair)",
                ));
            }
            _ => {}
        }
        for (flag, value) in [
            ("--examples", s.examples),
            ("--pairs", s.pairs),
            ("--gain", self.gain),
        ] {
            if let Some(x) = value {
                positive(flag, x)?;
            }
        }
        let data = SupervisedData {
            examples: s.examples.unwrap_or(0.0),
            tokens_per_example: positive("--tokens-per-example", s.tokens_per_example)?,
            pairs: s.pairs.unwrap_or(0.0),
            tokens_per_pair: positive("--tokens-per-pair", s.tokens_per_pair)?,
            epochs: s.epochs,
            precomputed_reference: s.precomputed_reference,
        };
        Ok((stop, data))
    }

    /// The measured base score, a fraction in [0, 1].
    fn base_score(&self) -> Result<Option<f64>> {
        match self.task.base_score {
            Some(x) if !(0.0..=1.0).contains(&x) => Err(Error::in_flag(
                "--base-score",
                if (1.0..=100.0).contains(&x) {
                    format!(
                        "{x} must lie in [0, 1]; scores are fractions: write {}",
                        rlfrontier::format::number(x / 100.0)
                    )
                } else {
                    format!("{x} must lie in [0, 1] (the measured pass rate before RL)")
                },
            )),
            other => Ok(other),
        }
    }

    /// Validates the flags into a priced request.
    pub fn request(&self) -> Result<RunRequest> {
        let catalog = self.catalog.load()?;
        let policy = self.policy(&catalog)?;
        let reward = self.reward(&catalog, &policy)?;
        if self.stage == PricedStage::Rl(Algorithm::Grpo) && self.levers.group_size < 2 {
            return Err(Error::in_flag(
                "--group-size",
                "GRPO needs at least 2 responses per prompt to compute group-relative advantages",
            ));
        }
        let hardware = self.hardware(&catalog)?;
        let task = self.task()?;
        let run = self.run_settings(&catalog)?;
        let (stop, supervised) = self.stop_and_data()?;
        let o = &self.ownership;
        Ok(RunRequest {
            stage: self.stage,
            policy,
            reward,
            finetune: self.finetune,
            hardware,
            task,
            run,
            levers: Levers {
                prompts_per_step: self.levers.prompts_per_step,
                group_size: self.levers.group_size,
                max_response_len: self.levers.max_response_len,
                update_epochs: self.levers.update_epochs,
            },
            stop,
            supervised,
            ownership: Ownership {
                own_gpu_usd_per_hour: o.own_gpu_usd_per_hour,
                gpu_capex_usd: o.gpu_capex_usd,
                amortization_years: o.amortization_years,
                utilization: o.utilization,
                opex_usd_per_gpu_hour: o.opex_usd_per_gpu_hour,
            },
            gain_points: self.gain,
            base_score: self.base_score()?,
            catalog,
        })
    }
}

/// Prices the run and prints it (table or JSON).
pub fn run(args: &CostArgs, out: &mut dyn Write) -> Result<()> {
    let imported = match args.import_source() {
        Some((path, format)) => {
            let launch = TrlLaunch {
                processes: Some(args.cluster.gpus),
                num_generations: Some(args.levers.group_size),
            };
            let run = read_import(path, format, launch)?;
            if args.strict
                && let Some(key) = run.unknown.first()
            {
                let hint = match key.why.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", key.why),
                };
                return Err(Error::in_file(
                    path,
                    Some(key.line),
                    &key.key,
                    format!(
                        "not a key of the framework's schema{hint}; --strict stops on it (without --strict it is listed and the framework's default is priced)"
                    ),
                ));
            }
            Some((path, run))
        }
        None => None,
    };
    let user_flags = user_flags();
    let request = match args.request() {
        Ok(request) => request,
        Err(e) => {
            // The import summary first (what was read, from which line), then the one error.
            if let Some((path, run)) = &imported {
                if !args.json {
                    emit(out, &imported_text(path, run, &user_flags))?;
                }
                return Err(locate_in_import(e, path, run));
            }
            return Err(e);
        }
    };
    let report = price(&request);
    if let Some((what, value)) = report.non_finite_total() {
        return Err(Error::in_setting(
            "cost",
            format!(
                "the run's {what} come out as {value}: an input is far outside any physical range; check the counts and prices given"
            ),
        ));
    }
    if args.json {
        let mut value = render::json(&report, &request);
        if let (Some((path, run)), Some(object)) = (&imported, value.as_object_mut()) {
            object.insert("imported".into(), imported_json(path, run, &user_flags));
        }
        emit(out, &json_text(&value))?;
    } else {
        if let Some((path, run)) = &imported {
            emit(out, &imported_text(path, run, &user_flags))?;
        }
        emit(out, &render::text(&report, &request))?;
    }
    // The report is printed either way; the exit code and one line on stderr say it cannot run.
    match report.ledger.infeasible {
        Some(reason) => Err(rlfrontier::error::Error::Infeasible(reason.to_string())),
        None => Ok(()),
    }
}

impl CostArgs {
    /// The file to import and its framework, when `--from-verl` or `--from-trl` is given.
    fn import_source(&self) -> Option<(&Path, ConfigFormat)> {
        self.from_verl
            .as_deref()
            .map(|p| (p, ConfigFormat::Verl))
            .or_else(|| self.from_trl.as_deref().map(|p| (p, ConfigFormat::Trl)))
    }
}

use rlfrontier::config::import::{
    ConfigFormat, ImportedRun, RESPONSE_LENGTH_NOTE, Setting, TrlLaunch, import_trl, import_verl,
};

/// Reads and imports a framework file; errors name the file, line and key.
fn read_import(path: &Path, format: ConfigFormat, launch: TrlLaunch) -> Result<ImportedRun> {
    let text = rlfrontier::input::read_text(
        path,
        rlfrontier::input::MAX_CONFIG_BYTES,
        "the launch script or config file",
    )?;
    let imported = match format {
        ConfigFormat::Verl => import_verl(&text),
        ConfigFormat::Trl => import_trl(&text, launch),
    };
    imported.map_err(|e| Error::in_file(path, e.line, &e.key, e.message))
}

/// An error about a flag whose value came from the imported file, located in the file instead.
fn locate_in_import(error: Error, path: &Path, run: &ImportedRun) -> Error {
    let Error::Input(input) = &error else {
        return error;
    };
    let rlfrontier::error::Location::Flag(flag) = &input.location else {
        return error;
    };
    if user_flags().iter().any(|f| f == flag) {
        return error;
    }
    match run
        .settings
        .iter()
        .find(|i| i.setting.cost_flag().0 == flag)
    {
        Some(imported) if imported.line.is_some() => Error::in_file(
            path,
            imported.line,
            &imported.key,
            format!("{} (imported as {flag})", input.message),
        ),
        _ => error,
    }
}

/// The flags the user typed after `cost` (names only), to tell imported values from overrides.
fn user_flags() -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    let start = args
        .iter()
        .position(|a| a == "cost")
        .map_or(args.len(), |i| i + 1);
    args[start..]
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect()
}

/// Whether the user's flags set what `flag` sets (a switch and its negation count as one).
fn overridden(flag: &str, user_flags: &[String]) -> bool {
    let twin = flag
        .strip_prefix("--no-")
        .map(|f| format!("--{f}"))
        .unwrap_or_else(|| flag.replacen("--", "--no-", 1));
    let budget_for_steps = flag == "--steps" && user_flags.iter().any(|f| f == "--budget");
    budget_for_steps || user_flags.iter().any(|f| f == flag || *f == twin)
}

/// The command line a run imported from a file stands for: the file's settings as `cost` flags
/// inserted right after `cost`, so that flags the user typed (later on the line) win. Other
/// subcommands' arguments are returned unchanged.
pub fn with_imported_flags(args: Vec<OsString>) -> Result<Vec<OsString>> {
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(at) = text
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|i| i + 1)
    else {
        return Ok(args);
    };
    if text[at] != "cost" {
        return Ok(args);
    }
    let value_of = |flag: &str| -> Option<String> {
        let equals = format!("{flag}=");
        text[at + 1..].iter().enumerate().find_map(|(i, a)| {
            if a == flag {
                text.get(at + 2 + i).cloned()
            } else {
                a.strip_prefix(&equals).map(str::to_string)
            }
        })
    };
    let source = match (value_of("--from-verl"), value_of("--from-trl")) {
        (Some(path), None) => (PathBuf::from(path), ConfigFormat::Verl),
        (None, Some(path)) => (PathBuf::from(path), ConfigFormat::Trl),
        // None: nothing to import; both: clap reports the conflict.
        _ => return Ok(args),
    };
    let launch = TrlLaunch {
        processes: value_of("--gpus").and_then(|g| g.parse().ok()),
        num_generations: value_of("--group-size").and_then(|g| g.parse().ok()),
    };
    let run = read_import(&source.0, source.1, launch)?;
    let typed: Vec<String> = text[at + 1..]
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect();
    let mut spliced: Vec<OsString> = args[..=at].to_vec();
    for imported in &run.settings {
        let (flag, value) = imported.setting.cost_flag();
        if overridden(flag, &typed) {
            continue;
        }
        spliced.push(flag.into());
        if let Some(value) = value {
            spliced.push(value.into());
        }
    }
    spliced.extend_from_slice(&args[at + 1..]);
    Ok(spliced)
}

/// Where an imported setting came from, for humans.
fn origin(imported: &rlfrontier::config::import::Imported, run: &ImportedRun) -> String {
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    match imported.line {
        Some(line) => format!("{} (line {line})", imported.key),
        None if matches!(imported.setting, Setting::Framework(_)) => "the file's framework".into(),
        None if imported.key.starts_with("--") => imported.key.clone(),
        None => format!("{} ({framework} default)", imported.key),
    }
}

/// How many unknown keys the text block names before it counts the rest.
const LISTED_UNKNOWN_KEYS: usize = 20;

/// The text block `cost` prints before the ledger of an imported run.
fn imported_text(path: &Path, run: &ImportedRun, user_flags: &[String]) -> String {
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    let mut s = format!("Imported from {} ({framework}):\n", path.display());
    let rows: Vec<(String, String)> = run
        .settings
        .iter()
        .map(|i| {
            let (flag, value) = i.setting.cost_flag();
            let flag_text = match value {
                Some(v) => format!("{flag} {v}"),
                None => flag.to_string(),
            };
            let mut from = origin(i, run);
            if overridden(flag, user_flags) {
                from.push_str(": overridden on the command line");
            }
            (flag_text, from)
        })
        .collect();
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    for (flag, from) in &rows {
        s.push_str(&format!("  {flag:<width$}  <- {from}\n"));
    }
    for k in &run.not_modelled {
        s.push_str(&format!(
            "  not modelled: {} (line {}): {}\n",
            k.key, k.line, k.why
        ));
    }
    if !run.unknown.is_empty() {
        let mut keys: Vec<String> = run
            .unknown
            .iter()
            .take(LISTED_UNKNOWN_KEYS)
            .map(|k| match k.why.is_empty() {
                true => format!("{} (line {})", k.key, k.line),
                false => format!("{} (line {}: {})", k.key, k.line, k.why),
            })
            .collect();
        if run.unknown.len() > LISTED_UNKNOWN_KEYS {
            keys.push(format!(
                "and {} more (--json lists them all)",
                run.unknown.len() - LISTED_UNKNOWN_KEYS
            ));
        }
        s.push_str(&format!(
            "  unknown keys, not priced (a typo, or a newer {framework}?): {}\n",
            keys.join(", ")
        ));
    }
    if !run.not_priced.is_empty() {
        s.push_str(&format!(
            "  read, not priced ({} keys that do not change the cost: learning rate, clipping, logging, paths, ...)\n",
            run.not_priced.len()
        ));
    }
    for note in &run.notes {
        let length_given = user_flags.iter().any(|f| f == "--mean-response-tokens");
        if !(length_given && note == RESPONSE_LENGTH_NOTE) {
            s.push_str(&format!("  note: {note}\n"));
        }
    }
    s.push('\n');
    s
}

/// The JSON form of an import: settings with their keys and lines, and the keys not used.
fn imported_json(path: &Path, run: &ImportedRun, user_flags: &[String]) -> serde_json::Value {
    let keys = |notes: &[rlfrontier::config::import::KeyNote]| {
        notes
            .iter()
            .map(|k| serde_json::json!({"key": k.key, "line": k.line, "why": k.why}))
            .collect::<Vec<_>>()
    };
    serde_json::json!({
        "file": path.display().to_string(),
        "framework": run.format.framework().as_str(),
        "settings": run.settings.iter().map(|i| {
            let (flag, value) = i.setting.cost_flag();
            serde_json::json!({
                "flag": flag,
                "value": value,
                "key": i.key,
                "line": i.line,
                "overridden": overridden(flag, user_flags),
            })
        }).collect::<Vec<_>>(),
        "not_modelled": keys(&run.not_modelled),
        "unknown": keys(&run.unknown),
        "not_priced": keys(&run.not_priced),
        "notes": run.notes,
    })
}
