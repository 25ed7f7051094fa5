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

/// Inverse standard normal CDF Φ⁻¹(p) for p in (0, 1): Wichura's algorithm AS 241 (PPND16),
/// accurate to about 1e-16 (Applied Statistics 37(3), 1988, 477-484).
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        let num = (((((((2509.080_928_730_122_7 * r + 33430.575_583_588_128) * r
            + 67265.770_927_008_7)
            * r
            + 45921.953_931_549_87)
            * r
            + 13731.693_765_509_461)
            * r
            + 1971.590_950_306_551_3)
            * r
            + 133.141_667_891_784_38)
            * r
            + 3.387_132_872_796_366_5)
            * q;
        let den = ((((((5226.495_278_852_545 * r + 28729.085_735_721_943) * r
            + 39307.895_800_092_71)
            * r
            + 21213.794_301_586_597)
            * r
            + 5394.196_021_424_751)
            * r
            + 687.187_007_492_057_9)
            * r
            + 42.313_330_701_600_91)
            * r
            + 1.0;
        return num / den;
    }
    let mut r = if q < 0.0 { p } else { 1.0 - p };
    r = (-r.ln()).sqrt();
    let value = if r <= 5.0 {
        let r = r - 1.6;
        let num = ((((((7.745_450_142_783_414e-4 * r + 0.022_723_844_989_269_184) * r
            + 0.241_780_725_177_450_6)
            * r
            + 1.270_458_252_452_368_4)
            * r
            + 3.647_848_324_763_204_5)
            * r
            + 5.769_497_221_460_691)
            * r
            + 4.630_337_846_156_545)
            * r
            + 1.423_437_110_749_683_5;
        let den = ((((((1.050_750_071_644_416_9e-9 * r + 5.475_938_084_995_345e-4) * r
            + 0.015_198_666_563_616_457)
            * r
            + 0.148_103_976_427_480_08)
            * r
            + 0.689_767_334_985_1)
            * r
            + 1.676_384_830_183_803_8)
            * r
            + 2.053_191_626_637_759)
            * r
            + 1.0;
        num / den
    } else {
        let r = r - 5.0;
        let num = ((((((2.010_334_399_292_288_1e-7 * r + 2.711_555_568_743_487_6e-5) * r
            + 1.242_660_947_388_078_4e-3)
            * r
            + 0.026_532_189_526_576_124)
            * r
            + 0.296_560_571_828_504_9)
            * r
            + 1.784_826_539_917_291_3)
            * r
            + 5.463_784_911_164_114)
            * r
            + 6.657_904_643_501_103;
        let den = ((((((2.044_263_103_389_939_7e-15 * r + 1.421_511_758_316_446e-7) * r
            + 1.846_318_317_510_054_8e-5)
            * r
            + 7.868_691_311_456_133e-4)
            * r
            + 0.014_875_361_290_850_615)
            * r
            + 0.136_929_880_922_735_8)
            * r
            + 0.599_832_206_555_888)
            * r
            + 1.0;
        num / den
    };
    if q < 0.0 { -value } else { value }
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

/// Expected length of the longest of `count` responses, capped: the maximum of n draws sits on
/// average at the n/(n+1) quantile (order statistics of uniforms, E[U_(n)] = n/(n+1)).
pub fn straggler_tokens(mean_tokens: f64, cv: f64, cap: f64, count: f64) -> f64 {
    let (mu, sigma) = lognormal_parameters(mean_tokens, cv);
    let q = count / (count + 1.0);
    (mu + sigma * normal_quantile(q)).exp().min(cap)
}

/// Beta(α, β) parameters of the per-prompt pass-rate profile from its mean and concentration α+β.
pub fn beta_parameters(mean: f64, concentration: f64) -> (f64, f64) {
    (mean * concentration, (1.0 - mean) * concentration)
}

/// E[p^n] for p ~ Beta(α, β): Π_{i<n} (α+i)/(α+β+i), summed in log space so that n = 4096 is
/// exact to rounding.
pub fn beta_moment(alpha: f64, beta: f64, n: u64) -> f64 {
    let mut log = 0.0;
    for i in 0..n {
        let i = i as f64;
        log += ((alpha + i) / (alpha + beta + i)).ln();
    }
    log.exp()
}

/// Share of groups of G responses whose answers all agree (all pass or all fail), so their
/// group-relative advantages are zero and they carry no learning signal:
/// E[p^G] + E[(1−p)^G] over the Beta profile (design.md section 5; DAPO, arXiv 2503.14476,
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
