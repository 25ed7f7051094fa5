//! A priced run rendered for people (tables) and for programs (the JSON that `cost --json`
//! prints), and the one-line verdict both end with.

use serde_json::json;

use super::{CostReport, ExpectedGain, PricedStage, RunRequest, WasteLine};
use crate::config::SECONDS_PER_HOUR;
use crate::format::{Table, flops, money, percent, thousands};
use crate::ledger::{Bucket, Ledger, Phase};

/// The one-line verdict: the generation share of dollars and the biggest waste.
pub fn verdict(ledger: &Ledger, request: &RunRequest, waste: &[WasteLine]) -> String {
    if let Some(reason) = ledger.infeasible {
        return format!("INFEASIBLE: {reason}; the numbers above price it as if it could run");
    }
    let total = ledger.total_usd();
    if !request.stage.is_rl() {
        return format!(
            "{}: all of its ${} is learning (no generation); the update pass is {} of the time",
            request.stage.label(),
            money(total),
            percent(ledger.usd_share(Bucket::Learning))
        );
    }
    let biggest = waste
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

/// The JSON form (`cost --json`): keys sorted, every number in its natural unit.
pub fn json(report: &CostReport, request: &RunRequest) -> serde_json::Value {
    let ledger = &report.ledger;
    let price = ledger.usd_per_gpu_hour;
    let buckets = |f: &dyn Fn(Bucket) -> f64, total: f64| json!({"search": f(Bucket::Search), "learning": f(Bucket::Learning), "feedback": f(Bucket::Feedback), "total": total});
    let t = &ledger.tokens;
    let gain = &report.gain;
    let mut value = json!({
        "config": config_json(request, price),
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
        "phases": phases_json(ledger),
        "decode": {
            "tensor_parallel": ledger.decode.tensor_parallel,
            "replicas": ledger.decode.replicas,
            "sequences_in_flight": ledger.decode.sequences_in_flight,
        },
        "training_memory_gb_per_gpu": ledger.training_memory_gb_per_gpu,
        "environment": environment_json(ledger),
        "waste": waste_json(&ledger.waste),
        "cost_per_point": gain.as_ref().filter(|g| g.points > 0.0).map(|g| json!({
            "points": g.points,
            "basis": g.basis,
            "usd_per_point": ledger.total_usd() / g.points,
            "gpu_hours_per_point": ledger.total_gpu_hours() / g.points,
        })),
        "where_to_run": report.options.iter().map(|o| json!({"option": o.name, "usd": o.usd, "basis": o.basis})).collect::<Vec<_>>(),
        "break_even": report.break_even,
        "verdict": report.verdict,
        "assumptions": {
            "framework": request.run.framework.as_str(),
            "engine": request.hardware.engine.id,
            "rollout_gpu_memory_utilization": request.hardware.rollout_gpu_memory_utilization,
            "max_num_seqs": request.hardware.max_num_seqs,
            "rollout_tensor_parallel": request.hardware.rollout_tensor_parallel,
            "mean_response_tokens": request.task.mean_response_tokens,
            "mean_response_tokens_end": request.task.mean_response_tokens_end,
        },
        "length_band_usd": report.length_band.map(|(low, high)| json!({
            "half_length": low.usd,
            "twice_length": high.usd,
            "factor": crate::costing::LENGTH_BAND_FACTOR,
        })),
        "length_band_iterations": report.length_band.map(|(low, high)| json!({
            "half_length": low.iterations,
            "twice_length": high.iterations,
            "factor": crate::costing::LENGTH_BAND_FACTOR,
        })),
    });
    if let Some(fields) = value.as_object_mut() {
        fields.extend(interval_json(report, request));
        fields.extend(whole_run_json(report));
        fields.insert(
            "training_step_seconds".into(),
            crate::ledger::whole_run::training_step_seconds(ledger, &report.run_events).into(),
        );
    }
    value
}

/// `cost --json`'s `run_events` (what the run pays beyond its steps, each in the totals) and
/// `cap_schedule` (the segments, null without a schedule).
fn whole_run_json(report: &CostReport) -> serde_json::Map<String, serde_json::Value> {
    let events: Vec<serde_json::Value> = report
        .run_events
        .iter()
        .map(|e| {
            json!({
                "what": e.kind.key(),
                "every_steps": e.every_steps,
                "count": e.count,
                "seconds_each": e.seconds_each,
                "gpu_hours": e.gpu_hours,
                "usd": e.usd,
            })
        })
        .collect();
    let segments: Vec<serde_json::Value> = report
        .segments
        .iter()
        .map(|s| {
            json!({
                "max_response_len": s.segment.max_response_len,
                "iterations": s.ledger.iterations,
                "mean_response_tokens": s.ledger.tokens.mean_response_tokens,
                "step_seconds": s.ledger.step_seconds,
                "gpu_hours": s.ledger.total_gpu_hours(),
                "usd": s.ledger.total_usd(),
            })
        })
        .collect();
    let mut map = serde_json::Map::new();
    map.insert("run_events".into(), events.into());
    map.insert(
        "cap_schedule".into(),
        if segments.is_empty() {
            serde_json::Value::Null
        } else {
            segments.into()
        },
    );
    map
}

/// `cost --json`'s price intervals (see `interval_line`): on the step's seconds always, on the
/// dollars and GPU-hours of a number of steps, on the iterations a budget buys; and the setup's
/// tags no published timing has. Each is null for stages without an interval.
fn interval_json(
    report: &CostReport,
    request: &RunRequest,
) -> serde_json::Map<String, serde_json::Value> {
    let ledger = &report.ledger;
    let i = report.price_interval.as_ref();
    let budget = matches!(request.stop, crate::config::Stop::Budget(_));
    let pair = |(low, high): (f64, f64)| json!([low, high]);
    let usd = ledger.total_usd();
    let gpu_hours = ledger.total_gpu_hours();
    let iterations = ledger.iterations as f64;
    let mut out = serde_json::Map::new();
    out.insert(
        "step_seconds_interval".into(),
        i.map(|i| pair(i.of(ledger.step_seconds))).into(),
    );
    out.insert(
        "usd_interval".into(),
        i.map(|i| pair(if budget { (usd, usd) } else { i.of(usd) }))
            .into(),
    );
    out.insert(
        "gpu_hours_interval".into(),
        i.map(|i| {
            pair(if budget {
                (gpu_hours, gpu_hours)
            } else {
                i.of(gpu_hours)
            })
        })
        .into(),
    );
    out.insert(
        "iterations_interval".into(),
        i.map(|i| {
            let (low, high) = if budget {
                i.of_steps(iterations)
            } else {
                (iterations, iterations)
            };
            pair((low.floor(), high.floor()))
        })
        .into(),
    );
    out.insert(
        "price_interval_unseen".into(),
        i.map(|i| json!(i.unseen_tags)).into(),
    );
    out
}

/// `cost --json`'s `config`: the run as requested.
fn config_json(request: &RunRequest, price: f64) -> serde_json::Value {
    json!({
        "algo": request.stage.as_str(),
        "model": request.policy.id,
        "finetune": request.finetune.to_string(),
        "reward": request.reward.to_string(),
        "gpu": request.hardware.gpu.id,
        "gpus": request.hardware.gpus,
        "usd_per_gpu_hour": price,
        "schedule": request.hardware.schedule.as_str(),
        "prompts_per_step": request.levers.prompts_per_step,
        "group_size": request.levers.group_size,
        "prompt_tokens": request.task.prompt_tokens as u64,
        "max_prompt_tokens": request.task.max_prompt_tokens.map(|cap| cap as u64),
        "max_response_len": request.levers.max_response_len,
        "update_epochs": request.levers.update_epochs,
        "kl_reference": request.run.kl_reference,
        "kl_coef": request.run.kl_coef,
        "prefix_cache": request.run.prefix_cache,
        "dynamic_sampling": request.run.dynamic_sampling,
        "offload": {
            "params": request.run.offload.params,
            "optimizer": request.run.offload.optimizer,
            "reference": request.run.offload.reference,
            "per_step": request.run.offload.per_step,
        },
        "base_score": request.base_score,
    })
}

/// `cost --json`'s `phases`: each phase per step and over the run.
fn phases_json(ledger: &crate::ledger::Ledger) -> Vec<serde_json::Value> {
    let iterations = ledger.iterations as f64;
    let price = ledger.usd_per_gpu_hour;
    Phase::ALL
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
                "gpu_hours": c.gpu_seconds / SECONDS_PER_HOUR * iterations,
                "usd": c.gpu_seconds / SECONDS_PER_HOUR * iterations * price,
            })
        })
        .collect()
}

