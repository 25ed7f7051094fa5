//! The command line: clap definitions, one file per subcommand (its arguments, their
//! conversion into the library's settings, and what it prints), and the edge where errors become
//! exit codes. Only this module knows about clap; the library never sees a flag.

mod backtest;
mod calibrate_hw;
mod catalog;
mod check;
mod collect;
mod compare;
mod cost;
mod fit;
mod flops;
mod front;
mod init;
mod merge;
mod plan;
mod progress;
mod simulate;
mod sweep;
mod training_flags;
mod validate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser, Subcommand};
use rlfrontier::catalog::Catalog;
use rlfrontier::error::{Error, Result};

/// rlfrontier: where should RL post-training compute go?
#[derive(Debug, Parser)]
#[command(name = "rlfrontier", version, about, long_about = None)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate every cell of a grid and write cells.csv and manifest.json.
    Sweep(sweep::SweepArgs),
    /// Validate a grid, print its axes and count its cells.
    Check(check::CheckArgs),
    /// Price one run: ledger per phase and bucket, waste, iterations a budget affords.
    #[command(args_override_self = true)]
    Cost(Box<cost::CostArgs>),
    /// FLOPs of one pass over a batch of sequences (to reconcile with veRL's perf/mfu/actor).
    Flops(flops::FlopsArgs),
    /// List the catalog: models, GPUs or reward mechanisms.
    Catalog(catalog::CatalogArgs),
    /// Choose IsoFLOP pilot runs and write launch scripts (veRL or TRL) and a Slurm array.
    Plan(plan::PlanArgs),
    /// Write results for a plan from known parameters (a stand-in for a cluster).
    Simulate(simulate::SimulateArgs),
    /// Fit pilot results: per-run curves, RACE surfaces, calibrated prior.
    Fit(fit::FitArgs),
    /// Fit one sigmoid to a compute,score CSV (to compare with scipy.optimize.curve_fit).
    FitCurve(fit::FitCurveArgs),
    /// Price one project as SFT, RM + PPO, DPO and GRPO side by side.
    Compare(compare::CompareArgs),
    /// Combine shard outputs (`sweep --shard I/N`) into what an unsharded sweep writes.
    Merge(merge::MergeArgs),
    /// The non-dominated rows of any CSV (JSON: row indices and the time taken).
    Front(front::FrontArgs),
    /// Fit the GPU profile's efficiencies to one measured step (veRL timings) and write a
    /// catalog override for --catalog.
    CalibrateHw(Box<calibrate_hw::CalibrateHwArgs>),
    /// Score the outcome prior on published before/after RL results against naive baselines.
    Backtest(backtest::BacktestArgs),
    /// Fit the outcome prior's defaults to the evidence base (and write src/outcome/fitted.rs).
    FitPrior(backtest::FitPriorArgs),
    /// Price published per-step phase timings and print the ledger's error.
    Validate(validate::ValidateArgs),
    /// Collect the pilots' held-out metric from veRL/wandb/TRL logs into fit's tidy CSV.
    Collect(collect::CollectArgs),
    /// A catalog entry from a model's Hugging Face config.json (use it with --catalog).
    ImportModel(catalog::ImportModelArgs),
    /// Write a commented grid from a few flags (models, GPU, budgets in dollars).
    Init(init::InitArgs),
    /// Print shell completions: `rlfrontier completions bash|zsh|fish|elvish|powershell`.
    Completions(init::CompletionsArgs),
}

/// `--catalog FILE`, shared by every command that reads the catalog.
#[derive(Debug, Clone, Args)]
struct CatalogFlag {
    /// A catalog file merged over the embedded one; give it again to merge several, in order (a
    /// later file's entry overrides the fields it sets).
    #[arg(long = "catalog", value_name = "FILE", action = clap::ArgAction::Append)]
    pub paths: Vec<PathBuf>,
}

impl CatalogFlag {
    /// The embedded catalog, merged with the user's files in order.
    fn load(&self) -> Result<Catalog> {
        let paths: Vec<&Path> = self.paths.iter().map(PathBuf::as_path).collect();
        Catalog::load_files(&paths)
    }
}

