//! Response lengths and group statistics: the lognormal truncation model and the Beta pass-rate
//! profile.
//!
//! Uncapped response lengths are lognormal with the task's mean m and coefficient of variation c
//! (σ² = ln(1 + c²), μ = ln m − σ²/2). A cap L truncates them; the closed forms below use the
//! partial moments of the lognormal, E[X^k; X < L] = exp(kμ + k²σ²/2) Φ((ln L − μ − kσ²)/σ)
//! (Johnson, Kotz and Balakrishnan, "Continuous Univariate Distributions", vol. 1, ch. 14).

/// Standard normal CDF Φ(x), through the complementary error function (libm, a port of musl).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// The coefficients of Wichura's AS 241 (PPND16), digit for digit as published.
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
mod as241 {
    /// AS 241's central numerator coefficients (A in Wichura's paper).
    pub const A: [f64; 8] = [
        3.3871328727963666080e0,
        1.3314166789178437745e2,
        1.9715909503065514427e3,
        1.3731693765509461125e4,
        4.5921953931549871457e4,
        6.7265770927008700853e4,
        3.3430575583588128105e4,
        2.5090809287301226727e3,
    ];

    /// AS 241's central denominator coefficients (B in Wichura's paper).
    pub const B: [f64; 8] = [
        1.0,
        4.2313330701600911252e1,
        6.8718700749205790830e2,
        5.3941960214247511077e3,
        2.1213794301586595867e4,
        3.9307895800092710610e4,
        2.8729085735721942674e4,
        5.2264952788528545610e3,
    ];

    /// AS 241's intermediate-tail numerator coefficients (C in Wichura's paper).
    pub const C: [f64; 8] = [
        1.42343711074968357734e0,
        4.63033784615654529590e0,
        5.76949722146069140550e0,
        3.64784832476320460504e0,
        1.27045825245236838258e0,
        2.41780725177450611770e-1,
        2.27238449892691845833e-2,
        7.74545014278341407640e-4,
    ];

    /// AS 241's intermediate-tail denominator coefficients (D in Wichura's paper).
    pub const D: [f64; 8] = [
        1.0,
        2.05319162663775882187e0,
        1.67638483018380384940e0,
        6.89767334985100004550e-1,
        1.48103976427480074590e-1,
        1.51986665636164571966e-2,
        5.47593808499534494600e-4,
        1.05075007164441684324e-9,
    ];

    /// AS 241's far-tail numerator coefficients (E in Wichura's paper).
    pub const E: [f64; 8] = [
        6.65790464350110377720e0,
        5.46378491116411436990e0,
        1.78482653991729133580e0,
        2.96560571828504891230e-1,
        2.65321895265761230930e-2,
        1.24266094738807843860e-3,
        2.71155556874348757815e-5,
        2.01033439929228813265e-7,
    ];

    /// AS 241's far-tail denominator coefficients (F in Wichura's paper).
    pub const F: [f64; 8] = [
        1.0,
        5.99832206555887937690e-1,
        1.36929880922735805310e-1,
        1.48753612908506148525e-2,
        7.86869131145613259100e-4,
        1.84631831751005468180e-5,
        1.42151175831644588870e-7,
        2.04426310338993978564e-15,
    ];
}