/// `cost --json`'s `environment`: what multi-turn episodes wait for and pay outside the GPUs.
fn environment_json(ledger: &crate::ledger::Ledger) -> serde_json::Value {
    let iterations = ledger.iterations as f64;
    json!({
        "wait_seconds": ledger.phase(Phase::Environment).seconds * iterations,
        "wait_gpu_hours": ledger.phase(Phase::Environment).gpu_seconds / SECONDS_PER_HOUR * iterations,
        "sandbox_usd": ledger.environment_usd_per_step * iterations,
        "api_usd": ledger.api_usd_per_step * iterations,
        "usd_outside_gpus": ledger.external_usd_per_step.iter().sum::<f64>() * iterations,
    })
}

/// `cost --json`'s `waste` (the categories overlap).
fn waste_json(waste: &crate::ledger::Waste) -> serde_json::Value {
    json!({
        "zero_signal_usd": waste.zero_signal_usd,
        "oversampling_usd": waste.oversampling_usd,
        "truncated_usd": waste.truncated_usd,
        "straggler_idle_gpu_hours": waste.straggler_idle_gpu_hours,
        "straggler_idle_usd": waste.straggler_idle_usd,
        "reference_without_kl_usd": waste.reference_without_kl_usd,
        "uncached_prefill_usd": waste.uncached_prefill_usd,
    })
}

