//! Agentic, multi-turn episodes: the model acts, a tool (code interpreter, search, a test suite
//! in a sandbox) answers, and the answer is appended to the context before the next turn.
//!
//! The defaults describe today's single-turn rollout (one turn, no tool, no sandbox, no API
//! judge), which the ledger prices exactly as before; see `ledger::agent` for the formulas.

use std::fmt;

use crate::error::suggestion;

/// The longest mean tool call a run may state, seconds (a day): beyond it the number is a unit
/// mistake.
pub const MAX_TOOL_SECONDS: f64 = 86_400.0;

/// Φ⁻¹(0.99), the standard normal's 99th percentile.
pub const Z99: f64 = 2.326_347_874_040_841;

/// The most model turns per episode a run may have: beyond it the equivalent single-turn
/// episode's context is far outside any engine's window.
pub const MAX_TURNS: f64 = 1000.0;

/// Whether generation waits for the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvironmentWait {
    /// Every sequence of the batch waits at each tool call (turn-synchronous rollouts, the
    /// simple multi-turn loop): the GPUs idle for every call's latency.
    #[default]
    Sync,
    /// Other sequences keep decoding while one waits (asynchronous per-request rollouts, e.g.
    /// veRL's SGLang multi-turn with async tool calls): the GPUs idle only when an episode's
    /// waits outlast the step's decoding.
    Async,
}

named_enum!(EnvironmentWait { Sync => "sync", Async => "async" });

/// An LLM judge or reward model called through a provider's API, priced per token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApiJudge {
    /// US$ per million input tokens.
    pub usd_per_million_input_tokens: f64,
    /// US$ per million output tokens.
    pub usd_per_million_output_tokens: f64,
    /// Tokens the judge writes per rollout (its verdict).
    pub output_tokens: f64,
    /// The provider's rate limit, input plus output tokens per minute (0: none); a step cannot
    /// finish its judging faster than this allows.
    pub tokens_per_minute: f64,
}

/// The shape and price of an episode's environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agent {
    /// Mean model turns per episode (1: single-turn); every turn but the last ends in a tool
    /// call.
    pub turns: f64,
    /// Tokens one tool call returns into the context (prefilled, not generated).
    pub observation_tokens: f64,
    /// Coefficient of variation of the turns across episodes (0: every episode takes `turns`);
    /// widens the spread of episode lengths, so the longest episode of a step (the straggler).
    pub turns_cv: f64,
    /// Mean seconds one tool call takes (sandbox start, execution, network).
    pub tool_seconds: f64,
    /// The 99th percentile of one call's latency, seconds (0: every call takes the mean). With
    /// it, latencies are lognormal and a round of calls waits for its slowest one.
    pub tool_seconds_p99: f64,
    /// Share of tool calls that fail and are retried until they succeed (each attempt takes the
    /// call's time and sandbox again): 1 / (1 − rate) attempts per call.
    pub tool_failure_rate: f64,
    /// Whether generation waits for the tools.
    pub wait: EnvironmentWait,
    /// US$ per hour of one sandbox running one tool call (a container or CPU slot).
    pub sandbox_usd_per_hour: f64,
    /// Sandbox seconds per rollout to compute the reward (running a test suite), 0 for none.
    pub reward_sandbox_seconds: f64,
    /// An API-priced judge, if the reward comes from one.
    pub api_judge: Option<ApiJudge>,
}

impl Default for Agent {
    /// A single-turn rollout with no environment: the ledger as it was before agents.
    fn default() -> Self {
        Agent {
            turns: 1.0,
            observation_tokens: 0.0,
            turns_cv: 0.0,
            tool_seconds: 0.0,
            tool_seconds_p99: 0.0,
            tool_failure_rate: 0.0,
            wait: EnvironmentWait::Sync,
            sandbox_usd_per_hour: 0.0,
            reward_sandbox_seconds: 0.0,
            api_judge: None,
        }
    }
}

