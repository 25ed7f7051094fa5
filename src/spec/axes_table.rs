//! The `[axes]` and `[constraints]` tables of a grid file, and the base scores by model and
//! metric that `[task] base_score` gives: each value checked, with one-line errors that name the
//! file, line and field.

use super::raw::{RawAxes, RawConstraints};
use super::validator::{Spanned, Validator};
use super::{Axes, Axis, BudgetAxis, Constraints};
use crate::catalog::Catalog;
use crate::config::{Agent, Algorithm, ApiJudge, Budget, Finetune, Reward};
use crate::error::{Result, suggestion};

/// `[axes]`: every axis's values, checked for duplicates and for what the algorithm needs.
pub(super) fn axes(
    raw: Option<RawAxes>,
    v: &Validator,
    catalog: &Catalog,
    algorithm: Algorithm,
    hardware_engine: &crate::catalog::EngineSpec,
    agent_shape: [(f64, bool); 2],
    (agent, agent_judge_id, agent_judge_keys): (&Agent, Option<String>, bool),
) -> Result<Axes> {
    let Some(ra) = raw else {
        return Err(v.missing(
            None,
            "axes",
            "add an [axes] table listing model, group_size, max_response_len, ... and budget",
        ));
    };
    let ax = Some("axes");
    let (model_ids, model, finetune) = policies(&ra, v, catalog)?;
    let reward = v
        .string_list_or(ra.list(Axis::Reward), ax, "reward", "rule")?
        .iter()
        .map(|s| Reward::parse(s, catalog).map_err(|m| v.err(ax, "reward", m)))
        .collect::<Result<Vec<_>>>()?;
    let [
        group_size,
        max_response_len,
        update_epochs,
        prompts_per_step,
    ] = count_axes(&ra, v, algorithm)?;
    let budget = budget_axis(&ra, v)?;
    let engine = engine_axis(&ra, v, catalog, hardware_engine)?;
    let (turns, tool_seconds) = episode_axes(&ra, v, agent_shape)?;
    let judge = judge_axis(
        v,
        ra.list(Axis::Judge),
        catalog,
        (agent, agent_judge_id),
        agent_judge_keys,
    )?;
    v.no_duplicates(ax, "model", &model_ids)?;
    // Two spellings of one model (a case, an alias, its Hugging Face name) would sweep every
    // cell twice.
    for (i, m) in model.iter().enumerate() {
        if let Some(j) = model[..i].iter().position(|n| n.id == m.id) {
            return Err(v.err(
                ax,
                "model",
                format!(
                    "`{}` and `{}` are the same model ({}); list it once",
                    model_ids[j], model_ids[i], m.id
                ),
            ));
        }
    }
    v.no_duplicates(
        ax,
        "finetune",
        &finetune.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
    )?;
    v.no_duplicates(
        ax,
        "reward",
        &reward.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
    )?;
    let axes = Axes {
        engine,
        model,
        finetune,
        reward,
        turns,
        tool_seconds,
        judge,
        group_size,
        max_response_len,
        update_epochs,
        prompts_per_step,
        budget,
    };
    Ok(axes)
}

/// `[axes] group_size`, `max_response_len`, `update_epochs` (1 when absent) and
/// `prompts_per_step`, each a list of positive counts (GRPO's groups at least 2).
fn count_axes(ra: &RawAxes, v: &Validator, algorithm: Algorithm) -> Result<[Vec<u64>; 4]> {
    let ax = Some("axes");
    let min_group = if algorithm == Algorithm::Grpo { 2 } else { 1 };
    let group_size = v.int_list(
        ra.list(Axis::GroupSize),
        ax,
        "group_size",
        min_group,
        "group_size = [4, 8, 16]",
    )?;
    let max_response_len = v.int_list(
        ra.list(Axis::MaxResponseLen),
        ax,
        "max_response_len",
        1,
        "max_response_len = [2048, 4096]",
    )?;
    let update_epochs = match ra.list(Axis::UpdateEpochs) {
        Some(_) => v.int_list(
            ra.list(Axis::UpdateEpochs),
            ax,
            "update_epochs",
            1,
            "update_epochs = [1, 2, 4]",
        )?,
        None => vec![1],
    };
    let prompts_per_step = v.int_list(
        ra.list(Axis::PromptsPerStep),
        ax,
        "prompts_per_step",
        1,
        "prompts_per_step = [256]",
    )?;
    Ok([
        group_size,
        max_response_len,
        update_epochs,
        prompts_per_step,
    ])
}

