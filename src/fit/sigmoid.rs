//! Fitting ScaleRL's bounded sigmoid to one pilot run's checkpoints.
//!
//! R(x) = R0 + (A − R0) / (1 + (C_mid / x)^β), x the compute spent at a checkpoint (in the
//! grid's budget unit), R0 fixed (the run's measured step-0 score, or the prior's base score).
//! Bounds A ∈ [R0, 1], β > 0, C_mid > 0 are enforced by fitting unconstrained
//! (a, b, c) with A = R0 + (1 − R0)·logistic(a), β = e^b, C_mid = e^c (the MINUIT/lmfit
//! approach). With t = β(ln C_mid − ln x) and g = 1/(1 + e^t), R = R0 + (A − R0)·g, and the
//! analytic Jacobian is ∂R/∂a = (1 − R0)·s(1 − s)·g, ∂R/∂b = −(A − R0)·g(1 − g)·β(ln C_mid − ln x),
//! ∂R/∂c = −(A − R0)·g(1 − g)·β, with s = logistic(a).
//!
//! Standard errors come from the covariance s²·(JᵀJ)⁻¹ in the natural parameters (A, β, C_mid)
//! with s² = RSS/(m − 3), as `scipy.optimize.curve_fit` reports them; intervals from a seeded
//! residual bootstrap.

use serde::Serialize;

use super::lm::{Problem, inverse, minimize, normal_equations};
use crate::rng::SplitMix64;

fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The sigmoid's natural parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SigmoidParams {
    /// Base score R0 (fixed, not fitted).
    pub base: f64,
    /// Asymptote A.
    pub ceiling: f64,
    /// Steepness β.
    pub steepness: f64,
    /// Compute at which half the headroom is reached, C_mid.
    pub midpoint: f64,
}

impl SigmoidParams {
    /// R(x); R0 at x ≤ 0.
    pub fn predict(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return self.base;
        }
        let t = self.steepness * (self.midpoint.ln() - x.ln());
        self.base + (self.ceiling - self.base) * logistic(-t)
    }

    fn from_unconstrained(base: f64, theta: &[f64]) -> Self {
        SigmoidParams {
            base,
            ceiling: base + (1.0 - base) * logistic(theta[0]),
            steepness: theta[1].exp(),
            midpoint: theta[2].exp(),
        }
    }

    fn to_unconstrained(self) -> [f64; 3] {
        let s = ((self.ceiling - self.base) / (1.0 - self.base)).clamp(1e-9, 1.0 - 1e-9);
        [
            (s / (1.0 - s)).ln(),
            self.steepness.ln(),
            self.midpoint.ln(),
        ]
    }
}

struct Curve<'a> {
    base: f64,
    x: &'a [f64],
    y: &'a [f64],
}

impl Problem for Curve<'_> {
    fn parameters(&self) -> usize {
        3
    }

    fn residuals(&self, theta: &[f64]) -> Option<Vec<f64>> {
        let p = SigmoidParams::from_unconstrained(self.base, theta);
        let r: Vec<f64> = self
            .x
            .iter()
            .zip(self.y)
            .map(|(&x, &y)| p.predict(x) - y)
            .collect();
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self, theta: &[f64]) -> Option<Vec<f64>> {
        let p = SigmoidParams::from_unconstrained(self.base, theta);
        let s = logistic(theta[0]);
        let headroom = p.ceiling - p.base;
        let mut j = Vec::with_capacity(3 * self.x.len());
        for &x in self.x {
            let log_ratio = p.midpoint.ln() - x.ln();
            let g = logistic(-p.steepness * log_ratio);
            let dg = g * (1.0 - g);
            j.push((1.0 - self.base) * s * (1.0 - s) * g);
            j.push(-headroom * dg * p.steepness * log_ratio);
            j.push(-headroom * dg * p.steepness);
        }
        j.iter().all(|v| v.is_finite()).then_some(j)
    }
}

