//! A response cap raised in stages within one run (`cost --cap-schedule`): "8k for 500 steps,
//! then 16k for 300, then 24k until the budget is spent", as long-chain-of-thought recipes train.
//! Each segment is priced as its own run at its cap (and its mean length, which grows with the
//! cap), and the run's ledger is their iteration-weighted merge (`ledger::merge_segments`): the
//! start-up and the validation before training are charged once, in the first segment.
//! Not to be confused with the stages of `compare` (SFT, reward model, DPO, RL), which are
//! different trainings; a cap schedule is one RL run.

use crate::config::{BudgetUnit, Stop};
use crate::ledger::{Ledger, evaluate, merge_segments};

use super::RunRequest;

/// One segment of a cap schedule: a response cap held for a number of steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapSegment {
    /// The response cap in tokens.
    pub max_response_len: u64,
    /// The steps it is held for; None on the last segment: as many as the budget affords.
    pub steps: Option<u64>,
    /// The mean response tokens the policy would write uncapped during the segment (the
    /// task's lognormal mean); None: the run's.
    pub uncapped_mean_response_tokens: Option<f64>,
}

/// A segment as written: `CAP:STEPS[:MEAN]`, or `CAP` or `CAP::MEAN` for a last segment that
/// runs until the budget is spent. MEAN is the logged mean response tokens at that cap, which
/// the caller converts to the uncapped mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrittenSegment {
    /// The cap.
    pub max_response_len: u64,
    /// The steps, when given.
    pub steps: Option<u64>,
    /// The logged mean response tokens, when given.
    pub logged_mean_response_tokens: Option<f64>,
}

/// Why a written cap schedule cannot be priced: the message says what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleError(pub String);

/// The segments of `text`, comma-separated (`8192:500,16384:300:9000,24576`), checked for
/// shape: at least two, every one but the last with its steps, caps that rise, means at most
/// their cap. `budget`: whether a budget stops the run (a last segment without steps needs one;
/// with one, the last segment must leave its steps open).
pub fn parse(text: &str, budget: bool) -> Result<Vec<WrittenSegment>, ScheduleError> {
    let segments = text
        .split(',')
        .map(|part| segment(part.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if segments.len() < 2 {
        return Err(ScheduleError(format!(
            "`{text}` has one segment; a schedule raises the cap at least once (`8192:500,16384:300`), else give the cap alone as max_response_len"
        )));
    }
    let last = segments.len() - 1;
    for (i, s) in segments.iter().enumerate() {
        if i < last && s.steps.is_none() {
            return Err(ScheduleError(format!(
                "segment {} (cap {}) has no steps; only the last segment may run until the budget is spent: write `{}:STEPS`",
                i + 1,
                s.max_response_len,
                s.max_response_len
            )));
        }
        if i > 0 && s.max_response_len <= segments[i - 1].max_response_len {
            return Err(ScheduleError(format!(
                "segment {} lowers or keeps the cap ({} after {}); a schedule raises it, segment by segment",
                i + 1,
                s.max_response_len,
                segments[i - 1].max_response_len
            )));
        }
    }
    match (segments[last].steps, budget) {
        (None, false) => Err(ScheduleError(format!(
            "the last segment (cap {}) has no steps and no budget stops the run: give its steps (`{}:STEPS`) or a budget",
            segments[last].max_response_len, segments[last].max_response_len
        ))),
        (Some(_), true) => Err(ScheduleError(format!(
            "with a budget the last segment runs until it is spent: write its cap alone (`{}`), or drop the budget to price the steps given",
            segments[last].max_response_len
        ))),
        _ => Ok(segments),
    }
}

/// One `CAP:STEPS[:MEAN]` part.
fn segment(part: &str) -> Result<WrittenSegment, ScheduleError> {
    let fields: Vec<&str> = part.split(':').collect();
    if fields.len() > 3 || fields[0].is_empty() {
        return Err(ScheduleError(format!(
            "`{part}` is not a segment; write CAP:STEPS or CAP:STEPS:MEAN (tokens, steps, logged mean tokens), e.g. `8192:500`"
        )));
    }
    let whole = |what: &str, text: &str| {
        text.replace('_', "")
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                ScheduleError(format!(
                    "`{text}` in `{part}` is not a {what}; give a whole number above 0"
                ))
            })
    };
    let max_response_len = whole("cap in tokens", fields[0])?;
    let steps = match fields.get(1) {
        Some(text) if !text.is_empty() => Some(whole("number of steps", text)?),
        _ => None,
    };
    let logged_mean_response_tokens = match fields.get(2) {
        Some(text) => {
            let mean = text
                .parse::<f64>()
                .ok()
                .filter(|m| m.is_finite() && *m > 0.0)
                .ok_or_else(|| {
                    ScheduleError(format!(
                        "`{text}` in `{part}` is not a mean length; give the logged mean response tokens, above 0"
                    ))
                })?;
            if mean > max_response_len as f64 {
                return Err(ScheduleError(format!(
                    "the mean {mean} in `{part}` is above its cap {max_response_len}; the logged mean is at most the cap"
                )));
            }
            Some(mean)
        }
        None => None,
    };
    Ok(WrittenSegment {
        max_response_len,
        steps,
        logged_mean_response_tokens,
    })
}

