//! One RL run priced from its steps: [`evaluate`] prices a step ([`super::step`]), derives the
//! iterations its stop affords, charges the start-up once, and adds the waste over the run; a
//! length schedule averages three steps (Simpson's rule) and multi-turn episodes add what the
//! environment costs ([`super::agent`]). [`StepLedger`] keeps a step before its stop, so a sweep
//! prices it once for all its budgets.

use super::step::{Pools, Rollouts, constant_step};
use super::{
    Bucket, Infeasible, Ledger, Phase, PhaseCost, RunConfig, TokenStats, Waste,
    affordable_iterations,
};
use crate::config::{SECONDS_PER_HOUR, Stop, Task};

/// The run's iterations: given, or the most the budget affords after the start-up (none is
/// infeasible).
fn iterations(ledger: &Ledger, stop: Stop, startup_seconds: f64) -> (u64, Option<Infeasible>) {
    let fixed = startup_cost(ledger, startup_seconds);
    iterations_at(
        stop,
        |unit| ledger.per_iteration(unit),
        |unit| fixed[unit_index(unit)],
    )
}

/// The start-up's cost in each budget unit (FLOPs, GPU-hours, dollars), charged once before the
/// iterations: `startup_seconds` × GPUs, at the ledger's price for dollars, and no FLOPs.
fn startup_cost(ledger: &Ledger, startup_seconds: f64) -> [f64; 3] {
    let startup_gpu_hours = startup_seconds * ledger.gpus as f64 / SECONDS_PER_HOUR;
    [
        0.0,
        startup_gpu_hours,
        startup_gpu_hours * ledger.usd_per_gpu_hour,
    ]
}

/// The budget units in the order of [`startup_cost`]'s and [`StepLedger`]'s arrays.
const BUDGET_UNITS: [crate::config::BudgetUnit; 3] = {
    use crate::config::BudgetUnit::{Flops, GpuHours, Usd};
    [Flops, GpuHours, Usd]
};

/// A budget unit's place in [`BUDGET_UNITS`].
fn unit_index(unit: crate::config::BudgetUnit) -> usize {
    use crate::config::BudgetUnit::{Flops, GpuHours, Usd};
    match unit {
        Flops => 0,
        GpuHours => 1,
        Usd => 2,
    }
}

/// [`iterations`] with the cost of one iteration and the start-up's given per budget unit (a
/// step's, computed once).
fn iterations_at(
    stop: Stop,
    per_iteration: impl Fn(crate::config::BudgetUnit) -> f64,
    startup: impl Fn(crate::config::BudgetUnit) -> f64,
) -> (u64, Option<Infeasible>) {
    match stop {
        Stop::Iterations(n) => (n, None),
        Stop::Budget(budget) => {
            let per = per_iteration(budget.unit);
            let m = affordable_iterations(budget.amount - startup(budget.unit), per);
            let infeasible = (m == 0).then_some(Infeasible::BudgetBelowOneIteration {
                per_iteration: per,
                budget: budget.amount,
                unit: budget.unit,
            });
            (m, infeasible)
        }
    }
}

