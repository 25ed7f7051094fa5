//! Launch scripts for pilot runs: one shell script per run for veRL or TRL, and a Slurm array
//! script that runs them all.
//!
//! Key names were checked against the frameworks' source:
//! - veRL: `verl/trainer/config/_generated_ppo_trainer.yaml` of verl-project/verl at commit
//!   1a7e2ca (2026): `algorithm.adv_estimator`, `data.{train_files,val_files,train_batch_size,
//!   max_prompt_length,max_response_length}`, `actor_rollout_ref.model.{path,lora_rank,lora_alpha,
//!   target_modules,enable_gradient_checkpointing}`, `actor_rollout_ref.actor.{ppo_mini_batch_size,
//!   ppo_epochs,use_kl_loss,kl_loss_coef,ppo_max_token_len_per_gpu}`, `actor_rollout_ref.rollout.{name,
//!   n,gpu_memory_utilization,tensor_model_parallel_size}`, `reward_model.{enable,model.path}`,
//!   `critic.model.path`, `trainer.{total_training_steps,test_freq,val_before_train,n_gpus_per_node,
//!   nnodes,logger,project_name,experiment_name}`. veRL counts `ppo_mini_batch_size` in prompts and
//!   multiplies it by `rollout.n`. Newer veRL moves the reward model to `reward.reward_model.*`
//!   (`verl/trainer/config/reward/reward.yaml`); the script says so where it matters.
//! - TRL: `trl/trainer/grpo_config.py` (huggingface/trl, 2026: `num_generations`,
//!   `max_completion_length`, `num_iterations`, `beta`, `use_vllm`, `vllm_mode`,
//!   `vllm_gpu_memory_utilization`), `trl/scripts/grpo.py` (the `trl grpo` command:
//!   `reward_funcs`, `reward_model_name_or_path`, `dataset_name`), transformers'
//!   `TrainingArguments` (`per_device_train_batch_size`, `gradient_accumulation_steps`,
//!   `max_steps`, `eval_strategy`, `eval_steps`, `output_dir`, `report_to`) and TRL's `ModelConfig`
//!   (`model_name_or_path`, `use_peft`, `lora_r`, `lora_alpha`, `lora_target_modules`). In TRL one
//!   optimizer step consumes one generation batch and `num_iterations` reuses it, so `max_steps` is
//!   iterations × epochs. Accelerate's config file keys (`distributed_type: DEEPSPEED`,
//!   `deepspeed_config.{zero_stage,offload_param_device,offload_optimizer_device}`) as
//!   `accelerate config` writes them (huggingface/accelerate `commands/config/config_args.py`).

use crate::catalog::ModelSpec;
use crate::config::{Algorithm, Finetune, Reward, RewardKind};
use crate::ledger::Ledger;
use crate::spec::Grid;

use super::PilotRun;

/// Target framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// veRL (`python3 -m verl.trainer.main_ppo`).
    Verl,
    /// Hugging Face TRL (`trl grpo`).
    Trl,
}

impl std::str::FromStr for Framework {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "verl" => Ok(Framework::Verl),
            "trl" => Ok(Framework::Trl),
            other => Err(format!(
                "`{other}` is not a framework; {}",
                crate::error::suggestion(other, ["verl", "trl"])
            )),
        }
    }
}

impl Framework {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Framework::Verl => "verl",
            Framework::Trl => "trl",
        }
    }
}

/// Everything a launch script needs about one run.
pub struct LaunchContext<'a> {
    /// The grid.
    pub grid: &'a Grid,
    /// The run.
    pub run: &'a PilotRun,
    /// Its policy.
    pub policy: &'a ModelSpec,
    /// Its fine-tuning mode.
    pub finetune: Finetune,
    /// Its reward.
    pub reward: &'a Reward,
    /// Its ledger at the pilot budget.
    pub ledger: &'a Ledger,
}

