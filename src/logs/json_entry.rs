//! One JSON object of a metrics log (a veRL file-logger line, a JSON line, an entry of TRL's
//! `log_history`) read straight into its step and numeric metrics, without building a JSON tree:
//! strings, arrays and nested objects other than `data` are skipped as they are parsed, so the
//! memory a line takes is that of the metrics it holds, not ~16 times its bytes (a 100 MB
//! one-line log aborted under a 1.2 GB limit when it was read as a `serde_json::Value`).

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

/// A logged `step` as written: a number (its exact integer, or its value), or something else
/// (described for the error).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum StepValue {
    /// An unsigned integer literal.
    Integer(u64),
    /// Any other number.
    Number(f64),
    /// Not a number (`"7"`, `true`, `null`, a list).
    Other(String),
}

impl StepValue {
    /// The step, read as [`super::json_step`] reads a JSON value.
    pub(super) fn step(&self) -> std::result::Result<u64, String> {
        match self {
            StepValue::Integer(k) => super::step_of_number(*k as f64, &k.to_string()).map(|_| *k),
            StepValue::Number(x) => super::step_of_number(*x, &crate::format::number(*x)),
            StepValue::Other(what) => {
                Err(format!("the step {what} is not a whole number (such as 7)"))
            }
        }
    }
}

impl<'de> Deserialize<'de> for StepValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StepValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a step")
            }
            fn visit_u64<E>(self, v: u64) -> Result<StepValue, E> {
                Ok(StepValue::Integer(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StepValue, E> {
                Ok(StepValue::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StepValue, E> {
                Ok(StepValue::Number(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<StepValue, E> {
                let shown: String = v.chars().take(40).collect();
                Ok(StepValue::Other(format!(
                    "\"{}\"",
                    crate::error::one_line(&shown)
                )))
            }
            fn visit_bool<E>(self, v: bool) -> Result<StepValue, E> {
                Ok(StepValue::Other(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<StepValue, E> {
                Ok(StepValue::Other("null".to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<StepValue, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(StepValue::Other("(a list)".to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<StepValue, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(StepValue::Other("(an object)".to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A metric's value: a finite number, or nothing (anything else is skipped unread).
struct MetricValue(Option<f64>);

impl<'de> Deserialize<'de> for MetricValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a metric value")
            }
            fn visit_u64<E>(self, v: u64) -> Result<MetricValue, E> {
                Ok(MetricValue(Some(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<MetricValue, E> {
                Ok(MetricValue(Some(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<MetricValue, E> {
                Ok(MetricValue(v.is_finite().then_some(v)))
            }
            fn visit_str<E>(self, _: &str) -> Result<MetricValue, E> {
                Ok(MetricValue(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<MetricValue, E> {
                Ok(MetricValue(None))
            }
            fn visit_unit<E>(self) -> Result<MetricValue, E> {
                Ok(MetricValue(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<MetricValue, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MetricValue(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<MetricValue, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MetricValue(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// An object's finite numeric members.
struct Metrics(BTreeMap<String, f64>);

impl<'de> Deserialize<'de> for Metrics {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Metrics;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of metrics")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Metrics, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    if let MetricValue(Some(x)) = a.next_value()? {
                        out.insert(key.into_owned(), x);
                    }
                }
                Ok(Metrics(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One object of a log: its `step` and its numeric metrics (those of its `data` member when it
/// has one, as veRL's file logger writes them; else its own numeric members but `step`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Entry {
    /// The `step` member, if any.
    pub(super) step: Option<StepValue>,
    /// The numeric metrics.
    pub(super) metrics: BTreeMap<String, f64>,
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object of metrics")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Entry, A::Error> {
                let mut entry = Entry::default();
                let mut data: Option<BTreeMap<String, f64>> = None;
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "step" => entry.step = Some(a.next_value()?),
                        "data" => data = Some(a.next_value::<Metrics>()?.0),
                        _ => {
                            if let MetricValue(Some(x)) = a.next_value()? {
                                entry.metrics.insert(key.into_owned(), x);
                            }
                        }
                    }
                }
                if let Some(data) = data {
                    entry.metrics = data;
                    entry.metrics.remove("step");
                }
                Ok(entry)
            }
        }
        d.deserialize_map(V)
    }
}

/// TRL's `trainer_state.json`: its history and `global_step`; every other member skipped.
#[derive(Debug, Deserialize)]
pub(super) struct TrainerState {
    /// The logged entries, in order.
    pub(super) log_history: Option<Vec<Entry>>,
    /// Optimizer steps taken when the file was written.
    pub(super) global_step: Option<StepValue>,
}
