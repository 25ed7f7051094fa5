//! The library's modules form layers: a module may use modules of its own layer's past and below,
//! never above. This test reads every source file under `src/` (the binary's `app/` aside, which
//! sits on top of everything) and fails when a module names a higher one through `crate::`.
//!
//! Test code (`tests.rs` files and every item under `#[cfg(test)]`) may reach upward: a test of
//! the outcome prior on a real grid needs the grid parser. Everything else is read, to the end
//! of each file (a test-only item near the top hides nothing below it).
//!
//! The same reading checks that the library names settings, not one front end's flags: a
//! setting inside a message is written `⟨name⟩` and rendered by the front end (`--name` on the
//! command line, `name=` in Python; `rlfrontier::error::render_settings`).
//!
//! To see the graph yourself: `cargo test --test layers -- --nocapture` prints it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level modules from the bottom up. A module may use any module listed before it.
const LAYERS: &[&[&str]] = &[
    &[
        "error",
        "input",
        "format",
        "rng",
        "stats",
        "toml_text",
        "logs",
        "interrupt",
        "bounds",
        "identity",
    ],
    &["catalog"],
    &["config"],
    &["ledger"],
    &["outcome"],
    &["spec"],
    &["evaluate"],
    &["analysis"],
    &["fit"],
    &["pilot"],
    &["report"],
    &["engine"],
    &["costing"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// (module → the modules it names), from non-test code.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if ["app", "main", "lib"].contains(&top.as_str())
            || relative.file_name().is_some_and(|n| n == "tests.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = &non_test_code(&text);
        let uses = graph.entry(top.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name != top && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                uses.insert(name);
            }
        }
    }
    graph
}

#[test]
fn every_module_is_in_a_layer() {
    for module in module_graph().keys() {
        assert!(
            layer_of(module).is_some(),
            "module `{module}` is in no layer: add it to LAYERS in tests/layers.rs"
        );
    }
}

#[test]
fn no_module_uses_a_higher_layer() {
    let graph = module_graph();
    let mut upward = Vec::new();
    for (module, uses) in &graph {
        println!(
            "{module} -> {}",
            uses.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        let Some(own) = layer_of(module) else {
            continue;
        };
        for used in uses {
            if layer_of(used).is_some_and(|layer| layer > own) {
                upward.push(format!("{module} uses {used}"));
            }
        }
    }
    assert!(upward.is_empty(), "upward imports: {}", upward.join("; "));
}

#[test]
fn the_library_does_not_know_clap() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        if file.starts_with(src.join("app")) || file.ends_with("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("clap::") && !text.contains("use clap"),
            "{} uses clap; only src/app/ may",
            file.display()
        );
    }
}

/// The text of a source file without its test-only items: each `#[cfg(test)]` and the item it
/// gates (to the first `;` outside braces, or to the brace closing the item's body), string
/// literals, character literals and comments read as such.
fn non_test_code(text: &str) -> String {
    const GATE: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(GATE) {
        out.push_str(&rest[..at]);
        let item = &rest[at + GATE.len()..];
        rest = &item[item_end(item)..];
    }
    out.push_str(rest);
    out
}

/// Where the item starting `item` ends (just past its `;` or its closing brace).
fn item_end(item: &str) -> usize {
    let bytes = item.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(end) = literal_or_comment_end(item, i) {
            i = end;
            continue;
        }
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// When a string literal, character literal or comment starts at byte `i`, the byte just past
/// its end.
fn literal_or_comment_end(text: &str, i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let rest = &text[i..];
    if rest.starts_with("//") {
        return Some(rest.find('\n').map_or(text.len(), |n| i + n));
    }
    if rest.starts_with("/*") {
        return Some(rest.find("*/").map_or(text.len(), |n| i + n + 2));
    }
    let identifier_before = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    if !identifier_before && (rest.starts_with("r\"") || rest.starts_with("r#")) {
        let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
        if rest[1 + hashes..].starts_with('"') {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + 2 + hashes;
            return Some(
                text[body..]
                    .find(&close)
                    .map_or(text.len(), |n| body + n + close.len()),
            );
        }
    }
    if bytes[i] == b'"' {
        let mut j = i + 1;
        while j < bytes.len() {
            match bytes[j] {
                b'\\' => j += 2,
                b'"' => return Some(j + 1),
                _ => j += 1,
            }
        }
        return Some(text.len());
    }
    if bytes[i] == b'\'' {
        // A character literal ('x', '\n', '⟨'); otherwise a lifetime or a label.
        if bytes.get(i + 1) == Some(&b'\\') {
            return text[i + 2..].find('\'').map(|n| i + 2 + n + 1);
        }
        let mut chars = text[i + 1..].chars();
        if let (Some(c), Some('\'')) = (chars.next(), chars.next()) {
            return Some(i + 1 + c.len_utf8() + 1);
        }
    }
    None
}

/// The string literals of `code` with their 1-based lines.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        match literal_or_comment_end(code, i) {
            Some(end) => {
                let token = &code[i..end];
                if token.starts_with('"') || token.starts_with('r') {
                    found.push((code[..i].matches('\n').count() + 1, token.to_string()));
                }
                i = end;
            }
            None => i += 1,
        }
    }
    found
}

