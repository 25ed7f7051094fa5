//! Post-training sold as a service, for buy versus build.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Post-training sold as a service (buy versus build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Stable id.
    pub id: String,
    /// Who sells it.
    pub provider: String,
    /// The model it trains (a catalog id when the weights are open).
    pub model: String,
    /// `per_million_tokens` or `per_training_hour`.
    pub billing: String,
    /// US$ per million forward-only tokens.
    #[serde(default)]
    pub prefill_usd_per_million: f64,
    /// US$ per million generated tokens.
    #[serde(default)]
    pub sample_usd_per_million: f64,
    /// US$ per million tokens through a training pass.
    #[serde(default)]
    pub train_usd_per_million: f64,
    /// US$ per hour of the training loop's wall-clock.
    #[serde(default)]
    pub usd_per_training_hour: f64,
    /// When the price was read.
    pub date: String,
    /// Where it comes from.
    pub source: String,
}

impl ServiceSpec {
    /// Checks the prices are finite and non-negative and the billing is known.
    pub fn validate(&self, origin: &Path) -> Result<()> {
        let service = self;
        let prices = [
            service.prefill_usd_per_million,
            service.sample_usd_per_million,
            service.train_usd_per_million,
            service.usd_per_training_hour,
        ];
        if prices.iter().any(|p| !p.is_finite() || *p < 0.0)
            || !["per_million_tokens", "per_training_hour"].contains(&service.billing.as_str())
        {
            return Err(Error::in_file(
                origin,
                None,
                &format!("service `{}`", service.id),
                "prices must be finite and non-negative, billing `per_million_tokens` or `per_training_hour`",
            ));
        }
        Ok(())
    }
}