/// Waste over the run, in dollars (and GPU-hours for stragglers); the categories overlap.
fn waste(cfg: &RunConfig, pools: Pools, r: &Rollouts, ledger: &Ledger) -> Waste {
    let (hw, run) = (cfg.hardware, cfg.run);
    let iterations = ledger.iterations as f64;
    let price = hw.usd_per_gpu_hour;
    let usd_of = |ph: Phase| ledger.phase(ph).gpu_seconds / SECONDS_PER_HOUR * price * iterations;
    let search_feedback: f64 = [Phase::Prefill, Phase::Decode, Phase::Reward]
        .iter()
        .map(|&ph| usd_of(ph))
        .sum();
    let learning: f64 = Phase::ALL
        .iter()
        .filter(|&&ph| ph.bucket() == Bucket::Learning && ph != Phase::Sync && ph != Phase::Startup)
        .map(|&ph| usd_of(ph))
        .sum();
    // Zero-signal groups reach learning only without dynamic sampling; with it, they are
    // generated and scored, then discarded (over-sampling).
    // Under dynamic sampling the discarded share is what was generated beyond the kept batch
    // (whole generation batches: at least the zero-signal rate).
    let (zero_signal_usd, oversampling_usd) = if run.dynamic_sampling {
        let discarded = if r.generated > 0.0 {
            1.0 - r.kept / r.generated
        } else {
            0.0
        };
        (0.0, discarded * search_feedback)
    } else {
        (r.zero_signal * (search_feedback + learning), 0.0)
    };
    // During the tail the generation pool waits (under the colocated schedule that is the whole
    // cluster; under async the trainer's idle time is already charged to its phases).
    let straggler_idle_gpu_hours =
        ledger.decode.tail_seconds * pools.generation as f64 * iterations / SECONDS_PER_HOUR;
    let g = cfg.group_size as f64;
    Waste {
        zero_signal_usd,
        truncated_usd: r.lengths.truncated_token_share * (search_feedback + learning),
        straggler_idle_gpu_hours,
        straggler_idle_usd: straggler_idle_gpu_hours * price,
        reference_without_kl_usd: if run.kl_reference && run.kl_coef == 0.0 {
            usd_of(Phase::RefLogprob)
        } else {
            0.0
        },
        oversampling_usd,
        uncached_prefill_usd: if run.prefix_cache {
            0.0
        } else {
            usd_of(Phase::Prefill) * (g - 1.0) / g
        },
    }
}

/// One step of a single-turn run at a constant mean response length, before its stop is
/// applied: everything a budget does not change (the phases, tokens, decode, memory and the
/// step's own infeasibility). [`StepLedger::with_stop`] finishes it into the run's ledger, so a
/// sweep prices the step once for all the budgets of a cell ([`step_ledger`]).
#[derive(Debug, Clone, Copy)]
pub struct StepLedger {
    /// The step's ledger, iterations not yet set.
    pub(super) ledger: Ledger,
    /// The GPU pools it ran on.
    pub(super) pools: Pools,
    /// What it generated.
    pub(super) rollouts: Rollouts,
    /// The step's [`Ledger::per_iteration`] in FLOPs, GPU-hours and dollars (a stop does not
    /// change it: the start-up's share is charged after the iterations are known).
    per_iteration: [f64; 3],
    /// The start-up's cost in the same units ([`startup_cost`]), paid before the iterations.
    startup_cost_per_unit: [f64; 3],
    /// The run's start ([`Ledger::start_seconds`]); [`charge_startup`] adds its share of each
    /// step once the iterations are known.
    startup_seconds: f64,
    /// The cluster's GPUs (the start-up holds them all).
    cluster_gpus: f64,
    /// The sums over its phases that a stop does not change.
    sums: StepSums,
}

/// The stop-free step of `cfg`, when its ledger is one step priced once: single-turn, no
/// environment and no length schedule (None otherwise: those runs are priced whole by
/// [`evaluate`]).
pub fn step_ledger(cfg: &RunConfig) -> Option<StepLedger> {
    let plain = cfg.run.agent.is_single_turn_without_environment()
        && cfg.task.mean_response_tokens_end.is_none();
    plain.then(|| constant_step(cfg))
}

impl StepLedger {
    /// The step of this ledger, pools and rollouts, in a run whose start takes the ledger's
    /// [`Ledger::start_seconds`] on a cluster of `cluster_gpus`.
    pub(super) fn new(ledger: Ledger, pools: Pools, rollouts: Rollouts, cluster_gpus: f64) -> Self {
        let startup_seconds = ledger.start_seconds;
        StepLedger {
            per_iteration: BUDGET_UNITS.map(|unit| ledger.per_iteration(unit)),
            startup_cost_per_unit: startup_cost(&ledger, startup_seconds),
            startup_seconds,
            cluster_gpus,
            sums: StepSums::of(&ledger),
            ledger,
            pools,
            rollouts,
        }
    }

