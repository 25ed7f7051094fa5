//! The outcome prior's defaults, fitted to the evidence base (`evidence/published_results.csv`)
//! by `rlfrontier fit-prior`, which writes them into `src/outcome/fitted.rs`.
//!
//! Only the studies the project may fit to are read: SimpleRL-Zoo (arXiv 2503.18892: base and
//! final scores of ten models on seven benchmarks) and ScaleRL (arXiv 2510.13786, Table 1: the
//! fitted A, B and C_mid of runs that vary one setting of its 8B recipe). The fit
//! itself, in stages, is `fit::prior` (feature `research`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::RewardKind;
use crate::error::{Error, Result};
use crate::ledger::lengths::{beta_moment, beta_parameters, response_lengths, zero_signal_rate};
use crate::outcome::{Benchmark, StartKind};
use crate::outcome::{CellSignal, OutcomeParams, parts, predict_score};

/// One published outcome: a model's score on a benchmark before and after RL.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Model as the source names it.
    pub model: String,
    /// Parameters, billions.
    pub params_b: f64,
    /// Benchmark.
    pub metric: String,
    /// Score before RL (0-1).
    pub base: f64,
    /// Score after RL (0-1).
    pub after: f64,
}

/// One ScaleRL Table 1 run of the 8B recipe: its configuration and fitted curve.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleRlRun {
    /// The `model` column of its evidence rows.
    pub label: &'static str,
    /// What the run changes.
    pub change: &'static str,
    /// Prompts per step.
    pub prompts: u64,
    /// Generations per prompt.
    pub group: u64,
    /// Generation budget, tokens.
    pub cap_tokens: f64,
    /// Fitted asymptote A.
    pub a: f64,
    /// Fitted steepness B.
    pub b: f64,
    /// Fitted C_mid, GB200 GPU-hours.
    pub c_mid_gpu_hours: f64,
}

/// ScaleRL's 8B runs the fit uses, by the label of their evidence rows: (label, change, prompts,
/// generations, generation budget). Table 1's batches count generations (48 prompts × 16 = 768);
/// the generation budget is 14k tokens (App. A.3: 12k thinking + 2k solution).
pub const SCALERL_RUNS: [(&str, &str, u64, u64, f64); 7] = [
    (
        "ScaleRL (8B, batch 768, 14k gen, 16 gens/prompt)",
        "default recipe: 48 prompts x 16, 14k",
        48,
        16,
        14_336.0,
    ),
    (
        "ScaleRL-32k generation length",
        "32k generation budget",
        48,
        16,
        32_768.0,
    ),
    (
        "ScaleRL-8gen (fixed total batch 768)",
        "96 prompts x 8",
        96,
        8,
        14_336.0,
    ),
    (
        "ScaleRL-24gen (fixed total batch 768)",
        "32 prompts x 24",
        32,
        24,
        14_336.0,
    ),
    (
        "ScaleRL-32gen (fixed total batch 768)",
        "24 prompts x 32",
        24,
        32,
        14_336.0,
    ),
    (
        "ScaleRL-bs512",
        "batch 512: 32 prompts x 16",
        32,
        16,
        14_336.0,
    ),
    (
        "ScaleRL-bs2048",
        "batch 2048: 128 prompts x 16",
        128,
        16,
        14_336.0,
    ),
];

/// ScaleRL's 8B policy size (the paper says "an 8B dense model").
pub const SCALERL_PARAMS: f64 = 8.0e9;

/// ScaleRL's throughput at the default recipe: GPU-hours per step (App. A.6: "~1k steps, or
/// ~1.5k GPU Hours for most runs").
pub const SCALERL_GPU_HOURS_PER_STEP: f64 = 1.5;

/// Uncapped mean response length assumed for ScaleRL's SFT'd reasoning model, tokens. ScaleRL
/// publishes no mean; it places forced interruptions at 10-12k tokens (App. A.10) and reports
/// truncation spiking to about 4% at a 32k budget (App. A.15). An assumption: it only sets how
/// per-step cost and truncation differ between the runs.
pub const SCALERL_MEAN_RESPONSE_TOKENS: f64 = 6000.0;

/// SimpleRL-Zoo's run for every model: prompts per step, rollouts per prompt, cap and steps (its
/// README: batch 1,024, 8 rollouts, 8,192 tokens, about 100 steps).
pub const SIMPLERL_RUN: (f64, u64, f64, f64) = (1024.0, 8, 8192.0, 100.0);

