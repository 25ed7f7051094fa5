//! Small summary statistics shared by the fits, the backtest and the log readers.

/// The median (the mean of the two middle values for an even count); NaN for no values.
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// 1.4826 × the median absolute deviation from the median: the standard deviation of a normal
/// sample, robust to a few wild values; 0 for no values.
pub fn robust_sd(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let m = median(values.to_vec());
    1.4826 * median(values.iter().map(|v| (v - m).abs()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_values() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
        // Deviations from the median 2 of [1, 2, 3, 100]: 1, 0, 1, 98 -> median 1 -> 1.4826.
        assert!((robust_sd(&[1.0, 2.0, 3.0, 100.0]) - 1.4826).abs() < 1e-12);
        assert_eq!(robust_sd(&[]), 0.0);
    }
}