/// A fitted run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SigmoidFit {
    /// The parameters at the least-squares minimum.
    pub params: SigmoidParams,
    /// Standard errors of (A, β, C_mid); None with three points or fewer, or a singular fit.
    pub standard_errors: Option<[f64; 3]>,
    /// Root-mean-square residual.
    pub rmse: f64,
    /// Points used.
    pub points: usize,
    /// Whether the optimiser converged.
    pub converged: bool,
    /// Whether the data reach the fitted midpoint C_mid: before the knee, the asymptote A and
    /// C_mid trade off against each other and are not separately identified (ScaleRL fits only
    /// after enough compute for the same reason).
    pub identified: bool,
}

impl SigmoidFit {
    /// One line on what the fit can and cannot say.
    pub fn identification_note(&self) -> &'static str {
        if self.identified {
            "the data reach the midpoint: A is identified"
        } else {
            "the data stop before the midpoint: A and C_mid are not separately identified, extrapolations lean on the curve's shape"
        }
    }
}

/// Starting points: asymptotes above the best score, midpoints across the observed compute,
/// steepness 0.5, 1 and 2. The best of all starts wins (deterministic order).
fn starts(base: f64, x: &[f64], y: &[f64]) -> Vec<SigmoidParams> {
    let y_max = y.iter().copied().fold(base, f64::max);
    let mut xs: Vec<f64> = x.iter().copied().filter(|v| *v > 0.0).collect();
    xs.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    if xs.is_empty() {
        return out;
    }
    let quantile = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
    for ceiling in [
        y_max + 0.1 * (1.0 - y_max),
        (y_max + 1.0) / 2.0,
        y_max + 0.01 * (1.0 - y_max),
    ] {
        for midpoint in [
            quantile(0.5),
            quantile(0.1),
            quantile(0.9),
            quantile(1.0) * 3.0,
        ] {
            for steepness in [1.0, 0.5, 2.0] {
                out.push(SigmoidParams {
                    base,
                    ceiling: ceiling.clamp(base + 1e-6, 1.0 - 1e-9),
                    steepness,
                    midpoint,
                });
            }
        }
    }
    out
}

/// Why a curve could not be fitted.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum NoFit {
    /// Compute and score columns of different lengths.
    #[error("the compute and score columns have different lengths")]
    MismatchedLengths,
    /// A value is NaN or infinite.
    #[error("a compute or score value is not finite")]
    NonFinite,
    /// The base score is outside [0, 1).
    #[error("the base score must lie in [0, 1)")]
    BaseOutOfRange,
    /// Fewer points with compute > 0 than free parameters.
    #[error(
        "{points} checkpoint(s) with compute > 0 after the warm-up; the sigmoid has 3 free parameters (A, beta, C_mid): give at least 3, and enough to reach the knee of the curve"
    )]
    TooFewPoints {
        /// Points with compute > 0.
        points: usize,
    },
    /// The scores do not rise with compute: no rising sigmoid describes them (a fit would
    /// collapse its ceiling onto the base and report a steepness of hundreds of digits).
    #[error(
        "the scores do not rise with compute (mean change from the base {change:+.4}, correlation with log compute {correlation:+.2}): no rising curve to fit; check that the metric is a score (a loss falls) and that the run learns"
    )]
    NotRising {
        /// Mean score of the checkpoints with compute > 0, minus the base.
        change: f64,
        /// Pearson correlation of the score with log compute.
        correlation: f64,
    },
    /// The least-squares curve is no rising curve: its ceiling sits on the base, or it steps up
    /// at one point (its intervals would be of zero width).
    #[error(
        "the best fit is no rising curve (ceiling {gain:+.4} over the base, steepness {steepness:.3e}): the checkpoints do not show the curve's rise; fit more checkpoints or a longer run"
    )]
    Degenerate {
        /// The fitted ceiling minus the base.
        gain: f64,
        /// The fitted steepness.
        steepness: f64,
    },
    /// No starting point gave a finite cost, or the optimiser failed from every start.
    #[error("the optimiser found no finite least-squares solution from any starting point")]
    NoSolution,
}

/// Smallest ceiling above the base a fit may report: a hundredth of a point.
pub const MIN_FITTED_RISE: f64 = 1e-4;

/// Largest steepness a fit may report: a sigmoid of steepness 50 rises from 10% to 90% of its
/// gain within a factor of 1.09 of compute, a step no RL curve takes.
pub const MAX_FITTED_STEEPNESS: f64 = 50.0;

