//! `rlfrontier cost`: one run's ledger per phase and bucket, the waste with the lever that
//! removes each line, the cost per point of improvement, where to run it, and a verdict.
//!
//! The flags come in groups (the RL levers first, then the cluster, the task, the supervised
//! stages and ownership); every default is read from `rlfrontier::config`, the same source grids
//! and `compare` use.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use rlfrontier::catalog::Catalog;
use rlfrontier::config::{
    Algorithm, Finetune, Hardware, Levers, Ownership, Reward, RewardKind, RunSettings, Schedule,
    Stop, Task,
};
use rlfrontier::costing::{
    PricedStage, RunRequest, SupervisedData, price, render, reward_model_like,
};
use rlfrontier::error::{Error, Result};
use rlfrontier::ledger::lengths::LoggedLengths;

use super::{CatalogFlag, emit, json_text};

mod flags;
mod import;
mod schedule;
mod sources;

pub use flags::{AgentFlags, ClusterFlags, LeverFlags, OwnershipFlags, SupervisedFlags, TaskFlags};
use import::{imported_json, imported_text, locate_in_import};
use rlfrontier::config::import::ConfigFormat;

/// Arguments of `cost`: the levers of one run.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("length").args(["steps", "budget"])))]
pub struct CostArgs {
    /// Policy model id (see `rlfrontier catalog models`); with --from-verl or --from-trl, the
    /// file's model unless given.
    #[arg(long, required_unless_present_any = ["from_verl", "from_trl", "grid"])]
    pub model: Option<String>,
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
    /// Price one cell of this grid (a path or a bundled grid's name) with the grid's own
    /// settings: the row `sweep` writes for it in cells.csv. Needs --cell; no other run flag.
    #[arg(long, value_name = "GRID", requires = "cell", conflicts_with_all = ["from_verl", "from_trl"])]
    pub grid: Option<PathBuf>,
    /// With --grid: the cell's id (the `cell` column of cells.csv).
    #[arg(long, value_name = "ID", requires = "grid")]
    pub cell: Option<u64>,
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
    /// The ids of the arguments typed on the command line (not defaults), as clap reports
    /// them: what an imported file may not override. Filled by the app after parsing.
    #[arg(skip)]
    pub typed: Vec<String>,
}

