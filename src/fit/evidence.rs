//! The outcome prior's defaults, fitted to the evidence base (`evidence/published_results.csv`)
//! by `rlfrontier fit-prior`, which writes them into `src/outcome/fitted.rs`.
//!
//! Only the studies the project may fit to are read: SimpleRL-Zoo (arXiv 2503.18892: base and
//! final scores of ten models on seven benchmarks) and ScaleRL (arXiv 2510.13786, Table 1: the
//! fitted A, B and C_mid of runs that vary one setting of its 8B recipe). The fit runs in stages,
//! each on the evidence that speaks to it (docs/design.md §6):
//!
//! 1. **Default base score**: least squares of SimpleRL-Zoo's MATH-500 base scores on
//!    log10(N / 7.6e9). The range is the 90% prediction interval of a new model.
//! 2. **Time scale and batch, length and G effects**: ScaleRL Table 1's seven 8B runs (default;
//!    32k generation; 8, 24 and 32 generations per prompt at a fixed batch of 768; batch 512 and
//!    2048). C_mid in GPU-hours becomes steps with ScaleRL's own throughput (App. A.6: the first
//!    epoch is "~1k steps, or ~1.5k GPU Hours for most runs"), scaled by each run's generated
//!    tokens per step. Residuals: ln steps to the midpoint (sd 0.3), A (sd 0.02, ScaleRL's
//!    seed-to-seed spread), B (sd 0.3). ScaleRL's R0 is not published: it is a free nuisance.
//! 3. **Reachable gain Δ and its size slope**: SimpleRL-Zoo's 70 (model, benchmark) pairs, each
//!    predicted from its measured base score with SimpleRL-Zoo's run (1,024 prompts × 8
//!    rollouts, 8,192-token cap, about 100 steps, zero RL from base models).
//! 4. **Zero-RL time factor**: SimpleRL-Zoo's runs are taken to end at 90% of their reachable
//!    gain (an assumption: the released checkpoints are end-of-training and its README describes
//!    about 100 steps), which fixes how much faster base-model starts move than ScaleRL's SFT'd
//!    8B.
//! 5. **Discrepancies**: leave-one-model-out residuals of stage 3 (as shifts of Δ) and
//!    leave-one-run-out residuals of stage 2 (as shifts of ln K_mid).
//!
//! Scout (a 109B MoE whose cost per step is not published) and the math+code runs (another
//! task) are read but not fitted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::RewardKind;
use crate::error::{Error, Result};
use crate::fit::lm::{Problem, central_difference_jacobian, inverse, minimize, normal_equations};
use crate::ledger::lengths::{beta_moment, beta_parameters, response_lengths, zero_signal_rate};
use crate::outcome::params::{PARAMS, Param, Z90};
use crate::outcome::{Benchmark, StartKind};
use crate::outcome::{CellSignal, OutcomeParams, ParamId, logistic, parts, predict_score};

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
    let (source, model, params, setting, x_name, x_value, metric, value) = (
        column("source")?,
        column("model")?,
        column("params_b")?,
        column("setting")?,
        column("x_name")?,
        column("x_value")?,
        column("metric")?,
        column("value")?,
    );
    type Key = (String, String);
    let (mut before, mut after): (BTreeMap<Key, f64>, BTreeMap<Key, f64>) = Default::default();
    let mut sizes: BTreeMap<String, f64> = BTreeMap::new();
    let mut curves: BTreeMap<(String, String), f64> = BTreeMap::new();
    let mut tan_final = Vec::new();
    let (mut iso_easy, mut iso_hard) = (None, None);
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| csv_error(path, Some(k + 2), e.to_string()))?;
        let get = |i: usize| record.get(i).unwrap_or("").trim();
        let Ok(v) = get(value).parse::<f64>() else {
            continue;
        };
        if !v.is_finite() {
            return Err(Error::in_file(
                path,
                Some(k + 2),
                "value",
                format!("`{}` is not a finite number", get(value)),
            ));
        }
        if get(source).starts_with("Tan et al.")
            && get(source).contains("Table 4")
            && get(model).ends_with("(base)")
            && let Ok(size) = get(params).parse::<f64>()
        {
            tan_final.push((size, v));
            continue;
        }
        if get(source).contains("IsoCompute")
            && get(x_value) == "n_star_saturation"
            && get(model) == "Qwen2.5-7B-Instruct"
            && get(setting).contains("B_problem=32")
        {
            if get(setting).starts_with("Easy set") {
                iso_easy = Some(v);
            } else if get(setting).starts_with("Hard set") {
                iso_hard = Some(v);
            }
            continue;
        }
        if get(x_name) == "fit_parameter" && get(source).contains("Table 1") {
            curves.insert((get(model).to_string(), get(x_value).to_string()), v);
            continue;
        }
        if get(x_name) != "rl_step" || get(metric) == "Avg" {
            continue;
        }
        let Ok(size) = get(params).parse::<f64>() else {
            continue;
        };
        let key = (get(model).to_string(), get(metric).to_string());
        sizes.insert(get(model).to_string(), size);
        match get(x_value) {
            "0" => before.insert(key, v / 100.0),
            _ => after.insert(key, v / 100.0),
        };
    }
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
    tan_final.sort_by(|a: &(f64, f64), b| a.0.total_cmp(&b.0));
    Ok(Evidence {
        outcomes,
        scalerl,
        tan_final,
        pairs: Vec::new(),
        isocompute: match (iso_easy, iso_hard) {
            (Some(easy_n_star), Some(hard_n_star)) => Some(IsoSaturation {
                easy_n_star,
                hard_n_star,
            }),
            _ => None,
        },
    })
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

