//! `rlfrontier cost`: one run's ledger per phase and bucket, the waste with the lever that
//! removes each line, the cost per point of improvement, where to run it (rented, owned, as a
//! service), and a one-line verdict. `--algo sft|rm|dpo|ppo|grpo` prices any stage.

use std::io::Write;

use serde_json::json;

use crate::catalog::{Catalog, ModelSpec};
use crate::cli::CostArgs;
use crate::error::{Error, Result};
use crate::format::{Table, flops, money, percent, thousands};
use crate::ledger::supervised::{Stage, SupervisedRun, evaluate_supervised};
use crate::ledger::{Bucket, Ledger, Phase, RunConfig, evaluate};
use crate::outcome::{CellSignal, OutcomeParams, predict};
use crate::spec::{
    Algorithm, Budget, Finetune, Hardware, OldLogprob, Reward, RewardKind, RunSettings, Schedule,
    Stop, Task,
};

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

/// Which stage is priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// GRPO.
    Grpo,
    /// PPO with a critic.
    Ppo,
    /// Supervised fine-tuning.
    Sft,
    /// Reward-model training.
    Rm,
    /// DPO.
    Dpo,
}

impl Algo {
    fn parse(text: &str) -> Result<Self> {
        Ok(match text {
            "grpo" => Algo::Grpo,
            "ppo" => Algo::Ppo,
            "sft" => Algo::Sft,
            "rm" => Algo::Rm,
            "dpo" => Algo::Dpo,
            other => {
                return Err(Error::in_flag(
                    "--algo",
                    format!(
                        "`{other}` is not a stage; {}",
                        crate::error::suggestion(other, ["grpo", "ppo", "sft", "rm", "dpo"])
                    ),
                ));
            }
        })
    }

    fn is_rl(self) -> bool {
        matches!(self, Algo::Grpo | Algo::Ppo)
    }

    /// Upper-case name.
    pub fn label(self) -> &'static str {
        match self {
            Algo::Grpo => "GRPO",
            Algo::Ppo => "PPO",
            Algo::Sft => "SFT",
            Algo::Rm => "Reward-model training",
            Algo::Dpo => "DPO",
        }
    }
}

/// A reward model of the policy's shape: the backbone without the LM head and a scalar head.
pub fn reward_model_like(policy: &ModelSpec) -> ModelSpec {
    let mut rm = policy.clone();
    rm.id = format!("{}-rm", policy.id);
    rm.name = format!("{} (reward model)", policy.name);
    rm.lm_head = false;
    rm.score_head_params = policy.hidden + 1;
    rm.published_params = rm.total_params();
    rm.published_params_tolerance = 0;
    rm
}

/// Everything `cost` prices, validated from flags.
#[derive(Clone)]
pub struct CostInputs {
    /// The stage.
    pub algo: Algo,
    /// Policy.
    pub policy: ModelSpec,
    /// Reward (RL), or the reward model trained (RM).
    pub reward: Reward,
    /// Fine-tuning mode.
    pub finetune: Finetune,
    /// Cluster.
    pub hardware: Hardware,
    /// Task.
    pub task: Task,
    /// Settings.
    pub run: RunSettings,
    /// Budget or steps (RL).
    pub stop: Stop,
    /// The catalog (for services).
    pub catalog: Catalog,
}