/// Writes text to standard output, mapping a failure to an I/O error on `<stdout>`.
fn emit(out: &mut dyn Write, text: &str) -> Result<()> {
    // Settings the library names in its text (`⟨name⟩`) are shown as this command line's flags.
    let text = rlfrontier::error::render_settings(text, rlfrontier::error::SettingSyntax::Flag);
    out.write_all(terminal_safe(&text).as_bytes())
        .map_err(|e| Error::io(Path::new("<stdout>"), e))
}

/// `text` with every control character but newline and tab shown escaped (`\u{1b}`): text from
/// a user's files (a grid's description, a catalog name) never reaches the terminal as an escape
/// sequence, whichever command prints it.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\n' | '\t' => c.to_string(),
                c if c.is_control() => c.escape_default().to_string(),
                c => c.to_string(),
            })
            .collect(),
    )
}

/// Pretty JSON with a final newline.
fn json_text(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values always serialise");
    text.push('\n');
    text
}

/// A flag set on SIGINT (Ctrl-C) or SIGTERM (what Slurm sends at a time limit or preemption);
/// long commands poll it, and every commit of outputs checks the library's record of it
/// (`rlfrontier::interrupt`), so nothing is half-written.
fn install_interrupt_handler() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let handler_flag = Arc::clone(&flag);
        // SAFETY: the action only stores to atomics, which is async-signal-safe.
        let registered = unsafe {
            signal_hook::low_level::register(signal, move || {
                rlfrontier::interrupt::record_signal(signal);
                handler_flag.store(true, Ordering::SeqCst);
            })
        };
        // If a handler cannot be installed, the signal keeps its default behaviour.
        let _ = registered;
    }
    flag
}

/// Writes a line to stderr without panicking when stderr is closed (a broken pipe there must
/// not turn an error into a crash).
fn report_error(text: &str) {
    let _ = writeln!(std::io::stderr(), "error: {text}");
}

/// Whether an error is stdout closed by its reader (`rlfrontier ... | head`): the Unix way is to
/// stop quietly, with the work (outputs already committed) done.
fn is_closed_stdout(error: &Error) -> bool {
    matches!(error, Error::Io { path, source } if path == Path::new("<stdout>") && source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Parses a command line (the program's name first). `cost` and `calibrate-hw` also learn which
/// of their arguments were typed (clap's value sources), so that a framework file they import
/// never overrides a flag the user gave.
fn parse_cli(argv: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
    let matches = Cli::command().try_get_matches_from(argv)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let Some((_, sub)) = matches.subcommand() {
        let typed: Vec<String> = sub
            .ids()
            .filter(|id| sub.value_source(id.as_str()) == Some(ValueSource::CommandLine))
            .map(|id| id.as_str().to_string())
            .collect();
        match &mut cli.command {
            Command::Cost(args) => args.typed = typed,
            Command::CalibrateHw(args) => args.run.typed = typed,
            _ => {}
        }
    }
    Ok(cli)
}

/// Runs a parsed command line, printing to stdout.
fn run(cli: Cli, interrupted: &AtomicBool) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    run_into(cli, interrupted, &mut out)
}

/// Runs a parsed command line, printing what it prints to stdout into `out`.
fn run_into(cli: Cli, interrupted: &AtomicBool, out: &mut dyn Write) -> Result<()> {
    let mut out = out;
    match cli.command {
        Command::Sweep(args) => sweep::run(&args, interrupted, &mut out),
        Command::Check(args) => check::run(&args, &mut out),
        Command::Cost(args) => cost::run(&args, &mut out),
        Command::Flops(args) => flops::run(&args, &mut out),
        Command::Catalog(args) => catalog::run(&args, &mut out),
        Command::Plan(args) => plan::run(&args, &mut out),
        Command::Simulate(args) => simulate::run(&args, &mut out),
        Command::Fit(args) => fit::run(&args, &mut out),
        Command::FitCurve(args) => fit::run_fit_curve(&args, &mut out),
        Command::Compare(args) => compare::run(&args, &mut out),
        Command::Merge(args) => merge::run(&args, &mut out),
        Command::Front(args) => front::run(&args, &mut out),
        Command::CalibrateHw(args) => calibrate_hw::run(&args, &mut out),
        Command::Backtest(args) => backtest::run(&args, &mut out),
        Command::FitPrior(args) => backtest::run_fit_prior(&args, &mut out),
        Command::Validate(args) => validate::run(&args, &mut out),
        Command::Collect(args) => collect::run(&args, &mut out),
        Command::ImportModel(args) => catalog::run_import(&args, &mut out),
        Command::Init(args) => init::run(&args, &mut out),
        Command::Completions(args) => init::run_completions(&args, &mut out),
    }
}

/// A clap error as one line: what was wrong and with which argument. Help and version requests
/// are not errors and are printed by clap as usual.
fn one_line_usage_error(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .filter(|line| !line.is_empty())
        .collect();
    let text = parts.join(" ");
    text.strip_prefix("error: ").unwrap_or(&text).to_string()
}

/// The exit code of an error (the table in [`main`]'s comment).
fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Input(_) => 2,
        Error::Interrupted => rlfrontier::interrupt::exit_code(),
        Error::Infeasible(_) => 3,
        Error::Io { .. } => 1,
    }
}

