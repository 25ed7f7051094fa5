//! Importers on hand-written files in the shapes veRL and TRL users write.

use super::*;

fn launch(processes: u64) -> TrlLaunch {
    TrlLaunch {
        processes: Some(processes),
        num_generations: None,
    }
}

fn value(run: &ImportedRun, pick: impl Fn(&Setting) -> bool) -> (Setting, Option<usize>) {
    let found = run.find(pick).expect("setting imported");
    (found.setting.clone(), found.line)
}

/// A GSM8K-style quick-start script: literal overrides, no shell variables.
const VERL_QUICKSTART: &str = r#"#!/usr/bin/env bash
set -x
python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files=$HOME/data/gsm8k/train.parquet \
    data.train_batch_size=1024 \
    data.max_prompt_length=512 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.actor.fsdp_config.param_offload=False \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.rollout.temprature=1.0 \
    trainer.logger='["console","wandb"]' \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.save_freq=20 \
    trainer.test_freq=5 \
    trainer.total_epochs=15 $@
"#;

#[test]
fn a_verl_quickstart_script_gives_its_levers_with_lines() {
    let run = import_verl(VERL_QUICKSTART).unwrap();
    assert_eq!(
        value(&run, |s| matches!(s, Setting::GroupSize(_))),
        (Setting::GroupSize(5), Some(18))
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::PromptsPerStep(_))),
        (Setting::PromptsPerStep(1024), Some(6))
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::MaxResponseLen(_))).0,
        Setting::MaxResponseLen(1024)
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::Algorithm(_))).0,
        Setting::Algorithm(Algorithm::Grpo)
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::KlReference(_))).0,
        Setting::KlReference(true)
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::Engine(_))).0,
        Setting::Engine("vllm-cudagraph".into())
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::ValidationEverySteps(_))).0,
        Setting::ValidationEverySteps(5)
    );
    // ppo_epochs is not in the file: veRL's default, without a line.
    assert_eq!(
        value(&run, |s| matches!(s, Setting::UpdateEpochs(_))),
        (Setting::UpdateEpochs(1), None)
    );
    // No total_training_steps: the user is told how to give the length.
    assert!(run.notes.iter().any(|n| n.contains("⟨steps⟩")));
    assert!(run.find(|s| matches!(s, Setting::Steps(_))).is_none());
    // total_epochs is read: the steps follow once the dataset's size is given.
    assert_eq!(
        value(&run, |s| matches!(s, Setting::DataEpochs(_))).0,
        Setting::DataEpochs(15)
    );
    assert!(run.notes.iter().any(|n| n.contains("⟨dataset_prompts⟩")));
    // The misspelt key is listed as unknown with its line and the key it was meant to be; the
    // learning rate as not priced.
    assert_eq!(
        run.unknown
            .iter()
            .map(|k| (k.key.as_str(), k.line, k.why.as_str()))
            .collect::<Vec<_>>(),
        vec![(
            "actor_rollout_ref.rollout.temprature",
            19,
            "did you mean `actor_rollout_ref.rollout.temperature`?"
        )]
    );
    assert!(
        run.not_priced
            .iter()
            .any(|k| k.key == "actor_rollout_ref.actor.optim.lr")
    );
    // param_offload is priced: read into its setting, listed neither as not priced nor as not
    // modelled.
    assert_eq!(
        value(&run, |s| matches!(s, Setting::ParamOffload(_))).0,
        Setting::ParamOffload(false)
    );
    assert!(
        !run.not_modelled
            .iter()
            .chain(&run.not_priced)
            .any(|k| k.key == "actor_rollout_ref.actor.fsdp_config.param_offload")
    );
}

