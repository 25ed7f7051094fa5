//! Outcome prior: formula values, interval properties, and the three qualitative findings it
//! must reproduce on the bundled grids.

use std::path::Path;

use super::*;
use crate::catalog::Catalog;
use crate::evaluate::evaluate_cell;
use crate::spec::{self, Axis, Grid};

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
        pass_rate_mean: REFERENCE_PASS_RATE,
        response_cap_tokens: REFERENCE_RESPONSE_CAP,
        start: StartKind::ScaleRlReference,
        benchmark: Benchmark::Standard,
        reward,
        lora_rank,
        measured_base_score: Some(0.5),
        ability_score: None,
        pass_share_per_step: None,
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
    // 7.6e9 parameters, 1,024 useful rollouts, one epoch, rule reward, full coverage, no
    // truncation, an 8k cap, ScaleRL's reference start and a measured base of 0.5 (logit 0): every
    // multiplier is 1, so A = σ(Δ(7.6B)), K = iterations and K_mid = K_mid(7.6B). At
    // K = K_mid the score is the midpoint (0.5 + A) / 2.
    let params = OutcomeParams::default();
    let k_mid = params[ParamId::KMidAt7b].value;
    let a = 1.0 / (1.0 + (-params[ParamId::GainLogitAt7b].value).exp());
    let p = predict(&params, &signal(k_mid, 1.0, RewardKind::Rule, None));
    assert!((p.base_score - 0.5).abs() < 1e-12);
    assert!((p.ceiling - a).abs() < 1e-12, "{} vs {a}", p.ceiling);
    assert!((p.signal / k_mid - 1.0).abs() < 1e-9);
    assert!((p.score - 0.5 * (0.5 + a)).abs() < 1e-9, "{}", p.score);
    assert!(p.score_low < p.score && p.score < p.score_high);
    // A base-model start moves the midpoint by the zero-RL factor.
    let factor = params[ParamId::ZeroRlTimeFactor].value;
    let base_start = CellSignal {
        start: StartKind::Base,
        ..signal(k_mid * factor, 1.0, RewardKind::Rule, None)
    };
    assert!((predict(&params, &base_start).score - 0.5 * (0.5 + a)).abs() < 1e-9);
}

#[test]
fn gains_in_logit_space_are_small_near_0_and_1() {
    // SimpleRL-Zoo's pattern: the same Δ moves a 0.5 base far more than a 0.03 or 0.95 one.
    let params = OutcomeParams::default();
    let gain = |base: f64| {
        let s = CellSignal {
            measured_base_score: Some(base),
            ability_score: None,
            ..signal(1e9, 1.0, RewardKind::Rule, None)
        };
        predict(&params, &s).score - base
    };
    assert!(gain(0.5) > 2.0 * gain(0.03) && gain(0.5) > 2.0 * gain(0.95));
    // A base at or above any absolute ceiling still gains (the old prior predicted zero with
    // a zero-width interval for Qwen2.5-7B on GSM8K, 0.882 -> 0.917).
    assert!(gain(0.882) > 0.0);
}

#[test]
fn lora_efficiency_matches_verl_guide() {
    // veRL LoRA guide: rank 32 nearly matches full fine-tuning at 0.5B, rank 128 at 32B. With the
    // defaults both reach 90% of full fine-tuning's learning per update.
    let params = OutcomeParams::default();
    let efficiency = |n: f64, r: f64| {
        let half = params[ParamId::LoraHalfRankAt05b].value
            * (n / 0.5e9).powf(params[ParamId::LoraHalfRankSizeExponent].value);
        r / (r + half)
    };
    assert!((efficiency(0.5e9, 32.0) - 0.9).abs() < 0.01);
    assert!((efficiency(32e9, 128.0) - 0.9).abs() < 0.02);
}

