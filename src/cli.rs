//! Command-line arguments (clap) and dispatch to [`crate::commands`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;
use crate::error::Result;

/// rlfrontier: where should RL post-training compute go?
#[derive(Debug, Parser)]
#[command(name = "rlfrontier", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate every cell of a grid and write cells.csv and manifest.json.
    Sweep(SweepArgs),
    /// Validate a grid, print its axes and count its cells.
    Check(CheckArgs),
    /// Price one run: ledger per phase and bucket, waste, iterations a budget affords.
    Cost(Box<CostArgs>),
    /// FLOPs of one pass over a batch of sequences (to reconcile with veRL's perf/mfu/actor).
    Flops(FlopsArgs),
    /// List the catalog: models, GPUs or reward mechanisms.
    Catalog(CatalogArgs),
    /// Choose IsoFLOP pilot runs and write launch scripts (veRL or TRL) and a Slurm array.
    Plan(PlanArgs),
    /// Write results for a plan from known parameters (a stand-in for a cluster).
    Simulate(SimulateArgs),
    /// Fit pilot results: per-run curves, RACE surfaces, calibrated prior.
    Fit(FitArgs),
    /// Fit one sigmoid to a compute,score CSV (to compare with scipy.optimize.curve_fit).
    FitCurve(FitCurveArgs),
    /// Price one project as SFT, RM + PPO, DPO and GRPO side by side.
    Compare(CompareArgs),
    /// Combine shard outputs (`sweep --shard I/N`) into what an unsharded sweep writes.
    Merge(MergeArgs),
    /// The non-dominated rows of any CSV (JSON: row indices and the time taken).
    Front(FrontArgs),
    /// Fit the GPU profile's efficiencies to one measured step (veRL timings) and write a
    /// catalog override for --catalog.
    CalibrateHw(Box<CalibrateHwArgs>),
}

/// Arguments of `front`.
#[derive(Debug, Args)]
pub struct FrontArgs {
    /// A CSV with a header.
    pub points: PathBuf,
    /// Objective columns, comma-separated.
    #[arg(long)]
    pub columns: String,
    /// One sense per column: min or max, comma-separated.
    #[arg(long)]
    pub senses: String,
}