/// Validates the flags into priced inputs.
pub fn inputs(args: &CostArgs) -> Result<CostInputs> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let algo = Algo::parse(&args.algorithm)?;
    let policy = catalog
        .model(&args.model)
        .map_err(|m| Error::in_flag("--model", m))?
        .clone();
    if !policy.lm_head {
        return Err(Error::in_flag(
            "--model",
            format!("`{}` is a reward model and cannot be the policy", policy.id),
        ));
    }
    let finetune = Finetune::parse(&args.finetune).map_err(|m| Error::in_flag("--finetune", m))?;
    let reward = match algo {
        Algo::Rm => {
            let model = match &args.rm_model {
                Some(id) => catalog
                    .model(id)
                    .map_err(|m| Error::in_flag("--rm-model", m))?
                    .clone(),
                None => reward_model_like(&policy),
            };
            Reward {
                kind: RewardKind::Orm,
                model: Some(model),
            }
        }
        _ => Reward::parse(&args.reward, &catalog).map_err(|m| Error::in_flag("--reward", m))?,
    };
    if algo == Algo::Grpo && args.group_size < 2 {
        return Err(Error::in_flag(
            "--group-size",
            "GRPO needs at least 2 responses per prompt to compute group-relative advantages",
        ));
    }
    let gpu = catalog
        .gpu(&args.gpu)
        .map_err(|m| Error::in_flag("--gpu", m))?
        .clone();
    let usd_per_gpu_hour = match args.usd_per_gpu_hour {
        Some(x) => positive("--usd-per-gpu-hour", x)?,
        None => gpu.usd_per_gpu_hour,
    };
    let schedule = match args.schedule.as_str() {
        "colocated" => Schedule::Colocated,
        "async" => Schedule::Async,
        other => {
            return Err(Error::in_flag(
                "--schedule",
                format!(
                    "`{other}` is not a schedule; {}",
                    crate::error::suggestion(other, ["colocated", "async"])
                ),
            ));
        }
    };
    if schedule == Schedule::Async && args.gpus < 2 {
        return Err(Error::in_flag(
            "--gpus",
            "the async schedule needs at least 2 GPUs",
        ));
    }
    let pass_rate_mean = args.pass_rate_mean;
    if !(pass_rate_mean > 0.0 && pass_rate_mean < 1.0) {
        return Err(Error::in_flag(
            "--pass-rate-mean",
            format!("{pass_rate_mean} must lie strictly between 0 and 1"),
        ));
    }
    let task = Task {
        prompt_tokens: args.prompt_tokens as f64,
        mean_response_tokens: positive("--mean-response-tokens", args.mean_response_tokens)?,
        response_length_cv: positive("--response-length-cv", args.response_length_cv)?,
        pass_rate_mean,
        pass_rate_concentration: positive(
            "--pass-rate-concentration",
            args.pass_rate_concentration,
        )?,
    };
    if !(args.step_overhead_seconds.is_finite() && args.step_overhead_seconds >= 0.0) {
        return Err(Error::in_flag(
            "--step-overhead-seconds",
            "must be a finite number of seconds, 0 or more",
        ));
    }
    if !(args.kl_coef.is_finite() && args.kl_coef >= 0.0) {
        return Err(Error::in_flag(
            "--kl-coef",
            "must be a finite number, 0 or more",
        ));
    }
    let run = RunSettings {
        algorithm: if algo == Algo::Ppo {
            Algorithm::Ppo
        } else {
            Algorithm::Grpo
        },
        kl_reference: !args.no_kl_reference,
        kl_coef: args.kl_coef,
        prefix_cache: !args.no_prefix_cache,
        dynamic_sampling: args.dynamic_sampling,
        old_logprob: OldLogprob::Auto,
        gradient_checkpointing: true,
        step_overhead_seconds: args.step_overhead_seconds,
        max_tokens_per_gpu: 16384.0,
        judge_rubric_tokens: 512.0,
        judge_verdict_tokens: 64.0,
        critic: None,
    };
    let hardware = Hardware {
        gpu,
        gpus: args.gpus,
        usd_per_gpu_hour,
        schedule,
        async_rollout_fraction: 0.5,
        rollout_gpu_memory_utilization: 0.6,
        max_num_seqs: 256,
        usable_memory_fraction: 0.9,
    };
    let stop = match (&args.steps, &args.budget, algo.is_rl()) {
        (Some(n), _, _) => Stop::Iterations(*n),
        (None, Some(text), _) => {
            Stop::Budget(Budget::parse(text).map_err(|m| Error::in_flag("--budget", m))?)
        }
        (None, None, true) => {
            return Err(Error::in_flag(
                "--steps",
                "give --steps N or --budget \"2000 usd\" for an RL run",
            ));
        }
        (None, None, false) => Stop::Iterations(args.epochs),
    };
    match algo {
        Algo::Sft if args.examples.is_none() => {
            return Err(Error::in_flag(
                "--examples",
                "SFT needs --examples N (and --tokens-per-example)",
            ));
        }
        Algo::Rm | Algo::Dpo if args.pairs.is_none() => {
            return Err(Error::in_flag(
                "--pairs",
                "RM and DPO need --pairs N (and --tokens-per-pair)",
            ));
        }
        _ => {}
    }
    for (flag, value) in [
        ("--examples", args.examples),
        ("--pairs", args.pairs),
        ("--gain", args.gain),
    ] {
        if let Some(x) = value {
            positive(flag, x)?;
        }
    }
    positive("--tokens-per-example", args.tokens_per_example)?;
    positive("--tokens-per-pair", args.tokens_per_pair)?;
    Ok(CostInputs {
        algo,
        policy,
        reward,
        finetune,
        hardware,
        task,
        run,
        stop,
        catalog,
    })
}

