//! `cost --from-verl` / `--from-trl` (and `calibrate-hw`'s): the framework file's typed settings
//! written into the arguments wherever the user typed no flag for the same thing (clap says which
//! values came from the command line: no argument list is read again), and what was imported, as
//! text or JSON.

use std::path::{Path, PathBuf};

use rlfrontier::error::{Error, Result};

use rlfrontier::config::import::{
    ConfigFormat, ImportedRun, RESPONSE_LENGTH_NOTE, Setting, TrlLaunch, import_trl, import_verl,
};
use rlfrontier::costing::PricedStage;

use super::CostArgs;

/// Reads and imports a framework file; errors name the file, line and key.
pub(super) fn read_import(
    path: &Path,
    format: ConfigFormat,
    launch: TrlLaunch,
) -> Result<ImportedRun> {
    let text = rlfrontier::input::read_text(
        path,
        rlfrontier::input::MAX_CONFIG_BYTES,
        "the launch script or config file",
    )?;
    let imported = match format {
        ConfigFormat::Verl => import_verl(&text),
        ConfigFormat::Trl => import_trl(&text, launch),
    };
    imported.map_err(|e| Error::in_file(path, e.line, &e.key, e.message))
}

/// A run read from a framework file (`--from-verl`/`--from-trl`), and the file.
#[derive(Debug, Clone)]
pub(crate) struct Import {
    /// The file as given.
    pub path: PathBuf,
    /// What was read from it.
    pub run: ImportedRun,
}

impl CostArgs {
    /// These arguments with the imported file's settings applied wherever the command line does
    /// not set the same thing (flags typed by the user win), and the import itself; unchanged
    /// without `--from-verl`/`--from-trl`. `calibrating`: one measured step is priced, so the
    /// file's run length (steps, passes over the data) is not read. Each imported value is
    /// checked with its flag's own bounds, an error naming the file, line and key.
    pub(crate) fn with_import(&self, calibrating: bool) -> Result<(CostArgs, Option<Import>)> {
        let Some((path, format)) = self.import_source() else {
            return Ok((self.clone(), None));
        };
        let typed = |id: &str| self.typed.iter().any(|t| t == id);
        let launch = TrlLaunch {
            processes: typed("gpus").then_some(self.cluster.gpus),
            num_generations: typed("group_size").then_some(self.levers.group_size),
        };
        let run = read_import(path, format, launch)?;
        let mut merged = self.clone();
        let command = <CostArgs as clap::Args>::augment_args(clap::Command::new("cost"));
        for imported in &run.settings {
            let (flag, value) = flag_of(&imported.setting);
            if self.overridden(flag)
                || (calibrating && matches!(flag, "--steps" | "--data-epochs" | "--budget"))
            {
                continue;
            }
            if let Some(value) = &value {
                check_like_flag(&command, flag, value).map_err(|message| {
                    Error::in_file(
                        path,
                        imported.line,
                        &imported.key,
                        format!("{message} (imported as {flag})"),
                    )
                })?;
            }
            apply(&mut merged, &imported.setting);
        }
        let import = Import {
            path: path.to_path_buf(),
            run,
        };
        Ok((merged, Some(import)))
    }

    /// Whether the user's flags set what `flag` sets (a switch and its negation count as one;
    /// `--budget` sets the run's length as `--steps` does).
    fn overridden(&self, flag: &str) -> bool {
        let id = arg_id(flag);
        let twin = match id.strip_prefix("no_") {
            Some(positive) => positive.to_string(),
            None => format!("no_{id}"),
        };
        let typed = |name: &str| self.typed.iter().any(|t| t == name);
        typed(&id) || typed(&twin) || (id == "steps" && typed("budget"))
    }
}

/// The clap id of a `cost` flag (its field name).
pub(super) fn arg_id(flag: &str) -> String {
    match flag {
        "--algo" => "stage".to_string(),
        _ => flag.trim_start_matches("--").replace('-', "_"),
    }
}