    /// The run's ledger under `cfg`'s stop. `cfg` must be the configuration the step was priced
    /// from, with any stop: the result is [`evaluate`]'s, bit for bit.
    pub fn with_stop(&self, cfg: &RunConfig) -> Ledger {
        let mut ledger = self.ledger;
        self.finish(cfg, &mut ledger);
        ledger
    }

    /// [`StepLedger::with_stop`] written into `ledger`, which must hold this step's ledger
    /// finished at some stop (or not at all): only the fields a stop sets are rewritten, so a
    /// sweep moves no whole ledger per budget.
    pub fn with_stop_into(&self, cfg: &RunConfig, ledger: &mut Ledger) {
        self.with_stop_into_without_waste(cfg, ledger);
        ledger.waste = waste(cfg, self.pools, &self.rollouts, ledger);
    }

    /// [`StepLedger::with_stop_into`] without the waste, which is left at zero: the costs,
    /// shares and iterations a sweep's first pass aggregates, bit for bit, for less work.
    pub fn with_stop_into_without_waste(&self, cfg: &RunConfig, ledger: &mut Ledger) {
        self.debug_assert_priced_from(cfg);
        self.at_stop_into_without_waste(cfg.stop, ledger);
    }

    /// [`StepLedger::with_stop_into_without_waste`] given only the stop: everything else a stop
    /// reads (the start-up, the cluster) is the step's own, so a sweep need not build the
    /// cell's whole configuration for each of its budgets.
    pub fn at_stop_into_without_waste(&self, stop: Stop, ledger: &mut Ledger) {
        let startup = Phase::Startup.index();
        ledger.phases[startup] = self.ledger.phases[startup];
        ledger.step_seconds = self.ledger.step_seconds;
        ledger.infeasible = self.ledger.infeasible;
        self.stop(stop, ledger);
        ledger.waste = Waste::default();
    }

    /// Sets what the stop decides on a copy of the step's ledger: the iterations, the budget's
    /// infeasibility, the start-up's share and the waste.
    fn finish(&self, cfg: &RunConfig, ledger: &mut Ledger) {
        self.debug_assert_priced_from(cfg);
        self.stop(cfg.stop, ledger);
        ledger.waste = waste(cfg, self.pools, &self.rollouts, ledger);
    }

    /// Checks (in debug builds) that `cfg` has the start-up and cluster this step was priced
    /// with, as every method that takes a configuration requires.
    fn debug_assert_priced_from(&self, cfg: &RunConfig) {
        debug_assert!(self.startup_seconds >= super::whole_run::startup_seconds(cfg));
        debug_assert_eq!(
            self.cluster_gpus.to_bits(),
            (cfg.hardware.gpus as f64).to_bits()
        );
    }

    /// The iterations, the budget's infeasibility and the start-up's share.
    fn stop(&self, stop: Stop, ledger: &mut Ledger) {
        // The ledger's start-up phase is the step's here, so its cost of one iteration is the
        // one computed with the step, and the start-up's own cost is the step's too.
        let (iterations, budget_infeasible) = iterations_at(
            stop,
            |unit| self.per_iteration[unit_index(unit)],
            |unit| self.startup_cost_per_unit[unit_index(unit)],
        );
        ledger.iterations = iterations;
        ledger.infeasible = ledger.infeasible.or(budget_infeasible);
        charge_startup(self.startup_seconds, self.cluster_gpus, ledger);
    }

    /// The step's ledger before any stop.
    pub fn step(&self) -> &Ledger {
        &self.ledger
    }

    /// The sums over the step's phases that a stop does not change ([`StepSums`]).
    pub fn sums(&self) -> &StepSums {
        &self.sums
    }
}

