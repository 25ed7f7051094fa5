//! `rlfrontier compare [PROJECT.toml]`: one post-training project priced as SFT, reward model +
//! PPO, DPO and GRPO side by side, with each stage's ratio to SFT and its generation share, and
//! the flat per-token back-of-envelope beside it (the bundled example,
//! `grids/projects/seed-back-of-envelope.toml`, is the default).
//!
//! Why the answers differ from flat per-token pricing: a flat price charges a generated token
//! like a trained one, but decoding is memory-bound (each step rereads the weights for a few
//! hundred tokens), so generation costs more per token than training; and RL multiplies
//! generation by the rollouts per prompt and adds reference, old-policy, critic and reward passes
//! that a fixed multiplier only guesses.

use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use crate::catalog::toml_error;
use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use crate::format::{Table, money, percent};
use crate::ledger::supervised::{Stage, SupervisedRun, evaluate_supervised};
use crate::ledger::{Bucket, Ledger, RunConfig, evaluate};
use crate::spec::{
    Algorithm, Finetune, Hardware, OldLogprob, Reward, RewardKind, RunSettings, Schedule, Stop,
    Task,
};

use super::cost::reward_model_like;

/// The bundled example project.
pub const SEED_PROJECT: &str = include_str!("../../grids/projects/seed-back-of-envelope.toml");

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
    grpo: GrpoStage,
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RlStage {
    prompts: f64,
    rollouts_per_prompt: u64,
    prompt_tokens: f64,
    response_tokens: f64,
    prompts_per_step: u64,
    update_epochs: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrpoStage {
    prompts: f64,
    group_size: u64,
    prompt_tokens: f64,
    response_tokens: f64,
    prompts_per_step: u64,
    update_epochs: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlatPricing {
    usd_per_1k_tokens: f64,
    rl_multiplier: f64,
}

/// One priced stage.
pub struct StageCost {
    /// Name.
    pub name: String,
    /// Its ledger (the sum of two for RM + PPO is reported through the fields below).
    pub gpu_hours: f64,
    /// Dollars.
    pub usd: f64,
    /// FLOPs.
    pub flops: f64,
    /// Generation's share of dollars.
    pub generation_share: f64,
    /// The flat per-token back-of-envelope, where the seed defines one.
    pub flat_usd: Option<f64>,
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

fn check_positive(path: &Path, field: &str, x: f64) -> Result<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(Error::in_file(
            path,
            None,
            field,
            format!("{x} must be a positive, finite number"),
        ))
    }
}

/// Prices the project.
pub fn price(
    text: &str,
    path: &Path,
    catalog: &crate::catalog::Catalog,
) -> Result<(String, Vec<StageCost>)> {
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
    if p.gpus == 0 {
        return Err(Error::in_file(path, None, "gpus", "must be at least 1"));
    }
    for (field, x) in [
        ("sft.examples", p.sft.examples),
        ("sft.tokens_per_example", p.sft.tokens_per_example),
        ("reward_model.pairs", p.reward_model.pairs),
        (
            "reward_model.tokens_per_pair",
            p.reward_model.tokens_per_pair,
        ),
        ("dpo.pairs", p.dpo.pairs),
        ("dpo.tokens_per_pair", p.dpo.tokens_per_pair),
        ("ppo.prompts", p.ppo.prompts),
        ("ppo.prompt_tokens", p.ppo.prompt_tokens),
        ("ppo.response_tokens", p.ppo.response_tokens),
        ("grpo.prompts", p.grpo.prompts),
        ("grpo.prompt_tokens", p.grpo.prompt_tokens),
        ("grpo.response_tokens", p.grpo.response_tokens),
    ] {
        check_positive(path, field, x)?;
    }
    for (field, x) in [
        ("sft.epochs", p.sft.epochs),
        ("reward_model.epochs", p.reward_model.epochs),
        ("dpo.epochs", p.dpo.epochs),
        ("ppo.rollouts_per_prompt", p.ppo.rollouts_per_prompt),
        ("ppo.prompts_per_step", p.ppo.prompts_per_step),
        ("ppo.update_epochs", p.ppo.update_epochs),
        ("grpo.prompts_per_step", p.grpo.prompts_per_step),
        ("grpo.update_epochs", p.grpo.update_epochs),
    ] {
        if x == 0 {
            return Err(Error::in_file(path, None, field, "must be at least 1"));
        }
    }
    if p.grpo.group_size < 2 {
        return Err(Error::in_file(
            path,
            None,
            "grpo.group_size",
            "GRPO needs at least 2 responses per prompt",
        ));
    }
    let hardware = Hardware {
        usd_per_gpu_hour: match p.usd_per_gpu_hour {
            Some(x) => check_positive(path, "usd_per_gpu_hour", x)?,
            None => gpu.usd_per_gpu_hour,
        },
        gpu,
        gpus: p.gpus,
        schedule: Schedule::Colocated,
        async_rollout_fraction: 0.5,
        rollout_gpu_memory_utilization: 0.6,
        max_num_seqs: 256,
        usable_memory_fraction: 0.9,
    };
    let settings = |algorithm| RunSettings {
        algorithm,
        kl_reference: true,
        kl_coef: 0.001,
        prefix_cache: true,
        dynamic_sampling: false,
        old_logprob: OldLogprob::Auto,
        gradient_checkpointing: true,
        step_overhead_seconds: 5.0,
        max_tokens_per_gpu: 16384.0,
        judge_rubric_tokens: 512.0,
        judge_verdict_tokens: 64.0,
        critic: None,
    };
    let supervised_settings = settings(Algorithm::Grpo);
    let supervised = |stage, model: &crate::catalog::ModelSpec, examples, tokens, epochs| {
        evaluate_supervised(&SupervisedRun {
            stage,
            model,
            finetune,
            examples,
            tokens_per_sequence: tokens,
            epochs,
            hardware: &hardware,
            run: &supervised_settings,
        })
    };
    let rm_model = reward_model_like(&policy);
    let sft = supervised(
        Stage::Sft,
        &policy,
        p.sft.examples,
        p.sft.tokens_per_example,
        p.sft.epochs,
    );
    let rm = supervised(
        Stage::RewardModel,
        &rm_model,
        p.reward_model.pairs,
        p.reward_model.tokens_per_pair,
        p.reward_model.epochs,
    );
    let dpo = supervised(
        Stage::Dpo {
            precomputed_reference: p.dpo.precomputed_reference,
        },
        &policy,
        p.dpo.pairs,
        p.dpo.tokens_per_pair,
        p.dpo.epochs,
    );
    let rl = |algorithm,
              reward: &Reward,
              prompts: f64,
              g: u64,
              prompt_tokens: f64,
              response_tokens: f64,
              per_step: u64,
              epochs: u64| {
        let task = Task {
            prompt_tokens,
            mean_response_tokens: response_tokens,
            response_length_cv: 0.3,
            pass_rate_mean: 0.35,
            pass_rate_concentration: 2.0,
        };
        let run = settings(algorithm);
        evaluate(&RunConfig {
            policy: &policy,
            finetune,
            reward,
            group_size: g,
            max_response_len: (4.0 * response_tokens).ceil() as u64,
            update_epochs: epochs,
            prompts_per_step: per_step,
            stop: Stop::Iterations((prompts / per_step as f64).ceil() as u64),
            hardware: &hardware,
            task: &task,
            run: &run,
        })
    };
    let orm = Reward {
        kind: RewardKind::Orm,
        model: Some(rm_model.clone()),
    };
    let rule = Reward {
        kind: RewardKind::Rule,
        model: None,
    };
    let ppo = rl(
        Algorithm::Ppo,
        &orm,
        p.ppo.prompts,
        p.ppo.rollouts_per_prompt,
        p.ppo.prompt_tokens,
        p.ppo.response_tokens,
        p.ppo.prompts_per_step,
        p.ppo.update_epochs,
    );
    let grpo = rl(
        Algorithm::Grpo,
        &rule,
        p.grpo.prompts,
        p.grpo.group_size,
        p.grpo.prompt_tokens,
        p.grpo.response_tokens,
        p.grpo.prompts_per_step,
        p.grpo.update_epochs,
    );
    let flat = p.flat_pricing.as_ref();
    let rate = |tokens: f64| flat.map(|f| tokens / 1000.0 * f.usd_per_1k_tokens);
    let flat_sft = rate(p.sft.examples * p.sft.tokens_per_example);
    let flat_rm = rate(p.reward_model.pairs * p.reward_model.tokens_per_pair * 2.0);
    let flat_ppo = rate(p.ppo.prompts * p.ppo.rollouts_per_prompt as f64 * p.ppo.response_tokens)
        .map(|x| x * flat.map(|f| f.rl_multiplier).unwrap_or(1.0));
    let mut stages = vec![
        stage_of("SFT", &sft, flat_sft),
        stage_of("reward model", &rm, flat_rm),
        stage_of("PPO (with that reward model)", &ppo, flat_ppo),
    ];
    stages.push(StageCost {
        name: "RM + PPO".to_string(),
        gpu_hours: rm.total_gpu_hours() + ppo.total_gpu_hours(),
        usd: rm.total_usd() + ppo.total_usd(),
        flops: rm.total_flops() + ppo.total_flops(),
        generation_share: (ppo.usd(Bucket::Search))
            / (rm.total_usd() + ppo.total_usd()).max(1e-300),
        flat_usd: flat_rm.zip(flat_ppo).map(|(a, b)| a + b),
    });
    stages.push(stage_of("DPO", &dpo, None));
    stages.push(stage_of(
        &format!("GRPO (G = {}, rule reward)", p.grpo.group_size),
        &grpo,
        None,
    ));
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
    Ok((header, stages))
}

/// Prints the comparison.
pub fn run(args: &CompareArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let (text, path) = match &args.project {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?,
            p.clone(),
        ),
        None => (
            SEED_PROJECT.to_string(),
            Path::new("grids/projects/seed-back-of-envelope.toml").to_path_buf(),
        ),
    };
    let (header, stages) = price(&text, &path, &catalog)?;
    let sft = stages[0].usd;
    let flat_sft = stages[0].flat_usd;
    if args.json {
        let v = json!({
            "project": header,
            "stages": stages.iter().map(|s| json!({
                "stage": s.name, "flops": s.flops, "gpu_hours": s.gpu_hours, "usd": s.usd, "ratio_to_sft": s.usd / sft,
                "generation_share_of_usd": s.generation_share, "flat_pricing_usd": s.flat_usd,
                "flat_ratio_to_sft": s.flat_usd.zip(flat_sft).map(|(a, b)| a / b),
            })).collect::<Vec<_>>(),
        });
        let mut t = serde_json::to_string_pretty(&v).expect("json");
        t.push('\n');
        return super::emit(out, &t);
    }
    let mut table = Table::new([
        "stage",
        "GPU-hours",
        "USD",
        "x SFT",
        "generation share",
        "flat-pricing USD",
        "flat x SFT",
    ]);
    for s in &stages {
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
    let mut text = format!("{header}\n{}", table.render());
    text.push_str(
        "\nWhy the two answers differ: flat pricing charges a generated token like a trained one, but decoding is\n\
         memory-bound (each step rereads the weights to emit a few hundred tokens), so a generated token costs\n\
         several trained ones; RL also multiplies generation by the rollouts per prompt and adds reference,\n\
         old-policy, critic and reward-model passes that a fixed multiplier only guesses at.\n",
    );
    super::emit(out, &text)
}
