//! How far to trust the ledger's price: a 90% interval on a run's step seconds (and so its dollars, or
//! the steps a budget buys), from the ledger's **out-of-sample** error on published timings.
//!
//! `rlfrontier validate --loso` prices every whole step of the validation set with the
//! constants the *other* sources choose (`costing::loso`) and writes each held-out step's
//! residual r = log2(measured / predicted) to `validation/loso_residuals.csv` (bundled here;
//! a test regenerates it). Each residual carries the setup's tags (engine, GPU, dense or MoE,
//! cap band, algorithm, fine-tuning, schedule) and whether, with its source held out, any of
//! its tags had no row left: an **unseen** setup, the case a user's run is in when nothing like
//! it was ever measured.
//!
//! A setup whose every tag has rows gets the 90% prediction interval of the seen residuals; a
//! setup with a tag no row has gets the widest: that of the unseen residuals (what the ledger's
//! error was, out of sample, on setups it had never been checked against), never narrower than
//! the seen interval, and the output names the tags (`no published timing of this setup:
//! gpu mi300x, LoRA`). The prediction interval is Student's, for one new draw from the
//! residuals' distribution: mean ± t(0.95, n−1) · s · √(1 + 1/n) (log2 residuals taken as
//! normal; with a couple of dozen residuals, empirical 5th/95th percentiles would hold a new
//! step far less than 90% of the time, and did: 17 of 24 leave one source out). The interval's
//! coverage is itself tested leave one source out ([`coverage`]).

/// The held-out residuals bundled into the binary (`validate --loso --csv` writes the file).
pub const EMBEDDED_RESIDUALS: &str = include_str!("../../validation/loso_residuals.csv");

/// Student's t 0.95 quantile for 1 to 30 degrees of freedom (any table of the t
/// distribution's critical values, e.g. NIST/SEMATECH e-Handbook of Statistical Methods,
/// section 1.3.6.7.2, column 0.05).
const T95: [f64; 30] = [
    6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
    1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
    1.703, 1.701, 1.699, 1.697,
];

/// Student's t 0.95 quantile with `df` degrees of freedom: the table to 30, then the
/// Cornish-Fisher expansion about the normal quantile z (Abramowitz and Stegun 26.7.5), which
/// is within 0.001 of the table from 30 on.
pub fn t95(df: usize) -> f64 {
    if (1..=30).contains(&df) {
        return T95[df - 1];
    }
    let z = 1.644_853_626_951_472_2_f64;
    let v = df.max(1) as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * v.powi(3))
}

/// One held-out whole step.
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// The validation row.
    pub id: String,
    /// Who measured it (`costing::loso::source_key`).
    pub source: String,
    /// log2(measured / predicted): positive when the ledger priced it too fast.
    pub log2_measured_over_predicted: f64,
    /// Whether, with its source held out, one of its tags had no row.
    pub unseen: bool,
    /// The setup's tags (see [`tags`]).
    pub tags: Vec<String>,
}

/// The tags of a setup, as the validation rows carry them: `engine E`, `gpu G`, `dense` or
/// `MoE`, `cap < 8k` or `cap >= 8k`, `grpo` or `ppo`, `full` or `LoRA`, and the schedule.
pub fn tags(
    engine: &str,
    gpu: &str,
    moe: bool,
    cap_tokens: f64,
    algorithm: crate::config::Algorithm,
    lora: bool,
    schedule: crate::config::Schedule,
) -> Vec<String> {
    vec![
        format!("engine {engine}"),
        format!("gpu {gpu}"),
        if moe { "MoE" } else { "dense" }.to_string(),
        if cap_tokens >= 8192.0 - 200.0 {
            "cap >= 8k"
        } else {
            "cap < 8k"
        }
        .to_string(),
        match algorithm {
            crate::config::Algorithm::Grpo => "grpo",
            crate::config::Algorithm::Ppo => "ppo",
        }
        .to_string(),
        if lora { "LoRA" } else { "full" }.to_string(),
        format!("schedule {schedule}"),
    ]
}

/// The header of the residual file.
pub const RESIDUALS_HEADER: &str = "id,source,log2_measured_over_predicted,unseen,tags";