impl NoFit {
    /// A few words for a table cell (the whole reason goes to `fits.csv`).
    pub fn short(&self) -> &'static str {
        match self {
            NoFit::MismatchedLengths | NoFit::NonFinite | NoFit::BaseOutOfRange => {
                "bad input (see fits.csv)"
            }
            NoFit::TooFewPoints { .. } => "too few checkpoints",
            NoFit::NotRising { .. } => "scores do not rise",
            NoFit::Degenerate { .. } => "no rising curve in the data",
            NoFit::NoSolution => "no solution",
        }
    }
}

/// Fits the sigmoid to (x, y) points with base score `base`. Needs at least three points with
/// x > 0 (one per free parameter); fewer would give a curve through the points with intervals of
/// zero width that mean nothing.
pub fn fit(base: f64, x: &[f64], y: &[f64]) -> Result<SigmoidFit, NoFit> {
    if x.len() != y.len() {
        return Err(NoFit::MismatchedLengths);
    }
    if !x.iter().chain(y).all(|v| v.is_finite()) {
        return Err(NoFit::NonFinite);
    }
    if !(0.0..1.0).contains(&base) {
        return Err(NoFit::BaseOutOfRange);
    }
    let positive = x.iter().filter(|v| **v > 0.0).count();
    if positive < 3 {
        return Err(NoFit::TooFewPoints { points: positive });
    }
    // Scores that fall (below the base on average and against compute) or do not move have
    // no rising curve; a weak or noisy rise is fitted, and judged by its fit below.
    let (change, correlation) = rise(base, x, y);
    if (change <= 0.0 && correlation <= 0.0) || y.iter().all(|v| *v == base) {
        return Err(NoFit::NotRising {
            change,
            correlation,
        });
    }
    let problem = Curve { base, x, y };
    // Rank the starting points by their initial cost and refine the best; only when that run does
    // not converge are the next two refined too. Refining all 36 costs thirty times more for the
    // same answer on every curve we have tried (benches/peers/curve_fit_check.py).
    let mut ranked: Vec<(f64, [f64; 3])> = starts(base, x, y)
        .into_iter()
        .filter_map(|p| {
            let theta = p.to_unconstrained();
            let r = problem.residuals(&theta)?;
            Some((r.iter().map(|v| v * v).sum::<f64>(), theta))
        })
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<super::lm::Solution> = None;
    for (k, (_, theta)) in ranked.iter().take(3).enumerate() {
        if k > 0 && best.as_ref().is_some_and(|b| b.converged) {
            break;
        }
        if let Some(s) = minimize(&problem, theta, 500)
            && best.as_ref().is_none_or(|b| s.cost < b.cost)
        {
            best = Some(s);
        }
    }
    let best = best.ok_or(NoFit::NoSolution)?;
    let params = SigmoidParams::from_unconstrained(base, &best.theta);
    // A fit whose ceiling collapsed onto the base, or whose steepness ran away (a step at one
    // point), describes no rise: its intervals would be of zero width.
    // ... or one whose whole rise lies a thousandfold before the first checkpoint: the data
    // then show a level, not the curve (its steepness and midpoint mean nothing).
    let first_x = x
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    if params.ceiling - base < MIN_FITTED_RISE
        || params.steepness > MAX_FITTED_STEEPNESS
        || params.midpoint < first_x * 1e-3
    {
        return Err(NoFit::Degenerate {
            gain: params.ceiling - base,
            steepness: params.steepness,
        });
    }
    let m = x.len();
    let x_max = x.iter().copied().fold(0.0, f64::max);
    Ok(SigmoidFit {
        params,
        standard_errors: standard_errors(&params, x, best.cost),
        rmse: (best.cost / m as f64).sqrt(),
        points: m,
        converged: best.converged,
        identified: x_max >= params.midpoint,
    })
}

/// How the points with compute > 0 rise: their mean score minus the base, and the Pearson
/// correlation of score with log compute (0 when either does not vary).
fn rise(base: f64, x: &[f64], y: &[f64]) -> (f64, f64) {
    let points: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(x, _)| **x > 0.0)
        .map(|(x, y)| (x.ln(), *y))
        .collect();
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in &points {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    let correlation = if sxx > 0.0 && syy > 0.0 {
        sxy / (sxx * syy).sqrt()
    } else {
        0.0
    };
    (my - base, correlation)
}

