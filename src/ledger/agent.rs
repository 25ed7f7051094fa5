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
//! - **Episodes of different lengths**: with turns varying across episodes (cv_T, `turns_cv`),
//!   the episode's generated tokens T·r have cv² = (1 + cv_T²)(1 + cv_r²) − 1, which sets the
//!   truncation rate and the straggler (the longest episode of the step) through the same
//!   length model as single-turn responses.
//! - **Waiting for tools** (phase `environment`, search bucket, GPU-hours): a call that fails is
//!   retried (failure rate f: 1/(1 − f) attempts, each of mean latency t). With turn-synchronous
//!   rollouts the whole generation pool idles as many rounds per step as the longest episode has
//!   calls (T − 1, or more when turns vary across episodes), each as long as its slowest call:
//!   the mean attempts' time plus, when a p99 latency is given (lognormal latencies), the slowest
//!   of the round's calls' excess over the mean. With asynchronous rollouts only the part of the
//!   longest episode's waiting that its decoding cannot hide,
//!   max(0, calls·t/(1 − f) + excess − decode seconds).
//! - **Sandboxes** (dollars outside the GPUs): every tool call attempt holds a sandbox for t
//!   seconds, and a test-suite reward holds one for `reward_sandbox_seconds` per rollout; both at
//!   `sandbox_usd_per_hour` (search bucket for tool calls, feedback for reward tests).
//! - **API judge** (dollars outside the GPUs, feedback bucket): per rollout, the judge reads the
//!   episode (p' + r' tokens) and writes `output_tokens`, at the provider's prices per million
//!   tokens; a rate limit of R tokens per minute makes a step's judging take at least
//!   60 · tokens / R seconds, during which the generation pool waits (added to `reward`).
//!
//! A single-turn episode with no environment (the defaults) leaves the ledger exactly as it was
//! (tested).

use crate::config::{Agent, EnvironmentWait, Task};
use crate::ledger::lengths::normal_quantile;

/// The equivalent single-turn task of an episode (see the module documentation).
pub fn equivalent_task(task: &Task, agent: &Agent) -> Task {
    let turns = agent.turns.max(1.0);
    let observations = agent.tool_calls() * agent.observation_tokens;
    Task {
        prompt_tokens: task.prompt_tokens + observations,
        mean_response_tokens: task.mean_response_tokens * turns,
        mean_response_tokens_end: task.mean_response_tokens_end.map(|r| r * turns),
        response_length_cv: episode_length_cv(task.response_length_cv, agent.turns_cv),
        ..*task
    }
}

/// The coefficient of variation of an episode's generated tokens T·r when the turns T and the
/// per-turn length r vary independently (and an episode's turns share its length): the variance
/// of a product of independent variables (Goodman, JASA 55, 1960),
/// cv² = (1 + cv_T²)(1 + cv_r²) − 1. With a fixed number of turns it is the per-turn cv.
pub fn episode_length_cv(per_turn_cv: f64, turns_cv: f64) -> f64 {
    if turns_cv == 0.0 {
        return per_turn_cv;
    }
    ((1.0 + turns_cv * turns_cv) * (1.0 + per_turn_cv * per_turn_cv) - 1.0).sqrt()
}

/// Tool calls of the step's longest episode among `episodes`: with turns varying across episodes
/// (cv_T, read as a lognormal number of turns with the stated mean), the turns at the
/// episodes / (episodes + 1) quantile, the same order-statistic approximation as
/// [`slowest_call_seconds`], less the final answer's turn; never below the mean's calls.
pub fn longest_episode_calls(agent: &Agent, episodes: f64) -> f64 {
    let mean_calls = agent.tool_calls();
    if agent.turns_cv <= 0.0 || episodes < 1.0 || mean_calls <= 0.0 {
        return mean_calls;
    }
    let sigma = (1.0 + agent.turns_cv * agent.turns_cv).ln().sqrt();
    let mu = agent.turns.ln() - sigma * sigma / 2.0;
    let longest = (mu + sigma * normal_quantile(episodes / (episodes + 1.0))).exp();
    (longest - 1.0).max(mean_calls)
}