/// Inverse standard normal CDF Φ⁻¹(p) for p in (0, 1): Wichura's algorithm AS 241 (PPND16),
/// accurate to about 1e-16 (Applied Statistics 37(3), 1988, 477-484). The coefficients are the
/// published ones, digit for digit (the module `as241` beside it).
pub fn normal_quantile(p: f64) -> f64 {
    fn poly(coefficients: &[f64; 8], x: f64) -> f64 {
        coefficients.iter().rev().fold(0.0, |acc, &c| acc * x + c)
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * poly(&as241::A, r) / poly(&as241::B, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let value = if r <= 5.0 {
        let r = r - 1.6;
        poly(&as241::C, r) / poly(&as241::D, r)
    } else {
        let r = r - 5.0;
        poly(&as241::E, r) / poly(&as241::F, r)
    };
    if q < 0.0 { -value } else { value }
}

/// A tiny per-thread memo of a pure function's last results. Neighbouring cells of a grid share
/// most axis values (G changes every thousand cells or so), so a few entries catch nearly every
/// repeat; results are bit-identical with or without it.
struct Memo<K: Copy + PartialEq, V: Copy, const N: usize> {
    entries: [Option<(K, V)>; N],
    next: usize,
}

impl<K: Copy + PartialEq, V: Copy, const N: usize> Memo<K, V, N> {
    const fn new() -> Self {
        Memo {
            entries: [None; N],
            next: 0,
        }
    }

    fn get_or(&mut self, key: K, compute: impl FnOnce() -> V) -> V {
        if let Some((_, v)) = self.entries.iter().flatten().find(|(k, _)| *k == key) {
            return *v;
        }
        let v = compute();
        self.entries[self.next] = Some((key, v));
        self.next = (self.next + 1) % N;
        v
    }
}

thread_local! {
    static LENGTHS: std::cell::RefCell<Memo<[u64; 3], ResponseLengths, 4>> = const { std::cell::RefCell::new(Memo::new()) };
    static STRAGGLERS: std::cell::RefCell<Memo<[u64; 4], f64, 8>> = const { std::cell::RefCell::new(Memo::new()) };
    static MOMENTS: std::cell::RefCell<Memo<[u64; 3], f64, 8>> = const { std::cell::RefCell::new(Memo::new()) };
}

/// Response-length statistics of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResponseLengths {
    /// E[min(X, L)]: mean generated tokens per response.
    pub mean_tokens: f64,
    /// E[min(X, L)²]: second moment, for the quadratic attention terms.
    pub second_moment_tokens: f64,
    /// P(X > L): share of responses cut at the cap.
    pub truncation_rate: f64,
    /// Share of generated tokens that belong to truncated responses: L·P(X > L) / E[min(X, L)].
    pub truncated_token_share: f64,
}

/// The lognormal length model: (μ, σ) from the mean and the coefficient of variation.
pub fn lognormal_parameters(mean_tokens: f64, cv: f64) -> (f64, f64) {
    let sigma2 = (1.0 + cv * cv).ln();
    (mean_tokens.ln() - sigma2 / 2.0, sigma2.sqrt())
}

/// Lengths of responses whose uncapped length is lognormal(mean, cv), capped at `cap` tokens.
pub fn response_lengths(mean_tokens: f64, cv: f64, cap: f64) -> ResponseLengths {
    let key = [mean_tokens.to_bits(), cv.to_bits(), cap.to_bits()];
    LENGTHS.with(|m| {
        m.borrow_mut()
            .get_or(key, || compute_response_lengths(mean_tokens, cv, cap))
    })
}

fn compute_response_lengths(mean_tokens: f64, cv: f64, cap: f64) -> ResponseLengths {
    let (mu, sigma) = lognormal_parameters(mean_tokens, cv);
    let z = (cap.ln() - mu) / sigma;
    let survival = 1.0 - normal_cdf(z);
    let below_mean = mean_tokens * normal_cdf(z - sigma);
    let below_second = (2.0 * mu + 2.0 * sigma * sigma).exp() * normal_cdf(z - 2.0 * sigma);
    let mean = below_mean + cap * survival;
    let second = below_second + cap * cap * survival;
    ResponseLengths {
        mean_tokens: mean,
        second_moment_tokens: second,
        truncation_rate: survival,
        truncated_token_share: if mean > 0.0 {
            (cap * survival / mean).min(1.0)
        } else {
            0.0
        },
    }
}

/// The distribution of generated lengths: an uncapped lognormal(μ, σ) cut at the cap L, so a
/// point mass P(X > L) sits at L (Johnson, Kotz and Balakrishnan, vol. 1, ch. 14, for the partial
/// moments). σ = 0 is a fixed length exp(μ) (a judge's verdict).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CappedLognormal {
    /// Log-scale location μ of the uncapped length.
    pub mu: f64,
    /// Log-scale spread σ of the uncapped length (0: a fixed length).
    pub sigma: f64,
    /// The cap L in tokens.
    pub cap_tokens: f64,
}

impl CappedLognormal {
    /// Uncapped mean and coefficient of variation, capped at `cap_tokens`.
    pub fn new(mean_tokens: f64, cv: f64, cap_tokens: f64) -> Self {
        let (mu, sigma) = lognormal_parameters(mean_tokens, cv);
        CappedLognormal {
            mu,
            sigma,
            cap_tokens,
        }
    }

    /// Every response exactly `tokens` long (below the cap).
    pub fn fixed(tokens: f64) -> Self {
        CappedLognormal {
            mu: tokens.max(1e-300).ln(),
            sigma: 0.0,
            cap_tokens: tokens,
        }
    }

