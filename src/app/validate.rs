//! `rlfrontier validate [TIMINGS.csv] [--csv FILE]`: the ledger against published per-step
//! phase timings, phase by phase, with the median error.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::catalog::Catalog;
use rlfrontier::costing::transfer::transfers;
use rlfrontier::costing::validation::ValidationRow;
use rlfrontier::costing::validation::{
    Comparison, predicted_phases, price_row, read_validation, summarise, summarise_by_regime,
};
use rlfrontier::error::Result;
use rlfrontier::format::{Table, number};

use super::{CatalogFlag, emit};

/// Arguments of `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The validation set [default: validation/phase_timings.csv, or the copy bundled into the
    /// binary when run outside the clone].
    pub timings: Option<PathBuf>,
    /// Also write every comparison (row, quantity, measured, predicted, log2 ratio) to this CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also carry a calibration across the set's marked pairs: calibrate on one row's measured
    /// phases (its step when it has none), price the other row of the pair, and print both
    /// errors.
    #[arg(long)]
    pub transfer: bool,
    /// Also print the ledger's seconds per phase of every priced RL row, including the phases
    /// a row does not publish (where the ledger puts the time of a row known only by its step).
    #[arg(long)]
    pub phases: bool,
    /// Print only the summary: the medians, the table per regime and the comparisons beyond a
    /// factor of 2 (what the README shows); the rows not priced are counted, not listed.
    #[arg(long, conflicts_with_all = ["phases", "transfer"])]
    pub summary: bool,
    /// Hold each source out in turn: re-choose the constants chosen against the set without it,
    /// price its rows with them, and print the held-out error overall and per regime (the
    /// README's accuracy numbers) instead of the in-sample one, and how cost's price intervals
    /// cover the held-out steps.
    #[arg(long, conflicts_with_all = ["phases", "transfer"])]
    pub loso: bool,
    /// With --loso, write each held-out whole step's residual, tags and whether its setup was
    /// unseen to this CSV (what `cost`'s price intervals are drawn from:
    /// validation/loso_residuals.csv).
    #[arg(long, requires = "loso")]
    pub residuals: Option<PathBuf>,
    /// Replace the --csv or --residuals file if it exists (never when it is the validation set).
    #[arg(long)]
    pub force: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// The validation set's path in the repository.
const DEFAULT_TIMINGS: &str = "validation/phase_timings.csv";

/// The validation set: the file given, else the repository's, else the copy in the binary.
fn load_rows(args: &ValidateArgs) -> Result<(PathBuf, Vec<ValidationRow>)> {
    let default = PathBuf::from(DEFAULT_TIMINGS);
    let rows = match &args.timings {
        Some(path) => read_validation(path)?,
        None if default.exists() => read_validation(&default)?,
        None => rlfrontier::costing::validation::parse_validation(
            rlfrontier::costing::validation::EMBEDDED_TIMINGS.as_bytes(),
            &default,
        )?,
    };
    Ok((args.timings.clone().unwrap_or(default), rows))
}

/// One line per comparison: row, quantity, measured, predicted, log2 of their ratio.
fn comparisons_table(all: &[Comparison]) -> String {
    let mut table = Table::new([
        "row",
        "quantity",
        "measured",
        "predicted",
        "log2(pred/meas)",
    ]);
    for c in all {
        table.row([
            rlfrontier::format::spreadsheet_text(&c.id).into_owned(),
            c.quantity.to_string(),
            number(c.measured),
            format!("{:.4}", c.predicted),
            format!("{:+.2}", c.log2_ratio()),
        ]);
    }
    table.render()
}

/// The median errors per regime (cap band, engine, GPU, dense or MoE).
fn regimes_table(all: &[Comparison]) -> String {
    let mut regimes = Table::new([
        "regime",
        "steps",
        "median |log2| step",
        "phases",
        "median |log2| phase",
        "benchmarks",
        "median |log2| benchmark",
    ]);
    for (name, r) in summarise_by_regime(all) {
        let median = |n: usize, x: f64| {
            if n == 0 {
                "-".to_string()
            } else {
                format!("{x:.2}")
            }
        };
        regimes.row([
            name,
            r.steps.to_string(),
            median(r.steps, r.median_step_error),
            r.phases.to_string(),
            median(r.phases, r.median_phase_error),
            r.benchmarks.to_string(),
            median(r.benchmarks, r.median_benchmark_error),
        ]);
    }
    regimes.render()
}

