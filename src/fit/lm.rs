//! Levenberg-Marquardt least squares for small dense problems (a handful of parameters), and the
//! linear algebra it needs.
//!
//! Minimises Σ rᵢ(θ)² with Marquardt's scaling: each step solves
//! (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr, accepting the step when the cost falls (λ ÷ 10) and retrying
//! with λ × 10 otherwise (Marquardt 1963, "An algorithm for least-squares estimation of nonlinear
//! parameters"; the same update as MINPACK's lmder without the trust-region refinements).

/// Solves A x = b for a dense n×n row-major A by Gaussian elimination with partial pivoting.
/// Returns None when A is singular to working precision.
pub fn solve(a: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut m = a.to_vec();
    let mut x = b.to_vec();
    for col in 0..n {
        let pivot =
            (col..n).max_by(|&i, &j| m[i * n + col].abs().total_cmp(&m[j * n + col].abs()))?;
        let scale = (0..n)
            .map(|j| m[col * n + j].abs())
            .fold(0.0, f64::max)
            .max(1e-300);
        if m[pivot * n + col].abs() <= 1e-14 * scale {
            return None;
        }
        if pivot != col {
            for j in 0..n {
                m.swap(pivot * n + j, col * n + j);
            }
            x.swap(pivot, col);
        }
        for row in (col + 1)..n {
            let f = m[row * n + col] / m[col * n + col];
            if f != 0.0 {
                for j in col..n {
                    m[row * n + j] -= f * m[col * n + j];
                }
                x[row] -= f * x[col];
            }
        }
    }
    for row in (0..n).rev() {
        let mut s = x[row];
        for j in (row + 1)..n {
            s -= m[row * n + j] * x[j];
        }
        x[row] = s / m[row * n + row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The lower-triangular Cholesky factor L (row-major, L Lᵀ = A) of a symmetric positive
/// semi-definite n×n matrix; a pivot that rounding leaves slightly negative is taken as 0
/// (None when one is clearly negative: A is not positive semi-definite).
pub fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    let scale = (0..n)
        .map(|i| a[i * n + i].abs())
        .fold(0.0, f64::max)
        .max(1e-300);
    for i in 0..n {
        for j in 0..=i {
            let mut sum = a[i * n + j];
            for k in 0..j {
                sum -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if sum < -1e-9 * scale {
                    return None;
                }
                l[i * n + i] = sum.max(0.0).sqrt();
            } else if l[j * n + j] > 0.0 {
                l[i * n + j] = sum / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// Inverse of a dense n×n matrix (None when singular).
pub fn inverse(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut out = vec![0.0; n * n];
    for col in 0..n {
        let mut e = vec![0.0; n];
        e[col] = 1.0;
        let x = solve(a, &e, n)?;
        for row in 0..n {
            out[row * n + col] = x[row];
        }
    }
    Some(out)
}

/// JᵀJ (n×n) and Jᵀr (n) for an m×n row-major Jacobian.
pub fn normal_equations(jacobian: &[f64], residuals: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let m = residuals.len();
    let mut jtj = vec![0.0; n * n];
    let mut jtr = vec![0.0; n];
    for i in 0..m {
        let row = &jacobian[i * n..(i + 1) * n];
        for a in 0..n {
            jtr[a] += row[a] * residuals[i];
            for b in a..n {
                jtj[a * n + b] += row[a] * row[b];
            }
        }
    }
    for a in 0..n {
        for b in 0..a {
            jtj[a * n + b] = jtj[b * n + a];
        }
    }
    (jtj, jtr)
}

/// The Jacobian ∂rᵢ/∂θⱼ of `residuals` at θ by central differences, row-major, with step
/// h = 1e-6 × max(|θⱼ|, 1); None when the residuals are undefined at a step.
pub fn central_difference_jacobian(
    residuals: &dyn Fn(&[f64]) -> Option<Vec<f64>>,
    theta: &[f64],
) -> Option<Vec<f64>> {
    let n = theta.len();
    let mut j: Vec<f64> = Vec::new();
    for k in 0..n {
        let h = 1e-6 * theta[k].abs().max(1.0);
        let mut up = theta.to_vec();
        let mut down = theta.to_vec();
        up[k] += h;
        down[k] -= h;
        let (ru, rd) = (residuals(&up)?, residuals(&down)?);
        if j.is_empty() {
            j = vec![0.0; ru.len() * n];
        }
        for i in 0..ru.len() {
            j[i * n + k] = (ru[i] - rd[i]) / (2.0 * h);
        }
    }
    Some(j)
}

/// A least-squares problem: residuals rᵢ = model − data and their Jacobian at θ.
pub trait Problem {
    /// Number of parameters.
    fn parameters(&self) -> usize;
    /// Residuals at θ (None when θ is outside the model's domain).
    fn residuals(&self, theta: &[f64]) -> Option<Vec<f64>>;
    /// Row-major Jacobian ∂rᵢ/∂θⱼ at θ.
    fn jacobian(&self, theta: &[f64]) -> Option<Vec<f64>>;
}

/// The outcome of a fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// Parameters at the minimum.
    pub theta: Vec<f64>,
    /// Σ r² there.
    pub cost: f64,
    /// Iterations used.
    pub iterations: usize,
    /// Whether the relative cost change fell below the tolerance.
    pub converged: bool,
}

fn sum_of_squares(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// Minimises Σ r² from `start`.
pub fn minimize(problem: &dyn Problem, start: &[f64], max_iterations: usize) -> Option<Solution> {
    let n = problem.parameters();
    let mut theta = start.to_vec();
    let mut r = problem.residuals(&theta)?;
    let mut cost = sum_of_squares(&r);
    if !cost.is_finite() {
        return None;
    }
    let mut lambda = 1e-3;
    let mut converged = false;
    let mut iterations = 0;
    while iterations < max_iterations {
        iterations += 1;
        let j = problem.jacobian(&theta)?;
        let (jtj, jtr) = normal_equations(&j, &r, n);
        let gradient_norm = jtr.iter().map(|g| g.abs()).fold(0.0, f64::max);
        if gradient_norm <= 1e-15 * (1.0 + cost) {
            converged = true;
            break;
        }
        let mut improved = false;
        for _ in 0..40 {
            let mut a = jtj.clone();
            for k in 0..n {
                a[k * n + k] += lambda * jtj[k * n + k].max(1e-12);
            }
            let rhs: Vec<f64> = jtr.iter().map(|g| -g).collect();
            let Some(delta) = solve(&a, &rhs, n) else {
                lambda *= 10.0;
                continue;
            };
            let candidate: Vec<f64> = theta.iter().zip(&delta).map(|(t, d)| t + d).collect();
            match problem.residuals(&candidate) {
                Some(rc) => {
                    let c = sum_of_squares(&rc);
                    if c.is_finite() && c <= cost {
                        let relative = (cost - c) / cost.max(1e-300);
                        let step = delta
                            .iter()
                            .zip(&theta)
                            .map(|(d, t)| d.abs() / (t.abs() + 1e-12))
                            .fold(0.0, f64::max);
                        theta = candidate;
                        r = rc;
                        cost = c;
                        lambda = (lambda / 10.0).max(1e-12);
                        improved = true;
                        if relative < 1e-15 || step < 1e-12 {
                            converged = true;
                        }
                        break;
                    }
                    lambda *= 10.0;
                }
                None => lambda *= 10.0,
            }
        }
        if !improved {
            // No step lowers the cost at any damping: a (local) minimum to working precision.
            converged = true;
            break;
        }
        if converged {
            break;
        }
    }
    Some(Solution {
        theta,
        cost,
        iterations,
        converged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_by_hand() {
        // [[4, 2], [2, 3]] = L Lᵀ with L = [[2, 0], [1, √2]].
        let l = cholesky(&[4.0, 2.0, 2.0, 3.0], 2).unwrap();
        assert_eq!(l[0], 2.0);
        assert_eq!(l[1], 0.0);
        assert_eq!(l[2], 1.0);
        assert!((l[3] - 2f64.sqrt()).abs() < 1e-15);
        // Semi-definite: a zero pivot is kept at 0; indefinite: refused.
        assert!(cholesky(&[1.0, 1.0, 1.0, 1.0], 2).is_some());
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }

    #[test]
    fn solves_a_hand_system() {
        // 2x + y = 5, x + 3y = 10 → x = 1, y = 3.
        let x = solve(&[2.0, 1.0, 1.0, 3.0], &[5.0, 10.0], 2).unwrap();
        assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
        assert!(
            solve(&[1.0, 2.0, 2.0, 4.0], &[1.0, 2.0], 2).is_none(),
            "singular"
        );
        let inv = inverse(&[4.0, 7.0, 2.0, 6.0], 2).unwrap();
        let expected = [0.6, -0.7, -0.2, 0.4];
        assert!(inv.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    struct Exponential {
        x: Vec<f64>,
        y: Vec<f64>,
    }

    impl Problem for Exponential {
        fn parameters(&self) -> usize {
            2
        }
        fn residuals(&self, t: &[f64]) -> Option<Vec<f64>> {
            Some(
                self.x
                    .iter()
                    .zip(&self.y)
                    .map(|(x, y)| t[0] * (t[1] * x).exp() - y)
                    .collect(),
            )
        }
        fn jacobian(&self, t: &[f64]) -> Option<Vec<f64>> {
            Some(
                self.x
                    .iter()
                    .flat_map(|x| [(t[1] * x).exp(), t[0] * x * (t[1] * x).exp()])
                    .collect(),
            )
        }
    }

    #[test]
    fn recovers_an_exact_exponential() {
        let x: Vec<f64> = (0..20).map(|i| i as f64 / 10.0).collect();
        let y: Vec<f64> = x.iter().map(|x| 2.5 * (-1.3 * x).exp()).collect();
        let s = minimize(&Exponential { x, y }, &[1.0, 0.0], 200).unwrap();
        assert!(
            (s.theta[0] - 2.5).abs() < 1e-9 && (s.theta[1] + 1.3).abs() < 1e-9,
            "{s:?}"
        );
        assert!(s.cost < 1e-20);
    }
}