/// The episode's shape: `[axes] turns` and `[axes] tool_seconds` sweep the mean model turns per
/// episode and the mean tool latency (the rest of `[agent]` is shared); otherwise the one value of
/// `[agent]` (single-turn, no tools, by default).
fn episode_axes(
    ra: &RawAxes,
    v: &Validator,
    agent_shape: [(f64, bool); 2],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let [(agent_turns, turns_in_agent), (agent_tool, tool_in_agent)] = agent_shape;
    let turns = agent_axis(
        v,
        ra.list(Axis::Turns),
        "turns",
        (agent_turns, turns_in_agent),
        (1.0, crate::config::MAX_TURNS),
        "turns = [1, 2, 4]",
    )?;
    let tool_seconds = agent_axis(
        v,
        ra.list(Axis::ToolSeconds),
        "tool_seconds",
        (agent_tool, tool_in_agent),
        (0.0, crate::config::MAX_TOOL_SECONDS),
        "tool_seconds = [0.5, 5, 30]",
    )?;
    Ok((turns, tool_seconds))
}

/// `[axes] model` and `[axes] finetune`: the policies (resolved in the catalog, none a reward
/// model) with their ids as written, and the fine-tuning modes (no LoRA rank above a policy's
/// hidden size: it would not be low-rank).
fn policies(
    ra: &RawAxes,
    v: &Validator,
    catalog: &Catalog,
) -> Result<(Vec<String>, Vec<crate::catalog::ModelSpec>, Vec<Finetune>)> {
    let ax = Some("axes");
    let model_ids = v.string_list(
        ra.list(Axis::Model),
        ax,
        "model",
        "model = [\"qwen2.5-7b\"]",
    )?;
    let mut model = Vec::new();
    for id in &model_ids {
        let m = catalog
            .resolve_model(id)
            .map_err(|msg| v.err(ax, "model", msg))?;
        if !m.lm_head {
            return Err(v.err(ax, "model", format!("`{id}` is a reward model (no LM head) and cannot be the policy; use it as `reward = [\"prm:{id}\"]`")));
        }
        model.push(m);
    }
    let finetune = v
        .string_list_or(ra.list(Axis::Finetune), ax, "finetune", "full")?
        .iter()
        .map(|s| Finetune::parse(s).map_err(|m| v.err(ax, "finetune", m)))
        .collect::<Result<Vec<_>>>()?;
    for f in &finetune {
        if let Finetune::Lora(rank) = f
            && let Some(m) = model.iter().find(|m| *rank > m.hidden)
        {
            return Err(v.err(
                ax,
                "finetune",
                format!(
                    "`lora:{rank}` is above the hidden size of `{}` ({}); use a rank below it, or `full`",
                    m.id, m.hidden
                ),
            ));
        }
    }
    Ok((model_ids, model, finetune))
}

/// `[axes] engine`: the engines it sweeps (costs only: the outcome does not depend on the
/// engine), each listed once; without it, `[hardware] engine` alone.
fn engine_axis(
    ra: &RawAxes,
    v: &Validator,
    catalog: &Catalog,
    hardware_engine: &crate::catalog::EngineSpec,
) -> Result<Vec<crate::catalog::EngineSpec>> {
    let ax = Some("axes");
    if ra.list(Axis::Engine).is_none() {
        return Ok(vec![hardware_engine.clone()]);
    }
    let ids = v.string_list(
        ra.list(Axis::Engine),
        ax,
        "engine",
        "engine = [\"vllm-cudagraph\", \"vllm-eager\"]",
    )?;
    v.no_duplicates(ax, "engine", &ids)?;
    ids.iter()
        .map(|id| {
            catalog
                .engine(id)
                .cloned()
                .map_err(|m| v.err(ax, "engine", m))
        })
        .collect()
}

/// An axis of the episode's shape (`turns`, `tool_seconds`): the listed numbers, each within
/// `range` and listed once; or, without the key, `[agent]`'s one value. Setting it in both
/// places is refused, naming both.
fn agent_axis(
    v: &Validator,
    value: &Option<Spanned>,
    key: &str,
    (agent_value, in_agent): (f64, bool),
    (low, high): (f64, f64),
    example: &str,
) -> Result<Vec<f64>> {
    let ax = Some("axes");
    if value.is_none() {
        return Ok(vec![agent_value]);
    }
    if in_agent {
        return Err(v.err(
            ax,
            key,
            format!(
                "is also set in [agent]; keep one: `[axes] {example}` to sweep it, or `[agent] {key}` for one value"
            ),
        ));
    }
    let mut out: Vec<f64> = Vec::new();
    for item in &v.list(value, ax, key, example)? {
        let x = v.float(item, ax, key)?;
        if !(low..=high).contains(&x) {
            return Err(v.err_at(
                item,
                ax,
                key,
                format!("{x} must lie between {low} and {high}"),
            ));
        }
        if out.contains(&x) {
            return Err(v.err_at(
                item,
                ax,
                key,
                format!("{x} is listed twice; remove the duplicate"),
            ));
        }
        out.push(x);
    }
    Ok(out)
}

