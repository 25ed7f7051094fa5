//! Multi-turn episodes with tools: what they add to a step, on and off the GPUs.
//!
//! An episode of T model turns (`[agent] turns`, T ≥ 1) makes T − 1 tool calls; each call returns
//! `o` observation tokens into the context. With a per-turn response of mean r tokens
//! (`[task] mean_response_tokens` is per turn when T > 1) and a prompt of p tokens:
//!
//! - **GPU ledger, by an equivalent single-turn episode.** The engine generates T·r tokens and
//!   prefills p + (T − 1)·o (prefix caching keeps earlier turns' cache, so only new tokens are
//!   prefilled, as SGLang's and vLLM's multi-turn rollouts do); training sees sequences of
//!   p + (T − 1)·o + T·r tokens (observations are masked from the loss but still pass through the
//!   model). So the step is priced as a single-turn episode with prompt p' = p + (T − 1)·o and
//!   response r' = T·r: exact for prefill, decode tokens, sequence lengths and training FLOPs;
//!   the decode's mean context, p' + r'/2, overstates the true p + ((T − 1)·o + T·r)/2 by
//!   (T − 1)·o/2 (observations arrive during the episode, not before it). The response cap
//!   applies to the generated tokens of the whole episode, T·r, as veRL's multi-turn
//!   `response_length` does.
//! - **Waiting for tools** (phase `environment`, search bucket, GPU-hours): with turn-synchronous
//!   rollouts the whole generation pool idles (T − 1)·t seconds per step (t the mean tool
//!   latency); with asynchronous rollouts only the part of an episode's waiting that its decoding
//!   cannot hide, max(0, (T − 1)·t − decode seconds).
//! - **Sandboxes** (dollars outside the GPUs): every tool call holds a sandbox for t seconds, and
//!   a test-suite reward holds one for `reward_sandbox_seconds` per rollout; both at
//!   `sandbox_usd_per_hour` (search bucket for tool calls, feedback for reward tests).
//! - **API judge** (dollars outside the GPUs, feedback bucket): per rollout, the judge reads the
//!   episode (p' + r' tokens) and writes `output_tokens`, at the provider's prices per million
//!   tokens; a rate limit of R tokens per minute makes a step's judging take at least
//!   60 · tokens / R seconds, during which the generation pool waits (added to `reward`).
//!
//! A single-turn episode with no environment (the defaults) leaves the ledger exactly as it was
//! (tested).

use crate::config::{Agent, EnvironmentWait, Task};

/// The equivalent single-turn task of an episode (see the module documentation).
pub fn equivalent_task(task: &Task, agent: &Agent) -> Task {
    let turns = agent.turns.max(1.0);
    let observations = agent.tool_calls() * agent.observation_tokens;
    Task {
        prompt_tokens: task.prompt_tokens + observations,
        mean_response_tokens: task.mean_response_tokens * turns,
        mean_response_tokens_end: task.mean_response_tokens_end.map(|r| r * turns),
        ..*task
    }
}

/// What the environment adds to one step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EnvironmentStep {
    /// Seconds the generation pool idles waiting for tools.
    pub wait_seconds: f64,
    /// Tool calls made.
    pub tool_calls: f64,
    /// Sandbox dollars of tool calls (search bucket).
    pub tool_sandbox_usd: f64,
    /// Sandbox dollars of reward tests (feedback bucket).
    pub reward_sandbox_usd: f64,
    /// API judge dollars (feedback bucket).
    pub api_usd: f64,
    /// Seconds the API's rate limit adds to the step's judging.
    pub api_seconds: f64,
}