/// Least squares with a central-difference Jacobian.
struct Numeric<'a> {
    n: usize,
    f: &'a dyn Fn(&[f64]) -> Option<Vec<f64>>,
}

impl Problem for Numeric<'_> {
    fn parameters(&self) -> usize {
        self.n
    }
    fn residuals(&self, theta: &[f64]) -> Option<Vec<f64>> {
        (self.f)(theta).filter(|r| r.iter().all(|x| x.is_finite()))
    }
    fn jacobian(&self, theta: &[f64]) -> Option<Vec<f64>> {
        central_difference_jacobian(&|t| self.residuals(t), theta)
    }
}

/// Fits `f` from `start`; returns θ and the standard errors (covariance (JᵀJ)⁻¹ s², s² the
/// residual variance per degree of freedom, at least `variance_floor`: 1 for residuals scaled
/// by their stated sd, so the fit cannot claim more precision than those sds; 0 for raw ones).
pub(crate) fn least_squares(
    f: &dyn Fn(&[f64]) -> Option<Vec<f64>>,
    start: &[f64],
    variance_floor: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let problem = Numeric { n: start.len(), f };
    let solution = minimize(&problem, start, 500)?;
    let r = problem.residuals(&solution.theta)?;
    let j = problem.jacobian(&solution.theta)?;
    let n = start.len();
    let (jtj, _) = normal_equations(&j, &r, n);
    let dof = r.len().saturating_sub(n).max(1) as f64;
    let s2 = (solution.cost / dof).max(variance_floor);
    // A parameter the data do not move (a zero column) leaves JᵀJ singular: a tiny ridge keeps
    // the others' errors and gives it a huge one.
    let mut ridged = jtj.clone();
    for k in 0..n {
        ridged[k * n + k] += 1e-12 * (1.0 + jtj[k * n + k]);
    }
    let cov = inverse(&jtj, n).or_else(|| inverse(&ridged, n))?;
    let se = (0..n)
        .map(|k| (cov[k * n + k] * s2).max(0.0).sqrt())
        .collect();
    Some((solution.theta, se))
}

/// One fitted parameter: the value, its 90% range, and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedParam {
    /// Which parameter.
    pub id: ParamId,
    /// Value and 90% range.
    pub param: Param,
    /// Stage and evidence, one line.
    pub how: String,
}

/// The fit's result: every fitted parameter and the checks it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorFit {
    /// Fitted parameters, in [`ParamId`] order.
    pub fitted: Vec<FittedParam>,
    /// The parameters with the fitted values in place (the rest at their defaults).
    pub params: OutcomeParams,
    /// ScaleRL's nuisance R0 (its runs' unpublished start).
    pub scalerl_base_score: f64,
    /// The math benchmarks' levels and scatter (`outcome::ability`).
    pub ability_scale: crate::outcome::ability::AbilityScale,
    /// Per ScaleRL run: (label, published steps to mid, model steps to mid, published A, model
    /// A).
    pub scalerl_rows: Vec<(String, f64, f64, f64, f64)>,
}

