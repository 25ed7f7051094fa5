//! Typed values of grid axes: fine-tuning mode, reward mechanism and budget, each parsed from the
//! short strings users write (`"lora:64"`, `"prm:qwen2.5-math-prm-7b"`, `"2.5e16 flops"`).

use std::fmt;

use serde::Serialize;

use crate::catalog::{Catalog, ModelSpec};
use crate::error::suggestion;

/// How the policy is trained: all weights, or LoRA adapters of a given rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Finetune {
    /// Full fine-tuning: every weight has gradients and optimizer state.
    Full,
    /// LoRA adapters of this rank on every linear layer; base weights frozen.
    Lora(u64),
}

/// Largest LoRA rank accepted: above every model's hidden size in the catalog, far below
/// where rank × dimensions could overflow. The rank is also checked against the policy's hidden
/// size where the policy is known.
pub const MAX_LORA_RANK: u64 = 65_536;

impl Finetune {
    /// Parses `full` or `lora:R` (1 ≤ R ≤ [`MAX_LORA_RANK`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim().to_ascii_lowercase();
        if t == "full" {
            return Ok(Finetune::Full);
        }
        if let Some(rank) = t.strip_prefix("lora:") {
            return match rank.trim().parse::<i64>() {
                Ok(r) if (1..=MAX_LORA_RANK as i64).contains(&r) => Ok(Finetune::Lora(r as u64)),
                _ => Err(format!(
                    "`{text}`: the LoRA rank must be an integer from 1 to {MAX_LORA_RANK}, as in `lora:64` (a rank as large as the hidden size is full fine-tuning)"
                )),
            };
        }
        Err(format!(
            "`{text}` is not a fine-tuning mode; write `full` or `lora:RANK` (e.g. `lora:64`)"
        ))
    }
}

impl Finetune {
    /// `full` or `lora`: the mode alone, for a table column beside [`Finetune::lora_rank`].
    pub fn mode(self) -> &'static str {
        match self {
            Finetune::Full => "full",
            Finetune::Lora(_) => "lora",
        }
    }

    /// The LoRA rank, 0 for full fine-tuning (veRL's `lora_rank` convention).
    pub fn lora_rank(self) -> u64 {
        match self {
            Finetune::Full => 0,
            Finetune::Lora(r) => r,
        }
    }

    /// The value from its two table columns (`mode`, `lora_rank`).
    pub fn from_columns(mode: &str, lora_rank: u64) -> Result<Self, String> {
        match (mode, lora_rank) {
            ("full", 0) => Ok(Finetune::Full),
            ("lora", r) if r > 0 => Ok(Finetune::Lora(r)),
            ("full", r) => Err(format!(
                "finetune `full` with lora_rank {r}: write lora_rank 0"
            )),
            ("lora", _) => Err("finetune `lora` needs a lora_rank of 1 or more".to_string()),
            (other, _) => Err(format!(
                "`{other}` is not a fine-tuning mode; write full or lora"
            )),
        }
    }
}

impl std::str::FromStr for Finetune {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Finetune::parse(text)
    }
}

impl fmt::Display for Finetune {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finetune::Full => write!(f, "full"),
            Finetune::Lora(r) => write!(f, "lora:{r}"),
        }
    }
}

/// The kind of feedback a rollout gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RewardKind {
    /// A rule or verifier (exact-match answer check, unit tests): no GPU FLOPs.
    Rule,
    /// An outcome reward model: one forward pass over each sequence.
    Orm,
    /// A process reward model: one forward pass over each sequence, scoring every step.
    Prm,
    /// An LLM judge: prefill of sequence plus rubric, then decoding a short verdict.
    Judge,
}

impl RewardKind {
    /// The lowercase prefix users write.
    pub fn as_str(self) -> &'static str {
        match self {
            RewardKind::Rule => "rule",
            RewardKind::Orm => "orm",
            RewardKind::Prm => "prm",
            RewardKind::Judge => "judge",
        }
    }
}

/// A reward mechanism: its kind and, except for rules, the model that computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reward {
    /// Rule, ORM, PRM or judge.
    pub kind: RewardKind,
    /// The reward or judge model (None for rules).
    pub model: Option<ModelSpec>,
}

