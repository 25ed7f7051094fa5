//! One run priced: the single-run cost calculator behind `cost`, `compare` and `calibrate-hw`.
//!
//! A [`RunRequest`] is a validated description of one training stage (RL, SFT, reward-model
//! training or DPO) on one cluster; [`price`] turns it into a [`CostReport`]: the ledger, the
//! waste with the lever that removes each line ([`waste`]), the cost per point of improvement,
//! where to run it ([`ownership`]) and a one-line verdict. [`compare`] prices a whole project
//! stage by stage, and [`hardware_fit`] fits a GPU profile's efficiencies to one measured step.
//! Nothing here knows about command-line flags: the binary (or any other front end) builds the
//! request and renders the report ([`render`]: text for people, JSON for programs).

pub mod cell;
pub mod compare;
pub mod hardware_fit;
pub mod logs;
#[cfg(feature = "research")]
pub mod loso;
pub mod ownership;
pub mod render;
pub mod schedule;
#[cfg(feature = "research")]
pub mod transfer;
#[cfg(feature = "research")]
pub mod validation;
pub mod waste;

use std::fmt;

use crate::catalog::{Catalog, ModelSpec};
use crate::config::{
    Algorithm, Finetune, Hardware, Levers, Ownership, Reward, RunSettings, Stop, Task,
};
use crate::ledger::supervised::{Stage, SupervisedRun, evaluate_supervised};
use crate::ledger::{Ledger, RunConfig, evaluate};
use crate::outcome::{CellSignal, OutcomeParams, predict};

pub use ownership::PaymentOption;
pub use waste::WasteLine;

/// Which training stage is priced: an RL algorithm, or one of the supervised stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PricedStage {
    /// GRPO or PPO.
    Rl(Algorithm),
    /// Supervised fine-tuning.
    Sft,
    /// Reward-model training on preference pairs.
    RewardModel,
    /// Direct preference optimisation.
    Dpo,
}

impl PricedStage {
    /// Every stage, in the order the help lists them.
    pub const ALL: [PricedStage; 5] = [
        PricedStage::Rl(Algorithm::Grpo),
        PricedStage::Rl(Algorithm::Ppo),
        PricedStage::Sft,
        PricedStage::RewardModel,
        PricedStage::Dpo,
    ];

    /// The lowercase name users write: `grpo`, `ppo`, `sft`, `rm` or `dpo`.
    pub fn as_str(self) -> &'static str {
        match self {
            PricedStage::Rl(algorithm) => algorithm.as_str(),
            PricedStage::Sft => "sft",
            PricedStage::RewardModel => "rm",
            PricedStage::Dpo => "dpo",
        }
    }

    /// Whether the stage is RL (it generates rollouts).
    pub fn is_rl(self) -> bool {
        matches!(self, PricedStage::Rl(_))
    }

    /// The name printed in reports.
    pub fn label(self) -> &'static str {
        match self {
            PricedStage::Rl(Algorithm::Grpo) => "GRPO",
            PricedStage::Rl(Algorithm::Ppo) => "PPO",
            PricedStage::Sft => "SFT",
            PricedStage::RewardModel => "Reward-model training",
            PricedStage::Dpo => "DPO",
        }
    }
}

impl std::str::FromStr for PricedStage {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        PricedStage::ALL
            .into_iter()
            .find(|stage| stage.as_str() == text)
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a stage; {}",
                    crate::error::suggestion(text, PricedStage::ALL.map(PricedStage::as_str))
                )
            })
    }
}

impl fmt::Display for PricedStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The data of a supervised stage (SFT, reward model, DPO).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SupervisedData {
    /// SFT demonstrations.
    pub examples: f64,
    /// Tokens per demonstration.
    pub tokens_per_example: f64,
    /// Preference pairs (RM, DPO).
    pub pairs: f64,
    /// Tokens per sequence of a pair.
    pub tokens_per_pair: f64,
    /// Epochs over the data.
    pub epochs: u64,
    /// DPO: reference log-probs computed once before training.
    pub precomputed_reference: bool,
}

/// Everything one run is priced from, validated.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The stage.
    pub stage: PricedStage,
    /// The policy.
    pub policy: ModelSpec,
    /// Reward (RL), or the reward model trained (RM).
    pub reward: Reward,
    /// Fine-tuning mode.
    pub finetune: Finetune,
    /// The cluster.
    pub hardware: Hardware,
    /// The task.
    pub task: Task,
    /// Run settings.
    pub run: RunSettings,
    /// RL levers: B, G, cap, epochs.
    pub levers: Levers,
    /// Budget or steps (RL); epochs as iterations (supervised).
    pub stop: Stop,
    /// Data of a supervised stage.
    pub supervised: SupervisedData,
    /// Own-cluster economics.
    pub ownership: Ownership,
    /// Points of improvement given by the user, instead of the outcome prior's prediction.
    pub gain_points: Option<f64>,
    /// The policy's measured score on the target metric before RL (0–1), when known.
    pub base_score: Option<f64>,
    /// The catalog (for services).
    pub catalog: Catalog,
    /// The response cap raised in stages within the run (RL; empty: `levers.max_response_len`
    /// throughout): the segments replace the cap, and their steps the stop's iterations.
    pub cap_schedule: Vec<schedule::CapSegment>,
}

