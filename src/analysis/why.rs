//! Why one regime is predicted above another, in the outcome model's own terms: its advantage in
//! predicted score split over the levers a team chooses (model size, updates, useful rollouts,
//! the cap, the reward, LoRA).
//!
//! The split is the Shapley value of each lever (Shapley 1953, "A value for n-person games";
//! as used for feature attribution by Lundberg & Lee 2017, arXiv 1705.07874): the point
//! prediction with every subset of levers moved from the other regime to this one, each lever
//! credited with its average marginal change over the orders in which the levers could be moved.
//! The shares sum exactly to the difference of the two point predictions, and a lever the two
//! regimes share gets 0. Levers interact in the model (the same extra updates are worth more on a
//! bigger model), which is why the order-free Shapley split is used rather than moving them one
//! at a time.
//!
//! A cheaper reward shows up under "updates" in points: it buys more steps with the same dollars,
//! and the model sees the steps, not the dollars. The dollar split ([`explain`]) shows the other
//! side: the same Shapley split applied to the run's dollars (the ledger's, at each regime's own
//! iterations), so each lever reads as "what it adds in points, and what it adds in dollars".
//! On a fixed budget the dollar shares sum to about zero: a bigger model's dollars are paid for
//! by fewer updates, and the split says by how much. The rollout's setup (the engine, the
//! agent's turns and tool latency) is [`Lever::Setup`]: the engine moves dollars only, the turns
//! can also change the tokens a step learns from.

use crate::config::Stop;
use crate::evaluate::Evaluated;
use crate::outcome::{CellSignal, OutcomeParams, predict_score};
use crate::spec::Axis;
use crate::spec::{AxisIndices, Grid};

pub use crate::spec::Lever;

impl Lever {
    /// Copies this lever's axes ([`Axis::lever`]) from `from` into `to` (its iterations are
    /// moved by the caller: they are no axis).
    fn apply_axes(self, to: &mut AxisIndices, from: &AxisIndices) {
        for axis in Axis::ALL {
            if axis.lever() == Some(self) {
                to[axis] = from[axis];
            }
        }
    }

    /// Copies this lever's fields from `from` into `to`.
    fn apply(self, to: &mut CellSignal, from: &CellSignal) {
        match self {
            Lever::ModelSize => {
                to.policy_params = from.policy_params;
                to.measured_base_score = from.measured_base_score;
                to.ability_score = from.ability_score;
            }
            Lever::Updates => {
                to.iterations = from.iterations;
                to.update_epochs = from.update_epochs;
            }
            Lever::Rollouts => {
                to.useful_rollouts_per_step = from.useful_rollouts_per_step;
                to.coverage = from.coverage;
                to.pass_share_per_step = from.pass_share_per_step;
            }
            Lever::Cap => {
                to.response_cap_tokens = from.response_cap_tokens;
                to.truncation_rate = from.truncation_rate;
            }
            Lever::Reward => to.reward = from.reward,
            Lever::Lora => to.lora_rank = from.lora_rank,
            Lever::Setup => {}
        }
    }

    /// Whether the two signals differ on this lever.
    fn differs(self, a: &CellSignal, b: &CellSignal) -> bool {
        let mut moved = *b;
        self.apply(&mut moved, a);
        moved != *b
    }
}

/// One lever's share of a regime's predicted advantage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeverShare {
    /// The lever.
    pub lever: Lever,
    /// Its share, in score units (0 to 1; × 100 for points).
    pub score: f64,
    /// Its share of the difference in run dollars (None when only scores were split).
    pub usd: Option<f64>,
}

/// The Shapley values of `n` players from the values of every coalition: `values[s]` is v(S)
/// for the coalition whose members are the bits of `s` (so `values.len()` is 2ⁿ).
/// φᵢ = Σ_{S ∌ i} |S|!(n−|S|−1)!/n! · (v(S ∪ {i}) − v(S)) (Shapley 1953).
fn shapley(n: usize, values: &[f64]) -> Vec<f64> {
    debug_assert_eq!(values.len(), 1 << n);
    let factorial = |k: usize| (1..=k).map(|x| x as f64).product::<f64>();
    (0..n)
        .map(|i| {
            (0..1usize << n)
                .filter(|s| s & (1 << i) == 0)
                .map(|subset| {
                    let size = subset.count_ones() as usize;
                    let weight = factorial(size) * factorial(n - size - 1) / factorial(n);
                    weight * (values[subset | (1 << i)] - values[subset])
                })
                .sum()
        })
        .collect()
}