/// Expected seconds of the slowest of `calls` concurrent tool calls (first attempts): the
/// lognormal latency's quantile at calls / (calls + 1), the usual approximation of the expected
/// maximum of n draws (David and Nagaraja, Order Statistics, 3rd ed., 2003, §4.6), never below
/// the mean. Without a stated tail every call takes the mean.
pub fn slowest_call_seconds(agent: &Agent, calls: f64) -> f64 {
    let mean = agent.tool_seconds;
    match agent.tool_latency_sigma() {
        Some(sigma) if calls >= 1.0 => {
            let mu = mean.ln() - sigma * sigma / 2.0;
            (mu + sigma * normal_quantile(calls / (calls + 1.0)))
                .exp()
                .max(mean)
        }
        _ => mean,
    }
}

/// What the environment adds to one step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EnvironmentStep {
    /// Seconds the generation pool idles waiting for tools.
    pub wait_seconds: f64,
    /// Tool call attempts made (retries included).
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
    let attempts = agent.attempts_per_call();
    // A call that fails is retried: its mean time is attempts × t. The tail: a round of
    // `episodes` concurrent calls waits for its slowest one (sync); under async rollouts the
    // slowest episode is taken to have met one slow call. With turns varying across episodes,
    // the step lasts as many rounds as its longest episode has calls.
    let mean_call = attempts * agent.tool_seconds;
    let tail = if calls_per_episode > 0.0 {
        slowest_call_seconds(agent, episodes) - agent.tool_seconds
    } else {
        0.0
    };
    let rounds = longest_episode_calls(agent, episodes);
    let wait_seconds = match agent.wait {
        EnvironmentWait::Sync => rounds * (mean_call + tail),
        EnvironmentWait::Async => (rounds * mean_call + tail - decode_seconds).max(0.0),
    };
    let tool_calls = episodes * calls_per_episode * attempts;
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
            turns_cv: 0.0,
            tool_seconds: 2.0,
            tool_seconds_p99: 0.0,
            tool_failure_rate: 0.0,
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

    #[test]
    fn varying_turns_widen_the_episode_length_by_hand() {
        // cv_r 0.6, cv_T 0.5: (1.25 × 1.36 − 1)^½ = 0.7^½ = 0.83666.
        assert!((episode_length_cv(0.6, 0.5) - 0.7f64.sqrt()).abs() < 1e-12);
        assert_eq!(episode_length_cv(0.6, 0.0), 0.6);
        let task = Task {
            response_length_cv: 0.6,
            ..Task::default()
        };
        let varying = Agent {
            turns_cv: 0.5,
            ..agent()
        };
        assert!(
            (equivalent_task(&task, &varying).response_length_cv - 0.7f64.sqrt()).abs() < 1e-12
        );
    }

    #[test]
    fn retries_and_the_latency_tail_by_hand() {
        // A failure rate of 0.2 makes 1.25 attempts per call: 3 calls × 1.25 × 2 s = 7.5 s of
        // sync waiting, 3,750 attempts over 1,000 episodes, $0.75 of sandboxes.
        let retried = Agent {
            tool_failure_rate: 0.2,
            ..agent()
        };
        let e = environment_step(&retried, 1000.0, 3156.0, 40.0);
        assert!((e.wait_seconds - 7.5).abs() < 1e-12);
        assert!((e.tool_calls - 3750.0).abs() < 1e-9);
        assert!((e.tool_sandbox_usd - 0.75).abs() < 1e-12);
        // A p99 of 6 s over a 2 s mean: ln 3 = 2.3263σ − σ²/2 → σ = 2.3263 − (2.3263² − 2 ln 3)^½
        // = 0.5334; μ = ln 2 − σ²/2 = 0.5509. The slowest of 1,000 calls sits at the 1000/1001
        // quantile, z = 3.0905: exp(0.5509 + 0.5334 × 3.0905) = 9.02 s.
        let tailed = Agent {
            tool_seconds_p99: 6.0,
            ..agent()
        };
        let sigma = tailed.tool_latency_sigma().unwrap();
        let expected_sigma =
            2.326_347_874_040_841 - (2.326_347_874_040_841f64.powi(2) - 2.0 * 3f64.ln()).sqrt();
        assert!((sigma - expected_sigma).abs() < 1e-12);
        assert!((sigma - 0.5334).abs() < 5e-4, "{sigma}");
        let slowest = slowest_call_seconds(&tailed, 1000.0);
        let mu = 2f64.ln() - sigma * sigma / 2.0;
        let z = crate::ledger::lengths::normal_quantile(1000.0 / 1001.0);
        assert!((slowest - (mu + sigma * z).exp()).abs() < 1e-9);
        assert!((slowest - 9.02).abs() < 0.01, "{slowest}");
        // Sync: every one of the 3 rounds waits for its slowest call.
        let e = environment_step(&tailed, 1000.0, 3156.0, 40.0);
        assert!((e.wait_seconds - 3.0 * slowest).abs() < 1e-9);
        // Sandboxes are paid at the mean: the tail does not change them.
        assert!((e.tool_sandbox_usd - 0.60).abs() < 1e-12);
        // Async: 3 × 2 s + one slow call's excess (7.02 s) = 13.02 s, less 10 s of decoding.
        let e = environment_step(
            &Agent {
                wait: EnvironmentWait::Async,
                ..tailed
            },
            1000.0,
            3156.0,
            10.0,
        );
        assert!((e.wait_seconds - (6.0 + slowest - 2.0 - 10.0)).abs() < 1e-9);
        // A tail no lognormal can have is refused by name.
        let bad = Agent {
            tool_seconds_p99: 40.0,
            ..agent()
        };
        assert_eq!(bad.validate().unwrap_err().0, "tool_seconds_p99");
        assert_eq!(
            Agent {
                tool_failure_rate: 0.99,
                ..agent()
            }
            .validate()
            .unwrap_err()
            .0,
            "tool_failure_rate"
        );
    }

    #[test]
    fn varying_turns_make_the_longest_episode_set_the_rounds_by_hand() {
        // Mean 4 turns, cv 0.5: σ² = ln 1.25 = 0.22314, σ = 0.47238, μ = ln 4 − σ²/2 = 1.27472.
        // Of 1,000 episodes the longest sits at z = 3.0905: exp(1.27472 + 0.47238 × 3.0905) =
        // 15.40 turns, so 14.40 rounds of calls (sync: 14.40 × 2 s = 28.8 s of waiting).
        let varying = Agent {
            turns_cv: 0.5,
            ..agent()
        };
        let rounds = longest_episode_calls(&varying, 1000.0);
        let sigma = 1.25f64.ln().sqrt();
        let mu = 4f64.ln() - sigma * sigma / 2.0;
        let z = crate::ledger::lengths::normal_quantile(1000.0 / 1001.0);
        assert!((rounds - ((mu + sigma * z).exp() - 1.0)).abs() < 1e-12);
        assert!((rounds - 14.40).abs() < 0.01, "{rounds}");
        let e = environment_step(&varying, 1000.0, 3156.0, 40.0);
        assert!((e.wait_seconds - rounds * 2.0).abs() < 1e-9);
        // Sandboxes are paid for the mean calls of every episode, not the longest one's.
        assert!((e.tool_sandbox_usd - 0.60).abs() < 1e-12);
        // Fixed turns: the mean's calls.
        assert_eq!(longest_episode_calls(&agent(), 1000.0), 3.0);
    }
}
