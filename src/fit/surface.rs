//! RACE response surfaces: at one IsoFLOP slice (model, reward, budget), the pilot score against
//! the update fraction p, fitted with four candidate forms by ordinary least squares and chosen by
//! leave-one-out error (docs/design.md §7):
//!
//! - constant: y = a;
//! - linear: y = a + b·p;
//! - log-linear: y = a + b·ln p;
//! - quadratic: y = a + b·ln p + c·(ln p)².
//!
//! The argmax over the pilots' range of p is reported only when it is interior and the chosen
//! form beats the constant; otherwise the best pilot run is the answer, and the reason is said.

use serde::Serialize;

use super::lm::solve;

/// A candidate functional form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// y = a.
    Constant,
    /// y = a + b·p.
    Linear,
    /// y = a + b·ln p.
    LogLinear,
    /// y = a + b·ln p + c·(ln p)².
    Quadratic,
}

impl Form {
    /// All forms, simplest first (ties go to the simpler form).
    pub const ALL: [Form; 4] = [
        Form::Constant,
        Form::Linear,
        Form::LogLinear,
        Form::Quadratic,
    ];

    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Constant => "constant",
            Form::Linear => "linear",
            Form::LogLinear => "log_linear",
            Form::Quadratic => "quadratic",
        }
    }

    fn features(self, p: f64) -> Vec<f64> {
        let l = p.ln();
        match self {
            Form::Constant => vec![1.0],
            Form::Linear => vec![1.0, p],
            Form::LogLinear => vec![1.0, l],
            Form::Quadratic => vec![1.0, l, l * l],
        }
    }

    fn coefficients(self) -> usize {
        self.features(0.5).len()
    }
}

/// Ordinary least squares: coefficients of `form` on (p, y).
fn ols(form: Form, p: &[f64], y: &[f64]) -> Option<Vec<f64>> {
    let k = form.coefficients();
    if p.len() < k {
        return None;
    }
    let mut xtx = vec![0.0; k * k];
    let mut xty = vec![0.0; k];
    for (&pi, &yi) in p.iter().zip(y) {
        let f = form.features(pi);
        for a in 0..k {
            xty[a] += f[a] * yi;
            for b in 0..k {
                xtx[a * k + b] += f[a] * f[b];
            }
        }
    }
    solve(&xtx, &xty, k)
}

fn evaluate(form: Form, coefficients: &[f64], p: f64) -> f64 {
    form.features(p)
        .iter()
        .zip(coefficients)
        .map(|(f, c)| f * c)
        .sum()
}

/// Leave-one-out root-mean-square error of a form (None with too few points).
pub fn loo_rmse(form: Form, p: &[f64], y: &[f64]) -> Option<f64> {
    let n = p.len();
    if n < form.coefficients() + 1 {
        return None;
    }
    let mut sum = 0.0;
    for i in 0..n {
        let (pp, yy): (Vec<f64>, Vec<f64>) =
            (0..n).filter(|&j| j != i).map(|j| (p[j], y[j])).unzip();
        let c = ols(form, &pp, &yy)?;
        sum += (evaluate(form, &c, p[i]) - y[i]).powi(2);
    }
    Some((sum / n as f64).sqrt())
}

/// The outcome of a slice's fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Surface {
    /// Pilots in the slice.
    pub points: usize,
    /// LOO RMSE of each form, in [`Form::ALL`] order (None when the form has too few points).
    pub loo_rmse: [Option<f64>; 4],
    /// The chosen form.
    pub form: Form,
    /// Its coefficients.
    pub coefficients: Vec<f64>,
    /// The recommended update fraction.
    pub best_update_fraction: f64,
    /// The predicted (or measured, on fallback) score there.
    pub best_score: f64,
    /// Index of the pilot recommended on fallback.
    pub fallback_point: Option<usize>,
    /// Why the fit's argmax is not used, if it is not.
    pub reason: Option<String>,
}

