//! `plan --decide BUDGET`: pilots chosen to settle the recommendation at a target budget, and a
//! simulated loop that measures how often each design's calibrated recommendation is the truly
//! best regime.
//!
//! The space-filling plan ([`super::plan::choose`]) spreads pilots over the levers. With a target
//! budget the question is narrower: which pilots, for the same pilot dollars, most reduce the
//! chance of recommending the wrong regime there? The answer here is Bayesian experimental design
//! for a contrast, linearised (c-optimality; Chaloner and Verdinelli 1995, "Bayesian
//! experimental design: a review", Statistical Science 10(3), §2.2):
//!
//! - The calibration's free parameters u (the ones `fit` would fit, [`default_free`]) have the
//!   prior's stated uncertainty, Σ₀ = diag(sd²) in the calibration's unconstrained space
//!   ([`stated_prior`]).
//! - **Contenders**: the target budget's cells that win in draws of u from the prior (the
//!   [`SCREENED`] best by point prediction are drawn [`PRIOR_DRAWS`] times); the recommendation
//!   today is the best at the prior's point; the others are the regimes it could be confused with.
//! - A pilot's checkpoints measure its score at each step with noise σ (`--noise-sd`); linearised
//!   around the prior, each adds gᵀg/σ² to the information, g = ∂score/∂u by central
//!   differences, divided by the run's checkpoints as the calibration weighs every run the same.
//! - The pilots are chosen greedily (one per model × reward stratum first, as `fit` needs them,
//!   then the most useful of any stratum) to minimise Σₖ wₖ hₖᵀ Σ_D hₖ, the posterior variance of
//!   the contrasts hₖ = ∇(score_A − score_k) between the recommendation A and each contender k,
//!   weighted by how often k wins under the prior. The pilot dollars never exceed the
//!   space-filling plan's (nor `--pilot-usd`).
//! - **P(wrong)**: before the pilots, the share of prior draws of the truth whose best contender
//!   is not A; after, in the linear-Gaussian model the posterior mean û is drawn from
//!   N(u₀, Σ₀ − Σ_D) and the truth from N(û, Σ_D), and the recommendation is the best under û.
//!   Both designs are scored the same way.
//!
//! The linearisation and the Gaussian prior are the model's own; the regime discrepancy (what no
//! pilot at the pilot budget can see) is left out of both P(wrong)s. The simulated loop
//! ([`compare_designs`]) checks the choice without either: truths drawn from the prior, pilots
//! simulated under them, calibrated by `fit`'s own MAP fit, and the recommendation at the target
//! budget compared with the truth's best over every cell of that budget.

use crate::config::Stop;
use crate::error::{Error, Result};
use crate::fit::calibrate::{Observation, calibrate_point, default_free, params_at, stated_prior};
use crate::fit::lm::{cholesky, inverse};
use crate::outcome::{CellSignal, OutcomeParams, predict_score};
use crate::rng::SplitMix64;
use crate::spec::Axis;
use crate::spec::Grid;

use super::PilotRun;
use super::plan::{Candidate, PlanRequest, choose, strata, with_run_ids};
use super::simulate::checkpoint_steps;

/// Target cells screened by point prediction for contenders.
pub const SCREENED: usize = 64;

/// Most contenders kept (by how often they win under the prior).
pub const CONTENDERS: usize = 8;

/// Draws of the prior that find the contenders and score P(wrong).
pub const PRIOR_DRAWS: usize = 400;

/// Default noise of one checkpoint's score: the standard error of a 500-problem benchmark near a
/// 50% pass rate is √(0.25/500) = 0.022.
pub const DEFAULT_NOISE_SD: f64 = 0.02;

/// Most cells a target budget may have (the target's cells are all evaluated).
pub const MAX_TARGET_CELLS: u64 = 2_000_000;

