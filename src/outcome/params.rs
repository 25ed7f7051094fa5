//! The outcome prior's parameters: every one named, with a default, a plausible range and the
//! evidence behind it. Any of them can be overridden in a grid's `[outcome]` table, either as a
//! number (the value moves, the range keeps its relative width) or as
//! `{ value = .., low = .., high = .. }`.
//!
//! Where the evidence base (`evidence/published_results.csv`) constrains a parameter, its default
//! is the tool's own fit to that evidence, written into [`super::fitted`] by
//! `rlfrontier fit-prior` (docs/design.md §6); the range is then the fit's 90% interval. The
//! others are stated hypotheses and say so in their evidence line. Pilot runs replace both (the
//! calibration step of the RACE protocol).

use std::ops::{Index, IndexMut};

use serde::Serialize;
use serde::ser::SerializeMap;

use super::fitted;

/// A parameter's value and its plausible range (a 90% range where it was fitted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Param {
    /// The point value used for `predicted_score`.
    pub value: f64,
    /// Low end of the plausible range.
    pub low: f64,
    /// High end of the plausible range.
    pub high: f64,
}

impl Param {
    /// A value with its range.
    pub const fn new(value: f64, low: f64, high: f64) -> Self {
        Param { value, low, high }
    }

    /// The standard deviation a 90% range implies for a normal quantity: (high − low) / 3.29.
    pub fn sd(&self) -> f64 {
        (self.high - self.low) / (2.0 * Z90)
    }

    /// The standard deviation of ln(value) a 90% range implies for a log-normal quantity.
    pub fn sd_ln(&self) -> f64 {
        if self.low > 0.0 && self.high > 0.0 {
            (self.high / self.low).ln() / (2.0 * Z90)
        } else {
            0.0
        }
    }
}

/// The standard normal's 95th percentile: a central 90% interval is ±1.645 sd.
pub const Z90: f64 = 1.644_853_626_951_472_2;

/// Reference size for size-dependent parameters: Qwen2.5-7B's 7.6e9 parameters.
pub const REFERENCE_PARAMS: f64 = 7.615_616_512e9;

/// Reference useful rollouts per step for the batch terms: 1,024.
pub const REFERENCE_ROLLOUTS: f64 = 1024.0;

/// Reference response cap for the length term of K_mid: 8,192 tokens.
pub const REFERENCE_RESPONSE_CAP: f64 = 8192.0;

/// Reference mean pass rate for the difficulty term of K_mid: 0.35, the default task's, which
/// also stands for the training prompts of the ScaleRL and SimpleRL-Zoo runs the time scale is
/// fitted to (their profiles are not published), so the term is 1 on the evidence it came from.
pub const REFERENCE_PASS_RATE: f64 = 0.35;

/// Mean pass rates below this count as this in the difficulty term: a set the policy never
/// solves does not make K_mid infinite (its zero-signal rate already stops learning).
pub const MIN_PASS_RATE: f64 = 0.005;

/// Reference size of the LoRA rank curve: 0.5e9 parameters (veRL's LoRA guide's smallest model).
pub const LORA_REFERENCE_PARAMS: f64 = 0.5e9;

/// Which values a parameter may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// A score or a multiplier of one: [0, 1].
    UnitInterval,
    /// Strictly positive.
    Positive,
    /// Zero or more.
    NonNegative,
    /// A reuse factor: [0, 1).
    BelowOne,
    /// Any finite number.
    Real,
}

/// Where a parameter's default comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Fitted to the evidence base by `rlfrontier fit-prior` (src/outcome/fitted.rs).
    Fitted,
    /// A stated hypothesis or a published value taken as is, not fitted.
    Hypothesis,
}

/// One parameter of the prior: its name (the key in `[outcome]`), default value and range, the
/// values it may take, where the default comes from, and the evidence behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Which parameter.
    pub id: ParamId,
    /// The key in `[outcome]` and in `calibration.json`.
    pub name: &'static str,
    /// Default value and plausible range.
    pub default: Param,
    /// Allowed values.
    pub domain: Domain,
    /// Fitted to the evidence base, or a hypothesis.
    pub basis: Basis,
    /// What the parameter means and the evidence behind its default, in one line.
    pub evidence: &'static str,
}

