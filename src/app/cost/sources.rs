//! Where each of `cost`'s settings came from: typed on the command line, read from the imported
//! framework file (its line and key), or the default. `cost --json` records it as `sources`, so
//! a priced run says which of its numbers were the user's and which were the tool's.

use serde_json::{Map, Value};

use super::CostArgs;
use super::import::{Import, arg_id, flag_of};

/// `cost`'s arguments that are no setting of the run: how to read inputs and what to print.
const NOT_SETTINGS: [&str; 10] = [
    "json",
    "paths",
    "from_verl",
    "from_trl",
    "grid",
    "cell",
    "strict",
    "help",
    "catalog",
    "gain",
];

/// Each setting `cost` takes (by its argument id: the flag's name with underscores; a switch's
/// `no_` twin folded into it), with where its value came from: `flag`, the import's `FILE:LINE
/// KEY`, or `default`.
pub(super) fn sources_json(args: &CostArgs, import: Option<&Import>) -> Value {
    let command = <CostArgs as clap::Args>::augment_args(clap::Command::new("cost"));
    let typed = |id: &str| args.typed.iter().any(|t| t == id);
    let mut sources = Map::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if NOT_SETTINGS.contains(&id) || arg.is_hide_set() {
            continue;
        }
        let positive = id.strip_prefix("no_").unwrap_or(id);
        if sources.contains_key(positive) {
            continue;
        }
        let source = if typed(positive) || typed(&format!("no_{positive}")) {
            "flag".to_string()
        } else if let Some(origin) = import.and_then(|i| imported_origin(i, positive)) {
            origin
        } else {
            "default".to_string()
        };
        sources.insert(positive.to_string(), Value::String(source));
    }
    Value::Object(sources)
}

/// Where the import set the argument `id`, as `FILE:LINE KEY` (`FILE KEY` for a value the file
/// implies without a line of its own); None when it did not set it.
fn imported_origin(import: &Import, id: &str) -> Option<String> {
    let imported = import.run.settings.iter().find(|i| {
        let imported_id = arg_id(flag_of(&i.setting).0);
        imported_id.strip_prefix("no_").unwrap_or(&imported_id) == id
    })?;
    let path = import.path.display();
    Some(match imported.line {
        Some(line) => format!("{path}:{line} {}", imported.key),
        None => format!("{path} {}", imported.key),
    })
}