impl CostInputs {
    /// Whether the stage is RL (GRPO or PPO).
    pub fn algo_is_rl(&self) -> bool {
        self.algo.is_rl()
    }
}

/// The RL run configuration of the flags.
pub fn rl_config<'a>(inputs: &'a CostInputs, args: &CostArgs) -> RunConfig<'a> {
    RunConfig {
        policy: &inputs.policy,
        finetune: inputs.finetune,
        reward: &inputs.reward,
        group_size: args.group_size,
        max_response_len: args.max_response_len,
        update_epochs: args.update_epochs,
        prompts_per_step: args.prompts_per_step,
        stop: inputs.stop,
        hardware: &inputs.hardware,
        task: &inputs.task,
        run: &inputs.run,
    }
}

/// Prices the stage of the flags.
pub fn ledger_of(inputs: &CostInputs, args: &CostArgs) -> Ledger {
    let supervised = |stage: Stage, model: &ModelSpec, examples: f64, tokens: f64| {
        evaluate_supervised(&SupervisedRun {
            stage,
            model,
            finetune: inputs.finetune,
            examples,
            tokens_per_sequence: tokens,
            epochs: args.epochs,
            hardware: &inputs.hardware,
            run: &inputs.run,
        })
    };
    match inputs.algo {
        Algo::Grpo | Algo::Ppo => evaluate(&rl_config(inputs, args)),
        Algo::Sft => supervised(
            Stage::Sft,
            &inputs.policy,
            args.examples.unwrap_or(0.0),
            args.tokens_per_example,
        ),
        Algo::Rm => supervised(
            Stage::RewardModel,
            inputs.reward.model.as_ref().expect("RM set"),
            args.pairs.unwrap_or(0.0),
            args.tokens_per_pair,
        ),
        Algo::Dpo => supervised(
            Stage::Dpo {
                precomputed_reference: args.precomputed_reference,
            },
            &inputs.policy,
            args.pairs.unwrap_or(0.0),
            args.tokens_per_pair,
        ),
    }
}

/// A waste line: what, how much, and the lever that removes it.
pub struct WasteLine {
    /// What is wasted.
    pub name: &'static str,
    /// Dollars.
    pub usd: f64,
    /// How it was estimated.
    pub detail: String,
    /// What removes it.
    pub lever: &'static str,
}

