//! The library's modules form layers: a module may use modules of its own layer's past and below,
//! never above. This test reads every source file under `src/` (the binary's `app/` aside, which
//! sits on top of everything) and fails when a module names a higher one through `crate::`.
//!
//! Test code (`tests.rs` files and everything after `#[cfg(test)]`) may reach upward: a test of
//! the outcome prior on a real grid needs the grid parser.
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
        let code = text.split("#[cfg(test)]").next().unwrap();
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
