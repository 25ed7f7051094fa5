//! One post-training project priced as SFT, reward model + PPO, DPO and GRPO side by side, with
//! each stage's ratio to SFT and its generation share, and the flat per-token back-of-envelope
//! beside it (`rlfrontier compare`; the bundled example,
//! `grids/projects/seed-back-of-envelope.toml`, is the default).
//!
//! Why the answers differ from flat per-token pricing: a flat price charges a generated token
//! like a trained one, but decoding is memory-bound (each step rereads the weights for a few
//! hundred tokens), so generation costs more per token than training; and RL multiplies
//! generation by the rollouts per prompt and adds reference, old-policy, critic and reward passes
//! that a fixed multiplier only guesses.
//!
//! Every setting a project file does not give takes the same default as `cost` and grids
//! ([`crate::config`]): the response-length spread, the cap, the engine and run settings.

use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use super::reward_model_like;
use crate::catalog::{Catalog, ModelSpec};
use crate::config::{
    Algorithm, Finetune, Hardware, Levers, Reward, RewardKind, RunSettings, Stop, Task,
};
use crate::error::{Error, Result};
use crate::format::{Table, money, percent};
use crate::ledger::supervised::{Stage, SupervisedRun, evaluate_supervised};
use crate::ledger::{Bucket, Ledger, RunConfig, evaluate};
use crate::toml_text::toml_error;

/// The bundled example project.
pub const SEED_PROJECT: &str = include_str!("../../grids/projects/seed-back-of-envelope.toml");

/// Where the bundled example lives in the repository (used in messages about it).
pub const SEED_PROJECT_PATH: &str = "grids/projects/seed-back-of-envelope.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Project {
    name: String,
    model: String,
    #[serde(default = "full")]
    finetune: String,
    gpu: String,
    gpus: u64,
    usd_per_gpu_hour: Option<f64>,
    sft: SftStage,
    reward_model: PairStage,
    dpo: DpoStage,
    ppo: RlStage,
    grpo: RlStage,
    flat_pricing: Option<FlatPricing>,
}