/// The prior's parameters by identity, in [`PARAMS`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamId {
    /// R0 at 7.6e9 parameters when no base score was measured.
    BaseScoreAt7b,
    /// Change of that default R0 per decade of parameters.
    BaseScorePerDecade,
    /// Δ: the gain RL can reach, in logit units of the score, at 7.6e9 parameters.
    GainLogitAt7b,
    /// Change of Δ per decade of parameters.
    GainLogitPerDecade,
    /// K_mid at 7.6e9 parameters and an 8,192-token cap, in effective updates.
    KMidAt7b,
    /// K_mid ∝ N^(−e).
    KMidSizeExponent,
    /// K_mid ∝ (max(cap, 8192) / 8192)^λ.
    KMidLengthExponent,
    /// K_mid multiplier when RL starts from a base model.
    ZeroRlTimeFactor,
    /// Steepness β of the sigmoid.
    Steepness,
    /// κ: useful rollouts per step count as (U / 1024)^κ in K.
    BatchExponent,
    /// Δ ∝ (U / 1024)^a: larger batches reach higher.
    BatchCeilingExponent,
    /// ρ: update epochs μ over one batch are worth (1 − ρ^μ)/(1 − ρ) fresh batches.
    EpochReuse,
    /// Exponent on coverage 1 − E[(1−p)^G] scaling Δ.
    CoverageExponent,
    /// Useful rollouts per step above which Δ stops rising (the batch ceiling term saturates).
    RolloutSaturation,
    /// K_mid ∝ (p̄ / 0.35)^(−d): harder prompt sets need more sequential updates.
    DifficultyTimeExponent,
    /// Exponent on (1 − truncation rate) scaling Δ.
    LengthCeilingExponent,
    /// Δ ∝ (max(cap, 8192) / 8192)^g: a longer generation budget reaches higher (beyond what
    /// truncation alone explains).
    CapCeilingExponent,
    /// Learning-signal multiplier of a PRM.
    PrmSignal,
    /// Share of Δ reachable with a PRM.
    PrmCeiling,
    /// Learning-signal multiplier of an ORM.
    OrmSignal,
    /// Share of Δ reachable with an ORM.
    OrmCeiling,
    /// Learning-signal multiplier of an LLM judge.
    JudgeSignal,
    /// Share of Δ reachable with an LLM judge.
    JudgeCeiling,
    /// LoRA rank at which a 0.5e9-parameter model learns half as much per update.
    LoraHalfRankAt05b,
    /// r_half ∝ N^e.
    LoraHalfRankSizeExponent,
    /// Model discrepancy of Δ between runs, sd in logit units.
    GainDiscrepancy,
    /// Model discrepancy of K_mid between runs, sd of ln K_mid.
    TimeScaleDiscrepancy,
    /// Seed-to-seed sd of the final score at a score of 0.6 (`outcome::SEED_REFERENCE_SCORE`).
    SeedSd,
    /// Share of the discrepancy variance that differs between regimes of one grid.
    RegimeDiscrepancyShare,
    /// K_mid multiplier when RL starts from an instruct, SFT or DPO'd checkpoint.
    InstructTimeFactor,
    /// K_mid multiplier when RL starts from a distilled reasoning checkpoint.
    DistilledTimeFactor,
    /// K_mid multiplier for a tuned start of either kind (the two pooled).
    TunedTimeFactor,
    /// Δ multiplier for instruct starts.
    InstructGainFactor,
    /// Δ multiplier for distilled starts.
    DistilledGainFactor,
    /// Δ multiplier for a tuned start of either kind.
    TunedGainFactor,
    /// Δ multiplier on competition benchmarks (AIME, HMMT, LiveCodeBench): their score moves
    /// steeply with ability.
    CompetitionGainFactor,
    /// Δ multiplier on general benchmarks (knowledge, instruction following, chat), which a
    /// reasoning reward does not target.
    GeneralGainFactor,
    /// Base scores below this on competition benchmarks are read as this (format failure, not
    /// ability).
    CompetitionBaseFloor,
    /// sd (logit units) of outcomes around the prediction that does not shrink with predicted
    /// progress, for base starts.
    OutcomeFloorBase,
    /// The same for instruct starts.
    OutcomeFloorInstruct,
    /// The same for distilled starts.
    OutcomeFloorDistilled,
    /// The same for tuned starts of either kind.
    OutcomeFloorTuned,
    /// sd (logit units) of the ground a run may lose, at 1,000 steps (∝ √steps).
    DownsideSdAt1000Steps,
    /// What a step on prompts already seen is worth, against a step on fresh ones.
    DataReuse,
    /// Steps over which a base model's format gap (its base score below what its other math
    /// benchmarks imply) closes by a factor e: the gap closes as 1 − exp(−steps / this).
    FormatClosureSteps,
}

