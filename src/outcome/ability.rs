//! One latent mathematical ability per model, shared by the math benchmarks it is scored on.
//!
//! Item-response form in its simplest, additive version (Rasch, "Probabilistic Models for Some
//! Intelligence and Attainment Tests", 1960): a model's score on benchmark b is read as
//! σ(θ − d_b), θ the model's ability and d_b the benchmark's level, both in logit units, with
//! MATH-500 at d = 0. The levels are fitted once to the evidence's scores *after* RL
//! (`evidence/before_after.csv`), when formatting no longer hides ability, by alternating means
//! of the two-way model logit(score) = θ_run − d_b.
//!
//! What the form is for: a base model's score is a lower bound on its ability, since a format
//! failure (an answer the grader cannot extract) only lowers a score. A model scored on several
//! benchmarks therefore has θ ≥ max_b (logit(R0_b) + d_b), and on a benchmark where its own score
//! falls below σ(θ − d_b) the gap is format, which RL closes within tens of steps (INTUITOR's
//! Qwen2.5-1.5B: GSM8K 0.2% → 75% while MATH-500 went 9% → 56%; Co-rewarding's base models: GSM8K
//! 20-28% → 82-90% with MATH-500 at 54-72%). [`implied_score`] is that bound.
//!
//! Only mathematics shares one ability here: code, knowledge and instruction-following sets are
//! not on its scale (their levels are not fitted, so they neither give nor take a bound).

/// The math benchmark families that share one ability, as the evidence's `benchmark` column
/// names them.
pub const MATH_FAMILIES: [&str; 10] = [
    "math500",
    "gsm8k",
    "amc",
    "minerva",
    "olympiadbench",
    "aime24",
    "aime25",
    "omni-math",
    "hmmt",
    "brumo",
];

/// The family MATH-500 is, whose level is 0 by definition.
pub const REFERENCE_FAMILY: &str = "math500";

/// Fewer runs than this scored on a family (and on another) leave its level unfitted.
pub const MIN_RUNS_PER_FAMILY: usize = 3;

/// The math family a metric name refers to (case-insensitive, separators ignored:
/// `MATH-500`, `math500`, `AIME24_avg@64`, `aime_2025`, `OlympiadBench`), or None.
pub fn family_of_metric(name: &str) -> Option<&'static str> {
    let compact: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const PREFIXES: [(&str, &str); 13] = [
        ("math500", "math500"),
        ("gsm8k", "gsm8k"),
        ("amc", "amc"),
        ("minerva", "minerva"),
        ("olympiad", "olympiadbench"),
        ("aime2024", "aime24"),
        ("aime24", "aime24"),
        ("aime2025", "aime25"),
        ("aime25", "aime25"),
        ("omnimath", "omni-math"),
        ("hmmt", "hmmt"),
        ("brumo", "brumo"),
        ("math", "math500"),
    ];
    PREFIXES
        .iter()
        .find(|(prefix, _)| {
            compact.starts_with(prefix)
                // `math` alone is MATH (MATH-500 is its test subset); `mathvista` is not.
                && (*prefix != "math" || compact == "math")
        })
        .map(|(_, family)| *family)
}

/// Logit with scores clamped to [0.005, 0.995] (a score of 0 or 1 says little about ability).
fn clamped_logit(p: f64) -> f64 {
    let p = p.clamp(0.005, 0.995);
    (p / (1.0 - p)).ln()
}

/// The benchmarks' levels and how far scores scatter around the two-way model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AbilityScale {
    /// (family, level d in logit units), sorted by family; MATH-500 at 0.
    pub levels: Vec<(String, f64)>,
    /// sd of logit(score) around θ_run − d_family over the fitted scores (n − runs − families + 1
    /// degrees of freedom).
    pub residual_sd: f64,
}

/// The runs scored on at least two math families, each as (family index, mean logit score).
fn math_runs(runs: &[Vec<(String, f64)>]) -> Vec<Vec<(usize, f64)>> {
    runs.iter()
        .map(|run| {
            let mut by: Vec<(usize, f64, usize)> = Vec::new();
            for (family, score) in run {
                let Some(k) = MATH_FAMILIES.iter().position(|f| f == family) else {
                    continue;
                };
                match by.iter_mut().find(|e| e.0 == k) {
                    Some(e) => {
                        e.1 += clamped_logit(*score);
                        e.2 += 1;
                    }
                    None => by.push((k, clamped_logit(*score), 1)),
                }
            }
            by.into_iter().map(|(k, s, n)| (k, s / n as f64)).collect()
        })
        .filter(|run: &Vec<(usize, f64)>| run.len() >= 2)
        .collect()
}