/// The share of the reachable gain SimpleRL-Zoo's runs are taken to have realised when they
/// stopped (assumption; see stage 4).
pub const SIMPLERL_FINAL_PROGRESS: f64 = 0.9;

/// The evidence the fit reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// SimpleRL-Zoo before/after pairs.
    pub outcomes: Vec<Outcome>,
    /// ScaleRL Table 1 runs.
    pub scalerl: Vec<ScaleRlRun>,
    /// Tan et al. (arXiv 2509.25300) App. B.3 Table 4: final held-out pass@1 after the same RL
    /// run, per Qwen2.5 base model, as (parameters in billions, score), smallest first.
    pub tan_final: Vec<(f64, f64)>,
    /// IsoCompute (arXiv 2603.12151) Question 1: where the compute-optimal rollouts per problem
    /// saturate on its easy and hard sets (Qwen2.5-7B-Instruct, 32 problems per batch).
    pub isocompute: Option<IsoSaturation>,
    /// Before/after pairs of every allowed study (`before_after.csv` beside the results file).
    pub pairs: Vec<crate::fit::pairs::PairedOutcome>,
}

/// IsoCompute's saturation points of the compute-optimal rollouts per problem n*.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IsoSaturation {
    /// n* on the easy set (base avg@16 in [0.3, 0.6]).
    pub easy_n_star: f64,
    /// n* on the hard set (base avg@16 in [0, 0.0625]).
    pub hard_n_star: f64,
}

/// IsoCompute's easy set as a pass-rate profile (mean, concentration): its stated avg@16 range
/// [0.3, 0.6] read as a uniform distribution (mean 0.45, variance 0.0075). An assumption: the
/// site shows the histogram (Fig. 2) but no numbers.
pub const ISOCOMPUTE_EASY_PROFILE: (f64, f64) = (0.45, 32.0);

/// IsoCompute's hard set as a pass-rate profile: avg@16 in [0, 0.0625] read as uniform (mean
/// 0.03125, variance 3.26e-4). Same assumption as the easy set.
pub const ISOCOMPUTE_HARD_PROFILE: (f64, f64) = (0.03125, 92.0);

/// IsoCompute's Question 1 setting: problems per batch, rollouts per problem swept (2^3 to
/// 2^11), max output tokens, and the policy (Qwen2.5-7B-Instruct, 7.6e9 parameters).
pub const ISOCOMPUTE_PROBLEMS: f64 = 32.0;
/// The rollouts per problem IsoCompute sweeps: 8 to 2,048 in powers of two.
pub const ISOCOMPUTE_GROUPS: [u64; 9] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048];
/// IsoCompute's max output length, tokens.
pub const ISOCOMPUTE_CAP_TOKENS: f64 = 8192.0;
/// Qwen2.5-7B-Instruct's parameters, billions.
pub const ISOCOMPUTE_PARAMS_B: f64 = 7.615_616_512;

fn csv_error(path: &Path, line: Option<usize>, message: impl Into<String>) -> Error {
    Error::in_file(path, line, "", message.into())
}

/// Reads the evidence CSV: SimpleRL-Zoo before/after pairs (rows with `x_name = rl_step`,
/// `x_value` 0 for the base and empty for the released checkpoint; percent values become
/// fractions; the derived `Avg` column is left out) and ScaleRL Table 1's A, B and C_mid for the
/// runs in [`SCALERL_RUNS`].
///
/// The before/after pairs come from `before_after.csv` in the same folder
/// ([`crate::fit::pairs`]); the fit needs them.
pub fn read_evidence(path: &Path) -> Result<Evidence> {
    let bytes = crate::input::read_bytes(path, crate::input::MAX_TABLE_BYTES)?;
    let mut evidence = parse_evidence(&bytes, path)?;
    evidence.pairs = crate::fit::pairs::read_pairs(&pairs_path(path))?;
    Ok(evidence)
}

/// The pairs file beside a results file.
pub fn pairs_path(results: &Path) -> PathBuf {
    results.with_file_name("before_after.csv")
}

/// The evidence base bundled into the binary (`evidence/published_results.csv` at build time),
/// for reports that state how the prior fares on it.
pub const EMBEDDED_EVIDENCE: &str = include_str!("../../evidence/published_results.csv");

/// [`EMBEDDED_EVIDENCE`], parsed.
pub fn embedded_evidence() -> Evidence {
    let mut evidence = parse_evidence(
        EMBEDDED_EVIDENCE.as_bytes(),
        Path::new("evidence/published_results.csv"),
    )
    .expect("the bundled evidence parses (a test checks it)");
    evidence.pairs = crate::fit::pairs::embedded_pairs();
    evidence
}