    /// Φ((ln t − μ − kσ)/σ): the uncapped partial-moment weight below t (a step for σ = 0).
    fn below(&self, t: f64, k: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        if self.sigma <= 0.0 {
            return if t.ln() > self.mu { 1.0 } else { 0.0 };
        }
        normal_cdf((t.ln() - self.mu - k * self.sigma * self.sigma) / self.sigma)
    }

    /// E[X^k] of the uncapped lognormal: exp(kμ + k²σ²/2).
    fn raw_moment(&self, k: f64) -> f64 {
        (k * self.mu + k * k * self.sigma * self.sigma / 2.0).exp()
    }

    /// P(ℓ > t) for the capped length ℓ = min(X, L): zero at and beyond the cap.
    pub fn survival(&self, t: f64) -> f64 {
        if t >= self.cap_tokens {
            return 0.0;
        }
        1.0 - self.below(t, 0.0)
    }

    /// P(X > L): the point mass at the cap (the share of responses truncated).
    pub fn cap_mass(&self) -> f64 {
        1.0 - self.below(self.cap_tokens, 0.0)
    }

    /// E[ℓ^k; ℓ > t] for k = 0, 1, 2 (t below the cap): the lognormal's partial moment between t
    /// and L plus L^k times the point mass.
    pub fn upper_moment(&self, t: f64, k: u8) -> f64 {
        let l = self.cap_tokens;
        if t >= l {
            return 0.0;
        }
        let kf = f64::from(k);
        let body = self.raw_moment(kf) * (self.below(l, kf) - self.below(t, kf));
        body.max(0.0) + l.powi(i32::from(k)) * self.cap_mass()
    }

    /// E\[ℓ\]: the mean generated length.
    pub fn mean_tokens(&self) -> f64 {
        self.upper_moment(0.0, 1)
    }

    /// E\[ℓ²\].
    pub fn second_moment_tokens(&self) -> f64 {
        self.upper_moment(0.0, 2)
    }

    /// E[(ℓ − t)⁺]: tokens still to generate beyond t, per response.
    pub fn excess_tokens(&self, t: f64) -> f64 {
        (self.upper_moment(t, 1) - t * self.survival(t)).max(0.0)
    }

    /// E[((ℓ − t)⁺)²].
    pub fn excess_second_moment(&self, t: f64) -> f64 {
        (self.upper_moment(t, 2) - 2.0 * t * self.upper_moment(t, 1) + t * t * self.survival(t))
            .max(0.0)
    }

    /// The q-quantile of ℓ (the cap once q passes the uncapped mass below it).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.sigma <= 0.0 {
            return self.mu.exp().min(self.cap_tokens);
        }
        (self.mu + self.sigma * normal_quantile(q))
            .exp()
            .min(self.cap_tokens)
    }
}

/// Gauss-Legendre nodes and weights on [−1, 1], 8 points (Abramowitz and Stegun, table 25.4;
/// the published digits).
#[allow(clippy::excessive_precision)]
pub const GAUSS_LEGENDRE_8: [(f64, f64); 8] = [
    (-0.960_289_856_497_536_3, 0.101_228_536_290_376_26),
    (-0.796_666_477_413_626_7, 0.222_381_034_453_374_47),
    (-0.525_532_409_916_329_0, 0.313_706_645_877_887_3),
    (-0.183_434_642_495_649_8, 0.362_683_783_378_362_0),
    (0.183_434_642_495_649_8, 0.362_683_783_378_362_0),
    (0.525_532_409_916_329_0, 0.313_706_645_877_887_3),
    (0.796_666_477_413_626_7, 0.222_381_034_453_374_47),
    (0.960_289_856_497_536_3, 0.101_228_536_290_376_26),
];

impl CappedLognormal {
    /// E[max of `count` lengths] = ∫₀ᴸ (1 − F(t)^count) dt for independent lengths, by
    /// Gauss-Legendre quadrature on segments cut at the uncapped quantiles.
    pub fn expected_max(&self, count: f64) -> f64 {
        let count = count.max(1.0);
        let mut cuts: Vec<f64> = [0.5, 0.9, 0.99, 0.999, 0.9999]
            .iter()
            .map(|&q| self.quantile(q))
            .chain([0.0, self.cap_tokens])
            .collect();
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        let mut total = 0.0;
        for w in cuts.windows(2) {
            let (half, mid) = ((w[1] - w[0]) / 2.0, (w[0] + w[1]) / 2.0);
            for (x, weight) in GAUSS_LEGENDRE_8 {
                let s = self.survival(mid + half * x);
                total += weight * half * -(count * (-s).ln_1p()).exp_m1();
            }
        }
        total
    }
}