/// `value` checked by the value parser of `flag` (the bounds and choices the flag itself
/// takes), by parsing `flag=value` as `cost`'s own arguments would; the error as one line.
fn check_like_flag(
    command: &clap::Command,
    flag: &str,
    value: &str,
) -> std::result::Result<(), String> {
    let mut words = vec!["cost".to_string(), format!("{flag}={value}")];
    if flag != "--model" {
        // The one argument clap requires, so that only the value is judged.
        words.push("--model=probe".to_string());
    }
    match command.clone().try_get_matches_from(words) {
        Ok(_) => Ok(()),
        Err(error) => Err(super::super::one_line_usage_error(&error)),
    }
}

/// An error about a flag whose value came from the imported file, located in the file instead.
pub(super) fn locate_in_import(error: Error, args: &CostArgs, import: &Import) -> Error {
    let Error::Input(input) = &error else {
        return error;
    };
    let rlfrontier::error::Location::Flag(flag) = &input.location else {
        return error;
    };
    if args.overridden(flag) {
        return error;
    }
    match import
        .run
        .settings
        .iter()
        .find(|i| flag_of(&i.setting).0 == flag)
    {
        Some(imported) if imported.line.is_some() => Error::in_file(
            &import.path,
            imported.line,
            &imported.key,
            format!("{} (imported as {flag})", input.message),
        ),
        _ => error,
    }
}

/// The `cost` flag that sets an imported setting, and its value (None for a switch): how the
/// import is shown, as the equivalent command line.
pub(super) fn flag_of(setting: &Setting) -> (&'static str, Option<String>) {
    let number = |x: f64| Some(rlfrontier::format::number(x));
    let switch = |on: bool, yes: &'static str, no: &'static str| (if on { yes } else { no }, None);
    match setting {
        Setting::Model(m) => ("--model", Some(m.clone())),
        Setting::Algorithm(a) => ("--algo", Some(a.to_string())),
        Setting::Finetune(f) => ("--finetune", Some(f.to_string())),
        Setting::Reward(r) => ("--reward", Some(r.clone())),
        Setting::PromptsPerStep(n) => ("--prompts-per-step", Some(n.to_string())),
        Setting::GroupSize(n) => ("--group-size", Some(n.to_string())),
        Setting::MaxResponseLen(n) => ("--max-response-len", Some(n.to_string())),
        Setting::UpdateEpochs(n) => ("--update-epochs", Some(n.to_string())),
        Setting::Steps(n) => ("--steps", Some(n.to_string())),
        Setting::DataEpochs(n) => ("--data-epochs", Some(n.to_string())),
        Setting::KlReference(on) => switch(*on, "--kl-reference", "--no-kl-reference"),
        Setting::KlCoef(x) => ("--kl-coef", number(*x)),
        Setting::DynamicSampling(on) => switch(*on, "--dynamic-sampling", "--no-dynamic-sampling"),
        Setting::GenerationBatchPrompts(n) => ("--generation-batch-prompts", Some(n.to_string())),
        Setting::MiniBatchPrompts(n) => ("--mini-batch-prompts", Some(n.to_string())),
        Setting::ValidationEverySteps(n) => ("--validation-every-steps", Some(n.to_string())),
        Setting::ValidationSamplesPerPrompt(n) => {
            ("--validation-samples-per-prompt", Some(n.to_string()))
        }
        Setting::CheckpointEverySteps(n) => ("--checkpoint-every-steps", Some(n.to_string())),
        Setting::ValidationBeforeTraining(on) => switch(
            *on,
            "--validation-before-training",
            "--no-validation-before-training",
        ),
        Setting::Gpus(n) => ("--gpus", Some(n.to_string())),
        Setting::Engine(e) => ("--engine", Some(e.clone())),
        Setting::Schedule(s) => ("--schedule", Some(s.to_string())),
        Setting::RolloutGpuMemoryUtilization(x) => ("--rollout-gpu-memory-utilization", number(*x)),
        Setting::MaxNumSeqs(n) => ("--max-num-seqs", Some(n.to_string())),
        Setting::RolloutTensorParallel(n) => ("--rollout-tensor-parallel", Some(n.to_string())),
        Setting::Framework(f) => ("--framework", Some(f.to_string())),
        Setting::MaxTokensPerGpu(n) => ("--max-tokens-per-gpu", Some(n.to_string())),
        Setting::MicroBatchSequences(n) => ("--micro-batch-sequences", Some(n.to_string())),
        Setting::LogProbMicroBatchSequences(n) => {
            ("--log-prob-micro-batch-sequences", Some(n.to_string()))
        }
        Setting::LogProbMaxTokensPerGpu(n) => {
            ("--log-prob-max-tokens-per-gpu", Some(n.to_string()))
        }
        Setting::GradientCheckpointing(on) => switch(
            *on,
            "--gradient-checkpointing",
            "--no-gradient-checkpointing",
        ),
        Setting::RemovePadding(on) => switch(*on, "--remove-padding", "--no-remove-padding"),
        Setting::ParamOffload(on) => switch(*on, "--param-offload", "--no-param-offload"),
        Setting::OptimizerOffload(on) => {
            switch(*on, "--optimizer-offload", "--no-optimizer-offload")
        }
        Setting::ReferenceOffload(on) => {
            switch(*on, "--reference-offload", "--no-reference-offload")
        }
        Setting::SequenceParallel(n) => ("--sequence-parallel", Some(n.to_string())),
        Setting::MaxPromptTokens(n) => ("--max-prompt-tokens", Some(n.to_string())),
    }
}

