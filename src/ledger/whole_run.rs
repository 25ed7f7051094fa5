//! What a whole run pays beyond its training steps, as a bill lists it: the start-up, the
//! validation passes (one before training and one every `validation_every_steps`) and the
//! checkpoint saves. The step (`ledger::step`) carries each as its share per step, so a budget
//! buys fewer steps; [`run_events`] lists them once the run's iterations are known, for `cost`'s
//! "beyond the steps" lines. The checkpoint's seconds follow from what is saved and how fast
//! the cluster writes it ([`checkpoint_seconds`]).

use super::{Ledger, Phase, RunConfig};
use crate::config::{Algorithm, Finetune, RunSettings, SECONDS_PER_HOUR};

/// Seconds in a day, for rates per GPU-day.
const SECONDS_PER_DAY: f64 = 86_400.0;

/// Expected restarts per step: `restarts_per_gpu_day` × the cluster's GPUs × the step's seconds
/// over a day's (faults arrive at a constant rate per GPU while the run holds them).
pub fn restarts_per_step(run: &RunSettings, gpus: u64, step_seconds: f64) -> f64 {
    run.restarts_per_gpu_day * gpus as f64 * step_seconds / SECONDS_PER_DAY
}

/// Wall seconds one restart holds the cluster: the run's start again (`start_seconds`: the
/// start-up and, with validation before training, that pass, which veRL repeats on resume) and,
/// on average, half a checkpoint interval of steps redone (a fault falls anywhere between two
/// saves). A run that saves no checkpoint redoes everything before a fault; that is not counted
/// here (it grows with the square of the run's length): only its start is.
pub fn restart_seconds(run: &RunSettings, start_seconds: f64, step_seconds: f64) -> f64 {
    start_seconds + 0.5 * run.checkpoint_every_steps as f64 * step_seconds
}

/// Fixed seconds of a start-up in [`startup_seconds`]'s estimate: Ray workers, the rollout
/// engine's initialisation and CUDA-graph capture (vLLM reports 7-90 s of engine
/// initialisation for 7B models). With [`STARTUP_SECONDS_PER_BILLION_PARAMETERS`] it gives 225 s
/// for a 7B model, against veRL's maintainers' 3.7 minutes (verl issue #384), and 1,170 s at
/// 70B, within the 5-13 minutes published for 70B loads (`research/ledger/whole_run_defaults_2026-12.md`
/// §3): a fit to sparse reports, which the storage's speed dominates.
pub const STARTUP_BASE_SECONDS: f64 = 120.0;

/// Seconds per billion parameters in [`startup_seconds`]'s estimate: loading the weights into
/// the trainer and the engine.
pub const STARTUP_SECONDS_PER_BILLION_PARAMETERS: f64 = 15.0;

/// Seconds before the first step: `startup_seconds` when given, else [`STARTUP_BASE_SECONDS`]
/// plus [`STARTUP_SECONDS_PER_BILLION_PARAMETERS`] per billion of the policy's parameters (a
/// multi-node Ray start adds time this does not count).
pub fn startup_seconds(cfg: &RunConfig) -> f64 {
    cfg.run.startup_seconds.unwrap_or_else(|| {
        STARTUP_BASE_SECONDS
            + STARTUP_SECONDS_PER_BILLION_PARAMETERS * cfg.policy.total_params() as f64 / 1e9
    })
}

/// Bytes a full-parameter checkpoint stores per trained parameter: the FSDP shards of the
/// fp32 weights (4 bytes) and of AdamW's two fp32 moments (8 bytes). veRL saves `model`,
/// `optimizer` and `extra` by default (`actor.checkpoint.save_contents`, `ppo_trainer.yaml`),
/// each FSDP rank writing its shard of the fp32 state; Hugging Face's `Trainer` saves the
/// model and `optimizer.pt` unless `save_only_model`.
pub const CHECKPOINT_BYTES_PER_PARAMETER: f64 = 12.0;

