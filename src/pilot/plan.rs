//! Choosing pilot runs: an IsoFLOP pilot grid in the style of RACE.
//!
//! Every pilot spends the same pilot budget. Candidates are the grid's lever combinations
//! (every axis but the budget) that are feasible at that budget and afford at least
//! [`MIN_PILOT_STEPS`] iterations. The pilots cover every model × reward stratum; within a
//! stratum the first two are the most search-heavy and the most update-heavy candidates (lowest
//! and highest update fraction), and the rest are chosen by greedy maximin distance (each new
//! pilot is the candidate farthest from those already chosen) over the normalised logs of the
//! update fraction (weighted double), G, the cap, epochs and prompts, and the LoRA rank index: a
//! space-filling design (Johnson, Moore and Ylvisaker 1990, "Minimax and maximin distance
//! designs"). Ties go to the lower cell id, so a plan is a deterministic function of the grid.

use crate::config::{Budget, Stop};
use crate::error::{Error, Result};
use crate::ledger::Bucket;
use crate::outcome::predict;
use crate::spec::Axis;
use crate::spec::{AxisIndices, Grid};

use super::{PilotRun, config_at, ledger_at};

/// Fewest iterations a pilot needs for a curve worth fitting.
pub const MIN_PILOT_STEPS: u64 = 5;

/// Checkpoints a pilot aims for (plus step 0).
pub const TARGET_CHECKPOINTS: u64 = 10;

/// A feasible candidate.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// Its cell's axis indices (budget index 0).
    pub(crate) indices: AxisIndices,
    features: [f64; 6],
    /// The run as the plan would list it (no run id yet).
    pub(crate) run: PilotRun,
}

/// What the selection needs from the user.
#[derive(Debug, Clone, Copy)]
pub struct PlanRequest {
    /// The IsoFLOP (or iso-dollar) pilot budget.
    pub budget: Budget,
    /// Most pilots.
    pub max_pilots: usize,
    /// Most dollars for all pilots together.
    pub max_total_usd: Option<f64>,
}

fn lever_combinations(grid: &Grid) -> impl Iterator<Item = AxisIndices> + '_ {
    let a = &grid.axes;
    let r = [
        a.model.len(),
        a.finetune.len(),
        a.reward.len(),
        a.group_size.len(),
        a.max_response_len.len(),
        a.update_epochs.len(),
        a.prompts_per_step.len(),
    ];
    let total: usize = r.iter().product();
    (0..total).map(move |mut k| {
        let mut d = [0usize; 7];
        for axis in (0..7).rev() {
            d[axis] = k % r[axis];
            k /= r[axis];
        }
        // Pilots measure the outcome, which does not depend on the rollout engine: they run on
        // the grid's first engine. They also run with the grid's first turns and tool latency:
        // the prior has no term of its own for either (no allowed study measures them; turns
        // reach it only through truncation and iterations), so it has no parameter that pilots
        // at other values could calibrate (the same for the API judge).
        // (The first value, index 0, on every other axis: the default.)
        let mut indices = AxisIndices::default();
        for (axis, index) in LEVER_AXES.into_iter().zip(d) {
            indices[axis] = index;
        }
        indices
    })
}

/// The axes pilots vary, in the order of a lever combination's digits.
const LEVER_AXES: [Axis; 7] = [
    Axis::Model,
    Axis::Finetune,
    Axis::Reward,
    Axis::GroupSize,
    Axis::MaxResponseLen,
    Axis::UpdateEpochs,
    Axis::PromptsPerStep,
];