impl Reward {
    /// Parses `rule`, `orm:MODEL`, `prm:MODEL` or `judge:MODEL` against the catalog.
    pub fn parse(text: &str, catalog: &Catalog) -> Result<Self, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("rule") {
            return Ok(Reward {
                kind: RewardKind::Rule,
                model: None,
            });
        }
        let Some((prefix, model)) = t.split_once(':') else {
            let lower = t.to_ascii_lowercase();
            if ["prm", "orm"].contains(&lower.as_str()) {
                let reward_models: Vec<&str> = catalog
                    .models
                    .iter()
                    .filter(|m| !m.lm_head)
                    .map(|m| m.id.as_str())
                    .collect();
                return Err(format!(
                    "`{lower}` needs its reward model: write `{lower}:MODEL`, e.g. `{lower}:{}` (reward models in the catalog: {})",
                    reward_models.first().copied().unwrap_or("MODEL"),
                    reward_models.join(", ")
                ));
            }
            if lower == "judge" {
                return Err("`judge` needs its model: write `judge:MODEL` with any policy that has an LM head, e.g. `judge:qwen2.5-7b`".to_string());
            }
            return Err(format!(
                "`{text}` is not a reward; write `rule`, `orm:MODEL`, `prm:MODEL` or `judge:MODEL`; {}",
                suggestion(t, ["rule", "orm:", "prm:", "judge:"])
            ));
        };
        let kind = match prefix.trim().to_ascii_lowercase().as_str() {
            "orm" => RewardKind::Orm,
            "prm" => RewardKind::Prm,
            "judge" => RewardKind::Judge,
            other => {
                return Err(format!(
                    "`{other}` is not a reward kind; {}",
                    suggestion(other, ["rule", "orm", "prm", "judge"])
                ));
            }
        };
        let model = catalog.model(model.trim())?.clone();
        if kind == RewardKind::Judge && !model.lm_head {
            return Err(format!(
                "`{}` has no LM head, so it cannot be a judge; use it as `prm:` or `orm:`",
                model.id
            ));
        }
        Ok(Reward {
            kind,
            model: Some(model),
        })
    }
}

impl Reward {
    /// The reward or judge model's id, empty for rules: a table column beside the kind.
    pub fn model_id(&self) -> &str {
        self.model.as_ref().map_or("", |m| m.id.as_str())
    }
}

impl fmt::Display for Reward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.model {
            None => write!(f, "{}", self.kind.as_str()),
            Some(m) => write!(f, "{}:{}", self.kind.as_str(), m.id),
        }
    }
}

/// The unit a budget is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BudgetUnit {
    /// Model FLOPs (the RACE convention: 2 FLOPs per multiply-accumulate, no recomputation).
    Flops,
    /// GPU-hours of the whole cluster.
    GpuHours,
    /// US dollars at the grid's price.
    Usd,
}

impl BudgetUnit {
    /// The largest budget of this unit any post-training run could have, and why: above it a
    /// budget is a typo (and would saturate the iteration count).
    pub fn physical_max(self) -> (f64, &'static str) {
        match self {
            BudgetUnit::Flops => (1e30, "about a thousand times the largest pre-training run"),
            BudgetUnit::GpuHours => (1e9, "a million GPUs for a century"),
            BudgetUnit::Usd => (1e11, "a hundred billion dollars"),
        }
    }

    /// The spelling used in grids and CSV files.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetUnit::Flops => "flops",
            BudgetUnit::GpuHours => "gpu-h",
            BudgetUnit::Usd => "usd",
        }
    }

    /// Parses a unit name (`flops`, `gpu-h`, `usd`; a few common spellings are accepted).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "flops" | "flop" => Ok(BudgetUnit::Flops),
            "gpu-h" | "gpu-hours" | "gpu-hour" | "gpuh" => Ok(BudgetUnit::GpuHours),
            "usd" | "$" | "dollars" => Ok(BudgetUnit::Usd),
            other => Err(format!(
                "`{other}` is not a budget unit; {}",
                suggestion(other, ["flops", "gpu-h", "usd"])
            )),
        }
    }
}

/// A compute budget: an amount in a unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Budget {
    /// The amount, positive and finite.
    pub amount: f64,
    /// Its unit.
    pub unit: BudgetUnit,
}

/// An amount as people type it: `20000`, `20,000` (commas between groups of three digits),
/// `2_000`, `2.5e16`, and `20k`, `1.5M`, `2B` (thousand, million, billion). None when it is not
/// one.
pub fn parse_amount(text: &str) -> Option<f64> {
    let t = text.trim();
    let grouped = t
        .split(',')
        .skip(1)
        .all(|group| group.len() >= 3 && group[..3].bytes().all(|b| b.is_ascii_digit()));
    if !grouped {
        return None;
    }
    let t: String = t.chars().filter(|&c| c != ',' && c != '_').collect();
    let (number, scale) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1e3),
        'm' | 'M' => (&t[..t.len() - 1], 1e6),
        'b' | 'B' => (&t[..t.len() - 1], 1e9),
        _ => (t.as_str(), 1.0),
    };
    number.parse::<f64>().ok().map(|x| x * scale)
}

/// A dollar amount as people type it: `20000`, `$20k`, `20k usd`, `$1.5M`, `20,000 USD`
/// (`init --budget-usd`, where the unit is known).
pub fn parse_usd(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_prefix('$').unwrap_or(t).trim();
    let lower = t.to_ascii_lowercase();
    let t = lower
        .strip_suffix("usd")
        .or_else(|| lower.strip_suffix("dollars"))
        .unwrap_or(&lower)
        .trim();
    match parse_amount(t) {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "`{text}` is not a dollar amount; write it as in 20000, $20k, 20k usd or 1.5M"
        )),
    }
}