/// GPUs per node, for the nodes that write a checkpoint in parallel: the 8-GPU HGX/DGX and
/// MI300X OAM servers the catalog's GPUs come in.
pub const GPUS_PER_NODE: u64 = 8;

/// Bytes one checkpoint writes: the policy's trained state ([`CHECKPOINT_BYTES_PER_PARAMETER`]
/// per trained parameter: every parameter under full fine-tuning, the adapters' under LoRA,
/// whose frozen base is not saved again) and, for PPO, the critic's.
pub fn checkpoint_bytes(cfg: &RunConfig) -> f64 {
    let policy = match cfg.finetune {
        Finetune::Full => cfg.policy.total_params() as f64,
        Finetune::Lora(rank) => cfg.policy.lora_params(rank, true),
    };
    let critic = match cfg.run.algorithm {
        Algorithm::Ppo => cfg.run.critic.as_ref().unwrap_or(cfg.policy).total_params() as f64,
        Algorithm::Grpo => 0.0,
    };
    (policy + critic) * CHECKPOINT_BYTES_PER_PARAMETER
}

/// Seconds one checkpoint holds the cluster: `checkpoint_seconds` when given, else
/// [`checkpoint_bytes`] over the cluster's write bandwidth (`checkpoint_write_gb_per_second`
/// per node, the nodes writing their shards in parallel).
pub fn checkpoint_seconds(cfg: &RunConfig) -> f64 {
    if let Some(seconds) = cfg.run.checkpoint_seconds {
        return seconds;
    }
    let nodes = cfg.hardware.gpus.div_ceil(GPUS_PER_NODE).max(1) as f64;
    checkpoint_bytes(cfg) / (cfg.run.checkpoint_write_gb_per_second * 1e9 * nodes)
}

/// What a run event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEventKind {
    /// Loading the model and starting the engine, before the first step.
    Startup,
    /// The validation pass before training (veRL `val_before_train`).
    ValidationBeforeTraining,
    /// The validation passes every `validation_every_steps`.
    Validation,
    /// The checkpoint saves every `checkpoint_every_steps`.
    Checkpoint,
    /// The expected restarts after faults (`restarts_per_gpu_day`).
    Restarts,
}

impl RunEventKind {
    /// The event's name in `cost`'s output.
    pub fn name(self) -> &'static str {
        match self {
            RunEventKind::Startup => "start-up",
            RunEventKind::ValidationBeforeTraining => "validation before training",
            RunEventKind::Validation => "validation",
            RunEventKind::Checkpoint => "checkpoints",
            RunEventKind::Restarts => "restarts (expected)",
        }
    }

    /// The key in `cost --json`.
    pub fn key(self) -> &'static str {
        match self {
            RunEventKind::Startup => "startup",
            RunEventKind::ValidationBeforeTraining => "validation_before_training",
            RunEventKind::Validation => "validation",
            RunEventKind::Checkpoint => "checkpoints",
            RunEventKind::Restarts => "restarts",
        }
    }
}

/// One line of what a run pays beyond its steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunEvent {
    /// What it is.
    pub kind: RunEventKind,
    /// Steps between two of them; 0: once.
    pub every_steps: u64,
    /// How many the run holds: the iterations over `every_steps`, pro rata, as the step's share
    /// charges them (a run of 105 steps validating every 10 pays 10.5 passes).
    pub count: f64,
    /// Wall seconds of one, the whole cluster held.
    pub seconds_each: f64,
    /// GPU-hours of all of them.
    pub gpu_hours: f64,
    /// Dollars of all of them, at the ledger's price.
    pub usd: f64,
}

/// The seconds of one training step alone: the ledger's step (which carries each event's share)
/// less the events' seconds spread over its iterations; what a log's per-step timing measures
/// (veRL's `timing_s/step` on a step without validation or a save).
pub fn training_step_seconds(ledger: &Ledger, events: &[RunEvent]) -> f64 {
    if ledger.iterations == 0 {
        return ledger.step_seconds;
    }
    let events_seconds: f64 = events.iter().map(|e| e.count * e.seconds_each).sum();
    ledger.step_seconds - events_seconds / ledger.iterations as f64
}