/// `text` as one shell word that the shell reads back literally: single-quoted, with each `'`
/// written as `'\''`. Nothing inside is expanded or run (`$(…)`, `;`, backquotes, newlines).
pub fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `text` safe inside a `#` comment line: control characters (a newline would end the comment
/// and start a command) become `?`.
pub fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Whether `name` (a model id or path) reaches veRL's Hydra overrides as a plain string: only
/// letters, digits and `. _ - / ~`. Shell quoting is not enough there: Hydra's override grammar
/// reads `,` as a sweep and brackets as a list, and OmegaConf resolves `${…}` (even
/// `${oc.env:SECRET}`) inside any string value.
pub fn is_hydra_plain(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '~'))
}

/// A shell check that `$MODEL_PATH` is a plain Hydra string ([`is_hydra_plain`]) before veRL
/// reads it.
const VERL_MODEL_PATH_CHECK: &str = "case \"$MODEL_PATH\" in\n  ''|*[!A-Za-z0-9._/~-]*) echo \"MODEL_PATH must be a Hugging Face id or a path of letters, digits and . _ - / ~ (veRL's overrides would interpret other characters)\" >&2; exit 2 ;;\nesac\n";

/// Smallest power of two at least `2 × tokens` (a prompt-length cap with headroom).
fn prompt_cap(tokens: f64) -> u64 {
    let want = (2.0 * tokens).ceil().max(64.0) as u64;
    want.next_power_of_two()
}

fn header(c: &LaunchContext, framework: Framework) -> String {
    let r = c.run;
    let h = &c.grid.hardware;
    format!(
        "#!/usr/bin/env bash\n\
         # rlfrontier pilot {id} of grid `{grid}` for {framework}.\n\
         # {model} {finetune}, reward {reward}, G = {g}, cap {cap} tokens, {mu} update epoch(s), {b} prompts per step.\n\
         # Pilot budget {budget} {unit}: {steps} iterations, evaluated every {every}; expected ${usd:.2} ({gpuh:.2} GPU-hours, {wall:.2} h) on {gpus} x {gpu}.\n\
         # Set TRAIN_FILES/VAL_FILES (veRL) or DATASET (TRL), and MODEL_PATH to override the model.\n\
         # Log the held-out metric at every evaluation and collect it as run_id,step,metric,value rows for `rlfrontier fit`.\n\
         set -euo pipefail\n",
        id = comment_text(&r.run_id),
        grid = comment_text(&c.grid.name),
        framework = super::frameworks::describe(framework),
        model = comment_text(&r.model),
        finetune = comment_text(&r.finetune),
        reward = comment_text(&r.reward),
        g = r.group_size,
        cap = r.max_response_len,
        mu = r.update_epochs,
        b = r.prompts_per_step,
        budget = crate::format::number(r.pilot_budget),
        unit = r.budget_unit,
        steps = r.steps,
        every = r.eval_every_steps,
        usd = r.expected_usd,
        gpuh = r.expected_gpu_hours,
        wall = r.expected_wall_hours,
        gpus = h.gpus,
        gpu = comment_text(&h.gpu.id),
    )
}

/// `MODEL_PATH` from the environment, else the catalog's name of the policy (quoted: a name is
/// data, never code).
fn model_path_lines(policy: &ModelSpec) -> String {
    format!(
        "DEFAULT_MODEL_PATH={}\nMODEL_PATH=\"${{MODEL_PATH:-$DEFAULT_MODEL_PATH}}\"\n",
        shell_word(&policy.name)
    )
}