/// What `--decide` asks.
#[derive(Debug, Clone, Copy)]
pub struct DecideRequest {
    /// The target budget's index on the grid's budget axis.
    pub target_budget_index: usize,
    /// Noise sd of one checkpoint's score.
    pub noise_sd: f64,
}

/// The chosen pilots and what they are expected to settle.
#[derive(Debug, Clone)]
pub struct DecidedPlan {
    /// The pilots.
    pub runs: Vec<PilotRun>,
    /// P(wrong recommendation at the target) before any pilot.
    pub wrong_before: f64,
    /// After these pilots (linear-Gaussian model).
    pub wrong_after: f64,
    /// After the space-filling plan's pilots, scored the same way.
    pub space_filling_wrong_after: f64,
    /// The space-filling plan's pilot dollars (this plan spends at most that).
    pub space_filling_usd: f64,
    /// Cell ids of the contenders, the recommendation first.
    pub contenders: Vec<u64>,
    /// The free parameters the design is about.
    pub free: Vec<String>,
}

/// The index of `budget` on the grid's budget axis (the target of `--decide` must be one of the
/// grid's budgets: the recommendation is made there).
pub fn budget_index(grid: &Grid, budget: crate::config::Budget) -> Result<usize> {
    let crate::spec::BudgetAxis::Budgets { unit, amounts } = &grid.axes.budget else {
        return Err(Error::in_setting(
            "decide",
            format!(
                "grid `{}` fixes iterations, not budgets: ⟨decide⟩ needs a grid with a budget axis",
                grid.name
            ),
        ));
    };
    let found = (*unit == budget.unit)
        .then(|| {
            amounts
                .iter()
                .position(|a| (a - budget.amount).abs() <= 1e-9 * a.abs().max(budget.amount.abs()))
        })
        .flatten();
    found.ok_or_else(|| {
        let listed: Vec<String> = amounts
            .iter()
            .map(|a| format!("{} {}", crate::format::number(*a), unit.as_str()))
            .collect();
        Error::in_setting(
            "decide",
            format!(
                "{budget} is not a budget of grid `{}`; choose one of: {}",
                grid.name,
                listed.join(", ")
            ),
        )
    })
}

/// A cell of the target budget: its id and signal.
#[derive(Debug, Clone, Copy)]
struct Target {
    id: u64,
    signal: CellSignal,
}

/// A candidate pilot with the signals of its checkpoints.
struct PilotOption {
    candidate: Candidate,
    stratum: usize,
    checkpoints: Vec<CellSignal>,
}

/// The feasible cells of the target budget.
fn targets(grid: &Grid, budget_index: usize) -> Result<Vec<Target>> {
    let total = grid
        .cell_count()
        .map_err(|m| Error::in_setting("decide", m))?;
    let per_budget = total / grid.axes.budget.len().max(1) as u64;
    if per_budget > MAX_TARGET_CELLS {
        return Err(Error::in_setting(
            "decide",
            format!(
                "the grid has {per_budget} cells per budget; ⟨decide⟩ evaluates them all and takes at most {MAX_TARGET_CELLS}: narrow the grid"
            ),
        ));
    }
    Ok((0..total)
        .filter(|&id| grid.decode(id)[Axis::Budget] == budget_index)
        .filter_map(|id| crate::evaluate::evaluate_cell(grid, id))
        .filter(|e| e.ledger.feasible())
        .map(|e| Target {
            id: e.cell.id,
            signal: e.signal,
        })
        .collect())
}

/// Index of the best target under `params` (ties to the lower id).
fn best_of(params: &OutcomeParams, targets: &[Target], among: &[usize]) -> usize {
    let mut best = among[0];
    let mut best_score = f64::NEG_INFINITY;
    for &k in among {
        let s = predict_score(params, &targets[k].signal);
        if s > best_score {
            (best, best_score) = (k, s);
        }
    }
    best
}