/// Number of parameters.
pub const PARAM_COUNT: usize = 45;

const fn spec(
    id: ParamId,
    name: &'static str,
    default: Param,
    domain: Domain,
    basis: Basis,
    evidence: &'static str,
) -> ParamSpec {
    ParamSpec {
        id,
        name,
        default,
        domain,
        basis,
        evidence,
    }
}

/// Every parameter of the prior, in [`ParamId`] order: the single table of names, defaults,
/// ranges, domains and evidence.
pub const PARAMS: [ParamSpec; PARAM_COUNT] = {
    use Basis::*;
    use Domain::*;
    use ParamId::*;
    [
        spec(
            BaseScoreAt7b,
            "base_score_at_7b",
            fitted::BASE_SCORE_AT_7B,
            UnitInterval,
            Fitted,
            "R0 when no base score is measured: SimpleRL-Zoo (arXiv 2503.18892) MATH-500 before RL, regressed on log10 size; measure yours",
        ),
        spec(
            BaseScorePerDecade,
            "base_score_per_decade",
            fitted::BASE_SCORE_PER_DECADE,
            Real,
            Fitted,
            "change of that default R0 per decade of parameters (same regression)",
        ),
        spec(
            GainLogitAt7b,
            "gain_logit_at_7b",
            fitted::GAIN_LOGIT_AT_7B,
            Real,
            Fitted,
            "Δ, the reachable gain in logit units at 7.6B: SimpleRL-Zoo before/after pairs (70) and ScaleRL (arXiv 2510.13786) Table 1",
        ),
        spec(
            GainLogitPerDecade,
            "gain_logit_per_decade",
            fitted::GAIN_LOGIT_PER_DECADE,
            Real,
            Fitted,
            "change of Δ per decade of parameters: SimpleRL-Zoo 0.5B-32B",
        ),
        spec(
            KMidAt7b,
            "k_mid_at_7b",
            fitted::K_MID_AT_7B,
            Positive,
            Fitted,
            "effective updates to half the gain at 7.6B and an 8k cap: ScaleRL Table 1 C_mid, through this tool's ledger of ScaleRL's setup",
        ),
        spec(
            KMidSizeExponent,
            "k_mid_size_exponent",
            Param::new(0.5, 0.2, 0.8),
            NonNegative,
            Hypothesis,
            "larger models are more sample-efficient (hypothesis; ScaleRL's one MoE point cannot separate it from the MoE's cost)",
        ),
        spec(
            KMidLengthExponent,
            "k_mid_length_exponent",
            fitted::K_MID_LENGTH_EXPONENT,
            Real,
            Fitted,
            "longer caps start slower: ScaleRL Table 1, 14k vs 32k generation (C_mid 2,542 vs 11,272 GPU-h); applied above 8k only",
        ),
        spec(
            ZeroRlTimeFactor,
            "zero_rl_time_factor",
            fitted::ZERO_RL_TIME_FACTOR,
            Positive,
            Fitted,
            "K_mid multiplier for base-model starts: SimpleRL-Zoo's ~100-step zero-RL runs, taken to end at 90% of their gain (assumption), against ScaleRL's SFT'd 8B",
        ),
        spec(
            Steepness,
            "steepness",
            fitted::STEEPNESS,
            Positive,
            Fitted,
            "β: ScaleRL Table 1's B over its ten runs",
        ),
        spec(
            BatchExponent,
            "batch_exponent",
            fitted::BATCH_EXPONENT,
            Real,
            Fitted,
            "κ: ScaleRL Table 1, batch 512/768/2048 (larger batches start slower per sample)",
        ),
        spec(
            BatchCeilingExponent,
            "batch_ceiling_exponent",
            fitted::BATCH_CEILING_EXPONENT,
            Real,
            Fitted,
            "larger batches reach higher: ScaleRL Table 1, A 0.605/0.61/0.645 at batch 512/768/2048",
        ),
        spec(
            EpochReuse,
            "epoch_reuse",
            Param::new(0.5, 0.3, 0.7),
            BelowOne,
            Hypothesis,
            "diminishing returns of reusing one rollout batch under PPO clipping (hypothesis; no allowed study varies epochs)",
        ),
        spec(
            CoverageExponent,
            "coverage_exponent",
            fitted::COVERAGE_EXPONENT,
            NonNegative,
            Fitted,
            "coverage 1 - E[(1-p)^G] scales Δ: ScaleRL Table 1, 8/16/24/32 generations at a fixed batch of 768",
        ),
        spec(
            RolloutSaturation,
            "rollout_saturation",
            fitted::ROLLOUT_SATURATION,
            Positive,
            Fitted,
            "useful rollouts per step past which Δ stops rising: IsoCompute (arXiv 2603.12151) easy set, best n saturates at 512 with 32 problems per batch",
        ),
        spec(
            DifficultyTimeExponent,
            "difficulty_time_exponent",
            fitted::DIFFICULTY_TIME_EXPONENT,
            NonNegative,
            Fitted,
            "harder prompt sets need more sequential updates, K_mid x (mean pass rate / 0.35)^-d: IsoCompute's hard set saturates at n = 128 where its easy set reaches 512",
        ),
        spec(
            LengthCeilingExponent,
            "length_ceiling_exponent",
            Param::new(1.0, 0.5, 1.5),
            NonNegative,
            Hypothesis,
            "truncated responses earn no reward, so Δ scales with (1 - truncation) (hypothesis; ScaleRL: longer budgets raise A)",
        ),
        spec(
            CapCeilingExponent,
            "cap_ceiling_exponent",
            fitted::CAP_CEILING_EXPONENT,
            NonNegative,
            Fitted,
            "a longer generation budget reaches higher, Δ x (max(cap, 8192)/8192)^g: ScaleRL Table 1, A 0.610 at 14k vs 0.645 at 32k; applied above 8k only",
        ),
        spec(
            PrmSignal,
            "prm_signal",
            Param::new(1.5, 1.1, 2.0),
            Positive,
            Hypothesis,
            "denser per-step credit from a PRM (hypothesis)",
        ),
        spec(
            PrmCeiling,
            "prm_ceiling",
            Param::new(0.9, 0.8, 1.0),
            UnitInterval,
            Hypothesis,
            "PRMs can be gamed, so less of Δ is reachable (hypothesis)",
        ),
        spec(
            OrmSignal,
            "orm_signal",
            Param::new(0.85, 0.6, 1.0),
            Positive,
            Hypothesis,
            "label noise of outcome reward models (hypothesis)",
        ),
        spec(
            OrmCeiling,
            "orm_ceiling",
            Param::new(0.9, 0.8, 1.0),
            UnitInterval,
            Hypothesis,
            "outcome reward models can be gamed (hypothesis)",
        ),
        spec(
            JudgeSignal,
            "judge_signal",
            Param::new(0.9, 0.7, 1.1),
            Positive,
            Hypothesis,
            "LLM judges are noisier than rules (hypothesis)",
        ),
        spec(
            JudgeCeiling,
            "judge_ceiling",
            Param::new(0.92, 0.8, 1.0),
            UnitInterval,
            Hypothesis,
            "LLM judges can be gamed (hypothesis)",
        ),
        spec(
            LoraHalfRankAt05b,
            "lora_half_rank_at_0_5b",
            Param::new(3.6, 2.0, 6.0),
            Positive,
            Hypothesis,
            "veRL LoRA guide: rank 32 nearly matches full fine-tuning at 0.5B",
        ),
        spec(
            LoraHalfRankSizeExponent,
            "lora_half_rank_size_exponent",
            Param::new(0.33, 0.2, 0.45),
            Real,
            Hypothesis,
            "veRL LoRA guide: rank 128 nearly matches full fine-tuning at 32B",
        ),
        spec(
            GainDiscrepancy,
            "gain_discrepancy",
            fitted::GAIN_DISCREPANCY,
            NonNegative,
            Fitted,
            "sd of Δ between runs the model cannot tell apart (logit units): SimpleRL-Zoo residuals, leave one model out",
        ),
        spec(
            TimeScaleDiscrepancy,
            "time_scale_discrepancy",
            fitted::TIME_SCALE_DISCREPANCY,
            NonNegative,
            Fitted,
            "sd of ln K_mid between runs: ScaleRL Table 1 C_mid residuals, leave one run out",
        ),
        spec(
            SeedSd,
            "seed_sd",
            Param::new(0.02, 0.01, 0.03),
            NonNegative,
            Hypothesis,
            "seed-to-seed sd of the score at a score of 0.6: ScaleRL reports about +-0.02 on A (about 0.6) between seeds; moved in logit units, narrower near 0 and 1",
        ),
        spec(
            RegimeDiscrepancyShare,
            "regime_discrepancy_share",
            Param::new(0.5, 0.25, 0.75),
            UnitInterval,
            Hypothesis,
            "share of the discrepancy that differs between regimes of one grid (the rest moves every cell together); hypothesis",
        ),
        spec(
            InstructTimeFactor,
            "instruct_time_factor",
            fitted::INSTRUCT_TIME_FACTOR,
            Positive,
            Fitted,
            "K_mid multiplier for instruct/SFT/DPO starts: before/after pairs with step counts (evidence/before_after.csv), stage 7",
        ),
        spec(
            DistilledTimeFactor,
            "distilled_time_factor",
            fitted::DISTILLED_TIME_FACTOR,
            Positive,
            Fitted,
            "K_mid multiplier for distilled reasoning starts: before/after pairs with step counts, stage 7",
        ),
        spec(
            TunedTimeFactor,
            "tuned_time_factor",
            fitted::TUNED_TIME_FACTOR,
            Positive,
            Fitted,
            "K_mid multiplier for a tuned start of either kind: instruct and distilled pairs pooled, stage 7",
        ),
        spec(
            InstructGainFactor,
            "instruct_gain_factor",
            fitted::INSTRUCT_GAIN_FACTOR,
            NonNegative,
            Fitted,
            "Δ multiplier for instruct/SFT/DPO starts: before/after pairs, stage 7",
        ),
        spec(
            DistilledGainFactor,
            "distilled_gain_factor",
            fitted::DISTILLED_GAIN_FACTOR,
            NonNegative,
            Fitted,
            "Δ multiplier for distilled reasoning starts: before/after pairs, stage 7",
        ),
        spec(
            TunedGainFactor,
            "tuned_gain_factor",
            fitted::TUNED_GAIN_FACTOR,
            NonNegative,
            Fitted,
            "Δ multiplier for a tuned start of either kind: pooled pairs, stage 7",
        ),
        spec(
            CompetitionGainFactor,
            "competition_gain_factor",
            fitted::COMPETITION_GAIN_FACTOR,
            NonNegative,
            Fitted,
            "Δ multiplier on competition benchmarks (AIME, HMMT, LiveCodeBench: items of one difficulty, a steep score-ability curve): before/after pairs, stage 7",
        ),
        spec(
            GeneralGainFactor,
            "general_gain_factor",
            fitted::GENERAL_GAIN_FACTOR,
            NonNegative,
            Fitted,
            "Δ multiplier on general benchmarks (MMLU, IFEval, PopQA, chat sets: what a math or code reward does not train): before/after pairs, stage 7",
        ),
        spec(
            CompetitionBaseFloor,
            "competition_base_floor",
            Param::new(0.01, 0.01, 0.05),
            UnitInterval,
            Hypothesis,
            "a base score below this on a competition benchmark is read as this (format failure, not ability); the before/after pairs leave it unidentified (90% range 2e-6 to 0.96), so it stays at the logit floor",
        ),
        spec(
            OutcomeFloorBase,
            "outcome_floor_base",
            fitted::OUTCOME_FLOOR_BASE,
            NonNegative,
            Fitted,
            "sd (logit) of outcomes that does not shrink with predicted progress, base starts: set so 90% of the kind's pairs fall inside, stage 7",
        ),
        spec(
            OutcomeFloorInstruct,
            "outcome_floor_instruct",
            fitted::OUTCOME_FLOOR_INSTRUCT,
            NonNegative,
            Fitted,
            "the same for instruct starts, stage 7",
        ),
        spec(
            OutcomeFloorDistilled,
            "outcome_floor_distilled",
            fitted::OUTCOME_FLOOR_DISTILLED,
            NonNegative,
            Fitted,
            "the same for distilled starts, stage 7",
        ),
        spec(
            OutcomeFloorTuned,
            "outcome_floor_tuned",
            fitted::OUTCOME_FLOOR_TUNED,
            NonNegative,
            Fitted,
            "the same for tuned starts of either kind, stage 7",
        ),
        spec(
            DownsideSdAt1000Steps,
            "downside_sd_at_1000_steps",
            fitted::DOWNSIDE_SD_AT_1000_STEPS,
            NonNegative,
            Fitted,
            "sd (logit) of ground lost, at 1,000 steps and growing as sqrt(steps): the losses among before/after pairs, stage 7",
        ),
        spec(
            DataReuse,
            "data_reuse",
            Param::new(1.0, 0.25, 1.0),
            UnitInterval,
            Hypothesis,
            "a step on prompts already seen is worth this share of a step on fresh ones, past the first pass over [task] dataset_prompts: no discount by default, since the only multi-pass pairs with stated steps (MiMo's ~10 passes, LUFFY's 1.4) fit better without one (leave-one-study-out RMSE 0.74x the baseline at 1.0, 0.78x at 0.5); the range allows one",
        ),
        spec(
            FormatClosureSteps,
            "format_closure_steps",
            fitted::FORMAT_CLOSURE_STEPS,
            Positive,
            Fitted,
            "steps over which a base model's format gap closes by a factor e (the score starts from R0 + (implied - R0)(1 - exp(-steps / this))): the base-start before/after pairs with a format gap, stage 7",
        ),
    ]
};