/// The run's events beyond its steps, those that cost anything, in the order they happen:
/// start-up, validation before training, validation, checkpoints. Their dollars are part of
/// the ledger's totals already (the `startup`, `validation` and `sync` phases).
pub fn run_events(cfg: &RunConfig, ledger: &Ledger) -> Vec<RunEvent> {
    let gpus = ledger.gpus as f64;
    let iterations = ledger.iterations as f64;
    let event = |kind, every_steps: u64, count: f64, seconds_each: f64| {
        let gpu_hours = count * seconds_each * gpus / SECONDS_PER_HOUR;
        RunEvent {
            kind,
            every_steps,
            count,
            seconds_each,
            gpu_hours,
            usd: gpu_hours * ledger.usd_per_gpu_hour,
        }
    };
    let run = cfg.run;
    let startup = startup_seconds(cfg);
    let before_training = ledger.start_seconds - startup;
    let mut events = vec![
        event(RunEventKind::Startup, 0, 1.0, startup),
        event(
            RunEventKind::ValidationBeforeTraining,
            0,
            1.0,
            before_training,
        ),
    ];
    // The periodic events: the validation phase carries one pass's share per step.
    let every = run.validation_every_steps;
    for (kind, every, seconds_each) in [
        (
            RunEventKind::Validation,
            every,
            ledger.phase(Phase::Validation).seconds * every as f64,
        ),
        (
            RunEventKind::Checkpoint,
            run.checkpoint_every_steps,
            checkpoint_seconds(cfg),
        ),
    ] {
        if every > 0 {
            events.push(event(kind, every, iterations / every as f64, seconds_each));
        }
    }
    events.push(event(
        RunEventKind::Restarts,
        0,
        ledger.restarts_per_step * iterations,
        ledger.restart_seconds,
    ));
    events.retain(|e| e.count > 0.0 && e.seconds_each > 0.0);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::config::{Hardware, Reward, RewardKind, RunSettings, Stop, Task};
    use crate::ledger::evaluate;

    /// Qwen2.5-7B's parameters in the catalog, the hand values' input.
    fn qwen7b() -> crate::catalog::ModelSpec {
        Catalog::embedded().model("qwen2.5-7b").unwrap().clone()
    }

    fn priced(run: &RunSettings, gpus: u64, steps: u64) -> (Ledger, Vec<RunEvent>) {
        let catalog = Catalog::embedded();
        let policy = qwen7b();
        let hardware = Hardware::new(
            catalog.gpu("h100-sxm").unwrap().clone(),
            gpus,
            catalog.default_engine().clone(),
            crate::config::DEFAULT_FRAMEWORK,
        );
        let reward = Reward {
            kind: RewardKind::Rule,
            model: None,
        };
        let task = Task::default();
        let cfg = RunConfig {
            policy: &policy,
            finetune: Finetune::Full,
            reward: &reward,
            group_size: 8,
            max_response_len: 4096,
            update_epochs: 1,
            prompts_per_step: 256,
            stop: Stop::Iterations(steps),
            hardware: &hardware,
            task: &task,
            run,
            measured_base_score: None,
            ability_score: None,
        };
        let ledger = evaluate(&cfg);
        let events = run_events(&cfg, &ledger);
        (ledger, events)
    }

    #[test]
    fn a_checkpoint_writes_twelve_bytes_per_parameter_at_the_nodes_bandwidth() {
        // By hand: Qwen2.5-7B's catalog parameters × 12 bytes (fp32 weights and AdamW's two
        // moments, veRL's FSDP checkpoint) written by 2 nodes (16 GPUs) at 1 GB/s each.
        let params = qwen7b().total_params() as f64;
        let (_, events) = priced(&RunSettings::default(), 16, 100);
        let save = events
            .iter()
            .find(|e| e.kind == RunEventKind::Checkpoint)
            .unwrap();
        assert!((save.seconds_each - params * 12.0 / 2e9).abs() < 1e-9);
        assert_eq!(save.count, 5.0, "100 steps, a save every 20");
    }

    #[test]
    fn the_start_up_estimate_is_the_published_anchor_at_seven_billion() {
        // 120 s + 15 s per billion parameters: 225 s for 7B, against veRL's reported 3.7
        // minutes (222 s, verl issue #384).
        let params = qwen7b().total_params() as f64;
        let (ledger, events) = priced(&RunSettings::default(), 8, 10);
        let startup = events[0];
        assert_eq!(startup.kind, RunEventKind::Startup);
        assert!((startup.seconds_each - (120.0 + 15.0 * params / 1e9)).abs() < 1e-9);
        assert!((startup.seconds_each - 222.0).abs() < 0.1 * 222.0);
        // The start-up and the validation before training are the run's start, charged once.
        let before = events[1];
        assert_eq!(before.kind, RunEventKind::ValidationBeforeTraining);
        let start = ledger.phase(Phase::Startup).seconds * ledger.iterations as f64;
        assert!((start - startup.seconds_each - before.seconds_each).abs() < 1e-9 * start);
        assert!((before.seconds_each - ledger.validation_pass_seconds).abs() < 1e-12);
    }

    #[test]
    fn restarts_come_at_the_fault_rate_and_redo_half_a_checkpoint_interval() {
        // By hand: r faults per GPU-day on 16 GPUs over steps of S seconds (the step without
        // them) is r × 16 × S / 86,400 restarts per step, each the start again plus 10 steps
        // (half of 20 between saves); the step grows by their product.
        let calm = RunSettings {
            restarts_per_gpu_day: 0.0,
            ..RunSettings::default()
        };
        let (still, _) = priced(&calm, 16, 100);
        let rate = 1e-3;
        let faulty = RunSettings {
            restarts_per_gpu_day: rate,
            ..RunSettings::default()
        };
        let (ledger, events) = priced(&faulty, 16, 100);
        // The step before the start's share (charged once the 100 steps are known).
        let s = still.step_seconds - still.start_seconds / 100.0;
        let per_step = rate * 16.0 * s / 86_400.0;
        let each = ledger.start_seconds + 10.0 * s;
        assert!((ledger.restarts_per_step / per_step - 1.0).abs() < 1e-9);
        assert!((ledger.restart_seconds / each - 1.0).abs() < 1e-9);
        let grown = ledger.step_seconds - still.step_seconds;
        assert!((grown / (per_step * each) - 1.0).abs() < 1e-6);
        let restarts = events.last().unwrap();
        assert_eq!(restarts.kind, RunEventKind::Restarts);
        assert!((restarts.count - 100.0 * per_step).abs() < 1e-12);
        // Llama 3's default: 419 interruptions in 54 days on 16,384 GPUs.
        assert!((RunSettings::default().restarts_per_gpu_day - 4.736e-4).abs() < 1e-6);
    }

    #[test]
    fn the_events_are_what_the_phases_charge_and_the_training_step_is_the_rest() {
        let run = RunSettings::default();
        let (ledger, events) = priced(&run, 8, 100);
        let n = ledger.iterations as f64;
        let validation = events
            .iter()
            .find(|e| e.kind == RunEventKind::Validation)
            .unwrap();
        assert_eq!(validation.count, 10.0);
        let phase_hours = ledger.phase(Phase::Validation).gpu_seconds * n / SECONDS_PER_HOUR;
        assert!((validation.gpu_hours - phase_hours).abs() < 1e-9 * phase_hours);
        // With nothing beyond the steps, the step is the training step, to the bit.
        let (alone, none) = priced(&run.steps_only(), 8, 100);
        assert!(none.is_empty());
        assert_eq!(training_step_seconds(&alone, &none), alone.step_seconds);
        let trained = training_step_seconds(&ledger, &events);
        assert!((trained - alone.step_seconds).abs() < 1e-9 * trained);
        assert!(ledger.step_seconds > trained);
    }
}