/// Fits each family's level from `runs`, each run a list of (family, score after RL): the
/// two-way additive model logit(score) = θ_run − d_family by alternating means (40 rounds, a
/// fixed point of the least-squares normal equations), MATH-500 at 0. Families outside
/// [`MATH_FAMILIES`], and those scored in fewer than [`MIN_RUNS_PER_FAMILY`] runs together with
/// another family, get no level. Sorted by family name; deterministic.
pub fn fit_levels(runs: &[Vec<(String, f64)>]) -> AbilityScale {
    let runs = math_runs(runs);
    let mut count = [0usize; MATH_FAMILIES.len()];
    for run in &runs {
        for (k, _) in run {
            count[*k] += 1;
        }
    }
    let reference = MATH_FAMILIES
        .iter()
        .position(|f| *f == REFERENCE_FAMILY)
        .expect("MATH-500 is a math family");
    if count[reference] < MIN_RUNS_PER_FAMILY {
        return AbilityScale::default();
    }
    let fitted: Vec<bool> = count.iter().map(|n| *n >= MIN_RUNS_PER_FAMILY).collect();
    let mut level = [0.0f64; MATH_FAMILIES.len()];
    let mut theta = vec![0.0f64; runs.len()];
    for _ in 0..40 {
        for (t, run) in theta.iter_mut().zip(&runs) {
            let terms: Vec<f64> = run
                .iter()
                .filter(|(k, _)| fitted[*k])
                .map(|(k, s)| s + level[*k])
                .collect();
            *t = terms.iter().sum::<f64>() / terms.len().max(1) as f64;
        }
        let mut sum = [0.0f64; MATH_FAMILIES.len()];
        for (t, run) in theta.iter().zip(&runs) {
            for (k, s) in run {
                sum[*k] += t - s;
            }
        }
        for k in 0..MATH_FAMILIES.len() {
            if fitted[k] {
                level[k] = sum[k] / count[k] as f64;
            }
        }
        let shift = level[reference];
        for l in level.iter_mut() {
            *l -= shift;
        }
    }
    let (mut squares, mut n) = (0.0, 0usize);
    for (t, run) in theta.iter().zip(&runs) {
        for (k, s) in run.iter().filter(|(k, _)| fitted[*k]) {
            squares += (s - (t - level[*k])).powi(2);
            n += 1;
        }
    }
    let families = fitted.iter().filter(|f| **f).count();
    let dof = n.saturating_sub(runs.len() + families).max(1) + 1;
    let mut levels: Vec<(String, f64)> = MATH_FAMILIES
        .iter()
        .zip(level)
        .zip(fitted)
        .filter(|(_, fitted)| *fitted)
        .map(|((f, l), _)| (f.to_string(), l))
        .collect();
    levels.sort_by(|a, b| a.0.cmp(&b.0));
    AbilityScale {
        levels,
        residual_sd: (squares / dof as f64).sqrt(),
    }
}

/// The level of `family` among `levels`, when fitted.
fn level_of(levels: &[(impl AsRef<str>, f64)], family: &str) -> Option<f64> {
    levels
        .iter()
        .find(|(f, _)| f.as_ref() == family)
        .map(|(_, l)| *l)
}

/// The score on `family` that the model's measured base scores on its other families imply,
/// σ(max_b (logit(R0_b) + d_b) − d_family) over the `others` (family, base score) with a fitted
/// level, when it exceeds the model's own base score `own_base` by more than the scatter of a
/// difference of two scores allows at 90% (Z90 × √2 × the residual sd): a smaller gap is noise,
/// not format. None when `family` has no level, no other family does, or the gap is within
/// noise.
pub fn implied_score(
    levels: &[(impl AsRef<str>, f64)],
    residual_sd: f64,
    family: &str,
    own_base: f64,
    others: &[(&str, f64)],
) -> Option<f64> {
    let own = level_of(levels, family)?;
    let theta = others
        .iter()
        .filter(|(f, _)| *f != family)
        .filter_map(|(f, score)| Some(clamped_logit(*score) + level_of(levels, f)?))
        .fold(f64::NEG_INFINITY, f64::max);
    let gap = theta - own - clamped_logit(own_base);
    (theta.is_finite()
        && gap > crate::outcome::params::Z90 * std::f64::consts::SQRT_2 * residual_sd)
        .then(|| 1.0 / (1.0 + (own - theta).exp()))
}

/// The low end of an implied score `implied` (a format gap's floor above the base score
/// `own_base`): σ(logit(implied) − Z90 × √2 × the fitted residual sd), never below the base. The
/// implied score is read off another benchmark's base score, so it carries the scatter of a
/// difference of two scores: at this end the gap may be ability, not format, and is not closed.
pub fn implied_score_low(implied: f64, own_base: f64) -> f64 {
    let spread = crate::outcome::params::Z90
        * std::f64::consts::SQRT_2
        * super::fitted::BENCHMARK_LEVEL_RESIDUAL_SD;
    let low = 1.0 / (1.0 + (spread - clamped_logit(implied)).exp());
    low.max(own_base).min(implied)
}