/// The veRL launch script of a run.
pub fn verl_script(c: &LaunchContext) -> String {
    let r = c.run;
    let mut s = header(c, Framework::Verl);
    s.push_str(VERL_PREREQUISITES);
    s.push_str(": \"${TRAIN_FILES:?set TRAIN_FILES to your training parquet}\"\n");
    s.push_str(": \"${VAL_FILES:?set VAL_FILES to your held-out parquet}\"\n");
    s.push_str(&model_path_lines(c.policy));
    s.push_str(VERL_MODEL_PATH_CHECK);
    let mut args = verl_data_args(c);
    args.extend(verl_training_state_args(c));
    args.extend(verl_actor_rollout_args(c));
    if c.grid.run.algorithm == Algorithm::Ppo {
        args.push("critic.model.path=\"$MODEL_PATH\"".to_string());
    }
    let note = verl_reward_args(c, &mut args);
    args.extend(verl_trainer_args(c));
    s.push_str(&note);
    s.push_str(&format!(
        "DEFAULT_LOG_PATH={}\nexport VERL_FILE_LOGGER_PATH=\"${{VERL_FILE_LOGGER_PATH:-$DEFAULT_LOG_PATH}}\"\nmkdir -p \"$(dirname \"$VERL_FILE_LOGGER_PATH\")\"\n",
        shell_word(&format!("metrics/{}.jsonl", r.run_id))
    ));
    s.push_str("python3 -m verl.trainer.main_ppo \\\n");
    for a in &args {
        s.push_str(&format!("  {a} \\\n"));
    }
    s.push_str("  \"$@\"\n");
    s
}

/// veRL's algorithm, data and model arguments.
fn verl_data_args(c: &LaunchContext) -> Vec<String> {
    let (r, run) = (c.run, &c.grid.run);
    vec![
        format!(
            "algorithm.adv_estimator={}",
            if run.algorithm == Algorithm::Ppo {
                "gae"
            } else {
                "grpo"
            }
        ),
        "data.train_files=\"$TRAIN_FILES\"".to_string(),
        "data.val_files=\"$VAL_FILES\"".to_string(),
        format!("data.train_batch_size={}", r.prompts_per_step),
        format!(
            "data.max_prompt_length={}",
            prompt_cap(c.grid.task.prompt_tokens)
        ),
        format!("data.max_response_length={}", r.max_response_len),
        "actor_rollout_ref.model.path=\"$MODEL_PATH\"".to_string(),
        format!(
            "actor_rollout_ref.model.enable_gradient_checkpointing={}",
            if run.gradient_checkpointing {
                "True"
            } else {
                "False"
            }
        ),
    ]
}

/// veRL's arguments for where the training state lives and how it is split: offload as priced
/// (`ledger::offload`; veRL's defaults, none, are left unwritten), Ulysses sequence
/// parallelism, LoRA.
fn verl_training_state_args(c: &LaunchContext) -> Vec<String> {
    let run = &c.grid.run;
    let mut args = Vec::new();
    let o = run.offload;
    let ppo = run.algorithm == crate::config::Algorithm::Ppo;
    for (on, key) in [
        (
            o.params,
            "actor_rollout_ref.actor.fsdp_config.param_offload",
        ),
        (
            o.optimizer,
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
        ),
        (o.params && ppo, "critic.fsdp.param_offload"),
        (o.optimizer && ppo, "critic.fsdp.optimizer_offload"),
        // Under LoRA veRL builds no reference engine (the base weights are the reference):
        // its keys are never read.
        (
            o.reference && !matches!(c.finetune, Finetune::Lora(_)),
            "actor_rollout_ref.ref.fsdp_config.param_offload",
        ),
    ] {
        if on {
            args.push(format!("{key}=True"));
        }
    }
    if run.sequence_parallel > 1 {
        let sp = run.sequence_parallel;
        // veRL 0.9's spellings: the top-level `ulysses_sequence_parallel_size` of the actor and
        // reference are deprecated, the critic's is never copied into its engine.
        args.push(format!(
            "actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size={sp}"
        ));
        args.push(format!(
            "actor_rollout_ref.ref.fsdp_config.ulysses_sequence_parallel_size={sp}"
        ));
        if ppo {
            args.push(format!("critic.fsdp.ulysses_sequence_parallel_size={sp}"));
        }
    }
    if let Finetune::Lora(rank) = c.finetune {
        args.push(format!("actor_rollout_ref.model.lora_rank={rank}"));
        args.push(format!("actor_rollout_ref.model.lora_alpha={rank}"));
        args.push("actor_rollout_ref.model.target_modules=all-linear".to_string());
    }
    args
}