fn candidate(grid: &Grid, i: AxisIndices, budget: Budget) -> Option<Candidate> {
    let a = &grid.axes;
    if !grid.rollouts_allowed(
        a.prompts_per_step[i[Axis::PromptsPerStep]],
        a.group_size[i[Axis::GroupSize]],
    ) {
        return None;
    }
    let config = config_at(grid, &i, Stop::Budget(budget));
    let mut ledger = crate::ledger::evaluate(&config);
    // The launch scripts validate every `eval_every_steps` and once before training
    // (`trainer.test_freq`, `val_before_train`): with a validation set in the grid
    // (`[run] validation_prompts`), the pilot's budget pays for both.
    let run_with_validation;
    let config = if grid.run.validation_prompts > 0 && ledger.iterations > 0 {
        let mut run = config.run.clone();
        run.validation_every_steps = (ledger.iterations / TARGET_CHECKPOINTS).max(1);
        run.validation_before_training = true;
        // veRL's pilot scripts save no checkpoint (`trainer.save_freq` stays -1); TRL's save at
        // each evaluation, a pilot-sized model's seconds, not priced.
        run.checkpoint_every_steps = 0;
        run_with_validation = run;
        let config = crate::ledger::RunConfig {
            run: &run_with_validation,
            ..config
        };
        ledger = crate::ledger::evaluate(&config);
        config
    } else {
        config
    };
    if !ledger.feasible() || ledger.iterations < MIN_PILOT_STEPS {
        return None;
    }
    let p = ledger.flops_share(Bucket::Learning);
    let prediction = predict(
        &grid.outcome,
        &crate::evaluate::grid_signal(grid, &config, &ledger),
    );
    let steps = ledger.iterations;
    let finetune_position = if a.finetune.len() > 1 {
        i[Axis::Finetune] as f64 / (a.finetune.len() - 1) as f64
    } else {
        0.0
    };
    Some(Candidate {
        indices: i,
        features: [
            p.max(1e-6).ln(),
            (a.group_size[i[Axis::GroupSize]] as f64).ln(),
            (a.max_response_len[i[Axis::MaxResponseLen]] as f64).ln(),
            (a.update_epochs[i[Axis::UpdateEpochs]] as f64).ln(),
            (a.prompts_per_step[i[Axis::PromptsPerStep]] as f64).ln(),
            finetune_position,
        ],
        run: PilotRun {
            run_id: String::new(),
            model: a.model[i[Axis::Model]].id.clone(),
            finetune: a.finetune[i[Axis::Finetune]].to_string(),
            reward: a.reward[i[Axis::Reward]].to_string(),
            group_size: a.group_size[i[Axis::GroupSize]],
            max_response_len: a.max_response_len[i[Axis::MaxResponseLen]],
            update_epochs: a.update_epochs[i[Axis::UpdateEpochs]],
            prompts_per_step: a.prompts_per_step[i[Axis::PromptsPerStep]],
            pilot_budget: budget.amount,
            budget_unit: budget.unit.as_str().to_string(),
            steps,
            eval_every_steps: (steps / TARGET_CHECKPOINTS).max(1),
            update_fraction: p,
            cost_per_step: ledger.per_iteration(budget.unit),
            expected_usd: ledger.total_usd(),
            expected_gpu_hours: ledger.total_gpu_hours(),
            expected_wall_hours: ledger.wall_hours(),
            prior_score: prediction.score,
        },
    })
}