/// The point prediction of `other` with the levers of `subset` (bits into `levers`) moved to
/// `winner`'s values.
fn moved_score(
    params: &OutcomeParams,
    levers: &[Lever],
    subset: usize,
    winner: &CellSignal,
    other: &CellSignal,
) -> f64 {
    let mut s = *other;
    for (i, lever) in levers.iter().enumerate() {
        if subset & (1 << i) != 0 {
            lever.apply(&mut s, winner);
        }
    }
    predict_score(params, &s)
}

/// The Shapley split of `predict(winner) − predict(other)` over the levers on which the two
/// differ, in [`Lever::ALL`] order, in points only. Empty when they differ on none.
pub fn attribute(
    params: &OutcomeParams,
    winner: &CellSignal,
    other: &CellSignal,
) -> Vec<LeverShare> {
    let levers: Vec<Lever> = Lever::ALL
        .into_iter()
        .filter(|l| l.differs(winner, other))
        .collect();
    let values: Vec<f64> = (0..1usize << levers.len())
        .map(|subset| moved_score(params, &levers, subset, winner, other))
        .collect();
    levers
        .iter()
        .zip(shapley(levers.len(), &values))
        .map(|(&lever, score)| LeverShare {
            lever,
            score,
            usd: None,
        })
        .collect()
}

