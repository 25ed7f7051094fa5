//! The outcome prior's parameters: every one named, with a default, a plausible range (the
//! interval's box) and the evidence behind it. Any of them can be overridden in a grid's
//! `[outcome]` table, either as a number (the value moves, the range keeps its relative width) or
//! as `{ value = .., low = .., high = .. }`.
//!
//! These defaults are a **hypothesis**, chosen to be consistent with published findings (cited
//! per parameter), not fitted to measurements. Pilot runs replace them (the calibration step of
//! the RACE protocol).

use serde::Serialize;

/// A parameter's value and the range the interval explores.
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
    const fn new(value: f64, low: f64, high: f64) -> Self {
        Param { value, low, high }
    }
}

/// Reference size for size-dependent parameters: Qwen2.5-7B's 7.6e9 parameters.
pub const REFERENCE_PARAMS: f64 = 7.615_616_512e9;

/// Reference useful rollouts per step for the batch term: 1,024.
pub const REFERENCE_ROLLOUTS: f64 = 1024.0;

/// Reference size of the LoRA rank curve: 0.5e9 parameters (veRL's LoRA guide's smallest model).
pub const LORA_REFERENCE_PARAMS: f64 = 0.5e9;

/// The prior's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OutcomeParams {
    /// R0 at 7.6e9 parameters: the base policy's score on the target metric before RL.
    /// Default 0.45 (Qwen2.5-7B-class models on MATH-500-like held-out sets score 0.4-0.6 before
    /// RL); set it to your measured base score.
    pub base_score_at_7b: Param,
    /// Change of R0 per decade of parameters. Default 0: kept at zero on purpose, so that
    /// larger models win through their ceiling and sample efficiency, not a head start
    /// (hypothesis; measure your base models).
    pub base_score_per_decade: Param,
    /// The asymptote A at 7.6e9 parameters with a rule reward, full coverage and no truncation.
    /// Default 0.70 (ScaleRL, arXiv 2510.13786, Table 1: A = 0.61 for an 8B dense model on its
    /// held-out set, rising with generation length and batch size).
    pub ceiling_at_7b: Param,
    /// Change of the asymptote per decade of parameters. Default 0.12 (ScaleRL: larger models
    /// reach higher asymptotes; the 17Bx16 MoE reaches 0.71 against 0.61 for 8B).
    pub ceiling_per_decade: Param,
    /// K_mid at 7.6e9 parameters, in effective updates (iterations × reuse × (useful rollouts /
    /// 1024)^κ): half of the headroom is reached here. Default 10, so that the bundled grids'
    /// budgets span the rising part of the curve (hypothesis).
    pub k_mid_at_7b: Param,
    /// How fast K_mid falls with parameters: K_mid ∝ N^(−e). Default 0.5 (larger models are more
    /// sample-efficient in RL post-training; ScaleRL and the DeepSeek-R1 distillation results point
    /// the same way; the exponent is a hypothesis).
    pub k_mid_size_exponent: Param,
    /// Steepness β of the sigmoid. Default 1.2 (ScaleRL fits B between about 1 and 2.5).
    pub steepness: Param,
    /// κ: useful rollouts per step count as (U / 1024)^κ. Default 0.5 (the gradient-noise-scale
    /// argument: beyond the critical batch, doubling the batch helps less than doubling steps;
    /// with κ = 1 the best G would not depend on the budget, against IsoCompute, arXiv 2603.12151).
    pub batch_exponent: Param,
    /// ρ: update epochs μ over one batch are worth (1 − ρ^μ)/(1 − ρ) fresh batches. Default 0.5
    /// (diminishing returns of reuse; PPO-style clipping limits what each extra epoch can move).
    pub epoch_reuse: Param,
    /// Exponent on coverage 1 − E[(1−p)^G] (the share of prompts with at least one success among
    /// G samples) scaling the headroom. Default 1.0 (hypothesis: RL sharpens what sampling can
    /// already find; coverage grows with G and saturates, IsoCompute's finding).
    pub coverage_exponent: Param,
    /// Exponent on (1 − truncation rate) scaling the headroom: a low cap lowers the ceiling.
    /// Default 1.0 (ScaleRL: longer generation budgets raise the asymptote).
    pub length_ceiling_exponent: Param,
    /// Learning-signal multiplier of a process reward model relative to a rule. Default 1.5 (denser,
    /// per-step credit).
    pub prm_signal: Param,
    /// Ceiling multiplier of a PRM. Default 0.9 (PRMs can be gamed; RACE and the Qwen2.5-Math-PRM
    /// report caution against reward hacking).
    pub prm_ceiling: Param,
    /// Learning-signal multiplier of an outcome reward model. Default 0.85 (label noise).
    pub orm_signal: Param,
    /// Ceiling multiplier of an outcome reward model. Default 0.9.
    pub orm_ceiling: Param,
    /// Learning-signal multiplier of an LLM judge. Default 0.9.
    pub judge_signal: Param,
    /// Ceiling multiplier of an LLM judge. Default 0.92.
    pub judge_ceiling: Param,
    /// LoRA rank at which a 0.5e9-parameter model learns half as much per update as full
    /// fine-tuning (efficiency r / (r + r_half)). Default 3.6: rank 32 then reaches 90%, matching
    /// veRL's LoRA guide ("rank 32 nearly matches full fine-tuning at 0.5B").
    pub lora_half_rank_at_0_5b: Param,
    /// Growth of that half rank with parameters, r_half ∝ N^e. Default 0.33: rank 128 then
    /// reaches 90% at 32B, as veRL's LoRA guide reports.
    pub lora_half_rank_size_exponent: Param,
}

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