/// Sums over a step's phases that no stop changes, so that a sweep reads a cell's costs and
/// shares without summing its twelve phases again for each of them. The start-up, the only
/// phase a stop changes, is last in [`Phase::ALL`] and has no FLOPs, so every value here is the
/// [`Ledger`] method's, bit for bit: a sum over the phases is a fold in that order, and the
/// start-up's term is added to the fold of the others exactly as the method adds it.
#[derive(Debug, Clone, Copy)]
pub struct StepSums {
    /// GPU-seconds of the phases before the start-up, folded in [`Phase::ALL`] order.
    gpu_seconds_before_startup: f64,
    /// [`Ledger::total_flops_per_step`] (the start-up has none).
    flops_per_step: f64,
    /// Dollars paid outside the GPUs per step, summed over the buckets.
    external_usd_per_step: f64,
    /// Dollars of the search bucket per step ([`Ledger::usd_per_step`]).
    search_usd_per_step: f64,
    /// [`Ledger::flops_share`] of the learning bucket.
    learning_flops_share: f64,
    /// [`Ledger::flops_share`] of the search bucket.
    search_flops_share: f64,
}

impl StepSums {
    /// The sums of a step's ledger (any stop: a stop leaves them as they are).
    pub fn of(ledger: &Ledger) -> Self {
        let startup = Phase::Startup.index();
        debug_assert_eq!(
            startup,
            Phase::ALL.len() - 1,
            "the start-up is the last phase"
        );
        StepSums {
            gpu_seconds_before_startup: ledger.phases[..startup]
                .iter()
                .map(|p| p.gpu_seconds)
                .sum(),
            flops_per_step: ledger.total_flops_per_step(),
            external_usd_per_step: ledger.external_usd_per_step.iter().sum(),
            search_usd_per_step: ledger.usd_per_step(Bucket::Search),
            learning_flops_share: ledger.flops_share(Bucket::Learning),
            search_flops_share: ledger.flops_share(Bucket::Search),
        }
    }

    /// [`Ledger::total_gpu_hours_per_step`] of `ledger`, this step at some stop.
    pub fn total_gpu_hours_per_step(&self, ledger: &Ledger) -> f64 {
        (self.gpu_seconds_before_startup + ledger.phases[Phase::Startup.index()].gpu_seconds)
            / SECONDS_PER_HOUR
    }

    /// [`Ledger::total_usd_per_step`] of `ledger`, this step at some stop.
    pub fn total_usd_per_step(&self, ledger: &Ledger) -> f64 {
        self.total_gpu_hours_per_step(ledger) * ledger.usd_per_gpu_hour + self.external_usd_per_step
    }

    /// [`Ledger::per_iteration`] of `ledger`, this step at some stop.
    pub fn per_iteration(&self, ledger: &Ledger, unit: crate::config::BudgetUnit) -> f64 {
        use crate::config::BudgetUnit::{Flops, GpuHours, Usd};
        match unit {
            // No start-up FLOPs: the step's own total.
            Flops => self.flops_per_step,
            GpuHours => self.total_gpu_hours_per_step(ledger),
            Usd => self.total_usd_per_step(ledger),
        }
    }

    /// [`Ledger::flops_share`] of the learning bucket (RACE's update fraction).
    pub fn learning_flops_share(&self) -> f64 {
        self.learning_flops_share
    }

    /// [`Ledger::flops_share`] of the search bucket.
    pub fn search_flops_share(&self) -> f64 {
        self.search_flops_share
    }

    /// [`Ledger::usd_share`] of the search bucket of `ledger`, this step at some stop, whose
    /// dollars per step are `total_usd_per_step` ([`StepSums::total_usd_per_step`]).
    pub fn search_usd_share(&self, total_usd_per_step: f64) -> f64 {
        if total_usd_per_step > 0.0 {
            self.search_usd_per_step / total_usd_per_step
        } else {
            0.0
        }
    }
}

/// One run at a constant mean response length: the ledger of its iterations.
fn evaluate_constant(cfg: &RunConfig) -> Ledger {
    constant_step(cfg).with_stop(cfg)
}

/// The start-up as its share of each step: the whole cluster waits while the model loads and
/// the engine starts, once per run (so the run's totals include it exactly once).
fn charge_startup(startup_seconds: f64, cluster_gpus: f64, ledger: &mut Ledger) {
    if startup_seconds <= 0.0 || ledger.iterations == 0 {
        return;
    }
    let seconds = startup_seconds / ledger.iterations as f64;
    ledger.phases[Phase::Startup.index()] = PhaseCost {
        flops: 0.0,
        seconds,
        gpu_seconds: seconds * cluster_gpus,
    };
    ledger.step_seconds += seconds;
}