/// `--csv`: every comparison, with full precision.
fn comparisons_csv(all: &[Comparison]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["row", "quantity", "measured", "predicted", "log2_ratio"])
        .expect("memory");
    for c in all {
        w.write_record([
            c.id.clone(),
            c.quantity.to_string(),
            number(c.measured),
            number(c.predicted),
            number(c.log2_ratio()),
        ])
        .expect("memory");
    }
    w.into_inner().expect("memory")
}

/// The comparisons beyond a factor of 2, each with the cause its row records (empty when none).
fn beyond_a_factor_of_two(all: &[Comparison], held_out: bool) -> String {
    let beyond: Vec<String> = all
        .iter()
        .filter(|c| c.beyond_a_factor_of_two())
        .map(|c| {
            // A row's recorded cause names the quantities it explains (`gen: ...`); held out, a
            // quantity can miss that does not miss in sample.
            let names_it = c.miss_cause.contains(&format!("{}:", c.quantity));
            let cause = if held_out && !names_it {
                "beyond a factor of 2 only with its source held out: the constants the other sources choose (above) do not suit it"
            } else if c.miss_cause.is_empty() {
                "no cause recorded in the row's rl_miss_cause"
            } else {
                c.miss_cause.as_str()
            };
            format!(
                "- {} {} ({:+.2}): {cause}",
                c.id,
                c.quantity,
                c.log2_ratio()
            )
        })
        .collect();
    if beyond.is_empty() {
        return String::new();
    }
    format!(
        "beyond a factor of 2, with the cause each row records:\n{}\n",
        beyond.join("\n")
    )
}

/// Prices every included row and prints the comparisons and the summary.
pub fn run(args: &ValidateArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let mut inputs: Vec<&std::path::Path> = args.timings.iter().map(PathBuf::as_path).collect();
    inputs.extend(args.catalog.paths.iter().map(PathBuf::as_path));
    for (setting, path) in [("csv", &args.csv), ("residuals", &args.residuals)] {
        if let Some(path) = path {
            rlfrontier::report::check_file_out(setting, path, &inputs, args.force)?;
        }
    }
    let (timings, rows) = load_rows(args)?;
    let mut all: Vec<Comparison> = Vec::new();
    let mut skipped = Vec::new();
    for row in &rows {
        match price_row(row, &catalog) {
            Ok(c) => all.extend(c),
            Err(why) => skipped.push(format!("{} ({why})", row.id)),
        }
    }
    let s = summarise(&all);
    let mut text = format!(
        "the ledger against {} published timings from {} rows of {} (seconds; decode: output tokens/s; tpot: seconds per output token)\n",
        all.len(),
        rows.len() - skipped.len(),
        timings.display()
    );
    if !args.summary {
        text.push_str(&comparisons_table(&all));
    }
    if !args.loso {
        text.push_str(&medians_line("median", &s));
        text.push_str("by regime:\n");
        text.push_str(&regimes_table(&all));
        text.push_str(&beyond_a_factor_of_two(&all, false));
    }
    if args.summary && !skipped.is_empty() {
        text.push_str(&format!(
            "not priced: {} rows (`validate` without --summary lists them with the reason)\n",
            skipped.len()
        ));
    } else if !skipped.is_empty() {
        text.push_str(&format!("not priced: {}\n", skipped.join("; ")));
    }
    if args.phases {
        text.push_str(&phase_table(&rows, &catalog));
    }
    if args.transfer {
        text.push_str(&transfer_table(&rows, &catalog));
    }
    if args.loso {
        let loso = rlfrontier::costing::loso::loso(&rows, &catalog);
        text.push_str(&loso_text(&loso));
        let residuals = rlfrontier::costing::loso::residuals(&rows, &catalog, &loso);
        let c = rlfrontier::ledger::accuracy::coverage(&residuals);
        text.push_str(&format!(
            "cost's 90% price intervals, each held-out step's drawn from the other sources' residuals: {} of {} steps inside ({}), median width: the high end {:.2} times the low\n",
            c.held,
            c.total,
            rlfrontier::format::percent(c.held as f64 / c.total.max(1) as f64),
            c.median_width_factor
        ));
        if let Some(path) = &args.residuals {
            rlfrontier::report::write_atomic(
                path,
                rlfrontier::ledger::accuracy::residuals_csv(&residuals).as_bytes(),
            )?;
        }
    }
    if let Some(path) = &args.csv {
        rlfrontier::report::write_atomic(path, &comparisons_csv(&all))?;
    }
    emit(out, &text)
}