/// s²·(JᵀJ)⁻¹ in the natural parameters (A, β, C_mid).
fn standard_errors(p: &SigmoidParams, x: &[f64], rss: f64) -> Option<[f64; 3]> {
    let m = x.len();
    if m <= 3 {
        return None;
    }
    let headroom = p.ceiling - p.base;
    let mut j = Vec::with_capacity(3 * m);
    for &xi in x {
        let log_ratio = p.midpoint.ln() - xi.max(1e-300).ln();
        let g = if xi > 0.0 {
            logistic(-p.steepness * log_ratio)
        } else {
            0.0
        };
        let dg = g * (1.0 - g);
        j.push(g);
        j.push(-headroom * dg * log_ratio);
        j.push(-headroom * dg * p.steepness / p.midpoint);
    }
    let (jtj, _) = normal_equations(&j, &vec![0.0; m], 3);
    let cov = inverse(&jtj, 3)?;
    let s2 = rss / (m - 3) as f64;
    let se = [
        (cov[0] * s2).sqrt(),
        (cov[4] * s2).sqrt(),
        (cov[8] * s2).sqrt(),
    ];
    se.iter().all(|v| v.is_finite()).then_some(se)
}

/// Percentile intervals of the parameters and of predictions at chosen compute values, from a
/// residual bootstrap: refit to fitted values plus resampled residuals, `replicates` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bootstrap {
    /// Replicates whose refit succeeded.
    pub replicates: usize,
    /// (low, high) of A, β, C_mid at the 5th and 95th percentiles.
    pub params: [(f64, f64); 3],
    /// (low, high) of the prediction at each requested compute value.
    pub predictions: Vec<(f64, f64)>,
}

