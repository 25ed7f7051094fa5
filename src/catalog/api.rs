//! LLM judges and reward models called through a provider's API, priced per token (the
//! `[[api]]` entries of the catalog, `src/catalog/apis.toml`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One API model's list prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiSpec {
    /// Stable id (`--judge-api ID`, `[agent] judge_api`).
    pub id: String,
    /// Who sells it.
    pub provider: String,
    /// US$ per million input tokens.
    pub usd_per_million_input_tokens: f64,
    /// US$ per million output tokens.
    pub usd_per_million_output_tokens: f64,
    /// When the price was read.
    pub date: String,
    /// Where it comes from.
    pub source: String,
}

impl ApiSpec {
    /// Checks the prices are finite, non-negative and below a bound no real price reaches.
    pub fn validate(&self, origin: &Path) -> Result<()> {
        for (field, value) in [
            (
                "usd_per_million_input_tokens",
                self.usd_per_million_input_tokens,
            ),
            (
                "usd_per_million_output_tokens",
                self.usd_per_million_output_tokens,
            ),
        ] {
            if !(value.is_finite() && (0.0..=10_000.0).contains(&value)) {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("api `{}`.{field}", self.id),
                    format!("{value} is not a price per million tokens (0 to 10,000)"),
                ));
            }
        }
        Ok(())
    }
}