/// Reads the residual file (`RESIDUALS_HEADER`; tags joined by `;`). A malformed line is a bug
/// of the file `validate --loso` wrote, so it is skipped rather than guessed at; a test checks
/// the bundled file reads whole.
pub fn parse_residuals(text: &str) -> Vec<Residual> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.splitn(5, ',');
            let id = f.next()?.to_string();
            let source = f.next()?.to_string();
            let r: f64 = f.next()?.parse().ok()?;
            let unseen = f.next()? == "true";
            let tags = f.next()?.split(';').map(str::to_string).collect();
            r.is_finite().then_some(Residual {
                id,
                source,
                log2_measured_over_predicted: r,
                unseen,
                tags,
            })
        })
        .collect()
}

/// Writes residuals in the file's format (the inverse of [`parse_residuals`]).
pub fn residuals_csv(residuals: &[Residual]) -> String {
    let mut out = format!("{RESIDUALS_HEADER}\n");
    for r in residuals {
        out.push_str(&format!(
            "{},{},{},{},{}\n",
            r.id,
            r.source.replace(',', " "),
            crate::format::number(r.log2_measured_over_predicted),
            r.unseen,
            r.tags.join(";")
        ));
    }
    out
}

/// A 90% interval on a price, as factors on the ledger's seconds (and dollars).
#[derive(Debug, Clone, PartialEq)]
pub struct PriceInterval {
    /// The step (and dollars) are at least this many times the ledger's, 5% of the time less.
    pub low_factor: f64,
    /// At most this many times, 5% of the time more.
    pub high_factor: f64,
    /// The setup's tags no published timing has (empty when every tag has rows).
    pub unseen_tags: Vec<String>,
    /// Held-out steps the interval is drawn from.
    pub residuals: usize,
}

impl PriceInterval {
    /// `[low, high]` of `value` (seconds or dollars, which scale with the step).
    pub fn of(&self, value: f64) -> (f64, f64) {
        (value * self.low_factor, value * self.high_factor)
    }

    /// The interval on the steps a fixed budget buys: fewer when steps are slower.
    pub fn of_steps(&self, iterations: f64) -> (f64, f64) {
        (iterations / self.high_factor, iterations / self.low_factor)
    }
}

/// The 90% prediction interval (log2) for one new residual, from the residuals `keep` admits:
/// mean ± t95(n−1) · s · √(1 + 1/n). None with fewer than two.
fn prediction(residuals: &[Residual], keep: &dyn Fn(&Residual) -> bool) -> Option<(f64, f64)> {
    let values: Vec<f64> = residuals
        .iter()
        .filter(|r| keep(r))
        .map(|r| r.log2_measured_over_predicted)
        .collect();
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * variance.sqrt() * (1.0 + 1.0 / n as f64).sqrt();
    Some((mean - half, mean + half))
}

/// The interval of a setup with `setup_tags`, from `residuals` (see the module doc). None when
/// there are no residuals at all.
pub fn interval(setup_tags: &[String], residuals: &[Residual]) -> Option<PriceInterval> {
    let unseen_tags: Vec<String> = setup_tags
        .iter()
        .filter(|t| !residuals.iter().any(|r| r.tags.contains(t)))
        .cloned()
        .collect();
    let seen = prediction(residuals, &|r| !r.unseen)?;
    let (low, high) = if unseen_tags.is_empty() {
        seen
    } else {
        match prediction(residuals, &|r| r.unseen) {
            Some(unseen) => (seen.0.min(unseen.0), seen.1.max(unseen.1)),
            None => seen,
        }
    };
    Some(PriceInterval {
        low_factor: low.exp2(),
        high_factor: high.exp2(),
        unseen_tags,
        residuals: residuals.len(),
    })
}

/// The bundled residuals' interval of a setup.
pub fn bundled_interval(setup_tags: &[String]) -> Option<PriceInterval> {
    interval(setup_tags, &parse_residuals(EMBEDDED_RESIDUALS))
}