/// u drawn from N(mean, L Lᵀ) with L lower-triangular row-major.
fn draw(mean: &[f64], l: &[f64], rng: &mut SplitMix64) -> Vec<f64> {
    let n = mean.len();
    let z: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    (0..n)
        .map(|i| mean[i] + (0..=i).map(|j| l[i * n + j] * z[j]).sum::<f64>())
        .collect()
}

/// The design problem of one grid: prior, free parameters, contenders and their contrasts.
struct Problem<'g> {
    grid: &'g Grid,
    free: Vec<&'static str>,
    u0: Vec<f64>,
    prior_precision: Vec<f64>,
    prior_l: Vec<f64>,
    targets: Vec<Target>,
    /// Indices into `targets`: the recommendation first.
    contenders: Vec<usize>,
    /// Per contender but the first: (weight, contrast gradient).
    contrasts: Vec<(f64, Vec<f64>)>,
    noise_sd: f64,
}

impl Problem<'_> {
    fn n(&self) -> usize {
        self.free.len()
    }

    fn params(&self, u: &[f64]) -> OutcomeParams {
        params_at(&self.grid.outcome, &self.free, u)
    }

    /// ∂score/∂u at the prior point, by central differences of 1% of each sd.
    fn gradient(&self, signal: &CellSignal) -> Vec<f64> {
        (0..self.n())
            .map(|i| {
                let h = 0.01 / self.prior_precision[i * self.n() + i].sqrt();
                let mut up = self.u0.clone();
                let mut down = self.u0.clone();
                up[i] += h;
                down[i] -= h;
                (predict_score(&self.params(&up), signal)
                    - predict_score(&self.params(&down), signal))
                    / (2.0 * h)
            })
            .collect()
    }

    /// A pilot's information matrix: Σₜ gₜgₜᵀ / (σ² · checkpoints).
    fn information(&self, checkpoints: &[CellSignal]) -> Vec<f64> {
        let n = self.n();
        let mut j = vec![0.0; n * n];
        let weight = 1.0 / (self.noise_sd.powi(2) * checkpoints.len().max(1) as f64);
        for signal in checkpoints {
            let g = self.gradient(signal);
            for a in 0..n {
                for b in 0..n {
                    j[a * n + b] += weight * g[a] * g[b];
                }
            }
        }
        j
    }

    /// The posterior covariance after pilots whose information sums to `information`.
    fn posterior(&self, information: &[f64]) -> Option<Vec<f64>> {
        let precision: Vec<f64> = self
            .prior_precision
            .iter()
            .zip(information)
            .map(|(p, i)| p + i)
            .collect();
        inverse(&precision, self.n())
    }

    /// Σₖ wₖ hₖᵀ Σ hₖ.
    fn objective(&self, covariance: &[f64]) -> f64 {
        let n = self.n();
        self.contrasts
            .iter()
            .map(|(w, h)| {
                let mut q = 0.0;
                for a in 0..n {
                    for b in 0..n {
                        q += h[a] * covariance[a * n + b] * h[b];
                    }
                }
                w * q
            })
            .sum()
    }

    /// P(wrong recommendation) with posterior covariance `after` (None: before any pilot).
    fn wrong(&self, after: Option<&[f64]>, seed: u64) -> f64 {
        let n = self.n();
        let prior_cov: Vec<f64> = inverse(&self.prior_precision, n).unwrap_or_default();
        let (mean_l, truth_l) = match after {
            None => (vec![0.0; n * n], self.prior_l.clone()),
            Some(post) => {
                let spread: Vec<f64> = prior_cov.iter().zip(post).map(|(p, q)| p - q).collect();
                match (cholesky(&spread, n), cholesky(post, n)) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return f64::NAN,
                }
            }
        };
        let mut rng = SplitMix64::new(seed, 0xDEC1DE);
        let mut wrong = 0usize;
        for _ in 0..PRIOR_DRAWS {
            let estimate = draw(&self.u0, &mean_l, &mut rng);
            let truth = draw(&estimate, &truth_l, &mut rng);
            let chosen = best_of(&self.params(&estimate), &self.targets, &self.contenders);
            let best = best_of(&self.params(&truth), &self.targets, &self.contenders);
            wrong += usize::from(chosen != best);
        }
        wrong as f64 / PRIOR_DRAWS as f64
    }
}

