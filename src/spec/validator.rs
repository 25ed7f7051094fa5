//! Value checks with one-line errors that point at the key's line.
//!
//! Values read from the grid file carry their byte span (`toml::Spanned`), so an error about a
//! value names the exact line it is on. Errors about a key without a value at hand (a missing
//! key, or a check across several keys) find the key's line by a light scan of the text.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::MAX_LEVER;
use crate::error::{Error, Result};
use crate::toml_text::{line_of_offset, locate_key};

/// A value of the grid file with its byte span.
pub(super) type Spanned = toml::Spanned<toml::Value>;

/// A TOML value and, when known, the line it sits on.
pub(super) trait Located {
    /// The value.
    fn value(&self) -> &toml::Value;
    /// Its 1-based line in `text`, when known.
    fn line(&self, text: &str) -> Option<usize>;
}

impl Located for toml::Value {
    fn value(&self) -> &toml::Value {
        self
    }
    fn line(&self, _: &str) -> Option<usize> {
        None
    }
}

impl Located for Spanned {
    fn value(&self) -> &toml::Value {
        self.get_ref()
    }
    fn line(&self, text: &str) -> Option<usize> {
        Some(line_of_offset(text, self.span().start))
    }
}

/// An element of a list, located at the list's line.
pub(super) struct Item<'v> {
    value: &'v toml::Value,
    line: Option<usize>,
}

impl Located for Item<'_> {
    fn value(&self) -> &toml::Value {
        self.value
    }
    fn line(&self, _: &str) -> Option<usize> {
        self.line
    }
}

/// Value checks with one-line errors that point at the key's line.
pub(super) struct Validator<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
}