#[test]
fn prediction_moves_the_right_way() {
    let mut params = OutcomeParams::default();
    // The fitted coverage exponent is 0 (ScaleRL's G at a fixed batch); give it a value to see
    // its direction.
    params[ParamId::CoverageExponent].value = 1.0;
    let k_mid = params[ParamId::KMidAt7b].value;
    let base = predict(&params, &signal(k_mid, 0.8, RewardKind::Rule, None));
    // More iterations, more coverage: higher. A LoRA adapter: lower than full fine-tuning.
    assert!(predict(&params, &signal(2.0 * k_mid, 0.8, RewardKind::Rule, None)).score > base.score);
    assert!(predict(&params, &signal(k_mid, 0.9, RewardKind::Rule, None)).score > base.score);
    assert!(predict(&params, &signal(k_mid, 0.8, RewardKind::Rule, Some(8))).score < base.score);
    // A PRM learns faster early but has a lower ceiling.
    let early = 0.1 * k_mid;
    let early_prm = predict(&params, &signal(early, 0.8, RewardKind::Prm, None));
    let early_rule = predict(&params, &signal(early, 0.8, RewardKind::Rule, None));
    assert!(early_prm.score > early_rule.score);
    let late_prm = predict(&params, &signal(1e9, 0.8, RewardKind::Prm, None));
    let late_rule = predict(&params, &signal(1e9, 0.8, RewardKind::Rule, None));
    assert!(late_prm.score < late_rule.score);
    // Epochs have diminishing returns: reuse(ρ = 0.5, μ) = 1, 1.5, 1.75, 1.875.
    assert!((reuse(0.5, 2.0) - 1.5).abs() < 1e-12 && (reuse(0.5, 4.0) - 1.875).abs() < 1e-12);
}

#[test]
fn the_interval_holds_the_90_percent_ends_of_delta_and_k_mid() {
    // Moving Δ or K_mid to either end of its fitted 90% range stays inside the predictive
    // interval, which adds discrepancy and seed noise on top.
    let params = OutcomeParams::default();
    let k_mid = params[ParamId::KMidAt7b].value;
    for s in [
        signal(0.3 * k_mid, 0.6, RewardKind::Rule, Some(16)),
        signal(3.0 * k_mid, 0.95, RewardKind::Prm, None),
        CellSignal {
            policy_params: 1.5e9,
            useful_rollouts_per_step: 40.0,
            measured_base_score: None,
            ability_score: None,
            ..signal(k_mid, 0.7, RewardKind::Orm, Some(64))
        },
    ] {
        let p = predict(&params, &s);
        for id in [ParamId::GainLogitAt7b, ParamId::KMidAt7b] {
            for end in [0, 1] {
                let mut moved = params;
                let q = &mut moved[id];
                q.value = if end == 0 { q.low } else { q.high };
                let r = predict(&moved, &s).score;
                assert!(
                    r >= p.score_low - 1e-12 && r <= p.score_high + 1e-12,
                    "{}: {r} outside [{}, {}]",
                    id.name(),
                    p.score_low,
                    p.score_high
                );
            }
        }
    }
}