/// The opening lines: what runs where, the step's shape, and the totals.
/// The response cap as the headline states it: a cap schedule's caps in order, else the one cap.
fn caps_text(request: &RunRequest) -> String {
    if request.cap_schedule.is_empty() {
        return thousands(request.levers.max_response_len as f64);
    }
    request
        .cap_schedule
        .iter()
        .map(|s| thousands(s.max_response_len as f64))
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// A step's seconds as the headline states them: the training step, and the step with what the
/// run pays beyond it spread over it when that differs.
fn step_text(report: &CostReport) -> String {
    let ledger = &report.ledger;
    let step = crate::ledger::whole_run::training_step_seconds(ledger, &report.run_events);
    if report.run_events.is_empty() || step == ledger.step_seconds {
        return format!("{} s", money(ledger.step_seconds));
    }
    format!(
        "{} s ({} s with what the run pays beyond its steps)",
        money(step),
        money(ledger.step_seconds)
    )
}

fn headline(report: &CostReport, request: &RunRequest) -> String {
    let ledger = &report.ledger;
    let t = &ledger.tokens;
    let h = &request.hardware;
    let iterations = ledger.iterations as f64;
    match request.stage {
        PricedStage::Rl(_) => {
            let mut s = format!(
                "{} run: {} ({}), {} reward, {} x {} at ${}/GPU-hour, {}\n",
                request.stage.label(),
                request.policy.id,
                request.finetune,
                request.reward,
                h.gpus,
                h.gpu.id,
                money(h.usd_per_gpu_hour),
                h.schedule
            );
            let caps = caps_text(request);
            s.push_str(&format!(
                "{} prompts x {} = {} rollouts per step; responses average {} of {caps} tokens ({} truncated); {} update epoch(s)\n",
                thousands(request.levers.prompts_per_step as f64),
                request.levers.group_size,
                thousands(t.rollouts_per_step),
                thousands(t.mean_response_tokens),
                percent(t.truncation_rate),
                request.levers.update_epochs
            ));
            // The price's 90% interval where it moves: the steps a budget buys, or the dollars
            // of a number of steps.
            let (steps_interval, usd_interval) = match (&report.price_interval, request.stop) {
                (Some(i), crate::config::Stop::Budget(_)) if ledger.feasible() => {
                    let (low, high) = i.of_steps(iterations);
                    let text =
                        format!(" [{}, {}]", thousands(low.floor()), thousands(high.floor()));
                    (text, String::new())
                }
                (Some(i), crate::config::Stop::Iterations(_)) if ledger.feasible() => {
                    let (low, high) = i.of(ledger.total_usd());
                    (String::new(), format!(" [{}, {}]", money(low), money(high)))
                }
                _ => (String::new(), String::new()),
            };
            let step = step_text(report);
            s.push_str(&format!(
                "{}{steps_interval} iterations of {step}: {} wall-clock hours, {} GPU-hours, ${}{usd_interval}\n",
                thousands(iterations),
                money(ledger.wall_hours()),
                thousands(ledger.total_gpu_hours()),
                money(ledger.total_usd())
            ));
            s.push_str(&interval_line(report));
            s
        }
        _ => format!(
            "{}: {} ({}), {} epoch(s) on {} x {} at ${}/GPU-hour: {} wall-clock hours, {} GPU-hours, ${}\n",
            request.stage.label(),
            if request.stage == PricedStage::RewardModel {
                request
                    .reward
                    .model
                    .as_ref()
                    .map(|m| m.id.clone())
                    .unwrap_or_default()
            } else {
                request.policy.id.clone()
            },
            if request.stage == PricedStage::RewardModel {
                "full".to_string()
            } else {
                request.finetune.to_string()
            },
            request.supervised.epochs,
            h.gpus,
            h.gpu.id,
            money(h.usd_per_gpu_hour),
            money(ledger.wall_hours()),
            money(ledger.total_gpu_hours()),
            money(ledger.total_usd())
        ),
    }
}

/// One row per phase that costs anything: FLOPs and seconds per step, GPU-hours and dollars over
/// the run, share of dollars.
fn phases_table(ledger: &Ledger) -> String {
    let iterations = ledger.iterations as f64;
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
            money(c.gpu_seconds / SECONDS_PER_HOUR * iterations),
            money(c.gpu_seconds / SECONDS_PER_HOUR * iterations * ledger.usd_per_gpu_hour),
            percent(if total_gpu_seconds > 0.0 {
                c.gpu_seconds / total_gpu_seconds
            } else {
                0.0
            }),
        ]);
    }
    phases.render()
}