/// The waste lines of an RL ledger (empty for supervised stages).
pub fn waste_lines(ledger: &Ledger, inputs: &CostInputs) -> Vec<WasteLine> {
    if !inputs.algo.is_rl() {
        return Vec::new();
    }
    let t = &ledger.tokens;
    let w = &ledger.waste;
    vec![
        WasteLine {
            name: "zero-signal groups",
            usd: w.zero_signal_usd,
            detail: format!(
                "{} of groups have all G answers agree",
                percent(t.zero_signal_rate)
            ),
            lever: "raise G, filter prompts whose pass rate is 0 or 1, or use dynamic sampling",
        },
        WasteLine {
            name: "dynamic-sampling over-sampling",
            usd: w.oversampling_usd,
            detail: format!(
                "{} of generated groups are discarded",
                if inputs.run.dynamic_sampling {
                    percent(t.zero_signal_rate)
                } else {
                    "none".to_string()
                }
            ),
            lever: "filter prompts by pass rate before training so fewer groups are discarded",
        },
        WasteLine {
            name: "truncated responses",
            usd: w.truncated_usd,
            detail: format!(
                "{} of responses hit the cap ({} of generated tokens)",
                percent(t.truncation_rate),
                percent(t.truncated_token_share)
            ),
            lever: "raise max_response_len, or penalise length so fewer responses reach it",
        },
        WasteLine {
            name: "straggler idle time",
            usd: w.straggler_idle_usd,
            detail: format!(
                "{} GPU-hours waiting for the longest response ({} tokens)",
                money(w.straggler_idle_gpu_hours),
                thousands(t.straggler_response_tokens)
            ),
            lever: "async schedule (generation and training overlap), or a lower cap",
        },
        WasteLine {
            name: "reference passes without KL",
            usd: w.reference_without_kl_usd,
            detail: if w.reference_without_kl_usd > 0.0 {
                "KL coefficient is 0 but the reference runs".to_string()
            } else {
                "none".to_string()
            },
            lever: "drop the reference model (use_kl_loss=False / beta=0) when the KL coefficient is 0",
        },
        WasteLine {
            name: "prefill without prefix caching",
            usd: w.uncached_prefill_usd,
            detail: if inputs.run.prefix_cache {
                "none".to_string()
            } else {
                format!("each prompt prefilled {} times", ledger.tokens.group_size)
            },
            lever: "enable prefix caching so a group's prompt is prefilled once",
        },
    ]
}

/// Points of improvement the run buys: `--gain`, or the outcome prior's prediction (RL only).
pub fn expected_gain(
    ledger: &Ledger,
    inputs: &CostInputs,
    args: &CostArgs,
) -> Option<(f64, &'static str)> {
    if let Some(g) = args.gain {
        return Some((g, "given by --gain"));
    }
    if !inputs.algo.is_rl() || !ledger.feasible() {
        return None;
    }
    let config = rl_config(inputs, args);
    let p = predict(&OutcomeParams::default(), &CellSignal::of(&config, ledger));
    Some((
        100.0 * (p.score - p.base_score),
        "predicted by the outcome prior (uncalibrated)",
    ))
}

/// One way to pay for the run.
pub struct PaymentOption {
    /// Where.
    pub name: String,
    /// Dollars.
    pub usd: Option<f64>,
    /// How it is computed, or why it does not apply.
    pub basis: String,
}

