//! Ledger tests: one cell computed by hand, then properties over random runs.

use proptest::prelude::*;

use super::flops::TokenSums;
use super::*;
use crate::catalog::Catalog;
use crate::config::{
    Algorithm, Budget, Hardware, OldLogprob, RewardKind, RunSettings, Schedule, Task,
};

fn hardware(gpu: &str, gpus: u64, schedule: Schedule) -> Hardware {
    let gpu = Catalog::embedded().gpu(gpu).unwrap().clone();
    Hardware {
        usd_per_gpu_hour: gpu.usd_per_gpu_hour,
        gpu,
        gpus,
        schedule,
        async_rollout_fraction: 0.5,
        rollout_gpu_memory_utilization: 0.6,
        max_num_seqs: 256,
        usable_memory_fraction: 0.9,
        engine: Catalog::embedded().default_engine().clone(),
        rollout_tensor_parallel: 1,
    }
}

fn settings() -> RunSettings {
    RunSettings {
        framework: crate::config::Framework::Verl,
        algorithm: Algorithm::Grpo,
        kl_reference: true,
        kl_coef: 0.001,
        prefix_cache: true,
        dynamic_sampling: false,
        old_logprob: OldLogprob::Auto,
        gradient_checkpointing: true,
        offload: crate::config::Offload::default(),
        sequence_parallel: 1,
        step_overhead_seconds: 5.0,
        max_tokens_per_gpu: 16384.0,
        critic_max_tokens_per_gpu: 16384.0,
        micro_batching: crate::config::MicroBatching::default(),
        startup_seconds: Some(0.0),
        checkpoint_every_steps: 0,
        checkpoint_seconds: Some(0.0),
        checkpoint_write_gb_per_second: 1.0,
        validation_every_steps: 0,
        validation_prompts: 0,
        validation_samples_per_prompt: 1,
        validation_before_training: false,
        restarts_per_gpu_day: 0.0,
        generation_batch_prompts: None,
        dynamic_sampling_filter_rate: None,
        mini_batch_prompts: 256,
        // No training-pass overheads: the hand-computed values are FLOPs over peak.
        pass_overhead_seconds: 0.0,
        train_launch_seconds_per_layer: 0.0,
        judge_rubric_tokens: 512.0,
        judge_verdict_tokens: 64.0,
        critic: None,
        agent: crate::config::Agent::default(),
    }
}

fn task(mean: f64, cv: f64) -> Task {
    Task {
        prompt_tokens: 100.0,
        mean_response_tokens: mean,
        response_length_cv: cv,
        pass_rate_mean: 0.35,
        pass_rate_concentration: 2.0,
        dataset_prompts: None,
        start: crate::config::RlStart::Tuned,
        mean_response_tokens_end: None,
        max_prompt_tokens: None,
    }
}

struct Fixture {
    policy: ModelSpec,
    reward: Reward,
    hardware: Hardware,
    task: Task,
    run: RunSettings,
}

impl Fixture {
    fn new(model: &str) -> Self {
        Fixture {
            policy: Catalog::embedded().model(model).unwrap().clone(),
            reward: Reward {
                kind: RewardKind::Rule,
                model: None,
            },
            hardware: hardware("h100-sxm", 8, Schedule::Colocated),
            task: task(500.0, 1e-6),
            run: settings(),
        }
    }