/// The points a length schedule is integrated at: Simpson's rule over the run, the start, the
/// middle and the end with weights 1/6, 4/6, 1/6 (exact for costs up to cubic in the length).
fn schedule_points(start: f64, end: f64) -> [(f64, f64); 3] {
    [
        (1.0 / 6.0, start),
        (4.0 / 6.0, 0.5 * (start + end)),
        (1.0 / 6.0, end),
    ]
}

fn weighted_tokens(parts: &[(f64, Ledger)]) -> TokenStats {
    let w = |f: &dyn Fn(&TokenStats) -> f64| -> f64 {
        parts.iter().map(|(weight, l)| weight * f(&l.tokens)).sum()
    };
    TokenStats {
        rollouts_per_step: w(&|t| t.rollouts_per_step),
        generated_rollouts_per_step: w(&|t| t.generated_rollouts_per_step),
        mean_response_tokens: w(&|t| t.mean_response_tokens),
        generated_tokens_per_step: w(&|t| t.generated_tokens_per_step),
        prompt_tokens_per_step: w(&|t| t.prompt_tokens_per_step),
        truncation_rate: w(&|t| t.truncation_rate),
        truncated_token_share: w(&|t| t.truncated_token_share),
        zero_signal_rate: w(&|t| t.zero_signal_rate),
        straggler_response_tokens: w(&|t| t.straggler_response_tokens),
        prefill_tokens_per_step: w(&|t| t.prefill_tokens_per_step),
        group_size: w(&|t| t.group_size),
        forward_tokens_per_step: w(&|t| t.forward_tokens_per_step),
        train_tokens_per_step: w(&|t| t.train_tokens_per_step),
    }
}

fn weighted_waste(parts: &[(f64, Ledger)]) -> Waste {
    let w = |f: &dyn Fn(&Waste) -> f64| -> f64 {
        parts.iter().map(|(weight, l)| weight * f(&l.waste)).sum()
    };
    Waste {
        zero_signal_usd: w(&|x| x.zero_signal_usd),
        truncated_usd: w(&|x| x.truncated_usd),
        straggler_idle_gpu_hours: w(&|x| x.straggler_idle_gpu_hours),
        straggler_idle_usd: w(&|x| x.straggler_idle_usd),
        reference_without_kl_usd: w(&|x| x.reference_without_kl_usd),
        oversampling_usd: w(&|x| x.oversampling_usd),
        uncached_prefill_usd: w(&|x| x.uncached_prefill_usd),
    }
}

/// Sets `ledger`'s step to the weighted mean of `parts`' steps (weights summing to 1): each
/// phase, the step's seconds, the tokens and the decode's seconds; its memory is the largest and
/// its infeasibility the first.
fn weighted_step(parts: &[(f64, Ledger)], ledger: &mut Ledger) {
    for (i, phase) in ledger.phases.iter_mut().enumerate() {
        *phase = PhaseCost {
            flops: parts.iter().map(|s| s.0 * s.1.phases[i].flops).sum(),
            seconds: parts.iter().map(|s| s.0 * s.1.phases[i].seconds).sum(),
            gpu_seconds: parts.iter().map(|s| s.0 * s.1.phases[i].gpu_seconds).sum(),
        };
    }
    ledger.step_seconds = parts.iter().map(|s| s.0 * s.1.step_seconds).sum();
    ledger.tokens = weighted_tokens(parts);
    ledger.decode.seconds = parts.iter().map(|s| s.0 * s.1.decode.seconds).sum();
    ledger.decode.tail_seconds = parts.iter().map(|s| s.0 * s.1.decode.tail_seconds).sum();
    ledger.training_memory_gb_per_gpu = parts
        .iter()
        .map(|s| s.1.training_memory_gb_per_gpu)
        .fold(0.0, f64::max);
    ledger.infeasible = parts.iter().find_map(|s| s.1.infeasible);
    ledger.validation_pass_seconds = parts
        .iter()
        .map(|s| s.0 * s.1.validation_pass_seconds)
        .sum();
    ledger.start_seconds = parts.iter().map(|s| s.0 * s.1.start_seconds).sum();
    ledger.restarts_per_step = parts.iter().map(|s| s.0 * s.1.restarts_per_step).sum();
    ledger.restart_seconds = parts.iter().map(|s| s.0 * s.1.restart_seconds).sum();
}