/// The judge axis: `none` or `[[api]]` ids of the catalog, each listed once, priced at the
/// catalog's list prices with `[agent]`'s `judge_output_tokens` and `judge_tokens_per_minute`
/// (64 and none by default). Without the key: the one judge of `[agent]` (its id, `custom` for
/// prices given there, or `none`). Prices given in `[agent]` and a judge axis together are
/// refused, naming both.
fn judge_axis(
    v: &Validator,
    value: &Option<Spanned>,
    catalog: &Catalog,
    (agent, agent_judge_id): (&Agent, Option<String>),
    agent_judge_keys: bool,
) -> Result<Vec<crate::spec::JudgeChoice>> {
    let ax = Some("axes");
    let Some(raw) = value else {
        return Ok(vec![crate::spec::JudgeChoice {
            id: match &agent.api_judge {
                None => "none".to_string(),
                Some(_) => agent_judge_id.unwrap_or_else(|| "custom".to_string()),
            },
            api: agent.api_judge,
        }]);
    };
    if agent_judge_keys {
        return Err(v.err_at(
            raw,
            ax,
            "judge",
            "the judge is also set in [agent] (judge_api or its prices); keep one: `[axes] judge = [\"none\", \"gpt-4o-mini\"]` to sweep it, or `[agent] judge_api` for one",
        ));
    }
    let ids = v.string_list(value, ax, "judge", "judge = [\"none\", \"gpt-4o-mini\"]")?;
    v.no_duplicates(ax, "judge", &ids)?;
    let (output_tokens, tokens_per_minute) = agent
        .api_judge
        .map_or((64.0, 0.0), |j| (j.output_tokens, j.tokens_per_minute));
    ids.iter()
        .map(|id| {
            if id.eq_ignore_ascii_case("none") {
                return Ok(crate::spec::JudgeChoice {
                    id: "none".to_string(),
                    api: None,
                });
            }
            let spec = catalog.api(id).map_err(|m| v.err_at(raw, ax, "judge", m))?;
            Ok(crate::spec::JudgeChoice {
                id: spec.id.clone(),
                api: Some(ApiJudge {
                    usd_per_million_input_tokens: spec.usd_per_million_input_tokens,
                    usd_per_million_output_tokens: spec.usd_per_million_output_tokens,
                    output_tokens,
                    tokens_per_minute,
                }),
            })
        })
        .collect()
}

/// `[constraints]`: bounds on rollouts per step.
pub(super) fn constraints(rc: &RawConstraints, v: &Validator) -> Result<Constraints> {
    let cs = Some("constraints");
    let constraints = Constraints {
        max_rollouts_per_step: match &rc.max_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "max_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
        min_rollouts_per_step: match &rc.min_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "min_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
    };
    Ok(constraints)
}

/// Most values of the budget (or iterations) axis.
pub const MAX_BUDGET_VALUES: usize = 256;

/// The budget axis: budgets in one unit (no duplicates), or a fixed number of iterations.
fn budget_axis(ra: &RawAxes, v: &Validator) -> Result<BudgetAxis> {
    let ax = Some("axes");
    // Refused before the values are read one by one: a list of thousands is a mistake.
    let at_most = |count: usize, key: &str| -> Result<()> {
        match count > MAX_BUDGET_VALUES {
            true => Err(v.err(ax, key, format!(
                "lists {count} values; at most {MAX_BUDGET_VALUES}: each one gets its own frontier, shortlist and recommendation from joint draws over its candidates, so thousands of budgets take minutes; sample the range with fewer values (20 log-spaced ones resolve a frontier)"
            ))),
            false => Ok(()),
        }
    };
    Ok(match (ra.list(Axis::Budget), &ra.iterations) {
        (Some(_), Some(_)) => {
            return Err(v.err(ax, "iterations", "give either `budget` or `iterations`, not both: a budget fixes the spend and derives the steps, iterations fix the steps"));
        }
        (None, None) => {
            return Err(v.missing(ax, "budget", "add `budget = [\"1e17 flops\"]` (or \"500 gpu-h\", \"2000 usd\"), or a fixed `iterations = [100]`"));
        }
        (None, Some(_)) => {
            let steps = v.int_list(
                &ra.iterations,
                ax,
                "iterations",
                1,
                "iterations = [100, 200]",
            )?;
            at_most(steps.len(), "iterations")?;
            BudgetAxis::Iterations(steps)
        }
        (Some(_), None) => {
            let texts = v.string_list(
                ra.list(Axis::Budget),
                ax,
                "budget",
                "budget = [\"20000 usd\"] (or \"500 gpu-h\", \"1e17 flops\")",
            )?;
            at_most(texts.len(), "budget")?;
            let mut unit = None;
            let mut amounts = Vec::new();
            let mut seen = std::collections::BTreeSet::new();
            for t in &texts {
                let b = Budget::parse(t).map_err(|m| v.err(ax, "budget", m))?;
                match unit {
                    None => unit = Some(b.unit),
                    Some(u) if u != b.unit => {
                        return Err(v.err(ax, "budget", format!(
                            "mixes units (`{}` and `{}`); use one unit per grid so that cells compare on one cost axis",
                            u.as_str(),
                            b.unit.as_str()
                        )));
                    }
                    _ => {}
                }
                // Amounts are finite and positive, so equal amounts have equal bits.
                if !seen.insert(b.amount.to_bits()) {
                    return Err(v.err(
                        ax,
                        "budget",
                        format!("`{t}` is listed twice; remove the duplicate"),
                    ));
                }
                amounts.push(b.amount);
            }
            BudgetAxis::Budgets {
                unit: unit.expect("non-empty list"),
                amounts,
            }
        }
    })
}