    fn config(&self, b: u64, g: u64, cap: u64, epochs: u64, stop: Stop) -> RunConfig<'_> {
        RunConfig {
            policy: &self.policy,
            finetune: Finetune::Full,
            reward: &self.reward,
            group_size: g,
            max_response_len: cap,
            update_epochs: epochs,
            prompts_per_step: b,
            stop,
            hardware: &self.hardware,
            task: &self.task,
            run: &self.run,
            measured_base_score: None,
            ability_score: None,
        }
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn hand_computed_cell() {
    // Qwen2.5-0.5B, one prompt of 100 tokens, G = 2 responses of 500 tokens (cv → 0, no cap),
    // full fine-tuning, one epoch, KL reference on, prefix caching on. By hand (docs/design.md §5):
    //   N = 493,961,216, output head 136,134,656, A = 21,504.
    //   prefill  = 2·357,826,560·100 + 2·136,134,656 + 2·21,504·100²          =    72,267,661,312
    //   decode   = 2 × [2·N·500 + 4·A·(100·500 + 500²/2)]                      = 1,018,028,032,000
    //   ref      = 2·N·1200 + 2·A·(2·600²)                                     = 1,216,472,678,400
    //   update   = 3 × ref                                                     = 3,649,418,035,200
    let f = Fixture::new("qwen2.5-0.5b");
    let l = evaluate(&f.config(1, 2, 1_000_000, 1, Stop::Iterations(1)));
    let rel = 1e-9;
    assert!(close(l.phase(Phase::Prefill).flops, 72_267_661_312.0, rel));
    assert!(close(
        l.phase(Phase::Decode).flops,
        1_018_028_032_000.0,
        rel
    ));
    assert!(close(
        l.phase(Phase::RefLogprob).flops,
        1_216_472_678_400.0,
        rel
    ));
    assert!(close(
        l.phase(Phase::Update).flops,
        3_649_418_035_200.0,
        rel
    ));
    assert_eq!(
        l.phase(Phase::OldLogprob).flops,
        0.0,
        "one epoch: no old-policy pass"
    );
    assert_eq!(
        l.phase(Phase::Reward).flops,
        0.0,
        "rule reward: no GPU FLOPs"
    );
    assert!(close(l.total_flops(), 5_956_186_406_912.0, rel));
    assert!(close(
        l.flops_share(Bucket::Learning),
        (1_216_472_678_400.0 + 3_649_418_035_200.0) / 5_956_186_406_912.0,
        rel
    ));
    // Update time: the matmuls of update + recompute forward at MFU 0.40; attention (a = 2·A·Q =
    // 2·21,504·720,000 per forward) twice forward (the pass and its recompute) at 0.35 and its
    // backward (2a) at 0.28, both × the ramp s/(s + 200) at Q/T = 600 tokens (0.75) and × the
    // end-to-end share 0.45.
    let a = 2.0 * 21_504.0 * 720_000.0;
    let peak = 8.0 * 989e12;
    let expected_update = (3_649_418_035_200.0 + 1_216_472_678_400.0 - 4.0 * a) / (peak * 0.40)
        + 2.0 * a / (peak * 0.35 * 0.75 * 0.45)
        + 2.0 * a / (peak * 0.28 * 0.75 * 0.45);
    assert!(close(l.phase(Phase::Update).seconds, expected_update, 1e-9));
    // Colocated: every phase holds all 8 GPUs.
    assert!(close(
        l.total_gpu_hours_per_step(),
        l.step_seconds * 8.0 / 3600.0,
        1e-12
    ));
}

#[test]
fn epochs_add_an_old_policy_pass_and_scale_updates() {
    let f = Fixture::new("qwen2.5-1.5b");
    let one = evaluate(&f.config(64, 8, 2048, 1, Stop::Iterations(1)));
    let four = evaluate(&f.config(64, 8, 2048, 4, Stop::Iterations(1)));
    assert!(close(
        four.phase(Phase::Update).flops,
        4.0 * one.phase(Phase::Update).flops,
        1e-12
    ));
    assert!(four.phase(Phase::OldLogprob).flops > 0.0);
    assert!(close(
        four.phase(Phase::OldLogprob).flops,
        one.phase(Phase::RefLogprob).flops,
        1e-12
    ));
}

#[test]
fn prefix_caching_saves_g_minus_one_prefills() {
    let mut f = Fixture::new("qwen2.5-1.5b");
    let cached = evaluate(&f.config(64, 8, 2048, 1, Stop::Iterations(1)))
        .phase(Phase::Prefill)
        .flops;
    f.run.prefix_cache = false;
    let uncached = evaluate(&f.config(64, 8, 2048, 1, Stop::Iterations(1)))
        .phase(Phase::Prefill)
        .flops;
    assert!(close(uncached, 8.0 * cached, 1e-12));
}

#[test]
fn prm_feedback_is_one_forward_over_every_rollout() {
    let mut f = Fixture::new("qwen2.5-1.5b");
    let prm = Catalog::embedded()
        .model("qwen2.5-math-prm-7b")
        .unwrap()
        .clone();
    f.reward = Reward {
        kind: RewardKind::Prm,
        model: Some(prm.clone()),
    };
    let l = evaluate(&f.config(16, 4, 1_000_000, 1, Stop::Iterations(1)));
    let expected = flops::forward_flops(&prm, TokenSums::of_lengths(&[600; 64]));
    assert!(close(l.flops(Bucket::Feedback), expected, 1e-9));
    assert!(l.flops_share(Bucket::Feedback) > 0.0);
}

#[test]
fn dynamic_sampling_generates_whole_batches_until_the_signal_suffices() {
    // veRL's DAPO recipe: batches of gen_batch_size prompts (default the train batch) until
    // B groups carry signal. Here z ≈ 0.5 at G = 4 (mean pass rate 0.35, concentration 2), so one
    // train-sized batch keeps about half of B: two batches, 2·B·G rollouts generated. With
    // batches of B/4 prompts: ceil(4 / (1 − z)) quarter batches.
    let mut f = Fixture::new("qwen2.5-1.5b");
    let plain = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    let z = plain.tokens.zero_signal_rate;
    assert!((0.3..0.7).contains(&z), "{z}");
    f.run.dynamic_sampling = true;
    let dynamic = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    let batches = (1.0 / (1.0 - z)).ceil();
    assert!(close(
        dynamic.tokens.generated_rollouts_per_step,
        batches * 64.0 * 4.0,
        1e-12
    ));
    assert!(close(
        dynamic.phase(Phase::Decode).flops,
        plain.phase(Phase::Decode).flops * batches,
        1e-12
    ));
    f.run.generation_batch_prompts = Some(16);
    let quarters = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    assert!(close(
        quarters.tokens.generated_rollouts_per_step,
        (4.0 / (1.0 - z)).ceil() * 16.0 * 4.0,
        1e-12
    ));
    // Learning sees the kept batch only.
    assert!(close(
        dynamic.phase(Phase::Update).flops,
        plain.phase(Phase::Update).flops,
        1e-12
    ));
}

#[test]
fn a_length_schedule_averages_the_step_over_the_run() {
    // Simpson's rule is exact for a linear quantity: with a cap far above every length, generated
    // tokens per step average the start's and the end's.
    let mut f = Fixture::new("qwen2.5-1.5b");
    let at = |f: &Fixture, mean: f64| {
        let mut g = Fixture::new("qwen2.5-1.5b");
        g.task = Task {
            mean_response_tokens: mean,
            ..f.task
        };
        evaluate(&g.config(64, 8, 1 << 20, 1, Stop::Iterations(10)))
    };
    let (short, long) = (at(&f, 500.0), at(&f, 3000.0));
    f.task.mean_response_tokens = 500.0;
    f.task.mean_response_tokens_end = Some(3000.0);
    let grown = evaluate(&f.config(64, 8, 1 << 20, 1, Stop::Iterations(10)));
    assert!(close(
        grown.tokens.generated_tokens_per_step,
        0.5 * (short.tokens.generated_tokens_per_step + long.tokens.generated_tokens_per_step),
        1e-9
    ));
    // Its dollars lie between the short and the long run's.
    assert!(short.total_usd() < grown.total_usd() && grown.total_usd() < long.total_usd());
    // A schedule that does not move equals no schedule.
    f.task.mean_response_tokens_end = Some(500.0);
    let flat = evaluate(&f.config(64, 8, 1 << 20, 1, Stop::Iterations(10)));
    assert!(close(flat.total_usd(), short.total_usd(), 1e-12));
    assert!(close(
        flat.waste.zero_signal_usd,
        short.waste.zero_signal_usd,
        1e-12
    ));
}

#[test]
fn startup_is_charged_once_per_run_and_checkpoints_per_step() {
    // 10 steps on 8 GPUs, 600 s of start-up: exactly 600 × 8 GPU-seconds and 600 wall seconds
    // more than without it. Checkpoints of 50 s every 5 steps: 10 s more per step.
    let mut f = Fixture::new("qwen2.5-1.5b");
    let plain = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(10)));
    f.run.startup_seconds = Some(600.0);
    let started = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(10)));
    let gpus = f.hardware.gpus as f64;
    assert!(close(
        started.total_gpu_hours() - plain.total_gpu_hours(),
        600.0 * gpus / 3600.0,
        1e-9
    ));
    assert!(close(
        started.wall_hours() - plain.wall_hours(),
        600.0 / 3600.0,
        1e-9
    ));
    assert_eq!(started.phase(Phase::Startup).seconds, 60.0);
    assert_eq!(started.total_flops(), plain.total_flops());
    // Under a GPU-hour budget the start-up comes out of it first.
    let per = plain.total_gpu_hours_per_step();
    let budget = Stop::Budget(Budget {
        amount: 20.5 * per + 600.0 * gpus / 3600.0,
        unit: crate::config::BudgetUnit::GpuHours,
    });
    assert_eq!(evaluate(&f.config(64, 4, 4096, 1, budget)).iterations, 20);
    f.run.startup_seconds = Some(0.0);
    f.run.checkpoint_every_steps = 5;
    f.run.checkpoint_seconds = Some(50.0);
    let saved = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(10)));
    assert!(close(saved.step_seconds - plain.step_seconds, 10.0, 1e-9));
}