/// Stage 1: the default base score, OLS of MATH-500 base scores on log10(N / 7.6e9).
fn fit_base_default(outcomes: &[Outcome]) -> Option<(Param, Param)> {
    let points: Vec<(f64, f64)> = outcomes
        .iter()
        .filter(|o| o.metric == "MATH500")
        .map(|o| {
            (
                (o.params_b * 1e9 / crate::outcome::params::REFERENCE_PARAMS).log10(),
                o.base,
            )
        })
        .collect();
    let n = points.len() as f64;
    if n < 3.0 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let s2 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum::<f64>()
        / (n - 2.0);
    // A new model at the reference size: prediction sd sqrt(s²(1 + 1/n + mx²/sxx)).
    let sd_new = (s2 * (1.0 + 1.0 / n + mx * mx / sxx)).sqrt();
    let sd_slope = (s2 / sxx).sqrt();
    let base = Param::new(
        intercept.clamp(0.0, 1.0),
        (intercept - Z90 * sd_new).clamp(0.0, 1.0),
        (intercept + Z90 * sd_new).clamp(0.0, 1.0),
    );
    let per_decade = Param::new(slope, slope - Z90 * sd_slope, slope + Z90 * sd_slope);
    Some((base, per_decade))
}

/// Where the fit starts for every parameter it fits.
const FIT_START: [(ParamId, f64); 16] = [
    (ParamId::BaseScoreAt7b, 0.45),
    (ParamId::BaseScorePerDecade, 0.0),
    (ParamId::GainLogitAt7b, 1.0),
    (ParamId::GainLogitPerDecade, 0.0),
    (ParamId::KMidAt7b, 1000.0),
    (ParamId::KMidLengthExponent, 1.0),
    (ParamId::ZeroRlTimeFactor, 0.05),
    (ParamId::Steepness, 1.5),
    (ParamId::BatchExponent, 0.5),
    (ParamId::BatchCeilingExponent, 0.05),
    (ParamId::CoverageExponent, 0.5),
    (ParamId::CapCeilingExponent, 0.1),
    (ParamId::GainDiscrepancy, 0.5),
    (ParamId::TimeScaleDiscrepancy, 0.3),
    (ParamId::RolloutSaturation, 1e9),
    (ParamId::DifficultyTimeExponent, 0.0),
];

const SD_LN_MID: f64 = 0.3;

/// The largest value a hypothesis would allow a stage-2 exponent that the evidence leaves free:
/// κ 0.7 (square-root batch scaling and a margin), c 1.4, g 1 (Δ at most proportional to the
/// cap).
fn hypothesis_bound(id: ParamId) -> f64 {
    match id {
        ParamId::BatchExponent => 0.7,
        ParamId::CapCeilingExponent => 1.0,
        _ => 1.4,
    }
}

/// A stage-2 parameter fitted in logs whose standard error exceeds this many e-folds is taken
/// as not identified by the evidence (its 90% range would span over 14 decades).
const LOG_SE_UNIDENTIFIED: f64 = 5.0;
const SD_A: f64 = 0.02;
const SD_B: f64 = 0.3;

/// The stage-2 parameters, in θ order: ln K_mid(7.6B), λ, κ, β, a, c, logit R0 (ScaleRL).
const STAGE2: [ParamId; 7] = [
    ParamId::KMidAt7b,
    ParamId::KMidLengthExponent,
    ParamId::BatchExponent,
    ParamId::Steepness,
    ParamId::BatchCeilingExponent,
    ParamId::CoverageExponent,
    ParamId::CapCeilingExponent,
];

/// Stage-2 parameters fitted as logarithms: K_mid is a scale; κ and c must stay positive (more
/// useful rollouts per step never make a step teach less, more coverage never lowers the gain).
fn fitted_in_logs(id: ParamId) -> bool {
    matches!(
        id,
        ParamId::KMidAt7b
            | ParamId::BatchExponent
            | ParamId::CoverageExponent
            | ParamId::CapCeilingExponent
    )
}

