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
//! A cheaper reward shows up under "updates": it buys more steps with the same dollars, and the
//! model sees the steps, not the dollars.

use crate::outcome::{CellSignal, OutcomeParams, predict_score};

/// A lever of the outcome model, with the fields of [`CellSignal`] it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lever {
    /// Policy size (and its base score, measured or the default for the size).
    ModelSize,
    /// Optimizer updates: iterations and update epochs.
    Updates,
    /// Useful rollouts per step, coverage of G, and the share of the data a step uses.
    Rollouts,
    /// The response cap and the truncation it causes.
    Cap,
    /// The reward's kind (rule, PRM, ORM, judge).
    Reward,
    /// LoRA rank or full fine-tuning.
    Lora,
}

impl Lever {
    /// Every lever, in display order.
    pub const ALL: [Lever; 6] = [
        Lever::ModelSize,
        Lever::Updates,
        Lever::Rollouts,
        Lever::Cap,
        Lever::Reward,
        Lever::Lora,
    ];

    /// The lever's name in text and tables.
    pub fn label(self) -> &'static str {
        match self {
            Lever::ModelSize => "model size",
            Lever::Updates => "updates",
            Lever::Rollouts => "rollouts",
            Lever::Cap => "cap",
            Lever::Reward => "reward",
            Lever::Lora => "LoRA",
        }
    }

    /// Copies this lever's fields from `from` into `to`.
    fn apply(self, to: &mut CellSignal, from: &CellSignal) {
        match self {
            Lever::ModelSize => {
                to.policy_params = from.policy_params;
                to.measured_base_score = from.measured_base_score;
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
}

/// The Shapley split of `predict(winner) − predict(other)` over the levers on which the two
/// differ, in [`Lever::ALL`] order. Empty when they differ on none.
pub fn attribute(
    params: &OutcomeParams,
    winner: &CellSignal,
    other: &CellSignal,
) -> Vec<LeverShare> {
    let levers: Vec<Lever> = Lever::ALL
        .into_iter()
        .filter(|l| l.differs(winner, other))
        .collect();
    let n = levers.len();
    // v(S): the other regime with the levers in S moved to the winner's values.
    let value = |subset: usize| {
        let mut s = *other;
        for (i, lever) in levers.iter().enumerate() {
            if subset & (1 << i) != 0 {
                lever.apply(&mut s, winner);
            }
        }
        predict_score(params, &s)
    };
    let values: Vec<f64> = (0..1usize << n).map(value).collect();
    let factorial = |k: usize| (1..=k).map(|x| x as f64).product::<f64>();
    levers
        .iter()
        .enumerate()
        .map(|(i, &lever)| {
            let mut share = 0.0;
            for subset in (0..1usize << n).filter(|s| s & (1 << i) == 0) {
                let size = subset.count_ones() as usize;
                let weight = factorial(size) * factorial(n - size - 1) / factorial(n);
                share += weight * (values[subset | (1 << i)] - values[subset]);
            }
            LeverShare {
                lever,
                score: share,
            }
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
