//! `[outcome]`: the target metric and overrides of the prior's parameters.

use std::path::Path;

use super::validator::Validator;
use crate::error::{Result, suggestion};
use crate::outcome::{OutcomeParams, PARAM_NAMES, Param};
use crate::toml_text::toml_error;

/// Parses `[outcome]`: the metric name and prior-parameter overrides. A number moves a
/// parameter's value and keeps the relative width of its range; `{ value, low, high }` sets all
/// three.
pub(super) fn parse_outcome(
    table: &toml::Table,
    v: &Validator,
) -> Result<(Option<String>, OutcomeParams)> {
    parse_outcome_in(table, v, Some("outcome"))
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
            metric = Some(v.string(value, section, "metric")?);
            continue;
        }
        let Some(param) = params.get_mut(key) else {
            let valid = std::iter::once("metric").chain(PARAM_NAMES.iter().copied());
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
            other => {
                let x = v.float(other, section, key)?;
                let (low_ratio, high_ratio) = if param.value != 0.0 {
                    (param.low / param.value, param.high / param.value)
                } else {
                    (1.0, 1.0)
                };
                *param = if param.value != 0.0 && x != 0.0 {
                    let (a, b) = (x * low_ratio, x * high_ratio);
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
                };
            }
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

/// Outcome parameters from a TOML file whose top-level keys are parameter names (the format of a
/// grid's `[outcome]` table), e.g. the truth file of `rlfrontier simulate`.
pub fn outcome_from_toml(text: &str, path: &Path) -> Result<OutcomeParams> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    // Reuse the [outcome] parser: wrap the table so line lookups find the keys at top level.
    let v = Validator { text, path };
    let (_, params) = parse_outcome_in(&table, &v, None)?;
    Ok(params)
}