/// Builds the design problem: the target's cells, the free parameters and the contenders.
fn problem<'g>(
    grid: &'g Grid,
    options: &[PilotOption],
    decide: &DecideRequest,
) -> Result<Problem<'g>> {
    let targets = targets(grid, decide.target_budget_index)?;
    if targets.is_empty() {
        return Err(Error::in_setting(
            "decide",
            "no cell of the target budget is feasible: choose another budget",
        ));
    }
    let observations: Vec<Observation> = options
        .iter()
        .enumerate()
        .flat_map(|(k, o)| {
            o.checkpoints.iter().map(move |s| Observation {
                run: k,
                signal: *s,
                value: 0.0,
            })
        })
        .collect();
    let free = default_free(&observations);
    let prior = stated_prior(&grid.outcome, &free);
    let n = free.len();
    let u0: Vec<f64> = prior.iter().map(|p| p.0).collect();
    let mut prior_precision = vec![0.0; n * n];
    let mut prior_l = vec![0.0; n * n];
    for (i, (_, sd)) in prior.iter().enumerate() {
        prior_precision[i * n + i] = 1.0 / (sd * sd);
        prior_l[i * n + i] = *sd;
    }
    let mut p = Problem {
        grid,
        free,
        u0,
        prior_precision,
        prior_l,
        targets,
        contenders: Vec::new(),
        contrasts: Vec::new(),
        noise_sd: decide.noise_sd,
    };
    p.contenders = contenders(&p);
    let a = p.contenders[0];
    let g_a = p.gradient(&p.targets[a].signal);
    let wins = win_shares(&p, &p.contenders);
    p.contrasts = p.contenders[1..]
        .iter()
        .zip(&wins[1..])
        .map(|(&k, &w)| {
            let g_k = p.gradient(&p.targets[k].signal);
            (
                w.max(1.0 / PRIOR_DRAWS as f64),
                g_a.iter().zip(&g_k).map(|(x, y)| x - y).collect(),
            )
        })
        .collect();
    Ok(p)
}

/// The share of prior draws each of `among` wins.
fn win_shares(p: &Problem, among: &[usize]) -> Vec<f64> {
    let mut rng = SplitMix64::new(p.grid.seed, 0xC0_17E5);
    let mut wins = vec![0usize; among.len()];
    for _ in 0..PRIOR_DRAWS {
        let u = draw(&p.u0, &p.prior_l, &mut rng);
        let best = best_of(&p.params(&u), &p.targets, among);
        wins[among.iter().position(|&k| k == best).expect("among")] += 1;
    }
    wins.iter()
        .map(|&w| w as f64 / PRIOR_DRAWS as f64)
        .collect()
}

/// The recommendation at the prior's point, then the other screened cells that win in prior
/// draws, most often first, at most [`CONTENDERS`] in all.
fn contenders(p: &Problem) -> Vec<usize> {
    let prior = p.params(&p.u0);
    let mut order: Vec<(f64, usize)> = p
        .targets
        .iter()
        .enumerate()
        .map(|(k, t)| (predict_score(&prior, &t.signal), k))
        .collect();
    order.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(p.targets[a.1].id.cmp(&p.targets[b.1].id))
    });
    let screened: Vec<usize> = order.iter().take(SCREENED).map(|&(_, k)| k).collect();
    let wins = win_shares(p, &screened);
    let mut ranked: Vec<(f64, usize)> = screened
        .iter()
        .zip(&wins)
        .filter(|(k, w)| **w > 0.0 && **k != screened[0])
        .map(|(&k, &w)| (w, k))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    std::iter::once(screened[0])
        .chain(ranked.into_iter().map(|(_, k)| k))
        .take(CONTENDERS)
        .collect()
}