/// One parameter of the prior: its name (the key in `[outcome]`), default value and range, the
/// values it may take, and the evidence behind the default.
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
    /// One line of evidence for reports.
    pub evidence: &'static str,
}

/// The prior's parameters by identity, in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // each variant is the field of `OutcomeParams` of the same name
pub enum ParamId {
    BaseScoreAt7b,
    BaseScorePerDecade,
    CeilingAt7b,
    CeilingPerDecade,
    KMidAt7b,
    KMidSizeExponent,
    Steepness,
    BatchExponent,
    EpochReuse,
    CoverageExponent,
    LengthCeilingExponent,
    PrmSignal,
    PrmCeiling,
    OrmSignal,
    OrmCeiling,
    JudgeSignal,
    JudgeCeiling,
    LoraHalfRankAt05b,
    LoraHalfRankSizeExponent,
}

const fn spec(
    id: ParamId,
    name: &'static str,
    default: Param,
    domain: Domain,
    evidence: &'static str,
) -> ParamSpec {
    ParamSpec {
        id,
        name,
        default,
        domain,
        evidence,
    }
}

/// Every parameter of the prior, in [`ParamId`] order: the single table of names, defaults,
/// ranges, domains and evidence (the field docs of [`OutcomeParams`] say what each one means).
pub const PARAMS: [ParamSpec; 19] = {
    use Domain::*;
    use ParamId::*;
    [
        spec(
            BaseScoreAt7b,
            "base_score_at_7b",
            Param::new(0.45, 0.40, 0.50),
            UnitInterval,
            "base policy score before RL; set it to your measured value",
        ),
        spec(
            BaseScorePerDecade,
            "base_score_per_decade",
            Param::new(0.0, 0.0, 0.06),
            Real,
            "kept small: larger models win by ceiling and sample efficiency, not a head start (hypothesis)",
        ),
        spec(
            CeilingAt7b,
            "ceiling_at_7b",
            Param::new(0.70, 0.62, 0.78),
            UnitInterval,
            "ScaleRL (arXiv 2510.13786) Table 1: A = 0.61 for an 8B dense model",
        ),
        spec(
            CeilingPerDecade,
            "ceiling_per_decade",
            Param::new(0.12, 0.06, 0.18),
            Real,
            "ScaleRL: larger models reach higher asymptotes",
        ),
        spec(
            KMidAt7b,
            "k_mid_at_7b",
            Param::new(10.0, 5.0, 20.0),
            Positive,
            "chosen so the bundled grids span the rising part of the curve (hypothesis)",
        ),
        spec(
            KMidSizeExponent,
            "k_mid_size_exponent",
            Param::new(0.5, 0.3, 0.7),
            NonNegative,
            "larger models are more sample-efficient in RL post-training (hypothesis on the exponent)",
        ),
        spec(
            Steepness,
            "steepness",
            Param::new(1.2, 0.8, 1.8),
            Positive,
            "ScaleRL fits steepness between about 1 and 2.5",
        ),
        spec(
            BatchExponent,
            "batch_exponent",
            Param::new(0.5, 0.35, 0.7),
            NonNegative,
            "gradient-noise argument; kappa = 1 would contradict IsoCompute (arXiv 2603.12151)",
        ),
        spec(
            EpochReuse,
            "epoch_reuse",
            Param::new(0.5, 0.3, 0.7),
            BelowOne,
            "diminishing returns of reusing one rollout batch (PPO clipping)",
        ),
        spec(
            CoverageExponent,
            "coverage_exponent",
            Param::new(1.0, 0.6, 1.4),
            NonNegative,
            "coverage 1 - E[(1-p)^G] grows with G and saturates (IsoCompute)",
        ),
        spec(
            LengthCeilingExponent,
            "length_ceiling_exponent",
            Param::new(1.0, 0.5, 1.5),
            NonNegative,
            "ScaleRL: longer generation budgets raise the asymptote",
        ),
        spec(
            PrmSignal,
            "prm_signal",
            Param::new(1.5, 1.1, 2.0),
            Positive,
            "denser per-step credit from a PRM",
        ),
        spec(
            PrmCeiling,
            "prm_ceiling",
            Param::new(0.9, 0.8, 1.0),
            UnitInterval,
            "PRMs can be gamed (reward hacking)",
        ),
        spec(
            OrmSignal,
            "orm_signal",
            Param::new(0.85, 0.6, 1.0),
            Positive,
            "label noise of outcome reward models",
        ),
        spec(
            OrmCeiling,
            "orm_ceiling",
            Param::new(0.9, 0.8, 1.0),
            UnitInterval,
            "outcome reward models can be gamed",
        ),
        spec(
            JudgeSignal,
            "judge_signal",
            Param::new(0.9, 0.7, 1.1),
            Positive,
            "LLM judges: noisier than rules",
        ),
        spec(
            JudgeCeiling,
            "judge_ceiling",
            Param::new(0.92, 0.8, 1.0),
            UnitInterval,
            "LLM judges can be gamed",
        ),
        spec(
            LoraHalfRankAt05b,
            "lora_half_rank_at_0_5b",
            Param::new(3.6, 2.0, 6.0),
            Positive,
            "veRL LoRA guide: rank 32 nearly matches full fine-tuning at 0.5B",
        ),
        spec(
            LoraHalfRankSizeExponent,
            "lora_half_rank_size_exponent",
            Param::new(0.33, 0.2, 0.45),
            Real,
            "veRL LoRA guide: rank 128 nearly matches full fine-tuning at 32B",
        ),
    ]
};

