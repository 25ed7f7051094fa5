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
    /// Replace the --csv file if it exists (never when it is the validation set).
    #[arg(long, requires = "csv")]
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
fn beyond_a_factor_of_two(all: &[Comparison]) -> String {
    let beyond: Vec<String> = all
        .iter()
        .filter(|c| c.beyond_a_factor_of_two())
        .map(|c| {
            let cause = if c.miss_cause.is_empty() {
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
    if let Some(path) = &args.csv {
        let mut inputs: Vec<&std::path::Path> = args.timings.iter().map(PathBuf::as_path).collect();
        inputs.extend(args.catalog.paths.iter().map(PathBuf::as_path));
        rlfrontier::report::check_file_out("csv", path, &inputs, args.force)?;
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
    text.push_str(&format!(
        "median |log2(predicted/measured)|: whole steps {:.2} over {} (factor {:.2}), phases {:.2} over {} (factor {:.2}), engine benchmarks {:.2} over {}\n",
        s.median_step_error,
        s.steps,
        s.median_step_error.exp2(),
        s.median_phase_error,
        s.phases,
        s.median_phase_error.exp2(),
        s.median_benchmark_error,
        s.benchmarks
    ));
    text.push_str("by regime:\n");
    text.push_str(&regimes_table(&all));
    text.push_str(&beyond_a_factor_of_two(&all));
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
    if let Some(path) = &args.csv {
        rlfrontier::report::write_atomic(path, &comparisons_csv(&all))?;
    }
    emit(out, &text)
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