#[test]
fn a_reused_ledger_at_each_stop_has_the_whole_ledgers_bits() {
    // A sweep keeps one ledger per chunk and rewrites only what a stop sets
    // (`StepLedger::at_stop_into_without_waste`), from the start-up's cost per unit cached with
    // the step. With a start-up and without, through budgets in every unit (one below the
    // start-up alone, so infeasible) and fixed iterations, in turn on the same ledger, every
    // field has the bits of the ledger priced whole at that stop (waste aside, which a first
    // pass leaves at zero); Debug prints each f64 exactly, -0.0 apart from 0.0. The iterations
    // are the budget left after the start-up, divided by one step's cost, by hand.
    use crate::config::BudgetUnit;
    for startup_seconds in [0.0, 600.0, 1234.5] {
        let mut f = Fixture::new("qwen2.5-7b");
        f.run.startup_seconds = Some(startup_seconds);
        let step = step_ledger(&f.config(64, 8, 4096, 2, Stop::Iterations(1))).unwrap();
        let gpus = f.hardware.gpus as f64;
        let startup_gpu_hours = startup_seconds * gpus / 3600.0;
        let mut reused = *step.step();
        for (amount, unit) in [
            (3.7e21, BudgetUnit::Flops),
            (0.5 * startup_gpu_hours, BudgetUnit::GpuHours),
            (12_345.6, BudgetUnit::GpuHours),
            (250_000.0, BudgetUnit::Usd),
            (1e19, BudgetUnit::Flops),
        ] {
            let stop = Stop::Budget(Budget { amount, unit });
            step.at_stop_into_without_waste(stop, &mut reused);
            let mut whole = step.with_stop(&f.config(64, 8, 4096, 2, stop));
            whole.waste = Waste::default();
            assert_eq!(
                format!("{reused:?}"),
                format!("{whole:?}"),
                "{amount} {unit:?}"
            );
            let fixed = match unit {
                BudgetUnit::Flops => 0.0,
                BudgetUnit::GpuHours => startup_gpu_hours,
                BudgetUnit::Usd => startup_gpu_hours * whole.usd_per_gpu_hour,
            };
            let per = step.step().per_iteration(unit);
            assert_eq!(
                reused.iterations,
                affordable_iterations(amount - fixed, per)
            );
            assert_eq!(reused.infeasible.is_some(), reused.iterations == 0);
        }
        let stop = Stop::Iterations(7);
        step.at_stop_into_without_waste(stop, &mut reused);
        let mut whole = step.with_stop(&f.config(64, 8, 4096, 2, stop));
        whole.waste = Waste::default();
        assert_eq!(format!("{reused:?}"), format!("{whole:?}"));
    }
}

#[test]
fn step_sums_give_the_ledger_methods_bits_at_any_stop() {
    // A sweep reads a cell's costs and shares from its step's sums (`StepSums`): with a start-up
    // charged (the one phase a stop changes) and without, under budgets in every unit, each is
    // the `Ledger` method's value bit for bit.
    use crate::config::BudgetUnit;
    for startup_seconds in [0.0, 600.0, 1234.5] {
        let mut f = Fixture::new("qwen2.5-7b");
        f.run.startup_seconds = Some(startup_seconds);
        let step = step_ledger(&f.config(64, 8, 4096, 2, Stop::Iterations(1))).unwrap();
        let sums = step.sums();
        for (amount, unit) in [
            (1e19, BudgetUnit::Flops),
            (3.7e21, BudgetUnit::Flops),
            (100.0, BudgetUnit::GpuHours),
            (12_345.6, BudgetUnit::GpuHours),
            (999.0, BudgetUnit::Usd),
            (250_000.0, BudgetUnit::Usd),
        ] {
            let stop = Stop::Budget(Budget { amount, unit });
            let l = step.with_stop(&f.config(64, 8, 4096, 2, stop));
            let bits = |a: f64, b: f64| assert_eq!(a.to_bits(), b.to_bits(), "{amount} {unit:?}");
            bits(
                sums.total_gpu_hours_per_step(&l),
                l.total_gpu_hours_per_step(),
            );
            bits(sums.total_usd_per_step(&l), l.total_usd_per_step());
            for u in [BudgetUnit::Flops, BudgetUnit::GpuHours, BudgetUnit::Usd] {
                bits(sums.per_iteration(&l, u), l.per_iteration(u));
            }
            bits(sums.learning_flops_share(), l.flops_share(Bucket::Learning));
            bits(sums.search_flops_share(), l.flops_share(Bucket::Search));
            bits(
                sums.search_usd_share(sums.total_usd_per_step(&l)),
                l.usd_share(Bucket::Search),
            );
            assert_eq!(
                l.phase(Phase::Startup).seconds > 0.0,
                startup_seconds > 0.0 && l.iterations > 0
            );
        }
    }
}

#[test]
fn validation_is_charged_per_step_as_its_share() {
    // 500 validation prompts, one response each, every 10 steps: a tenth of the FLOPs of
    // prefilling 500 prompts and decoding 500 responses of the task's length each step, on the
    // generation side.
    let mut f = Fixture::new("qwen2.5-1.5b");
    let none = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    assert_eq!(none.phase(Phase::Validation).seconds, 0.0);
    f.run.validation_every_steps = 10;
    f.run.validation_prompts = 500;
    let l = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    let (p, r1, r2) = (
        f.task.prompt_tokens,
        l.tokens.mean_response_tokens,
        lengths::response_lengths(
            f.task.mean_response_tokens,
            f.task.response_length_cv,
            4096.0,
        )
        .second_moment_tokens,
    );
    let expected = (500.0 * flops::prefill_flops_per_prompt(&f.policy, p)
        + 500.0 * flops::decode_flops_per_response(&f.policy, p, r1, r2))
        / 10.0;
    assert!(close(l.phase(Phase::Validation).flops, expected, 1e-12));
    assert!(l.phase(Phase::Validation).seconds > 0.0);
    assert!(close(
        l.step_seconds - none.step_seconds,
        l.phase(Phase::Validation).seconds,
        1e-9
    ));
    assert_eq!(Phase::Validation.bucket(), Bucket::Search);
    f.run.validation_every_steps = 20;
    let half = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(1)));
    assert!(close(
        2.0 * half.phase(Phase::Validation).seconds,
        l.phase(Phase::Validation).seconds,
        1e-12
    ));
}