/// A reward model of the policy's shape: the backbone without the LM head and a scalar head.
pub fn reward_model_like(policy: &ModelSpec) -> ModelSpec {
    let mut rm = policy.clone();
    rm.id = format!("{}-rm", policy.id);
    rm.name = format!("{} (reward model)", policy.name);
    rm.lm_head = false;
    rm.score_head_params = policy.hidden + 1;
    rm.published_params = rm.total_params();
    rm.published_params_tolerance = 0;
    rm
}

impl RunRequest {
    /// The MATH-500 score published for the policy's checkpoint (`catalog::base_score`), the
    /// benchmark the prior predicts for `cost`: the base when none is given.
    pub fn published_base_score(&self) -> Option<f64> {
        crate::catalog::base_score::published(&self.policy.id, "math500").map(|b| b.published.score)
    }

    /// The RL run configuration of the request.
    pub fn rl_config(&self) -> RunConfig<'_> {
        RunConfig {
            policy: &self.policy,
            finetune: self.finetune,
            reward: &self.reward,
            group_size: self.levers.group_size,
            max_response_len: self.levers.max_response_len,
            update_epochs: self.levers.update_epochs,
            prompts_per_step: self.levers.prompts_per_step,
            stop: self.stop,
            hardware: &self.hardware,
            task: &self.task,
            run: &self.run,
            measured_base_score: self.base_score.or_else(|| self.published_base_score()),
            ability_score: None,
        }
    }

    /// The ledger of the requested stage.
    pub fn ledger(&self) -> Ledger {
        let data = &self.supervised;
        let supervised = |stage: Stage, model: &ModelSpec, examples: f64, tokens: f64| {
            evaluate_supervised(&SupervisedRun {
                stage,
                model,
                finetune: self.finetune,
                examples,
                tokens_per_sequence: tokens,
                epochs: data.epochs,
                hardware: &self.hardware,
                run: &self.run,
            })
        };
        match self.stage {
            PricedStage::Rl(_) if !self.cap_schedule.is_empty() => {
                schedule::run_of(&schedule::price_segments(self, &self.cap_schedule))
            }
            PricedStage::Rl(_) => evaluate(&self.rl_config()),
            PricedStage::Sft => supervised(
                Stage::Sft,
                &self.policy,
                data.examples,
                data.tokens_per_example,
            ),
            PricedStage::RewardModel => supervised(
                Stage::RewardModel,
                self.reward
                    .model
                    .as_ref()
                    .expect("a reward-model request names its model"),
                data.pairs,
                data.tokens_per_pair,
            ),
            PricedStage::Dpo => supervised(
                Stage::Dpo {
                    precomputed_reference: data.precomputed_reference,
                },
                &self.policy,
                data.pairs,
                data.tokens_per_pair,
            ),
        }
    }
}

/// Points of improvement a run buys, and where the number comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedGain {
    /// Percentage points on the target benchmark.
    pub points: f64,
    /// Where the number comes from: `--gain`, or the outcome prior from the measured base score
    /// or from its own guess of it.
    pub basis: &'static str,
}

/// The user's gain, or the outcome prior's prediction for an RL run that can run.
pub fn expected_gain(request: &RunRequest, ledger: &Ledger) -> Option<ExpectedGain> {
    if let Some(points) = request.gain_points {
        return Some(ExpectedGain {
            points,
            basis: "given by ⟨gain⟩",
        });
    }
    if !request.stage.is_rl() || !ledger.feasible() {
        return None;
    }
    let config = request.rl_config();
    let p = predict(&OutcomeParams::default(), &CellSignal::of(&config, ledger));
    Some(ExpectedGain {
        points: 100.0 * (p.score - p.base_score),
        basis: if request.base_score.is_some() {
            "predicted by the outcome prior (uncalibrated) from the measured base score"
        } else if request.published_base_score().is_some() {
            "predicted by the outcome prior (uncalibrated) from the checkpoint's published MATH-500 score (catalog/base_scores.toml); give ⟨base_score⟩ for your own evaluation"
        } else {
            "predicted by the outcome prior (uncalibrated) from its own base-score guess; give ⟨base_score⟩"
        },
    })
}