/// The candidates with their checkpoints' signals, stratum by stratum.
fn options(grid: &Grid, request: &PlanRequest) -> Result<Vec<PilotOption>> {
    let strata = strata(grid, request)?;
    Ok(strata
        .into_iter()
        .enumerate()
        .flat_map(|(stratum, candidates)| {
            candidates
                .into_iter()
                .map(move |candidate| (stratum, candidate))
        })
        .map(|(stratum, candidate)| PilotOption {
            checkpoints: checkpoint_signals(grid, &candidate),
            candidate,
            stratum,
        })
        .collect())
}

/// The signals of a candidate pilot at its checkpoints (as `simulate` evaluates them).
fn checkpoint_signals(grid: &Grid, c: &Candidate) -> Vec<CellSignal> {
    checkpoint_steps(c.run.steps, c.run.eval_every_steps)
        .into_iter()
        .map(|step| {
            let config = super::config_at(grid, &c.indices, Stop::Iterations(step));
            let ledger = crate::ledger::evaluate(&config);
            crate::evaluate::grid_signal(grid, &config, &ledger)
        })
        .collect()
}

/// Chooses pilots that settle the recommendation at the target budget (see the module doc).
pub fn choose_to_decide(
    grid: &Grid,
    request: &PlanRequest,
    decide: &DecideRequest,
) -> Result<DecidedPlan> {
    // A score's measurement noise: below 1e-4 (a hundredth of a point) no evaluation set is that
    // precise, and a tiny sd made every pilot's information infinite (a plan of 0 pilots).
    if !(decide.noise_sd.is_finite() && (1e-4..=0.5).contains(&decide.noise_sd)) {
        return Err(Error::in_setting(
            "noise_sd",
            format!(
                "{} is not a score's measurement sd; use a number from 0.0001 to 0.5 (a 500-problem set at 50%: 0.022)",
                crate::format::number(decide.noise_sd)
            ),
        ));
    }
    let space_filling = choose(grid, request)?;
    let options = options(grid, request)?;
    let p = problem(grid, &options, decide)?;
    Ok(decide_with(grid, request, &options, &p, &space_filling))
}