/// One row per bucket and the total: FLOPs, GPU-hours and dollars with their shares.
fn buckets_table(ledger: &Ledger) -> String {
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
    buckets.render()
}

/// What the run pays beyond its steps, one line per event (already in the totals above): when,
/// how long one takes and why, how many, GPU-hours and dollars.
fn run_events_table(report: &CostReport, request: &RunRequest) -> String {
    use crate::ledger::whole_run::{self, RunEventKind};
    if report.run_events.is_empty() {
        return String::new();
    }
    let run = &request.run;
    let config = request.rl_config();
    let nodes = request
        .hardware
        .gpus
        .div_ceil(whole_run::GPUS_PER_NODE)
        .max(1);
    let validation = format!(
        "{} prompts x {} at the cap",
        thousands(run.validation_prompts as f64),
        run.validation_samples_per_prompt
    );
    let mut table = Table::new(["what", "when", "each", "count", "GPU-hours", "USD"]);
    for e in &report.run_events {
        let when = match e.every_steps {
            _ if e.kind == RunEventKind::Restarts => "after faults".to_string(),
            0 => "once".to_string(),
            n => format!("every {} steps", thousands(n as f64)),
        };
        let why = match e.kind {
            RunEventKind::Startup if run.startup_seconds.is_none() => format!(
                "estimated for {:.1}B parameters",
                request.policy.total_params() as f64 / 1e9
            ),
            RunEventKind::Startup => "given".to_string(),
            RunEventKind::ValidationBeforeTraining | RunEventKind::Validation => validation.clone(),
            RunEventKind::Checkpoint if run.checkpoint_seconds.is_none() => format!(
                "{} GB at {} GB/s on {} node(s)",
                thousands(whole_run::checkpoint_bytes(&config) / 1e9),
                crate::format::number(run.checkpoint_write_gb_per_second),
                nodes
            ),
            RunEventKind::Checkpoint => "given".to_string(),
            RunEventKind::Restarts if run.checkpoint_every_steps == 0 => format!(
                "the start again, at {} faults per GPU-day; with no checkpoint the steps before a fault are redone too, not counted",
                crate::format::significant(run.restarts_per_gpu_day)
            ),
            RunEventKind::Restarts => format!(
                "the start again and half of {} steps redone, at {} faults per GPU-day",
                run.checkpoint_every_steps,
                crate::format::significant(run.restarts_per_gpu_day)
            ),
        };
        table.row([
            e.kind.name().to_string(),
            when,
            format!("{} s: {why}", money(e.seconds_each)),
            if e.count.fract() == 0.0 {
                thousands(e.count)
            } else if e.count < 1.0 {
                // An expected count below one (restarts): its first significant digits.
                crate::format::significant(e.count)
            } else {
                crate::format::readable(e.count)
            },
            money(e.gpu_hours),
            money(e.usd),
        ]);
    }
    format!(
        "\nbeyond the steps (in the totals above):\n{}",
        table.render()
    )
}