/// An imported setting written into the arguments it stands for (typed: no flag text between).
fn apply(args: &mut CostArgs, setting: &Setting) {
    let (l, c, t) = (&mut args.levers, &mut args.cluster, &mut args.training);
    match setting.clone() {
        Setting::Model(m) => args.model = Some(m),
        Setting::Algorithm(a) => args.stage = PricedStage::Rl(a),
        Setting::Finetune(f) => args.finetune = f,
        Setting::Reward(r) => args.reward = r,
        Setting::PromptsPerStep(n) => l.prompts_per_step = n,
        Setting::GroupSize(n) => l.group_size = n,
        Setting::MaxResponseLen(n) => l.max_response_len = n,
        Setting::UpdateEpochs(n) => l.update_epochs = n,
        Setting::Steps(n) => l.steps = Some(n),
        Setting::DataEpochs(n) => l.data_epochs = Some(n),
        Setting::KlReference(on) => (l.kl_reference, l.no_kl_reference) = (on, !on),
        Setting::KlCoef(x) => l.kl_coef = x,
        Setting::DynamicSampling(on) => (l.dynamic_sampling, l.no_dynamic_sampling) = (on, !on),
        Setting::GenerationBatchPrompts(n) => l.generation_batch_prompts = Some(n),
        Setting::MiniBatchPrompts(n) => l.mini_batch_prompts = n,
        Setting::ValidationEverySteps(n) => l.validation_every_steps = n,
        Setting::ValidationSamplesPerPrompt(n) => l.validation_samples_per_prompt = n,
        Setting::CheckpointEverySteps(n) => l.checkpoint_every_steps = n,
        Setting::ValidationBeforeTraining(on) => {
            (
                l.validation_before_training,
                l.no_validation_before_training,
            ) = (on, !on)
        }
        Setting::Gpus(n) => c.gpus = n,
        Setting::Engine(e) => c.engine = e,
        Setting::Schedule(s) => c.schedule = Some(s),
        Setting::RolloutGpuMemoryUtilization(x) => c.rollout_gpu_memory_utilization = Some(x),
        Setting::MaxNumSeqs(n) => c.max_num_seqs = Some(n),
        Setting::RolloutTensorParallel(n) => c.rollout_tensor_parallel = Some(n),
        Setting::Framework(f) => c.framework = f,
        Setting::MaxTokensPerGpu(n) => t.max_tokens_per_gpu = Some(n),
        Setting::MicroBatchSequences(n) => t.micro_batch_sequences = Some(n),
        Setting::LogProbMicroBatchSequences(n) => t.log_prob_micro_batch_sequences = Some(n),
        Setting::LogProbMaxTokensPerGpu(n) => t.log_prob_max_tokens_per_gpu = Some(n),
        Setting::GradientCheckpointing(on) => {
            (t.gradient_checkpointing, t.no_gradient_checkpointing) = (on, !on)
        }
        Setting::RemovePadding(on) => (t.remove_padding, t.no_remove_padding) = (on, !on),
        Setting::ParamOffload(on) => (t.param_offload, t.no_param_offload) = (on, !on),
        Setting::OptimizerOffload(on) => (t.optimizer_offload, t.no_optimizer_offload) = (on, !on),
        Setting::ReferenceOffload(on) => (t.reference_offload, t.no_reference_offload) = (on, !on),
        Setting::SequenceParallel(n) => t.sequence_parallel = Some(n),
        Setting::MaxPromptTokens(n) => args.task.max_prompt_tokens = Some(n),
    }
}