impl Agent {
    /// Tool calls per episode: every turn but the last.
    pub fn tool_calls(&self) -> f64 {
        (self.turns - 1.0).max(0.0)
    }

    /// Attempts per successful tool call: 1 / (1 − failure rate), the mean of a geometric number
    /// of tries.
    pub fn attempts_per_call(&self) -> f64 {
        1.0 / (1.0 - self.tool_failure_rate)
    }

    /// σ of ln(latency) when a p99 is given: the lognormal with the stated mean and p99, the less
    /// heavy-tailed of the two that fit (ln(p99 / mean) = zσ − σ²/2, z = Φ⁻¹(0.99)); None without
    /// a tail or when it cannot fit (`validate` refuses that).
    pub fn tool_latency_sigma(&self) -> Option<f64> {
        if self.tool_seconds_p99 <= 0.0 || self.tool_seconds <= 0.0 {
            return None;
        }
        let ratio_ln = (self.tool_seconds_p99 / self.tool_seconds).ln();
        let disc = Z99 * Z99 - 2.0 * ratio_ln;
        (ratio_ln >= 0.0 && disc >= 0.0).then(|| Z99 - disc.sqrt())
    }

    /// Whether this is today's single-turn rollout with nothing outside the GPUs.
    pub fn is_single_turn_without_environment(&self) -> bool {
        self.turns <= 1.0 && self.reward_sandbox_seconds == 0.0 && self.api_judge.is_none()
    }

    /// Checks the numbers: each against its declared range (`config::setting`, the same check
    /// a grid's `[agent]` and `cost`'s flags make), then what they require of each other. The
    /// message names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let mut fields = vec![
            ("turns", self.turns),
            ("observation_tokens", self.observation_tokens),
            ("turns_cv", self.turns_cv),
            ("tool_seconds", self.tool_seconds),
            ("tool_seconds_p99", self.tool_seconds_p99),
            ("tool_failure_rate", self.tool_failure_rate),
            ("sandbox_usd_per_hour", self.sandbox_usd_per_hour),
            ("reward_sandbox_seconds", self.reward_sandbox_seconds),
        ];
        if let Some(api) = &self.api_judge {
            fields.extend([
                (
                    "judge_usd_per_million_input",
                    api.usd_per_million_input_tokens,
                ),
                (
                    "judge_usd_per_million_output",
                    api.usd_per_million_output_tokens,
                ),
                ("judge_output_tokens", api.output_tokens),
                ("judge_tokens_per_minute", api.tokens_per_minute),
            ]);
        }
        for (field, value) in fields {
            super::setting::check_real(field, value).map_err(|m| (field, m))?;
        }
        if self.turns <= 1.0 && self.turns_cv > 0.0 {
            return Err((
                "turns_cv",
                "must be 0 with 1 turn per episode (every episode has exactly one); raise turns first".to_string(),
            ));
        }
        self.validate_tool_tail()
    }

    /// `tool_seconds_p99`, when given, is at least the mean latency and within what a lognormal
    /// of that mean can have as its 99th percentile.
    fn validate_tool_tail(&self) -> Result<(), (&'static str, String)> {
        if self.tool_seconds_p99 > 0.0 {
            if self.tool_seconds_p99 < self.tool_seconds {
                return Err((
                    "tool_seconds_p99",
                    format!(
                        "{} is below the mean latency {} (tool_seconds); a 99th percentile is at least the mean of a lognormal",
                        self.tool_seconds_p99, self.tool_seconds
                    ),
                ));
            }
            if self.tool_seconds > 0.0 && self.tool_latency_sigma().is_none() {
                return Err((
                    "tool_seconds_p99",
                    format!(
                        "{} is more than {:.1}x the mean latency {}: no lognormal has that tail; check the units, or raise tool_seconds to the mean including the slow calls",
                        self.tool_seconds_p99,
                        (Z99 * Z99 / 2.0).exp(),
                        self.tool_seconds
                    ),
                ));
            }
        }
        Ok(())
    }
}