/// For one model scored on several target metrics (name, measured base score): each metric's
/// implied score from the others' ([`implied_score`] at the fitted levels of
/// [`super::fitted::BENCHMARK_LEVELS`]), None where it has none or its own base is not measured.
pub fn implied_scores_of_metrics(metrics: &[(&str, Option<f64>)]) -> Vec<Option<f64>> {
    let measured: Vec<(&str, f64)> = metrics
        .iter()
        .filter_map(|(name, base)| Some((family_of_metric(name)?, (*base)?)))
        .collect();
    metrics
        .iter()
        .map(|(name, base)| {
            implied_score(
                &super::fitted::BENCHMARK_LEVELS,
                super::fitted::BENCHMARK_LEVEL_RESIDUAL_SD,
                family_of_metric(name)?,
                (*base)?,
                &measured,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_map_to_their_math_family() {
        for (name, family) in [
            ("MATH-500", "math500"),
            ("MATH500", "math500"),
            ("MATH", "math500"),
            ("GSM8K", "gsm8k"),
            ("AMC23", "amc"),
            ("AMC_avg@8", "amc"),
            ("MinervaMath", "minerva"),
            ("OlympiadBench", "olympiadbench"),
            ("AIME24_avg@64", "aime24"),
            ("aime_2025", "aime25"),
            ("Omni-MATH", "omni-math"),
            ("HMMT2025", "hmmt"),
        ] {
            assert_eq!(family_of_metric(name), Some(family), "{name}");
        }
        for name in ["MathVista", "MMLU-Pro", "LiveCodeBench", "GPQA", "IFEval"] {
            assert_eq!(family_of_metric(name), None, "{name}");
        }
    }

    #[test]
    fn levels_recover_a_two_way_model_by_hand() {
        // θ = 1, 0, −1 for three runs; levels math500 0, gsm8k −2, aime24 +3.
        let runs: Vec<Vec<(String, f64)>> = [1.0, 0.0, -1.0]
            .iter()
            .map(|theta: &f64| {
                [("math500", 0.0), ("gsm8k", -2.0), ("aime24", 3.0)]
                    .iter()
                    .map(|(f, d)| (f.to_string(), 1.0 / (1.0 + (d - theta).exp())))
                    .collect()
            })
            .collect();
        let scale = fit_levels(&runs);
        assert!(scale.residual_sd < 1e-6, "{scale:?}");
        let levels = scale.levels;
        let get = |f: &str| level_of(&levels, f).unwrap();
        assert!(get("math500").abs() < 1e-9);
        assert!((get("gsm8k") + 2.0).abs() < 1e-6, "{levels:?}");
        assert!((get("aime24") - 3.0).abs() < 1e-6, "{levels:?}");
        // A family in one run only gets no level.
        let mut few = runs.clone();
        few[0].push(("amc".to_string(), 0.5));
        assert!(level_of(&fit_levels(&few).levels, "amc").is_none());
    }

    #[test]
    fn a_grid_s_metrics_bound_each_other_at_the_fitted_levels() {
        // A base model at 54% on MATH-500 and 20% on GSM8K (Co-rewarding's Qwen2.5-3B): GSM8K
        // is bounded by what MATH-500 implies; MATH-500 itself is not raised by GSM8K; a metric
        // without a level, or without a base score, gets none.
        let got = implied_scores_of_metrics(&[
            ("MATH-500", Some(0.54)),
            ("GSM8K", Some(0.20)),
            ("MMLU-Pro", Some(0.3)),
            ("AMC23", None),
        ]);
        let gsm8k = level_of(&super::super::fitted::BENCHMARK_LEVELS, "gsm8k").unwrap();
        let expected = 1.0 / (1.0 + (gsm8k - clamped_logit(0.54)).exp());
        assert!((got[1].unwrap() - expected).abs() < 1e-12, "{got:?}");
        assert!(got[1].unwrap() > 0.7, "{got:?}");
        assert_eq!((got[0], got[2], got[3]), (None, None, None));
    }

    #[test]
    fn the_implied_score_is_the_best_other_bound() {
        let levels = [("gsm8k", -2.0), ("math500", 0.0), ("aime24", 3.0)];
        // MATH-500 at 50% (θ = 0) implies GSM8K σ(2) = 0.881; an AIME bound of 1% is weaker.
        let others = [("math500", 0.5), ("aime24", 0.01)];
        let implied = implied_score(&levels, 0.5, "gsm8k", 0.2, &others);
        assert!((implied.unwrap() - 1.0 / (1.0 + (-2.0f64).exp())).abs() < 1e-12);
        // A gap within noise is none: logit(0.881) − logit(0.7) = 1.15 < 1.645 × √2 × 0.5 = 1.16.
        assert_eq!(implied_score(&levels, 0.5, "gsm8k", 0.7, &others), None);
        assert!(implied_score(&levels, 0.4, "gsm8k", 0.7, &others).is_some());
        // Its own score is not a bound on itself; an unfitted family neither gives nor takes one.
        assert_eq!(
            implied_score(&levels, 0.5, "gsm8k", 0.2, &[("gsm8k", 0.2)]),
            None
        );
        assert_eq!(
            implied_score(&levels, 0.5, "amc", 0.2, &[("math500", 0.5)]),
            None
        );
        assert_eq!(
            implied_score(&levels, 0.5, "gsm8k", 0.2, &[("amc", 0.5)]),
            None
        );
    }
}
