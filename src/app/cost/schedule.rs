//! `--cap-schedule`: the response cap raised in stages within one run, read into the library's
//! segments (`rlfrontier::costing::schedule`), each logged mean converted to the uncapped mean
//! the ledger prices at that segment's cap.

use rlfrontier::config::Task;
use rlfrontier::costing::schedule::{CapSegment, parse};
use rlfrontier::error::{Error, Result};
use rlfrontier::ledger::lengths::LoggedLengths;

use super::CostArgs;

const FLAG: &str = "--cap-schedule";

impl CostArgs {
    /// The segments of `--cap-schedule` (empty without it), each cap checked as
    /// `--max-response-len` is; refused beside `--steps` (the segments give the steps) and on a
    /// supervised stage.
    pub(super) fn cap_schedule(&self, task: &Task) -> Result<Vec<CapSegment>> {
        let Some(text) = &self.levers.cap_schedule else {
            return Ok(Vec::new());
        };
        if !self.stage.is_rl() {
            return Err(Error::in_flag(
                FLAG,
                "a cap schedule raises an RL run's response cap; a supervised stage has none",
            ));
        }
        if self.levers.steps.is_some() || self.levers.data_epochs.is_some() {
            return Err(Error::in_flag(
                FLAG,
                "the schedule gives each segment's steps; drop --steps (or --data-epochs), or --cap-schedule",
            ));
        }
        let written =
            parse(text, self.levers.budget.is_some()).map_err(|e| Error::in_flag(FLAG, e.0))?;
        written
            .iter()
            .map(|w| {
                // The bound `--max-response-len` takes.
                if w.max_response_len as f64 > rlfrontier::config::MAX_RESPONSE_TOKENS.0 {
                    return Err(Error::in_flag(
                        FLAG,
                        format!(
                            "the cap {} is too large; use at most {}",
                            w.max_response_len,
                            rlfrontier::config::MAX_RESPONSE_TOKENS.0
                        ),
                    ));
                }
                let uncapped = match w.logged_mean_response_tokens {
                    Some(mean) => Some(
                        LoggedLengths {
                            mean_tokens: mean,
                            cap_tokens: w.max_response_len as f64,
                            clip_ratio: None,
                        }
                        .uncapped(task.response_length_cv)
                        .map_err(|e| Error::in_flag(FLAG, e.0))?
                        .0,
                    ),
                    None => None,
                };
                Ok(CapSegment {
                    max_response_len: w.max_response_len,
                    steps: w.steps,
                    uncapped_mean_response_tokens: uncapped,
                })
            })
            .collect()
    }
}