/// Parses evidence CSV bytes; `path` names them in messages.
pub fn parse_evidence(bytes: &[u8], path: &Path) -> Result<Evidence> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| csv_error(path, Some(1), e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::in_file(path, Some(1), name, "missing column"))
    };
    let columns = [
        "source", "model", "params_b", "setting", "x_name", "x_value", "metric", "value",
    ]
    .map(column);
    let mut at = [0usize; 8];
    for (slot, found) in at.iter_mut().zip(columns) {
        *slot = found?;
    }
    let mut rows = EvidenceRows::default();
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| csv_error(path, Some(k + 2), e.to_string()))?;
        let row = at.map(|i| record.get(i).unwrap_or("").trim());
        let Ok(v) = row[7].parse::<f64>() else {
            continue;
        };
        if !v.is_finite() {
            return Err(Error::in_file(
                path,
                Some(k + 2),
                "value",
                format!("`{}` is not a finite number", row[7]),
            ));
        }
        rows.take(row, v);
    }
    Ok(rows.evidence())
}

/// What [`parse_evidence`] collects from the rows, by kind.
#[derive(Default)]
struct EvidenceRows {
    /// Scores at step 0 and after, in [0, 1], by (model, metric).
    before: BTreeMap<(String, String), f64>,
    after: BTreeMap<(String, String), f64>,
    /// Parameters (billions) by model.
    sizes: BTreeMap<String, f64>,
    /// ScaleRL's fitted curve parameters by (run label, parameter).
    curves: BTreeMap<(String, String), f64>,
    /// Tan et al.'s final scores by model size.
    tan_final: Vec<(f64, f64)>,
    iso_easy: Option<f64>,
    iso_hard: Option<f64>,
}

impl EvidenceRows {
    /// Files one row (source, model, params_b, setting, x_name, x_value, metric, and its
    /// value `v`) where it belongs; rows of no known kind are skipped.
    fn take(&mut self, row: [&str; 8], v: f64) {
        let [source, model, params, setting, x_name, x_value, metric, _] = row;
        if source.starts_with("Tan et al.")
            && source.contains("Table 4")
            && model.ends_with("(base)")
            && let Ok(size) = params.parse::<f64>()
        {
            self.tan_final.push((size, v));
            return;
        }
        if source.contains("IsoCompute")
            && x_value == "n_star_saturation"
            && model == "Qwen2.5-7B-Instruct"
            && setting.contains("B_problem=32")
        {
            if setting.starts_with("Easy set") {
                self.iso_easy = Some(v);
            } else if setting.starts_with("Hard set") {
                self.iso_hard = Some(v);
            }
            return;
        }
        if x_name == "fit_parameter" && source.contains("Table 1") {
            self.curves
                .insert((model.to_string(), x_value.to_string()), v);
            return;
        }
        if x_name != "rl_step" || metric == "Avg" {
            return;
        }
        let Ok(size) = params.parse::<f64>() else {
            return;
        };
        let key = (model.to_string(), metric.to_string());
        self.sizes.insert(model.to_string(), size);
        match x_value {
            "0" => self.before.insert(key, v / 100.0),
            _ => self.after.insert(key, v / 100.0),
        };
    }

    /// The evidence of the rows taken.
    fn evidence(self) -> Evidence {
        let EvidenceRows {
            before,
            after,
            sizes,
            curves,
            mut tan_final,
            iso_easy,
            iso_hard,
        } = self;
        let outcomes = before
            .into_iter()
            .filter_map(|((m, metric), base)| {
                let after = *after.get(&(m.clone(), metric.clone()))?;
                Some(Outcome {
                    params_b: sizes[&m],
                    model: m,
                    metric,
                    base,
                    after,
                })
            })
            .collect();
        tan_final.sort_by(|a: &(f64, f64), b| a.0.total_cmp(&b.0));
        Evidence {
            outcomes,
            scalerl: scalerl_runs(&curves),
            tan_final,
            pairs: Vec::new(),
            isocompute: match (iso_easy, iso_hard) {
                (Some(easy_n_star), Some(hard_n_star)) => Some(IsoSaturation {
                    easy_n_star,
                    hard_n_star,
                }),
                _ => None,
            },
        }
    }
}