/// How the intervals fare leave one source out ([`coverage`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Held-out steps inside their interval.
    pub held: usize,
    /// Held-out steps with an interval.
    pub total: usize,
    /// Median of the intervals' high over low factor (2 = the high end is twice the low).
    pub median_width_factor: f64,
}

/// Leave one source out on the residuals themselves: each held-out step's interval drawn from
/// the other sources' residuals (its tags seen or not among them), whether it holds the step,
/// and how wide it is.
pub fn coverage(residuals: &[Residual]) -> Coverage {
    let mut held = 0;
    let mut widths = Vec::new();
    for r in residuals {
        let others: Vec<Residual> = residuals
            .iter()
            .filter(|o| o.source != r.source)
            .cloned()
            .collect();
        let Some(i) = interval(&r.tags, &others) else {
            continue;
        };
        widths.push(i.high_factor / i.low_factor);
        let ratio = r.log2_measured_over_predicted.exp2();
        if (i.low_factor..=i.high_factor).contains(&ratio) {
            held += 1;
        }
    }
    Coverage {
        held,
        total: widths.len(),
        median_width_factor: crate::stats::median(widths),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual(source: &str, r: f64, unseen: bool, tags: &[&str]) -> Residual {
        Residual {
            id: format!("{source}-{r}"),
            source: source.to_string(),
            log2_measured_over_predicted: r,
            unseen,
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn t_quantiles_match_the_table_and_the_expansion_continues_it() {
        // NIST/SEMATECH table, column 0.05: 10 df 1.812, 30 df 1.697, 60 df 1.671, 100 df 1.660.
        assert_eq!(t95(10), 1.812);
        assert!((t95(31) - 1.696).abs() < 1e-3, "{}", t95(31));
        assert!((t95(60) - 1.671).abs() < 1e-3, "{}", t95(60));
        assert!((t95(100) - 1.660).abs() < 1e-3, "{}", t95(100));
    }

    #[test]
    fn an_unseen_tag_widens_to_the_unseen_residuals_and_is_named() {
        let residuals = vec![
            residual("a", -0.1, false, &["gpu h100-sxm"]),
            residual("b", 0.1, false, &["gpu h100-sxm"]),
            residual("c", 1.0, true, &["gpu gb200"]),
            residual("d", 0.6, true, &["gpu gb200"]),
        ];
        let seen = interval(&["gpu h100-sxm".to_string()], &residuals).unwrap();
        assert!(seen.unseen_tags.is_empty());
        // By hand: [-0.1, 0.1] has mean 0, s = 0.1414, n = 2: 0 ± 6.314 · 0.1414 · √1.5 = ±1.0936.
        let half = 6.314 * 0.02f64.sqrt() * 1.5f64.sqrt();
        assert!((seen.low_factor.log2() + half).abs() < 1e-9);
        assert!((seen.high_factor.log2() - half).abs() < 1e-9);
        let unseen = interval(&["gpu mi300x".to_string()], &residuals).unwrap();
        assert_eq!(unseen.unseen_tags, ["gpu mi300x"]);
        // [0.6, 1.0]: mean 0.8, s twice the seen one, so 0.8 ± 2 · 1.0936 = [-1.387, 2.987];
        // never narrower than the seen interval (which it holds here).
        assert!(
            (unseen.low_factor.log2() - (0.8 - 2.0 * half)).abs() < 1e-9,
            "{unseen:?}"
        );
        assert!((unseen.high_factor.log2() - (0.8 + 2.0 * half)).abs() < 1e-9);
        // Under a budget, slower steps buy fewer of them.
        let (few, many) = unseen.of_steps(100.0);
        assert!(few < 100.0 && many > 100.0);
    }

    #[test]
    fn the_file_format_round_trips() {
        let residuals = vec![residual("x/y", 0.25, true, &["gpu h20", "dense"])];
        assert_eq!(parse_residuals(&residuals_csv(&residuals)), residuals);
    }

    #[test]
    fn the_bundled_residuals_read_whole() {
        let lines = EMBEDDED_RESIDUALS.lines().count() - 1;
        assert!(lines > 0);
        assert_eq!(parse_residuals(EMBEDDED_RESIDUALS).len(), lines);
    }
}