/// One priced segment: its cap and its ledger (its own iterations, no start-up after the
/// first).
#[derive(Debug, Clone, Copy)]
pub struct PricedSegment {
    /// The segment as requested.
    pub segment: CapSegment,
    /// Its ledger.
    pub ledger: Ledger,
}

/// The budget spent by `ledger` in `unit`.
fn spent(ledger: &Ledger, unit: BudgetUnit) -> f64 {
    match unit {
        BudgetUnit::Flops => ledger.total_flops(),
        BudgetUnit::GpuHours => ledger.total_gpu_hours(),
        BudgetUnit::Usd => ledger.total_usd(),
    }
}

/// Prices `request`'s cap schedule segment by segment: each at its cap and mean, the start-up
/// and the validation before training in the first; a last segment without steps gets what the
/// budget leaves. The request's own cap and stop are not read.
pub fn price_segments(request: &RunRequest, segments: &[CapSegment]) -> Vec<PricedSegment> {
    let mut priced: Vec<PricedSegment> = Vec::with_capacity(segments.len());
    for (i, &segment) in segments.iter().enumerate() {
        let mut part = request.clone();
        part.levers.max_response_len = segment.max_response_len;
        if let Some(mean) = segment.uncapped_mean_response_tokens {
            part.task.mean_response_tokens = mean;
            part.task.mean_response_tokens_end = None;
        }
        if i > 0 {
            part.run.startup_seconds = Some(0.0);
            part.run.validation_before_training = false;
        }
        part.stop = match (segment.steps, request.stop) {
            (Some(n), _) => Stop::Iterations(n),
            (None, Stop::Budget(mut budget)) => {
                let used: f64 = priced.iter().map(|p| spent(&p.ledger, budget.unit)).sum();
                budget.amount -= used;
                Stop::Budget(budget)
            }
            (None, stop) => stop,
        };
        let ledger = evaluate(&part.rl_config());
        priced.push(PricedSegment { segment, ledger });
    }
    priced
}

/// Whether the segments with steps leave the budget something for the last, open one: an error
/// naming what they spend when they do not (nothing to check without a budget).
pub fn check_budget(request: &RunRequest) -> Result<(), ScheduleError> {
    let Stop::Budget(budget) = request.stop else {
        return Ok(());
    };
    let fixed: Vec<CapSegment> = request
        .cap_schedule
        .iter()
        .copied()
        .filter(|s| s.steps.is_some())
        .collect();
    let used: f64 = price_segments(request, &fixed)
        .iter()
        .map(|p| spent(&p.ledger, budget.unit))
        .sum();
    if used < budget.amount {
        return Ok(());
    }
    let used = crate::config::Budget {
        amount: (used * 100.0).round() / 100.0,
        ..budget
    };
    Err(ScheduleError(format!(
        "the segments with steps spend {used} of the budget's {budget} before the last one starts; raise the budget or give those segments fewer steps"
    )))
}

/// The run's ledger from its priced segments ([`merge_segments`]): the first segment's start-up
/// (already in its ledger) is taken out and charged once over the whole run; with no iteration
/// at all (a budget below one step), the last segment's ledger, which says why.
pub fn run_of(priced: &[PricedSegment]) -> Ledger {
    let parts: Vec<Ledger> = priced.iter().map(|p| p.ledger).collect();
    merge_segments(&parts).unwrap_or_else(|| priced.last().expect("a schedule has segments").ledger)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_read_with_their_steps_and_means() {
        let s = parse("8192:500, 16384:300:9000,24_576", true).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].steps, Some(500));
        assert_eq!(s[1].logged_mean_response_tokens, Some(9000.0));
        assert_eq!((s[2].max_response_len, s[2].steps), (24576, None));
        assert!(parse("8192:500,16384:300", false).is_ok());
    }

    #[test]
    fn a_schedule_that_cannot_be_priced_says_what_to_write() {
        for (text, budget, says) in [
            ("8192:500", false, "one segment"),
            ("8192,16384:300", false, "only the last segment"),
            ("8192:500,4096:300", false, "lowers or keeps"),
            ("8192:500,16384", false, "no budget stops the run"),
            ("8192:500,16384:300", true, "runs until it is spent"),
            ("8192:500:9000,16384:10", false, "above its cap"),
            ("8192:x,16384:10", false, "not a number of steps"),
            ("8192:1:2:3,16384:10", false, "not a segment"),
        ] {
            let e = parse(text, budget).unwrap_err().0;
            assert!(e.contains(says), "{text}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
