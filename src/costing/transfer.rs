//! How far a calibration carries (`rlfrontier validate --transfer`).
//!
//! `calibrate-hw` fits a GPU profile's efficiencies to one logged step. Whether that helps
//! depends on what changes between the logged step and the run being priced. The validation set
//! marks rows that come in such pairs (same source, another setting): a row's
//! `rl_transfer_from` names the row to calibrate on, `rl_transfer_differs` says what differs.
//! For each pair, the calibration source's measured phases fix the efficiencies
//! ([`fit_efficiencies`]; its step alone when it publishes no phases), and the target row is
//! priced at the catalog's defaults and at the calibrated profile; the medians of
//! |log2(predicted/measured)| over its phases and its step are compared.

use super::hardware_fit::{FitPhases, fit_efficiencies};
use super::validation::{Comparison, ValidationRow, price_row_on};
use crate::catalog::{Catalog, GpuSpec};
use crate::stats::median;

/// One calibration carried from one row to another.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    /// The row calibrated on.
    pub from: String,
    /// The row priced with that calibration.
    pub to: String,
    /// What differs between them.
    pub differs: String,
    /// What the calibration was fitted to (`phases` or `step`).
    pub fitted_to: &'static str,
    /// Median |log2(predicted/measured)| of the target's phases and step at the defaults.
    pub default_error: f64,
    /// The same at the calibrated profile.
    pub calibrated_error: f64,
    /// Quantities compared on the target.
    pub quantities: usize,
    /// What the fit noticed (efficiencies capped, timings outside the model's range).
    pub notes: Vec<String>,
}

/// One value of each of `comparisons`' quantities as calibration phases: the measured ones
/// (`value` = the measurement) are a calibration's targets, the predicted ones its model.
fn phases(comparisons: &[Comparison], value: fn(&Comparison) -> f64) -> FitPhases {
    let get = |q: &str| comparisons.iter().find(|c| c.quantity == q).map(value);
    FitPhases {
        generation: get("gen"),
        update: get("update_actor"),
        reference: get("ref"),
        old_logprob: get("old_log_prob"),
        step: get("step"),
    }
}

/// The measured quantities of `comparisons` as a calibration's targets.
fn targets(comparisons: &[Comparison]) -> FitPhases {
    phases(comparisons, |c| c.measured)
}

/// The modelled quantities of `comparisons`, in the same shape.
fn modelled(comparisons: &[Comparison]) -> FitPhases {
    phases(comparisons, |c| c.predicted)
}

/// Median |log2 ratio| over `comparisons`.
fn error(comparisons: &[Comparison]) -> f64 {
    median(comparisons.iter().map(|c| c.log2_ratio().abs()).collect())
}

/// Carries a calibration from `from` to `to` (both priced rows of one GPU type).
pub fn transfer(
    from: &ValidationRow,
    to: &ValidationRow,
    catalog: &Catalog,
) -> Result<Transfer, String> {
    if from.get("rl_gpu") != to.get("rl_gpu") {
        return Err(format!(
            "{} runs on {} and {} on {}: a calibration is of one GPU type",
            from.id,
            from.get("rl_gpu"),
            to.id,
            to.get("rl_gpu")
        ));
    }
    let defaults: GpuSpec = catalog.gpu(from.get("rl_gpu"))?.clone();
    let source = price_row_on(from, catalog, None)?;
    let measured = targets(&source);
    let fitted_to = if measured.has_phase() {
        "phases"
    } else {
        "step"
    };
    let model = |gpu: &GpuSpec| {
        price_row_on(from, catalog, Some(gpu))
            .map(|c| modelled(&c))
            .unwrap_or_default()
    };
    let mut notes = Vec::new();
    let calibrated = fit_efficiencies(&defaults, &measured, &model, &mut notes);
    let before = price_row_on(to, catalog, None)?;
    let after = price_row_on(to, catalog, Some(&calibrated))?;
    Ok(Transfer {
        from: from.id.clone(),
        to: to.id.clone(),
        differs: to.get("rl_transfer_differs").to_string(),
        fitted_to,
        default_error: error(&before),
        calibrated_error: error(&after),
        quantities: after.len(),
        notes,
    })
}