/// The Shapley split of `winner`'s advantage over `other`, two regimes of `grid`, in points
/// and in run dollars, over the levers on which their axes (or their iterations) differ. A
/// coalition's value is `other`'s run with the coalition's axes moved to `winner`'s, at
/// `winner`'s iterations when the updates move, priced by the ledger and predicted by the
/// outcome model as a cell of its own: so an effect is credited to the axis that causes it
/// (a bigger model's higher pass rates change the useful rollouts, and that is the model's
/// doing). The point shares sum to the difference of the two point predictions, the dollar
/// shares to the difference of the two runs' dollars. When a coalition's run is not a cell of
/// the grid (its constraints prune it), the split falls back to [`attribute`]'s, in points only.
pub fn explain(grid: &Grid, winner: &Evaluated, other: &Evaluated) -> Vec<LeverShare> {
    let (w, o) = (&winner.cell.indices, &other.cell.indices);
    let axes_differ = |l: Lever| {
        let mut moved = *o;
        l.apply_axes(&mut moved, w);
        moved != *o
    };
    let iterations_differ = winner.ledger.iterations != other.ledger.iterations;
    let levers: Vec<Lever> = Lever::ALL
        .into_iter()
        .filter(|&l| axes_differ(l) || (l == Lever::Updates && iterations_differ))
        .collect();
    let n = levers.len();
    let coalitions: Option<Vec<(f64, f64)>> = (0..1usize << n)
        .map(|subset| {
            let mut indices = *o;
            let mut iterations = other.ledger.iterations;
            for (i, lever) in levers.iter().enumerate() {
                if subset & (1 << i) != 0 {
                    lever.apply_axes(&mut indices, w);
                    if *lever == Lever::Updates {
                        iterations = winner.ledger.iterations;
                    }
                }
            }
            let cell = grid.cell(grid.encode(&indices))?;
            let mut config = cell.run_config(grid);
            config.stop = Stop::Iterations(iterations);
            let ledger = crate::ledger::evaluate(&config);
            let signal = crate::evaluate::grid_signal(grid, &config, &ledger);
            Some((predict_score(&grid.outcome, &signal), ledger.total_usd()))
        })
        .collect();
    let Some(coalitions) = coalitions else {
        return attribute(&grid.outcome, &winner.signal, &other.signal);
    };
    let scores: Vec<f64> = coalitions.iter().map(|c| c.0).collect();
    let dollars: Vec<f64> = coalitions.iter().map(|c| c.1).collect();
    levers
        .iter()
        .zip(shapley(n, &scores))
        .zip(shapley(n, &dollars))
        .map(|((&lever, score), usd)| LeverShare {
            lever,
            score,
            usd: Some(usd),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RewardKind;
    use crate::outcome::{Benchmark, StartKind};

    fn signal(params: f64, iterations: f64, lora: Option<u64>) -> CellSignal {
        CellSignal {
            policy_params: params,
            iterations,
            update_epochs: 1.0,
            useful_rollouts_per_step: 1024.0,
            coverage: 0.9,
            truncation_rate: 0.02,
            pass_rate_mean: 0.35,
            response_cap_tokens: 8192.0,
            start: StartKind::Base,
            benchmark: Benchmark::Standard,
            reward: RewardKind::Rule,
            lora_rank: lora,
            measured_base_score: None,
            ability_score: None,
            pass_share_per_step: None,
        }
    }

    #[test]
    fn the_shares_sum_to_the_difference_and_shared_levers_get_nothing() {
        let params = OutcomeParams::default();
        let a = signal(32e9, 400.0, None);
        let b = signal(7e9, 900.0, Some(64));
        let split = attribute(&params, &a, &b);
        let levers: Vec<Lever> = split.iter().map(|s| s.lever).collect();
        assert_eq!(levers, [Lever::ModelSize, Lever::Updates, Lever::Lora]);
        let total: f64 = split.iter().map(|s| s.score).sum();
        let difference = predict_score(&params, &a) - predict_score(&params, &b);
        assert!(
            (total - difference).abs() < 1e-12,
            "{total} vs {difference}"
        );
        assert!(attribute(&params, &a, &a).is_empty());
    }

    #[test]
    fn one_lever_gets_the_whole_difference() {
        // Hand-computed: with one differing lever the Shapley value is v({i}) − v(∅).
        let params = OutcomeParams::default();
        let a = signal(7e9, 800.0, None);
        let b = signal(7e9, 200.0, None);
        let split = attribute(&params, &a, &b);
        assert_eq!(split.len(), 1);
        assert_eq!(split[0].lever, Lever::Updates);
        let expected = predict_score(&params, &a) - predict_score(&params, &b);
        assert_eq!(split[0].score, expected);
        assert!(expected > 0.0);
    }

    /// Two cells of the bundled dollars grid (budget $50k): `edit` moves the second's axes.
    fn dollars_pair(
        grid: &Grid,
        edit: impl Fn(&mut AxisIndices),
    ) -> (
        crate::evaluate::Evaluated<'_>,
        crate::evaluate::Evaluated<'_>,
    ) {
        let mut a = grid.decode(0);
        a[Axis::Budget] = 1;
        let mut b = a;
        edit(&mut b);
        let evaluate =
            |i: &AxisIndices| crate::evaluate::evaluate_cell(grid, grid.encode(i)).unwrap();
        (evaluate(&a), evaluate(&b))
    }

    fn dollars_grid() -> Grid {
        let text = crate::spec::bundled_grid(std::path::Path::new("dollars")).unwrap();
        crate::spec::parse(
            text,
            std::path::Path::new("dollars.toml"),
            &crate::catalog::Catalog::embedded(),
        )
        .unwrap()
    }

    #[test]
    fn the_dollar_shares_sum_to_the_two_runs_dollars_and_the_points_to_their_scores() {
        let grid = dollars_grid();
        let (a, b) = dollars_pair(&grid, |b| {
            b[Axis::Model] = 2;
            b[Axis::UpdateEpochs] = 1;
            b[Axis::Finetune] = 1;
            b[Axis::MaxResponseLen] = 2;
        });
        let split = explain(&grid, &b, &a);
        let levers: Vec<Lever> = split.iter().map(|s| s.lever).collect();
        assert_eq!(
            levers,
            [Lever::ModelSize, Lever::Updates, Lever::Cap, Lever::Lora]
        );
        let usd: f64 = split.iter().map(|s| s.usd.unwrap()).sum();
        let difference = b.ledger.total_usd() - a.ledger.total_usd();
        assert!(
            (usd - difference).abs() < 1e-9 * a.ledger.total_usd(),
            "{usd} vs {difference}"
        );
        let points: f64 = split.iter().map(|s| s.score).sum();
        let predicted = b.prediction.score - a.prediction.score;
        assert!((points - predicted).abs() < 1e-9, "{points} vs {predicted}");
    }

    #[test]
    fn a_cap_and_its_updates_split_the_dollars_as_by_hand() {
        // Hand-computed: two players, v(∅) = c_o·n_o, v(cap) = c_w·n_o, v(updates) = c_o·n_w,
        // v(both) = c_w·n_w (c dollars per step, n iterations), so the Shapley values are
        // φ_cap = ½(c_w − c_o)(n_o + n_w) and φ_updates = ½(n_w − n_o)(c_w + c_o). The formula
        // has no cost paid once per run: no start-up, no validation before training.
        let mut grid = dollars_grid();
        for run in std::iter::once(&mut grid.run).chain(grid.agent_runs.iter_mut()) {
            run.startup_seconds = Some(0.0);
            run.validation_before_training = false;
        }
        let (o, w) = dollars_pair(&grid, |b| b[Axis::MaxResponseLen] = 2);
        let (c_o, c_w) = (o.ledger.total_usd_per_step(), w.ledger.total_usd_per_step());
        let (n_o, n_w) = (o.ledger.iterations as f64, w.ledger.iterations as f64);
        assert_ne!(n_o, n_w, "a longer cap buys fewer steps of the same budget");
        let split = explain(&grid, &w, &o);
        let by = |l: Lever| split.iter().find(|s| s.lever == l).unwrap();
        let cap = 0.5 * (c_w - c_o) * (n_o + n_w);
        let updates = 0.5 * (n_w - n_o) * (c_w + c_o);
        assert!(
            (by(Lever::Cap).usd.unwrap() - cap).abs() < 1e-9 * cap.abs(),
            "{} vs {cap}",
            by(Lever::Cap).usd.unwrap()
        );
        assert!((by(Lever::Updates).usd.unwrap() - updates).abs() < 1e-9 * updates.abs());
        assert!(cap > 0.0 && updates < 0.0);
    }

    #[test]
    fn the_engine_moves_dollars_and_never_points() {
        // The outcome model does not see the engine: moving it alone changes the run's dollars
        // (and so, on a budget, its updates) but adds no points of its own.
        let text = crate::spec::bundled_grid(std::path::Path::new("dollars"))
            .unwrap()
            .replace(
                "[axes]\n",
                "[axes]\nengine = [\"vllm-cudagraph\", \"vllm-eager\"]\n",
            );
        let grid = crate::spec::parse(
            &text,
            std::path::Path::new("dollars.toml"),
            &crate::catalog::Catalog::embedded(),
        )
        .unwrap();
        let (o, w) = dollars_pair(&grid, |b| b[Axis::Engine] = 1);
        let split = explain(&grid, &w, &o);
        let setup = split.iter().find(|s| s.lever == Lever::Setup).unwrap();
        assert_eq!(setup.score, 0.0);
        assert!(
            setup.usd.unwrap() > 0.0,
            "eager decoding costs more per step"
        );
    }

    #[test]
    fn two_interacting_levers_split_the_interaction_evenly() {
        // Two levers: φ₁ = ½[(v(1) − v(∅)) + (v(12) − v(2))], φ₂ the same with 1 and 2 swapped.
        let params = OutcomeParams::default();
        let a = signal(32e9, 800.0, None);
        let b = signal(7e9, 200.0, None);
        let v = |size: bool, steps: bool| {
            let s = signal(
                if size { 32e9 } else { 7e9 },
                if steps { 800.0 } else { 200.0 },
                None,
            );
            predict_score(&params, &s)
        };
        let size = 0.5 * ((v(true, false) - v(false, false)) + (v(true, true) - v(false, true)));
        let split = attribute(&params, &a, &b);
        assert!((split[0].score - size).abs() < 1e-12);
    }
}