/// veRL's actor update and rollout arguments.
fn verl_actor_rollout_args(c: &LaunchContext) -> Vec<String> {
    let (r, run, h) = (c.run, &c.grid.run, &c.grid.hardware);
    vec![
        format!(
            "actor_rollout_ref.actor.ppo_mini_batch_size={}",
            r.prompts_per_step
        ),
        format!("actor_rollout_ref.actor.ppo_epochs={}", r.update_epochs),
        format!(
            "actor_rollout_ref.actor.use_kl_loss={}",
            if run.kl_reference { "True" } else { "False" }
        ),
        format!(
            "actor_rollout_ref.actor.kl_loss_coef={}",
            crate::format::number(run.kl_coef)
        ),
        // veRL's ActorConfig accepts a token budget per GPU only with dynamic batching on.
        "actor_rollout_ref.actor.use_dynamic_bsz=True".to_string(),
        format!(
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu={}",
            run.max_tokens_per_gpu as u64
        ),
        format!("actor_rollout_ref.rollout.name={}", verl_rollout_name(c)),
        // CUDA graphs or eager decoding, as the priced engine profile runs.
        format!(
            "actor_rollout_ref.rollout.enforce_eager={}",
            if c.grid.engine_hardware[0].engine.cuda_graphs {
                "False"
            } else {
                "True"
            }
        ),
        format!("actor_rollout_ref.rollout.n={}", r.group_size),
        format!(
            "actor_rollout_ref.rollout.gpu_memory_utilization={}",
            h.rollout_gpu_memory_utilization
        ),
        format!(
            "actor_rollout_ref.rollout.tensor_model_parallel_size={}",
            c.ledger.decode.tensor_parallel
        ),
    ]
}

/// veRL's reward-model arguments, pushed onto `args`, and the comment that explains them (empty
/// for a rule reward).
fn verl_reward_args(c: &LaunchContext, args: &mut Vec<String>) -> String {
    let mut note = String::new();
    if let Some(rm) = &c.reward.model {
        // veRL 0.9 reads the reward model from `reward.reward_model.*` (main_ppo); the legacy
        // `reward_model.*` block still composes but is never read.
        args.push("reward.reward_model.enable=True".to_string());
        args.push(format!(
            "reward.reward_model.model_path={}",
            shell_word(&rm.name)
        ));
        // The reward model is served by a rollout engine of its own, which has no default.
        args.push(format!(
            "reward.reward_model.rollout.name={}",
            verl_rollout_name(c)
        ));
        note = format!(
            "# Reward: {} ({}).\n",
            comment_text(&c.reward.to_string()),
            match c.reward.kind {
                RewardKind::Prm =>
                    "a process reward model: step scores need a reward manager that aggregates them",
                RewardKind::Judge =>
                    "an LLM judge: serve it and score through a custom reward function",
                _ => "an outcome reward model",
            }
        );
    }
    note
}

/// veRL's trainer arguments: steps, validation, cluster shape, logging.
fn verl_trainer_args(c: &LaunchContext) -> Vec<String> {
    let (r, h) = (c.run, &c.grid.hardware);
    let nodes = h.gpus.div_ceil(8);
    let per_node = h.gpus.min(8);
    let sampled = if c.grid.run.validation_samples_per_prompt > 1 {
        vec![
            "actor_rollout_ref.rollout.val_kwargs.do_sample=True".to_string(),
            "actor_rollout_ref.rollout.val_kwargs.temperature=1.0".to_string(),
        ]
    } else {
        Vec::new()
    };
    sampled
        .into_iter()
        .chain(vec![
            format!("trainer.total_training_steps={}", r.steps),
            format!("trainer.test_freq={}", r.eval_every_steps),
            "trainer.val_before_train=True".to_string(),
            // The responses per validation prompt the plan prices; several are sampled (veRL's
            // validation decodes greedily by default, which would repeat one response n times).
            format!(
                "actor_rollout_ref.rollout.val_kwargs.n={}",
                c.grid.run.validation_samples_per_prompt.max(1)
            ),
            format!("trainer.n_gpus_per_node={per_node}"),
            format!("trainer.nnodes={nodes}"),
            // The file logger writes one JSON line per step to $VERL_FILE_LOGGER_PATH (set above):
            // what `rlfrontier calibrate-hw --log` and the results collection read.
            "trainer.logger='[\"console\",\"file\"]'".to_string(),
            format!(
                "trainer.project_name={}",
                shell_word(&format!("rlfrontier-{}", c.grid.name))
            ),
            format!("trainer.experiment_name={}", shell_word(&r.run_id)),
        ])
        .collect()
}