/// One run in segments priced one after another, as when the response cap is raised in stages
/// (`costing`'s cap schedule): each part is the ledger of its own iterations, priced without a
/// start-up. The run's step is the iteration-weighted mean of theirs (phases, tokens, decode,
/// dollars paid outside the GPUs), its iterations their sum, its waste the sum of theirs (each is
/// over its own iterations), its memory the largest, its infeasibility the first; the start-up
/// (the parts' [`Ledger::start_seconds`], on the whole cluster: give the later parts none) is
/// charged once, as [`evaluate`] charges it. None when there is no part or no iteration.
pub fn merge_segments(parts: &[Ledger]) -> Option<Ledger> {
    let iterations: u64 = parts.iter().map(|l| l.iterations).sum();
    let first = parts.first()?;
    if iterations == 0 {
        return None;
    }
    let weighted: Vec<(f64, Ledger)> = parts
        .iter()
        .map(|l| (l.iterations as f64 / iterations as f64, *l))
        .collect();
    let mut ledger = *first;
    weighted_step(&weighted, &mut ledger);
    let external = |i: usize| {
        weighted
            .iter()
            .map(|(w, l)| w * l.external_usd_per_step[i])
            .sum()
    };
    ledger.external_usd_per_step = [external(0), external(1), external(2)];
    ledger.environment_usd_per_step = weighted
        .iter()
        .map(|(w, l)| w * l.environment_usd_per_step)
        .sum();
    ledger.api_usd_per_step = weighted.iter().map(|(w, l)| w * l.api_usd_per_step).sum();
    let total = |f: &dyn Fn(&Waste) -> f64| -> f64 { parts.iter().map(|l| f(&l.waste)).sum() };
    ledger.waste = Waste {
        zero_signal_usd: total(&|x| x.zero_signal_usd),
        truncated_usd: total(&|x| x.truncated_usd),
        straggler_idle_gpu_hours: total(&|x| x.straggler_idle_gpu_hours),
        straggler_idle_usd: total(&|x| x.straggler_idle_usd),
        reference_without_kl_usd: total(&|x| x.reference_without_kl_usd),
        oversampling_usd: total(&|x| x.oversampling_usd),
        uncached_prefill_usd: total(&|x| x.uncached_prefill_usd),
    };
    ledger.step_seconds -= ledger.phases[Phase::Startup.index()].seconds;
    ledger.phases[Phase::Startup.index()] = PhaseCost::default();
    ledger.iterations = iterations;
    ledger.start_seconds = parts.iter().map(|l| l.start_seconds).sum();
    charge_startup(ledger.start_seconds, first.gpus as f64, &mut ledger);
    Some(ledger)
}

/// Evaluates one run: the ledger of its iterations. The first reason a run cannot go ahead is
/// kept (dynamic sampling, rollout memory, judge memory, training memory, budget, in that order).
/// With a response-length schedule (`[task] mean_response_tokens_end`) the step's costs are the
/// average over the run (Simpson's rule in the length), the run is infeasible where any point of
/// it is, memory is the largest, and the waste is the weighted sum of each point's.
pub fn evaluate(cfg: &RunConfig) -> Ledger {
    let agent = &cfg.run.agent;
    if agent.is_single_turn_without_environment() {
        return evaluate_task(cfg);
    }
    // Multi-turn episodes (`ledger::agent`): the equivalent single-turn task on the GPUs, then
    // the environment's waiting and dollars; a budget is spent on both.
    let task = super::agent::equivalent_task(cfg.task, agent);
    let inner = RunConfig {
        task: &task,
        ..*cfg
    };
    // The step is priced once and stopped twice (at one iteration, to find what the budget
    // buys, then at that count; `StepLedger::with_stop` is `evaluate`'s, bit for bit); a length
    // schedule is integrated over the run each time.
    let step = inner
        .task
        .mean_response_tokens_end
        .is_none()
        .then(|| constant_step(&inner));
    let at = |stop: Stop| {
        let cfg = RunConfig { stop, ..inner };
        match &step {
            Some(step) => step.with_stop(&cfg),
            None => evaluate_task(&cfg),
        }
    };
    let mut one = at(Stop::Iterations(1));
    one.step_seconds -= one.phases[Phase::Startup.index()].seconds;
    one.phases[Phase::Startup.index()] = PhaseCost::default();
    add_environment(&inner, &mut one);
    let (n, budget_infeasible) = iterations(&one, cfg.stop, one.start_seconds);
    let mut ledger = at(Stop::Iterations(n));
    add_environment(&inner, &mut ledger);
    ledger.infeasible = ledger.infeasible.or(budget_infeasible);
    ledger
}