#[test]
fn async_schedule_charges_both_pools_for_the_whole_step() {
    let mut f = Fixture::new("qwen2.5-7b");
    f.task = task(1500.0, 0.6);
    f.hardware = hardware("h100-sxm", 16, Schedule::Async);
    let l = evaluate(&f.config(256, 8, 8192, 1, Stop::Iterations(1)));
    assert!(close(
        l.total_gpu_hours_per_step(),
        l.step_seconds * 16.0 / 3600.0,
        1e-9
    ));
    let generation: f64 = l.phase(Phase::Prefill).seconds + l.phase(Phase::Decode).seconds;
    assert!(l.step_seconds >= generation);
}

#[test]
fn memory_infeasibility_is_explained() {
    // Full fine-tuning of Qwen2.5-72B on one H100: 16 bytes × 72.7e9 parameters cannot fit.
    let mut f = Fixture::new("qwen2.5-72b");
    f.hardware = hardware("h100-sxm", 1, Schedule::Colocated);
    let l = evaluate(&f.config(8, 4, 1024, 1, Stop::Iterations(1)));
    assert!(!l.feasible());
    let reason = l.infeasible.unwrap().to_string();
    assert!(reason.contains("GB"), "{reason}");
    // The same model trains on 64 GPUs with LoRA.
    f.hardware = hardware("h100-sxm", 64, Schedule::Colocated);
    let lora = evaluate(&RunConfig {
        finetune: Finetune::Lora(64),
        ..f.config(8, 4, 1024, 1, Stop::Iterations(1))
    });
    assert!(lora.feasible(), "{:?}", lora.infeasible);
}

#[test]
fn budget_below_one_iteration_is_infeasible_with_the_cost_of_one() {
    let f = Fixture::new("qwen2.5-7b");
    let stop = Stop::Budget(Budget {
        amount: 1.0,
        unit: BudgetUnit::Flops,
    });
    let l = evaluate(&f.config(64, 8, 2048, 1, stop));
    assert_eq!(l.iterations, 0);
    assert!(matches!(
        l.infeasible,
        Some(Infeasible::BudgetBelowOneIteration { .. })
    ));
    assert_eq!(l.total_usd(), 0.0);
    assert!(l.flops_share(Bucket::Search) > 0.0, "shares stay defined");
}

#[test]
fn generation_costs_more_in_dollars_than_in_flops() {
    // The realistic run: GRPO on Qwen2.5-7B, 1024 prompts × 8, 8k cap, 16 H100s.
    // Decode is memory-bound, so its dollar share exceeds its FLOP share (docs/design.md §2).
    let mut f = Fixture::new("qwen2.5-7b");
    f.task = task(2000.0, 0.6);
    f.hardware = hardware("h100-sxm", 16, Schedule::Colocated);
    let l = evaluate(&f.config(1024, 8, 8192, 1, Stop::Iterations(100)));
    assert!(l.feasible(), "{:?}", l.infeasible);
    assert!(l.usd_share(Bucket::Search) > 1.5 * l.flops_share(Bucket::Search));
    // Published generation shares of step time range from 11% to 80% (veRL tables; OpenRLHF).
    let share = l.usd_share(Bucket::Search);
    assert!((0.11..0.80).contains(&share), "{share}");
}

#[test]
fn extreme_but_valid_inputs_stay_finite() {
    let mut f = Fixture::new("qwen2.5-0.5b");
    f.task = task(50_000.0, 1.0);
    f.hardware = hardware("h100-sxm", 1, Schedule::Colocated);
    let stop = Stop::Budget(Budget {
        amount: 1e25,
        unit: BudgetUnit::Flops,
    });
    let l = evaluate(&f.config(1, 4096, 131_072, 1, stop));
    for p in l.phases {
        assert!(p.flops.is_finite() && p.seconds.is_finite() && p.gpu_seconds.is_finite());
    }
    assert!(l.total_usd().is_finite());
    assert!(l.waste.zero_signal_usd.is_finite() && l.waste.truncated_usd.is_finite());
}

#[test]
fn affordable_iterations_is_exact_at_boundaries() {
    assert_eq!(affordable_iterations(10.0, 1.0), 10);
    assert_eq!(
        affordable_iterations(0.3, 0.1),
        2,
        "0.1 × 3 = 0.30000000000000004 > 0.3"
    );
    assert_eq!(affordable_iterations(0.99, 1.0), 0);
    assert_eq!(affordable_iterations(5.0, 0.0), 0);
}

#[test]
fn affordable_iterations_is_the_floor_formula_everywhere() {
    // The largest m with m × per ≤ budget, as the floor of the quotient corrected both ways;
    // checked against that formula at random and extreme budgets.
    fn reference(budget: f64, per: f64) -> u64 {
        if per <= 0.0 || !per.is_finite() {
            return 0;
        }
        let mut m = (budget / per).floor().max(0.0) as u64;
        while m > 0 && m as f64 * per > budget {
            m -= 1;
        }
        while m < u64::MAX / 2 && ((m + 1) as f64) * per <= budget {
            m += 1;
        }
        m
    }
    let mut rng = crate::rng::SplitMix64::new(3, 4);
    let mut cases = vec![
        (-1.0, 1.0),
        (0.5, 1.0),
        (f64::NAN, 1.0),
        (1e300, 1e-300),
        (1e19, 1.0),
        (9.3e18, 1.0),
        (0.3, 0.1),
    ];
    for _ in 0..20_000 {
        let budget = 10f64.powf(rng.uniform() * 12.0 - 2.0);
        let per = 10f64.powf(rng.uniform() * 8.0 - 4.0);
        cases.push((budget, per));
        // Budgets that are exact multiples of the step, where the corrections decide.
        cases.push(((1.0 + (rng.uniform() * 1e4).floor()) * per, per));
    }
    for (budget, per) in cases {
        assert_eq!(
            affordable_iterations(budget, per),
            reference(budget, per),
            "{budget} / {per}"
        );
    }
}

