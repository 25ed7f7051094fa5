//! Typed errors of the library.
//!
//! Every error a user can fix (a bad grid, an unknown model, a flag out of range) is an
//! [`Error::Input`]: one line naming where the problem is, what is wrong and how to fix it, and
//! exit code 2 at the binary's edge. Failures of the environment (a folder that cannot be
//! written) are [`Error::Io`] and exit with code 1. The exit codes themselves are decided in one
//! place, the binary's `app::main`.
//!
//! The library speaks in settings, never in one front end's syntax. A setting named inside a
//! message is written `⟨name⟩` (its snake_case name in angle brackets, [`setting`]); each front
//! end renders it ([`render_settings`]): `--name` on the command line, `name=` in Python, `name`
//! anywhere else (the plain [`Display`](fmt::Display)).

use std::fmt;
use std::path::{Path, PathBuf};

/// Where a bad input was found: a file (with an optional 1-based line) or a command-line flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A position inside a file the user wrote.
    File {
        /// The file as the user named it.
        path: PathBuf,
        /// 1-based line, when it is known.
        line: Option<usize>,
    },
    /// A command-line flag, such as `--group-size`.
    Flag(String),
    /// A named setting of a request, such as `max_cells`. The library names settings, not flags:
    /// each front end shows them in its own syntax (the CLI rewrites them to `--max-cells` with
    /// [`Error::with_flag_names`]; a Python caller would see the keyword `max_cells`).
    Setting(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File {
                path,
                line: Some(line),
            } => write!(f, "{}:{line}", path.display()),
            Location::File { path, line: None } => write!(f, "{}", path.display()),
            Location::Flag(flag) => write!(f, "{flag}"),
            Location::Setting(name) => write!(f, "{name}"),
        }
    }
}

/// How a front end writes a setting's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingSyntax {
    /// The bare name: `max_cells`.
    Plain,
    /// A command-line flag: `--max-cells`.
    Flag,
    /// A Python keyword: `max_cells=`.
    Keyword,
}

/// A setting named inside a message, to be rendered by the front end: `⟨max_cells⟩`.
pub fn setting(name: &str) -> String {
    format!("⟨{name}⟩")
}

/// `text` with every `⟨name⟩` (a snake_case setting name in angle brackets) written in a front
/// end's syntax; other text is left as it is.
pub fn render_settings(text: &str, syntax: SettingSyntax) -> String {
    if !text.contains('⟨') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('⟨') {
        out.push_str(&rest[..open]);
        let after = &rest[open + '⟨'.len_utf8()..];
        let name_end = after.find('⟩');
        match name_end.map(|end| &after[..end]) {
            Some(name)
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
            {
                out.push_str(&match syntax {
                    SettingSyntax::Plain => name.to_string(),
                    SettingSyntax::Flag => format!("--{}", name.replace('_', "-")),
                    SettingSyntax::Keyword => format!("{name}="),
                });
                rest = &after[name.len() + '⟩'.len_utf8()..];
            }
            _ => {
                out.push('⟨');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// One problem with the user's input, formatted as a single line:
/// `grids/x.toml:12: axes.group_size: 0 is not a group size; use integers of at least 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// File and line, or flag.
    pub location: Location,
    /// Dotted field name (`axes.group_size`), empty when the whole input is at fault.
    pub field: String,
    /// What is wrong, and how to fix it.
    pub message: String,
}

/// Text safe to print on one line: control characters (a newline inside a TOML string the user
/// wrote, say) are shown escaped. Found by fuzzing the grid parser.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = one_line(&self.location.to_string());
        let message = one_line(&render_settings(&self.message, SettingSyntax::Plain));
        if self.field.is_empty() {
            write!(f, "{location}: {message}")
        } else {
            write!(f, "{location}: {}: {message}", one_line(&self.field))
        }
    }
}

/// Errors of the rlfrontier library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input is wrong; the message says where and how to fix it (exit code 2).
    #[error("{0}")]
    Input(Box<InputError>),
    /// Reading or writing a file failed (exit code 1).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The run was interrupted by the user (exit code 130).
    #[error("interrupted; no partial output was left behind")]
    Interrupted,
    /// The priced run cannot happen as configured (exit code 3); its report was still printed,
    /// priced as if it could run.
    #[error("the run is infeasible: {}", render_settings(.0, SettingSyntax::Plain))]
    Infeasible(String),
}