/// The environment's share of one step with `episodes` generated episodes, each of `tokens`
/// (prompt and response of the equivalent single-turn episode), whose decoding takes
/// `decode_seconds`.
pub fn environment_step(
    agent: &Agent,
    episodes: f64,
    tokens: f64,
    decode_seconds: f64,
) -> EnvironmentStep {
    let calls_per_episode = agent.tool_calls();
    let waiting = calls_per_episode * agent.tool_seconds;
    let wait_seconds = match agent.wait {
        EnvironmentWait::Sync => waiting,
        EnvironmentWait::Async => (waiting - decode_seconds).max(0.0),
    };
    let tool_calls = episodes * calls_per_episode;
    let per_sandbox_second = agent.sandbox_usd_per_hour / crate::config::SECONDS_PER_HOUR;
    let (api_usd, api_seconds) = match &agent.api_judge {
        Some(api) => {
            let input = episodes * tokens;
            let output = episodes * api.output_tokens;
            let usd = (input * api.usd_per_million_input_tokens
                + output * api.usd_per_million_output_tokens)
                / 1e6;
            let seconds = if api.tokens_per_minute > 0.0 {
                60.0 * (input + output) / api.tokens_per_minute
            } else {
                0.0
            };
            (usd, seconds)
        }
        None => (0.0, 0.0),
    };
    EnvironmentStep {
        wait_seconds,
        tool_calls,
        tool_sandbox_usd: tool_calls * agent.tool_seconds * per_sandbox_second,
        reward_sandbox_usd: episodes * agent.reward_sandbox_seconds * per_sandbox_second,
        api_usd,
        api_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiJudge;

    fn agent() -> Agent {
        Agent {
            turns: 4.0,
            observation_tokens: 300.0,
            tool_seconds: 2.0,
            wait: EnvironmentWait::Sync,
            sandbox_usd_per_hour: 0.36,
            reward_sandbox_seconds: 10.0,
            api_judge: None,
        }
    }

    #[test]
    fn the_equivalent_episode_by_hand() {
        // 4 turns of 500 tokens, 3 tool calls returning 300 tokens each, a 256-token prompt:
        // prefill 256 + 900 = 1,156 tokens, generate 2,000.
        let task = Task {
            prompt_tokens: 256.0,
            mean_response_tokens: 500.0,
            ..Task::default()
        };
        let t = equivalent_task(&task, &agent());
        assert_eq!(t.prompt_tokens, 1156.0);
        assert_eq!(t.mean_response_tokens, 2000.0);
        // One turn, no tool: the task itself.
        assert_eq!(equivalent_task(&task, &Agent::default()), task);
    }

    #[test]
    fn waiting_sandboxes_and_the_api_by_hand() {
        // 1,000 episodes of 3 tool calls at 2 s: 6 s of waiting per step (sync); 3,000 calls ×
        // 2 s × $0.36/h = $0.60; reward tests 1,000 × 10 s × $0.36/h = $1.00.
        let e = environment_step(&agent(), 1000.0, 3156.0, 40.0);
        assert_eq!(e.wait_seconds, 6.0);
        assert_eq!(e.tool_calls, 3000.0);
        assert!((e.tool_sandbox_usd - 0.60).abs() < 1e-12);
        assert!((e.reward_sandbox_usd - 1.00).abs() < 1e-12);
        assert_eq!((e.api_usd, e.api_seconds), (0.0, 0.0));
        // Async: 6 s of waiting hide under 40 s of decoding.
        let hidden = environment_step(
            &Agent {
                wait: EnvironmentWait::Async,
                ..agent()
            },
            1000.0,
            3156.0,
            40.0,
        );
        assert_eq!(hidden.wait_seconds, 0.0);
        // An API judge at $0.15 in / $0.60 out per million tokens (OpenAI's list price for
        // gpt-4o-mini, 2024-07), 64 output tokens, 2M tokens per minute: 1,000 × 3,156 input
        // tokens → $0.4734, 64,000 output → $0.0384; 3,220,000 tokens take 96.6 s.
        let judged = environment_step(
            &Agent {
                api_judge: Some(ApiJudge {
                    usd_per_million_input_tokens: 0.15,
                    usd_per_million_output_tokens: 0.60,
                    output_tokens: 64.0,
                    tokens_per_minute: 2e6,
                }),
                ..agent()
            },
            1000.0,
            3156.0,
            40.0,
        );
        assert!((judged.api_usd - 0.5118).abs() < 1e-9, "{}", judged.api_usd);
        assert!((judged.api_seconds - 96.6).abs() < 1e-9);
        // No environment: nothing.
        assert_eq!(
            environment_step(&Agent::default(), 1000.0, 3156.0, 40.0),
            EnvironmentStep::default()
        );
    }
}