/// Where to run it: rented, owned, and the catalog's services.
pub fn buy_or_build(
    ledger: &Ledger,
    inputs: &CostInputs,
    args: &CostArgs,
) -> (Vec<PaymentOption>, Option<String>) {
    let gpu_hours = ledger.total_gpu_hours();
    let rented = ledger.total_usd();
    let mut out = vec![PaymentOption {
        name: format!("rented {} on demand", inputs.hardware.gpu.id),
        usd: Some(rented),
        basis: format!(
            "{} GPU-hours x ${}/GPU-hour ({}, {})",
            money(gpu_hours),
            money(inputs.hardware.usd_per_gpu_hour),
            inputs.hardware.gpu.price_provider,
            inputs.hardware.gpu.price_date
        ),
    }];
    let mut break_even = None;
    let own_rate = match (args.own_gpu_usd_per_hour, args.gpu_capex_usd) {
        (Some(r), _) => Some((r, format!("your ${}/GPU-hour", money(r)))),
        (None, Some(capex)) => {
            let useful_hours = args.amortization_years * 8760.0 * args.utilization;
            let rate = capex / useful_hours + args.opex_usd_per_gpu_hour;
            let margin = inputs.hardware.usd_per_gpu_hour - args.opex_usd_per_gpu_hour;
            if margin > 0.0 {
                let utilization = capex / (args.amortization_years * 8760.0 * margin);
                break_even = Some(format!(
                    "owning beats renting at ${}/GPU-hour once the GPUs are busy more than {} of the time over {} years (capex ${} per GPU, opex ${}/GPU-hour)",
                    money(inputs.hardware.usd_per_gpu_hour),
                    percent(utilization),
                    args.amortization_years,
                    thousands(capex),
                    money(args.opex_usd_per_gpu_hour)
                ));
            }
            Some((
                rate,
                format!(
                    "${} capex over {} years at {} utilisation + ${} opex = ${}/GPU-hour",
                    thousands(capex),
                    args.amortization_years,
                    percent(args.utilization),
                    money(args.opex_usd_per_gpu_hour),
                    money(rate)
                ),
            ))
        }
        _ => None,
    };
    if let Some((rate, basis)) = own_rate {
        if args.own_gpu_usd_per_hour.is_some() {
            let margin = inputs.hardware.usd_per_gpu_hour - rate;
            break_even = Some(if margin > 0.0 {
                format!(
                    "your GPUs are {} cheaper per hour than renting",
                    percent(margin / inputs.hardware.usd_per_gpu_hour)
                )
            } else {
                format!(
                    "renting is {} cheaper per hour than your GPUs",
                    percent(-margin / rate)
                )
            });
        }
        out.push(PaymentOption {
            name: "own cluster".to_string(),
            usd: Some(gpu_hours * rate),
            basis,
        });
    }
    let t = &ledger.tokens;
    let iterations = ledger.iterations as f64;
    for s in &inputs.catalog.services {
        let same_model = s.model == inputs.policy.id;
        let (usd, basis) = match s.billing.as_str() {
            "per_million_tokens" if same_model => {
                let prefill = (t.prefill_tokens_per_step + t.forward_tokens_per_step) * iterations;
                let sample = t.generated_tokens_per_step * iterations;
                let train = t.train_tokens_per_step * iterations;
                let usd = (prefill * s.prefill_usd_per_million
                    + sample * s.sample_usd_per_million
                    + train * s.train_usd_per_million)
                    / 1e6;
                (
                    Some(usd),
                    format!(
                        "{}M prefill + {}M sampled + {}M trained tokens at ${}/${}/${} per million ({})",
                        thousands(prefill / 1e6),
                        thousands(sample / 1e6),
                        thousands(train / 1e6),
                        s.prefill_usd_per_million,
                        s.sample_usd_per_million,
                        s.train_usd_per_million,
                        s.date
                    ),
                )
            }
            "per_training_hour" => (
                Some(ledger.wall_hours() * s.usd_per_training_hour),
                format!(
                    "{} wall-clock hours (this cluster's, as a proxy) x ${}/hour; trains {}, not {} ({})",
                    money(ledger.wall_hours()),
                    s.usd_per_training_hour,
                    s.model,
                    inputs.policy.id,
                    s.date
                ),
            ),
            _ => (
                None,
                format!("does not offer {} (trains {})", inputs.policy.id, s.model),
            ),
        };
        out.push(PaymentOption {
            name: format!("{} ({})", s.provider, s.id),
            usd,
            basis,
        });
    }
    (out, break_even)
}

