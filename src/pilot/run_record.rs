//! What a generated TRL launch script records of the run it starts, and what `collect` reads
//! back from it: the framework's logged step counted in RL iterations.
//!
//! TRL logs `step = global_step`, the optimizer steps taken (transformers' `Trainer`). One
//! generation batch of GRPO is split into `steps_per_generation` micro-batches and reused
//! `num_iterations` times (TRL `GRPOTrainer._prepare_inputs`: a new batch is generated every
//! `steps_per_generation × num_iterations` micro-steps), and an optimizer step is taken every
//! `gradient_accumulation_steps` micro-steps, so
//!
//! ```text
//! iterations = global_step × gradient_accumulation_steps ÷ (steps_per_generation × num_iterations)
//! ```
//!
//! with `steps_per_generation` defaulting to `gradient_accumulation_steps` (TRL
//! `GRPOConfig.__post_init__`), or set through `generation_batch_size` = per-device batch ×
//! processes × `steps_per_generation`. `trainer_state.json` records neither the accumulation nor
//! `num_iterations` (TRL keeps its arguments only in the pickled `training_args.bin`), so each
//! launch script writes [`RUN_RECORD_FILE`] into the run's output folder before it starts TRL:
//! the arguments it passes, pass-through overrides included, in order.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The record's file name, in the run's output folder (`runs/<run id>/`).
pub const RUN_RECORD_FILE: &str = "rlfrontier_run.json";

/// A launch script's record of the run it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The plan's run id.
    pub run_id: String,
    /// `trl`.
    pub framework: String,
    /// Processes `accelerate launch` started (one per GPU).
    pub num_processes: u64,
    /// Every argument passed to `trl.scripts.grpo`, the script's own first and the user's
    /// pass-through arguments after them (the last occurrence of a flag wins, as in Python's
    /// argparse).
    pub argv: Vec<String>,
}

/// How many optimizer steps one RL iteration takes, as a fraction `numerator / denominator`
/// of whole numbers: `steps_per_generation × num_iterations` optimizer micro-steps per
/// generation batch over `gradient_accumulation_steps` micro-steps per optimizer step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepsPerIteration {
    /// Micro-steps per generation batch (`steps_per_generation × num_iterations`).
    pub micro_steps: u64,
    /// Micro-steps per optimizer step (`gradient_accumulation_steps`).
    pub accumulation: u64,
}

impl StepsPerIteration {
    /// One optimizer step per iteration (veRL's step, and TRL's with `num_iterations` 1 and the
    /// default `steps_per_generation`).
    pub const ONE: StepsPerIteration = StepsPerIteration {
        micro_steps: 1,
        accumulation: 1,
    };

    /// Whether a logged step is exactly one iteration.
    pub fn is_one(self) -> bool {
        self.micro_steps == self.accumulation
    }

    /// The iteration a logged optimizer step is, or None when it is not a whole iteration.
    pub fn iteration(self, optimizer_step: u64) -> Option<u64> {
        let micro = u128::from(optimizer_step) * u128::from(self.accumulation);
        let per = u128::from(self.micro_steps);
        (micro % per == 0).then(|| u64::try_from(micro / per).ok())?
    }

    /// `k optimizer steps per iteration` for messages.
    pub fn describe(self) -> String {
        let x = self.micro_steps as f64 / self.accumulation as f64;
        format!("{} optimizer steps per iteration", crate::format::number(x))
    }
}

/// The value of the last `--name V` or `--name=V` in `argv`.
fn last_flag<'a>(argv: &'a [String], name: &str) -> Option<&'a str> {
    let flag = format!("--{name}");
    let with_eq = format!("{flag}=");
    let mut found = None;
    for (k, a) in argv.iter().enumerate() {
        if a == &flag {
            found = argv.get(k + 1).map(String::as_str);
        } else if let Some(v) = a.strip_prefix(&with_eq) {
            found = Some(v);
        }
    }
    found
}