/// ScaleRL's runs whose fitted A, B and C_mid are all among `curves`.
fn scalerl_runs(curves: &BTreeMap<(String, String), f64>) -> Vec<ScaleRlRun> {
    let mut scalerl = Vec::new();
    for (label, change, prompts, group, cap_tokens) in SCALERL_RUNS {
        let get = |name: &str| curves.get(&(label.to_string(), name.to_string())).copied();
        if let (Some(a), Some(b), Some(c_mid)) = (get("A"), get("B"), get("C_mid_gpu_hours")) {
            scalerl.push(ScaleRlRun {
                label,
                change,
                prompts,
                group,
                cap_tokens,
                a,
                b,
                c_mid_gpu_hours: c_mid,
            });
        }
    }
    scalerl
}

/// The default task's pass-rate profile (mean 0.35, concentration 2) stands for the training
/// prompts of both studies, whose profiles are not published.
pub fn training_profile() -> (f64, f64) {
    let task = crate::config::Task::default();
    (task.pass_rate_mean, task.pass_rate_concentration)
}

/// A run's signal for the prior: `steps` iterations of `prompts × group` rollouts with a cap, on
/// a pass-rate profile (mean, concentration; [`training_profile`] for the published runs whose
/// profiles are not published).
#[allow(clippy::too_many_arguments)] // one argument per published run setting
pub fn run_signal(
    (mean, concentration): (f64, f64),
    params_b: f64,
    prompts: f64,
    group: u64,
    cap_tokens: f64,
    mean_response_tokens: f64,
    steps: f64,
    start: StartKind,
    measured_base_score: Option<f64>,
) -> CellSignal {
    let (alpha, beta) = beta_parameters(mean, concentration);
    let zero_signal = zero_signal_rate(mean, concentration, group);
    let lengths = response_lengths(mean_response_tokens, 0.6, cap_tokens);
    CellSignal {
        policy_params: params_b * 1e9,
        iterations: steps,
        update_epochs: 1.0,
        useful_rollouts_per_step: prompts
            * group as f64
            * (1.0 - zero_signal)
            * (1.0 - lengths.truncation_rate),
        coverage: 1.0 - beta_moment(beta, alpha, group),
        truncation_rate: lengths.truncation_rate,
        pass_rate_mean: mean,
        response_cap_tokens: cap_tokens,
        start,
        benchmark: Benchmark::Standard,
        reward: RewardKind::Rule,
        lora_rank: None,
        measured_base_score,
        pass_share_per_step: None,
        ability_score: None,
    }
}

/// An IsoCompute Question-1 run on `profile`: 32 problems × `group` rollouts for as many steps
/// as `rollouts` (IsoCompute's compute unit) buys, from a base score of 0.5 (the best n does not
/// depend on it much; the paper reports validation reward, not a base).
pub fn isocompute_signal(profile: (f64, f64), group: u64, rollouts: f64) -> CellSignal {
    run_signal(
        profile,
        ISOCOMPUTE_PARAMS_B,
        ISOCOMPUTE_PROBLEMS,
        group,
        ISOCOMPUTE_CAP_TOKENS,
        crate::config::Task::default().mean_response_tokens,
        rollouts / (ISOCOMPUTE_PROBLEMS * group as f64),
        // On ScaleRL's time scale, as the difficulty stage was fitted.
        StartKind::ScaleRlReference,
        Some(0.5),
    )
}

/// The prior's compute-optimal rollouts per problem among IsoCompute's sweep, at a compute of
/// `rollouts` on `profile` (ties go to the smaller n).
pub fn isocompute_best_group(params: &OutcomeParams, profile: (f64, f64), rollouts: f64) -> u64 {
    let mut best = (f64::NEG_INFINITY, ISOCOMPUTE_GROUPS[0]);
    for g in ISOCOMPUTE_GROUPS {
        let score = predict_score(params, &isocompute_signal(profile, g, rollouts));
        if score > best.0 + 1e-12 {
            best = (score, g);
        }
    }
    best.1
}

/// Compute budgets (rollouts) the difficulty stage scans: 1e4 to 1e9, 20 per decade.
fn isocompute_budgets() -> impl Iterator<Item = f64> {
    (0..=100).map(|k| 10f64.powf(4.0 + k as f64 / 20.0))
}

/// The smallest scanned compute at which the prior's best n on the easy set reaches the
/// published saturation, with the hard set's best n there; None if it never does.
pub fn isocompute_at_easy_saturation(
    params: &OutcomeParams,
    easy_n_star: f64,
) -> Option<(f64, u64)> {
    isocompute_budgets()
        .find(|&c| isocompute_best_group(params, ISOCOMPUTE_EASY_PROFILE, c) as f64 >= easy_n_star)
        .map(|c| (c, isocompute_best_group(params, ISOCOMPUTE_HARD_PROFILE, c)))
}