/// "PREFIX |log2(predicted/measured)|: whole steps 0.19 over 24 (factor 1.14), phases ...": the
/// medians of a summary, each with its count and the factor it means.
fn medians_line(prefix: &str, s: &rlfrontier::costing::validation::ValidationSummary) -> String {
    format!(
        "{prefix} |log2(predicted/measured)|: whole steps {:.2} over {} (factor {:.2}), phases {:.2} over {} (factor {:.2}), engine benchmarks {:.2} over {}\n",
        s.median_step_error,
        s.steps,
        s.median_step_error.exp2(),
        s.median_phase_error,
        s.phases,
        s.median_phase_error.exp2(),
        s.median_benchmark_error,
        s.benchmarks
    )
}

/// Constants in words: `3 s per step, 0.15 s per pass, 1 ms per layer`.
fn constants_text(c: &rlfrontier::costing::loso::RunConstants) -> String {
    format!(
        "{} s per step, {} s per pass, {} ms per layer",
        number(c.step_overhead_seconds),
        number(c.pass_overhead_seconds),
        number(1e3 * c.train_launch_seconds_per_layer)
    )
}

/// The held-out error: overall, per regime, beyond a factor of 2, and what each fold chose.
fn loso_text(loso: &rlfrontier::costing::loso::Loso) -> String {
    let held_out = loso.comparisons();
    let s = summarise(&held_out);
    let mut text = format!(
        "held out one source at a time ({} sources; the run-setting constants re-chosen without each, the catalogs' efficiencies and engine floors kept):\n",
        loso.folds.len()
    );
    text.push_str(&medians_line("held-out median", &s));
    text.push_str(&format!(
        "the rule on every row chooses {} (shipped: {})\n",
        constants_text(&loso.chosen_on_all),
        constants_text(&rlfrontier::costing::loso::RunConstants::shipped())
    ));
    let differing: Vec<String> = loso
        .folds
        .iter()
        .filter(|f| f.chosen != loso.chosen_on_all)
        .map(|f| format!("without {}: {}", f.source, constants_text(&f.chosen)))
        .collect();
    if !differing.is_empty() {
        text.push_str(&format!(
            "folds that choose otherwise: {}\n",
            differing.join("; ")
        ));
    }
    text.push_str("held out, by regime:\n");
    text.push_str(&regimes_table(&held_out));
    text.push_str(&beyond_a_factor_of_two(&held_out, true));
    text
}

/// The ledger's seconds per phase of every priced RL row.
fn phase_table(rows: &[ValidationRow], catalog: &Catalog) -> String {
    let mut table = Table::new(["row", "phase", "predicted seconds", "share of step"]);
    for row in rows {
        let Ok(phases) = predicted_phases(row, catalog) else {
            continue;
        };
        let step = phases.last().map_or(0.0, |(_, s)| *s);
        for (phase, seconds) in phases {
            table.row([
                row.id.clone(),
                phase.to_string(),
                format!("{seconds:.1}"),
                format!("{:.1}%", 100.0 * seconds / step),
            ]);
        }
    }
    let mut text = String::from(
        "the ledger's phases of each priced RL row (under async and separate schedules the phases overlap, so they add up to more than the step):\n",
    );
    text.push_str(&table.render());
    text
}

/// The table of calibrations carried across the set's marked pairs, with a median line.
fn transfer_table(rows: &[ValidationRow], catalog: &Catalog) -> String {
    let mut table = Table::new([
        "calibrated on",
        "priced",
        "fitted to",
        "default |log2|",
        "calibrated |log2|",
        "what differs",
    ]);
    let (mut before, mut after, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for t in transfers(rows, catalog) {
        match t {
            Ok(t) => {
                before.push(t.default_error);
                after.push(t.calibrated_error);
                table.row([
                    t.from,
                    t.to,
                    t.fitted_to.to_string(),
                    format!("{:.2}", t.default_error),
                    format!("{:.2}", t.calibrated_error),
                    t.differs,
                ]);
            }
            Err((id, why)) => refused.push(format!("{id} ({why})")),
        }
    }
    let mut text = String::from(
        "calibration carried across pairs (median |log2(predicted/measured)| of the priced row's phases and step):\n",
    );
    text.push_str(&table.render());
    let better = before.iter().zip(&after).filter(|(b, a)| a < b).count();
    text.push_str(&format!(
        "over {} pairs: median {:.2} at the defaults, {:.2} calibrated; the calibration helped on {} of them\n",
        before.len(),
        rlfrontier::stats::median(before.clone()),
        rlfrontier::stats::median(after.clone()),
        better
    ));
    if !refused.is_empty() {
        text.push_str(&format!("not carried: {}\n", refused.join("; ")));
    }
    text
}
