//! A grid's summary in words: hardware, task, every axis with its values, and the cell count
//! (`rlfrontier check`, and the report's "Grid" section).

use super::{Axis, BudgetAxis, Grid};
use crate::config::Schedule;
use crate::format::{money, thousands};

/// The summary of a grid, one fact per line, with a table of its axes.
pub fn describe(grid: &Grid) -> String {
    let a = &grid.axes;
    let h = &grid.hardware;
    let t = &grid.task;
    let mut text = format!("grid `{}` ({})\n", grid.name, grid.path.display());
    if !grid.description.is_empty() {
        text.push_str(&format!("  {}\n", grid.description));
    }
    text.push_str(&format!(
        "hardware: {} x {} at ${}/GPU-hour, {}\n",
        h.gpus,
        h.gpu.id,
        money(h.usd_per_gpu_hour),
        match h.schedule {
            Schedule::Colocated => "colocated (generation and training share the GPUs)".to_string(),
            Schedule::Async => format!(
                "async ({:.0}% of GPUs generate)",
                100.0 * h.async_rollout_fraction
            ),
            Schedule::Separate => format!(
                "separate ({:.0}% of GPUs generate, then the rest train)",
                100.0 * h.async_rollout_fraction
            ),
        }
    ));
    text.push_str(&format!(
        "task: prompts of {} tokens, responses of {} tokens on average uncapped (cv {}), pass rate Beta(mean {}, concentration {})\n",
        thousands(t.prompt_tokens),
        thousands(t.mean_response_tokens),
        crate::format::number(t.response_length_cv),
        crate::format::number(t.pass_rate_mean),
        crate::format::number(t.pass_rate_concentration)
    ));
    text.push_str(&base_scores_line(grid));
    text.push_str(&axes_table(a).render());
    let total = grid.cell_count().unwrap_or(u64::MAX);
    let valid = grid.valid_cell_count();
    text.push_str(&format!(
        "cells: {} ({} in the product of axes, {} pruned by constraints)\n",
        thousands(valid as f64),
        thousands(total as f64),
        thousands((total - valid) as f64)
    ));
    text
}

/// The grid's axes as a table: each axis with its values as grids write them and their count.
fn axes_table(a: &super::Axes) -> crate::format::Table {
    let mut table = crate::format::Table::new(["axis", "values", "count"]);
    for axis in Axis::ALL {
        let name = match (&a.budget, axis) {
            (BudgetAxis::Budgets { unit, .. }, Axis::Budget) => {
                format!("budget ({})", unit.as_str())
            }
            (BudgetAxis::Iterations(_), Axis::Budget) => "iterations".to_string(),
            _ => axis.name().to_string(),
        };
        table.row([name, a.labels(axis).join(", "), a.len(axis).to_string()]);
    }
    table
}

/// An axis's values in JSON: a one-column axis's values as they are (ids, counts, reals), a
/// two-column one's as grids write them (`lora:64`, `prm:qwen2.5-math-prm-7b`).
fn axis_json(a: &super::Axes, axis: Axis) -> serde_json::Value {
    if axis.columns().len() > 1 {
        return a.labels(axis).into();
    }
    (0..a.len(axis))
        .map(|index| -> serde_json::Value {
            match a.cell_values(axis, index).as_slice()[0] {
                super::AxisValue::Text(text) => text.into(),
                super::AxisValue::Count(n) => n.into(),
                super::AxisValue::Real(x) => x.into(),
                super::AxisValue::Number(text) => text.as_str().into(),
            }
        })
        .collect()
}

/// The same summary as JSON: grid, hardware, task, axes (values as `cost` and grids write
/// them) and cell counts.
pub fn describe_json(grid: &Grid) -> serde_json::Value {
    let a = &grid.axes;
    let h = &grid.hardware;
    let t = &grid.task;
    let mut axes = serde_json::Map::new();
    for axis in Axis::ALL.into_iter().filter(|&axis| axis != Axis::Budget) {
        axes.insert(axis.name().into(), axis_json(a, axis));
    }
    let (budget_unit, budgets): (&str, Vec<f64>) = match &a.budget {
        BudgetAxis::Budgets { unit, amounts } => (unit.as_str(), amounts.clone()),
        BudgetAxis::Iterations(n) => ("iterations", n.iter().map(|&x| x as f64).collect()),
    };
    axes.insert("budget".into(), budgets.into());
    let total = grid.cell_count().unwrap_or(u64::MAX);
    let valid = grid.valid_cell_count();
    serde_json::json!({
        "name": grid.name,
        "file": grid.path.display().to_string(),
        "description": grid.description,
        "sha256": grid.sha256,
        "predictions": grid.outcome_state.label(),
        "hardware": {
            "gpu": h.gpu.id,
            "gpus": h.gpus,
            "usd_per_gpu_hour": h.usd_per_gpu_hour,
            "schedule": h.schedule.as_str(),
        },
        "task": {
            "prompt_tokens": t.prompt_tokens,
            "mean_response_tokens": t.mean_response_tokens,
            "response_length_cv": t.response_length_cv,
            "pass_rate_mean": t.pass_rate_mean,
            "pass_rate_concentration": t.pass_rate_concentration,
        },
        "budget_unit": budget_unit,
        "axes": axes,
        "cells": { "total": total, "valid": valid, "pruned": total - valid },
    })
}

/// Where each model's base score (R0) comes from: measured (`[task] base_score`) or the prior's
/// size-dependent default.
fn base_scores_line(grid: &Grid) -> String {
    if grid.targets.len() >= 2 {
        return grid
            .targets
            .iter()
            .map(|t| {
                format!(
                    "target {}: {}",
                    t.name,
                    measured_line(grid, &t.measured_base_scores, &t.published_base_scores)
                )
            })
            .collect();
    }
    measured_line(
        grid,
        &grid.measured_base_scores,
        &grid.published_base_scores,
    )
}

/// One metric's base scores in words.
fn measured_line(
    grid: &Grid,
    scores: &[Option<f64>],
    published: &[Option<crate::catalog::base_score::PublishedBase>],
) -> String {
    let models = &grid.axes.model;
    let measured: Vec<String> = models
        .iter()
        .zip(scores)
        .zip(published.iter().chain(std::iter::repeat(&None)))
        .filter_map(|((m, s), published)| {
            let s = crate::format::number((*s)?);
            Some(match published {
                Some(b) => format!(
                    "{} {s} (published: {}, {})",
                    m.id, b.published.source, b.published.setting
                ),
                None => format!("{} {s}", m.id),
            })
        })
        .collect();
    if measured.is_empty() {
        return "base scores: the prior's size-dependent default (give your measured pre-RL scores as [task] base_score)\n".to_string();
    }
    let defaulted: Vec<&str> = models
        .iter()
        .zip(scores)
        .filter(|(_, s)| s.is_none())
        .map(|(m, _)| m.id.as_str())
        .collect();
    let mut line = format!("base scores: measured {}", measured.join(", "));
    if !defaulted.is_empty() {
        line.push_str(&format!(
            "; the prior's default for {}",
            defaulted.join(", ")
        ));
    }
    line.push('\n');
    line
}