/// What the prior knows about one SimpleRL-Zoo outcome: SimpleRL-Zoo's run, zero RL from the
/// measured base. The tool's default response length stands for SimpleRL-Zoo's (not published
/// per model).
pub fn simplerl_signal(o: &Outcome) -> CellSignal {
    let (prompts, group, cap, steps) = SIMPLERL_RUN;
    let mean = crate::config::Task::default().mean_response_tokens;
    run_signal(
        training_profile(),
        o.params_b,
        prompts,
        group,
        cap,
        mean,
        steps,
        StartKind::Base,
        Some(o.base),
    )
}

/// A ScaleRL run's signal at `steps` from the base score `r0`.
pub fn scalerl_signal(run: &ScaleRlRun, steps: f64, r0: f64) -> CellSignal {
    run_signal(
        training_profile(),
        SCALERL_PARAMS / 1e9,
        run.prompts as f64,
        run.group,
        run.cap_tokens,
        SCALERL_MEAN_RESPONSE_TOKENS,
        steps,
        StartKind::ScaleRlReference,
        Some(r0),
    )
}

/// Generated tokens per step of a ScaleRL run.
fn scalerl_tokens_per_step(run: &ScaleRlRun) -> f64 {
    (run.prompts * run.group) as f64
        * response_lengths(SCALERL_MEAN_RESPONSE_TOKENS, 0.6, run.cap_tokens).mean_tokens
}

/// A ScaleRL run's C_mid in steps: GPU-hours over its GPU-hours per step, the default recipe's
/// 1.5 scaled by generated tokens per step.
pub fn scalerl_mid_steps(run: &ScaleRlRun, default: &ScaleRlRun) -> f64 {
    let per_step = SCALERL_GPU_HOURS_PER_STEP * scalerl_tokens_per_step(run)
        / scalerl_tokens_per_step(default);
    run.c_mid_gpu_hours / per_step
}

/// The prior's steps to the midpoint for a ScaleRL run: K_mid / (reuse × (U/1024)^κ) with one
/// epoch, from the parts of the model.
pub fn model_mid_steps(params: &OutcomeParams, run: &ScaleRlRun) -> f64 {
    let p = parts(params, &scalerl_signal(run, 1.0, 0.5));
    // ln K at one step is the per-step signal: steps to the midpoint = K_mid / K(1).
    (p.ln_k_mid - p.ln_k).exp()
}

/// The prior's asymptote for a ScaleRL run from base `r0`.
pub fn model_ceiling(params: &OutcomeParams, run: &ScaleRlRun, r0: f64) -> f64 {
    crate::outcome::predict(params, &scalerl_signal(run, 1e12, r0)).ceiling
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("evidence/published_results.csv")
    }

    #[test]
    fn the_bundled_evidence_yields_its_pairs_and_runs() {
        let e = read_evidence(&bundled()).unwrap();
        // Ten models x seven benchmarks (the derived Avg column left out).
        assert_eq!(e.outcomes.len(), 70);
        assert_eq!(e.scalerl.len(), 7);
        // Seven Qwen2.5 base sizes, 0.5B to 72B.
        assert_eq!(e.tan_final.len(), 7);
        assert_eq!(e.tan_final[3], (7.0, 0.338));
        let d = &e.scalerl[0];
        assert_eq!((d.a, d.b, d.c_mid_gpu_hours), (0.61, 1.92, 2542.0));
    }

    #[test]
    fn the_embedded_evidence_is_the_bundled_file() {
        assert_eq!(embedded_evidence(), read_evidence(&bundled()).unwrap());
    }

    #[test]
    fn scalerl_midpoint_in_steps_by_hand() {
        // The default run: 2,542 GPU-h at 1.5 GPU-h per step is 1,694.7 steps. Batch 2048 makes
        // 2048/768 times the tokens per step: 10,909 / (1.5 × 2.6667) = 2,727.25 steps.
        let e = read_evidence(&bundled()).unwrap();
        let d = &e.scalerl[0];
        assert!((scalerl_mid_steps(d, d) - 2542.0 / 1.5).abs() < 1e-9);
        let b2048 = e
            .scalerl
            .iter()
            .find(|r| r.label == "ScaleRL-bs2048")
            .unwrap();
        assert!((scalerl_mid_steps(b2048, d) - 10909.0 / (1.5 * 2048.0 / 768.0)).abs() < 1e-6);
    }
}