/// One run priced: the ledger and everything said about it.
#[derive(Debug, Clone)]
pub struct CostReport {
    /// The ledger.
    pub ledger: Ledger,
    /// Waste lines (empty for supervised stages).
    pub waste: Vec<WasteLine>,
    /// Points of improvement, when known.
    pub gain: Option<ExpectedGain>,
    /// Where to run it.
    pub options: Vec<PaymentOption>,
    /// Break-even of owning against renting, when ownership economics were given.
    pub break_even: Option<String>,
    /// The one-line verdict.
    pub verdict: String,
    /// The run at half and at twice the mean response length (RL stages only): the length is
    /// the most sensitive input and the least known before a pilot. Under a budget the dollars
    /// are fixed and the length moves the steps the budget buys; for a number of steps it moves
    /// the dollars.
    pub length_band: Option<(AtLength, AtLength)>,
    /// How far to trust the price (RL stages only): a 90% interval on the step's seconds from
    /// the ledger's out-of-sample error on published timings (`ledger::accuracy`).
    pub price_interval: Option<crate::ledger::accuracy::PriceInterval>,
    /// What the run pays beyond its steps (RL stages only): start-up, validation, checkpoints
    /// (`ledger::whole_run`), already in the ledger's totals.
    pub run_events: Vec<crate::ledger::whole_run::RunEvent>,
    /// The cap schedule's segments, each priced (empty without one).
    pub segments: Vec<schedule::PricedSegment>,
}

/// The run at another mean response length: its dollars, steps and wall-clock hours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtLength {
    /// Dollars of the run.
    pub usd: f64,
    /// Iterations (what a budget buys; the given number otherwise).
    pub iterations: u64,
    /// Wall-clock hours.
    pub wall_hours: f64,
}

impl CostReport {
    /// The first of the run's totals (dollars, GPU-hours, wall-clock hours, FLOPs) that is not a
    /// finite number, with its value: an input far outside any physical range overflowed the
    /// ledger. None when every total is finite (an infeasible run's zeros included).
    pub fn non_finite_total(&self) -> Option<(&'static str, f64)> {
        let ledger = &self.ledger;
        [
            ("dollars", ledger.total_usd()),
            ("GPU-hours", ledger.total_gpu_hours()),
            ("wall-clock hours", ledger.wall_hours()),
            ("FLOPs", ledger.total_flops()),
        ]
        .into_iter()
        .find(|(_, x)| !x.is_finite())
    }
}

/// The factor the length sensitivity moves the mean response length by, each way: base-model
/// "zero" runs average well under half the cap, reasoning models near or above it, and lengths
/// drift during training, so a factor of two is a plausible band before a pilot measures it.
pub const LENGTH_BAND_FACTOR: f64 = 2.0;

/// Prices one run.
pub fn price(request: &RunRequest) -> CostReport {
    // A cap schedule's segments are priced once, for the run's ledger and for their lines.
    let segments = match request.stage {
        PricedStage::Rl(_) if !request.cap_schedule.is_empty() => {
            schedule::price_segments(request, &request.cap_schedule)
        }
        _ => Vec::new(),
    };
    let ledger = match segments.is_empty() {
        true => request.ledger(),
        false => schedule::run_of(&segments),
    };
    let waste = waste::waste_lines(&ledger, request);
    let gain = expected_gain(request, &ledger);
    let (options, break_even) = ownership::buy_or_build(&ledger, request);
    let verdict = render::verdict(&ledger, request, &waste);
    let length_band = match request.stage {
        PricedStage::Rl(_) => {
            let at = |factor: f64| {
                let mut scaled = request.clone();
                scaled.task.mean_response_tokens *= factor;
                scaled.task.mean_response_tokens_end =
                    scaled.task.mean_response_tokens_end.map(|end| end * factor);
                for segment in &mut scaled.cap_schedule {
                    segment.uncapped_mean_response_tokens = segment
                        .uncapped_mean_response_tokens
                        .map(|mean| mean * factor);
                }
                let ledger = scaled.ledger();
                AtLength {
                    usd: ledger.total_usd(),
                    iterations: ledger.iterations,
                    wall_hours: ledger.wall_hours(),
                }
            };
            Some((at(1.0 / LENGTH_BAND_FACTOR), at(LENGTH_BAND_FACTOR)))
        }
        _ => None,
    };
    let price_interval = match request.stage {
        PricedStage::Rl(algorithm) => {
            crate::ledger::accuracy::bundled_interval(&crate::ledger::accuracy::tags(
                &request.hardware.engine.id,
                &request.hardware.gpu.id,
                request.policy.is_moe(),
                request.levers.max_response_len as f64,
                algorithm,
                matches!(request.finetune, Finetune::Lora(_)),
                request.hardware.schedule,
            ))
        }
        _ => None,
    };
    let run_events = match request.stage {
        PricedStage::Rl(_) => crate::ledger::whole_run::run_events(&request.rl_config(), &ledger),
        _ => Vec::new(),
    };
    CostReport {
        ledger,
        waste,
        gain,
        options,
        break_even,
        verdict,
        length_band,
        price_interval,
        run_events,
        segments,
    }
}