const POLICIES: [&str; 6] = [
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "qwen2.5-3b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
];

#[derive(Debug, Clone)]
struct Levers {
    model: usize,
    lora: Option<u64>,
    prm: bool,
    group_size: u64,
    cap: u64,
    epochs: u64,
    prompts: u64,
    gpus: u64,
    mean: f64,
    cv: f64,
    async_schedule: bool,
}

fn levers() -> impl Strategy<Value = Levers> {
    (
        0usize..POLICIES.len(),
        prop_oneof![Just(None), (1u64..512).prop_map(Some)],
        any::<bool>(),
        2u64..1024,
        64u64..32_768,
        1u64..9,
        1u64..1024,
        prop_oneof![Just(1u64), Just(2), Just(8), Just(16), Just(64)],
        50.0f64..8000.0,
        0.05f64..1.5,
        any::<bool>(),
    )
        .prop_map(
            |(
                model,
                lora,
                prm,
                group_size,
                cap,
                epochs,
                prompts,
                gpus,
                mean,
                cv,
                async_schedule,
            )| Levers {
                model,
                lora,
                prm,
                group_size,
                cap,
                epochs,
                prompts,
                gpus,
                mean,
                cv,
                async_schedule: async_schedule && gpus >= 2,
            },
        )
}

fn ledger_of(l: &Levers, stop: Stop) -> Ledger {
    let catalog = Catalog::embedded();
    let policy = catalog.model(POLICIES[l.model]).unwrap().clone();
    let reward = if l.prm {
        Reward {
            kind: RewardKind::Prm,
            model: Some(catalog.model("qwen2.5-math-prm-7b").unwrap().clone()),
        }
    } else {
        Reward {
            kind: RewardKind::Rule,
            model: None,
        }
    };
    let schedule = if l.async_schedule {
        Schedule::Async
    } else {
        Schedule::Colocated
    };
    let hw = hardware("h100-sxm", l.gpus, schedule);
    let t = task(l.mean, l.cv);
    let run = settings();
    evaluate(&RunConfig {
        policy: &policy,
        finetune: l.lora.map_or(Finetune::Full, Finetune::Lora),
        reward: &reward,
        group_size: l.group_size,
        max_response_len: l.cap,
        update_epochs: l.epochs,
        prompts_per_step: l.prompts,
        stop,
        hardware: &hw,
        task: &t,
        run: &run,
        measured_base_score: None,
        ability_score: None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn shares_sum_to_one_and_everything_is_finite(l in levers()) {
        let ledger = ledger_of(&l, Stop::Iterations(7));
        let flops: f64 = Bucket::ALL.iter().map(|&b| ledger.flops_share(b)).sum();
        let usd: f64 = Bucket::ALL.iter().map(|&b| ledger.usd_share(b)).sum();
        prop_assert!((flops - 1.0).abs() < 1e-9, "{flops}");
        prop_assert!((usd - 1.0).abs() < 1e-9, "{usd}");
        for p in ledger.phases {
            prop_assert!(p.flops.is_finite() && p.flops >= 0.0);
            prop_assert!(p.seconds.is_finite() && p.seconds >= 0.0);
            prop_assert!(p.gpu_seconds.is_finite() && p.gpu_seconds >= 0.0);
        }
        let gpu_hours: f64 = Bucket::ALL.iter().map(|&b| ledger.gpu_hours(b)).sum();
        prop_assert!((gpu_hours - ledger.total_gpu_hours()).abs() <= 1e-9 * ledger.total_gpu_hours());
        prop_assert!((ledger.total_gpu_hours() - ledger.step_seconds * ledger.gpus as f64 * 7.0 / 3600.0).abs()
            <= 1e-9 * ledger.total_gpu_hours());
    }

    #[test]
    fn cost_never_decreases_when_a_lever_grows(l in levers(), which in 0usize..5) {
        let mut bigger = l.clone();
        match which {
            0 => bigger.group_size = l.group_size * 2,
            1 => bigger.cap = l.cap * 2,
            2 => bigger.epochs = l.epochs + 1,
            3 => bigger.prompts = l.prompts * 2,
            _ => bigger.model = (l.model + 1).min(POLICIES.len() - 1),
        }
        let a = ledger_of(&l, Stop::Iterations(1));
        let b = ledger_of(&bigger, Stop::Iterations(1));
        // The drain's quadrature cuts its integrals at the length quantiles and the cap, so a
        // cap far beyond every response (mean 50 tokens, cap 26k -> 52k) moves the decode time
        // by a few parts in 1e8 either way: a numerical error, not a cost that fell.
        let slack = 1.0 + 1e-7;
        prop_assert!(b.total_flops_per_step() * slack >= a.total_flops_per_step(),
            "flops {} -> {}", a.total_flops_per_step(), b.total_flops_per_step());
        prop_assert!(b.total_usd_per_step() * slack >= a.total_usd_per_step(),
            "usd {} -> {} ({:?} -> {:?})", a.total_usd_per_step(), b.total_usd_per_step(), a.decode, b.decode);
    }

    #[test]
    fn iterations_spend_at_most_the_budget_and_one_more_would_not_fit(
        l in levers(),
        unit in prop_oneof![Just(BudgetUnit::Flops), Just(BudgetUnit::GpuHours), Just(BudgetUnit::Usd)],
        scale in 0.5f64..5000.0,
    ) {
        let per = ledger_of(&l, Stop::Iterations(1)).per_iteration(unit);
        let budget = Budget { amount: per * scale, unit };
        let ledger = ledger_of(&l, Stop::Budget(budget));
        let m = ledger.iterations as f64;
        prop_assert!(m * per <= budget.amount);
        prop_assert!((m + 1.0) * per > budget.amount);
        let spent = match unit {
            BudgetUnit::Flops => ledger.total_flops(),
            BudgetUnit::GpuHours => ledger.total_gpu_hours(),
            BudgetUnit::Usd => ledger.total_usd(),
        };
        prop_assert!(spent <= budget.amount * (1.0 + 1e-12));
    }
}

#[test]
fn a_one_turn_episode_with_a_free_environment_is_the_single_turn_ledger() {
    // Issue 16: the agent path (forced by a zero-priced, unlimited API judge and a zero-second
    // reward sandbox) with one turn and no tool prices exactly what the single-turn path does,
    // under a fixed step count and under a dollar budget.
    let base = Fixture::new("qwen2.5-1.5b");
    let mut agentic = Fixture::new("qwen2.5-1.5b");
    agentic.run.agent = crate::config::Agent {
        api_judge: Some(crate::config::ApiJudge {
            usd_per_million_input_tokens: 0.0,
            usd_per_million_output_tokens: 0.0,
            output_tokens: 64.0,
            tokens_per_minute: 0.0,
        }),
        observation_tokens: 700.0,
        tool_seconds: 5.0,
        ..crate::config::Agent::default()
    };
    assert!(!agentic.run.agent.is_single_turn_without_environment());
    for stop in [
        Stop::Iterations(37),
        Stop::Budget(Budget::parse("150 usd").unwrap()),
    ] {
        let a = evaluate(&base.config(64, 8, 2048, 2, stop));
        let b = evaluate(&agentic.config(64, 8, 2048, 2, stop));
        assert_eq!(a, b, "{stop:?}");
    }
}

#[test]
fn tool_calls_add_waiting_sandbox_dollars_and_longer_episodes() {
    let base = Fixture::new("qwen2.5-1.5b");
    let mut agentic = Fixture::new("qwen2.5-1.5b");
    agentic.run.agent = crate::config::Agent {
        turns: 3.0,
        observation_tokens: 200.0,
        tool_seconds: 4.0,
        sandbox_usd_per_hour: 0.36,
        ..crate::config::Agent::default()
    };
    let a = evaluate(&base.config(64, 8, 8192, 1, Stop::Iterations(10)));
    let b = evaluate(&agentic.config(64, 8, 8192, 1, Stop::Iterations(10)));
    // Two tool calls of 4 s per episode, turn-synchronous: 8 s of the cluster idle per step.
    let env = b.phase(Phase::Environment);
    assert_eq!(env.seconds, 8.0);
    assert_eq!(env.gpu_seconds, 8.0 * 8.0);
    // 512 episodes × 2 calls × 4 s = 4,096 sandbox-seconds at $0.0001 each ($0.36/h) = $0.4096
    // per step, in the search bucket.
    assert!((b.environment_usd_per_step - 0.4096).abs() < 1e-9);
    assert!((b.external_usd_per_step[0] - 0.4096).abs() < 1e-9);
    // Three turns generate three times the tokens, and the dollars still add up by bucket.
    assert!(close(
        b.tokens.generated_tokens_per_step,
        3.0 * a.tokens.generated_tokens_per_step,
        1e-9
    ));
    let by_bucket: f64 = Bucket::ALL.iter().map(|&k| b.usd(k)).sum();
    assert!(close(by_bucket, b.total_usd(), 1e-12));
    let shares: f64 = Bucket::ALL.iter().map(|&k| b.usd_share(k)).sum();
    assert!((shares - 1.0).abs() < 1e-12);
    assert!(b.total_usd() > a.total_usd());
}

#[test]
fn phase_indices_are_positions_in_all() {
    for (k, phase) in Phase::ALL.iter().enumerate() {
        assert_eq!(phase.index(), k, "{phase:?}");
    }
}

#[test]
fn a_cap_beyond_the_context_window_is_infeasible_with_the_cap_that_fits() {
    // Qwen2.5-Math-7B's config.json has max_position_embeddings 4,096 (the entry it shares a
    // shape with, Qwen2.5-7B, has 131,072): the fixture's 100-token prompt leaves 3,996 for the
    // response.
    let mut f = Fixture::new("qwen2.5-7b");
    f.policy = Catalog::embedded()
        .resolve_model("Qwen/Qwen2.5-Math-7B")
        .unwrap();
    assert_eq!(f.policy.context_tokens, Some(4096));
    let at =
        |f: &Fixture, cap: u64| evaluate(&f.config(64, 8, cap, 1, Stop::Iterations(10))).infeasible;
    assert_eq!(at(&f, 3996), None);
    match at(&f, 3997) {
        Some(Infeasible::ContextWindow {
            prompt_tokens,
            cap_tokens,
            context_tokens,
        }) => {
            assert_eq!(
                (prompt_tokens, cap_tokens, context_tokens),
                (100.0, 3997, 4096)
            );
            let text = at(&f, 3997).unwrap().to_string();
            assert!(text.contains("3,996 or less"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // The entry itself keeps its own window; an entry that states none is never refused.
    f.policy = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
    assert_eq!(f.policy.context_tokens, Some(131_072));
    assert_eq!(at(&f, 32_768), None);
    f.policy.context_tokens = None;
    assert!(!matches!(
        at(&f, 200_000),
        Some(Infeasible::ContextWindow { .. })
    ));
}

/// Qwen2.5-7B PPO (critic of the policy's shape) with a KL reference and old log-probs every
/// step on the fixture's 8 H100s: the offload tests' setup.
fn ppo_7b_with_reference() -> Fixture {
    let mut f = Fixture::new("qwen2.5-7b");
    f.run.algorithm = Algorithm::Ppo;
    f.run.kl_reference = true;
    f.run.old_logprob = OldLogprob::Always;
    f
}

/// Weights, moments and reference offloaded, per pass or once per step.
fn everything_offloaded(per_step: bool) -> crate::config::Offload {
    crate::config::Offload {
        params: true,
        optimizer: true,
        reference: true,
        per_step,
    }
}

#[test]
fn offload_adds_its_round_trips_by_hand_and_frees_the_other_models() {
    // Qwen2.5-7B PPO (critic of the policy's shape) with a KL reference on 8 H100s, everything
    // offloaded (ledger::offload; 5 GB/s per GPU, there and back; n = 7,615,616,512):
    //   a forward moves the FP32 weights, 4n / 8 per GPU: 2 × 3.808 GB / 5 GB/s = 1.5231 s
    //     (old log-probs, critic values, the rollout's weight sync);
    //   an update moves weights and moments, 12n / 8: 4.5694 s (policy and critic);
    //   the reference moves its BF16 weights, 2n / 8: 0.7616 s.
    // Memory: the update holds the policy's 16n and nothing of the others; without offload
    // it also holds the reference's 2n and the critic's 16n: 18n / 8 = 17.14 GB more per GPU.
    let mut f = ppo_7b_with_reference();
    let plain = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    f.run.offload = everything_offloaded(false);
    let offloaded = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    let added = |phase: Phase| offloaded.phase(phase).seconds - plain.phase(phase).seconds;
    let n = 7_615_616_512.0_f64;
    let trip = |bytes_per_param: f64| 2.0 * bytes_per_param * n / 8.0 / 5e9;
    for (phase, expected) in [
        (Phase::OldLogprob, trip(4.0)),
        (Phase::CriticValues, trip(4.0)),
        (Phase::Sync, trip(4.0)),
        (Phase::Update, trip(12.0)),
        (Phase::CriticUpdate, trip(12.0)),
        (Phase::RefLogprob, trip(2.0)),
    ] {
        assert!(
            close(added(phase), expected, 1e-9),
            "{phase:?}: {}",
            added(phase)
        );
    }
    assert!((trip(12.0) - 4.5694).abs() < 1e-3);
    // Generation does not wait for copies.
    assert_eq!(added(Phase::Decode), 0.0);
    let freed_gb = plain.training_memory_gb_per_gpu - offloaded.training_memory_gb_per_gpu;
    assert!(close(freed_gb, 18.0 * n / 8.0 / 1e9, 1e-9), "{freed_gb}");
    // Without a critic and with the reference kept, offload moves time but frees nothing
    // during the policy's own update.
    f.run.algorithm = Algorithm::Grpo;
    f.run.offload.reference = false;
    let grpo = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    f.run.offload = crate::config::Offload::default();
    let grpo_plain = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    assert_eq!(
        grpo.training_memory_gb_per_gpu,
        grpo_plain.training_memory_gb_per_gpu
    );
    assert!(grpo.step_seconds > grpo_plain.step_seconds);
}

#[test]
fn offload_once_per_step_makes_one_round_trip_and_frees_only_the_rollout() {
    // The setup of the test above (Qwen2.5-7B PPO, KL reference, 8 H100s, everything
    // offloaded), but moved once per step around the rollout (slime's offload_train): the
    // passes pay nothing; the sync phase pays one round trip of what leaves the GPUs for the
    // rollout: the policy's and the critic's FP32 weights and moments, 12n each, and the
    // reference's BF16 weights, 2n: 2 × 26n / 8 / 5 GB/s = 9.900 s (gradients are freed, not
    // moved). The training passes find the whole state resident: the same training memory as
    // without offload. The colocated rollout finds none of it: the same engine room as with
    // offload per pass.
    let mut f = ppo_7b_with_reference();
    let plain = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    f.run.offload = everything_offloaded(true);
    let swapped = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    let added = |phase: Phase| swapped.phase(phase).seconds - plain.phase(phase).seconds;
    let n = 7_615_616_512.0_f64;
    let swap = 2.0 * 26.0 * n / 8.0 / 5e9;
    assert!((swap - 9.900).abs() < 1e-3, "{swap}");
    assert!(
        close(added(Phase::Sync), swap, 1e-9),
        "{}",
        added(Phase::Sync)
    );
    for phase in [
        Phase::OldLogprob,
        Phase::CriticValues,
        Phase::Update,
        Phase::CriticUpdate,
        Phase::RefLogprob,
        Phase::Decode,
    ] {
        assert_eq!(added(phase), 0.0, "{phase:?}");
    }
    assert_eq!(
        swapped.training_memory_gb_per_gpu,
        plain.training_memory_gb_per_gpu
    );
    // The rollout's room is offload's: a colocated vLLM at 0.9 (refused beside the resident
    // state, the test below) fits.
    f.hardware.rollout_gpu_memory_utilization = 0.9;
    f.run.algorithm = Algorithm::Grpo;
    assert_eq!(
        evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1))).infeasible,
        None
    );
    f.run.offload = crate::config::Offload::default();
    assert!(matches!(
        evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1))).infeasible,
        Some(Infeasible::ColocatedMemory { .. })
    ));
    // Only the optimizer, once per step: 2 × 8n / 8 / 5 GB/s for GRPO (no critic).
    f.run.offload = crate::config::Offload {
        optimizer: true,
        per_step: true,
        ..crate::config::Offload::default()
    };
    f.hardware.rollout_gpu_memory_utilization = 0.5;
    let grpo_plain = {
        let mut g = ppo_7b_with_reference();
        g.run.algorithm = Algorithm::Grpo;
        evaluate(&g.config(64, 8, 4096, 1, Stop::Iterations(1)))
    };
    let grpo = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    let sync_added = grpo.phase(Phase::Sync).seconds - grpo_plain.phase(Phase::Sync).seconds;
    assert!(
        close(sync_added, 2.0 * 8.0 * n / 8.0 / 5e9, 1e-9),
        "{sync_added}"
    );
}