fn with_stage2(base: &OutcomeParams, theta: &[f64]) -> OutcomeParams {
    let mut p = *base;
    for (k, id) in STAGE2.iter().enumerate() {
        p[*id].value = if fitted_in_logs(*id) {
            theta[k].exp()
        } else {
            theta[k]
        };
    }
    p
}

/// Stage 2 residuals over `runs`.
fn stage2_residuals(
    base: &OutcomeParams,
    runs: &[ScaleRlRun],
    default: &ScaleRlRun,
    theta: &[f64],
) -> Option<Vec<f64>> {
    let params = with_stage2(base, theta);
    if params[ParamId::Steepness].value <= 0.05 {
        return None;
    }
    let r0 = logistic(theta[STAGE2.len()]);
    let mut r = Vec::with_capacity(runs.len() * 3);
    for run in runs {
        r.push(
            (model_mid_steps(&params, run).ln() - scalerl_mid_steps(run, default).ln()) / SD_LN_MID,
        );
        r.push((model_ceiling(&params, run, r0) - run.a) / SD_A);
        r.push((params[ParamId::Steepness].value - run.b) / SD_B);
    }
    Some(r)
}

fn stage2_start(base: &OutcomeParams) -> Vec<f64> {
    let mut start: Vec<f64> = STAGE2
        .iter()
        .map(|id| {
            let v = base[*id].value;
            if fitted_in_logs(*id) {
                v.max(0.05).ln()
            } else {
                v
            }
        })
        .collect();
    start.push(0.0);
    start
}

/// Stage 3 parameters: Δ(7.6B), Δ per decade.
fn with_stage3(base: &OutcomeParams, theta: &[f64]) -> OutcomeParams {
    let mut p = *base;
    p[ParamId::GainLogitAt7b].value = theta[0];
    p[ParamId::GainLogitPerDecade].value = theta[1];
    p
}

fn stage3_residuals(
    base: &OutcomeParams,
    outcomes: &[&Outcome],
    theta: &[f64],
) -> Option<Vec<f64>> {
    let params = with_stage3(base, theta);
    Some(
        outcomes
            .iter()
            .map(|o| predict_score(&params, &simplerl_signal(o)) - o.after)
            .collect(),
    )
}

/// Stage 4: the zero-RL factor that puts SimpleRL-Zoo's run at the reference size at
/// [`SIMPLERL_FINAL_PROGRESS`] of its gain.
fn zero_rl_factor(params: &OutcomeParams) -> f64 {
    let reference = Outcome {
        model: String::new(),
        params_b: crate::outcome::params::REFERENCE_PARAMS / 1e9,
        metric: String::new(),
        base: 0.5,
        after: 0.5,
    };
    let mut tuned = *params;
    tuned[ParamId::ZeroRlTimeFactor].value = 1.0;
    let p = parts(&tuned, &simplerl_signal(&reference));
    // progress = 1 / (1 + exp(β (ln K_mid + ln f − ln K))) = target.
    let beta = p.steepness;
    let odds = (1.0 - SIMPLERL_FINAL_PROGRESS) / SIMPLERL_FINAL_PROGRESS;
    (odds.ln() / beta + p.ln_k - p.ln_k_mid).exp()
}

