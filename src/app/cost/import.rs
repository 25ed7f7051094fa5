//! `cost --from-verl` / `--from-trl`: the framework file read into flags, each imported value
//! overridden by a flag the user typed, and what was imported, as text or JSON.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rlfrontier::error::{Error, Result};

use rlfrontier::config::import::{
    ConfigFormat, ImportedRun, RESPONSE_LENGTH_NOTE, Setting, TrlLaunch, import_trl, import_verl,
};

/// Reads and imports a framework file; errors name the file, line and key.
pub(super) fn read_import(
    path: &Path,
    format: ConfigFormat,
    launch: TrlLaunch,
) -> Result<ImportedRun> {
    let text = rlfrontier::input::read_text(
        path,
        rlfrontier::input::MAX_CONFIG_BYTES,
        "the launch script or config file",
    )?;
    let imported = match format {
        ConfigFormat::Verl => import_verl(&text),
        ConfigFormat::Trl => import_trl(&text, launch),
    };
    imported.map_err(|e| Error::in_file(path, e.line, &e.key, e.message))
}

/// An error about a flag whose value came from the imported file, located in the file instead.
pub(super) fn locate_in_import(error: Error, path: &Path, run: &ImportedRun) -> Error {
    let Error::Input(input) = &error else {
        return error;
    };
    let rlfrontier::error::Location::Flag(flag) = &input.location else {
        return error;
    };
    if user_flags().iter().any(|f| f == flag) {
        return error;
    }
    match run
        .settings
        .iter()
        .find(|i| i.setting.cost_flag().0 == flag)
    {
        Some(imported) if imported.line.is_some() => Error::in_file(
            path,
            imported.line,
            &imported.key,
            format!("{} (imported as {flag})", input.message),
        ),
        _ => error,
    }
}

/// The flags the user typed after `cost` (names only), to tell imported values from overrides.
pub(super) fn user_flags() -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    let start = args
        .iter()
        .position(|a| a == "cost")
        .map_or(args.len(), |i| i + 1);
    args[start..]
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect()
}

/// Whether the user's flags set what `flag` sets (a switch and its negation count as one).
fn overridden(flag: &str, user_flags: &[String]) -> bool {
    let twin = flag
        .strip_prefix("--no-")
        .map(|f| format!("--{f}"))
        .unwrap_or_else(|| flag.replacen("--", "--no-", 1));
    let budget_for_steps = flag == "--steps" && user_flags.iter().any(|f| f == "--budget");
    budget_for_steps || user_flags.iter().any(|f| f == flag || *f == twin)
}

/// The command line a run imported from a file stands for: the file's settings as `cost` flags
/// inserted right after `cost`, so that flags the user typed (later on the line) win. Other
/// subcommands' arguments are returned unchanged.
pub fn with_imported_flags(args: Vec<OsString>) -> Result<Vec<OsString>> {
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(at) = text
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|i| i + 1)
    else {
        return Ok(args);
    };
    // `calibrate-hw` takes the run's configuration as `cost` does, the imported file included
    // (it was accepted and ignored: the defaults were calibrated instead).
    if text[at] != "cost" && text[at] != "calibrate-hw" {
        return Ok(args);
    }
    let value_of = |flag: &str| -> Option<String> {
        let equals = format!("{flag}=");
        text[at + 1..].iter().enumerate().find_map(|(i, a)| {
            if a == flag {
                text.get(at + 2 + i).cloned()
            } else {
                a.strip_prefix(&equals).map(str::to_string)
            }
        })
    };
    let source = match (value_of("--from-verl"), value_of("--from-trl")) {
        (Some(path), None) => (PathBuf::from(path), ConfigFormat::Verl),
        (None, Some(path)) => (PathBuf::from(path), ConfigFormat::Trl),
        // None: nothing to import; both: clap reports the conflict.
        _ => return Ok(args),
    };
    let launch = TrlLaunch {
        processes: value_of("--gpus").and_then(|g| g.parse().ok()),
        num_generations: value_of("--group-size").and_then(|g| g.parse().ok()),
    };
    let run = read_import(&source.0, source.1, launch)?;
    let typed: Vec<String> = text[at + 1..]
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect();
    let mut spliced: Vec<OsString> = args[..=at].to_vec();
    // calibrate-hw prices one measured step: the run's length is not its to read.
    let calibrating = text[at] == "calibrate-hw";
    for imported in &run.settings {
        let (flag, value) = imported.setting.cost_flag();
        if overridden(flag, &typed)
            || (calibrating && matches!(flag, "--steps" | "--data-epochs" | "--budget"))
        {
            continue;
        }
        spliced.push(flag.into());
        if let Some(value) = value {
            spliced.push(value.into());
        }
    }
    spliced.extend_from_slice(&args[at + 1..]);
    Ok(spliced)
}