/// Adds what the environment costs per step (`ledger::agent::environment_step`): the cluster
/// idling while episodes wait for tools (phase `environment`) or for a rate-limited API judge
/// (phase `reward`), and the sandbox and API dollars paid outside the GPUs.
fn add_environment(cfg: &RunConfig, ledger: &mut Ledger) {
    let agent = &cfg.run.agent;
    let tokens = cfg.task.prompt_tokens + ledger.tokens.mean_response_tokens;
    let e = super::agent::environment_step(
        agent,
        ledger.tokens.generated_rollouts_per_step,
        tokens,
        ledger.decode.seconds,
    );
    let gpus = cfg.hardware.gpus as f64;
    ledger.phases[Phase::Environment.index()] = PhaseCost {
        flops: 0.0,
        seconds: e.wait_seconds,
        gpu_seconds: e.wait_seconds * gpus,
    };
    let reward = &mut ledger.phases[Phase::Reward.index()];
    reward.seconds += e.api_seconds;
    reward.gpu_seconds += e.api_seconds * gpus;
    ledger.step_seconds += e.wait_seconds + e.api_seconds;
    ledger.external_usd_per_step = [e.tool_sandbox_usd, 0.0, e.reward_sandbox_usd + e.api_usd];
    ledger.environment_usd_per_step = e.tool_sandbox_usd + e.reward_sandbox_usd;
    ledger.api_usd_per_step = e.api_usd;
}

/// [`evaluate`] for a single-turn task with no environment.
fn evaluate_task(cfg: &RunConfig) -> Ledger {
    let Some(end) = cfg.task.mean_response_tokens_end else {
        return evaluate_constant(cfg);
    };
    let at = |mean: f64, stop: Stop| {
        let task = Task {
            mean_response_tokens: mean,
            mean_response_tokens_end: None,
            ..*cfg.task
        };
        evaluate_constant(&RunConfig {
            task: &task,
            stop,
            ..*cfg
        })
    };
    let points = schedule_points(cfg.task.mean_response_tokens, end);
    let steps: Vec<(f64, Ledger)> = points
        .iter()
        .map(|&(weight, mean)| (weight, at(mean, Stop::Iterations(1))))
        .collect();
    let mut ledger = steps[1].1;
    weighted_step(&steps, &mut ledger);
    // Each point was priced with its own start-up share: take it out before the budget.
    ledger.step_seconds -= ledger.phases[Phase::Startup.index()].seconds;
    ledger.phases[Phase::Startup.index()] = PhaseCost::default();
    let (iterations, budget_infeasible) = iterations(&ledger, cfg.stop, ledger.start_seconds);
    ledger.iterations = iterations;
    ledger.infeasible = ledger.infeasible.or(budget_infeasible);
    charge_startup(ledger.start_seconds, cfg.hardware.gpus as f64, &mut ledger);
    let runs: Vec<(f64, Ledger)> = points
        .iter()
        .map(|&(weight, mean)| (weight, at(mean, Stop::Iterations(iterations))))
        .collect();
    ledger.waste = weighted_waste(&runs);
    ledger
}