/// The `q` quantile (linear interpolation) of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = (sorted.len() - 1) as f64 * q;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Residual bootstrap of a fit (seeded; deterministic).
pub fn bootstrap(
    fit_result: &SigmoidFit,
    x: &[f64],
    y: &[f64],
    at: &[f64],
    replicates: usize,
    seed: u64,
    stream: u64,
) -> Bootstrap {
    let p = fit_result.params;
    let fitted: Vec<f64> = x.iter().map(|&xi| p.predict(xi)).collect();
    let residuals: Vec<f64> = y.iter().zip(&fitted).map(|(y, f)| y - f).collect();
    let mut samples: Vec<[f64; 3]> = Vec::new();
    let mut predictions: Vec<Vec<f64>> = vec![Vec::new(); at.len()];
    let problem_base = p.base;
    for k in 0..replicates {
        let mut rng = SplitMix64::new(seed, stream.wrapping_mul(1_000_003).wrapping_add(k as u64));
        let y_star: Vec<f64> = fitted
            .iter()
            .map(|f| f + residuals[rng.below(residuals.len())])
            .collect();
        let problem = Curve {
            base: problem_base,
            x,
            y: &y_star,
        };
        let Some(s) = minimize(&problem, &p.to_unconstrained(), 300) else {
            continue;
        };
        let q = SigmoidParams::from_unconstrained(problem_base, &s.theta);
        samples.push([q.ceiling, q.steepness, q.midpoint]);
        for (i, &xa) in at.iter().enumerate() {
            predictions[i].push(q.predict(xa));
        }
    }
    let interval = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (quantile(&v, 0.05), quantile(&v, 0.95))
    };
    Bootstrap {
        replicates: samples.len(),
        params: [0, 1, 2].map(|k| interval(samples.iter().map(|s| s[k]).collect())),
        predictions: predictions.into_iter().map(interval).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth() -> SigmoidParams {
        SigmoidParams {
            base: 0.3,
            ceiling: 0.62,
            steepness: 1.4,
            midpoint: 2.5e3,
        }
    }

    #[test]
    fn midpoint_is_half_the_headroom() {
        let p = truth();
        assert!((p.predict(2.5e3) - 0.46).abs() < 1e-12);
        assert_eq!(p.predict(0.0), 0.3);
    }

    #[test]
    fn recovers_exact_parameters_from_noiseless_points() {
        let p = truth();
        let x: Vec<f64> = (1..=30).map(|i| 200.0 * i as f64).collect();
        let y: Vec<f64> = x.iter().map(|&v| p.predict(v)).collect();
        let f = fit(0.3, &x, &y).unwrap();
        assert!((f.params.ceiling - 0.62).abs() < 1e-7, "{f:?}");
        assert!((f.params.steepness - 1.4).abs() < 1e-6);
        assert!((f.params.midpoint / 2.5e3 - 1.0).abs() < 1e-6);
        assert!(f.rmse < 1e-9);
    }

    #[test]
    fn noisy_fit_covers_the_truth_and_bootstrap_is_deterministic() {
        let p = truth();
        let x: Vec<f64> = (1..=40).map(|i| 150.0 * i as f64).collect();
        let mut rng = SplitMix64::new(3, 0);
        let y: Vec<f64> = x
            .iter()
            .map(|&v| p.predict(v) + 0.005 * rng.normal())
            .collect();
        let f = fit(0.3, &x, &y).unwrap();
        let se = f.standard_errors.unwrap();
        assert!(
            (f.params.ceiling - 0.62).abs() < 3.0 * se[0] + 1e-3,
            "{f:?}"
        );
        let b1 = bootstrap(&f, &x, &y, &[1e4], 100, 9, 0);
        let b2 = bootstrap(&f, &x, &y, &[1e4], 100, 9, 0);
        assert_eq!(b1, b2);
        assert!(b1.replicates >= 95);
        assert!(b1.params[0].0 <= f.params.ceiling && f.params.ceiling <= b1.params[0].1);
    }

    #[test]
    fn bounds_hold_even_when_data_fall() {
        // Scores below the base: refused as not rising (no asymptote under R0 is ever fitted).
        let x = [100.0, 200.0, 400.0, 800.0, 1600.0];
        let y = [0.29, 0.28, 0.27, 0.28, 0.27];
        assert!(matches!(fit(0.3, &x, &y), Err(NoFit::NotRising { .. })));
        // Barely rising scores still fit, with the asymptote above R0.
        let f = fit(0.3, &x, &[0.30, 0.31, 0.30, 0.32, 0.31]).unwrap();
        assert!(f.params.ceiling >= 0.3 && f.params.steepness > 0.0 && f.params.midpoint > 0.0);
        assert_eq!(fit(0.3, &[1.0], &[f64::NAN]), Err(NoFit::NonFinite));
        assert_eq!(
            fit(0.3, &[0.0, 1.0, 2.0], &[0.3, 0.4, 0.5]),
            Err(NoFit::TooFewPoints { points: 2 })
        );
    }

    #[test]
    fn falling_or_flat_scores_are_not_fitted() {
        // Issue 51: falling scores were reported "converged, identified" with zero-width
        // intervals and a 118-digit steepness.
        let x = [1e16, 2e16, 4e16, 8e16, 1.6e17];
        let falling = [0.38, 0.35, 0.31, 0.28, 0.25];
        match fit(0.40, &x, &falling) {
            Err(NoFit::NotRising {
                change,
                correlation,
            }) => {
                assert!(change < 0.0 && correlation < 0.0, "{change} {correlation}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            fit(0.40, &x, &[0.40; 5]),
            Err(NoFit::NotRising { .. })
        ));
        let rising = [0.42, 0.45, 0.49, 0.52, 0.54];
        assert!(fit(0.40, &x, &rising).is_ok());
    }

    #[test]
    fn a_curve_stopped_before_its_knee_is_flagged_as_not_identified() {
        // ScaleRL's point: before the midpoint, A and C_mid trade off. The same truth observed
        // up to 0.3 x C_mid and up to 2.4 x C_mid.
        let p = truth();
        let early: Vec<f64> = (1..=15).map(|i| 50.0 * i as f64).collect();
        let late: Vec<f64> = (1..=30).map(|i| 200.0 * i as f64).collect();
        let f_early = fit(
            0.3,
            &early,
            &early.iter().map(|&v| p.predict(v)).collect::<Vec<_>>(),
        );
        let f_late = fit(
            0.3,
            &late,
            &late.iter().map(|&v| p.predict(v)).collect::<Vec<_>>(),
        );
        assert!(!f_early.unwrap().identified);
        assert!(f_late.unwrap().identified);
    }
}
