//! Locations in TOML text the user wrote: the line of a parse error, of a byte offset, or of a
//! key inside a section, so every error message can point at a line.

use std::path::Path;

use crate::error::Error;

/// Converts a TOML syntax or type error into a one-line input error with the line number.
pub fn toml_error(path: &Path, text: &str, error: &toml::de::Error) -> Error {
    let line = error.span().map(|span| line_of_offset(text, span.start));
    Error::in_file(
        path,
        line,
        "",
        format!("invalid TOML: {}", error.message().trim()),
    )
}

/// 1-based line number of a byte offset.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// 1-based line of `key` inside `[section]` (or at top level when `section` is None), found by a
/// light scan of the text: used to point error messages at the right line.
pub fn locate_key(text: &str, section: Option<&str>, key: &str) -> Option<usize> {
    let mut current: Option<String> = None;
    for (number, raw_line) in text.lines().enumerate() {
        let line = raw_line.trim();
        if line.starts_with('[') {
            let name = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            current = Some(name.to_string());
            continue;
        }
        let in_section = match (section, &current) {
            (None, None) => true,
            (Some(s), Some(c)) => s == c,
            _ => false,
        };
        if !in_section {
            continue;
        }
        if let Some(rest) = line.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(number + 1);
        }
        // A key inside an inline table on this line (`pass_rate = { mean = 0.3 }`).
        if line.contains('{') && line.contains(&format!("{key} "))
            || line.contains(&format!("{key}="))
        {
            return Some(number + 1);
        }
    }
    None
}