#[test]
fn a_colocated_rollout_must_fit_beside_the_training_state_it_leaves() {
    // Qwen2.5-7B GRPO with a KL reference on 8 H100s (80 GiB = 85.90 GB), colocated, nothing
    // offloaded: during the rollout each GPU keeps the policy's FP32 weights and Adam's moments,
    // 12n / 8, and the reference's BF16 weights, 2n / 8: 14 × 7,615,616,512 / 8 = 13.327 GB. The
    // engine claims utilization × 85.90 GB: 77.31 GB at 0.9 (90.6 > 85.9, refused; it fits up
    // to (85.90 - 13.33) / 85.90 = 0.845), 68.72 GB at 0.8 (82.0, fits).
    let mut f = Fixture::new("qwen2.5-7b");
    f.hardware.rollout_gpu_memory_utilization = 0.9;
    let refused = evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1)));
    let n = 7_615_616_512.0_f64;
    let gib = 1_073_741_824.0_f64;
    match refused.infeasible {
        Some(Infeasible::ColocatedMemory {
            training_gb,
            rollout_gb,
            memory_gb,
        }) => {
            assert!(
                close(training_gb, 14.0 * n / 8.0 / 1e9, 1e-12),
                "{training_gb}"
            );
            assert!(
                close(rollout_gb, 0.9 * 80.0 * gib / 1e9, 1e-12),
                "{rollout_gb}"
            );
            assert!(close(memory_gb, 80.0 * gib / 1e9, 1e-12), "{memory_gb}");
        }
        other => panic!("expected colocated_memory, got {other:?}"),
    }
    let reason = refused.infeasible.unwrap().to_string();
    assert!(reason.contains("to 0.84 or less"), "{reason}");
    let at = |f: &Fixture| evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(1))).infeasible;
    f.hardware.rollout_gpu_memory_utilization = 0.8;
    assert_eq!(at(&f), None);
    // PPO adds the critic's 12n / 8 = 11.42 GB: 93.5 GB at 0.8, refused.
    f.run.algorithm = Algorithm::Ppo;
    assert!(matches!(at(&f), Some(Infeasible::ColocatedMemory { .. })));
    f.run.algorithm = Algorithm::Grpo;
    // LoRA keeps the frozen BF16 base and the small adapters' state, and no reference: 2n / 8 =
    // 1.90 GB and 77.3 at 0.9, which fits.
    f.hardware.rollout_gpu_memory_utilization = 0.9;
    let lora = f.config(64, 8, 4096, 1, Stop::Iterations(1));
    let lora = RunConfig {
        finetune: Finetune::Lora(32),
        ..lora
    };
    assert_eq!(evaluate(&lora).infeasible, None);
    // Offloading the weights, the moments and the reference leaves nothing beside the engine.
    f.run.offload = everything_offloaded(false);
    assert_eq!(at(&f), None);
    // Offloading the optimizer alone: 4n / 8 + 2n / 8 = 5.71 GB, 83.0 GB with the engine.
    f.run.offload = crate::config::Offload {
        params: false,
        optimizer: true,
        reference: false,
        per_step: false,
    };
    assert_eq!(at(&f), None);
    // SGLang's share is of the memory left free: its KV cache shrinks by the training state
    // (fewer sequences in flight), it does not fail; offloading that state gives it back.
    f.run.offload = crate::config::Offload::default();
    f.hardware.engine = Catalog::embedded().engine("sglang").unwrap().clone();
    f.hardware.rollout_gpu_memory_utilization = 0.5;
    f.hardware.max_num_seqs = 4096;
    let step = |f: &Fixture| evaluate(&f.config(1024, 8, 8192, 1, Stop::Iterations(1)));
    let shrunk = step(&f);
    assert_eq!(shrunk.infeasible, None);
    f.run.offload = everything_offloaded(false);
    let freed = step(&f);
    assert!(
        shrunk.decode.sequences_in_flight < freed.decode.sequences_in_flight,
        "{:?} {:?}",
        shrunk.decode,
        freed.decode
    );
    f.hardware.schedule = Schedule::Async;
    f.run.offload = crate::config::Offload::default();
    let own = step(&f);
    assert_eq!(
        own.decode.sequences_in_flight,
        freed.decode.sequences_in_flight
    );
    f.hardware.schedule = Schedule::Colocated;
    f.hardware.rollout_gpu_memory_utilization = 0.9;
    f.hardware.max_num_seqs = 256;
    // The engine has GPUs of its own under the other schedules.
    f.hardware.engine = Catalog::embedded().default_engine().clone();
    f.hardware.schedule = Schedule::Async;
    assert_eq!(at(&f), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A run cut into two segments at the same cap (`merge_segments`, the cap schedule's merge)
    /// costs what it costs whole: iterations, FLOPs, GPU-hours, dollars and wall time, with the
    /// start-up and the validation before training charged once.
    #[test]
    fn a_run_cut_into_segments_at_one_cap_costs_what_it_costs_whole(
        first in 1u64..200,
        second in 1u64..200,
    ) {
        let mut f = Fixture::new("qwen2.5-1.5b");
        f.run.startup_seconds = Some(300.0);
        f.run.validation_every_steps = 10;
        f.run.validation_prompts = 100;
        f.run.validation_before_training = true;
        let mut later = Fixture::new("qwen2.5-1.5b");
        later.run = RunSettings {
            startup_seconds: Some(0.0),
            validation_before_training: false,
            ..f.run.clone()
        };
        let at = |f: &Fixture, n: u64| evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(n)));
        let whole = at(&f, first + second);
        let merged = merge_segments(&[at(&f, first), at(&later, second)]).unwrap();
        prop_assert_eq!(merged.iterations, whole.iterations);
        prop_assert!(close(merged.total_flops(), whole.total_flops(), 1e-9));
        prop_assert!(close(merged.total_gpu_hours(), whole.total_gpu_hours(), 1e-9));
        prop_assert!(close(merged.total_usd(), whole.total_usd(), 1e-9));
        prop_assert!(close(merged.wall_hours(), whole.wall_hours(), 1e-9));
    }
}

