//! Published before/after pairs from every allowed study (`evidence/before_after.csv`, written
//! by `scripts/pair-outcomes` from the checked rows of the research notes and of
//! `published_results.csv`): one benchmark score of one run, before and after RL, with the run's
//! start kind, steps and settings where the study states them. Stage 7 of the prior's fit
//! (src/fit/starts.rs) and the leave-one-study-out backtest (src/fit/backtest.rs) read them.

use std::path::Path;

use crate::error::{Error, Result};
use crate::fit::evidence::{run_signal, training_profile};
use crate::outcome::{Benchmark, CellSignal, StartKind};

/// One published outcome with its run's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedOutcome {
    /// Short id of the study (`simplerl-zoo`, `acereason`, ...): the unit the backtest leaves out.
    pub study: String,
    /// The run as the study names it.
    pub run: String,
    /// The checkpoint the run starts from.
    pub start_model: String,
    /// Parameters, billions.
    pub params_b: f64,
    /// Kind of start.
    pub start: StartKind,
    /// The metric as the study names it.
    pub metric: String,
    /// Kind of benchmark (from the metric's name).
    pub benchmark: Benchmark,
    /// The benchmark's family (`aime24`, `math500`, ...): what the mean-gain baseline averages
    /// over.
    pub family: String,
    /// Score before RL, 0-1.
    pub base: f64,
    /// Score after RL, 0-1.
    pub after: f64,
    /// RL steps from the start, when stated or derivable.
    pub steps: Option<f64>,
    /// Response cap, tokens, when stated.
    pub cap_tokens: Option<f64>,
    /// Rollouts per prompt, when stated.
    pub group_size: Option<u64>,
    /// Prompts per step, when stated.
    pub prompts_per_step: Option<f64>,
    /// LoRA rank (None: full fine-tuning).
    pub lora_rank: Option<u64>,
    /// Distinct training prompts, when stated.
    pub dataset_prompts: Option<f64>,
    /// The score the start model's base scores on the study's other math benchmarks imply on
    /// this one (`outcome::ability`), once [`with_ability_scores`] has set it.
    pub ability_score: Option<f64>,
}

/// Settings assumed where a study does not state them: 512 prompts × 8 rollouts at an 8,192-token
/// cap (the middle of the evidence's stated settings).
pub const UNSTATED_SETTINGS: (f64, u64, f64) = (512.0, 8, 8192.0);

#[cfg(test)]
impl PairedOutcome {
    /// A 7B pair for tests: its study, start kind, metric, benchmark kind and family; its
    /// scores at 0 and nothing else stated (set them with struct update syntax).
    pub(crate) fn for_test(
        study: &str,
        start: StartKind,
        metric: &str,
        benchmark: Benchmark,
        family: &str,
    ) -> Self {
        PairedOutcome {
            study: study.into(),
            run: String::new(),
            start_model: String::new(),
            params_b: 7.0,
            start,
            metric: metric.into(),
            benchmark,
            family: family.into(),
            base: 0.0,
            after: 0.0,
            steps: None,
            cap_tokens: None,
            group_size: None,
            prompts_per_step: None,
            lora_rank: None,
            dataset_prompts: None,
            ability_score: None,
        }
    }
}

impl PairedOutcome {
    /// What the prior knows about this run, `steps` long when the study does not say (the
    /// backtest passes the median of the other studies' runs of the same kind).
    pub fn signal(&self, unstated_steps: f64) -> CellSignal {
        let (prompts, group, cap) = UNSTATED_SETTINGS;
        let mut s = run_signal(
            training_profile(),
            self.params_b,
            self.prompts_per_step.unwrap_or(prompts),
            self.group_size.unwrap_or(group),
            self.cap_tokens.unwrap_or(cap),
            crate::config::Task::default().mean_response_tokens,
            self.steps.unwrap_or(unstated_steps),
            self.start,
            Some(self.base),
        );
        s.benchmark = self.benchmark;
        s.lora_rank = self.lora_rank;
        s.ability_score = self.ability_score;
        s.pass_share_per_step = self
            .dataset_prompts
            .map(|d| self.prompts_per_step.unwrap_or(prompts) / d);
        s
    }