/// Every pair the set marks: each row with `rl_transfer_from`, carried from that row; a pair
/// that cannot be carried gives the reason, with the target's id.
pub fn transfers(
    rows: &[ValidationRow],
    catalog: &Catalog,
) -> Vec<Result<Transfer, (String, String)>> {
    rows.iter()
        .filter(|r| !r.get("rl_transfer_from").is_empty())
        .map(|to| {
            let from_id = to.get("rl_transfer_from");
            let from = rows
                .iter()
                .find(|r| r.id == from_id)
                .ok_or_else(|| (to.id.clone(), format!("no row {from_id} to calibrate on")))?;
            transfer(from, to, catalog).map_err(|e| (to.id.clone(), e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::costing::validation::{EMBEDDED_TIMINGS, parse_validation};
    use std::path::Path;

    fn rows() -> Vec<ValidationRow> {
        parse_validation(EMBEDDED_TIMINGS.as_bytes(), Path::new("phase_timings.csv")).unwrap()
    }

    #[test]
    fn a_row_calibrated_on_itself_reproduces_its_fitted_phases() {
        // The calibration's own row: every phase it was fitted to comes back within 1%.
        let (rows, catalog) = (rows(), Catalog::embedded());
        let row = rows
            .iter()
            .find(|r| r.id == "rlinf_doc_verl_r1d15b_27k_8xh100")
            .unwrap();
        let t = transfer(row, row, &catalog).unwrap();
        assert_eq!(t.fitted_to, "phases");
        let gpu = catalog.gpu("h100-sxm").unwrap().clone();
        let measured = targets(&price_row_on(row, &catalog, None).unwrap());
        let model = |g: &GpuSpec| modelled(&price_row_on(row, &catalog, Some(g)).unwrap());
        let fitted = fit_efficiencies(&gpu, &measured, &model, &mut Vec::new());
        let again = model(&fitted);
        for (m, p) in [
            (measured.generation, again.generation),
            (measured.update, again.update),
            (measured.old_logprob, again.old_logprob),
        ] {
            let (m, p) = (m.unwrap(), p.unwrap());
            assert!((p / m - 1.0).abs() < 0.01, "{p} vs {m}");
        }
        assert!(t.calibrated_error < t.default_error);
    }

    #[test]
    fn a_step_only_row_is_fitted_by_one_factor_on_its_step() {
        let (rows, catalog) = (rows(), Catalog::embedded());
        let row = rows
            .iter()
            .find(|r| r.id == "nemo06_q235b_gb200_64_on")
            .unwrap();
        let t = transfer(row, row, &catalog).unwrap();
        assert_eq!(t.fitted_to, "step");
        assert!(t.calibrated_error < 0.01, "{}", t.calibrated_error);
    }

    #[test]
    fn every_marked_pair_is_carried_or_says_why() {
        let (rows, catalog) = (rows(), Catalog::embedded());
        let all = transfers(&rows, &catalog);
        assert!(all.len() >= 6, "{}", all.len());
        for t in &all {
            let t = t.as_ref().unwrap();
            assert!(!t.differs.is_empty(), "{} has no rl_transfer_differs", t.to);
            assert!(t.quantities > 0);
        }
    }

    #[test]
    fn the_book_s_reading_of_the_transfer_table_holds() {
        // docs/book/src/validation.md says where a calibration carries and where it does not.
        let (rows, catalog) = (rows(), Catalog::embedded());
        let all: Vec<Transfer> = transfers(&rows, &catalog)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let pair = |to: &str| all.iter().find(|t| t.to == to).unwrap();
        for carries in [
            "rlinf_doc_verl_r1d7b_27k_64gpu",
            "rlinf_doc_rlinf_r1d15b_27k_8xh100",
            "nemo06_q235b_gb200_128_on",
            "nemo05_q235b_gb200_128_1off",
            "nemo_v05_qwen3_30ba3b_h100_onpolicy",
        ] {
            let t = pair(carries);
            assert!(t.calibrated_error < t.default_error, "{t:?}");
        }
        for does_not in [
            "playverl_qwen25_05b_grpo_mean",
            "nemo_v05_llama31_8b_h100_1off",
            "nemo06_q235b_h100_256_1off",
        ] {
            let t = pair(does_not);
            assert!(t.calibrated_error >= t.default_error, "{t:?}");
        }
    }

    #[test]
    fn another_gpu_type_is_refused() {
        let (rows, catalog) = (rows(), Catalog::embedded());
        let find = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
        let err = transfer(
            find("nemo_v05_llama31_8b_h100_onpolicy"),
            find("nemo_v05_llama31_8b_gb200_onpolicy"),
            &catalog,
        )
        .unwrap_err();
        assert!(err.contains("one GPU type"), "{err}");
    }
}