/// The shift of Δ (logit units, before the cell's multipliers) that makes the prior hit
/// `after` for this outcome, by bisection (the score rises with Δ).
fn gain_shift_to_hit(params: &OutcomeParams, o: &Outcome) -> f64 {
    let signal = simplerl_signal(o);
    let score_at = |shift: f64| {
        let mut p = *params;
        p[ParamId::GainLogitAt7b].value += shift;
        predict_score(&p, &signal)
    };
    let (mut lo, mut hi) = (-10.0, 10.0);
    if score_at(lo) >= o.after {
        return lo;
    }
    if score_at(hi) <= o.after {
        return hi;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if score_at(mid) < o.after {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn rms(values: &[f64]) -> f64 {
    (values.iter().map(|v| v * v).sum::<f64>() / values.len().max(1) as f64).sqrt()
}

/// Fits stage 3 on `outcomes` from `params`.
pub fn fit_gain(
    params: &OutcomeParams,
    outcomes: &[&Outcome],
) -> Option<(OutcomeParams, Vec<f64>)> {
    let start = [
        params[ParamId::GainLogitAt7b].value,
        params[ParamId::GainLogitPerDecade].value,
    ];
    let (theta, se) = least_squares(&|t| stage3_residuals(params, outcomes, t), &start, 0.0)?;
    Some((with_stage3(params, &theta), se))
}

/// Stage 3 refitted once per model with that model's outcomes left out: model → parameters
/// (models whose refit fails are absent). Shared by stage 5's discrepancy and the backtest.
pub fn leave_one_model_out<'o>(
    params: &OutcomeParams,
    outcomes: &'o [Outcome],
) -> BTreeMap<&'o str, OutcomeParams> {
    let models: std::collections::BTreeSet<&str> =
        outcomes.iter().map(|o| o.model.as_str()).collect();
    models
        .into_iter()
        .filter_map(|model| {
            let train: Vec<&Outcome> = outcomes.iter().filter(|o| o.model != model).collect();
            fit_gain(params, &train).map(|(p, _)| (model, p))
        })
        .collect()
}

/// Runs every stage on `evidence`, starting from the built-in defaults.
pub fn fit_prior(evidence: &Evidence) -> std::result::Result<PriorFit, String> {
    let fail = |what: &str| what.to_string();
    let default_run = evidence
        .scalerl
        .iter()
        .find(|r| r.label == SCALERL_RUNS[0].0)
        .ok_or_else(|| {
            fail("the evidence has no ScaleRL Table 1 default-recipe run (A, B, C_mid)")
        })?
        .clone();
    if evidence.outcomes.len() < 10 {
        return Err(fail(
            "the evidence has fewer than 10 SimpleRL-Zoo before/after pairs",
        ));
    }
    // Fixed starting values, so the fit does not depend on the defaults it replaces.
    let mut params = OutcomeParams::default();
    for (id, start) in FIT_START {
        params[id] = Param::new(start, start, start);
    }
    let mut fitted = Vec::new();
    let iso = evidence.isocompute.ok_or_else(|| {
        fail("the evidence has no IsoCompute n* saturation rows for the easy and hard sets")
    })?;

    // Stage 0: the saturation of the batch ceiling term, read off IsoCompute's easy set: the
    // useful rollouts per step of 32 problems × n* (range: n*/2 to 2·n*, its neighbours in the
    // power-of-two sweep). Set first: the stages after it see batches below it.
    let easy_useful =
        |n: f64| isocompute_signal(ISOCOMPUTE_EASY_PROFILE, n as u64, 1.0).useful_rollouts_per_step;
    let saturation = Param::new(
        easy_useful(iso.easy_n_star),
        easy_useful(iso.easy_n_star / 2.0),
        easy_useful(iso.easy_n_star * 2.0),
    );
    params[ParamId::RolloutSaturation] = saturation;
    fitted.push(FittedParam {
        id: ParamId::RolloutSaturation,
        param: saturation,
        how: format!(
            "stage 0: IsoCompute easy set, useful rollouts of 32 problems x n* = {}",
            iso.easy_n_star
        ),
    });

    // Stage 1.
    let (base, per_decade) = fit_base_default(&evidence.outcomes)
        .ok_or_else(|| fail("fewer than 3 MATH500 base scores"))?;
    params[ParamId::BaseScoreAt7b] = base;
    params[ParamId::BaseScorePerDecade] = per_decade;
    let n_math = evidence
        .outcomes
        .iter()
        .filter(|o| o.metric == "MATH500")
        .count();
    for (id, p) in [
        (ParamId::BaseScoreAt7b, base),
        (ParamId::BaseScorePerDecade, per_decade),
    ] {
        fitted.push(FittedParam {
            id,
            param: p,
            how: format!("stage 1: OLS on {n_math} SimpleRL-Zoo MATH-500 base scores"),
        });
    }

    // Stage 2.
    let runs = &evidence.scalerl;
    let (theta2, se2) = least_squares(
        &|t| stage2_residuals(&params, runs, &default_run, t),
        &stage2_start(&params),
        1.0,
    )
    .ok_or_else(|| fail("stage 2 (ScaleRL Table 1) did not converge"))?;
    params = with_stage2(&params, &theta2);
    let scalerl_base_score = logistic(theta2[STAGE2.len()]);
    for (k, id) in STAGE2.iter().enumerate() {
        // A parameter fitted in logs far below its start has no information left (a slope
        // pushed to zero): its range is capped at 30 e-folds either side.
        let se = se2[k].min(30.0);
        let unidentified = theta2[k].exp() < 1e-3 || se > LOG_SE_UNIDENTIFIED;
        let param = if fitted_in_logs(*id) && *id != ParamId::KMidAt7b && unidentified {
            // Pushed to zero by the data, or left free by it (a log-space error of several
            // e-folds): the fitted value (zero when pushed there), with the range from zero up
            // to the largest value a hypothesis would have allowed (κ 0.7, c 1.4), since the
            // log-space error says nothing about how far above zero the truth may be.
            let upper = hypothesis_bound(*id);
            let value = if theta2[k].exp() < 1e-3 {
                0.0
            } else {
                theta2[k].exp()
            };
            Param::new(value, 0.0, upper.max(value))
        } else if fitted_in_logs(*id) {
            Param::new(
                theta2[k].exp(),
                (theta2[k] - Z90 * se).exp(),
                (theta2[k] + Z90 * se).exp(),
            )
        } else {
            Param::new(theta2[k], theta2[k] - Z90 * se, theta2[k] + Z90 * se)
        };
        params[*id] = param;
        fitted.push(FittedParam {
            id: *id,
            param,
            how: format!("stage 2: ScaleRL Table 1, {} runs", runs.len()),
        });
    }

    // Stage 3 (its progress depends on the zero-RL factor, which depends on nothing fitted
    // here: iterate the two to a fixed point).
    let outcomes: Vec<&Outcome> = evidence.outcomes.iter().collect();
    let mut se3 = vec![0.0, 0.0];
    for _ in 0..5 {
        params[ParamId::ZeroRlTimeFactor].value = zero_rl_factor(&params);
        let (p, se) = fit_gain(&params, &outcomes)
            .ok_or_else(|| fail("stage 3 (SimpleRL-Zoo) did not converge"))?;
        params = p;
        se3 = se;
    }
    for (k, id) in [ParamId::GainLogitAt7b, ParamId::GainLogitPerDecade]
        .into_iter()
        .enumerate()
    {
        let v = params[id].value;
        params[id] = Param::new(v, v - Z90 * se3[k], v + Z90 * se3[k]);
        fitted.push(FittedParam {
            id,
            param: params[id],
            how: format!(
                "stage 3: {} SimpleRL-Zoo before/after pairs",
                outcomes.len()
            ),
        });
    }
    // Stage 4: the factor's range follows K_mid's.
    let f = zero_rl_factor(&params);
    let spread = params[ParamId::KMidAt7b].high / params[ParamId::KMidAt7b].value;
    params[ParamId::ZeroRlTimeFactor] = Param::new(f, f / spread, f * spread);
    fitted.push(FittedParam {
        id: ParamId::ZeroRlTimeFactor,
        param: params[ParamId::ZeroRlTimeFactor],
        how: format!(
            "stage 4: SimpleRL-Zoo's ~100 steps at {:.0}% of the gain (assumption)",
            100.0 * SIMPLERL_FINAL_PROGRESS
        ),
    });

    // Stage 5: discrepancies, leave one model out (Δ) and leave one run out (ln K_mid).
    let held_out = leave_one_model_out(&params, &evidence.outcomes);
    let mut shifts = Vec::new();
    for (model, p) in &held_out {
        for o in outcomes.iter().filter(|o| o.model == *model) {
            shifts.push(gain_shift_to_hit(p, o));
        }
    }
    // Robust: a benchmark at 0 before and after (AIME for the weakest models) needs an
    // unbounded shift; the median absolute deviation ignores such cases instead of letting one
    // of them set every interval's width.
    let gain_sd = crate::stats::robust_sd(&shifts);
    params[ParamId::GainDiscrepancy] = Param::new(gain_sd, 0.8 * gain_sd, 1.2 * gain_sd);
    fitted.push(FittedParam {
        id: ParamId::GainDiscrepancy,
        param: params[ParamId::GainDiscrepancy],
        how: format!(
            "stage 5: robust sd of the Δ shift over {} outcomes, leave one of {} models out",
            shifts.len(),
            held_out.len()
        ),
    });
    let mut time_residuals = Vec::new();
    for (k, run) in runs.iter().enumerate() {
        if run.label == default_run.label {
            continue; // the time scale's anchor: without it the rest has no level
        }
        let train: Vec<ScaleRlRun> = runs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != k)
            .map(|(_, r)| r.clone())
            .collect();
        let Some((theta, _)) = least_squares(
            &|t| stage2_residuals(&params, &train, &default_run, t),
            &stage2_start(&params),
            1.0,
        ) else {
            continue;
        };
        let p = with_stage2(&params, &theta);
        time_residuals
            .push(model_mid_steps(&p, run).ln() - scalerl_mid_steps(run, &default_run).ln());
    }
    let time_sd = rms(&time_residuals);
    params[ParamId::TimeScaleDiscrepancy] = Param::new(time_sd, 0.8 * time_sd, 1.2 * time_sd);
    fitted.push(FittedParam {
        id: ParamId::TimeScaleDiscrepancy,
        param: params[ParamId::TimeScaleDiscrepancy],
        how: format!(
            "stage 5: rms ln C_mid residual, leave one of {} ScaleRL runs out",
            time_residuals.len()
        ),
    });

    // Stage 6: the difficulty exponent d, by scanning: at the compute where the prior's best n
    // on IsoCompute's easy set first reaches the published saturation, the best n on the hard
    // set should be the published one. Every d that lands on it (to the nearest power of two)
    // is kept; the point value is their median, the range their span.
    let difficulty = fit_difficulty(&params, iso)
        .ok_or_else(|| fail("stage 6 (IsoCompute): no difficulty exponent in 0-3 places the hard set's best n near the published one"))?;
    params[ParamId::DifficultyTimeExponent] = difficulty;
    fitted.push(FittedParam {
        id: ParamId::DifficultyTimeExponent,
        param: difficulty,
        how: format!(
            "stage 6: IsoCompute hard set n* = {} where the easy set reaches n* = {} (scan of d)",
            iso.hard_n_star, iso.easy_n_star
        ),
    });

    // Stage 7: the kinds of start and benchmark, on every study's before/after pairs.
    let all: Vec<&crate::fit::pairs::PairedOutcome> = evidence.pairs.iter().collect();
    let levels = crate::fit::pairs::benchmark_levels(&all);
    let annotated = crate::fit::pairs::with_ability_scores(&evidence.pairs, &levels);
    let pairs: Vec<&crate::fit::pairs::PairedOutcome> = annotated.iter().collect();
    let (p7, fitted7) = crate::fit::starts::fit_starts(&params, &pairs).ok_or_else(|| {
        fail("stage 7: the evidence has too few tuned-start before/after pairs (before_after.csv beside it) or their fit did not converge")
    })?;
    params = p7;
    fitted.extend(fitted7);
    // The cap exponent stays ScaleRL's; what the before/after pairs say of it is stated beside.
    if let Some((value, lo, hi, n)) = crate::fit::starts::cap_exponent_profile(&params, &pairs)
        && let Some(f) = fitted
            .iter_mut()
            .find(|f| f.id == ParamId::KMidLengthExponent)
    {
        let _ = write!(
            f.how,
            "; the {n} before/after pairs with caps above 8,192 put it at {value:.1} (90% profile range {lo:.1} to {hi:.1} of a 0-4 scan, the start kinds' time factors held at their fit), so ScaleRL's value is kept and the length effect is not identified beyond its two runs"
        );
    }

    fitted.sort_by_key(|f| f.id);
    let scalerl_rows = runs
        .iter()
        .map(|run| {
            (
                run.label.to_string(),
                scalerl_mid_steps(run, &default_run),
                model_mid_steps(&params, run),
                run.a,
                model_ceiling(&params, run, scalerl_base_score),
            )
        })
        .collect();
    params
        .validate()
        .map_err(|m| fail(&format!("the fitted parameters are unusable: {m}")))?;
    Ok(PriorFit {
        fitted,
        params,
        scalerl_base_score,
        ability_scale: levels,
        scalerl_rows,
    })
}

