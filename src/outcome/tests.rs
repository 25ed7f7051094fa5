//! Outcome prior: formula values, interval properties, and the three qualitative findings it
//! must reproduce on the bundled grids.

use std::path::Path;

use super::*;
use crate::catalog::Catalog;
use crate::evaluate::evaluate_cell;
use crate::spec::{self, Grid};

fn signal(
    iterations: f64,
    coverage: f64,
    reward: RewardKind,
    lora_rank: Option<u64>,
) -> CellSignal {
    CellSignal {
        policy_params: REFERENCE_PARAMS,
        iterations,
        update_epochs: 1.0,
        useful_rollouts_per_step: REFERENCE_ROLLOUTS,
        coverage,
        truncation_rate: 0.0,
        reward,
        lora_rank,
        measured_base_score: None,
    }
}

#[test]
fn sigmoid_hand_values() {
    // ScaleRL's curve: at K = K_mid the score is halfway between R0 and A.
    assert!((sigmoid_score(0.4, 0.6, 100.0, 100.0, 1.5) - 0.5).abs() < 1e-15);
    // K = 3·K_mid, β = 1: R0 + (A − R0)·3/4.
    assert!((sigmoid_score(0.4, 0.6, 300.0, 100.0, 1.0) - 0.55).abs() < 1e-15);
    assert_eq!(sigmoid_score(0.4, 0.6, 0.0, 100.0, 1.0), 0.4);
}

#[test]
fn reference_cell_by_hand() {
    // 7.6e9 parameters, 1024 useful rollouts, one epoch, rule reward, full coverage, no
    // truncation: R0 = 0.45, A = 0.70, K = iterations, K_mid = 10. At 10 iterations the score is
    // the midpoint 0.575.
    let p = predict(
        &OutcomeParams::default(),
        &signal(10.0, 1.0, RewardKind::Rule, None),
    );
    assert!((p.base_score - 0.45).abs() < 1e-12);
    assert!((p.ceiling - 0.70).abs() < 1e-12);
    assert!((p.signal - 10.0).abs() < 1e-9);
    assert!((p.score - 0.575).abs() < 1e-9);
    assert!(p.score_low < p.score && p.score < p.score_high);
}

#[test]
fn lora_efficiency_matches_verl_guide() {
    // veRL LoRA guide: rank 32 nearly matches full fine-tuning at 0.5B, rank 128 at 32B. With the
    // defaults both reach 90% of full fine-tuning's learning per update.
    let params = OutcomeParams::default();
    let efficiency = |n: f64, r: f64| {
        let half = params.lora_half_rank_at_0_5b.value
            * (n / 0.5e9).powf(params.lora_half_rank_size_exponent.value);
        r / (r + half)
    };
    assert!((efficiency(0.5e9, 32.0) - 0.9).abs() < 0.01);
    assert!((efficiency(32e9, 128.0) - 0.9).abs() < 0.02);
}

#[test]
fn prediction_moves_the_right_way() {
    let params = OutcomeParams::default();
    let base = predict(&params, &signal(10.0, 0.8, RewardKind::Rule, None));
    // More iterations, more coverage: higher. A LoRA adapter: lower than full fine-tuning.
    assert!(predict(&params, &signal(20.0, 0.8, RewardKind::Rule, None)).score > base.score);
    assert!(predict(&params, &signal(10.0, 0.9, RewardKind::Rule, None)).score > base.score);
    assert!(predict(&params, &signal(10.0, 0.8, RewardKind::Rule, Some(8))).score < base.score);
    // A PRM learns faster early but has a lower ceiling.
    let early_prm = predict(&params, &signal(2.0, 0.8, RewardKind::Prm, None));
    let early_rule = predict(&params, &signal(2.0, 0.8, RewardKind::Rule, None));
    assert!(early_prm.score > early_rule.score);
    let late_prm = predict(&params, &signal(1e6, 0.8, RewardKind::Prm, None));
    let late_rule = predict(&params, &signal(1e6, 0.8, RewardKind::Rule, None));
    assert!(late_prm.score < late_rule.score);
    // Epochs have diminishing returns: reuse(ρ = 0.5, μ) = 1, 1.5, 1.75, 1.875.
    assert!((reuse(0.5, 2.0) - 1.5).abs() < 1e-12 && (reuse(0.5, 4.0) - 1.875).abs() < 1e-12);
}