/// [`choose_to_decide`] on a built problem.
fn decide_with(
    grid: &Grid,
    request: &PlanRequest,
    options: &[PilotOption],
    p: &Problem,
    space_filling: &[PilotRun],
) -> DecidedPlan {
    let space_filling_usd: f64 = space_filling.iter().map(|r| r.expected_usd).sum();
    let cap = request
        .max_total_usd
        .map_or(space_filling_usd, |c| c.min(space_filling_usd));
    let n = p.n();
    let informations: Vec<Vec<f64>> = options
        .iter()
        .map(|o| p.information(&o.checkpoints))
        .collect();
    let strata = options.iter().map(|o| o.stratum).max().map_or(0, |m| m + 1);
    let mut chosen: Vec<usize> = Vec::new();
    let mut total = vec![0.0; n * n];
    let mut spent = 0.0;
    // One pilot per stratum first (the calibration's free set needs them), then any stratum.
    let phases: Vec<Option<usize>> = (0..strata)
        .map(Some)
        .chain(std::iter::repeat_n(
            None,
            request.max_pilots.saturating_sub(strata),
        ))
        .collect();
    for phase in phases {
        let pick = (0..options.len())
            .filter(|k| !chosen.contains(k))
            .filter(|&k| phase.is_none_or(|s| options[k].stratum == s))
            .filter(|&k| spent + options[k].candidate.run.expected_usd <= cap * (1.0 + 1e-9))
            .filter_map(|k| {
                let sum: Vec<f64> = total
                    .iter()
                    .zip(&informations[k])
                    .map(|(a, b)| a + b)
                    .collect();
                Some((p.objective(&p.posterior(&sum)?), k))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let Some((_, k)) = pick else { continue };
        chosen.push(k);
        spent += options[k].candidate.run.expected_usd;
        for (t, i) in total.iter_mut().zip(&informations[k]) {
            *t += i;
        }
    }
    let space_information = space_filling_information(p, options, &informations, space_filling);
    let after = p.posterior(&total);
    let space_after = p.posterior(&space_information);
    DecidedPlan {
        wrong_before: p.wrong(None, grid.seed),
        wrong_after: after.map_or(f64::NAN, |c| p.wrong(Some(&c), grid.seed)),
        space_filling_wrong_after: space_after.map_or(f64::NAN, |c| p.wrong(Some(&c), grid.seed)),
        space_filling_usd,
        contenders: p.contenders.iter().map(|&k| p.targets[k].id).collect(),
        free: p.free.iter().map(|s| s.to_string()).collect(),
        runs: with_run_ids(
            grid,
            chosen
                .into_iter()
                .map(|k| options[k].candidate.clone())
                .collect(),
        ),
    }
}

/// The summed information of the space-filling plan's pilots (matched to the candidates by their
/// levers).
fn space_filling_information(
    p: &Problem,
    options: &[PilotOption],
    informations: &[Vec<f64>],
    runs: &[PilotRun],
) -> Vec<f64> {
    let n = p.n();
    let mut total = vec![0.0; n * n];
    for run in runs {
        if let Some(k) = options
            .iter()
            .position(|o| same_levers(&o.candidate.run, run))
        {
            for (t, i) in total.iter_mut().zip(&informations[k]) {
                *t += i;
            }
        }
    }
    total
}

fn same_levers(a: &PilotRun, b: &PilotRun) -> bool {
    (a.model.as_str(), a.finetune.as_str(), a.reward.as_str())
        == (b.model.as_str(), b.finetune.as_str(), b.reward.as_str())
        && (
            a.group_size,
            a.max_response_len,
            a.update_epochs,
            a.prompts_per_step,
        ) == (
            b.group_size,
            b.max_response_len,
            b.update_epochs,
            b.prompts_per_step,
        )
}

/// One design's record in the simulated loop.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DesignScore {
    /// Seeds whose calibrated recommendation is the truth's best cell of the target budget.
    pub hits: usize,
    /// Seeds simulated.
    pub seeds: usize,
    /// Mean regret: the truth's best score minus the truth's score of the recommendation, in
    /// score units.
    pub mean_regret: f64,
    /// Pilot dollars of the design.
    pub usd: f64,
}

/// Both designs over `seeds` simulated truths: (space-filling, decide).
pub fn compare_designs(
    grid: &Grid,
    request: &PlanRequest,
    decide: &DecideRequest,
    seeds: usize,
) -> Result<(DesignScore, DesignScore)> {
    let space = choose(grid, request)?;
    let options = options(grid, request)?;
    let p = problem(grid, &options, decide)?;
    let decided = decide_with(grid, request, &options, &p, &space);
    let all: Vec<usize> = (0..p.targets.len()).collect();
    let pilots = |runs: &[PilotRun]| -> Vec<Vec<CellSignal>> {
        runs.iter()
            .filter_map(|r| options.iter().find(|o| same_levers(&o.candidate.run, r)))
            .map(|o| o.checkpoints.clone())
            .collect()
    };
    let designs = [pilots(&space), pilots(&decided.runs)];
    let mut scores = [
        DesignScore {
            usd: space.iter().map(|r| r.expected_usd).sum(),
            ..DesignScore::default()
        },
        DesignScore {
            usd: decided.runs.iter().map(|r| r.expected_usd).sum(),
            ..DesignScore::default()
        },
    ];
    for seed in 0..seeds as u64 {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let mut rng = SplitMix64::new(grid.seed ^ 0x7E57, seed);
        let truth = p.params(&draw(&p.u0, &p.prior_l, &mut rng));
        let best = best_of(&truth, &p.targets, &all);
        let best_score = predict_score(&truth, &p.targets[best].signal);
        for (design, score) in designs.iter().zip(scores.iter_mut()) {
            let mut noise = SplitMix64::new(grid.seed ^ 0x7015E, seed);
            let observations: Vec<Observation> = design
                .iter()
                .enumerate()
                .flat_map(|(run, checkpoints)| checkpoints.iter().map(move |s| (run, *s)))
                .map(|(run, signal)| Observation {
                    run,
                    signal,
                    value: (predict_score(&truth, &signal) + decide.noise_sd * noise.normal())
                        .clamp(0.0, 1.0),
                })
                .collect();
            let free = default_free(&observations);
            let fitted =
                calibrate_point(&grid.outcome, &observations, &free).unwrap_or(grid.outcome);
            let chosen = best_of(&fitted, &p.targets, &all);
            score.seeds += 1;
            score.hits += usize::from(chosen == best);
            score.mean_regret += best_score - predict_score(&truth, &p.targets[chosen].signal);
        }
    }
    for s in &mut scores {
        s.mean_regret /= s.seeds.max(1) as f64;
    }
    Ok((scores[0], scores[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::config::{Budget, BudgetUnit};

    fn race_pilot() -> Grid {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grids/race-pilot.toml");
        crate::spec::load(&path, &Catalog::embedded()).unwrap()
    }

    fn request() -> PlanRequest {
        PlanRequest {
            budget: Budget {
                amount: 3e17,
                unit: BudgetUnit::Flops,
            },
            max_pilots: 24,
            max_total_usd: None,
        }
    }

    #[test]
    fn a_draw_is_the_mean_plus_the_factor_times_normals() {
        // L = [[2, 0], [1, 3]]: u = mean + (2 z₀, z₀ + 3 z₁).
        let l = [2.0, 0.0, 1.0, 3.0];
        let mut a = SplitMix64::new(5, 1);
        let mut b = SplitMix64::new(5, 1);
        let u = draw(&[1.0, -1.0], &l, &mut a);
        let (z0, z1) = (b.normal(), b.normal());
        assert!((u[0] - (1.0 + 2.0 * z0)).abs() < 1e-12);
        assert!((u[1] - (-1.0 + z0 + 3.0 * z1)).abs() < 1e-12);
    }

    #[test]
    fn the_target_must_be_one_of_the_grid_s_budgets() {
        let grid = race_pilot();
        let at = |amount: f64| {
            budget_index(
                &grid,
                Budget {
                    amount,
                    unit: BudgetUnit::Flops,
                },
            )
        };
        assert_eq!(at(1e18).unwrap(), 4);
        assert_eq!(at(1e16).unwrap(), 0);
        let e = at(7e17).unwrap_err().to_string();
        assert!(e.contains("choose one of: 1e16 flops"), "{e}");
    }

    #[test]
    fn the_decided_plan_covers_every_stratum_within_the_space_filling_dollars() {
        let grid = race_pilot();
        let decide = DecideRequest {
            target_budget_index: 4,
            noise_sd: DEFAULT_NOISE_SD,
        };
        let d = choose_to_decide(&grid, &request(), &decide).unwrap();
        let usd: f64 = d.runs.iter().map(|r| r.expected_usd).sum();
        assert!(usd <= d.space_filling_usd * (1.0 + 1e-9));
        assert!(d.runs.len() <= 24 && d.runs.len() >= 6);
        for model in ["qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b"] {
            for reward in ["rule", "prm:qwen2.5-math-prm-7b"] {
                assert!(
                    d.runs
                        .iter()
                        .any(|r| r.model == model && r.reward == reward)
                );
            }
        }
        assert!(d.wrong_after <= d.wrong_before);
        assert!(d.contenders.len() >= 2);
        // Deterministic: the same grid gives the same plan.
        let again = choose_to_decide(&grid, &request(), &decide).unwrap();
        assert_eq!(d.runs, again.runs);
        assert_eq!(d.wrong_after, again.wrong_after);
    }
}