/// Arguments of `calibrate-hw`: the run's configuration (as for `cost`) and one step's timings.
#[derive(Debug, Args)]
pub struct CalibrateHwArgs {
    /// The run's configuration.
    #[command(flatten)]
    pub run: CostArgs,
    /// One veRL metrics line: console (`step:5 - timing_s/gen:41.2 - ...`) or JSON.
    #[arg(long)]
    pub log_line: Option<String>,
    /// A veRL log file: its last line with `timing_s/gen` is used.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Measured generation seconds of one step (`timing_s/gen`).
    #[arg(long)]
    pub gen_seconds: Option<f64>,
    /// Measured update seconds (`timing_s/update_actor`).
    #[arg(long)]
    pub update_seconds: Option<f64>,
    /// Measured reference log-prob seconds (`timing_s/ref`).
    #[arg(long)]
    pub ref_seconds: Option<f64>,
    /// Measured old-policy log-prob seconds (`timing_s/old_log_prob`).
    #[arg(long)]
    pub old_logprob_seconds: Option<f64>,
    /// Measured mean response length (`response_length/mean`).
    #[arg(long)]
    pub response_length_mean: Option<f64>,
    /// Where to write the catalog override.
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A project file [default: the bundled seed back-of-envelope].
    pub project: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// The budget every pilot spends, as "1e17 flops", "20 gpu-h" or "100 usd".
    #[arg(long)]
    pub pilot_budget: String,
    /// Most pilot runs.
    #[arg(long)]
    pub max_pilots: usize,
    /// Most dollars for all pilots together.
    #[arg(long)]
    pub pilot_usd: Option<f64>,
    /// `verl` or `trl`.
    #[arg(long, default_value = "verl")]
    pub framework: String,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace another grid's plan in the output folder.
    #[arg(long)]
    pub force: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The plan (plan.csv; plan.json must sit beside it).
    #[arg(long)]
    pub plan: PathBuf,
    /// True parameters: a TOML file in the format of a grid's `[outcome]` table.
    #[arg(long)]
    pub truth: PathBuf,
    /// Standard deviation of the measurement noise.
    #[arg(long, default_value_t = 0.01)]
    pub noise: f64,
    /// Seed of the noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Metric name written in the CSV [default: the grid's, or "score"].
    #[arg(long)]
    pub metric: Option<String>,
    /// Output CSV.
    #[arg(long)]
    pub out: PathBuf,
    /// The grid file, when it moved since the plan was made.
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Results: a CSV with columns run_id, step, metric, value.
    pub results: PathBuf,
    /// The plan the runs came from (plan.csv; plan.json beside it).
    #[arg(long)]
    pub plan: PathBuf,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// The held-out metric to fit [default: the grid's `[outcome]` metric, or "score"].
    #[arg(long)]
    pub metric: Option<String>,
    /// Skip bad rows (counted and reported) instead of failing.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// Accept a training signal (reward, loss) as the target.
    #[arg(long)]
    pub allow_train_metric: bool,
    /// Ignore checkpoints before this step in the curve fits (ScaleRL skips early compute).
    #[arg(long, default_value_t = 0)]
    pub warmup_steps: u64,
    /// Bootstrap replicates.
    #[arg(long, default_value_t = 200)]
    pub bootstrap: usize,
    /// Seed of the bootstraps [default: the grid's].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Prior parameters to calibrate, comma-separated [default: those the pilots identify].
    #[arg(long)]
    pub free: Option<String>,
    /// The grid file, when it moved since the plan was made.
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Replace another grid's calibration in the output folder.
    #[arg(long)]
    pub force: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `fit-curve`.
#[derive(Debug, Args)]
pub struct FitCurveArgs {
    /// CSV with a header and two columns: compute, score.
    pub data: PathBuf,
    /// R0, the score at zero compute (fixed).
    #[arg(long)]
    pub base_score: f64,
    /// Fit this many times and report the mean time of one fit (for benchmarks).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub repeat: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// Output folder [default: results/GRID_NAME].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: one per core]. Outputs do not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Evaluate only shard I of N (0-based I), a contiguous slice of cell ids.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Refuse grids with more cells than this.
    #[arg(long, default_value_t = 20_000_000)]
    pub max_cells: u64,
    /// Replace results of a different grid in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
    /// Predict with a calibration written by `rlfrontier fit` (calibration.json).
    #[arg(long)]
    pub calibration: Option<PathBuf>,
    /// Rows of cells.csv: all, feasible, frontier or none [default: all up to 2,000,000 cells].
    #[arg(long)]
    pub cells: Option<String>,
}

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard output folders (from `sweep --shard I/N`), every I once.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace results of a different grid in the output folder.
    #[arg(long)]
    pub force: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Which part of the catalog to list.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CatalogPart {
    /// Model architectures.
    Models,
    /// GPU profiles and prices.
    Gpus,
    /// Reward mechanisms and the reward models available.
    Rewards,
}

/// Arguments of `catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// What to list [default: all three].
    pub part: Option<CatalogPart>,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Forward-only or training pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PassKind {
    /// Forward and backward (an update pass).
    Train,
    /// Forward only (log-prob or reward pass).
    Forward,
}

/// FLOPs counting convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Convention {
    /// rlfrontier's: N without the embedding lookup, LoRA-aware.
    Rlfrontier,
    /// veRL's flops_counter.py: embedding and LM head both counted, no biases, LoRA ignored.
    Verl,
}