/// veRL's `rollout.name` for the pilots' engine: `sglang` or `vllm` (veRL 0.9 has no other;
/// `plan` refuses a statically batching engine for veRL before any script is written).
fn verl_rollout_name(c: &LaunchContext) -> &'static str {
    let engine = &c.grid.engine_hardware[0].engine;
    if engine.id.starts_with("sglang") {
        "sglang"
    } else {
        "vllm"
    }
}

/// Per-device batch and accumulation so that devices × per-device × accumulation = B·G.
pub fn trl_batching(completions: u64, devices: u64) -> (u64, u64, bool) {
    if !completions.is_multiple_of(devices) {
        return (1, completions.div_ceil(devices), false);
    }
    let per = completions / devices;
    let device_batch = (1..=per.min(16))
        .rev()
        .find(|d| per.is_multiple_of(*d))
        .unwrap_or(1);
    (device_batch, per / device_batch, true)
}

/// Completions per device per evaluation batch: a multiple of the evaluation's samples per
/// prompt (TRL requires the global evaluation batch to be divisible by `num_generations_eval`),
/// at least transformers' default of 8.
fn eval_device_batch(samples_per_prompt: u64) -> u64 {
    samples_per_prompt * 8u64.div_ceil(samples_per_prompt).max(1)
}

/// The TRL launch script of a run.
pub fn trl_script(c: &LaunchContext) -> String {
    let r = c.run;
    let h = &c.grid.hardware;
    let (device_batch, accumulation, exact) =
        trl_batching(r.prompts_per_step * r.group_size, h.gpus);
    let mut s = header(c, Framework::Trl);
    s.push_str(TRL_PREREQUISITES);
    s.push_str(": \"${DATASET:?set DATASET to a dataset name or path with train and test splits, a conversational prompt column and a solution column}\"\n");
    s.push_str(&model_path_lines(c.policy));
    if !exact {
        s.push_str(&format!(
            "# Note: {} completions per step do not split evenly over {} processes; this runs {} per step.\n",
            r.prompts_per_step * r.group_size,
            h.gpus,
            device_batch * accumulation * h.gpus
        ));
    }
    // One generation batch per optimizer pass (TRL's default steps_per_generation = the
    // accumulation), reused update_epochs times: update_epochs optimizer steps per iteration.
    let mu = r.update_epochs;
    let samples = c.grid.run.validation_samples_per_prompt.max(1);
    let mut args: Vec<String> = vec![
        "--model_name_or_path \"$MODEL_PATH\"".to_string(),
        "--dataset_name \"$DATASET\"".to_string(),
        format!("--num_generations {}", r.group_size),
        format!("--max_completion_length {}", r.max_response_len),
        format!("--num_iterations {mu}"),
        format!("--beta {}", trl_beta(&c.grid.run)),
        format!("--per_device_train_batch_size {device_batch}"),
        format!("--gradient_accumulation_steps {accumulation}"),
        format!("--max_steps {}", r.steps * mu),
        // Evaluated before training (the base score of the curve) and every eval_every_steps
        // iterations, with the samples per prompt the plan prices; a checkpoint (with the
        // trainer state collect reads) at every evaluation, the latest kept.
        "--eval_strategy steps".to_string(),
        format!("--eval_steps {}", r.eval_every_steps * mu),
        "--eval_on_start True".to_string(),
        format!("--num_generations_eval {samples}"),
        format!(
            "--per_device_eval_batch_size {}",
            eval_device_batch(samples)
        ),
        "--save_strategy steps".to_string(),
        format!("--save_steps {}", r.eval_every_steps * mu),
        "--save_only_model True".to_string(),
        "--save_total_limit 1".to_string(),
    ];
    args.extend(trl_setting_args(c, &mut s));
    args.extend([
        "--output_dir \"$RUN_DIR\"".to_string(),
        "--report_to none".to_string(),
    ]);
    s.push_str(&format!(
        "RUN_DIR={}\nmkdir -p \"$RUN_DIR\"\n",
        shell_word(&format!("runs/{}", r.run_id))
    ));
    s.push_str(&zero3_config_lines(c));
    let nodes = h.gpus.div_ceil(8);
    // Several nodes: one launch per node, each told its rank and the first node's address.
    let ranks = if nodes > 1 {
        s.push_str(&format!(
            "# Note: {nodes} nodes: run this script once on each with MACHINE_RANK (0 on the first node) and MAIN_PROCESS_IP (the first node's address) set; slurm_array.sh does so through srun.\n"
        ));
        " --machine_rank \"${MACHINE_RANK:?set MACHINE_RANK to this node's rank}\" --main_process_ip \"${MAIN_PROCESS_IP:?set MAIN_PROCESS_IP to the first node's address}\" --main_process_port \"${MAIN_PROCESS_PORT:-29500}\""
    } else {
        ""
    };
    s.push_str("ARGS=(\n");
    for a in &args {
        s.push_str(&format!("  {a}\n"));
    }
    s.push_str("  \"$@\"\n)\n");
    s.push_str(&run_record_lines(&r.run_id, h.gpus));
    s.push_str(&format!(
        "accelerate launch --config_file \"$ACCELERATE_CONFIG\" --num_processes {} --num_machines {nodes}{ranks} -m trl.scripts.grpo \"${{ARGS[@]}}\"\n",
        h.gpus,
    ));
    s
}