/// The one-line verdict: the generation share of dollars and the biggest waste.
pub fn verdict(ledger: &Ledger, inputs: &CostInputs) -> String {
    let total = ledger.total_usd();
    if !inputs.algo.is_rl() {
        return format!(
            "{}: all of its ${} is learning (no generation); the update pass is {} of the time",
            inputs.algo.label(),
            money(total),
            percent(ledger.usd_share(Bucket::Learning))
        );
    }
    let lines = waste_lines(ledger, inputs);
    let biggest = lines
        .iter()
        .max_by(|a, b| a.usd.total_cmp(&b.usd))
        .expect("waste lines");
    format!(
        "generation is {} of the dollars ({} of the FLOPs); the biggest waste is {} (${}, {} of the run): {}",
        percent(ledger.usd_share(Bucket::Search)),
        percent(ledger.flops_share(Bucket::Search)),
        biggest.name,
        money(biggest.usd),
        percent(if total > 0.0 {
            biggest.usd / total
        } else {
            0.0
        }),
        biggest.lever
    )
}

/// The JSON form.
pub fn to_json(ledger: &Ledger, inputs: &CostInputs, args: &CostArgs) -> serde_json::Value {
    let iterations = ledger.iterations as f64;
    let price = ledger.usd_per_gpu_hour;
    let buckets = |f: &dyn Fn(Bucket) -> f64, total: f64| json!({"search": f(Bucket::Search), "learning": f(Bucket::Learning), "feedback": f(Bucket::Feedback), "total": total});
    let phases: Vec<serde_json::Value> = Phase::ALL
        .iter()
        .map(|&p| {
            let c = ledger.phase(p);
            json!({
                "name": p.as_str(),
                "bucket": p.bucket().as_str(),
                "flops_per_step": c.flops,
                "seconds_per_step": c.seconds,
                "flops": c.flops * iterations,
                "seconds": c.seconds * iterations,
                "gpu_hours": c.gpu_seconds / 3600.0 * iterations,
                "usd": c.gpu_seconds / 3600.0 * iterations * price,
            })
        })
        .collect();
    let t = &ledger.tokens;
    let gain = expected_gain(ledger, inputs, args);
    let (options, break_even) = buy_or_build(ledger, inputs, args);
    json!({
        "config": {
            "algo": args.algorithm,
            "model": inputs.policy.id,
            "finetune": inputs.finetune.to_string(),
            "reward": inputs.reward.to_string(),
            "gpu": inputs.hardware.gpu.id,
            "gpus": inputs.hardware.gpus,
            "usd_per_gpu_hour": price,
            "schedule": args.schedule,
            "prompts_per_step": args.prompts_per_step,
            "group_size": args.group_size,
            "prompt_tokens": args.prompt_tokens,
            "max_response_len": args.max_response_len,
            "update_epochs": args.update_epochs,
            "kl_reference": inputs.run.kl_reference,
            "kl_coef": inputs.run.kl_coef,
            "prefix_cache": inputs.run.prefix_cache,
            "dynamic_sampling": inputs.run.dynamic_sampling,
        },
        "feasible": ledger.feasible(),
        "infeasible_reason": ledger.infeasible.map(|r| r.to_string()),
        "iterations": ledger.iterations,
        "step_seconds": ledger.step_seconds,
        "wall_hours": ledger.wall_hours(),
        "tokens": {
            "rollouts_per_step": t.rollouts_per_step,
            "generated_rollouts_per_step": t.generated_rollouts_per_step,
            "mean_response_tokens": t.mean_response_tokens,
            "generated_tokens_per_step": t.generated_tokens_per_step,
            "truncation_rate": t.truncation_rate,
            "zero_signal_rate": t.zero_signal_rate,
            "straggler_response_tokens": t.straggler_response_tokens,
        },
        "flops": buckets(&|b| ledger.flops(b), ledger.total_flops()),
        "gpu_hours": buckets(&|b| ledger.gpu_hours(b), ledger.total_gpu_hours()),
        "usd": buckets(&|b| ledger.usd(b), ledger.total_usd()),
        "flops_share": buckets(&|b| ledger.flops_share(b), 1.0),
        "usd_share": buckets(&|b| ledger.usd_share(b), 1.0),
        "phases": phases,
        "decode": {
            "tensor_parallel": ledger.decode.tensor_parallel,
            "replicas": ledger.decode.replicas,
            "sequences_in_flight": ledger.decode.sequences_in_flight,
        },
        "training_memory_gb_per_gpu": ledger.training_memory_gb_per_gpu,
        "waste": {
            "zero_signal_usd": ledger.waste.zero_signal_usd,
            "oversampling_usd": ledger.waste.oversampling_usd,
            "truncated_usd": ledger.waste.truncated_usd,
            "straggler_idle_gpu_hours": ledger.waste.straggler_idle_gpu_hours,
            "straggler_idle_usd": ledger.waste.straggler_idle_usd,
            "reference_without_kl_usd": ledger.waste.reference_without_kl_usd,
            "uncached_prefill_usd": ledger.waste.uncached_prefill_usd,
        },
        "cost_per_point": gain.filter(|(g, _)| *g > 0.0).map(|(g, basis)| json!({
            "points": g,
            "basis": basis,
            "usd_per_point": ledger.total_usd() / g,
            "gpu_hours_per_point": ledger.total_gpu_hours() / g,
        })),
        "where_to_run": options.iter().map(|o| json!({"option": o.name, "usd": o.usd, "basis": o.basis})).collect::<Vec<_>>(),
        "break_even": break_even,
        "verdict": verdict(ledger, inputs),
    })
}