impl Error {
    /// An input error located in a file.
    pub fn in_file(
        path: &Path,
        line: Option<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> Self {
        Error::Input(Box::new(InputError {
            location: Location::File {
                path: path.to_path_buf(),
                line,
            },
            field: field.to_string(),
            message: message.into(),
        }))
    }

    /// An input error in a command-line flag.
    pub fn in_flag(flag: &str, message: impl Into<String>) -> Self {
        Error::Input(Box::new(InputError {
            location: Location::Flag(flag.to_string()),
            field: String::new(),
            message: message.into(),
        }))
    }

    /// An input error in a named setting of a request (see [`Location::Setting`]).
    pub fn in_setting(name: &str, message: impl Into<String>) -> Self {
        Error::Input(Box::new(InputError {
            location: Location::Setting(name.to_string()),
            field: String::new(),
            message: message.into(),
        }))
    }

    /// The error with every setting shown as the command-line flag of the same name
    /// (`max_cells` becomes `--max-cells`), where it is located and inside its message: the
    /// CLI's view of a library error.
    pub fn with_flag_names(self) -> Self {
        match self {
            Error::Input(mut input) => {
                // Upper-case names are positional arguments (`DIR`) and keep their name.
                if let Location::Setting(name) = &input.location
                    && !name.chars().all(|c| c.is_ascii_uppercase())
                {
                    input.location = Location::Flag(format!("--{}", name.replace('_', "-")));
                }
                input.message = render_settings(&input.message, SettingSyntax::Flag);
                Error::Input(input)
            }
            Error::Infeasible(reason) => {
                Error::Infeasible(render_settings(&reason, SettingSyntax::Flag))
            }
            other => other,
        }
    }

    /// The error in a Python caller's words: a setting inside the message as the keyword
    /// (`max_cells=`), a flag where the command line located it as the keyword's name.
    pub fn with_keyword_names(self) -> Self {
        match self {
            Error::Input(mut input) => {
                if let Location::Flag(flag) = &input.location
                    && let Some(name) = flag.strip_prefix("--")
                {
                    input.location = Location::Setting(name.replace('-', "_"));
                }
                input.message = render_settings(&input.message, SettingSyntax::Keyword);
                Error::Input(input)
            }
            Error::Infeasible(reason) => {
                Error::Infeasible(render_settings(&reason, SettingSyntax::Keyword))
            }
            other => other,
        }
    }

    /// An I/O error on a path.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the user's input is at fault (the binary exits with code 2 for these).
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Input(_))
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The name in `candidates` closest to `name` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the longer name's length, and at least one edit allowed).
pub fn nearest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let lower = name.to_ascii_lowercase();
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    // A name that is the start of a valid one (`h100` for `h100-sxm`) is the likeliest intent.
    if !lower.is_empty()
        && let Some(prefixed) = candidates
            .iter()
            .filter(|c| c.to_ascii_lowercase().starts_with(&lower))
            .min_by_key(|c| c.len())
    {
        return Some(prefixed);
    }
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = edit_distance(&lower, &candidate.to_ascii_lowercase());
        let allowed = (lower.len().max(candidate.len()) / 3).max(2);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Most values an error lists when none is close to what was typed.
pub const MAX_LISTED_VALUES: usize = 12;

/// A "did you mean" suffix for an error message, or a list of the valid names when none is close
/// (at most [`MAX_LISTED_VALUES`] of them; above that, how many there are).
pub fn suggestion<'a, I>(name: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    match nearest(name, candidates.clone()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => {
            let all: Vec<&str> = candidates.into_iter().collect();
            if all.len() > MAX_LISTED_VALUES {
                // A line of dozens of ids helps nobody: the listing command says where they are.
                format!("no value is close among the {} known", all.len())
            } else {
                format!("valid values: {}", all.join(", "))
            }
        }
    }
}

/// Levenshtein distance between two strings, in characters (the `strsim` crate's).
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_hand_values() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("gruop_size", "group_size"), 2);
    }

    #[test]
    fn nearest_finds_typos_and_rejects_unrelated_names() {
        let names = ["group_size", "max_response_len", "update_epochs"];
        assert_eq!(nearest("gruop_size", names), Some("group_size"));
        assert_eq!(nearest("update_epoch", names), Some("update_epochs"));
        assert_eq!(nearest("zzzzzzzzzzzzzzzzz", names), None);
        assert_eq!(
            nearest("h100", ["h800", "h100-sxm", "h200"]),
            Some("h100-sxm")
        );
    }

    #[test]
    fn user_text_with_newlines_stays_on_one_line() {
        // Regression: the grid-spec fuzzer found a model id with "\n" inside a TOML string.
        let e = Error::in_file(
            Path::new("g.toml"),
            Some(1),
            "axes.model",
            "unknown model `qwe\n2.5`",
        );
        assert!(!e.to_string().contains('\n'));
        assert!(e.to_string().contains("qwe\\n2.5"));
    }

    #[test]
    fn input_error_is_one_line_with_location_and_field() {
        let e = Error::in_file(
            Path::new("g.toml"),
            Some(3),
            "axes.group_size",
            "0 is not allowed",
        );
        assert_eq!(e.to_string(), "g.toml:3: axes.group_size: 0 is not allowed");
        assert!(e.is_input());
    }
}