impl Budget {
    /// Parses `"2.5e16 flops"`, `"500 gpu-h"` or `"2000 usd"`, and dollars as people type them:
    /// `"$20k"`, `"20k usd"`, `"$1.5M"` ([`parse_amount`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let dollars = t.strip_prefix('$').map(|rest| {
            let rest = rest.trim();
            format!("{} usd", rest.strip_suffix("usd").unwrap_or(rest).trim())
        });
        let t = dollars.as_deref().unwrap_or(t);
        let mut parts = t.split_whitespace();
        let (number, unit) = match (parts.next(), parts.next(), parts.next()) {
            (Some(number), Some(unit), None) => (number, unit),
            (Some(number), None, None) if parse_amount(number).is_some() => {
                return Err(format!(
                    "`{text}` has no unit; write \"{number} usd\" for dollars, \"{number} gpu-h\" for GPU-hours or \"{number} flops\""
                ));
            }
            _ => {
                return Err(format!(
                    "`{text}` is not a budget; write an amount and a unit, as in \"20000 usd\", \"$20k\", \"500 gpu-h\" or \"2.5e16 flops\""
                ));
            }
        };
        let amount = parse_amount(number).ok_or_else(|| {
            format!(
                "`{number}` in `{text}` is not a number; write it as in \"2.5e16 flops\" or \"20k usd\""
            )
        })?;
        if !amount.is_finite() || amount <= 0.0 {
            return Err(format!("budget `{text}` must be a positive, finite amount"));
        }
        let unit = BudgetUnit::parse(unit)?;
        let (max, what) = unit.physical_max();
        if amount > max {
            return Err(format!(
                "budget `{text}` is above {} {} ({what}); check the amount",
                crate::format::number(max),
                unit.as_str()
            ));
        }
        Ok(Budget { amount, unit })
    }
}

impl std::str::FromStr for Budget {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Budget::parse(text)
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}",
            crate::format::number(self.amount),
            self.unit.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_finetune_modes() {
        assert_eq!(Finetune::parse("full").unwrap(), Finetune::Full);
        assert_eq!(Finetune::parse("lora:64").unwrap(), Finetune::Lora(64));
        assert!(Finetune::parse("lora:0").is_err());
        assert!(Finetune::parse("lora:-3").is_err());
        assert!(Finetune::parse("qlora").is_err());
    }

    #[test]
    fn budgets_beyond_any_run_are_refused() {
        for text in ["1e300 usd", "1e31 flops", "2e9 gpu-h"] {
            let e = Budget::parse(text).unwrap_err();
            assert!(e.contains("check the amount"), "{text}: {e}");
        }
        assert!(Budget::parse("1e11 usd").is_ok());
    }

    #[test]
    fn parses_budgets_and_rejects_bad_units() {
        assert_eq!(
            Budget::parse("2.5e16 flops").unwrap(),
            Budget {
                amount: 2.5e16,
                unit: BudgetUnit::Flops
            }
        );
        assert_eq!(
            Budget::parse("500 gpu-h").unwrap().unit,
            BudgetUnit::GpuHours
        );
        assert_eq!(Budget::parse("2_000 usd").unwrap().amount, 2000.0);
        let err = Budget::parse("100 gpu-hr").unwrap_err();
        assert!(err.contains("did you mean `gpu-h`"), "{err}");
        assert!(Budget::parse("-5 usd").is_err());
        assert!(Budget::parse("nan usd").is_err());
        assert!(Budget::parse("inf flops").is_err());
        assert!(Budget::parse("100").is_err());
    }

    #[test]
    fn dollar_budgets_parse_as_people_type_them() {
        for (text, amount) in [
            ("$20k", 20_000.0),
            ("20k usd", 20_000.0),
            ("$20,000", 20_000.0),
            ("1.5M usd", 1_500_000.0),
            ("$ 2B", 2e9),
            ("20,000 USD", 20_000.0),
        ] {
            let b = Budget::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((b.amount, b.unit), (amount, BudgetUnit::Usd), "{text}");
        }
        let e = Budget::parse("20000").unwrap_err();
        assert!(e.contains("has no unit; write \"20000 usd\""), "{e}");
        // A comma that is not a thousands separator is not silently dropped.
        assert!(Budget::parse("1,5 usd").is_err());
        for (text, amount) in [
            ("$20k", 20_000.0),
            ("20000", 20_000.0),
            ("20k usd", 20_000.0),
        ] {
            assert_eq!(parse_usd(text), Ok(amount), "{text}");
        }
        assert!(parse_usd("20k flops").is_err());
        assert!(parse_usd("-5").is_err());
    }

    #[test]
    fn parses_rewards_against_the_catalog() {
        let c = Catalog::embedded();
        assert_eq!(Reward::parse("rule", &c).unwrap().kind, RewardKind::Rule);
        let prm = Reward::parse("prm:qwen2.5-math-prm-7b", &c).unwrap();
        assert_eq!(prm.to_string(), "prm:qwen2.5-math-prm-7b");
        let err = Reward::parse("prm:qwen2.5-math-prm-7", &c).unwrap_err();
        assert!(err.contains("did you mean `qwen2.5-math-prm-7b`"), "{err}");
        assert!(Reward::parse("judge:qwen2.5-math-prm-7b", &c).is_err());
        assert!(
            Reward::parse("pmr:qwen2.5-7b", &c)
                .unwrap_err()
                .contains("prm")
        );
    }
}