impl RunRecord {
    /// The record of the run whose TRL outputs include `state` (a `trainer_state.json` in the
    /// run folder or one of its `checkpoint-*` folders), if the launch script wrote one.
    pub fn beside(state: &Path) -> Result<Option<(PathBuf, RunRecord)>> {
        let Some(folder) = run_folder(state) else {
            return Ok(None);
        };
        let path = folder.join(RUN_RECORD_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let text = crate::input::read_text(&path, 1 << 20, "the run record")?;
        let record: RunRecord = serde_json::from_str(&text).map_err(|e| {
            Error::in_file(
                &path,
                Some(e.line()),
                "",
                format!("not a run record written by an rlfrontier launch script: {e}"),
            )
        })?;
        Ok(Some((path, record)))
    }

    /// A whole-number setting of the recorded arguments (None when not passed).
    fn count(&self, path: &Path, name: &str) -> Result<Option<u64>> {
        last_flag(&self.argv, name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (1..=1_000_000).contains(n))
                    .ok_or_else(|| {
                        Error::in_file(
                            path,
                            None,
                            "argv",
                            format!("--{name} `{v}` is not a whole number from 1 to 1,000,000"),
                        )
                    })
            })
            .transpose()
    }

    /// Optimizer steps per iteration of the recorded run (TRL's defaults for what it does not
    /// pass: accumulation 1, `num_iterations` 1, per-device batch 8, `steps_per_generation` the
    /// accumulation).
    pub fn steps_per_iteration(&self, path: &Path) -> Result<StepsPerIteration> {
        let accumulation = self
            .count(path, "gradient_accumulation_steps")?
            .unwrap_or(1);
        let iterations = self.count(path, "num_iterations")?.unwrap_or(1);
        let per_device = self
            .count(path, "per_device_train_batch_size")?
            .unwrap_or(8);
        let per_generation = match (
            self.count(path, "steps_per_generation")?,
            self.count(path, "generation_batch_size")?,
        ) {
            (Some(s), _) => s,
            (None, Some(batch)) => {
                let per_step = per_device * self.num_processes.max(1);
                if !batch.is_multiple_of(per_step) {
                    return Err(Error::in_file(
                        path,
                        None,
                        "argv",
                        format!(
                            "--generation_batch_size {batch} is not a multiple of the {per_step} completions per micro-step; TRL refuses such a run"
                        ),
                    ));
                }
                batch / per_step
            }
            (None, None) => accumulation,
        };
        Ok(StepsPerIteration {
            micro_steps: per_generation * iterations,
            accumulation,
        })
    }
}

/// The run folder of a TRL `trainer_state.json`: its folder, or the parent of its
/// `checkpoint-*` folder.
pub fn run_folder(state: &Path) -> Option<PathBuf> {
    let mut dir = state.parent()?;
    while dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("checkpoint-"))
    {
        dir = dir.parent()?;
    }
    Some(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(args: &[&str], processes: u64) -> RunRecord {
        RunRecord {
            run_id: "p001".into(),
            framework: "trl".into(),
            num_processes: processes,
            argv: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn optimizer_steps_become_iterations_as_trl_counts_them() {
        let p = Path::new("r.json");
        // µ = 2, accumulation 1: two optimizer steps per generation batch (issue 50: 8 steps are
        // 4 iterations).
        let r = record(
            &[
                "--num_iterations",
                "2",
                "--gradient_accumulation_steps",
                "1",
            ],
            1,
        );
        let s = r.steps_per_iteration(p).unwrap();
        assert_eq!(s.iteration(8), Some(4));
        assert_eq!(s.iteration(7), None);
        assert!(!s.is_one());
        // Accumulation 4 with the default steps_per_generation: one optimizer step per batch.
        let r = record(&["--gradient_accumulation_steps=4"], 8);
        assert!(r.steps_per_iteration(p).unwrap().is_one());
        // A pass-through override after the script's own value wins.
        let r = record(&["--num_iterations", "2", "--num_iterations", "3"], 1);
        assert_eq!(r.steps_per_iteration(p).unwrap().iteration(9), Some(3));
        // steps_per_generation 4 with accumulation 2: two optimizer steps per batch.
        let r = record(
            &[
                "--steps_per_generation",
                "4",
                "--gradient_accumulation_steps",
                "2",
            ],
            1,
        );
        assert_eq!(r.steps_per_iteration(p).unwrap().iteration(6), Some(3));
        // generation_batch_size = per-device 4 × 2 processes × 3 steps per generation.
        let r = record(
            &[
                "--generation_batch_size",
                "24",
                "--per_device_train_batch_size",
                "4",
            ],
            2,
        );
        assert_eq!(r.steps_per_iteration(p).unwrap().iteration(6), Some(2));
        let r = record(&["--num_iterations", "zero"], 1);
        let e = r.steps_per_iteration(p).unwrap_err().to_string();
        assert!(e.contains("--num_iterations `zero`"), "{e}");
    }

    #[test]
    fn a_checkpoint_belongs_to_its_run_folder() {
        assert_eq!(
            run_folder(Path::new("runs/p001/checkpoint-8/trainer_state.json")),
            Some(PathBuf::from("runs/p001"))
        );
        assert_eq!(
            run_folder(Path::new("runs/p001/trainer_state.json")),
            Some(PathBuf::from("runs/p001"))
        );
    }
}
