//! Waste lines: what part of a run's dollars buys nothing, how it was estimated, and the lever
//! that removes it. The amounts come from the ledger's waste accounting (`ledger::Waste`); the
//! categories overlap (a truncated response can also sit in a zero-signal group).

use super::RunRequest;
use crate::format::{money, percent, thousands};
use crate::ledger::Ledger;

/// A waste line: what, how much, and the lever that removes it.
#[derive(Debug, Clone, PartialEq)]
pub struct WasteLine {
    /// What is wasted.
    pub name: &'static str,
    /// Dollars.
    pub usd: f64,
    /// How it was estimated.
    pub detail: String,
    /// What removes it.
    pub lever: &'static str,
}

/// The waste lines of an RL ledger (empty for supervised stages).
pub fn waste_lines(ledger: &Ledger, request: &RunRequest) -> Vec<WasteLine> {
    if !request.stage.is_rl() {
        return Vec::new();
    }
    let t = &ledger.tokens;
    let w = &ledger.waste;
    vec![
        WasteLine {
            name: "zero-signal groups",
            usd: w.zero_signal_usd,
            detail: format!(
                "{} of groups have all G answers agree",
                percent(t.zero_signal_rate)
            ),
            lever: "raise G, filter prompts whose pass rate is 0 or 1, or use dynamic sampling",
        },
        WasteLine {
            name: "dynamic-sampling over-sampling",
            usd: w.oversampling_usd,
            detail: format!(
                "{} of generated groups are discarded",
                if request.run.dynamic_sampling {
                    percent(t.zero_signal_rate)
                } else {
                    "none".to_string()
                }
            ),
            lever: "filter prompts by pass rate before training so fewer groups are discarded",
        },
        WasteLine {
            name: "truncated responses",
            usd: w.truncated_usd,
            detail: format!(
                "{} of responses hit the cap ({} of generated tokens)",
                percent(t.truncation_rate),
                percent(t.truncated_token_share)
            ),
            lever: "raise max_response_len, or penalise length so fewer responses reach it",
        },
        WasteLine {
            name: "straggler idle time",
            usd: w.straggler_idle_usd,
            detail: format!(
                "{} GPU-hours waiting for the longest response ({} tokens)",
                money(w.straggler_idle_gpu_hours),
                thousands(t.straggler_response_tokens)
            ),
            lever: "async schedule (generation and training overlap), or a lower cap",
        },
        WasteLine {
            name: "reference passes without KL",
            usd: w.reference_without_kl_usd,
            detail: if w.reference_without_kl_usd > 0.0 {
                "KL coefficient is 0 but the reference runs".to_string()
            } else {
                "none".to_string()
            },
            lever: "drop the reference model (use_kl_loss=False / beta=0) when the KL coefficient is 0",
        },
        WasteLine {
            name: "prefill without prefix caching",
            usd: w.uncached_prefill_usd,
            detail: if request.run.prefix_cache {
                "none".to_string()
            } else {
                format!("each prompt prefilled {} times", ledger.tokens.group_size)
            },
            lever: "enable prefix caching so a group's prompt is prefilled once",
        },
    ]
}
