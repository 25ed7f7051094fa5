//! `rlfrontier cost`: one run's ledger per phase and bucket, the waste, and a one-line verdict.

use std::io::Write;

use serde_json::json;

use crate::cli::CostArgs;
use crate::error::{Error, Result};
use crate::format::{Table, flops, money, percent, thousands};
use crate::ledger::{Bucket, Ledger, Phase, RunConfig, evaluate};
use crate::spec::{
    Algorithm, Budget, Finetune, Hardware, OldLogprob, Reward, RunSettings, Schedule, Stop, Task,
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

/// Everything `cost` prices, validated from flags.
pub struct CostInputs {
    /// Policy.
    pub policy: crate::catalog::ModelSpec,
    /// Reward.
    pub reward: Reward,
    /// Fine-tuning mode.
    pub finetune: Finetune,
    /// Cluster.
    pub hardware: Hardware,
    /// Task.
    pub task: Task,
    /// Settings.
    pub run: RunSettings,
    /// Budget or steps.
    pub stop: Stop,
}

/// Validates the flags into priced inputs.
pub fn inputs(args: &CostArgs) -> Result<CostInputs> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
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
    let reward =
        Reward::parse(&args.reward, &catalog).map_err(|m| Error::in_flag("--reward", m))?;
    let algorithm = match args.algorithm.as_str() {
        "grpo" => Algorithm::Grpo,
        "ppo" => Algorithm::Ppo,
        other => {
            return Err(Error::in_flag(
                "--algorithm",
                format!(
                    "`{other}` is not supported here; {}",
                    crate::error::suggestion(other, ["grpo", "ppo"])
                ),
            ));
        }
    };
    if algorithm == Algorithm::Grpo && args.group_size < 2 {
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
    let run = RunSettings {
        algorithm,
        kl_reference: !args.no_kl_reference,
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
    let stop = match (&args.steps, &args.budget) {
        (Some(n), _) => Stop::Iterations(*n),
        (None, Some(text)) => {
            Stop::Budget(Budget::parse(text).map_err(|m| Error::in_flag("--budget", m))?)
        }
        (None, None) => {
            return Err(Error::in_flag(
                "--steps",
                "give --steps N or --budget \"2000 usd\"",
            ));
        }
    };
    Ok(CostInputs {
        policy,
        reward,
        finetune,
        hardware,
        task,
        run,
        stop,
    })
}

/// Prices the run of the flags.
pub fn ledger_of(inputs: &CostInputs, args: &CostArgs) -> Ledger {
    evaluate(&RunConfig {
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
    })
}

/// A waste line: what, how much, and the lever that removes it.
struct WasteLine {
    name: &'static str,
    usd: f64,
    detail: String,
    lever: &'static str,
}

fn waste_lines(ledger: &Ledger, inputs: &CostInputs) -> Vec<WasteLine> {
    let t = &ledger.tokens;
    vec![
        WasteLine {
            name: "zero-signal groups",
            usd: ledger.waste.zero_signal_usd,
            detail: format!(
                "{} of groups have all G answers agree",
                percent(t.zero_signal_rate)
            ),
            lever: if inputs.run.dynamic_sampling {
                "filter prompts by pass rate before training, or raise G"
            } else {
                "raise G, filter prompts whose pass rate is 0 or 1, or use dynamic sampling"
            },
        },
        WasteLine {
            name: "truncated responses",
            usd: ledger.waste.truncated_usd,
            detail: format!(
                "{} of responses hit the cap ({} of generated tokens)",
                percent(t.truncation_rate),
                percent(t.truncated_token_share)
            ),
            lever: "raise max_response_len, or penalise length so fewer responses reach it",
        },
        WasteLine {
            name: "straggler idle time",
            usd: ledger.waste.straggler_idle_usd,
            detail: format!(
                "{} GPU-hours waiting for the longest response ({} tokens)",
                money(ledger.waste.straggler_idle_gpu_hours),
                thousands(t.straggler_response_tokens)
            ),
            lever: "async schedule (generation and training overlap), or a lower cap",
        },
    ]
}

/// The one-line verdict: the generation share of dollars and the biggest waste.
pub fn verdict(ledger: &Ledger, inputs: &CostInputs) -> String {
    let lines = waste_lines(ledger, inputs);
    let biggest = lines
        .iter()
        .max_by(|a, b| a.usd.total_cmp(&b.usd))
        .expect("three lines");
    let total = ledger.total_usd();
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

/// The JSON form of a ledger.
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
    json!({
        "config": {
            "model": inputs.policy.id,
            "finetune": inputs.finetune.to_string(),
            "reward": inputs.reward.to_string(),
            "algorithm": args.algorithm,
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
            "truncated_usd": ledger.waste.truncated_usd,
            "straggler_idle_gpu_hours": ledger.waste.straggler_idle_gpu_hours,
            "straggler_idle_usd": ledger.waste.straggler_idle_usd,
        },
        "verdict": verdict(ledger, inputs),
    })
}

/// Renders the human report.
pub fn render(ledger: &Ledger, inputs: &CostInputs, args: &CostArgs) -> String {
    let t = &ledger.tokens;
    let h = &inputs.hardware;
    let iterations = ledger.iterations as f64;
    let mut text = format!(
        "{} run: {} ({}), {} reward, {} x {} at ${}/GPU-hour, {}\n",
        args.algorithm.to_uppercase(),
        inputs.policy.id,
        inputs.finetune,
        inputs.reward,
        h.gpus,
        h.gpu.id,
        money(h.usd_per_gpu_hour),
        args.schedule
    );
    text.push_str(&format!(
        "{} prompts x {} = {} rollouts per step; responses average {} of {} tokens ({} truncated); {} update epoch(s)\n",
        thousands(args.prompts_per_step as f64),
        args.group_size,
        thousands(t.rollouts_per_step),
        thousands(t.mean_response_tokens),
        thousands(args.max_response_len as f64),
        percent(t.truncation_rate),
        args.update_epochs
    ));
    text.push_str(&format!(
        "{} iterations of {} s: {} wall-clock hours, {} GPU-hours, ${}\n",
        thousands(iterations),
        money(ledger.step_seconds),
        money(ledger.wall_hours()),
        thousands(ledger.total_gpu_hours()),
        money(ledger.total_usd())
    ));
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
    text.push_str("\nwaste (categories overlap):\n");
    let mut waste = Table::new(["where", "USD", "share of run", "what", "lever"]);
    let total = ledger.total_usd();
    for line in waste_lines(ledger, inputs) {
        waste.row([
            line.name.to_string(),
            money(line.usd),
            percent(if total > 0.0 { line.usd / total } else { 0.0 }),
            line.detail,
            line.lever.to_string(),
        ]);
    }
    text.push_str(&waste.render());
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