/// `[task] base_score`: the measured pre-RL score per model on each target metric. With one
/// metric: a number for every model or a table `{ "model-id" = score }`. With several
/// (`[outcome] metrics`): a table keyed by metric, each value a number or a per-model table.
/// Returns one list per metric (one list when there is one metric), one entry per model (None
/// where the prior's default applies).
pub(super) fn base_scores(
    value: &Option<Spanned>,
    v: &Validator,
    axes: &Axes,
    metrics: &[String],
) -> Result<Vec<Vec<Option<f64>>>> {
    let ts = Some("task");
    let per_metric = metrics.len().max(1);
    let Some(spanned) = value else {
        return Ok(vec![vec![None; axes.model.len()]; per_metric]);
    };
    if metrics.len() < 2 {
        return Ok(vec![model_scores(
            spanned,
            spanned.get_ref(),
            v,
            axes,
            "base_score",
        )?]);
    }
    let toml::Value::Table(table) = spanned.get_ref() else {
        return Err(v.err_at(
            spanned,
            ts,
            "base_score",
            format!(
                "with several target metrics, give a table keyed by metric, e.g. base_score = {{ {} = 0.6 }}",
                metrics[0]
            ),
        ));
    };
    for key in table.keys() {
        if !metrics.contains(key) {
            return Err(v.err_at(
                spanned,
                ts,
                "base_score",
                format!(
                    "`{key}` is not in [outcome] metrics; {}",
                    suggestion(key, metrics.iter().map(String::as_str))
                ),
            ));
        }
    }
    metrics
        .iter()
        .map(|m| match table.get(m) {
            Some(x) => model_scores(spanned, x, v, axes, &format!("base_score.{m}")),
            None => Ok(vec![None; axes.model.len()]),
        })
        .collect()
}

/// One metric's base scores: a number for every model, or a per-model table.
fn model_scores(
    spanned: &Spanned,
    value: &toml::Value,
    v: &Validator,
    axes: &Axes,
    key: &str,
) -> Result<Vec<Option<f64>>> {
    let ts = Some("task");
    let score = |x: &toml::Value, key: &str| -> Result<f64> {
        let s = v.float(x, ts, key)?;
        if !(0.0..=1.0).contains(&s) {
            let fix = if (1.0..=100.0).contains(&s) {
                format!(
                    "; scores are fractions: write {}",
                    crate::format::number(s / 100.0)
                )
            } else {
                String::new()
            };
            return Err(v.err_at(
                spanned,
                ts,
                key,
                format!("{s} must lie in [0, 1] (the measured pass rate before RL){fix}"),
            ));
        }
        Ok(s)
    };
    match value {
        toml::Value::Table(table) => {
            let ids: Vec<&str> = axes.model.iter().map(|m| m.id.as_str()).collect();
            for k in table.keys() {
                if !ids.contains(&k.as_str()) {
                    return Err(v.err_at(
                        spanned,
                        ts,
                        key,
                        format!(
                            "`{k}` is not on the model axis; {}",
                            suggestion(k, ids.iter().copied())
                        ),
                    ));
                }
            }
            axes.model
                .iter()
                .map(|m| {
                    table
                        .get(&m.id)
                        .map(|x| score(x, &format!("{key}.{}", m.id)))
                        .transpose()
                })
                .collect()
        }
        single => Ok(vec![Some(score(single, key)?); axes.model.len()]),
    }
}