#[test]
fn joint_draws_agree_with_the_interval() {
    // The share of one cell's joint draws inside its 90% interval is about 90% (the interval
    // adds one-sided shifts in quadrature; the draws combine the same normals).
    let params = OutcomeParams::default();
    let k_mid = params[ParamId::KMidAt7b].value;
    let s = signal(k_mid, 0.9, RewardKind::Rule, None);
    let p = predict(&params, &s);
    let (cell_parts, scales) = (parts(&params, &s), Spread::of(&params).draw_scales());
    let mut rng = crate::rng::SplitMix64::new(7, 0);
    let draws = 4000;
    let inside = (0..draws)
        .filter(|_| {
            let z = DrawNormals {
                shared_gain: rng.normal(),
                shared_time: rng.normal(),
                cell_gain: rng.normal(),
                cell_time: rng.normal(),
                seed: rng.normal(),
                shared_base: rng.normal(),
            };
            let x = draw_score(&cell_parts, &scales, &z);
            p.score_low <= x && x <= p.score_high
        })
        .count();
    let share = inside as f64 / draws as f64;
    assert!((0.85..=0.96).contains(&share), "{share}");
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
                e.cell.indices[Axis::Budget] == budget && e.cell.reward.kind == kind
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
            best_cell(&g, |e| e.cell.indices[Axis::Budget] == b)
                .unwrap()
                .cell
                .group_size
        })
        .collect();
    assert!(best_g.windows(2).all(|w| w[0] <= w[1]), "{best_g:?}");
    assert!(best_g.first() < best_g.last(), "{best_g:?}");
    // The saturation itself is not reproduced by the evidence-fitted prior (its coverage
    // exponent is 0): `rlfrontier backtest` reports it in the orderings table.
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
    // With training the interval is centred above it; only seed noise and discrepancy take its
    // low end below the start, by a few points at most.
    s.iterations = params[ParamId::KMidAt7b].value;
    let p = predict(&params, &s);
    assert_eq!(p.base_score, 0.3);
    assert!(p.score > 0.3 && p.score_low > 0.3 - 0.05, "{p:?}");
    let prior_base = predict(&params, &signal(0.0, 0.9, RewardKind::Rule, None)).base_score;
    assert!(
        (prior_base - 0.3).abs() > 0.05,
        "the default would have been {prior_base}"
    );
}

#[test]
fn the_difficulty_term_is_one_on_the_default_task() {
    // The reference pass rate is the default task's, which stands for the evidence runs' prompts:
    // the fitted time scale is unchanged there, and harder sets take longer (IsoCompute).
    assert_eq!(
        REFERENCE_PASS_RATE,
        crate::config::Task::default().pass_rate_mean
    );
    let params = OutcomeParams::default();
    let base = signal(500.0, 0.9, RewardKind::Rule, None);
    let hard = CellSignal {
        pass_rate_mean: 0.035,
        ..base
    };
    let d = params[ParamId::DifficultyTimeExponent].value;
    let (p, q) = (parts(&params, &base), parts(&params, &hard));
    // K_mid × (0.035/0.35)^−d = K_mid × 10^d.
    assert!((q.ln_k_mid - p.ln_k_mid - d * 10f64.ln()).abs() < 1e-12);
    assert!(predict_score(&params, &hard) < predict_score(&params, &base));
}

#[test]
fn rollouts_past_the_saturation_do_not_raise_the_ceiling() {
    let params = OutcomeParams::default();
    let u_sat = params[ParamId::RolloutSaturation].value;
    let at = |u: f64| {
        parts(
            &params,
            &CellSignal {
                useful_rollouts_per_step: u,
                ..signal(1e9, 0.9, RewardKind::Rule, None)
            },
        )
        .gain_logit
    };
    assert!(at(u_sat / 2.0) < at(u_sat));
    assert_eq!(at(u_sat), at(4.0 * u_sat));
}