    /// The base-score band the backtest reports by: `< 0.15`, `0.15-0.8` or `> 0.8`.
    pub fn base_band(&self) -> &'static str {
        if self.base < 0.15 {
            "base < 0.15"
        } else if self.base <= 0.8 {
            "base 0.15-0.8"
        } else {
            "base > 0.8"
        }
    }

    /// The cap band the backtest reports by.
    pub fn cap_band(&self) -> &'static str {
        match self.cap_tokens {
            None => "cap not stated",
            Some(c) if c <= 8192.0 => "cap <= 8k",
            Some(c) if c <= 16384.0 => "cap 8k-16k",
            Some(_) => "cap > 16k",
        }
    }
}

/// The math benchmarks' levels fitted to the scores after RL of `pairs`
/// ([`crate::outcome::ability::fit_levels`]; one run is a study's run name).
pub fn benchmark_levels(pairs: &[&PairedOutcome]) -> crate::outcome::ability::AbilityScale {
    let mut runs: std::collections::BTreeMap<(&str, &str), Vec<(String, f64)>> =
        std::collections::BTreeMap::new();
    for p in pairs {
        runs.entry((p.study.as_str(), p.run.as_str()))
            .or_default()
            .push((p.family.clone(), p.after));
    }
    crate::outcome::ability::fit_levels(&runs.into_values().collect::<Vec<_>>())
}

/// `pairs` with each one's ability score set from `scale`: the score its start model's base
/// scores on the study's other math benchmarks imply on its own (each family's base score once:
/// a start model has one base score per benchmark).
pub fn with_ability_scores(
    pairs: &[PairedOutcome],
    scale: &crate::outcome::ability::AbilityScale,
) -> Vec<PairedOutcome> {
    let mut bases: std::collections::BTreeMap<(&str, &str), Vec<(&str, f64)>> =
        std::collections::BTreeMap::new();
    for p in pairs {
        let entry = bases
            .entry((p.study.as_str(), p.start_model.as_str()))
            .or_default();
        if !entry.iter().any(|(f, _)| *f == p.family) {
            entry.push((p.family.as_str(), p.base));
        }
    }
    pairs
        .iter()
        .map(|p| {
            let others = &bases[&(p.study.as_str(), p.start_model.as_str())];
            PairedOutcome {
                ability_score: crate::outcome::ability::implied_score(
                    &scale.levels,
                    scale.residual_sd,
                    &p.family,
                    p.base,
                    others,
                ),
                ..p.clone()
            }
        })
        .collect()
}

/// The pairs bundled into the binary (`evidence/before_after.csv` at build time).
pub const EMBEDDED_PAIRS: &str = include_str!("../../evidence/before_after.csv");

/// [`EMBEDDED_PAIRS`], parsed.
pub fn embedded_pairs() -> Vec<PairedOutcome> {
    parse_pairs(
        EMBEDDED_PAIRS.as_bytes(),
        Path::new("evidence/before_after.csv"),
    )
    .expect("the bundled pairs parse (a test checks it)")
}

/// Reads a pairs file.
pub fn read_pairs(path: &Path) -> Result<Vec<PairedOutcome>> {
    let bytes = crate::input::read_bytes(path, crate::input::MAX_TABLE_BYTES)?;
    parse_pairs(&bytes, path)
}

/// The columns of `evidence/pairs.csv`, in the order `parse_pairs` reads them.
const PAIR_COLUMNS: [&str; 15] = [
    "study",
    "run",
    "start_model",
    "params_b",
    "start",
    "metric",
    "base_score",
    "after_score",
    "steps",
    "cap_tokens",
    "group_size",
    "prompts_per_step",
    "lora_rank",
    "benchmark",
    "dataset_prompts",
];