/// Where an imported setting came from, for humans.
fn origin(imported: &rlfrontier::config::import::Imported, run: &ImportedRun) -> String {
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    match imported.line {
        Some(line) => format!("{} (line {line})", imported.key),
        None if matches!(imported.setting, Setting::Framework(_)) => "the file's framework".into(),
        None if imported.key.starts_with('⟨') => imported.key.clone(),
        None => format!("{} ({framework} default)", imported.key),
    }
}

/// How many unknown keys the text block names before it counts the rest.
const LISTED_UNKNOWN_KEYS: usize = 20;

/// The text block `cost` prints before the ledger of an imported run.
pub(super) fn imported_text(args: &CostArgs, import: &Import) -> String {
    let (path, run) = (import.path.as_path(), &import.run);
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    let mut s = format!("Imported from {} ({framework}):\n", path.display());
    let rows: Vec<(String, String)> = run
        .settings
        .iter()
        .map(|i| {
            let (flag, value) = flag_of(&i.setting);
            let flag_text = match value {
                Some(v) => format!("{flag} {v}"),
                None => flag.to_string(),
            };
            let mut from = origin(i, run);
            if args.overridden(flag) {
                from.push_str(": overridden on the command line");
            }
            (flag_text, from)
        })
        .collect();
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    for (flag, from) in &rows {
        s.push_str(&format!("  {flag:<width$}  <- {from}\n"));
    }
    for k in &run.not_modelled {
        s.push_str(&format!(
            "  not modelled: {} (line {}): {}\n",
            k.key, k.line, k.why
        ));
    }
    if !run.unknown.is_empty() {
        let mut keys: Vec<String> = run
            .unknown
            .iter()
            .take(LISTED_UNKNOWN_KEYS)
            .map(|k| match k.why.is_empty() {
                true => format!("{} (line {})", k.key, k.line),
                false => format!("{} (line {}: {})", k.key, k.line, k.why),
            })
            .collect();
        if run.unknown.len() > LISTED_UNKNOWN_KEYS {
            keys.push(format!(
                "and {} more (--json lists them all)",
                run.unknown.len() - LISTED_UNKNOWN_KEYS
            ));
        }
        s.push_str(&format!(
            "  unknown keys, not priced (a typo, or a newer {framework}?): {}\n",
            keys.join(", ")
        ));
    }
    if !run.not_priced.is_empty() {
        s.push_str(&format!(
            "  read, not priced ({} keys that do not change the cost: learning rate, clipping, logging, paths, ...)\n",
            run.not_priced.len()
        ));
    }
    for note in &run.notes {
        let length_given = args.typed.iter().any(|f| f == "mean_response_tokens");
        if !(length_given && note == RESPONSE_LENGTH_NOTE) {
            s.push_str(&format!("  note: {note}\n"));
        }
    }
    s.push('\n');
    s
}

/// The JSON form of an import: settings with their keys and lines, and the keys not used.
pub(super) fn imported_json(args: &CostArgs, import: &Import) -> serde_json::Value {
    let (path, run) = (import.path.as_path(), &import.run);
    let keys = |notes: &[rlfrontier::config::import::KeyNote]| {
        notes
            .iter()
            .map(|k| serde_json::json!({"key": k.key, "line": k.line, "why": k.why}))
            .collect::<Vec<_>>()
    };
    serde_json::json!({
        "file": path.display().to_string(),
        "framework": run.format.framework().as_str(),
        "settings": run.settings.iter().map(|i| {
            let (flag, value) = flag_of(&i.setting);
            serde_json::json!({
                "flag": flag,
                "value": value,
                "key": i.key,
                "line": i.line,
                "overridden": args.overridden(flag),
            })
        }).collect::<Vec<_>>(),
        "not_modelled": keys(&run.not_modelled),
        "unknown": keys(&run.unknown),
        "not_priced": keys(&run.not_priced),
        "notes": run.notes,
    })
}