/// What a veRL pilot needs besides the script, for its header.
const VERL_PREREQUISITES: &str = "\
# Prerequisites: pip install 'verl[verl-core]==0.9.*' with vLLM or SGLang (main_ppo needs the verl-core extra),
#   and a Ray cluster across the nodes. TRAIN_FILES / VAL_FILES: parquet files in veRL's RL dataset
#   format (several files as a Hydra list: [a.parquet,b.parquet]).
# Pass-through arguments (\"$@\") are Hydra overrides appended after the script's own.
";

/// What a TRL pilot needs besides the script, for its header.
const TRL_PREREQUISITES: &str = "\
# Prerequisites: pip install 'trl==1.16.*' deepspeed math-verify (math-verify scores accuracy_reward).
# DATASET: a Hugging Face dataset name or a local folder with `train` and `test` splits, a
#   conversational `prompt` column ([{\"role\": \"user\", \"content\": ...}]; plain text fails inside TRL)
#   and a `solution` column with each answer in \\boxed{} (accuracy_reward scores `7` or `$7$` as 0).
# Pass-through arguments (\"$@\") are appended to TRL's and recorded with them; keep --output_dir.
";

/// TRL's `beta` (the KL coefficient): the grid's `kl_coef`, 0 without a reference pass.
fn trl_beta(run: &crate::config::RunSettings) -> String {
    if run.kl_reference {
        crate::format::number(run.kl_coef)
    } else {
        "0.0".to_string()
    }
}

/// Lines that write the run record (`super::run_record`) before TRL starts: the run id, the
/// processes and every argument as passed, pass-through ones included, as JSON (Python's own
/// encoder: no argument is ever parsed by the shell or spliced into code).
fn run_record_lines(run_id: &str, processes: u64) -> String {
    format!(
        "python3 -c 'import json, sys; json.dump({{\"run_id\": sys.argv[2], \"framework\": \"trl\", \"num_processes\": int(sys.argv[3]), \"argv\": sys.argv[4:]}}, open(sys.argv[1], \"w\"), indent=1)' \"$RUN_DIR/{file}\" {id} {processes} \"${{ARGS[@]}}\"\n",
        file = super::run_record::RUN_RECORD_FILE,
        id = shell_word(run_id),
    )
}