/// Library text that may spell a command-line flag, each with why: what the library writes for
/// another program, or for the reader of a file it writes.
const FLAGS_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "pilot/launch.rs",
        "",
        "the launch scripts call TRL, accelerate and veRL with their own flags",
    ),
    (
        "pilot/run_record.rs",
        "--generation_batch_size",
        "TRL's own flag",
    ),
    (
        "config/import/trl.rs",
        "trl grpo --key value",
        "TRL's own command-line syntax",
    ),
    ("costing/logs.rs", "--logging_steps", "TRL's own flag"),
    (
        "catalog/import.rs",
        "use it with --catalog FILE",
        "the header of a catalog file it writes, for the shell",
    ),
    (
        "costing/hardware_fit.rs",
        "# Use with --catalog",
        "the header of a catalog file it writes, for the shell",
    ),
    (
        "engine/pilot_fit/mod.rs",
        "next: rlfrontier sweep",
        "the next command to run, as a command line",
    ),
    (
        "fit/prior.rs",
        "Generated by `rlfrontier fit-prior",
        "the header of the Rust file it writes: the command that regenerates it",
    ),
];

#[test]
fn library_text_names_settings_not_flags() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut flags = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if relative.starts_with("app/") || relative == "main.rs" || relative.ends_with("tests.rs") {
            continue;
        }
        let code = non_test_code(&std::fs::read_to_string(&file).unwrap());
        for (line, literal) in string_literals(&code) {
            let names_flag = literal.match_indices("--").any(|(at, _)| {
                let before = literal[..at].chars().next_back();
                let after = literal[at + 2..].chars().next();
                before.is_none_or(|c| " `(/\"".contains(c))
                    && after.is_some_and(|c| c.is_ascii_lowercase())
            });
            let allowed = FLAGS_ALLOWED
                .iter()
                .any(|(f, text, _)| *f == relative && literal.contains(text));
            if names_flag && !allowed {
                flags.push(format!(
                    "src/{relative} (line {line} of its non-test code): {literal}"
                ));
            }
        }
    }
    assert!(
        flags.is_empty(),
        "library text names command-line flags; write the setting as ⟨name⟩ (rlfrontier::error::setting) so each front end renders it:\n{}",
        flags.join("\n")
    );
}

#[test]
fn the_reading_skips_test_items_only() {
    let text = "fn a() {}\n#[cfg(test)]\nmod reference;\nuse crate::x;\n#[cfg(test)]\nmod tests {\n    fn b() { let s = \"}\"; let c = '{'; }\n}\nfn c<'a>(x: &'a str) { let _ = \"--flag\"; }\n";
    let code = non_test_code(text);
    assert!(code.contains("fn a()") && code.contains("use crate::x;") && code.contains("fn c<'a>"));
    assert!(
        !code.contains("mod reference") && !code.contains("fn b()"),
        "{code}"
    );
    assert_eq!(string_literals(&code), vec![(5, "\"--flag\"".to_string())]);
}

#[test]
fn the_design_notes_list_the_layers_this_test_checks() {
    // One list of the layers (issue 52: src/lib.rs, docs/design.md §11 and this file disagreed):
    // the table of docs/design.md §11, row by row, names the modules of LAYERS in order.
    let design =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design.md"))
            .unwrap();
    let section = design
        .split("\n## ")
        .find(|part| part.starts_with("§11"))
        .expect("docs/design.md has a §11");
    let rows: Vec<Vec<String>> = section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let layer = cells.get(1)?.parse::<usize>().ok()?;
            let modules = cells.get(2)?;
            Some((layer, modules.to_string()))
        })
        .map(|(_, modules)| {
            modules
                .split(',')
                .map(|m| m.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect();
    let expected: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|layer| layer.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        rows, expected,
        "docs/design.md §11's table and LAYERS differ"
    );
}