#[test]
fn interval_brackets_every_corner_it_claims_to_cover() {
    // Moving any single parameter to either end of its range stays inside the interval.
    let params = OutcomeParams::default();
    for s in [
        signal(3.0, 0.6, RewardKind::Rule, Some(16)),
        signal(300.0, 0.95, RewardKind::Prm, None),
        CellSignal {
            policy_params: 1.5e9,
            useful_rollouts_per_step: 40.0,
            ..signal(30.0, 0.7, RewardKind::Orm, Some(64))
        },
    ] {
        let p = predict(&params, &s);
        for name in PARAM_NAMES {
            for end in [0, 1] {
                let mut moved = params;
                let q = moved.get_mut(name).unwrap();
                q.value = if end == 0 { q.low } else { q.high };
                let r = predict(&moved, &s).score;
                assert!(
                    r >= p.score_low - 1e-12 && r <= p.score_high + 1e-12,
                    "{name}: {r} outside [{}, {}]",
                    p.score_low,
                    p.score_high
                );
            }
        }
    }
}

fn grid(name: &str) -> Grid {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("grids")
        .join(format!("{name}.toml"));
    spec::load(&path, &Catalog::embedded()).unwrap()
}

/// The best feasible evaluated cell (highest score, lowest id on ties) among those passing `keep`.
fn best_cell<'g>(
    g: &'g Grid,
    keep: impl Fn(&crate::evaluate::Evaluated) -> bool,
) -> Option<crate::evaluate::Evaluated<'g>> {
    let mut best: Option<crate::evaluate::Evaluated> = None;
    for id in 0..g.cell_count().unwrap() {
        let Some(e) = evaluate_cell(g, id) else {
            continue;
        };
        if !e.ledger.feasible() || !keep(&e) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|b| e.prediction.score > b.prediction.score)
        {
            best = Some(e);
        }
    }
    best
}

#[test]
fn race_finding_best_update_fraction_is_higher_with_rule_than_with_prm() {
    // RACE (arXiv 2607.13389): best update fraction about 0.72 with rule rewards and 0.44-0.45
    // with PRM rewards, at the same FLOP budget.
    let g = grid("race-pilot");
    for budget in 0..g.axes.budget.len() {
        let best_p = |kind: RewardKind| {
            let e = best_cell(&g, |e| {
                e.cell.indices.budget == budget && e.cell.reward.kind == kind
            })
            .unwrap();
            e.ledger.flops_share(crate::ledger::Bucket::Learning)
        };
        let (rule, prm) = (best_p(RewardKind::Rule), best_p(RewardKind::Prm));
        assert!(rule > prm, "budget {budget}: rule {rule} vs PRM {prm}");
    }
}

#[test]
fn isocompute_finding_best_group_size_grows_with_budget_then_saturates() {
    // IsoCompute Playbook (arXiv 2603.12151): the compute-optimal rollouts per problem rise with
    // the budget and saturate.
    let g = grid("isocompute");
    let best_g: Vec<u64> = (0..g.axes.budget.len())
        .map(|b| {
            best_cell(&g, |e| e.cell.indices.budget == b)
                .unwrap()
                .cell
                .group_size
        })
        .collect();
    assert!(best_g.windows(2).all(|w| w[0] <= w[1]), "{best_g:?}");
    assert!(best_g.first() < best_g.last(), "{best_g:?}");
    let n = best_g.len();
    assert_eq!(
        best_g[n - 1],
        best_g[n - 2],
        "saturated at the largest budgets: {best_g:?}"
    );
}

#[test]
fn larger_models_win_only_once_the_budget_is_large_enough() {
    let g = grid("race-pilot");
    let params_of = |b: usize| {
        best_cell(&g, |e| e.cell.indices.budget == b)
            .unwrap()
            .cell
            .model
            .total_params()
    };
    let smallest = params_of(0);
    let largest = params_of(g.axes.budget.len() - 1);
    assert!(
        smallest < largest,
        "best model at the smallest budget {smallest}, at the largest {largest}"
    );
    assert_eq!(
        largest,
        g.axes.model.iter().map(|m| m.total_params()).max().unwrap()
    );
}

#[test]
fn a_measured_base_score_is_the_start_and_is_not_uncertain() {
    // Source of the behaviour: issue 11 ("a measured base score is known, not uncertain").
    let params = OutcomeParams::default();
    let mut s = signal(0.0, 0.9, RewardKind::Rule, None);
    s.measured_base_score = Some(0.3);
    let p = predict(&params, &s);
    // No training: the prediction is the measured base, with a zero-width interval.
    assert_eq!(p.base_score, 0.3);
    assert_eq!((p.score, p.score_low, p.score_high), (0.3, 0.3, 0.3));
    // With training, every corner of the box starts from it: the interval never dips below it.
    s.iterations = 200.0;
    let p = predict(&params, &s);
    assert!(p.score > 0.3 && p.score_low >= 0.3, "{p:?}");
    let prior_base = predict(&params, &signal(0.0, 0.9, RewardKind::Rule, None)).base_score;
    assert!(
        (prior_base - 0.3).abs() > 0.05,
        "the default would have been {prior_base}"
    );
}