fn full() -> String {
    "full".to_string()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SftStage {
    examples: f64,
    tokens_per_example: f64,
    epochs: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairStage {
    pairs: f64,
    tokens_per_pair: f64,
    epochs: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DpoStage {
    pairs: f64,
    tokens_per_pair: f64,
    epochs: u64,
    #[serde(default)]
    precomputed_reference: bool,
}

/// A project's PPO or GRPO stage. G is `group_size`, as everywhere else (a PPO stage written
/// with the budgeting note's `rollouts_per_prompt` is read the same).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RlStage {
    prompts: f64,
    #[serde(alias = "rollouts_per_prompt")]
    group_size: u64,
    prompt_tokens: f64,
    response_tokens: f64,
    prompts_per_step: u64,
    update_epochs: u64,
    max_response_len: Option<u64>,
    response_length_cv: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlatPricing {
    usd_per_1k_tokens: f64,
    rl_multiplier: f64,
}

/// One priced stage.
#[derive(Debug, Clone, PartialEq)]
pub struct StageCost {
    /// Name.
    pub name: String,
    /// GPU-hours.
    pub gpu_hours: f64,
    /// Dollars.
    pub usd: f64,
    /// FLOPs.
    pub flops: f64,
    /// Generation's share of dollars.
    pub generation_share: f64,
    /// The flat per-token back-of-envelope, where the project defines one.
    pub flat_usd: Option<f64>,
}

/// A project priced stage by stage; the first stage is SFT, the reference of the ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectCost {
    /// One line naming the project, model, cluster and price.
    pub header: String,
    /// The stages, SFT first.
    pub stages: Vec<StageCost>,
}

fn stage_of(name: &str, l: &Ledger, flat: Option<f64>) -> StageCost {
    StageCost {
        name: name.to_string(),
        gpu_hours: l.total_gpu_hours(),
        usd: l.total_usd(),
        flops: l.total_flops(),
        generation_share: l.usd_share(Bucket::Search),
        flat_usd: flat,
    }
}

/// `x` within `bound`, or an error naming the project file and field.
fn check_bound(path: &Path, field: &str, x: f64, bound: crate::bounds::Bound) -> Result<f64> {
    bound
        .check(x)
        .map_err(|m| Error::in_file(path, None, field, m))
}

/// Every count and size of the project within its physical range ([`crate::bounds`]); GRPO has
/// a group.
fn validate(p: &Project, path: &Path) -> Result<()> {
    use crate::bounds::{
        DATASET_ITEMS, GPUS, MULTIPLIER, SEQUENCE_TOKENS, USD_PER_1K_TOKENS, USD_PER_GPU_HOUR,
    };
    check_bound(path, "gpus", p.gpus as f64, GPUS)?;
    if let Some(usd) = p.usd_per_gpu_hour {
        check_bound(path, "usd_per_gpu_hour", usd, USD_PER_GPU_HOUR)?;
    }
    if let Some(flat) = &p.flat_pricing {
        check_bound(
            path,
            "flat_pricing.usd_per_1k_tokens",
            flat.usd_per_1k_tokens,
            USD_PER_1K_TOKENS,
        )?;
        check_bound(
            path,
            "flat_pricing.rl_multiplier",
            flat.rl_multiplier,
            MULTIPLIER,
        )?;
    }
    for (field, x) in [
        ("sft.examples", p.sft.examples),
        ("reward_model.pairs", p.reward_model.pairs),
        ("dpo.pairs", p.dpo.pairs),
        ("ppo.prompts", p.ppo.prompts),
        ("grpo.prompts", p.grpo.prompts),
    ] {
        check_bound(path, field, x, DATASET_ITEMS)?;
    }
    for (field, x) in [
        ("sft.tokens_per_example", p.sft.tokens_per_example),
        (
            "reward_model.tokens_per_pair",
            p.reward_model.tokens_per_pair,
        ),
        ("dpo.tokens_per_pair", p.dpo.tokens_per_pair),
        ("ppo.prompt_tokens", p.ppo.prompt_tokens),
        ("ppo.response_tokens", p.ppo.response_tokens),
        ("grpo.prompt_tokens", p.grpo.prompt_tokens),
        ("grpo.response_tokens", p.grpo.response_tokens),
    ] {
        check_bound(path, field, x, SEQUENCE_TOKENS)?;
    }
    for (field, x) in [
        ("ppo.response_length_cv", p.ppo.response_length_cv),
        ("grpo.response_length_cv", p.grpo.response_length_cv),
    ] {
        if let Some(x) = x
            && !(x.is_finite() && x > 0.0 && x <= 10.0)
        {
            return Err(Error::in_file(
                path,
                None,
                field,
                format!("{x} is not a coefficient of variation; use a number in (0, 10]"),
            ));
        }
    }
    validate_counts(p, path)
}

/// The project's epochs, group sizes, batch sizes and caps: whole numbers in the levers' range.
fn validate_counts(p: &Project, path: &Path) -> Result<()> {
    for (field, x) in [
        ("sft.epochs", p.sft.epochs),
        ("reward_model.epochs", p.reward_model.epochs),
        ("dpo.epochs", p.dpo.epochs),
        ("ppo.group_size", p.ppo.group_size),
        ("ppo.prompts_per_step", p.ppo.prompts_per_step),
        ("ppo.update_epochs", p.ppo.update_epochs),
        ("ppo.max_response_len", p.ppo.max_response_len.unwrap_or(1)),
        ("grpo.prompts_per_step", p.grpo.prompts_per_step),
        ("grpo.update_epochs", p.grpo.update_epochs),
        (
            "grpo.max_response_len",
            p.grpo.max_response_len.unwrap_or(1),
        ),
    ] {
        if x == 0 || x > crate::config::MAX_LEVER as u64 {
            return Err(Error::in_file(
                path,
                None,
                field,
                format!("{x} must be a whole number from 1 to 100,000,000"),
            ));
        }
    }
    if !(2..=crate::config::MAX_LEVER as u64).contains(&p.grpo.group_size) {
        return Err(Error::in_file(
            path,
            None,
            "grpo.group_size",
            "GRPO needs 2 to 100,000,000 responses per prompt",
        ));
    }
    Ok(())
}

/// The project's RL stages: PPO with a reward model like the policy, GRPO with a rule reward.
fn rl_ledgers(
    p: &Project,
    policy: &ModelSpec,
    rm_model: &ModelSpec,
    finetune: Finetune,
    hardware: &Hardware,
) -> [Ledger; 2] {
    let orm = Reward {
        kind: RewardKind::Orm,
        model: Some(rm_model.clone()),
    };
    let rule = Reward {
        kind: RewardKind::Rule,
        model: None,
    };
    let ppo = rl_ledger(
        policy,
        finetune,
        hardware,
        &RlShape {
            algorithm: Algorithm::Ppo,
            reward: &orm,
            prompts: p.ppo.prompts,
            group_size: p.ppo.group_size,
            prompt_tokens: p.ppo.prompt_tokens,
            response_tokens: p.ppo.response_tokens,
            prompts_per_step: p.ppo.prompts_per_step,
            update_epochs: p.ppo.update_epochs,
            max_response_len: p.ppo.max_response_len,
            response_length_cv: p.ppo.response_length_cv,
        },
    );
    let grpo = rl_ledger(
        policy,
        finetune,
        hardware,
        &RlShape {
            algorithm: Algorithm::Grpo,
            reward: &rule,
            prompts: p.grpo.prompts,
            group_size: p.grpo.group_size,
            prompt_tokens: p.grpo.prompt_tokens,
            response_tokens: p.grpo.response_tokens,
            prompts_per_step: p.grpo.prompts_per_step,
            update_epochs: p.grpo.update_epochs,
            max_response_len: p.grpo.max_response_len,
            response_length_cv: p.grpo.response_length_cv,
        },
    );
    [ppo, grpo]
}

/// SFT, reward-model and DPO ledgers of the project, on the same cluster and settings.
fn supervised_ledgers(
    p: &Project,
    policy: &ModelSpec,
    rm_model: &ModelSpec,
    finetune: Finetune,
    hardware: &Hardware,
) -> [Ledger; 3] {
    let run = RunSettings::default();
    let supervised = |stage, model: &ModelSpec, examples, tokens, epochs| {
        evaluate_supervised(&SupervisedRun {
            stage,
            model,
            finetune,
            examples,
            tokens_per_sequence: tokens,
            epochs,
            hardware,
            run: &run,
        })
    };
    [
        supervised(
            Stage::Sft,
            policy,
            p.sft.examples,
            p.sft.tokens_per_example,
            p.sft.epochs,
        ),
        supervised(
            Stage::RewardModel,
            rm_model,
            p.reward_model.pairs,
            p.reward_model.tokens_per_pair,
            p.reward_model.epochs,
        ),
        supervised(
            Stage::Dpo {
                precomputed_reference: p.dpo.precomputed_reference,
            },
            policy,
            p.dpo.pairs,
            p.dpo.tokens_per_pair,
            p.dpo.epochs,
        ),
    ]
}

/// The shape of one RL stage of a project.
struct RlShape<'a> {
    algorithm: Algorithm,
    reward: &'a Reward,
    prompts: f64,
    group_size: u64,
    prompt_tokens: f64,
    response_tokens: f64,
    prompts_per_step: u64,
    update_epochs: u64,
    max_response_len: Option<u64>,
    response_length_cv: Option<f64>,
}

/// One RL stage's ledger: `prompts / prompts_per_step` iterations, every unstated setting at
/// its default.
fn rl_ledger(policy: &ModelSpec, finetune: Finetune, hardware: &Hardware, s: &RlShape) -> Ledger {
    let defaults = Task::default();
    let task = Task {
        prompt_tokens: s.prompt_tokens,
        mean_response_tokens: s.response_tokens,
        response_length_cv: s.response_length_cv.unwrap_or(defaults.response_length_cv),
        ..defaults
    };
    let run = RunSettings {
        algorithm: s.algorithm,
        ..RunSettings::default()
    };
    evaluate(&RunConfig {
        policy,
        finetune,
        reward: s.reward,
        group_size: s.group_size,
        max_response_len: s
            .max_response_len
            .unwrap_or(Levers::default().max_response_len),
        update_epochs: s.update_epochs,
        prompts_per_step: s.prompts_per_step,
        stop: Stop::Iterations((s.prompts / s.prompts_per_step as f64).ceil() as u64),
        hardware,
        task: &task,
        run: &run,
        measured_base_score: None,
        ability_score: None,
    })
}

/// Reads and prices a project file (`text` is its content, `path` names it in errors).
pub fn price(text: &str, path: &Path, catalog: &Catalog) -> Result<ProjectCost> {
    let p: Project = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    let policy = catalog
        .model(&p.model)
        .map_err(|m| Error::in_file(path, None, "model", m))?
        .clone();
    let finetune =
        Finetune::parse(&p.finetune).map_err(|m| Error::in_file(path, None, "finetune", m))?;
    let gpu = catalog
        .gpu(&p.gpu)
        .map_err(|m| Error::in_file(path, None, "gpu", m))?
        .clone();
    validate(&p, path)?;
    let mut hardware = Hardware::new(
        gpu,
        p.gpus,
        catalog.default_engine().clone(),
        crate::config::DEFAULT_FRAMEWORK,
    );
    if let Some(x) = p.usd_per_gpu_hour {
        hardware.usd_per_gpu_hour = x;
    }
    let rm_model = reward_model_like(&policy);
    let [sft, rm, dpo] = supervised_ledgers(&p, &policy, &rm_model, finetune, &hardware);
    let [ppo, grpo] = rl_ledgers(&p, &policy, &rm_model, finetune, &hardware);
    for (stage, l) in [
        ("SFT", &sft),
        ("reward model", &rm),
        ("DPO", &dpo),
        ("PPO", &ppo),
        ("GRPO", &grpo),
    ] {
        if let Some(reason) = l.infeasible {
            return Err(Error::in_file(
                path,
                None,
                stage,
                format!("infeasible: {reason}"),
            ));
        }
    }
    let header = format!(
        "project `{}`: {} ({}) on {} x {} at ${}/GPU-hour",
        p.name,
        policy.id,
        finetune,
        hardware.gpus,
        hardware.gpu.id,
        money(hardware.usd_per_gpu_hour)
    );
    let stages = stage_table(&p, [&sft, &rm, &ppo, &dpo, &grpo]);
    Ok(ProjectCost { header, stages })
}

/// The rows: SFT, RM, PPO, RM + PPO, DPO, GRPO, with the flat per-token estimate where the
/// project gives one (PPO's multiplied by its `rl_multiplier`).
fn stage_table(p: &Project, [sft, rm, ppo, dpo, grpo]: [&Ledger; 5]) -> Vec<StageCost> {
    let flat = p.flat_pricing.as_ref();
    let rate = |tokens: f64| flat.map(|f| tokens / 1000.0 * f.usd_per_1k_tokens);
    let flat_sft = rate(p.sft.examples * p.sft.tokens_per_example);
    let flat_rm = rate(p.reward_model.pairs * p.reward_model.tokens_per_pair * 2.0);
    let flat_ppo = rate(p.ppo.prompts * p.ppo.group_size as f64 * p.ppo.response_tokens)
        .map(|x| x * flat.map(|f| f.rl_multiplier).unwrap_or(1.0));
    vec![
        stage_of("SFT", sft, flat_sft),
        stage_of("reward model", rm, flat_rm),
        stage_of("PPO (with that reward model)", ppo, flat_ppo),
        StageCost {
            name: "RM + PPO".to_string(),
            gpu_hours: rm.total_gpu_hours() + ppo.total_gpu_hours(),
            usd: rm.total_usd() + ppo.total_usd(),
            flops: rm.total_flops() + ppo.total_flops(),
            generation_share: (ppo.usd(Bucket::Search))
                / (rm.total_usd() + ppo.total_usd()).max(1e-300),
            flat_usd: flat_rm.zip(flat_ppo).map(|(a, b)| a + b),
        },
        stage_of("DPO", dpo, None),
        stage_of(
            &format!("GRPO (G = {}, rule reward)", p.grpo.group_size),
            grpo,
            None,
        ),
    ]
}

impl ProjectCost {
    /// The JSON form (`compare --json`).
    pub fn to_json(&self) -> serde_json::Value {
        let sft = self.stages[0].usd;
        let flat_sft = self.stages[0].flat_usd;
        json!({
            "project": self.header,
            "stages": self.stages.iter().map(|s| json!({
                "stage": s.name, "flops": s.flops, "gpu_hours": s.gpu_hours, "usd": s.usd, "ratio_to_sft": s.usd / sft,
                "generation_share_of_usd": s.generation_share, "flat_pricing_usd": s.flat_usd,
                "flat_ratio_to_sft": s.flat_usd.zip(flat_sft).map(|(a, b)| a / b),
            })).collect::<Vec<_>>(),
        })
    }

    /// The table `compare` prints, with the sentence that explains the difference.
    pub fn to_text(&self) -> String {
        let sft = self.stages[0].usd;
        let flat_sft = self.stages[0].flat_usd;
        let mut table = Table::new([
            "stage",
            "GPU-hours",
            "USD",
            "x SFT",
            "generation share",
            "flat-pricing USD",
            "flat x SFT",
        ]);
        for s in &self.stages {
            table.row([
                s.name.clone(),
                money(s.gpu_hours),
                money(s.usd),
                format!("{:.1}", s.usd / sft),
                percent(s.generation_share),
                s.flat_usd.map(money).unwrap_or_else(|| "-".to_string()),
                s.flat_usd
                    .zip(flat_sft)
                    .map(|(a, b)| format!("{:.1}", a / b))
                    .unwrap_or_else(|| "-".to_string()),
            ]);
        }
        let mut text = format!("{}\n{}", self.header, table.render());
        text.push_str(
            "\nWhy the two answers differ: flat pricing charges a generated token like a trained one, but decoding is\n\
             memory-bound (each step rereads the weights to emit a few hundred tokens), so a generated token costs\n\
             several trained ones; RL also multiplies generation by the rollouts per prompt and adds reference,\n\
             old-policy, critic and reward-model passes that a fixed multiplier only guesses at.\n",
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_is_group_size_in_both_rl_stages_and_the_note_s_name_still_reads() {
        // One name for G (issue 52): `group_size`, as in grids and flags; a PPO stage written
        // with the budgeting note's `rollouts_per_prompt` prices the same.
        let catalog = Catalog::embedded();
        let path = Path::new("project.toml");
        let seed = include_str!("../../grids/projects/seed-back-of-envelope.toml");
        assert!(seed.contains("rollouts_per_prompt = 4"));
        let renamed = seed.replace("rollouts_per_prompt = 4", "group_size = 4");
        let a = price(seed, path, &catalog).unwrap();
        let b = price(&renamed, path, &catalog).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