/// `x` when it is positive and finite, else an error naming the flag.
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
            .resolve_model(self.model.as_deref().ok_or_else(|| {
                Error::in_flag("--model", "the file names no policy model: give --model ID")
            })?)
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
        // (Ranges checked once, in `check_settings`.)
        if let Some(x) = c.usd_per_gpu_hour {
            hardware.usd_per_gpu_hour = x;
        }
        if let Some(schedule) = c.schedule {
            hardware.schedule = schedule;
        }
        if let Some(x) = c.rollout_gpu_memory_utilization {
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
        let cv = t.response_length_cv;
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
            prompt_tokens: prompt_tokens(t)? as f64,
            max_prompt_tokens: t.max_prompt_tokens.map(|cap| cap as f64),
            mean_response_tokens: mean,
            mean_response_tokens_end: end,
            response_length_cv: cv,
            pass_rate_mean: t.pass_rate_mean,
            start: t.start,
            dataset_prompts: t.dataset_prompts,
            pass_rate_concentration: t.pass_rate_concentration,
        })
    }

    /// The run settings, validated.
    fn run_settings(&self, catalog: &Catalog) -> Result<RunSettings> {
        let l = &self.levers;
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
            startup_seconds: l.startup_seconds,
            checkpoint_every_steps: l.checkpoint_every_steps,
            checkpoint_seconds: l.checkpoint_seconds,
            checkpoint_write_gb_per_second: l.checkpoint_write_gb_per_second,
            validation_every_steps: l.validation_every_steps,
            validation_prompts: l.validation_prompts,
            validation_samples_per_prompt: l.validation_samples_per_prompt,
            validation_before_training: !l.no_validation_before_training,
            restarts_per_gpu_day: l.restarts_per_gpu_day,
            generation_batch_prompts: l.generation_batch_prompts,
            dynamic_sampling_filter_rate: l.dynamic_sampling_filter_rate,
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
            // The segments' steps, summed by `request` (`--cap-schedule`).
            (None, None, true) if l.cap_schedule.is_some() => Stop::Iterations(0),
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

    /// Every setting the run description declares (`rlfrontier::config::setting`), checked
    /// against its range: the same check and message as in a grid, located at the flag.
    fn check_settings(&self) -> Result<()> {
        use rlfrontier::config::setting::{check_count, check_real};
        let (c, t, l, p) = (&self.cluster, &self.task, &self.levers, &self.training);
        let a = &self.agent;
        let flag = |name: &str| format!("--{}", name.replace('_', "-"));
        let counts = [
            ("gpus", Some(c.gpus)),
            ("max_num_seqs", c.max_num_seqs),
            ("rollout_tensor_parallel", c.rollout_tensor_parallel),
            ("prompt_tokens", t.prompt_tokens),
            ("max_prompt_tokens", t.max_prompt_tokens),
            ("checkpoint_every_steps", Some(l.checkpoint_every_steps)),
            ("validation_every_steps", Some(l.validation_every_steps)),
            ("validation_prompts", Some(l.validation_prompts)),
            (
                "validation_samples_per_prompt",
                Some(l.validation_samples_per_prompt),
            ),
            ("generation_batch_prompts", l.generation_batch_prompts),
            ("mini_batch_prompts", Some(l.mini_batch_prompts)),
            ("sequence_parallel", p.sequence_parallel),
            ("max_tokens_per_gpu", p.max_tokens_per_gpu),
            ("micro_batch_sequences", p.micro_batch_sequences),
            (
                "log_prob_micro_batch_sequences",
                p.log_prob_micro_batch_sequences,
            ),
            ("log_prob_max_tokens_per_gpu", p.log_prob_max_tokens_per_gpu),
        ];
        for (name, value) in counts {
            if let Some(n) = value {
                check_count(name, i64::try_from(n).unwrap_or(i64::MAX))
                    .map_err(|m| Error::in_flag(&flag(name), m))?;
            }
        }
        let numbers = [
            ("usd_per_gpu_hour", c.usd_per_gpu_hour),
            (
                "rollout_gpu_memory_utilization",
                c.rollout_gpu_memory_utilization,
            ),
            ("response_length_cv", Some(t.response_length_cv)),
            ("dataset_prompts", t.dataset_prompts),
            ("pass_rate_concentration", Some(t.pass_rate_concentration)),
            ("kl_coef", Some(l.kl_coef)),
            ("step_overhead_seconds", Some(l.step_overhead_seconds)),
            ("startup_seconds", l.startup_seconds),
            ("checkpoint_seconds", l.checkpoint_seconds),
            (
                "dynamic_sampling_filter_rate",
                l.dynamic_sampling_filter_rate,
            ),
            ("restarts_per_gpu_day", Some(l.restarts_per_gpu_day)),
            (
                "checkpoint_write_gb_per_second",
                Some(l.checkpoint_write_gb_per_second),
            ),
            ("turns", Some(a.turns)),
            ("observation_tokens", Some(a.observation_tokens)),
            ("turns_cv", Some(a.turns_cv)),
            ("tool_seconds", Some(a.tool_seconds)),
            ("tool_seconds_p99", Some(a.tool_seconds_p99)),
            ("tool_failure_rate", Some(a.tool_failure_rate)),
            ("sandbox_usd_per_hour", Some(a.sandbox_usd_per_hour)),
            ("reward_sandbox_seconds", Some(a.reward_sandbox_seconds)),
            ("judge_usd_per_million_input", a.judge_usd_per_million_input),
            (
                "judge_usd_per_million_output",
                a.judge_usd_per_million_output,
            ),
            ("judge_output_tokens", a.judge_output_tokens),
            ("judge_tokens_per_minute", a.judge_tokens_per_minute),
        ];
        for (name, value) in numbers {
            if let Some(x) = value {
                check_real(name, x).map_err(|m| Error::in_flag(&flag(name), m))?;
            }
        }
        Ok(())
    }

    /// Validates the flags into a priced request.
    pub fn request(&self) -> Result<RunRequest> {
        self.check_settings()?;
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
        let training_gpus = rlfrontier::ledger::training_gpus(&hardware);
        let models = std::iter::once(&policy).chain(run.critic.as_ref());
        if let Some(why) = rlfrontier::config::sequence_parallel_refusal(
            models,
            training_gpus,
            run.sequence_parallel,
        ) {
            return Err(Error::in_flag("--sequence-parallel", why));
        }
        if let Some(why) =
            rlfrontier::config::offload_per_step_refusal(&run, hardware.schedule, &hardware.engine)
        {
            return Err(Error::in_flag("--offload-per-step", why));
        }
        let (mut stop, supervised) = self.stop_and_data()?;
        let cap_schedule = self.cap_schedule(&task)?;
        let mut max_response_len = self.levers.max_response_len;
        if let Some(last) = cap_schedule.last() {
            // The run's largest cap, and with fixed segments their steps.
            max_response_len = last.max_response_len;
            if let Stop::Iterations(_) = stop {
                stop = Stop::Iterations(cap_schedule.iter().filter_map(|s| s.steps).sum());
            }
        }
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
                max_response_len,
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
            cap_schedule,
        })
    }
}

