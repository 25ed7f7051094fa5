//! `[outcome]`: the target metric and overrides of the prior's parameters.

use std::path::Path;

use super::validator::Validator;
use crate::error::{Result, suggestion};
use crate::outcome::{OutcomeParams, PARAM_NAMES, Param};
use crate::toml_text::toml_error;

/// What `[outcome]` says: the target metric(s) and the prior's parameters.
pub(super) struct OutcomeTable {
    /// `metric = "..."`, or the first of `metrics`.
    pub(super) metric: Option<String>,
    /// `metrics = [...]`: every target metric, in order (empty when not given).
    pub(super) metrics: Vec<String>,
    /// The prior's parameters with the overrides applied.
    pub(super) params: OutcomeParams,
}

/// Parses `[outcome]`: the metric name (or several, `metrics = ["math500", "aime24"]`) and
/// prior-parameter overrides. A number moves a parameter's value and keeps the relative width
/// of its range; `{ value, low, high }` sets all three.
pub(super) fn parse_outcome(table: &toml::Table, v: &Validator) -> Result<OutcomeTable> {
    let section = Some("outcome");
    let mut metrics: Vec<String> = Vec::new();
    let mut rest = table.clone();
    if let Some(value) = rest.remove("metrics") {
        let toml::Value::Array(items) = &value else {
            return Err(v.err(
                section,
                "metrics",
                "expected a list of metric names, e.g. metrics = [\"math500\", \"aime24\"]",
            ));
        };
        for item in items {
            let name = v.string(item, section, "metrics")?;
            if name.trim().is_empty() {
                return Err(v.err(section, "metrics", "metric names must not be empty"));
            }
            check_metric_name(&name, v, section, "metrics")?;
            if metrics.contains(&name) {
                return Err(v.err(
                    section,
                    "metrics",
                    format!("`{name}` is listed twice; list each target metric once"),
                ));
            }
            metrics.push(name);
        }
        if metrics.is_empty() {
            return Err(v.err(
                section,
                "metrics",
                "the list is empty; name at least one target metric, or remove the key",
            ));
        }
        if table.contains_key("metric") {
            return Err(v.err(
                section,
                "metric",
                "give either `metric` (one target) or `metrics` (several), not both",
            ));
        }
    }
    let (metric, params) = parse_outcome_in(&rest, v, section)?;
    Ok(OutcomeTable {
        metric: metric.or_else(|| metrics.first().cloned()),
        metrics,
        params,
    })
}

/// Longest metric name: it becomes a CSV column, a folder name and a Markdown heading.
pub const MAX_METRIC_NAME_CHARS: usize = 64;

/// Whether `name` can name a metric: 1-64 characters, starting with a letter or digit (nothing a
/// spreadsheet reads as a formula), then letters, digits or `_ - . @ / : +` (`pass@1`,
/// `val/test_score/math`, `AIME24_avg@64`).
pub fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().count() <= MAX_METRIC_NAME_CHARS
        && chars.all(|c| c.is_ascii_alphanumeric() || "_-.@/:+".contains(c))
}

fn check_metric_name(name: &str, v: &Validator, section: Option<&str>, key: &str) -> Result<()> {
    if is_metric_name(name) {
        return Ok(());
    }
    Err(v.err(
        section,
        key,
        format!(
            "`{name}` is not a metric name: use 1-{MAX_METRIC_NAME_CHARS} characters, starting with a letter or digit, then letters, digits or `_ - . @ / : +` (e.g. `math500`, `pass@1`)"
        ),
    ))
}

fn parse_outcome_in(
    table: &toml::Table,
    v: &Validator,
    section: Option<&str>,
) -> Result<(Option<String>, OutcomeParams)> {
    let mut params = OutcomeParams::default();
    let mut metric = None;
    for (key, value) in table {
        if key == "metric" {
            let name = v.string(value, section, "metric")?;
            check_metric_name(&name, v, section, "metric")?;
            metric = Some(name);
            continue;
        }
        let Some(param) = params.get_mut(key) else {
            let valid = ["metric", "metrics"]
                .into_iter()
                .chain(PARAM_NAMES.iter().copied());
            return Err(v.err(
                section,
                key,
                format!("unknown key in [outcome]; {}", suggestion(key, valid)),
            ));
        };
        match value {
            toml::Value::Table(t) => {
                for k in t.keys() {
                    if !["value", "low", "high"].contains(&k.as_str()) {
                        return Err(v.err(
                            section,
                            key,
                            format!(
                                "unknown field `{k}`; {}",
                                suggestion(k, ["value", "low", "high"])
                            ),
                        ));
                    }
                }
                let get = |name: &str, default: f64| -> Result<f64> {
                    match t.get(name) {
                        Some(x) => v.float(x, section, key),
                        None => Ok(default),
                    }
                };
                let value = get("value", param.value)?;
                *param = Param {
                    value,
                    low: get("low", value.min(param.low))?,
                    high: get("high", value.max(param.high))?,
                };
            }
            other => *param = rescaled(*param, v.float(other, section, key)?),
        }
    }
    params.validate().map_err(|m| {
        let key = m.split(':').next().unwrap_or("").to_string();
        v.err(
            section,
            &key,
            m.split_once(": ").map(|(_, r)| r.to_string()).unwrap_or(m),
        )
    })?;
    Ok((metric, params))
}

/// A parameter given as a bare number `x`: its range scaled with it (the same ratios to the
/// value as the default's), or, when the default or `x` is 0, widened to include `x`.
fn rescaled(param: Param, x: f64) -> Param {
    if param.value != 0.0 && x != 0.0 {
        let (a, b) = (
            x * (param.low / param.value),
            x * (param.high / param.value),
        );
        Param {
            value: x,
            low: a.min(b),
            high: a.max(b),
        }
    } else {
        Param {
            value: x,
            low: x.min(param.low),
            high: x.max(param.high),
        }
    }
}

/// Outcome parameters from a TOML file whose top-level keys are parameter names (the format of a
/// grid's `[outcome]` table), e.g. the truth file of `rlfrontier simulate`.
pub fn outcome_from_toml(text: &str, path: &Path) -> Result<OutcomeParams> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    // Reuse the [outcome] parser: wrap the table so line lookups find the keys at top level.
    let v = Validator { text, path };
    let (_, params) = parse_outcome_in(&table, &v, None)?;
    Ok(params)
}