/// The shape of veRL's DAPO recipe scripts: levers as shell variables, arithmetic, defaults.
const VERL_DAPO_SHAPED: &str = r#"#!/usr/bin/env bash
set -xeuo pipefail
adv_estimator=grpo
use_kl_in_reward=False
use_kl_loss=False
max_prompt_length=$((1024 * 2))
max_response_length=$((1024 * 20))
train_prompt_bsz=512
gen_prompt_bsz=$((train_prompt_bsz * 3))
n_resp_per_prompt=16
train_prompt_mini_bsz=32
NNODES=${NNODES:-16}
MODEL_PATH=${MODEL_PATH:-"${HOME}/models/Qwen2.5-32B"}
offload=True
gen_tp=4
python3 -m recipe.dapo.main_dapo \
    data.max_prompt_length=${max_prompt_length} \
    data.max_response_length=${max_response_length} \
    data.gen_batch_size=${gen_prompt_bsz} \
    data.train_batch_size=${train_prompt_bsz} \
    actor_rollout_ref.rollout.n=${n_resp_per_prompt} \
    algorithm.adv_estimator=${adv_estimator} \
    algorithm.use_kl_in_reward=${use_kl_in_reward} \
    actor_rollout_ref.actor.use_kl_loss=${use_kl_loss} \
    algorithm.filter_groups.enable=True \
    actor_rollout_ref.actor.ppo_mini_batch_size=${train_prompt_mini_bsz} \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=$(((max_prompt_length + max_response_length) * 2)) \
    actor_rollout_ref.rollout.tensor_model_parallel_size=${gen_tp} \
    actor_rollout_ref.rollout.enforce_eager=False \
    actor_rollout_ref.model.path="${MODEL_PATH}" \
    actor_rollout_ref.actor.fsdp_config.param_offload=${offload} \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes="${NNODES}" \
    trainer.total_training_steps=400
"#;

#[test]
fn a_dapo_shaped_script_resolves_its_shell_variables() {
    let run = import_verl(VERL_DAPO_SHAPED).unwrap();
    let get = |pick: fn(&Setting) -> bool| value(&run, pick).0;
    assert_eq!(
        get(|s| matches!(s, Setting::MaxResponseLen(_))),
        Setting::MaxResponseLen(20480)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::GenerationBatchPrompts(_))),
        Setting::GenerationBatchPrompts(1536)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::DynamicSampling(_))),
        Setting::DynamicSampling(true)
    );
    assert_eq!(get(|s| matches!(s, Setting::Gpus(_))), Setting::Gpus(128));
    assert_eq!(
        get(|s| matches!(s, Setting::KlReference(_))),
        Setting::KlReference(false)
    );
    assert_eq!(get(|s| matches!(s, Setting::Steps(_))), Setting::Steps(400));
    assert_eq!(
        get(|s| matches!(s, Setting::RolloutTensorParallel(_))),
        Setting::RolloutTensorParallel(4)
    );
    // $HOME is never read from the environment; the model is still named by the path's end.
    assert_eq!(
        get(|s| matches!(s, Setting::Model(_))),
        Setting::Model("${HOME}/models/Qwen2.5-32B".into())
    );
}

#[test]
fn unresolved_values_of_priced_keys_name_the_key_and_line() {
    let error = import_verl("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=$N\n")
        .unwrap_err();
    assert_eq!(error.key, "actor_rollout_ref.rollout.n");
    assert_eq!(error.line, Some(1));
    assert!(error.message.contains("$N"));
    let error = import_verl("data.train_batch_size=lots\n").unwrap_err();
    assert_eq!(error.key, "data.train_batch_size");
    assert!(error.message.contains("whole number"));
    let error = import_verl("echo hello\n").unwrap_err();
    assert!(error.message.contains("Hydra override"));
}

#[test]
fn verl_defaults_apply_to_an_almost_empty_override_list() {
    // One override: everything else is veRL's default, which is PPO (adv_estimator gae) with
    // one response per prompt.
    let run = import_verl("data.max_response_length=2048\n").unwrap();
    let get = |pick: fn(&Setting) -> bool| value(&run, pick);
    assert_eq!(
        get(|s| matches!(s, Setting::Algorithm(_))),
        (Setting::Algorithm(Algorithm::Ppo), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::GroupSize(_))),
        (Setting::GroupSize(1), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::PromptsPerStep(_))),
        (Setting::PromptsPerStep(1024), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::Gpus(_))),
        (Setting::Gpus(8), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::MaxResponseLen(_))),
        (Setting::MaxResponseLen(2048), Some(1))
    );
}

const TRL_YAML: &str = "# GRPO on 8 GPUs\nmodel_name_or_path: Qwen/Qwen2.5-Math-7B\nnum_generations: 16\nmax_completion_length: 4096\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\nnum_iterations: 2\nbeta: 0.04\nmax_steps: 500\nuse_vllm: true\nvllm_mode: colocate\nvllm_gpu_memory_utilization: 0.4\nlearning_rate: 1.0e-06\nreward_funcs:\n  - accuracy\n  - format\neval_strategy: steps\neval_steps: 100\nuse_peft: true\nlora_r: 64\nnum_proceses: 8\n";