/// Why an embedded command line failed: its exit code and its one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(dead_code)] // read by the Python package, which compiles this module too
pub struct Failure {
    /// The exit code the binary would have returned (2 bad input, 3 infeasible, 1 otherwise).
    pub exit_code: u8,
    /// The one line the binary would have printed after "error: ".
    pub message: String,
}

/// Runs a command line given as words (without the program name) as the binary would, and
/// returns what it printed to stdout, or its failure. For embedding: the Python package calls
/// this, so its results and its error messages are the command line's. No signal handler is
/// installed (the host process keeps its own); `--help` comes back as the printed text.
#[allow(dead_code)] // the binary itself does not call it
pub fn run_captured(words: &[String]) -> std::result::Result<Vec<u8>, Failure> {
    run_captured_into(words, &AtomicBool::new(false), None)
}

/// [`run_captured`] for a `sweep` command line whose cells table goes to `sink` (when given)
/// instead of a file; `interrupted`, once set, stops the sweep at its next check. Any other
/// command with a sink is refused.
#[allow(dead_code)] // the binary itself does not call it
pub fn run_captured_into(
    words: &[String],
    interrupted: &AtomicBool,
    sink: Option<&dyn rlfrontier::engine::CellsSink>,
) -> std::result::Result<Vec<u8>, Failure> {
    // The caller is Python: a setting in an error is its keyword (what it prints is the
    // command line's, flags included, so that its JSON is the binary's).
    let fail = |error: Error| {
        let error = error.with_keyword_names();
        Failure {
            exit_code: exit_code(&error),
            message: error.to_string(),
        }
    };
    let argv: Vec<std::ffi::OsString> = std::iter::once("rlfrontier".into())
        .chain(words.iter().map(Into::into))
        .collect();
    let cli = match parse_cli(argv) {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => return Ok(error.render().to_string().into_bytes()),
        Err(error) => {
            return Err(Failure {
                exit_code: 2,
                message: one_line_usage_error(&error),
            });
        }
    };
    let mut out = Vec::new();
    match (cli.command, sink) {
        (Command::Sweep(args), Some(sink)) => {
            sweep::run_to(&args, interrupted, &mut out, Some(sink)).map_err(fail)?
        }
        (_, Some(_)) => {
            return Err(Failure {
                exit_code: 2,
                message: "only `sweep` hands its cells table over as it runs".to_string(),
            });
        }
        (command, None) => run_into(Cli { command }, interrupted, &mut out).map_err(fail)?,
    }
    Ok(out)
}

/// The binary's whole life: parse, run, and decide the exit code (2 for bad input, 3 when the
/// priced run is infeasible, 130 on SIGINT and 143 on SIGTERM, 0 when stdout is closed by its
/// reader after the work is done, 1 otherwise). The only place exit codes
/// exist.
pub fn main(args: Vec<std::ffi::OsString>) -> ExitCode {
    let cli = match parse_cli(args) {
        Ok(cli) => cli,
        Err(error) => {
            if !error.use_stderr() {
                // --help and --version.
                let _ = error.print();
                return ExitCode::SUCCESS;
            }
            report_error(&one_line_usage_error(&error));
            return ExitCode::from(2);
        }
    };
    let interrupted = install_interrupt_handler();
    match run(cli, &interrupted) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_closed_stdout(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let error = error.with_flag_names();
            report_error(&error.to_string());
            ExitCode::from(exit_code(&error))
        }
    }
}