/// Parses pairs CSV bytes; `path` names them in messages (with the line and column at fault).
pub fn parse_pairs(bytes: &[u8], path: &Path) -> Result<Vec<PairedOutcome>> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::in_file(path, Some(1), name, "missing column"))
    };
    let names = PAIR_COLUMNS;
    let mut at = [0usize; 15];
    for (k, name) in names.iter().enumerate() {
        at[k] = column(name)?;
    }
    let mut out = Vec::new();
    for (k, record) in reader.records().enumerate() {
        let line = k + 2;
        let record = record.map_err(|e| Error::in_file(path, Some(line), "", e.to_string()))?;
        let field = |i: usize| record.get(at[i]).unwrap_or("").trim();
        let bad =
            |i: usize, what: &str| Error::in_file(path, Some(line), names[i], what.to_string());
        let number = |i: usize| -> Result<Option<f64>> {
            let text = field(i);
            if text.is_empty() {
                return Ok(None);
            }
            match text.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(bad(i, &format!("`{text}` is not a non-negative number"))),
            }
        };
        let score = |i: usize| -> Result<f64> {
            match number(i)? {
                Some(x) if x <= 1.0 => Ok(x),
                _ => Err(bad(i, "give a score as a fraction in [0, 1]")),
            }
        };
        let start = StartKind::from_name(field(4))
            .ok_or_else(|| bad(4, "give base, instruct, distilled or tuned"))?;
        let params_b = number(3)?
            .filter(|p| *p > 0.0)
            .ok_or_else(|| bad(3, "give the parameter count in billions"))?;
        out.push(PairedOutcome {
            study: field(0).to_string(),
            run: field(1).to_string(),
            start_model: field(2).to_string(),
            params_b,
            start,
            metric: field(5).to_string(),
            benchmark: Benchmark::of_metric(field(5)),
            family: field(13).to_string(),
            base: score(6)?,
            after: score(7)?,
            steps: number(8)?.filter(|s| *s > 0.0),
            cap_tokens: number(9)?.filter(|c| *c > 0.0),
            group_size: number(10)?.map(|g| g as u64).filter(|g| *g > 0),
            prompts_per_step: number(11)?.filter(|p| *p > 0.0),
            lora_rank: number(12)?.map(|r| r as u64).filter(|r| *r > 0),
            dataset_prompts: number(14)?.filter(|d| *d > 0.0),
            ability_score: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_pairs_parse_and_span_the_start_kinds() {
        let pairs = embedded_pairs();
        let count = |k: StartKind| pairs.iter().filter(|p| p.start == k).count();
        assert!(pairs.len() >= 200, "{}", pairs.len());
        assert!(count(StartKind::Base) >= 50);
        assert!(count(StartKind::Distilled) >= 50);
        assert!(count(StartKind::Instruct) >= 10);
        let studies: std::collections::BTreeSet<&str> =
            pairs.iter().map(|p| p.study.as_str()).collect();
        assert!(studies.len() >= 6, "{studies:?}");
    }

    #[test]
    fn a_bad_field_names_its_line_and_column() {
        let text = "study,run,start_model,params_b,start,metric,base_score,after_score,steps,cap_tokens,group_size,prompts_per_step,lora_rank,benchmark,dataset_prompts\n\
                    s,r,m,7,base,AIME24,0.1,0.2,100,,,,,aime24,\n\
                    s,r,m,7,sft,AIME24,0.1,0.2,100,,,,,aime24,\n";
        let e = parse_pairs(text.as_bytes(), Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("p.csv") && e.contains('3') && e.contains("start"),
            "{e}"
        );
        let text = text.replace("sft", "base").replace(",0.2,100", ",45,100");
        let e = parse_pairs(text.as_bytes(), Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("after_score") && e.contains("fraction"), "{e}");
    }

    #[test]
    fn base_models_with_a_format_gap_end_near_their_implied_score() {
        // The evidence behind the ability floor (outcome::ceiling_of): of the base-start pairs
        // whose base score sits below what their model's other math benchmarks imply (levels
        // fitted to these pairs, gap beyond noise), RL closes about the whole gap in logit units,
        // median (not half of it, and not twice).
        let pairs = embedded_pairs();
        let refs: Vec<&PairedOutcome> = pairs.iter().collect();
        let scale = benchmark_levels(&refs);
        let written = crate::outcome::fitted::BENCHMARK_LEVELS;
        assert_eq!(scale.levels.len(), written.len());
        for ((f, l), (g, m)) in scale.levels.iter().zip(written) {
            assert!(f == g && (l - m).abs() < 1e-5, "{f} {l} vs {g} {m}");
        }
        let logit = |p: f64| {
            let p = p.clamp(0.005, 0.995);
            (p / (1.0 - p)).ln()
        };
        let mut closed: Vec<f64> = with_ability_scores(&pairs, &scale)
            .iter()
            .filter(|p| p.start == StartKind::Base)
            .filter_map(|p| {
                let implied = p.ability_score?;
                Some((logit(p.after) - logit(p.base)) / (logit(implied) - logit(p.base)))
            })
            .collect();
        assert!(closed.len() >= 30, "{}", closed.len());
        closed.sort_by(f64::total_cmp);
        let median = closed[closed.len() / 2];
        assert!(
            (0.8..=1.5).contains(&median),
            "median share closed {median} of {}",
            closed.len()
        );
    }
}