/// Renders the human report.
pub fn render(ledger: &Ledger, inputs: &CostInputs, args: &CostArgs) -> String {
    let t = &ledger.tokens;
    let h = &inputs.hardware;
    let iterations = ledger.iterations as f64;
    let mut text = match inputs.algo {
        Algo::Grpo | Algo::Ppo => {
            let mut s = format!(
                "{} run: {} ({}), {} reward, {} x {} at ${}/GPU-hour, {}\n",
                inputs.algo.label(),
                inputs.policy.id,
                inputs.finetune,
                inputs.reward,
                h.gpus,
                h.gpu.id,
                money(h.usd_per_gpu_hour),
                args.schedule
            );
            s.push_str(&format!(
                "{} prompts x {} = {} rollouts per step; responses average {} of {} tokens ({} truncated); {} update epoch(s)\n",
                thousands(args.prompts_per_step as f64),
                args.group_size,
                thousands(t.rollouts_per_step),
                thousands(t.mean_response_tokens),
                thousands(args.max_response_len as f64),
                percent(t.truncation_rate),
                args.update_epochs
            ));
            s.push_str(&format!(
                "{} iterations of {} s: {} wall-clock hours, {} GPU-hours, ${}\n",
                thousands(iterations),
                money(ledger.step_seconds),
                money(ledger.wall_hours()),
                thousands(ledger.total_gpu_hours()),
                money(ledger.total_usd())
            ));
            s
        }
        _ => format!(
            "{}: {} ({}), {} epoch(s) on {} x {} at ${}/GPU-hour: {} wall-clock hours, {} GPU-hours, ${}\n",
            inputs.algo.label(),
            if inputs.algo == Algo::Rm {
                inputs
                    .reward
                    .model
                    .as_ref()
                    .map(|m| m.id.clone())
                    .unwrap_or_default()
            } else {
                inputs.policy.id.clone()
            },
            if inputs.algo == Algo::Rm {
                "full".to_string()
            } else {
                inputs.finetune.to_string()
            },
            args.epochs,
            h.gpus,
            h.gpu.id,
            money(h.usd_per_gpu_hour),
            money(ledger.wall_hours()),
            money(ledger.total_gpu_hours()),
            money(ledger.total_usd())
        ),
    };
    if let Some(reason) = ledger.infeasible {
        text.push_str(&format!("INFEASIBLE: {reason}\n"));
    }
    text.push('\n');
    let total_gpu_seconds: f64 = ledger.phases.iter().map(|p| p.gpu_seconds).sum();
    let mut phases = Table::new([
        "phase",
        "bucket",
        "FLOPs/step",
        "seconds/step",
        "GPU-hours",
        "USD",
        "share of USD",
    ]);
    for &p in &Phase::ALL {
        let c = ledger.phase(p);
        if c.flops == 0.0 && c.seconds == 0.0 {
            continue;
        }
        phases.row([
            p.as_str().to_string(),
            p.bucket().as_str().to_string(),
            flops(c.flops),
            money(c.seconds),
            money(c.gpu_seconds / 3600.0 * iterations),
            money(c.gpu_seconds / 3600.0 * iterations * ledger.usd_per_gpu_hour),
            percent(if total_gpu_seconds > 0.0 {
                c.gpu_seconds / total_gpu_seconds
            } else {
                0.0
            }),
        ]);
    }
    text.push_str(&phases.render());
    text.push('\n');
    let mut buckets = Table::new([
        "bucket",
        "FLOPs",
        "share of FLOPs",
        "GPU-hours",
        "USD",
        "share of USD",
    ]);
    for b in Bucket::ALL {
        buckets.row([
            b.as_str().to_string(),
            flops(ledger.flops(b)),
            percent(ledger.flops_share(b)),
            money(ledger.gpu_hours(b)),
            money(ledger.usd(b)),
            percent(ledger.usd_share(b)),
        ]);
    }
    buckets.row([
        "total".to_string(),
        flops(ledger.total_flops()),
        percent(1.0),
        money(ledger.total_gpu_hours()),
        money(ledger.total_usd()),
        percent(1.0),
    ]);
    text.push_str(&buckets.render());
    let total = ledger.total_usd();
    let lines = waste_lines(ledger, inputs);
    if !lines.is_empty() {
        text.push_str("\nwaste (categories overlap):\n");
        let mut waste = Table::new(["where", "USD", "share of run", "what", "lever"]);
        for line in lines {
            waste.row([
                line.name.to_string(),
                money(line.usd),
                percent(if total > 0.0 { line.usd / total } else { 0.0 }),
                line.detail,
                line.lever.to_string(),
            ]);
        }
        text.push_str(&waste.render());
    }
    if let Some((gain, basis)) = expected_gain(ledger, inputs, args) {
        text.push('\n');
        if gain > 0.0 {
            text.push_str(&format!(
                "cost per point: {} points of improvement ({basis}) -> ${} and {} GPU-hours per point\n",
                format_args!("{gain:.2}"),
                money(total / gain),
                money(ledger.total_gpu_hours() / gain)
            ));
        } else {
            text.push_str(&format!(
                "cost per point: no improvement expected ({basis})\n"
            ));
        }
    }
    let (options, break_even) = buy_or_build(ledger, inputs, args);
    text.push_str("\nwhere to run it:\n");
    let mut table = Table::new(["option", "USD", "basis"]);
    for o in options {
        table.row([
            o.name,
            o.usd.map(money).unwrap_or_else(|| "-".to_string()),
            o.basis,
        ]);
    }
    text.push_str(&table.render());
    if let Some(b) = break_even {
        text.push_str(&format!("break-even: {b}\n"));
    }
    text.push('\n');
    text.push_str(&verdict(ledger, inputs));
    text.push('\n');
    text
}

/// Prices the run and prints it (table or JSON).
pub fn run(args: &CostArgs, out: &mut dyn Write) -> Result<()> {
    let inputs = inputs(args)?;
    let ledger = ledger_of(&inputs, args);
    if args.json {
        let mut text =
            serde_json::to_string_pretty(&to_json(&ledger, &inputs, args)).expect("json");
        text.push('\n');
        super::emit(out, &text)
    } else {
        super::emit(out, &render(&ledger, &inputs, args))
    }
}
