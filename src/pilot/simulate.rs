//! Simulated pilot results from known parameters: the stand-in for a cluster in tests and demos.
//!
//! Each run of a plan is evaluated at step 0, every `eval_every_steps`, and its last step; the
//! value is the outcome prior's prediction under the *truth* parameters plus Gaussian noise of the
//! given standard deviation, clamped to [0, 1]. Noise is drawn from a generator seeded by (seed,
//! run index), so the same inputs give the same file.

use crate::config::Stop;
use crate::outcome::{OutcomeParams, predict};
use crate::rng::SplitMix64;
use crate::spec::Grid;

use super::{Plan, config_at, run_indices};

/// Steps at which a run is evaluated: 0, every `eval_every`, and the last step.
pub fn checkpoint_steps(steps: u64, eval_every: u64) -> Vec<u64> {
    let every = eval_every.max(1);
    let mut out: Vec<u64> = (0..=steps).step_by(every as usize).collect();
    if out.last() != Some(&steps) {
        out.push(steps);
    }
    out
}

/// Simulated rows (run_id, step, value) for every run of the plan.
pub fn simulate(
    grid: &Grid,
    plan: &Plan,
    truth: &OutcomeParams,
    noise_sd: f64,
    seed: u64,
    plan_path: &std::path::Path,
) -> crate::Result<Vec<(String, u64, f64)>> {
    let mut rows = Vec::new();
    for (k, run) in plan.runs.iter().enumerate() {
        let indices = run_indices(grid, run, plan_path, k + 2)?;
        let mut rng = SplitMix64::new(seed, k as u64);
        for step in checkpoint_steps(run.steps, run.eval_every_steps) {
            let config = config_at(grid, &indices, Stop::Iterations(step));
            let ledger = crate::ledger::evaluate(&config);
            let signal = crate::evaluate::grid_signal(grid, &config, &ledger);
            let value = (predict(truth, &signal).score + noise_sd * rng.normal()).clamp(0.0, 1.0);
            rows.push((run.run_id.clone(), step, value));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_include_both_ends() {
        assert_eq!(checkpoint_steps(10, 4), vec![0, 4, 8, 10]);
        assert_eq!(checkpoint_steps(8, 4), vec![0, 4, 8]);
        assert_eq!(checkpoint_steps(3, 0), vec![0, 1, 2, 3]);
    }
}