/// Stage 6: the difficulty exponents in 0-3 (steps of 0.02) whose hard-set best n, at the
/// compute where the easy set's best n first reaches its published saturation, is nearest the
/// published hard-set n* (in powers of two); their median with their span as the range.
fn fit_difficulty(params: &OutcomeParams, iso: IsoSaturation) -> Option<Param> {
    let mut scored = Vec::new();
    for k in 0..=150 {
        let d = k as f64 * 0.02;
        let mut p = *params;
        p[ParamId::DifficultyTimeExponent] = Param::new(d, d, d);
        if let Some((_, hard)) = isocompute_at_easy_saturation(&p, iso.easy_n_star) {
            scored.push((d, (hard as f64 / iso.hard_n_star).log2().abs()));
        }
    }
    let best = scored.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    if best.is_nan() || best > 1.0 {
        return None;
    }
    let kept: Vec<f64> = scored
        .iter()
        .filter(|x| x.1 <= best + 1e-9)
        .map(|x| x.0)
        .collect();
    let median = kept[kept.len() / 2];
    Some(Param::new(median, kept[0], kept[kept.len() - 1]))
}

/// Six significant digits, as Rust source.
fn literal(x: f64) -> String {
    let s = format!("{x:.6e}");
    let parsed: f64 = s.parse().unwrap_or(x);
    let mut text = format!("{parsed:?}");
    if !text.contains('.') && !text.contains('e') {
        text.push_str(".0");
    }
    text
}