/// Greedy maximin order of a stratum's candidates (normalised features, update fraction ×2).
fn space_filling_order(candidates: &[Candidate], count: usize) -> Vec<usize> {
    if candidates.is_empty() || count == 0 {
        return Vec::new();
    }
    let mut lo = [f64::INFINITY; 6];
    let mut hi = [f64::NEG_INFINITY; 6];
    for c in candidates {
        for k in 0..6 {
            lo[k] = lo[k].min(c.features[k]);
            hi[k] = hi[k].max(c.features[k]);
        }
    }
    let weights = [2.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let norm = |c: &Candidate| -> [f64; 6] {
        let mut v = [0.0; 6];
        for k in 0..6 {
            let span = hi[k] - lo[k];
            v[k] = if span > 0.0 {
                weights[k] * (c.features[k] - lo[k]) / span
            } else {
                0.0
            };
        }
        v
    };
    let points: Vec<[f64; 6]> = candidates.iter().map(norm).collect();
    let distance =
        |a: &[f64; 6], b: &[f64; 6]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
    let mut chosen: Vec<usize> = Vec::new();
    // The two extremes of the update fraction first.
    let by_p = |better: fn(f64, f64) -> bool| {
        let mut best = 0;
        for (k, c) in candidates.iter().enumerate() {
            if better(c.features[0], candidates[best].features[0]) {
                best = k;
            }
        }
        best
    };
    chosen.push(by_p(|a, b| a < b));
    let top = by_p(|a, b| a > b);
    if !chosen.contains(&top) && chosen.len() < count {
        chosen.push(top);
    }
    let mut nearest: Vec<f64> = points
        .iter()
        .map(|p| {
            chosen
                .iter()
                .map(|&c| distance(p, &points[c]))
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    while chosen.len() < count.min(candidates.len()) {
        let mut best = None;
        for (k, &d) in nearest.iter().enumerate() {
            if chosen.contains(&k) {
                continue;
            }
            if best.is_none_or(|(_, bd)| d > bd) {
                best = Some((k, d));
            }
        }
        let Some((k, d)) = best else { break };
        if d <= 0.0 {
            break; // every remaining candidate duplicates a chosen one in feature space
        }
        chosen.push(k);
        for (j, p) in points.iter().enumerate() {
            nearest[j] = nearest[j].min(distance(p, &points[k]));
        }
    }
    chosen
}

/// The feasible candidates of every model × reward stratum that has one, in stratum order.
/// Errors when none has, or when `max_pilots` cannot cover them.
pub(crate) fn strata(grid: &Grid, request: &PlanRequest) -> Result<Vec<Vec<Candidate>>> {
    let mut strata: Vec<((usize, usize), Vec<Candidate>)> = Vec::new();
    for m in 0..grid.axes.model.len() {
        for r in 0..grid.axes.reward.len() {
            strata.push(((m, r), Vec::new()));
        }
    }
    for i in lever_combinations(grid) {
        if let Some(c) = candidate(grid, i, request.budget) {
            let s = i[Axis::Model] * grid.axes.reward.len() + i[Axis::Reward];
            strata[s].1.push(c);
        }
    }
    let empty: Vec<String> = strata
        .iter()
        .filter(|(_, c)| c.is_empty())
        .map(|((m, r), _)| format!("{} / {}", grid.axes.model[*m].id, grid.axes.reward[*r]))
        .collect();
    if empty.len() == strata.len() {
        return Err(Error::in_setting(
            "pilot_budget",
            format!(
                "no lever combination of grid `{}` affords {MIN_PILOT_STEPS} iterations at {}; raise the pilot budget",
                grid.name, request.budget
            ),
        ));
    }
    strata.retain(|(_, c)| !c.is_empty());
    if request.max_pilots < strata.len() {
        return Err(Error::in_setting(
            "max_pilots",
            format!(
                "{} pilots cannot cover the {} model x reward combinations that are feasible at this budget; use at least {}",
                request.max_pilots,
                strata.len(),
                strata.len()
            ),
        ));
    }
    Ok(strata.into_iter().map(|(_, c)| c).collect())
}

/// Chooses the pilots. Errors say what to change when the request cannot be met.
pub fn choose(grid: &Grid, request: &PlanRequest) -> Result<Vec<PilotRun>> {
    let strata = strata(grid, request)?;
    // Pilots per stratum: an even share, the remainder to the first strata.
    let share = request.max_pilots / strata.len();
    let extra = request.max_pilots % strata.len();
    let mut orders: Vec<Vec<Candidate>> = strata
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let want = share + usize::from(k < extra);
            space_filling_order(c, want)
                .into_iter()
                .map(|j| c[j].clone())
                .collect()
        })
        .collect();
    // Within the dollar cap: drop the last-chosen pilot of the largest stratum until it fits.
    if let Some(cap) = request.max_total_usd {
        loop {
            let total: f64 = orders.iter().flatten().map(|c| c.run.expected_usd).sum();
            if total <= cap {
                break;
            }
            let Some(k) = (0..orders.len())
                .filter(|&k| orders[k].len() > 1)
                .max_by_key(|&k| (orders[k].len(), std::cmp::Reverse(k)))
            else {
                return Err(Error::in_setting(
                    "pilot_usd",
                    format!(
                        "one pilot per model x reward already costs ${:.2}, above ${cap:.2}; raise ⟨pilot_usd⟩ or lower ⟨pilot_budget⟩",
                        total
                    ),
                ));
            };
            orders[k].pop();
        }
    }
    Ok(with_run_ids(grid, orders.into_iter().flatten().collect()))
}

/// The chosen candidates as runs, in grid order of their lever combinations, named p001, p002, …
pub(crate) fn with_run_ids(grid: &Grid, chosen: Vec<Candidate>) -> Vec<PilotRun> {
    let mut runs: Vec<(AxisIndices, PilotRun)> =
        chosen.into_iter().map(|c| (c.indices, c.run)).collect();
    runs.sort_by_key(|(i, _)| grid.encode(i));
    runs.into_iter()
        .enumerate()
        .map(|(k, (_, mut run))| {
            run.run_id = format!("p{:03}", k + 1);
            run
        })
        .collect()
}

/// The ledger of a planned run (for launch scripts).
pub fn run_ledger(grid: &Grid, indices: &AxisIndices, budget: Budget) -> crate::ledger::Ledger {
    ledger_at(grid, indices, Stop::Budget(budget))
}