#[test]
fn a_trl_yaml_config_gives_batches_in_prompts_and_steps_in_iterations() {
    let run = import_trl(TRL_YAML, launch(8)).unwrap();
    let get = |pick: fn(&Setting) -> bool| value(&run, pick).0;
    // Generation batch = 16 per device × 8 processes × 4 steps per generation = 512
    // completions = 32 prompts of 16; optimizer batch the same (steps_per_generation = 4 =
    // accumulation).
    assert_eq!(
        get(|s| matches!(s, Setting::PromptsPerStep(_))),
        Setting::PromptsPerStep(32)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::MiniBatchPrompts(_))),
        Setting::MiniBatchPrompts(32)
    );
    // 500 optimizer steps, each generation reused num_iterations = 2 times: 250 iterations;
    // evaluation every 100 optimizer steps = every 50 iterations.
    assert_eq!(get(|s| matches!(s, Setting::Steps(_))), Setting::Steps(250));
    assert_eq!(
        get(|s| matches!(s, Setting::ValidationEverySteps(_))),
        Setting::ValidationEverySteps(50)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::KlReference(_))),
        Setting::KlReference(true)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::KlCoef(_))),
        Setting::KlCoef(0.04)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::Finetune(_))),
        Setting::Finetune(Finetune::Lora(64))
    );
    assert_eq!(
        get(|s| matches!(s, Setting::Reward(_))),
        Setting::Reward("rule".into())
    );
    assert_eq!(
        get(|s| matches!(s, Setting::Schedule(_))),
        Setting::Schedule(Schedule::Colocated)
    );
    assert_eq!(
        run.unknown
            .iter()
            .map(|k| (k.key.as_str(), k.line))
            .collect::<Vec<_>>(),
        vec![("num_proceses", 21)]
    );
    assert!(run.not_priced.iter().any(|k| k.key == "learning_rate"));
}

#[test]
fn trl_json_and_command_lines_read_the_same_as_yaml() {
    let json = r#"{
  "model_name_or_path": "Qwen/Qwen2.5-Math-7B",
  "num_generations": 16,
  "max_completion_length": 4096,
  "per_device_train_batch_size": 16,
  "gradient_accumulation_steps": 4,
  "num_iterations": 2,
  "beta": 0.04,
  "max_steps": 500,
  "use_vllm": true,
  "reward_funcs": ["accuracy", "format"]
}"#;
    let command = "accelerate launch --num_processes 8 -m trl.scripts.grpo \\\n  --model_name_or_path Qwen/Qwen2.5-Math-7B --num_generations 16 \\\n  --max_completion_length 4096 --per_device_train_batch_size 16 \\\n  --gradient_accumulation_steps 4 --num_iterations 2 --beta 0.04 --max_steps 500 \\\n  --use_vllm --reward_funcs accuracy format\n";
    let levers = |run: &ImportedRun| {
        run.settings
            .iter()
            .filter(|i| {
                matches!(
                    i.setting,
                    Setting::PromptsPerStep(_)
                        | Setting::GroupSize(_)
                        | Setting::MaxResponseLen(_)
                        | Setting::UpdateEpochs(_)
                        | Setting::Steps(_)
                        | Setting::KlReference(_)
                        | Setting::Model(_)
                )
            })
            .map(|i| i.setting.clone())
            .collect::<Vec<_>>()
    };
    let from_json = import_trl(json, launch(8)).unwrap();
    let from_command = import_trl(command, TrlLaunch::default()).unwrap();
    assert_eq!(levers(&from_json), levers(&from_command));
    assert!(levers(&from_json).contains(&Setting::PromptsPerStep(32)));
    // The command line says 8 processes itself: no assumption note.
    assert!(!from_command.notes.iter().any(|n| n.contains("assumed")));
}