/// Arguments of `flops`.
#[derive(Debug, Args)]
pub struct FlopsArgs {
    /// Catalog model id.
    #[arg(long)]
    pub model: String,
    /// Sequence lengths of the batch, comma-separated (prompt + response tokens each).
    #[arg(long, value_delimiter = ',', required = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub seqlens: Vec<u64>,
    /// Training (forward + backward) or forward-only pass.
    #[arg(long = "pass", value_enum, default_value_t = PassKind::Train)]
    pub pass_kind: PassKind,
    /// `full` or `lora:RANK`.
    #[arg(long, default_value = "full")]
    pub finetune: String,
    /// Counting convention.
    #[arg(long, value_enum, default_value_t = Convention::Rlfrontier)]
    pub convention: Convention,
    /// Seconds the pass took: prints achieved TFLOP/s (and MFU with --gpu).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// GPU id, for MFU.
    #[arg(long)]
    pub gpu: Option<String>,
    /// GPUs that shared the pass, for MFU.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// Arguments of `cost`: the levers of one run.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("length").args(["steps", "budget"])))]
pub struct CostArgs {
    /// Policy model id.
    #[arg(long)]
    pub model: String,
    /// `full` or `lora:RANK`.
    #[arg(long, default_value = "full")]
    pub finetune: String,
    /// `rule`, `orm:MODEL`, `prm:MODEL` or `judge:MODEL`.
    #[arg(long, default_value = "rule")]
    pub reward: String,
    /// `grpo`, `ppo` (RL; need --steps or --budget), `sft`, `rm` or `dpo` (supervised; need
    /// --examples or --pairs).
    #[arg(long = "algo", alias = "algorithm", default_value = "grpo")]
    pub algorithm: String,
    /// SFT: demonstrations.
    #[arg(long)]
    pub examples: Option<f64>,
    /// SFT: tokens per demonstration (prompt + answer).
    #[arg(long, default_value_t = 300.0)]
    pub tokens_per_example: f64,
    /// RM and DPO: preference pairs.
    #[arg(long)]
    pub pairs: Option<f64>,
    /// RM and DPO: tokens per sequence of a pair (prompt + one response).
    #[arg(long, default_value_t = 200.0)]
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
    /// Expected gain in points of the benchmark [default: the outcome prior's prediction].
    #[arg(long)]
    pub gain: Option<f64>,
    /// Own cluster: all-in cost of one of your GPUs per hour.
    #[arg(long)]
    pub own_gpu_usd_per_hour: Option<f64>,
    /// Own cluster: purchase price of one GPU (with its share of the server and network).
    #[arg(long)]
    pub gpu_capex_usd: Option<f64>,
    /// Own cluster: years over which the purchase is amortised.
    #[arg(long, default_value_t = 4.0)]
    pub amortization_years: f64,
    /// Own cluster: share of hours the GPUs do useful work.
    #[arg(long, default_value_t = 0.7)]
    pub utilization: f64,
    /// Own cluster: power, hosting and operations per GPU-hour.
    #[arg(long, default_value_t = 0.35)]
    pub opex_usd_per_gpu_hour: f64,
    /// GPU id.
    #[arg(long, default_value = "h100-sxm")]
    pub gpu: String,
    /// GPUs in the cluster.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub gpus: u64,
    /// Price per GPU-hour [default: the catalog's].
    #[arg(long)]
    pub usd_per_gpu_hour: Option<f64>,
    /// `colocated` or `async`.
    #[arg(long, default_value = "colocated")]
    pub schedule: String,
    /// Prompts per step, B.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub prompts_per_step: u64,
    /// Responses per prompt, G.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub group_size: u64,
    /// Mean prompt tokens.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub prompt_tokens: u64,
    /// Response cap, tokens.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_response_len: u64,
    /// Mean response tokens the policy would write uncapped.
    #[arg(long, default_value_t = 900.0)]
    pub mean_response_tokens: f64,
    /// Coefficient of variation of response lengths (lognormal).
    #[arg(long, default_value_t = 0.6)]
    pub response_length_cv: f64,
    /// Mean per-prompt pass rate of the base policy.
    #[arg(long, default_value_t = 0.35)]
    pub pass_rate_mean: f64,
    /// Concentration of the Beta pass-rate profile.
    #[arg(long, default_value_t = 2.0)]
    pub pass_rate_concentration: f64,
    /// Update epochs per rollout batch.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub update_epochs: u64,
    /// Run a reference-model pass every step (KL term).
    #[arg(long, overrides_with = "no_kl_reference")]
    pub kl_reference: bool,
    /// No reference-model pass.
    #[arg(long)]
    pub no_kl_reference: bool,
    /// KL coefficient (a reference pass with coefficient 0 is reported as waste).
    #[arg(long, default_value_t = 0.001)]
    pub kl_coef: f64,
    /// Prefill each prompt once per group.
    #[arg(long, overrides_with = "no_prefix_cache")]
    pub prefix_cache: bool,
    /// Prefill each prompt G times.
    #[arg(long)]
    pub no_prefix_cache: bool,
    /// DAPO-style dynamic sampling.
    #[arg(long)]
    pub dynamic_sampling: bool,
    /// Fixed seconds per step for weight sync and bookkeeping.
    #[arg(long, default_value_t = 5.0)]
    pub step_overhead_seconds: f64,
    /// Run this many iterations.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// Spend this budget, as "2000 usd", "500 gpu-h" or "1e18 flops".
    #[arg(long)]
    pub budget: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// A catalog file merged over the embedded one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
}

/// A flag set to true on Ctrl-C (SIGINT); long commands poll it and clean up.
pub fn install_interrupt_handler() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&flag);
    // If a handler cannot be installed (already installed in tests), Ctrl-C keeps its default.
    let _ = ctrlc::set_handler(move || handler_flag.store(true, Ordering::SeqCst));
    flag
}

/// Runs a parsed command line, printing to stdout.
pub fn run(cli: Cli, interrupted: &AtomicBool) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Sweep(args) => commands::sweep::run(&args, interrupted, &mut out),
        Command::Check(args) => commands::check::run(&args, &mut out),
        Command::Cost(args) => commands::cost::run(&args, &mut out),
        Command::Flops(args) => commands::flops::run(&args, &mut out),
        Command::Catalog(args) => commands::catalog::run(&args, &mut out),
        Command::Plan(args) => commands::plan::run(&args, &mut out),
        Command::Simulate(args) => commands::simulate::run(&args, &mut out),
        Command::Fit(args) => commands::fit::run(&args, &mut out),
        Command::FitCurve(args) => commands::fit::fit_curve(&args, &mut out),
        Command::Compare(args) => commands::compare::run(&args, &mut out),
        Command::Merge(args) => commands::sweep::merge(&args, &mut out),
        Command::Front(args) => commands::front::run(&args, &mut out),
        Command::CalibrateHw(args) => commands::calibrate_hw::run(&args, &mut out),
    }
}