/// Where an imported setting came from, for humans.
fn origin(imported: &rlfrontier::config::import::Imported, run: &ImportedRun) -> String {
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    match imported.line {
        Some(line) => format!("{} (line {line})", imported.key),
        None if matches!(imported.setting, Setting::Framework(_)) => "the file's framework".into(),
        None if imported.key.starts_with("--") => imported.key.clone(),
        None => format!("{} ({framework} default)", imported.key),
    }
}

/// How many unknown keys the text block names before it counts the rest.
const LISTED_UNKNOWN_KEYS: usize = 20;

/// The text block `cost` prints before the ledger of an imported run.
pub(super) fn imported_text(path: &Path, run: &ImportedRun, user_flags: &[String]) -> String {
    let framework = match run.format {
        ConfigFormat::Verl => "veRL",
        ConfigFormat::Trl => "TRL",
    };
    let mut s = format!("Imported from {} ({framework}):\n", path.display());
    let rows: Vec<(String, String)> = run
        .settings
        .iter()
        .map(|i| {
            let (flag, value) = i.setting.cost_flag();
            let flag_text = match value {
                Some(v) => format!("{flag} {v}"),
                None => flag.to_string(),
            };
            let mut from = origin(i, run);
            if overridden(flag, user_flags) {
                from.push_str(": overridden on the command line");
            }
            (flag_text, from)
        })
        .collect();
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    for (flag, from) in &rows {
        s.push_str(&format!("  {flag:<width$}  <- {from}\n"));
    }
    for k in &run.not_modelled {
        s.push_str(&format!(
            "  not modelled: {} (line {}): {}\n",
            k.key, k.line, k.why
        ));
    }
    if !run.unknown.is_empty() {
        let mut keys: Vec<String> = run
            .unknown
            .iter()
            .take(LISTED_UNKNOWN_KEYS)
            .map(|k| match k.why.is_empty() {
                true => format!("{} (line {})", k.key, k.line),
                false => format!("{} (line {}: {})", k.key, k.line, k.why),
            })
            .collect();
        if run.unknown.len() > LISTED_UNKNOWN_KEYS {
            keys.push(format!(
                "and {} more (--json lists them all)",
                run.unknown.len() - LISTED_UNKNOWN_KEYS
            ));
        }
        s.push_str(&format!(
            "  unknown keys, not priced (a typo, or a newer {framework}?): {}\n",
            keys.join(", ")
        ));
    }
    if !run.not_priced.is_empty() {
        s.push_str(&format!(
            "  read, not priced ({} keys that do not change the cost: learning rate, clipping, logging, paths, ...)\n",
            run.not_priced.len()
        ));
    }
    for note in &run.notes {
        let length_given = user_flags.iter().any(|f| f == "--mean-response-tokens");
        if !(length_given && note == RESPONSE_LENGTH_NOTE) {
            s.push_str(&format!("  note: {note}\n"));
        }
    }
    s.push('\n');
    s
}

/// The JSON form of an import: settings with their keys and lines, and the keys not used.
pub(super) fn imported_json(
    path: &Path,
    run: &ImportedRun,
    user_flags: &[String],
) -> serde_json::Value {
    let keys = |notes: &[rlfrontier::config::import::KeyNote]| {
        notes
            .iter()
            .map(|k| serde_json::json!({"key": k.key, "line": k.line, "why": k.why}))
            .collect::<Vec<_>>()
    };
    serde_json::json!({
        "file": path.display().to_string(),
        "framework": run.format.framework().as_str(),
        "settings": run.settings.iter().map(|i| {
            let (flag, value) = i.setting.cost_flag();
            serde_json::json!({
                "flag": flag,
                "value": value,
                "key": i.key,
                "line": i.line,
                "overridden": overridden(flag, user_flags),
            })
        }).collect::<Vec<_>>(),
        "not_modelled": keys(&run.not_modelled),
        "unknown": keys(&run.unknown),
        "not_priced": keys(&run.not_priced),
        "notes": run.notes,
    })
}