/// Names of every parameter, in declaration order (the keys of `[outcome]`).
pub const PARAM_NAMES: [&str; 19] = {
    let mut names = [""; 19];
    let mut i = 0;
    while i < PARAMS.len() {
        names[i] = PARAMS[i].name;
        i += 1;
    }
    names
};

impl ParamId {
    /// Every parameter, in declaration order.
    pub const ALL: [ParamId; 19] = {
        let mut ids = [ParamId::BaseScoreAt7b; 19];
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

impl Default for OutcomeParams {
    /// Every parameter at its default in [`PARAMS`].
    fn default() -> Self {
        let mut params = OutcomeParams {
            base_score_at_7b: Param::new(0.0, 0.0, 0.0),
            base_score_per_decade: Param::new(0.0, 0.0, 0.0),
            ceiling_at_7b: Param::new(0.0, 0.0, 0.0),
            ceiling_per_decade: Param::new(0.0, 0.0, 0.0),
            k_mid_at_7b: Param::new(0.0, 0.0, 0.0),
            k_mid_size_exponent: Param::new(0.0, 0.0, 0.0),
            steepness: Param::new(0.0, 0.0, 0.0),
            batch_exponent: Param::new(0.0, 0.0, 0.0),
            epoch_reuse: Param::new(0.0, 0.0, 0.0),
            coverage_exponent: Param::new(0.0, 0.0, 0.0),
            length_ceiling_exponent: Param::new(0.0, 0.0, 0.0),
            prm_signal: Param::new(0.0, 0.0, 0.0),
            prm_ceiling: Param::new(0.0, 0.0, 0.0),
            orm_signal: Param::new(0.0, 0.0, 0.0),
            orm_ceiling: Param::new(0.0, 0.0, 0.0),
            judge_signal: Param::new(0.0, 0.0, 0.0),
            judge_ceiling: Param::new(0.0, 0.0, 0.0),
            lora_half_rank_at_0_5b: Param::new(0.0, 0.0, 0.0),
            lora_half_rank_size_exponent: Param::new(0.0, 0.0, 0.0),
        };
        for spec in &PARAMS {
            *params.param_mut(spec.id) = spec.default;
        }
        params
    }
}

impl OutcomeParams {
    /// The parameter `id`.
    pub fn param(&self, id: ParamId) -> Param {
        *self.param_ref(id)
    }

    fn param_ref(&self, id: ParamId) -> &Param {
        use ParamId::*;
        match id {
            BaseScoreAt7b => &self.base_score_at_7b,
            BaseScorePerDecade => &self.base_score_per_decade,
            CeilingAt7b => &self.ceiling_at_7b,
            CeilingPerDecade => &self.ceiling_per_decade,
            KMidAt7b => &self.k_mid_at_7b,
            KMidSizeExponent => &self.k_mid_size_exponent,
            Steepness => &self.steepness,
            BatchExponent => &self.batch_exponent,
            EpochReuse => &self.epoch_reuse,
            CoverageExponent => &self.coverage_exponent,
            LengthCeilingExponent => &self.length_ceiling_exponent,
            PrmSignal => &self.prm_signal,
            PrmCeiling => &self.prm_ceiling,
            OrmSignal => &self.orm_signal,
            OrmCeiling => &self.orm_ceiling,
            JudgeSignal => &self.judge_signal,
            JudgeCeiling => &self.judge_ceiling,
            LoraHalfRankAt05b => &self.lora_half_rank_at_0_5b,
            LoraHalfRankSizeExponent => &self.lora_half_rank_size_exponent,
        }
    }

    /// The parameter `id`, to change it.
    pub fn param_mut(&mut self, id: ParamId) -> &mut Param {
        use ParamId::*;
        match id {
            BaseScoreAt7b => &mut self.base_score_at_7b,
            BaseScorePerDecade => &mut self.base_score_per_decade,
            CeilingAt7b => &mut self.ceiling_at_7b,
            CeilingPerDecade => &mut self.ceiling_per_decade,
            KMidAt7b => &mut self.k_mid_at_7b,
            KMidSizeExponent => &mut self.k_mid_size_exponent,
            Steepness => &mut self.steepness,
            BatchExponent => &mut self.batch_exponent,
            EpochReuse => &mut self.epoch_reuse,
            CoverageExponent => &mut self.coverage_exponent,
            LengthCeilingExponent => &mut self.length_ceiling_exponent,
            PrmSignal => &mut self.prm_signal,
            PrmCeiling => &mut self.prm_ceiling,
            OrmSignal => &mut self.orm_signal,
            OrmCeiling => &mut self.orm_ceiling,
            JudgeSignal => &mut self.judge_signal,
            JudgeCeiling => &mut self.judge_ceiling,
            LoraHalfRankAt05b => &mut self.lora_half_rank_at_0_5b,
            LoraHalfRankSizeExponent => &mut self.lora_half_rank_size_exponent,
        }
    }

    /// The parameter of this name, to change it.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Param> {
        ParamId::from_name(name).map(|id| self.param_mut(id))
    }

    /// Every parameter in [`PARAMS`] order. Written out field by field because the prior
    /// calls it for every cell of a sweep; a test checks it against [`OutcomeParams::param`].
    pub fn as_array(&self) -> [Param; 19] {
        [
            self.base_score_at_7b,
            self.base_score_per_decade,
            self.ceiling_at_7b,
            self.ceiling_per_decade,
            self.k_mid_at_7b,
            self.k_mid_size_exponent,
            self.steepness,
            self.batch_exponent,
            self.epoch_reuse,
            self.coverage_exponent,
            self.length_ceiling_exponent,
            self.prm_signal,
            self.prm_ceiling,
            self.orm_signal,
            self.orm_ceiling,
            self.judge_signal,
            self.judge_ceiling,
            self.lora_half_rank_at_0_5b,
            self.lora_half_rank_size_exponent,
        ]
    }

    /// The parameter of this name (read-only).
    pub fn get(&self, name: &str) -> Option<Param> {
        ParamId::from_name(name).map(|id| self.param(id))
    }

    /// Keeps a scaled range inside the parameter's domain (a number override scales the default
    /// range, which can push a score-like range past 1 or the reuse factor to 1).
    pub fn clamp_scaled_range(name: &str, param: &mut Param) {
        match ParamId::from_name(name).map(|id| id.spec().domain) {
            Some(Domain::UnitInterval) => {
                param.low = param.low.clamp(0.0, 1.0).min(param.value);
                param.high = param.high.clamp(0.0, 1.0).max(param.value);
            }
            Some(Domain::BelowOne) => {
                param.high = param.high.min(0.99).max(param.value);
            }
            _ => {}
        }
    }

    /// Checks the values are usable: finite, low ≤ value ≤ high, and each within its domain.
    pub fn validate(&self) -> Result<(), String> {
        for spec in &PARAMS {
            let (name, p) = (spec.name, self.param(spec.id));
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
    fn the_array_the_table_and_the_fields_agree() {
        let mut params = OutcomeParams::default();
        for (k, id) in ParamId::ALL.iter().enumerate() {
            assert_eq!(*id as usize, k);
            assert_eq!(PARAMS[k].id, *id);
            assert_eq!(ParamId::from_name(id.name()), Some(*id));
            params.param_mut(*id).value = k as f64 + 0.5;
        }
        for (k, p) in params.as_array().iter().enumerate() {
            assert_eq!(p.value, k as f64 + 0.5, "{}", PARAMS[k].name);
        }
        assert_eq!(OutcomeParams::default().validate(), Ok(()));
    }
}