/// TRL's arguments for what the grid sets beyond the batch: the vLLM rollout (unless priced
/// with transformers' `generate()`), the reward, LoRA and gradient checkpointing. A reward
/// model's note goes to the script `s`.
fn trl_setting_args(c: &LaunchContext, s: &mut String) -> Vec<String> {
    let (h, run) = (&c.grid.hardware, &c.grid.run);
    let mut args = Vec::new();
    // Priced with transformers' generate() (TRL's default): no vLLM flags.
    if !h.engine.static_batching {
        args.extend([
            "--use_vllm".to_string(),
            "--vllm_mode colocate".to_string(),
            format!(
                "--vllm_gpu_memory_utilization {}",
                h.rollout_gpu_memory_utilization
            ),
        ]);
    }
    match (&c.reward.kind, &c.reward.model) {
        (RewardKind::Rule, _) | (_, None) => {
            args.push("--reward_funcs accuracy_reward".to_string())
        }
        (_, Some(rm)) => {
            s.push_str("# TRL loads --reward_model_name_or_path as a sequence classifier (an outcome score per completion).\n");
            args.push(format!(
                "--reward_model_name_or_path {}",
                shell_word(&rm.name)
            ));
        }
    }
    if let Finetune::Lora(rank) = c.finetune {
        args.extend([
            "--use_peft".to_string(),
            format!("--lora_r {rank}"),
            format!("--lora_alpha {rank}"),
            "--lora_target_modules all-linear".to_string(),
        ]);
    }
    // transformers 5's name (`--gradient_checkpointing` is a deprecated alias), set either way:
    // TRL's configs turn it on by default.
    args.push(format!(
        "--activation_checkpointing {}",
        if run.gradient_checkpointing {
            "True"
        } else {
            "False"
        }
    ));
    args
}

/// Lines that write the run's Accelerate config: DeepSpeed ZeRO-3, which shards weights,
/// gradients and Adam's moments over the GPUs as the ledger prices them (`ledger::memory`;
/// without a config file `accelerate launch` runs plain data parallelism, a whole copy of the
/// training state per GPU), and moves parameters and optimizer to the CPU when the grid prices
/// offload (`ledger::offload`). The keys are Accelerate's (`accelerate config` writes the same
/// file; TRL's `examples/accelerate_configs/deepspeed_zero3.yaml` is this with offload off).
/// DeepSpeed has one parameter-offload switch for every model it wraps, so the reference's own
/// offload follows the policy's; a script says so when the grid set them apart, and when the
/// grid prices sequence parallelism, which the script does not set up.
fn zero3_config_lines(c: &LaunchContext) -> String {
    let (h, o) = (&c.grid.hardware, c.grid.run.offload);
    let device = |on: bool| if on { "cpu" } else { "none" };
    let mut s = String::new();
    let degree = c.grid.run.sequence_parallel;
    if degree > 1 {
        s.push_str(&format!(
            "# Note: the grid prices Ulysses sequence parallelism of degree {degree}, which this command does not set up; without it each GPU holds whole sequences (more memory than priced).\n"
        ));
    }
    if o.reference != o.params {
        s.push_str(&format!(
            "# Note: the grid prices the reference's offload {} and the policy's {}; DeepSpeed offloads both or neither (here: {}).\n",
            if o.reference { "on" } else { "off" },
            if o.params { "on" } else { "off" },
            device(o.params)
        ));
    }
    s.push_str(&format!(
        "ACCELERATE_CONFIG={}\n\
         cat > \"$ACCELERATE_CONFIG\" <<'YAML'\n\
         compute_environment: LOCAL_MACHINE\n\
         distributed_type: DEEPSPEED\n\
         deepspeed_config:\n\
         \x20 zero_stage: 3\n\
         \x20 zero3_init_flag: true\n\
         \x20 zero3_save_16bit_model: true\n\
         \x20 offload_param_device: {}\n\
         \x20 offload_optimizer_device: {}\n\
         \x20 deepspeed_multinode_launcher: standard\n\
         mixed_precision: bf16\n\
         num_machines: {}\n\
         num_processes: {}\n\
         YAML\n",
        "\"$RUN_DIR/accelerate_zero3.yaml\"",
        device(o.params),
        device(o.optimizer),
        h.gpus.div_ceil(8),
        h.gpus,
    ));
    s
}