/// The cap schedule's segments, one line each: cap, steps, mean response, seconds per step,
/// GPU-hours and dollars (the start-up and the validation before training in the first).
fn segments_table(report: &CostReport) -> String {
    if report.segments.is_empty() {
        return String::new();
    }
    let mut table = Table::new([
        "segment",
        "cap",
        "steps",
        "mean response",
        "s/step",
        "GPU-hours",
        "USD",
    ]);
    for (i, s) in report.segments.iter().enumerate() {
        let l = &s.ledger;
        table.row([
            (i + 1).to_string(),
            thousands(s.segment.max_response_len as f64),
            thousands(l.iterations as f64),
            thousands(l.tokens.mean_response_tokens),
            money(l.step_seconds),
            money(l.total_gpu_hours()),
            money(l.total_usd()),
        ]);
    }
    format!(
        "\ncap schedule (one run; the start-up in the first segment):\n{}",
        table.render()
    )
}

/// What the episodes' environment costs (multi-turn runs, sandboxes, API judges): the waiting
/// on the GPUs and the dollars paid outside them. Empty for single-turn runs without one.
fn environment_lines(ledger: &Ledger) -> String {
    let it = ledger.iterations as f64;
    let wait = ledger.phase(Phase::Environment);
    let outside = ledger.external_usd_per_step.iter().sum::<f64>() * it;
    if wait.seconds == 0.0 && outside == 0.0 {
        return String::new();
    }
    format!(
        "environment: {} GPU-hours waiting for tools (in search); outside the GPUs ${}: sandboxes ${} (tool calls in search, reward tests in feedback), API judge ${} (feedback)\n",
        money(wait.gpu_seconds / SECONDS_PER_HOUR * it),
        money(outside),
        money(ledger.environment_usd_per_step * it),
        money(ledger.api_usd_per_step * it)
    )
}

/// The waste lines (RL only), with each line's share of the run.
fn waste_table(report: &CostReport) -> String {
    let total = report.ledger.total_usd();
    let mut text = String::new();
    if !report.waste.is_empty() {
        text.push_str("\nwaste (categories overlap):\n");
        let mut waste = Table::new(["where", "USD", "share of run", "what", "lever"]);
        for line in &report.waste {
            waste.row([
                line.name.to_string(),
                money(line.usd),
                percent(if total > 0.0 { line.usd / total } else { 0.0 }),
                line.detail.clone(),
                line.lever.to_string(),
            ]);
        }
        text.push_str(&waste.render());
    }
    text
}