/// Fits a slice. `p` are update fractions in (0, 1], `y` the pilots' scores.
pub fn fit_slice(p: &[f64], y: &[f64]) -> Option<Surface> {
    if p.is_empty() || p.len() != y.len() || p.iter().any(|v| !(*v > 0.0 && *v <= 1.0)) {
        return None;
    }
    let loo = Form::ALL.map(|f| loo_rmse(f, p, y));
    let mut form = Form::Constant;
    let mut best_error = f64::INFINITY;
    for (f, e) in Form::ALL.iter().zip(&loo) {
        if let Some(e) = e
            && *e < best_error * (1.0 - 1e-9)
        {
            best_error = *e;
            form = *f;
        }
    }
    let coefficients =
        ols(form, p, y).unwrap_or_else(|| vec![y.iter().sum::<f64>() / y.len() as f64]);
    let best_pilot = (0..p.len())
        .max_by(|&a, &b| y[a].total_cmp(&y[b]).then(b.cmp(&a)))
        .expect("non-empty");
    let (lo, hi) = p
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    // Argmax of the chosen form over [lo, hi] on a fine grid of ln p.
    let steps = 2000;
    let mut arg = lo;
    let mut best = f64::NEG_INFINITY;
    for k in 0..=steps {
        let q = (lo.ln() + (hi.ln() - lo.ln()) * k as f64 / steps as f64).exp();
        let v = evaluate(form, &coefficients, q);
        if v > best {
            best = v;
            arg = q;
        }
    }
    let span = hi.ln() - lo.ln();
    let at_edge =
        span <= 0.0 || (arg.ln() - lo.ln()) < 0.05 * span || (hi.ln() - arg.ln()) < 0.05 * span;
    let reason = if p.len() < 3 {
        Some(format!(
            "only {} pilot(s) in this slice: too few to fit a surface",
            p.len()
        ))
    } else if form == Form::Constant {
        Some("no form beats the constant in leave-one-out error: the update fraction shows no measurable effect here".to_string())
    } else if at_edge {
        Some(format!(
            "the {} fit peaks at the edge of the pilots' range (p = {:.3}): widen the update-fraction range before trusting it",
            form.as_str(),
            arg
        ))
    } else {
        None
    };
    let (best_update_fraction, best_score, fallback_point) = match reason {
        None => (arg, best, None),
        Some(_) => (p[best_pilot], y[best_pilot], Some(best_pilot)),
    };
    Some(Surface {
        points: p.len(),
        loo_rmse: loo,
        form,
        coefficients,
        best_update_fraction,
        best_score,
        fallback_point,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadratic_peak_is_found() {
        // y = 0.5 − 0.2·(ln p − ln 0.6)²: peak at p = 0.6.
        let p = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
        let y: Vec<f64> = p
            .iter()
            .map(|v: &f64| 0.5 - 0.2 * (v.ln() - 0.6f64.ln()).powi(2))
            .collect();
        let s = fit_slice(&p, &y).unwrap();
        assert_eq!(s.form, Form::Quadratic);
        assert!((s.best_update_fraction - 0.6).abs() < 0.002, "{s:?}");
        assert!(s.reason.is_none() && s.fallback_point.is_none());
    }

    #[test]
    fn flat_data_fall_back_to_the_best_pilot() {
        let p = [0.2, 0.4, 0.6, 0.8];
        let y = [0.5, 0.5001, 0.4999, 0.5];
        let s = fit_slice(&p, &y).unwrap();
        assert_eq!(s.form, Form::Constant);
        assert_eq!(s.fallback_point, Some(1));
        assert!(s.reason.unwrap().contains("constant"));
    }

    #[test]
    fn monotone_data_peak_at_the_edge() {
        let p = [0.2, 0.4, 0.6, 0.8];
        let y = [0.40, 0.45, 0.50, 0.55];
        let s = fit_slice(&p, &y).unwrap();
        assert!(s.reason.unwrap().contains("edge"));
        assert_eq!(s.fallback_point, Some(3));
    }

    #[test]
    fn loo_hand_value_for_the_constant() {
        // Constant LOO on [1, 2, 3]: predictions 2.5, 2, 1.5 → errors 1.5, 0, 1.5 → RMSE √1.5.
        let e = loo_rmse(Form::Constant, &[0.1, 0.2, 0.3], &[1.0, 2.0, 3.0]).unwrap();
        assert!((e - 1.5f64.sqrt()).abs() < 1e-12);
    }
}