impl Validator<'_> {
    pub(super) fn field_name(section: Option<&str>, key: &str) -> String {
        match (section, key) {
            (Some(s), "") => s.to_string(),
            (Some(s), k) => format!("{s}.{k}"),
            (None, k) => k.to_string(),
        }
    }

    pub(super) fn err(
        &self,
        section: Option<&str>,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        let lookup = key.split('.').next().unwrap_or(key);
        let line = if key.is_empty() {
            section.and_then(|s| {
                self.text
                    .lines()
                    .position(|l| l.trim() == format!("[{s}]"))
                    .map(|p| p + 1)
            })
        } else {
            locate_key(self.text, section, lookup)
        };
        Error::in_file(self.path, line, &Self::field_name(section, key), message)
    }

    /// An error about this value, at its line (or the key's line when the value has none).
    pub(super) fn err_at(
        &self,
        at: &impl Located,
        section: Option<&str>,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        match at.line(self.text) {
            Some(line) => Error::in_file(
                self.path,
                Some(line),
                &Self::field_name(section, key),
                message,
            ),
            None => self.err(section, key, message),
        }
    }

    pub(super) fn missing(&self, section: Option<&str>, key: &str, how: &str) -> Error {
        let line = section.and_then(|s| {
            self.text
                .lines()
                .position(|l| l.trim() == format!("[{s}]"))
                .map(|p| p + 1)
        });
        Error::in_file(
            self.path,
            line,
            &Self::field_name(section, key),
            format!("is required but missing; {how}"),
        )
    }

    pub(super) fn string(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
    ) -> Result<String> {
        let v = value.value();
        v.as_str().map(str::to_string).ok_or_else(|| {
            self.err_at(
                value,
                section,
                key,
                format!("expected a string in quotes, found {}", a_type(v)),
            )
        })
    }

    pub(super) fn float(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
    ) -> Result<f64> {
        let x = match value.value() {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            other => {
                return Err(self.err_at(
                    value,
                    section,
                    key,
                    format!("expected a number, found {}", a_type(other)),
                ));
            }
        };
        if !x.is_finite() {
            return Err(self.err_at(value, section, key, format!("{x} is not a finite number")));
        }
        Ok(x)
    }

    /// A positive number no larger than `max`, the physical bound of the quantity (`what` says
    /// what the bound is).
    pub(super) fn positive_at_most(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
        (max, what): (f64, &str),
    ) -> Result<f64> {
        let x = self.positive(value, section, key)?;
        if x > max {
            return Err(self.err_at(
                value,
                section,
                key,
                format!("{x} is above {max} ({what}); check the units"),
            ));
        }
        Ok(x)
    }

    pub(super) fn positive(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
    ) -> Result<f64> {
        let x = self.float(value, section, key)?;
        if x <= 0.0 {
            return Err(self.err_at(value, section, key, format!("{x} must be greater than 0")));
        }
        Ok(x)
    }

    pub(super) fn non_negative(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
    ) -> Result<f64> {
        let x = self.float(value, section, key)?;
        if x < 0.0 {
            return Err(self.err_at(value, section, key, format!("{x} must be 0 or more")));
        }
        Ok(x)
    }

    pub(super) fn fraction_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: f64,
        one_allowed: bool,
    ) -> Result<f64> {
        let Some(value) = value else {
            return Ok(default);
        };
        let x = self.float(value, section, key)?;
        let ok = x > 0.0 && (x < 1.0 || (one_allowed && x == 1.0));
        if !ok {
            let range = if one_allowed {
                "in (0, 1]"
            } else {
                "strictly between 0 and 1"
            };
            return Err(self.err_at(
                value,
                section,
                key,
                format!("{x} must be a fraction {range}"),
            ));
        }
        Ok(x)
    }

    pub(super) fn integer(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
        min: i64,
        max: i64,
    ) -> Result<i64> {
        let i = match value.value() {
            toml::Value::Integer(i) => *i,
            toml::Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                *f as i64
            }
            other => {
                return Err(self.err_at(
                    value,
                    section,
                    key,
                    format!("expected a whole number, found {}", describe_value(other)),
                ));
            }
        };
        if i < min {
            return Err(self.err_at(
                value,
                section,
                key,
                format!("{i} is too small; use a whole number of at least {min}"),
            ));
        }
        if i > max {
            return Err(self.err_at(
                value,
                section,
                key,
                format!("{i} is too large; use at most {max}"),
            ));
        }
        Ok(i)
    }

    /// A run setting's whole number, checked against its declared range
    /// ([`crate::config::setting`]: the same range and message as its flag).
    pub(super) fn setting_count(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
    ) -> Result<u64> {
        let n = self.integer(value, section, key, i64::MIN, i64::MAX)?;
        crate::config::setting::check_count(key, n).map_err(|m| self.err_at(value, section, key, m))
    }

    /// An optional run setting's whole number, or the default.
    pub(super) fn setting_count_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: u64,
    ) -> Result<u64> {
        match value {
            Some(value) => self.setting_count(value, section, key),
            None => Ok(default),
        }
    }

    /// A run setting's number, checked against its declared range (`setting`: its name in
    /// [`crate::config::setting`] when the grid's key differs).
    pub(super) fn setting_real_as(
        &self,
        value: &impl Located,
        section: Option<&str>,
        key: &str,
        setting: &str,
    ) -> Result<f64> {
        let x = self.float(value, section, key)?;
        crate::config::setting::check_real(setting, x)
            .map_err(|m| self.err_at(value, section, key, m))
    }

    /// An optional run setting's number, or the default.
    pub(super) fn setting_real_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: f64,
    ) -> Result<f64> {
        match value {
            Some(value) => self.setting_real_as(value, section, key, key),
            None => Ok(default),
        }
    }

    /// An optional whole number in [min, max], or the default.
    pub(super) fn count_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        (min, max): (i64, i64),
        default: u64,
    ) -> Result<u64> {
        match value {
            Some(value) => Ok(self.integer(value, section, key, min, max)? as u64),
            None => Ok(default),
        }
    }

    /// An optional number of 0 or more, or the default.
    pub(super) fn non_negative_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: f64,
    ) -> Result<f64> {
        match value {
            Some(value) => self.non_negative(value, section, key),
            None => Ok(default),
        }
    }

    /// An optional name of a typed value (`schedule = "async"`), or the default; the error
    /// suggests the nearest valid name.
    pub(super) fn named_or<T: std::str::FromStr<Err = String>>(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: T,
    ) -> Result<T> {
        match value {
            Some(value) => self
                .string(value, section, key)?
                .parse()
                .map_err(|m: String| self.err_at(value, section, key, m)),
            None => Ok(default),
        }
    }

    pub(super) fn bool_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: bool,
    ) -> Result<bool> {
        let Some(value) = value else {
            return Ok(default);
        };
        match value.value() {
            toml::Value::Boolean(b) => Ok(*b),
            other => Err(self.err_at(
                value,
                section,
                key,
                format!("expected true or false, found {}", describe_value(other)),
            )),
        }
    }

    /// A list (or a single value meaning a one-element list) of non-empty values, each located
    /// at the list's line.
    pub(super) fn list<'v>(
        &self,
        value: &'v Option<impl Located>,
        section: Option<&str>,
        key: &str,
        example: &str,
    ) -> Result<Vec<Item<'v>>> {
        let Some(value) = value else {
            return Err(self.missing(section, key, &format!("add `{example}`")));
        };
        let line = value.line(self.text);
        match value.value() {
            toml::Value::Array(items) if items.is_empty() => Err(self.err_at(
                value,
                section,
                key,
                format!("is an empty list; give at least one value, as in `{example}`"),
            )),
            toml::Value::Array(items) => {
                Ok(items.iter().map(|value| Item { value, line }).collect())
            }
            single => Ok(vec![Item {
                value: single,
                line,
            }]),
        }
    }

    pub(super) fn string_list(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        example: &str,
    ) -> Result<Vec<String>> {
        self.list(value, section, key, example)?
            .iter()
            .map(|item| {
                let v = item.value();
                v.as_str().map(str::to_string).ok_or_else(|| {
                    self.err_at(
                        item,
                        section,
                        key,
                        format!(
                            "expected a string in quotes, found {}; write it as in {example}",
                            a_type(v)
                        ),
                    )
                })
            })
            .collect()
    }

    pub(super) fn string_list_or(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        default: &str,
    ) -> Result<Vec<String>> {
        if value.is_none() {
            return Ok(vec![default.to_string()]);
        }
        self.string_list(value, section, key, &format!("{key} = [\"{default}\"]"))
    }

    pub(super) fn int_list(
        &self,
        value: &Option<impl Located>,
        section: Option<&str>,
        key: &str,
        min: i64,
        example: &str,
    ) -> Result<Vec<u64>> {
        let items = self.list(value, section, key, example)?;
        let mut out = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        for item in &items {
            let i = self.integer(item, section, key, min, MAX_LEVER)? as u64;
            if !seen.insert(i) {
                return Err(self.err_at(
                    item,
                    section,
                    key,
                    format!("{i} is listed twice; remove the duplicate"),
                ));
            }
            out.push(i);
        }
        Ok(out)
    }

    pub(super) fn no_duplicates(
        &self,
        section: Option<&str>,
        key: &str,
        names: &[String],
    ) -> Result<()> {
        let mut seen = BTreeSet::new();
        for n in names {
            if !seen.insert(n) {
                return Err(self.err(
                    section,
                    key,
                    format!("`{n}` is listed twice; remove the duplicate"),
                ));
            }
        }
        Ok(())
    }
}

fn describe_value(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(f) => format!("{f} (a number with a fraction or not finite)"),
        toml::Value::String(s) => format!("the string \"{s}\" (remove the quotes)"),
        other => format!("a {}", other.type_str()),
    }
}

/// A TOML value's type with its article, for messages: "an integer", "a float", "an array".
fn a_type(v: &toml::Value) -> String {
    let name = v.type_str();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}