/// Names of every parameter, in declaration order (the keys of `[outcome]`).
pub const PARAM_NAMES: [&str; PARAM_COUNT] = {
    let mut names = [""; PARAM_COUNT];
    let mut i = 0;
    while i < PARAMS.len() {
        names[i] = PARAMS[i].name;
        i += 1;
    }
    names
};

impl ParamId {
    /// Every parameter, in declaration order.
    pub const ALL: [ParamId; PARAM_COUNT] = {
        let mut ids = [ParamId::BaseScoreAt7b; PARAM_COUNT];
        let mut i = 0;
        while i < PARAMS.len() {
            ids[i] = PARAMS[i].id;
            i += 1;
        }
        ids
    };

    /// The parameter's row of [`PARAMS`].
    pub fn spec(self) -> &'static ParamSpec {
        &PARAMS[self as usize]
    }

    /// The key in `[outcome]`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The parameter with this key.
    pub fn from_name(name: &str) -> Option<ParamId> {
        PARAMS.iter().find(|p| p.name == name).map(|p| p.id)
    }
}

/// The prior's parameters, indexed by [`ParamId`] (`params[ParamId::Steepness].value`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutcomeParams([Param; PARAM_COUNT]);

impl Default for OutcomeParams {
    /// Every parameter at its default in [`PARAMS`].
    fn default() -> Self {
        OutcomeParams(std::array::from_fn(|i| PARAMS[i].default))
    }
}