/// Cost per point of improvement, when a gain is known.
fn gain_lines(report: &CostReport) -> String {
    let (ledger, total) = (&report.ledger, report.ledger.total_usd());
    let mut text = String::new();
    if let Some(ExpectedGain {
        points: gain,
        basis,
    }) = report.gain.clone()
    {
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
    text
}

/// Where to run it: one row per payment option.
fn options_table(report: &CostReport) -> String {
    let mut table = Table::new(["option", "USD", "basis"]);
    for o in &report.options {
        table.row([
            o.name.clone(),
            o.usd.map(money).unwrap_or_else(|| "-".to_string()),
            o.basis.clone(),
        ]);
    }
    table.render()
}

/// Where the headline's 90% interval comes from: the step's seconds it allows and the
/// ledger's held-out error it is drawn from, or, when a tag of the setup has no published
/// timing, which.
fn interval_line(report: &CostReport) -> String {
    let Some(i) = &report.price_interval else {
        return String::new();
    };
    let ledger = &report.ledger;
    if !ledger.feasible() {
        return String::new();
    }
    let (low, high) = i.of(ledger.step_seconds);
    let basis = if i.unseen_tags.is_empty() {
        format!(
            "drawn from the ledger's error on {} published steps, each priced with its source held out",
            i.residuals
        )
    } else {
        format!(
            "no published timing of this setup ({}): drawn from the ledger's held-out error on setups it had never been checked against, the widest",
            i.unseen_tags.join(", ")
        )
    };
    format!(
        "90% interval: steps of {} to {} s; {basis}\n",
        money(low),
        money(high)
    )
}

/// The framework, engine and length assumptions, and what half and twice the length move: the
/// steps a budget buys, or the dollars of a number of steps.
fn assumptions_line(report: &CostReport, request: &RunRequest) -> String {
    let Some((low, high)) = report.length_band else {
        return String::new();
    };
    // Under a budget the dollars are the budget's: the length moves the steps it buys.
    let band = match request.stop {
        crate::config::Stop::Budget(_) => format!(
            "at half that length the budget buys {} steps ({} hours), at twice {} ({} hours)",
            thousands(low.iterations as f64),
            crate::format::readable(low.wall_hours),
            thousands(high.iterations as f64),
            crate::format::readable(high.wall_hours)
        ),
        crate::config::Stop::Iterations(_) => format!(
            "at half that length ${}, at twice ${}",
            money(low.usd),
            money(high.usd)
        ),
    };
    let h = &request.hardware;
    format!(
        "assumed: {} defaults, {} rollouts (rollout memory share {}, max_num_seqs {}, tensor parallel >= {}), responses of {} tokens on average uncapped; {band}\n",
        request.run.framework,
        h.engine.id,
        crate::format::number(h.rollout_gpu_memory_utilization),
        h.max_num_seqs,
        h.rollout_tensor_parallel,
        match request.task.mean_response_tokens_end {
            None => thousands(request.task.mean_response_tokens),
            Some(end) => format!(
                "{} at the start and {} at the end",
                thousands(request.task.mean_response_tokens),
                thousands(end)
            ),
        },
    )
}

/// Renders the human report.
pub fn text(report: &CostReport, request: &RunRequest) -> String {
    let mut text = headline(report, request);
    if let Some(reason) = report.ledger.infeasible {
        text.push_str(&format!("INFEASIBLE: {reason}\n"));
    }
    text.push_str(&assumptions_line(report, request));
    text.push('\n');
    text.push_str(&phases_table(&report.ledger));
    text.push('\n');
    text.push_str(&buckets_table(&report.ledger));
    text.push_str(&segments_table(report));
    text.push_str(&run_events_table(report, request));
    text.push_str(&environment_lines(&report.ledger));
    text.push_str(&waste_table(report));
    text.push_str(&gain_lines(report));
    text.push_str("\nwhere to run it:\n");
    text.push_str(&options_table(report));
    if let Some(b) = &report.break_even {
        text.push_str(&format!("break-even: {b}\n"));
    }
    text.push('\n');
    text.push_str(&report.verdict);
    text.push('\n');
    text
}