/// sd of logit gains (scores clamped to [0.01, 0.99]) of the bundled pairs of `kinds`.
fn logit_gain_sd(kinds: &[StartKind]) -> f64 {
    let l = |p: f64| {
        let p = p.clamp(0.01, 0.99);
        (p / (1.0 - p)).ln()
    };
    let gains: Vec<f64> = crate::fit::pairs::embedded_pairs()
        .iter()
        .filter(|p| kinds.contains(&p.start))
        .map(|p| l(p.after) - l(p.base))
        .collect();
    let n = gains.len() as f64;
    let mean = gains.iter().sum::<f64>() / n;
    (gains.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

#[test]
fn an_interval_with_no_predicted_progress_spans_the_kinds_spread_of_gains() {
    // A run predicted to move nothing (zero steps) is not therefore sure of its score: its 90%
    // interval spans at least ±1 sd of the logit gains the evidence measured for its kind.
    let params = OutcomeParams::default();
    for (kind, kinds) in [
        (StartKind::Base, vec![StartKind::Base]),
        (StartKind::Instruct, vec![StartKind::Instruct]),
        (StartKind::Distilled, vec![StartKind::Distilled]),
        (
            StartKind::Tuned,
            vec![StartKind::Instruct, StartKind::Distilled],
        ),
    ] {
        for base in [0.05, 0.3, 0.6, 0.9] {
            let s = CellSignal {
                start: kind,
                measured_base_score: Some(base),
                ability_score: None,
                ..signal(0.0, 0.9, RewardKind::Rule, None)
            };
            let p = predict(&params, &s);
            assert_eq!(p.score, base, "no steps, no progress");
            let width = logit(p.score_high) - logit(p.score_low);
            let spread = logit_gain_sd(&kinds);
            // (The fitted floor is written with seven significant digits.)
            assert!(
                width >= 2.0 * spread * (1.0 - 1e-6),
                "{kind:?} at {base}: width {width:.6} logits < 2 x {spread:.6}"
            );
        }
    }
}

#[test]
fn the_downside_grows_with_steps() {
    // Runs can lose ground, more the longer they train: the low end of a distilled run at its
    // plateau falls with steps while the prediction stays put.
    let params = OutcomeParams::default();
    let at = |steps: f64| {
        predict(
            &params,
            &CellSignal {
                start: StartKind::Distilled,
                measured_base_score: Some(0.6),
                ability_score: None,
                ..signal(steps, 0.9, RewardKind::Rule, None)
            },
        )
    };
    let (short, long) = (at(200.0), at(5000.0));
    assert!(
        (short.score - long.score).abs() < 1e-3,
        "{short:?} {long:?}"
    );
    assert!(long.score_low < short.score_low, "{short:?} {long:?}");
    assert!(downside_sd(&params, 4000.0) == 2.0 * downside_sd(&params, 1000.0));
    assert_eq!(downside_sd(&params, 0.0), 0.0);
}

#[test]
fn tuned_kinds_reach_their_plateau_sooner_than_scalerls_reference() {
    // Stage 7: distilled starts sit at their plateau by the first checkpoint studies report
    // (50-1,800 steps), unlike ScaleRL's thousands of steps to the midpoint; instruct starts,
    // with round 4's timed pairs (INTUITOR, Archer: 50-400 steps), still climb, on a time scale
    // shorter than ScaleRL's but of its order; the pooled kind lies between.
    let params = OutcomeParams::default();
    for (kind, at_least_e_folds) in [
        (StartKind::Distilled, 2.0),
        (StartKind::Tuned, 1.0),
        (StartKind::Instruct, 0.0),
    ] {
        let s = CellSignal {
            start: kind,
            ..signal(100.0, 0.9, RewardKind::Rule, None)
        };
        let reference = CellSignal {
            start: StartKind::ScaleRlReference,
            ..s
        };
        let (p, r) = (parts(&params, &s), parts(&params, &reference));
        assert!(p.ln_k_mid < r.ln_k_mid - at_least_e_folds, "{kind:?}");
    }
}

#[test]
fn repeated_prompts_count_at_the_reuse_share_past_the_first_pass() {
    // 1,000 steps of 512 prompts over 128,000 prompts: 4 passes. The first pass is 250 steps;
    // the other 750 count at 0.5: 250 + 375 = 625 fresh steps.
    assert!((fresh_iterations(1000.0, Some(512.0 / 128_000.0), 0.5) - 625.0).abs() < 1e-9);
    // Within the first pass, or with no dataset size, every step is fresh.
    assert_eq!(fresh_iterations(200.0, Some(512.0 / 128_000.0), 0.5), 200.0);
    assert_eq!(fresh_iterations(1000.0, None, 0.5), 1000.0);
    // A small dataset makes a long run of the same steps learn less.
    let mut params = OutcomeParams::default();
    params[ParamId::DataReuse].value = 0.5;
    let fresh = signal(2000.0, 0.9, RewardKind::Rule, None);
    let small = CellSignal {
        pass_share_per_step: Some(1.0 / 10.0),
        ..fresh
    };
    assert!(parts(&params, &small).ln_k < parts(&params, &fresh).ln_k);
}

#[test]
fn a_base_model_with_a_format_gap_reaches_at_least_its_implied_score() {
    // A base model at 20% on a benchmark its other math scores put at 85% (outcome::ability):
    // the ceiling is at least 0.85, the start is still the measured 0.2, and a long run ends near
    // the ceiling. A tuned start's gap is a profile, not a format: it gets no floor.
    let params = OutcomeParams::default();
    let mut s = signal(10_000.0, 1.0, RewardKind::Rule, None);
    s.start = StartKind::Base;
    s.measured_base_score = Some(0.2);
    let without = predict(&params, &s);
    s.ability_score = Some(0.85);
    let with = predict(&params, &s);
    assert_eq!(with.base_score, 0.2);
    assert!(without.ceiling < 0.85, "{without:?}");
    assert!((with.ceiling - 0.85).abs() < 1e-12, "{with:?}");
    assert!(with.score > 0.8 && with.score > without.score, "{with:?}");
    assert!(with.score_low < with.score && with.score < with.score_high);
    // An implied score at or below the base changes nothing; one between the base and the
    // ceiling moves the path (its gap closes early), not the ceiling.
    s.ability_score = Some(0.2);
    assert_eq!(predict(&params, &s), without);
    s.ability_score = Some(0.5 * (0.2 + without.ceiling));
    let between = predict(&params, &s);
    assert_eq!(between.ceiling, without.ceiling);
    assert!(between.score >= without.score, "{between:?} {without:?}");
    s.ability_score = Some(0.85);
    s.start = StartKind::Distilled;
    let tuned = predict(&params, &s);
    s.ability_score = None;
    assert_eq!(tuned, predict(&params, &s));
}

#[test]
fn a_format_gap_closes_within_its_own_steps_by_hand() {
    // A base model at 0.2% on GSM8K whose MATH-500 implies 22.4% (INTUITOR's Qwen2.5-1.5B,
    // arXiv 2505.19590 Table 1, read at the fitted levels; priced here at the reference size). With τ_f = 50 steps and K_mid held
    // far away (no ability progress), the score is the closed share of the gap:
    // 0.002 + 0.222 × (1 − e^(−steps/50)).
    let mut params = OutcomeParams::default();
    params[ParamId::FormatClosureSteps].value = 50.0;
    params[ParamId::KMidAt7b].value = 1e12;
    let mut s = signal(0.0, 1.0, RewardKind::Rule, None);
    s.start = StartKind::Base;
    s.measured_base_score = Some(0.002);
    s.ability_score = Some(0.224);
    for (steps, expected) in [
        (0.0, 0.002),
        (10.0, 0.002 + 0.222 * 0.181_269_246_922_018_14),
        (50.0, 0.002 + 0.222 * 0.632_120_558_828_557_7),
        (58.0, 0.002 + 0.222 * 0.686_513_819_117_394_7),
        (1000.0, 0.224),
    ] {
        s.iterations = steps;
        let p = predict(&params, &s);
        assert!((p.score - expected).abs() < 1e-6, "{steps}: {p:?}");
        assert_eq!(p.base_score, 0.002);
        // The low end holds the gap read as ability, not format: no higher than the score with
        // the implied score at its low end (ability::implied_score_low).
        let low = ability::implied_score_low(0.224, 0.002);
        assert!(low < 0.224 && low > 0.002, "{low}");
        let closed = if steps == 0.0 {
            0.0
        } else {
            1.0 - (-steps / 50.0f64).exp()
        };
        assert!(
            p.score_low <= 0.002 + (low - 0.002) * closed + 1e-12,
            "{p:?}"
        );
    }
    // The same run from an instruct checkpoint, or with no gap, keeps its base score.
    s.iterations = 58.0;
    s.start = StartKind::Instruct;
    assert!((predict(&params, &s).score - 0.002).abs() < 1e-6);
    s.start = StartKind::Base;
    s.ability_score = None;
    assert!((predict(&params, &s).score - 0.002).abs() < 1e-6);
}

#[test]
fn the_targets_grid_reads_aime_bases_against_math500() {
    // grids/targets.toml: SimpleRL-Zoo's Qwen2.5 bases, MATH-500 0.158 / 0.296 / 0.646 and
    // AIME24 0 / 0 / 0.033. MATH-500 gets no bound from AIME. AIME's bound is
    // σ(logit(MATH-500) − level(aime24)) where its gap over AIME's own base, in logits (scores
    // clamped to [0.005, 0.995]), is beyond noise: Z90 × √2 × the residual sd.
    let grid = grid("targets");
    assert_eq!(grid.ability_scores, vec![None, None, None]);
    let aime = &grid.targets[1];
    let level = fitted::BENCHMARK_LEVELS
        .iter()
        .find(|(f, _)| *f == "aime24")
        .unwrap()
        .1;
    let clamped_logit = |p: f64| {
        let p = p.clamp(0.005, 0.995);
        (p / (1.0 - p)).ln()
    };
    let noise = crate::outcome::params::Z90
        * std::f64::consts::SQRT_2
        * fitted::BENCHMARK_LEVEL_RESIDUAL_SD;
    let mut bounded = 0;
    for (k, (math500, aime24)) in [(0.158f64, 0.0), (0.296, 0.0), (0.646, 0.033)]
        .into_iter()
        .enumerate()
    {
        let theta = clamped_logit(math500);
        let implied = 1.0 / (1.0 + (level - theta).exp());
        let gap = theta - level - clamped_logit(aime24);
        match aime.ability_scores[k] {
            Some(got) => {
                bounded += 1;
                assert!(gap > noise, "model {k}: gap {gap} within noise {noise}");
                assert!(
                    (got - implied).abs() < 1e-9,
                    "model {k}: {got} vs {implied}"
                );
            }
            None => assert!(gap <= noise, "model {k}: gap {gap} beyond noise {noise}"),
        }
    }
    // The 3B base's 0 on AIME24 is far below what its MATH-500 of 0.296 implies.
    assert!(bounded >= 1, "{:?}", aime.ability_scores);
    assert!(
        aime.ability_scores[1].is_some(),
        "{:?}",
        aime.ability_scores
    );
}

#[test]
fn seed_noise_moves_ability_in_logit_units_by_hand() {
    // ScaleRL's ±0.02 at A ≈ 0.6 is 0.02 / (0.6 × 0.4) = 0.08333 logits of ability. The seed
    // term's 90% half-widths (Z90 = 1.64485), by hand: σ(logit p ± 0.13708) − p is +0.03240 /
    // −0.03330 at 0.6, +0.01168 / −0.01303 at 0.9 and +0.00693 / −0.00612 at 0.05.
    assert!((seed_logit_sd(0.02) - 0.083_333_333).abs() < 1e-9);
    let shift = crate::outcome::params::Z90 * seed_logit_sd(0.02);
    for (p, up, down) in [
        (0.6f64, 0.03240, 0.03330),
        (0.9, 0.01168, 0.01303),
        (0.05, 0.00693, 0.00612),
    ] {
        let l = (p / (1.0 - p)).ln();
        let sigma = |x: f64| 1.0 / (1.0 + (-x).exp());
        assert!((sigma(l + shift) - p - up).abs() < 1e-5, "{p}");
        assert!((p - sigma(l - shift) - down).abs() < 1e-5, "{p}");
    }
}