/// The Rust source of `src/outcome/fitted.rs` for this fit.
pub fn fitted_source(fit: &PriorFit) -> String {
    let mut out = String::new();
    out.push_str(
        "//! The outcome prior's defaults fitted to the evidence base.\n//!\n\
         //! Generated by `rlfrontier fit-prior evidence/published_results.csv --write \
         src/outcome/fitted.rs`\n//! (src/fit/evidence.rs); do not edit by hand. A test refits \
         and compares.\n\nuse super::params::Param;\n",
    );
    for f in &fit.fitted {
        let spec = &PARAMS[f.id as usize];
        let _ = write!(
            out,
            "\n/// `{}`: {}.\npub const {}: Param = Param::new({}, {}, {});\n",
            spec.name,
            f.how,
            spec.name.to_uppercase(),
            literal(f.param.value),
            literal(f.param.low),
            literal(f.param.high),
        );
    }
    let _ = write!(
        out,
        "\n/// The math benchmarks' levels (logit units, MATH-500 at 0): alternating means of the \
         two-way model\n/// logit(score after RL) = ability − level over the before/after pairs' \
         runs (`outcome::ability`).\npub const BENCHMARK_LEVELS: [(&str, f64); {}] = [\n",
        fit.ability_scale.levels.len()
    );
    for (family, level) in &fit.ability_scale.levels {
        let _ = writeln!(out, "    (\"{family}\", {}),", literal(*level));
    }
    out.push_str("];\n");
    let _ = write!(
        out,
        "\n/// sd of logit(score after RL) around the two-way model of [`BENCHMARK_LEVELS`].\n\
         pub const BENCHMARK_LEVEL_RESIDUAL_SD: f64 = {};\n",
        literal(fit.ability_scale.residual_sd)
    );
    out
}

/// Reads the evidence and fits: what `fit-prior` and the up-to-date test both run.
pub fn fit_prior_file(path: &Path) -> Result<PriorFit> {
    fit_prior(&read_evidence(path)?).map_err(|m| Error::in_file(path, None, "", m))
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

    #[test]
    fn the_embedded_prior_is_the_fit_of_the_bundled_evidence() {
        // `rlfrontier fit-prior --write src/outcome/fitted.rs` regenerates the file; this fails
        // when the evidence, the model or the fit changed without regenerating it.
        let fit = fit_prior_file(&bundled()).unwrap();
        let expected = fitted_source(&fit);
        let actual = include_str!("../outcome/fitted.rs");
        assert_eq!(
            actual, expected,
            "run: cargo run -- fit-prior --write src/outcome/fitted.rs"
        );
    }
}