#[test]
fn a_stated_filter_rate_sets_how_many_batches_dynamic_sampling_generates() {
    // By hand: with half the groups dropped (the run's logged filter rate) and generation
    // batches of the train batch, ceil(1 / (1 − 0.5)) = 2 batches: 2 × 64 × 4 rollouts generated
    // for 64 × 4 kept; at 0.6, ceil(2.5) = 3 batches.
    let mut f = Fixture::new("qwen2.5-1.5b");
    f.run.dynamic_sampling = true;
    for (rate, batches) in [(0.5, 2.0), (0.6, 3.0)] {
        f.run.dynamic_sampling_filter_rate = Some(rate);
        let l = evaluate(&f.config(64, 4, 4096, 1, Stop::Iterations(10)));
        assert_eq!(l.tokens.rollouts_per_step, 256.0);
        assert_eq!(l.tokens.generated_rollouts_per_step, batches * 256.0);
    }
}

#[test]
fn a_lora_policy_generates_at_the_engines_measured_slowdown() {
    // vLLM PR #11267: 2,693.62 output tokens/s without LoRA, 1,787.78 with a rank-8 adapter
    // (Llama-2-7B, one A100): a LoRA policy's prefill and decode take 1.507× as long as the
    // same run's on an engine without that cost; nothing else in the step moves.
    let mut f = Fixture::new("qwen2.5-7b");
    let lora = |f: &Fixture| {
        evaluate(&RunConfig {
            finetune: Finetune::Lora(32),
            ..f.config(64, 8, 4096, 1, Stop::Iterations(10))
        })
    };
    let slowed = lora(&f);
    f.hardware.engine.lora_generation_slowdown = 1.0;
    let plain = lora(&f);
    for phase in [Phase::Prefill, Phase::Decode] {
        let ratio = slowed.phase(phase).seconds / plain.phase(phase).seconds;
        assert!(
            (ratio - 2693.62 / 1787.78).abs() < 1e-9,
            "{phase:?}: {ratio}"
        );
    }
    assert_eq!(slowed.phase(Phase::Update), plain.phase(Phase::Update));
    // Full fine-tuning runs no adapter: the factor does not apply.
    let full = |f: &Fixture| evaluate(&f.config(64, 8, 4096, 1, Stop::Iterations(10)));
    let without = full(&f);
    f.hardware.engine.lora_generation_slowdown = 2.0;
    assert_eq!(full(&f).phase(Phase::Decode), without.phase(Phase::Decode));
}