/// Response lengths as training logs report them: the mean of the generated (capped) lengths
/// at the cap the run used (veRL `response_length/mean`, TRL `completions/mean_length`) and,
/// optionally, the share cut at the cap (veRL `response_length/clip_ratio`, TRL
/// `completions/clipped_ratio`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoggedLengths {
    /// The logged mean of generated tokens, E[min(X, L)].
    pub mean_tokens: f64,
    /// The cap L it was logged at.
    pub cap_tokens: f64,
    /// The logged share of responses cut at the cap, P(X > L).
    pub clip_ratio: Option<f64>,
}

/// Why logged lengths have no lognormal behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct LengthFitError(pub String);

impl LoggedLengths {
    /// The uncapped lognormal behind the logged numbers: (uncapped mean, cv). With a clip ratio
    /// p, ln L = μ + σ·Φ⁻¹(1 − p) and E[min(X, L)] = the logged mean fix both μ and σ (the
    /// capped mean falls as σ grows at a fixed P(X > L), so σ is found by bisection); without
    /// one, `cv` is kept and μ found by bisection.
    pub fn uncapped(&self, cv: f64) -> Result<(f64, f64), LengthFitError> {
        let (m, l) = (self.mean_tokens, self.cap_tokens);
        if !(m > 0.0 && m <= l) {
            return Err(LengthFitError(format!(
                "a logged mean of {m} tokens cannot come from responses capped at {l}; the logged mean is at most the cap"
            )));
        }
        let Some(p) = self.clip_ratio else {
            if m >= l {
                return Err(LengthFitError(format!(
                    "a logged mean equal to the cap ({l}) means every response was cut: give the clip ratio (1.0) or a larger cap"
                )));
            }
            let (mut lo, mut hi) = (m, 1e3 * l);
            for _ in 0..200 {
                let mid = (lo * hi).sqrt();
                if response_lengths(mid, cv, l).mean_tokens < m {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Ok(((lo * hi).sqrt(), cv));
        };
        if !(0.0..1.0).contains(&p) {
            return Err(LengthFitError(format!(
                "a clip ratio of {p} is not a share in [0, 1); it is the fraction of responses cut at the cap"
            )));
        }
        if m < p * l {
            return Err(LengthFitError(format!(
                "a clip ratio of {p} puts {:.0} tokens per response at the cap alone, above the logged mean of {m}; check both numbers",
                p * l
            )));
        }
        let z = normal_quantile(1.0 - p.max(1e-12));
        let capped_mean = |sigma: f64| {
            let mu = l.ln() - z * sigma;
            let d = CappedLognormal {
                mu,
                sigma,
                cap_tokens: l,
            };
            (d.mean_tokens(), mu)
        };
        let (mut lo, mut hi) = (1e-4, 5.0);
        if capped_mean(lo).0 < m || capped_mean(hi).0 > m {
            return Err(LengthFitError(format!(
                "no lognormal has a capped mean of {m} with {:.1}% of responses at the cap {l}; check the clip ratio",
                100.0 * p
            )));
        }
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if capped_mean(mid).0 > m {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let sigma = (lo + hi) / 2.0;
        let mu = capped_mean(sigma).1;
        Ok((
            (mu + sigma * sigma / 2.0).exp(),
            (sigma * sigma).exp_m1().sqrt(),
        ))
    }
}

/// Expected length of the longest of `count` responses, capped: the maximum of n draws sits on
/// average at the n/(n+1) quantile (order statistics of uniforms, E[U_(n)] = n/(n+1)).
pub fn straggler_tokens(mean_tokens: f64, cv: f64, cap: f64, count: f64) -> f64 {
    let key = [
        mean_tokens.to_bits(),
        cv.to_bits(),
        cap.to_bits(),
        count.to_bits(),
    ];
    STRAGGLERS.with(|m| {
        m.borrow_mut().get_or(key, || {
            compute_straggler_tokens(mean_tokens, cv, cap, count)
        })
    })
}

fn compute_straggler_tokens(mean_tokens: f64, cv: f64, cap: f64, count: f64) -> f64 {
    let (mu, sigma) = lognormal_parameters(mean_tokens, cv);
    let q = count / (count + 1.0);
    (mu + sigma * normal_quantile(q)).exp().min(cap)
}

/// Beta(α, β) parameters of the per-prompt pass-rate profile from its mean and concentration α+β.
pub fn beta_parameters(mean: f64, concentration: f64) -> (f64, f64) {
    (mean * concentration, (1.0 - mean) * concentration)
}

/// E[p^n] for p ~ Beta(α, β): Π_{i<n} (α+i)/(α+β+i) = Γ(α+n)Γ(α+β) / (Γ(α)Γ(α+β+n)).
/// The product is summed in log space for n ≤ 64 and taken from log-gamma beyond (libm's lgamma,
/// a port of musl), so G = 4096 costs four calls instead of 8,192 logarithms.
pub fn beta_moment(alpha: f64, beta: f64, n: u64) -> f64 {
    MOMENTS.with(|m| {
        m.borrow_mut()
            .get_or([alpha.to_bits(), beta.to_bits(), n], || {
                compute_beta_moment(alpha, beta, n)
            })
    })
}

fn compute_beta_moment(alpha: f64, beta: f64, n: u64) -> f64 {
    if n <= 64 {
        let mut log = 0.0;
        for i in 0..n {
            let i = i as f64;
            log += ((alpha + i) / (alpha + beta + i)).ln();
        }
        return log.exp();
    }
    let n = n as f64;
    (libm::lgamma(alpha + n) + libm::lgamma(alpha + beta)
        - libm::lgamma(alpha)
        - libm::lgamma(alpha + beta + n))
    .exp()
}

/// Share of groups of G responses whose answers all agree (all pass or all fail), so their
/// group-relative advantages are zero and they carry no learning signal:
/// E[p^G] + E[(1−p)^G] over the Beta profile (docs/design.md §5; DAPO, arXiv 2503.14476,
/// motivates dynamic sampling by the same effect).
pub fn zero_signal_rate(pass_rate_mean: f64, concentration: f64, group_size: u64) -> f64 {
    let (a, b) = beta_parameters(pass_rate_mean, concentration);
    (beta_moment(a, b, group_size) + beta_moment(b, a, group_size)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_and_quantile_published_values() {
        // Abramowitz and Stegun, table 26.1: Φ(1) = 0.8413447461, Φ(1.96) = 0.9750021049.
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-14);
        assert!((normal_cdf(1.96) - 0.975_002_104_851_780).abs() < 1e-12);
        // Φ⁻¹(0.975) = 1.959963984540054 (AS 241 test value).
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-13);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-9);
        for p in [1e-12, 0.01, 0.3, 0.5, 0.77, 0.999_999] {
            assert!(
                (normal_cdf(normal_quantile(p)) - p).abs() < 1e-12 * p.max(1e-3) * 1e3,
                "{p}"
            );
        }
    }

    #[test]
    fn lognormal_truncation_hand_values() {
        // Mean 1000, cv 0.5: σ² = ln 1.25, μ = ln 1000 − σ²/2. At a cap equal to the median
        // exp(μ) = 894.43, exactly half the responses are truncated.
        let (mu, _) = lognormal_parameters(1000.0, 0.5);
        let median = mu.exp();
        assert!((median - 894.427_190_999_915_9).abs() < 1e-9);
        let r = response_lengths(1000.0, 0.5, median);
        assert!((r.truncation_rate - 0.5).abs() < 1e-12);
        // A huge cap truncates nothing: the mean and second moment are the lognormal's,
        // E[X²] = m²(1 + c²) = 1.25e6.
        let r = response_lengths(1000.0, 0.5, 1e12);
        assert!(r.truncation_rate < 1e-15);
        assert!((r.mean_tokens - 1000.0).abs() < 1e-6);
        assert!((r.second_moment_tokens - 1.25e6).abs() < 1e-3);
        // A tiny cap truncates everything: every response is exactly L tokens.
        let r = response_lengths(1000.0, 0.5, 1.0);
        assert!((r.mean_tokens - 1.0).abs() < 1e-9);
        assert!((r.truncated_token_share - 1.0).abs() < 1e-9);
    }

    #[test]
    fn truncated_mean_matches_numerical_integration() {
        // E[min(X, L)] = ∫_0^L P(X > x) dx, integrated by the midpoint rule.
        let (mean, cv, cap) = (900.0, 0.6, 1024.0);
        let (mu, sigma) = lognormal_parameters(mean, cv);
        let steps = 200_000;
        let dx = cap / steps as f64;
        let integral: f64 = (0..steps)
            .map(|i| {
                let x = (i as f64 + 0.5) * dx;
                1.0 - normal_cdf((x.ln() - mu) / sigma)
            })
            .sum::<f64>()
            * dx;
        let r = response_lengths(mean, cv, cap);
        assert!(
            (r.mean_tokens - integral).abs() < 1e-3,
            "{} vs {integral}",
            r.mean_tokens
        );
    }

    #[test]
    fn zero_signal_rate_hand_values() {
        // Beta(1, 1) (uniform pass rates): E[p^G] = 1/(G+1), so z(G) = 2/(G+1).
        for g in [1u64, 2, 4, 8, 16] {
            assert!((zero_signal_rate(0.5, 2.0, g) - 2.0 / (g as f64 + 1.0)).abs() < 1e-12);
        }
        // G = 1: a single answer always "agrees with itself".
        assert!((zero_signal_rate(0.3, 5.0, 1) - 1.0).abs() < 1e-12);
        // Beta(0.7, 1.3), G = 2: E[p²] = 0.7·1.7/(2·3) = 0.198333, E[(1-p)²] = 1.3·2.3/6 = 0.498333.
        assert!((zero_signal_rate(0.35, 2.0, 2) - (0.7 * 1.7 + 1.3 * 2.3) / 6.0).abs() < 1e-12);
        // Huge G stays finite and decreasing.
        let z = zero_signal_rate(0.35, 2.0, 4096);
        assert!(z.is_finite() && z > 0.0 && z < zero_signal_rate(0.35, 2.0, 2048));
    }

    #[test]
    fn log_gamma_branch_matches_the_product() {
        // Above 64 terms the closed form is used; it must agree with the product.
        for (a, b) in [(0.7, 1.3), (0.3, 0.7), (2.0, 5.0)] {
            for n in [65u64, 100, 1000, 4096] {
                let mut log = 0.0;
                for i in 0..n {
                    log += ((a + i as f64) / (a + b + i as f64)).ln();
                }
                let product = log.exp();
                assert!(
                    (beta_moment(a, b, n) - product).abs() <= 1e-11 * product,
                    "{a} {b} {n}"
                );
            }
        }
    }

    #[test]
    fn logged_lengths_invert_to_the_uncapped_lognormal() {
        // Logged 14,255 at cap 16,384 with 30% clipped: the fitted lognormal reproduces both.
        let logged = LoggedLengths {
            mean_tokens: 14_255.0,
            cap_tokens: 16_384.0,
            clip_ratio: Some(0.3),
        };
        let (mean, cv) = logged.uncapped(0.6).unwrap();
        let r = response_lengths(mean, cv, 16_384.0);
        assert!((r.mean_tokens - 14_255.0).abs() < 1e-3, "{}", r.mean_tokens);
        assert!((r.truncation_rate - 0.3).abs() < 1e-9);
        // Without a clip ratio the cv is kept and only the mean is matched.
        let (mean, cv) = LoggedLengths {
            clip_ratio: None,
            ..logged
        }
        .uncapped(0.6)
        .unwrap();
        assert_eq!(cv, 0.6);
        assert!((response_lengths(mean, cv, 16_384.0).mean_tokens - 14_255.0).abs() < 1e-3);
        assert!(mean > 14_255.0);
        // Inconsistent numbers are refused with the reason.
        let bad = LoggedLengths {
            mean_tokens: 2000.0,
            cap_tokens: 16_384.0,
            clip_ratio: Some(0.5),
        };
        assert!(
            bad.uncapped(0.6)
                .unwrap_err()
                .0
                .contains("above the logged mean")
        );
        assert!(
            LoggedLengths {
                mean_tokens: 20_000.0,
                cap_tokens: 16_384.0,
                clip_ratio: None
            }
            .uncapped(0.6)
            .is_err()
        );
    }

    #[test]
    fn straggler_is_capped_and_grows_with_count() {
        let a = straggler_tokens(900.0, 0.6, 1e9, 16.0);
        let b = straggler_tokens(900.0, 0.6, 1e9, 4096.0);
        assert!(b > a && a > 900.0);
        assert_eq!(straggler_tokens(900.0, 0.6, 2048.0, 1e6), 2048.0);
        // One response: the median exp(μ).
        let (mu, _) = lognormal_parameters(900.0, 0.6);
        assert!((straggler_tokens(900.0, 0.6, 1e9, 1.0) - mu.exp()).abs() < 1e-9);
    }
}