impl Index<ParamId> for OutcomeParams {
    type Output = Param;
    fn index(&self, id: ParamId) -> &Param {
        &self.0[id as usize]
    }
}

impl IndexMut<ParamId> for OutcomeParams {
    fn index_mut(&mut self, id: ParamId) -> &mut Param {
        &mut self.0[id as usize]
    }
}

impl Serialize for OutcomeParams {
    /// A map from each parameter's name to its value and range, in [`PARAMS`] order.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(PARAM_COUNT))?;
        for spec in &PARAMS {
            map.serialize_entry(spec.name, &self[spec.id])?;
        }
        map.end()
    }
}

impl OutcomeParams {
    /// The parameter `id`.
    pub fn param(&self, id: ParamId) -> Param {
        self[id]
    }

    /// The parameter of this name, to change it.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Param> {
        ParamId::from_name(name).map(|id| &mut self[id])
    }

    /// Every parameter in [`PARAMS`] order.
    pub fn as_array(&self) -> &[Param; PARAM_COUNT] {
        &self.0
    }

    /// The parameter of this name (read-only).
    pub fn get(&self, name: &str) -> Option<Param> {
        ParamId::from_name(name).map(|id| self[id])
    }

    /// Checks the values are usable: finite, low ≤ value ≤ high, and each within its domain.
    pub fn validate(&self) -> Result<(), String> {
        for spec in &PARAMS {
            let (name, p) = (spec.name, self[spec.id]);
            if !(p.value.is_finite() && p.low.is_finite() && p.high.is_finite()) {
                return Err(format!("{name}: values must be finite"));
            }
            if !(p.low <= p.value && p.value <= p.high) {
                return Err(format!(
                    "{name}: need low <= value <= high, got {} <= {} <= {}",
                    p.low, p.value, p.high
                ));
            }
            match spec.domain {
                Domain::UnitInterval if !(p.low >= 0.0 && p.high <= 1.0) => {
                    return Err(format!("{name}: must lie in [0, 1]"));
                }
                Domain::Positive if p.low <= 0.0 => {
                    return Err(format!("{name}: must be greater than 0"));
                }
                Domain::BelowOne if !(p.low >= 0.0 && p.high < 1.0) => {
                    return Err(format!("{name}: must lie in [0, 1)"));
                }
                Domain::NonNegative if p.low < 0.0 => {
                    return Err(format!("{name}: must be 0 or more"));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_the_table_and_the_names_agree() {
        for (k, id) in ParamId::ALL.iter().enumerate() {
            assert_eq!(*id as usize, k);
            assert_eq!(PARAMS[k].id, *id);
            assert_eq!(ParamId::from_name(id.name()), Some(*id));
        }
        assert_eq!(OutcomeParams::default().validate(), Ok(()));
    }

    #[test]
    fn a_90_percent_range_gives_its_sd() {
        // ±1.645 sd is the central 90%: a range of 3.29 wide is one sd of 1.
        assert!((Param::new(0.0, -Z90, Z90).sd() - 1.0).abs() < 1e-12);
        // Log-normal: e^±1.645 around 1 is one sd of ln.
        assert!((Param::new(1.0, (-Z90).exp(), Z90.exp()).sd_ln() - 1.0).abs() < 1e-12);
    }
}
