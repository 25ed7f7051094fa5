//! Where to run it: rented on demand, an owned cluster (a direct rate, or capex amortised over
//! years at a utilisation plus opex, with the break-even utilisation), and the services in the
//! catalog (per-token or per-training-hour pricing).

use super::RunRequest;
use crate::config::Ownership;
use crate::format::{money, percent, thousands};
use crate::ledger::Ledger;

/// Hours in a year, for amortisation.
const HOURS_PER_YEAR: f64 = 8760.0;

/// One way to pay for the run.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentOption {
    /// Where.
    pub name: String,
    /// Dollars.
    pub usd: Option<f64>,
    /// How it is computed, or why it does not apply.
    pub basis: String,
}

/// The own cluster's rate per GPU-hour with how it was computed, and the break-even sentence
/// when capex was given. Straight-line amortisation: rate = capex / (years x 8760 x utilisation)
/// + opex; owning beats renting above the utilisation where that rate equals the rental price.
fn own_rate(
    own: &Ownership,
    rental_usd_per_gpu_hour: f64,
) -> Option<(f64, String, Option<String>)> {
    if let Some(rate) = own.own_gpu_usd_per_hour {
        return Some((rate, format!("your ${}/GPU-hour", money(rate)), None));
    }
    let capex = own.gpu_capex_usd?;
    let useful_hours = own.amortization_years * HOURS_PER_YEAR * own.utilization;
    let rate = capex / useful_hours + own.opex_usd_per_gpu_hour;
    let margin = rental_usd_per_gpu_hour - own.opex_usd_per_gpu_hour;
    let break_even = (margin > 0.0).then(|| {
        let utilization = capex / (own.amortization_years * HOURS_PER_YEAR * margin);
        format!(
            "owning beats renting at ${}/GPU-hour once the GPUs are busy more than {} of the time over {} years (capex ${} per GPU, opex ${}/GPU-hour)",
            money(rental_usd_per_gpu_hour),
            percent(utilization),
            own.amortization_years,
            thousands(capex),
            money(own.opex_usd_per_gpu_hour)
        )
    });
    let basis = format!(
        "${} capex over {} years at {} utilisation + ${} opex = ${}/GPU-hour",
        thousands(capex),
        own.amortization_years,
        percent(own.utilization),
        money(own.opex_usd_per_gpu_hour),
        money(rate)
    );
    Some((rate, basis, break_even))
}

/// What a catalog service would charge for this run, or why it does not apply.
fn service_option(
    service: &crate::catalog::ServiceSpec,
    ledger: &Ledger,
    request: &RunRequest,
) -> PaymentOption {
    let t = &ledger.tokens;
    let iterations = ledger.iterations as f64;
    let policy = &request.policy.id;
    // A model named by an alias is the entry it shares a shape with (its id among the aliases).
    let offered = service.model == *policy || request.policy.aliases.contains(&service.model);
    let (usd, basis) = match service.billing.as_str() {
        "per_million_tokens" if offered => {
            let prefill = (t.prefill_tokens_per_step + t.forward_tokens_per_step) * iterations;
            let sample = t.generated_tokens_per_step * iterations;
            let train = t.train_tokens_per_step * iterations;
            let usd = (prefill * service.prefill_usd_per_million
                + sample * service.sample_usd_per_million
                + train * service.train_usd_per_million)
                / 1e6;
            (
                Some(usd),
                format!(
                    "{}M prefill + {}M sampled + {}M trained tokens at ${}/${}/${} per million ({})",
                    thousands(prefill / 1e6),
                    thousands(sample / 1e6),
                    thousands(train / 1e6),
                    service.prefill_usd_per_million,
                    service.sample_usd_per_million,
                    service.train_usd_per_million,
                    service.date
                ),
            )
        }
        "per_training_hour" => (
            Some(ledger.wall_hours() * service.usd_per_training_hour),
            format!(
                "{} wall-clock hours (this cluster's, as a proxy) x ${}/hour; trains {}, not {} ({})",
                money(ledger.wall_hours()),
                service.usd_per_training_hour,
                service.model,
                policy,
                service.date
            ),
        ),
        _ => (
            None,
            format!("does not offer {} (trains {})", policy, service.model),
        ),
    };
    PaymentOption {
        name: format!("{} ({})", service.provider, service.id),
        usd,
        basis,
    }
}

/// Where to run it: rented, owned, and the catalog's services; plus the break-even sentence.
pub fn buy_or_build(ledger: &Ledger, request: &RunRequest) -> (Vec<PaymentOption>, Option<String>) {
    let hardware = &request.hardware;
    let gpu_hours = ledger.total_gpu_hours();
    // Sandboxes and API judges are paid wherever the GPUs are.
    let outside = ledger.external_usd_per_step.iter().sum::<f64>() * ledger.iterations as f64;
    let plus_outside = if outside > 0.0 {
        format!(
            " + ${} outside the GPUs (sandboxes, API judge)",
            money(outside)
        )
    } else {
        String::new()
    };
    let mut options = vec![PaymentOption {
        name: format!("rented {} on demand", hardware.gpu.id),
        usd: Some(ledger.total_usd()),
        basis: format!(
            "{} GPU-hours x ${}/GPU-hour ({}, {}){plus_outside}",
            money(gpu_hours),
            money(hardware.usd_per_gpu_hour),
            hardware.gpu.price_provider,
            hardware.gpu.price_date
        ),
    }];
    let mut break_even = None;
    if let Some((rate, basis, capex_break_even)) =
        own_rate(&request.ownership, hardware.usd_per_gpu_hour)
    {
        break_even = capex_break_even;
        if request.ownership.own_gpu_usd_per_hour.is_some() {
            let margin = hardware.usd_per_gpu_hour - rate;
            break_even = Some(if margin > 0.0 {
                format!(
                    "your GPUs are {} cheaper per hour than renting",
                    percent(margin / hardware.usd_per_gpu_hour)
                )
            } else {
                format!(
                    "renting is {} cheaper per hour than your GPUs",
                    percent(-margin / rate)
                )
            });
        }
        options.push(PaymentOption {
            name: "own cluster".to_string(),
            usd: Some(gpu_hours * rate + outside),
            basis: format!("{basis}{plus_outside}"),
        });
    }
    for service in &request.catalog.services {
        options.push(service_option(service, ledger, request));
    }
    (options, break_even)
}