#[test]
fn trl_defaults_and_refusals() {
    // TRL's defaults: 8 generations, 512 tokens, beta 0 (no reference model), no vLLM.
    let run = import_trl(
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nmax_steps: 10\n",
        launch(8),
    )
    .unwrap();
    let get = |pick: fn(&Setting) -> bool| value(&run, pick);
    assert_eq!(
        get(|s| matches!(s, Setting::GroupSize(_))),
        (Setting::GroupSize(8), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::MaxResponseLen(_))),
        (Setting::MaxResponseLen(512), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::KlReference(_))),
        (Setting::KlReference(false), None)
    );
    // Without vLLM, TRL generates with transformers' generate() on the training GPUs.
    assert_eq!(
        get(|s| matches!(s, Setting::Engine(_))),
        (Setting::Engine("transformers-generate".into()), None)
    );
    assert_eq!(
        get(|s| matches!(s, Setting::Schedule(_))),
        (Setting::Schedule(Schedule::Colocated), None)
    );
    // 8 per device × 3 processes = 24 completions, not a multiple of 16 generations.
    let error = import_trl(
        "num_generations: 16\nper_device_train_batch_size: 8\n",
        launch(3),
    )
    .unwrap_err();
    assert!(
        error
            .message
            .contains("not a multiple of num_generations 16"),
        "{}",
        error.message
    );
    let error = import_trl("use_vllm: true\nvllm_mode: remote\n", launch(8)).unwrap_err();
    assert_eq!((error.key.as_str(), error.line), ("vllm_mode", Some(2)));
    let error = import_trl("{\"num_generations\": 8,,}", TrlLaunch::default()).unwrap_err();
    assert!(error.message.contains("not valid JSON"));
}

#[test]
fn huge_counts_are_refused_not_overflowed() {
    // A fuzzer found per-device batch × processes × accumulation overflowing u64.
    let error = import_trl(
        "per_device_train_batch_size: 13\ngradient_accumulation_steps: 92233720368\n",
        launch(8),
    )
    .unwrap_err();
    assert!(
        error.message.contains("beyond any real run"),
        "{}",
        error.message
    );
    let error = import_trl(
        "per_device_train_batch_size: 100000\ngradient_accumulation_steps: 100000\nnum_generations: 2\n",
        launch(100000),
    )
    .unwrap_err();
    assert!(
        error.message.contains("beyond any real batch"),
        "{}",
        error.message
    );
}

#[test]
fn only_the_launch_command_s_own_overrides_are_read() {
    // A second command after the launch (an evaluation script taking its own overrides) does not
    // override the launch's batch; a note says what was left out and where.
    let script = "#!/bin/bash\nset -x\nexport VLLM_USE_V1=1\npython3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=512 \\\n    actor_rollout_ref.rollout.n=8\necho done\npython3 eval.py data.train_batch_size=4 data.max_response_length=99\n";
    let run = import_verl(script).unwrap();
    assert_eq!(
        value(&run, |s| matches!(s, Setting::PromptsPerStep(_))),
        (Setting::PromptsPerStep(512), Some(5))
    );
    assert_eq!(
        value(&run, |s| matches!(s, Setting::MaxResponseLen(_))),
        (Setting::MaxResponseLen(512), None),
        "the other command's cap is not read either (veRL's default)"
    );
    let note = run
        .notes
        .iter()
        .find(|n| n.contains("left out"))
        .expect("a note");
    assert!(
        note.contains("line 4") && note.contains("2 key=value") && note.contains("line 8"),
        "{note}"
    );
    // A file of overrides without a launch command is read whole, one or more per line.
    let overrides =
        import_verl("data.train_batch_size=64\nactor_rollout_ref.rollout.n=4\n").unwrap();
    assert_eq!(
        value(&overrides, |s| matches!(s, Setting::GroupSize(_))),
        (Setting::GroupSize(4), Some(2))
    );
    assert!(!overrides.notes.iter().any(|n| n.contains("left out")));
}

#[test]
fn a_file_of_the_other_framework_is_named() {
    let err = import_trl(VERL_QUICKSTART, launch(8)).unwrap_err();
    assert_eq!(err.line, Some(3), "{err:?}");
    assert!(err.message.contains("⟨from_verl⟩"), "{}", err.message);
    let err = import_verl(TRL_YAML).unwrap_err();
    assert!(err.message.contains("⟨from_trl⟩"), "{}", err.message);
}

#[test]
fn advice_on_an_imported_file_names_that_framework_s_keys() {
    // Issue 53: a TRL config priced infeasible was told to lower `max_tokens_per_gpu`, which is
    // not a TRL key.
    let advice = "training needs 90.0 GB per GPU but 76.0 GB are usable; add GPUs, use LoRA, or lower max_tokens_per_gpu";
    assert!(
        ConfigFormat::Trl
            .in_its_words(advice)
            .ends_with("or lower per_device_train_batch_size")
    );
    assert!(
        ConfigFormat::Verl
            .in_its_words(advice)
            .ends_with("or lower actor_rollout_ref.actor.ppo_max_token_len_per_gpu")
    );
    // Whole words only: a longer name that contains a setting is left alone.
    assert_eq!(
        ConfigFormat::Trl.in_its_words("max_response_len_end, max_response_len."),
        "max_response_len_end, max_completion_length."
    );
}