/// Prices the run and prints it (table or JSON).
pub fn run(given: &CostArgs, out: &mut dyn Write) -> Result<()> {
    if let (Some(grid), Some(cell)) = (&given.grid, given.cell) {
        return run_cell(given, grid, cell, out);
    }
    let (args, imported) = given.with_import(false)?;
    if let Some(import) = &imported
        && args.strict
        && let Some(key) = import.run.unknown.first()
    {
        let hint = match key.why.is_empty() {
            true => String::new(),
            false => format!(" ({})", key.why),
        };
        return Err(Error::in_file(
            &import.path,
            Some(key.line),
            &key.key,
            format!(
                "not a key of the framework's schema{hint}; --strict stops on it (without --strict it is listed and the framework's default is priced)"
            ),
        ));
    }
    let request = match args.request() {
        Ok(request) => request,
        Err(e) => {
            // The import summary first (what was read, from which line), then the one error.
            if let Some(import) = &imported {
                if !args.json {
                    emit(out, &imported_text(&args, import))?;
                }
                return Err(locate_in_import(e, &args, import));
            }
            return Err(e);
        }
    };
    rlfrontier::costing::schedule::check_budget(&request)
        .map_err(|e| Error::in_flag("--cap-schedule", e.0))?;
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
        if let Some(object) = value.as_object_mut() {
            if let Some(import) = &imported {
                object.insert("imported".into(), imported_json(&args, import));
            }
            object.insert(
                "sources".into(),
                sources::sources_json(&args, imported.as_ref()),
            );
        }
        emit(out, &json_text(&value))?;
    } else {
        if let Some(import) = &imported {
            emit(out, &imported_text(&args, import))?;
        }
        emit(
            out,
            &in_imported_words(&args, &render::text(&report, &request)),
        )?;
    }
    // The report is printed either way; the exit code and one line on stderr say it cannot run.
    match report.ledger.infeasible {
        Some(reason) => Err(rlfrontier::error::Error::Infeasible(in_imported_words(
            &args,
            &reason.to_string(),
        ))),
        None => Ok(()),
    }
}

/// `text` with the settings its advice names written as the imported file's keys (TRL's or
/// veRL's), when a file was imported; as it is otherwise (the flags' names).
fn in_imported_words(args: &CostArgs, text: &str) -> String {
    match args.import_source() {
        Some((_, format)) => format.in_its_words(text),
        None => text.to_string(),
    }
}

/// `cost --grid G --cell ID`: the cell priced with the grid's own settings.
fn run_cell(args: &CostArgs, grid: &Path, cell: u64, out: &mut dyn Write) -> Result<()> {
    const OWN: [&str; 4] = ["grid", "cell", "json", "paths"];
    if let Some(other) = args.typed.iter().find(|t| !OWN.contains(&t.as_str())) {
        return Err(Error::in_flag(
            &format!("--{}", other.replace('_', "-")),
            "--grid prices the cell with the grid's own settings; drop this flag, or change the grid",
        ));
    }
    let catalog = args.catalog.load()?;
    let spec = rlfrontier::spec::load(grid, &catalog)?;
    let request = rlfrontier::costing::cell::request_of_cell(&spec, cell, catalog)
        .map_err(|e| Error::in_flag("--cell", e.to_string()))?;
    let report = price(&request);
    if args.json {
        let mut value = render::json(&report, &request);
        if let Some(object) = value.as_object_mut() {
            // Every setting is the grid's: its file's value or a grid's default.
            object.insert(
                "sources".into(),
                serde_json::json!({ "grid": grid.display().to_string(), "cell": cell }),
            );
        }
        emit(out, &json_text(&value))?;
    } else {
        emit(
            out,
            &format!(
                "Cell {cell} of grid `{}` ({}):\n\n",
                spec.name,
                grid.display()
            ),
        )?;
        emit(out, &render::text(&report, &request))?;
    }
    match report.ledger.infeasible {
        Some(reason) => Err(Error::Infeasible(reason.to_string())),
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

/// The mean prompt in tokens: as given, or the default bounded by a shorter prompt cap (the
/// default is a placeholder, and an imported `data.max_prompt_length` bounds it). A mean given
/// above the cap is a contradiction.
fn prompt_tokens(t: &TaskFlags) -> Result<u64> {
    let default_prompt = Task::default().prompt_tokens as u64;
    match (t.prompt_tokens, t.max_prompt_tokens) {
        (Some(mean), Some(cap)) if cap < mean => Err(Error::in_flag(
            "--max-prompt-tokens",
            format!(
                "the prompt cap {cap} is below the mean prompt (--prompt-tokens {mean}); give a cap at least as long as the mean"
            ),
        )),
        (Some(mean), _) => Ok(mean),
        (None, Some(cap)) => Ok(default_prompt.min(cap)),
        (None, None) => Ok(default_prompt),
    }
}