/// How one array task starts its pilot: a plain `bash` on one node; across nodes, one TRL
/// launch per node (`srun`, each told its rank and the first node's address, as the launch
/// script asks), or veRL's single driver on a Ray cluster the user starts first.
fn array_task_launch(framework: Framework, nodes: u64) -> String {
    match (framework, nodes > 1) {
        (_, false) => "bash \"launch/$RUN.sh\"\n".to_string(),
        (Framework::Trl, true) => "MAIN_PROCESS_IP=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n\
             export MAIN_PROCESS_IP RUN\n\
             srun --ntasks-per-node=1 bash -c 'MACHINE_RANK=\"$SLURM_NODEID\" bash \"launch/$RUN.sh\"'\n"
            .to_string(),
        (Framework::Verl, true) => format!(
            "# veRL drives its {nodes} nodes through Ray: start a Ray cluster across this job's nodes\n\
             # (ray start --head on the first, ray start --address on the others) before this line.\n\
             bash \"launch/$RUN.sh\"\n"
        ),
    }
}

/// The Slurm array script that runs every pilot (one array task per run).
pub fn slurm_array(grid: &Grid, runs: &[PilotRun], framework: Framework) -> String {
    let h = &grid.hardware;
    let hours = runs
        .iter()
        .map(|r| r.expected_wall_hours)
        .fold(0.0, f64::max)
        * 1.5
        + 0.5;
    let minutes = (hours * 60.0).ceil() as u64;
    let ids: Vec<String> = runs.iter().map(|r| shell_word(&r.run_id)).collect();
    format!(
        "#!/usr/bin/env bash\n\
         # Runs the {n} pilots of grid `{grid_comment}` as a Slurm array, from this plan folder:\n\
         #   sbatch --chdir=PLAN PLAN/slurm_array.sh   (or: cd PLAN && sbatch slurm_array.sh)\n\
         # Each task's output goes to slurm-<job>_<task>.out here. Time limit: 1.5 x the longest expected run + 30 minutes.\n\
         #SBATCH --job-name=rlfrontier-{grid_job}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --nodes={nodes}\n\
         #SBATCH --gres=gpu:{per_node}\n\
         #SBATCH --time={hh:02}:{mm:02}:00\n\
         #SBATCH --output=slurm-%A_%a.out\n\
         set -euo pipefail\n\
         # Slurm runs a copy of this script in the submission's working directory (--chdir).\n\
         if [ ! -d launch ]; then\n\
         \x20 echo \"run from the plan folder: sbatch --chdir=PLAN PLAN/slurm_array.sh (launch/ not found in $PWD)\" >&2\n\
         \x20 exit 2\n\
         fi\n\
         RUNS=({ids})\n\
         RUN=\"${{RUNS[$SLURM_ARRAY_TASK_ID]}}\"\n\
         echo \"pilot $RUN\"\n\
         {launch}",
        n = runs.len(),
        grid_comment = comment_text(&grid.name),
        // Slurm reads the job name up to the end of the line; the grid's name is of the
        // validated alphabet (letters, digits, `-`, `_`, `.`) already, control characters never.
        grid_job = comment_text(&grid.name).replace(' ', "_"),
        last = runs.len().saturating_sub(1),
        nodes = h.gpus.div_ceil(8),
        per_node = h.gpus.min(8),
        hh = minutes / 60,
        mm = minutes % 60,
        ids = ids.join(" "),
        launch = array_task_launch(framework, h.gpus.div_ceil(8)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trl_batching_splits_completions_exactly() {
        assert_eq!(trl_batching(64, 8), (8, 1, true));
        assert_eq!(trl_batching(8192, 16), (16, 32, true));
        assert_eq!(trl_batching(10, 4), (1, 3, false));
    }

    #[test]
    fn prompt_cap_has_headroom() {
        assert_eq!(prompt_cap(256.0), 512);
        assert_eq!(prompt_cap(300.0), 1024);
        assert_eq!(prompt_cap(10.0), 64);
    }
}
