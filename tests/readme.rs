//! The README's and the book's command outputs are real: every example whose output README.md or
//! a chapter of the book (`docs/book/src/*.md`) shows is run here and must print exactly what the
//! page says. (mdBook is not needed: these tests are the book's `mdbook test`.)
//!
//! Two shapes are recognised:
//! - a block whose first line is `$ cargo run --release -- ARGS` (continued with `\`), followed
//!   by the output in the same block;
//! - a ```` ```sh ```` block holding one `cargo run --release -- ARGS` command, followed directly
//!   by a plain ```` ``` ```` block holding its output.
//!
//! Commands that elide arguments (`...`) are skipped. Commands run from one temporary folder, in
//! the order of the pages (the README, then the chapters in `SUMMARY.md`'s order, so the RACE
//! loop's `plan`, `simulate`, `fit` and calibrated `sweep` see each other's files), with
//! `grids/` paths pointing into the repository and `evidence/` linked, so an example that writes
//! a file (`calibrate-hw --out h100-mine.toml`) leaves the checkout clean.
//! `RLFRONTIER_BLESS=1` rewrites the shown outputs in the page each came from.
//!
//! Also checked here: the README's size, that `SUMMARY.md` lists every chapter, and that every
//! relative link of the README and the book points to a file that exists.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use std::path::Path;

mod common;

/// A README example: the argument text after `cargo run --release --`, and the expected output.
struct Example {
    line: usize,
    args: String,
    expected: String,
    /// 0-based index of the README line where the shown output starts, and its line count
    /// (for `RLFRONTIER_BLESS=1`, which rewrites them).
    output_at: (usize, usize),
}

/// Fenced blocks as (1-based line of the opening fence, info string, body lines).
fn fenced_blocks(text: &str) -> Vec<(usize, String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String, Vec<String>)> = None;
    for (number, line) in text.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some((number + 1, info.trim().to_string(), Vec::new())),
            }
        } else if let Some(block) = current.as_mut() {
            block.2.push(line.to_string());
        }
    }
    blocks
}

/// Joins a command and its `\` continuation lines; returns the joined text and the lines used.
fn command_at(lines: &[String]) -> (String, usize) {
    let mut joined = String::new();
    for (used, line) in lines.iter().enumerate() {
        let line = line.trim();
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head.trim());
                joined.push(' ');
            }
            None => {
                joined.push_str(line);
                return (joined, used + 1);
            }
        }
    }
    (joined, lines.len())
}

fn examples(readme: &str) -> Vec<Example> {
    const PREFIX: &str = "cargo run --release -- ";
    let blocks = fenced_blocks(readme);
    let mut found = Vec::new();
    for (k, (line, info, body)) in blocks.iter().enumerate() {
        if let Some(first) = body.first()
            && first.starts_with("$ ")
        {
            let (command, used) = command_at(body);
            let command = command.trim_start_matches("$ ");
            if let Some(args) = command.strip_prefix(PREFIX) {
                found.push(Example {
                    line: *line,
                    args: args.to_string(),
                    expected: body[used..].join("\n") + "\n",
                    output_at: (line + used, body.len() - used),
                });
            }
        } else if info == "sh"
            && let Some(first) = body.first()
            && first.starts_with(PREFIX)
            && let Some((next_line, next_info, output)) = blocks.get(k + 1)
        {
            let (command, used) = command_at(body);
            if used == body.len() && next_info.is_empty() {
                found.push(Example {
                    line: *line,
                    args: command[PREFIX.len()..].to_string(),
                    expected: output.join("\n") + "\n",
                    output_at: (*next_line, output.len()),
                });
            }
        }
    }
    found
}

/// The text with the timing of `swept ... in 0.18 s on 2 threads (7,355 cells/s)` lines cut
/// (the only part of a sweep's summary that changes between runs).
fn without_timing(text: &str) -> String {
    text.lines()
        .map(|line| match line.rfind(" in ") {
            Some(at) if line.starts_with("swept ") && line.ends_with("cells/s)") => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits shell words, honouring double quotes (enough for the README's commands).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// The book's chapters, relative to the repository, in `SUMMARY.md`'s order.
fn chapters() -> Vec<String> {
    let summary = std::fs::read_to_string(common::repo("docs/book/src/SUMMARY.md")).unwrap();
    links(&summary)
        .into_iter()
        .filter(|link| link.ends_with(".md"))
        .map(|link| format!("docs/book/src/{link}"))
        .collect()
}

/// Every page whose examples are run: the README, then the book's chapters; as (path relative
/// to the repository, text).
fn pages() -> Vec<(String, String)> {
    std::iter::once("README.md".to_string())
        .chain(chapters())
        .map(|page| {
            let text = std::fs::read_to_string(common::repo(&page)).unwrap();
            (page, text)
        })
        .collect()
}

/// The targets of the markdown links (`[text](target)` and `![alt](target)`) outside fenced
/// blocks, in order.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push(rest[..end].trim().to_string());
                rest = &rest[end..];
            }
        }
    }
    found
}

/// A temporary folder to run the examples from: `results/` and `tests/` exist, and the
/// repository's `evidence`, `grids`, `validation`, `tests/fixtures` and `results/examples` are
/// linked (commands that read a default path, such as `backtest`, find it).
fn example_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::create_dir(dir.path().join("results")).unwrap();
    for linked in [
        "evidence",
        "grids",
        "validation",
        "tests/fixtures",
        "results/examples",
    ] {
        std::os::unix::fs::symlink(repo.join(linked), dir.path().join(linked)).unwrap();
    }
    dir
}

/// Runs one example from `dir` and returns what it printed, with the folder's path written as
/// `.` and the repository's as nothing (a `grids/` argument is passed as a repository path).
fn run_example(dir: &Path, page: &str, example: &Example) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = shell_words(&example.args)
        .into_iter()
        .map(|w| {
            if w.starts_with("grids/") {
                repo.join(w).display().to_string()
            } else {
                w
            }
        })
        .collect();
    let output = common::bin().current_dir(dir).args(&args).output().unwrap();
    assert!(
        output.status.success(),
        "{page} line {}: `{}` failed: {}",
        example.line,
        example.args,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .replace(&dir.display().to_string(), ".")
        .replace(&format!("{}/", repo.display()), "")
}

/// Writes `page` with the shown outputs replaced (`RLFRONTIER_BLESS=1`), from the last to the
/// first, so earlier indices hold.
fn bless(page: &str, text: &str, blessed: Vec<((usize, usize), String)>) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for ((start, len), actual) in blessed.into_iter().rev() {
        let new: Vec<String> = actual
            .trim_end_matches('\n')
            .lines()
            .map(str::to_string)
            .collect();
        lines.splice(start..start + len, new);
    }
    std::fs::write(common::repo(page), lines.join("\n") + "\n").unwrap();
}

#[test]
fn every_example_prints_what_the_readme_and_the_book_show() {
    let pages = pages();
    let dir = example_folder();
    let bless_all = std::env::var_os("RLFRONTIER_BLESS").is_some();
    let mut checked = 0;
    for (page, text) in &pages {
        let mut blessed: Vec<((usize, usize), String)> = Vec::new();
        for example in examples(text) {
            if example.args.contains("...") {
                continue;
            }
            let actual = run_example(dir.path(), page, &example);
            checked += 1;
            if bless_all {
                // Only the timing line moved: keep the page's (measured on a release build).
                let keep = without_timing(&actual) == without_timing(&example.expected);
                let shown = if keep {
                    example.expected.clone()
                } else {
                    actual
                };
                blessed.push((example.output_at, shown));
                continue;
            }
            assert_eq!(
                without_timing(&actual),
                without_timing(&example.expected),
                "{page} line {}: `{}` prints something else than the page shows",
                example.line,
                example.args
            );
        }
        if bless_all && !blessed.is_empty() {
            bless(page, text, blessed);
        }
    }
    assert!(
        checked >= 10,
        "only {checked} examples were checked; did their format change?"
    );
}

#[test]
fn the_readme_is_at_most_25_000_bytes() {
    let bytes = std::fs::metadata(common::repo("README.md")).unwrap().len();
    assert!(
        bytes <= 25_000,
        "README.md is {bytes} bytes; move detail into a chapter of docs/book/src/"
    );
}

#[test]
fn the_summary_lists_every_chapter_and_every_chapter_it_lists_exists() {
    let listed = chapters();
    for chapter in &listed {
        assert!(
            common::repo(chapter).is_file(),
            "SUMMARY.md lists {chapter}, which does not exist"
        );
    }
    let mut unlisted = Vec::new();
    for entry in std::fs::read_dir(common::repo("docs/book/src")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let path = format!("docs/book/src/{name}");
        if name.ends_with(".md") && name != "SUMMARY.md" && !listed.contains(&path) {
            unlisted.push(path);
        }
    }
    assert!(unlisted.is_empty(), "not in SUMMARY.md: {unlisted:?}");
    assert!(common::repo("docs/book/book.toml").is_file());
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_points_to_a_file() {
    let mut broken = Vec::new();
    let mut pages = pages();
    let summary = "docs/book/src/SUMMARY.md".to_string();
    pages.push((
        summary.clone(),
        std::fs::read_to_string(common::repo(&summary)).unwrap(),
    ));
    for (page, text) in &pages {
        let folder = common::repo(page).parent().unwrap().to_path_buf();
        for link in links(text) {
            let target = link.split('#').next().unwrap_or("");
            if target.is_empty() || link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            if !folder.join(target).exists() {
                broken.push(format!("{page}: {link}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn shell_words_honour_quotes() {
    assert_eq!(
        shell_words(r#"a --b "c d" e"#),
        vec!["a", "--b", "c d", "e"]
    );
}

/// Whether `python3` can import pandas here.
fn pandas_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import pandas"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_snippets_run_against_the_committed_results() {
    // Each ```python block of the README and the book runs from the repository root (it reads
    // the committed results/); ```py blocks show code that needs outputs of a run of your own
    // and are not run. `.ci/run` installs pandas and sets RLFRONTIER_REQUIRE_PYTHON=1, so in CI
    // the snippets always run; elsewhere they are skipped when pandas is missing, and say so.
    if !pandas_available() {
        assert!(
            std::env::var("RLFRONTIER_REQUIRE_PYTHON").is_err(),
            "RLFRONTIER_REQUIRE_PYTHON is set but python3 cannot import pandas"
        );
        common::skip(
            "readme_python_snippets",
            "python3 with pandas is not available",
        );
        return;
    }
    let snippets: Vec<(String, usize, Vec<String>)> = pages()
        .into_iter()
        .flat_map(|(page, text)| {
            fenced_blocks(&text)
                .into_iter()
                .filter(|(_, info, _)| info == "python")
                .map(move |(line, _, body)| (page.clone(), line, body))
        })
        .collect();
    assert!(
        !snippets.is_empty(),
        "neither the README nor the book has a python snippet"
    );
    for (page, line, body) in snippets {
        let output = std::process::Command::new("python3")
            .arg("-c")
            .arg(body.join("\n"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{page} line {line}: the python snippet failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Every `cargo run --release -- ARGS` command in a page's code blocks, in order, with its
/// continuation lines joined and any trailing `# comment` removed (commands with `...` are
/// templates, not runnable, and are left out).
fn every_command(readme: &str) -> Vec<(usize, String)> {
    const PREFIX: &str = "cargo run --release -- ";
    let mut found = Vec::new();
    for (line, info, body) in fenced_blocks(readme) {
        if !(info == "sh" || info.is_empty()) {
            continue;
        }
        let mut k = 0;
        while k < body.len() {
            let (command, used) = command_at(&body[k..]);
            let command = command.trim_start_matches("$ ");
            if let Some(args) = command.strip_prefix(PREFIX) {
                let args = match args.find(" # ") {
                    Some(at) => &args[..at],
                    None => args,
                };
                if !args.contains("...") {
                    found.push((line + k + 1, args.trim().to_string()));
                }
            }
            k += used.max(1);
        }
    }
    found
}

#[test]
#[ignore = "slow (every README and book command again, in a clone); CI runs it: cargo test -- --include-ignored"]
fn running_every_command_of_the_readme_and_the_book_in_a_clone_leaves_git_status_clean() {
    // Issue 14: the README's and the book's commands write only where git does not look
    // (results/<grid>/ is ignored; the committed examples live in results/examples/). Runs them
    // all, in order, in a clone of the committed tree, then asks git. The pages are read from
    // the working tree, so an edit to them is checked before it is committed.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |dir: &Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
    };
    // A repository is needed to clone from (a source tarball has none).
    if !git(repo, &["rev-parse", "--git-dir"]).is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: not a git checkout");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    let cloned = git(
        repo,
        &["clone", "--quiet", "--local", ".", clone.to_str().unwrap()],
    )
    .unwrap();
    assert!(cloned.status.success(), "{cloned:?}");
    let commands: Vec<(String, usize, String)> = pages()
        .into_iter()
        .flat_map(|(page, text)| {
            every_command(&text)
                .into_iter()
                .map(move |(line, args)| (page.clone(), line, args))
        })
        .collect();
    assert!(
        commands.len() >= 10,
        "only {} commands found in the README and the book",
        commands.len()
    );
    for (page, line, args) in &commands {
        let output = common::bin()
            .current_dir(&clone)
            .args(shell_words(args))
            .output()
            .unwrap();
        // Exit 3 is an infeasible run priced on purpose; anything else must succeed.
        assert!(
            matches!(output.status.code(), Some(0 | 3)),
            "{page} line {line}: `{args}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let status = git(&clone, &["status", "--porcelain"]).unwrap();
    let dirty = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(
        dirty.is_empty(),
        "the README's or the book's commands changed tracked files or left untracked ones:\n{dirty}"
    );
}

/// The `[run]` table of the book's grid-spec chapter states each setting's default; where the
/// default is one literal (a number, `true`/`false`, a word), it must be the value
/// `RunSettings::default()` holds, so the reference cannot drift from the code.
#[test]
fn the_grid_spec_run_table_states_the_defaults_the_code_has() {
    let code = format!("{:?}", rlfrontier::config::RunSettings::default());
    let checked = check_table_defaults("`[run]`", &code, &[]);
    assert!(checked >= 15, "only {checked} defaults compared: {code}");
}

#[test]
fn the_grid_spec_hardware_and_task_tables_state_the_defaults_the_code_has() {
    let hardware = format!("{:?}", rlfrontier::config::HARDWARE_DEFAULTS);
    let checked = check_table_defaults("`[hardware]`", &hardware, &[]);
    assert_eq!(checked, 2, "{hardware}");
    // The book names the task's keys as the grid writes them; the struct's fields differ.
    let task = format!("{:?}", rlfrontier::config::Task::default());
    let aliases = [
        ("uncapped_mean_response_tokens", "mean_response_tokens"),
        ("pass_rate = { mean", "pass_rate_mean"),
        ("concentration }", "pass_rate_concentration"),
    ];
    let checked = check_table_defaults("`[task]`", &task, &aliases);
    assert!(
        checked >= 6,
        "only {checked} task defaults compared: {task}"
    );
}

/// Compares the literal defaults of one section of grid-spec.md's reference table with `code`,
/// a struct's Debug form (`aliases` map the page's key to the struct's field); panics on a
/// difference and returns how many were compared.
fn check_table_defaults(section: &str, code: &str, aliases: &[(&str, &str)]) -> usize {
    let text = std::fs::read_to_string(common::repo("docs/book/src/grid-spec.md")).unwrap();
    // `name: value` of the Debug form's top-level fields.
    let field = |name: &str| -> Option<String> {
        let at = code.find(&format!(" {name}: "))? + name.len() + 3;
        let rest = &code[at..];
        let end = rest.find([',', ' ', '}']).unwrap_or(rest.len());
        Some(rest[..end].to_string())
    };
    // An unset option reads "none", or "constant" for a length that does not change.
    let same = |doc: &str, code: &str| match (doc.parse::<f64>(), code.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ if code == "None" => matches!(doc, "none" | "constant"),
        _ => doc.eq_ignore_ascii_case(code),
    };
    let mut in_section = false;
    let mut checked = 0;
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 {
            continue;
        }
        if !cells[1].is_empty() {
            in_section = cells[1] == section;
        }
        if !in_section {
            continue;
        }
        let keys: Vec<&str> = cells[2].split(", ").map(|k| k.trim_matches('`')).collect();
        let defaults: Vec<&str> = cells[4].split(", ").collect();
        if keys.len() != defaults.len() {
            continue;
        }
        for (key, default) in keys.iter().zip(&defaults) {
            let key = aliases
                .iter()
                .find(|(page, _)| page == key)
                .map_or(*key, |(_, field)| *field);
            // "uncapped 900" states 900; a default in words is not compared.
            let literal = default.trim_start_matches("uncapped ");
            let literal = literal.split(' ').next().unwrap_or("");
            let is_literal = literal.parse::<f64>().is_ok()
                || literal.chars().all(|c| c.is_ascii_lowercase())
                    && !literal.is_empty()
                    && default.trim_start_matches("uncapped ") == literal;
            let Some(value) = field(key) else {
                continue;
            };
            if !is_literal {
                continue;
            }
            assert!(
                same(literal, &value),
                "grid-spec.md says {section} `{key}` defaults to {literal}; the code has {value}"
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_assumptions_table_states_the_catalog_s_h100_and_engine_numbers() {
    // docs/book/src/assumptions.md quotes the H100's dense peak, its efficiencies and the CUDA
    // graph engine's step floor: held to the embedded catalog, so an edit to either is seen.
    let text = std::fs::read_to_string(common::repo("docs/book/src/assumptions.md")).unwrap();
    let row = |name: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("assumptions.md has no `{name}` row"))
            .to_string()
    };
    // The number right after `label` in `line`.
    let after = |line: &str, label: &str| -> f64 {
        let at = line
            .find(label)
            .unwrap_or_else(|| panic!("`{label}` not in {line}"))
            + label.len();
        let number: String = line[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
            .filter(|c| *c != ',')
            .collect();
        number
            .parse()
            .unwrap_or_else(|_| panic!("no number after `{label}` in {line}"))
    };
    let catalog = rlfrontier::catalog::Catalog::embedded();
    let h100 = catalog.gpu("h100-sxm").unwrap();
    let engine = catalog.engine("vllm-cudagraph").unwrap();
    let efficiencies = row("efficiencies");
    for (label, value) in [
        ("train MFU", h100.train_mfu),
        ("prefill", h100.prefill_efficiency),
        ("forward", h100.forward_efficiency),
        ("decode bandwidth", h100.decode_bandwidth_efficiency),
    ] {
        assert_eq!(
            after(&efficiencies, label),
            value,
            "assumptions.md `{label}`"
        );
    }
    for id in ["b200", "gb200"] {
        assert_eq!(
            after(&efficiencies, "Blackwell decode bandwidth"),
            catalog.gpu(id).unwrap().decode_bandwidth_efficiency,
            "assumptions.md Blackwell decode bandwidth ({id})"
        );
    }
    // "…, 4 ms per decode step": the number before the unit.
    let at = efficiencies
        .find(" ms per decode step")
        .expect("the decode step floor in ms");
    let floor_ms: f64 = efficiencies[..at]
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        floor_ms / 1e3,
        engine.step_floor_seconds,
        "the decode step floor"
    );
    let peaks = row("GPU peaks, memory, bandwidth");
    assert_eq!(
        after(&peaks, "H100"),
        h100.bf16_dense_tflops,
        "the H100 peak"
    );
}

#[test]
fn the_outputs_chapter_states_the_shortlist_and_frontier_constants_the_code_has() {
    // docs/book/src/outputs.md quotes the shortlist's draws, the cells drawn, the listing
    // threshold, the regimes per budget and the allocation frontier's bin width: each phrase
    // is built from the constant and must appear, so an edit to either side is seen.
    use rlfrontier::analysis::{draws, frontier, shortlist};
    let text = std::fs::read_to_string(common::repo("docs/book/src/outputs.md")).unwrap();
    // Line breaks in the page are spaces to the reader.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    let thousands = |n: usize| {
        if n >= 1000 {
            format!("{},{:03}", n / 1000, n % 1000)
        } else {
            n.to_string()
        }
    };
    for phrase in [
        format!("{} joint draws", thousands(draws::DRAWS)),
        format!("budget's {} best-scoring cells", shortlist::DRAWN_CELLS),
        format!(
            "at least {}% to be listed",
            (shortlist::MIN_PROBABILITY_BEST * 100.0).round()
        ),
        format!("up to {} regimes", words[shortlist::MAX_PER_BUDGET]),
        format!("each {}-wide bin", frontier::UPDATE_FRACTION_BIN),
    ] {
        assert!(
            text.contains(&phrase),
            "docs/book/src/outputs.md no longer says `{phrase}`: state the code's value"
        );
    }
}

#[test]
fn the_commands_chapter_states_the_cost_defaults_cost_help_prints() {
    // docs/book/src/commands.md lists `cost`'s levers with their defaults in brackets
    // (`--gpus [8]`): every flag it names must exist, and a literal default must be the one
    // `cost --help` prints (`[default: 8]`). Defaults given in words (`[catalog]`, `[the
    // framework's]`, `[B]`) are descriptions, not values, and are only checked to exist.
    // buy-or-build.md's first paragraph names the own-cluster flags the same way.
    let paragraph_of = |file: &str, marker: &str| {
        let page = std::fs::read_to_string(common::repo(file)).unwrap();
        let start = page
            .find(marker)
            .unwrap_or_else(|| panic!("{file}: `{marker}`"));
        page[start..page[start..].find("\n\n").map_or(page.len(), |e| start + e)].to_string()
    };
    let paragraph = paragraph_of("docs/book/src/commands.md", "`cost` levers")
        + &paragraph_of("docs/book/src/buy-or-build.md", "`cost` ends with");
    let help = common::bin().args(["cost", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    // Each flag's block of help text: from its line to the next flag's.
    let block = |flag: &str| -> Option<String> {
        let lines: Vec<&str> = help.lines().collect();
        let at = lines.iter().position(|l| {
            let l = l.trim_start();
            l.starts_with(&format!("{flag} ")) || l == flag
        })?;
        let end = lines[at + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with("--") || l.trim_start().starts_with("-h"))
            .map_or(lines.len(), |e| at + 1 + e);
        Some(lines[at..end].join(" "))
    };
    let mut checked = 0;
    for quoted in paragraph.split('`').skip(1).step_by(2) {
        for flag_text in quoted.split('/') {
            let Some(flag) = flag_text.split_whitespace().next() else {
                continue;
            };
            if !flag.starts_with("--") {
                continue;
            }
            let text = block(flag)
                .unwrap_or_else(|| panic!("commands.md names `{flag}`, which `cost --help` lacks"));
            let Some(stated) = flag_text
                .split_once('[')
                .and_then(|(_, rest)| rest.strip_suffix(']'))
            else {
                continue;
            };
            let literal = stated.parse::<f64>().is_ok()
                || stated
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
                    && stated != "catalog";
            if !literal {
                continue;
            }
            let printed = text
                .split("[default: ")
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .unwrap_or_else(|| panic!("`cost --help` gives `{flag}` no default: {text}"));
            assert_eq!(
                printed.trim(),
                stated,
                "the book says `{flag} [{stated}]`, `cost --help` says [default: {printed}]"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} defaults compared");
}

#[test]
fn the_validation_chapter_s_readings_hold_in_validate_s_output() {
    // validation.md reads the direction of the ledger's errors out of `validate`; each reading
    // is a sentence of the page and a check of `validate --csv`, so a ledger change that turns
    // one around fails here instead of leaving the page wrong.
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("v.csv");
    let out = common::bin()
        .args(["validate", "--csv"])
        .arg(&csv_path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut rows: Vec<(String, String, f64, f64)> = Vec::new();
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    for record in reader.records() {
        let r = record.unwrap();
        rows.push((
            r[0].to_string(),
            r[1].to_string(),
            r[2].parse().unwrap(),
            r[4].parse().unwrap(),
        ));
    }
    let page = std::fs::read_to_string(common::repo("docs/book/src/validation.md")).unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let says = |sentence: &str| {
        assert!(
            page.contains(sentence),
            "validation.md no longer says `{sentence}`"
        )
    };
    let error = |row: &str, quantity: &str| {
        rows.iter()
            .find(|r| r.0 == row && r.1 == quantity)
            .unwrap_or_else(|| panic!("validate prices no {quantity} of {row}"))
            .3
    };
    // The long-context rows two defaults were chosen against.
    says("the three 27k-cap RLinf rows");
    let mut long_rlinf: Vec<&str> = rows
        .iter()
        .filter(|r| r.0.starts_with("rlinf") && r.0.contains("_27k_"))
        .map(|r| r.0.as_str())
        .collect();
    long_rlinf.dedup();
    assert_eq!(long_rlinf.len(), 3, "{long_rlinf:?}");
    let limitations =
        std::fs::read_to_string(common::repo("docs/book/src/limitations.md")).unwrap();
    assert!(
        limitations
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("three 27k-cap rows from one source")
    );
    // The long-context row added after the defaults were chosen, priced slow.
    says("frontier-teacher's Qwen3-4B in thinking mode at a 32k cap");
    says("It is priced slow (its line in the table above)");
    assert!(error("frontierteacher_qwen3_4b_think_32k_step1_8xh100", "step") > 0.0);
    // The mixture-of-experts steps priced fast.
    says("NeMo-RL's Qwen3-235B-A22B on GB200 and Relax's Qwen3-30B-A3B on H800");
    says("are priced fast");
    let moe_fast: Vec<&(String, String, f64, f64)> = rows
        .iter()
        .filter(|r| {
            r.1 == "step" && (r.0.contains("q235b_gb200") || r.0.starts_with("relax_q30ba3b"))
        })
        .collect();
    assert!(moe_fast.len() >= 4);
    for r in moe_fast {
        assert!(r.3 < 0.0, "{} is no longer priced fast: {}", r.0, r.3);
    }
    says("On GB200, 128 GPUs measured slower than 64 for the same batch");
    let measured = |row: &str| rows.iter().find(|r| r.0 == row && r.1 == "step").unwrap().2;
    assert!(measured("nemo06_q235b_gb200_128_on") > measured("nemo06_q235b_gb200_64_on"));
    // The engine benchmark at ten sequences and the compute-poor GPU, priced slow.
    says("The H100 row at ten sequences is priced slow");
    assert!(error("vllm23151_qwen3_30ba3b_h100_c10_2048in_1024out", "tpot") > 0.0);
    says("The update, the log-prob passes and generation all stay priced slow");
    for quantity in ["update_actor", "old_log_prob", "gen"] {
        let e = error("terrense_qwen3_8b_grpo_4xh20_8k_steps2to20", quantity);
        assert!(e > 0.0, "the H20 row's {quantity}: {e}");
    }
}

#[test]
fn the_outcome_prior_and_backtest_chapters_state_the_reference_constants_the_code_has() {
    // The prior's reference point (size, rollouts, cap, pass rate) and the settings the backtest
    // assumes where a study does not state them, built from the code's constants: an edit to
    // either side is seen.
    use rlfrontier::fit::pairs::UNSTATED_SETTINGS;
    use rlfrontier::outcome::params::{
        REFERENCE_PARAMS, REFERENCE_PASS_RATE, REFERENCE_RESPONSE_CAP, REFERENCE_ROLLOUTS,
    };
    let read = |file: &str| {
        let text = std::fs::read_to_string(common::repo(file)).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let prior = read("docs/book/src/outcome-prior.md");
    let cap = REFERENCE_RESPONSE_CAP as u64;
    let rollouts = REFERENCE_ROLLOUTS as u64;
    let size_b = REFERENCE_PARAMS / 1e9;
    for phrase in [
        format!("(max(cap, {cap})/{cap})^g"),
        format!("(min(U, U_sat)/{rollouts})^a"),
        format!("(U/{rollouts})^κ"),
        format!("K_mid({size_b:.1}B) × (N/{size_b:.1}e9)^−e"),
        format!("(max(cap, {cap})/{cap})^λ"),
        format!("(p̄/{REFERENCE_PASS_RATE})^−d"),
    ] {
        assert!(
            prior.contains(&phrase),
            "outcome-prior.md no longer says `{phrase}`: state the code's value"
        );
    }
    let (prompts, group, unstated_cap) = UNSTATED_SETTINGS;
    let phrase = format!(
        "unstated settings are {prompts} prompts × {group} at an {}k cap",
        unstated_cap / 1024.0
    );
    assert!(
        read("docs/book/src/backtest.md").contains(&phrase),
        "backtest.md no longer says `{phrase}`"
    );
}

#[test]
fn the_grid_spec_states_each_framework_s_rollout_defaults_the_code_has() {
    // grid-spec.md's [hardware] rows name the frameworks' own defaults in words; each phrase is
    // built from `Framework::profile`.
    use rlfrontier::config::Framework;
    let text = std::fs::read_to_string(common::repo("docs/book/src/grid-spec.md")).unwrap();
    let (verl, trl, openrlhf) = (
        Framework::Verl.profile(),
        Framework::Trl.profile(),
        Framework::Openrlhf.profile(),
    );
    assert_eq!(
        trl.rollout_tensor_parallel,
        openrlhf.rollout_tensor_parallel
    );
    for phrase in [
        format!(
            "veRL {}, TRL {}, OpenRLHF {}",
            verl.rollout_gpu_memory_utilization,
            trl.rollout_gpu_memory_utilization,
            openrlhf.rollout_gpu_memory_utilization
        ),
        format!("veRL {};", verl.max_num_seqs.unwrap()),
        format!(
            "veRL {}, TRL and OpenRLHF {}",
            verl.rollout_tensor_parallel, trl.rollout_tensor_parallel
        ),
    ] {
        assert!(
            text.contains(&phrase),
            "grid-spec.md no longer says `{phrase}`: state the code's value"
        );
    }
}

#[test]
fn the_import_table_states_the_defaults_the_importers_apply() {
    // price-my-run.md's import table gives each framework's default in parentheses after its key
    // (`data.train_batch_size` (1024)). The importers report the defaults they applied (the
    // settings of `cost --json` without a line); each must be the table's, and so must the
    // rollout defaults of `Framework::profile`.
    use rlfrontier::config::Framework;
    let page = std::fs::read_to_string(common::repo("docs/book/src/price-my-run.md")).unwrap();
    // The row of the table whose first cell names `flag`: its veRL and TRL cells.
    let row = |flag: &str| -> Option<(String, String)> {
        page.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
            .find(|c| c.len() >= 4 && c[1].contains(&format!("`{flag}")))
            .map(|c| (c[2].to_string(), c[3].to_string()))
    };
    // Whether `cell` gives `key` (or a dotted suffix of it) the default `value`.
    let states = |cell: &str, key: &str, value: &str| {
        cell.split('`').collect::<Vec<_>>().windows(2).any(|w| {
            key.ends_with(w[0])
                && !w[0].is_empty()
                && w[1]
                    .trim_start()
                    .strip_prefix('(')
                    .and_then(|r| r.split([')', ':']).next())
                    .is_some_and(|v| v.trim() == value)
        })
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("v.sh"),
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct trainer.total_training_steps=10\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.json"),
        r#"{"model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "max_steps": 10}"#,
    )
    .unwrap();
    let mut checked = 0;
    for (flag, file, column) in [("--from-verl", "v.sh", 0), ("--from-trl", "t.json", 1)] {
        let out = common::bin()
            .current_dir(dir.path())
            .args(["cost", flag, file, "--gpu", "h100", "--gpus", "8", "--json"])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for s in json["imported"]["settings"].as_array().unwrap() {
            let (Some(key), Some(value), true) =
                (s["key"].as_str(), s["value"].as_str(), s["line"].is_null())
            else {
                continue;
            };
            if key.contains(' ') || value.parse::<f64>().is_err() {
                continue; // a product of keys, or a default in words
            }
            let Some(cells) = row(s["flag"].as_str().unwrap()) else {
                continue;
            };
            let cell = if column == 0 { &cells.0 } else { &cells.1 };
            assert!(
                states(cell, key, value),
                "price-my-run.md: {} `{key}` defaults to {value} in the importer; the table says {cell}",
                s["flag"]
            );
            checked += 1;
        }
    }
    for (framework, column) in [(Framework::Verl, 0), (Framework::Trl, 1)] {
        let p = framework.profile();
        let mut rows = vec![
            (
                "--rollout-gpu-memory-utilization",
                p.rollout_gpu_memory_utilization.to_string(),
            ),
            (
                "--rollout-tensor-parallel",
                p.rollout_tensor_parallel.to_string(),
            ),
        ];
        if let Some(n) = p.max_num_seqs {
            rows.push(("--max-num-seqs", n.to_string()));
        }
        for (flag, value) in rows {
            let cells = row(flag).unwrap();
            let cell = if column == 0 { &cells.0 } else { &cells.1 };
            let stated = cell
                .split('(')
                .nth(1)
                .and_then(|r| r.split(')').next())
                .unwrap_or("");
            assert_eq!(stated, value, "price-my-run.md {flag} for {framework:?}");
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} defaults compared");
}

#[test]
fn the_book_s_memory_constants_context_windows_and_grid_facts_are_the_code_s() {
    // Numbers the book quotes from the code, the catalog or a bundled grid, built from their
    // source: an edit to either side is seen.
    use rlfrontier::catalog::Catalog;
    use rlfrontier::ledger::memory::{
        ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN, ADAM_MIXED_PRECISION_BYTES_PER_PARAM,
    };
    let read = |file: &str| {
        let text = std::fs::read_to_string(common::repo(file)).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let says = |file: &str, phrase: &str| {
        assert!(
            read(file).contains(phrase),
            "{file} no longer says `{phrase}`: state the code's value"
        )
    };
    says(
        "docs/book/src/assumptions.md",
        &format!("full: {ADAM_MIXED_PRECISION_BYTES_PER_PARAM} bytes/param"),
    );
    says(
        "docs/book/src/assumptions.md",
        &format!("+ {ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN}·H per token for the recomputed block"),
    );
    let catalog = Catalog::embedded();
    let model = catalog.model("qwen2.5-7b").unwrap();
    let window =
        |alias: &str| rlfrontier::format::thousands(model.alias_context_tokens[alias] as f64);
    says(
        "docs/book/src/catalog.md",
        &format!(
            "Qwen2.5-7B has {}, Qwen2.5-7B-Instruct {}, Qwen2.5-Math-7B {}",
            rlfrontier::format::thousands(model.context_tokens.unwrap() as f64),
            window("qwen2.5-7b-instruct"),
            window("qwen2.5-math-7b")
        ),
    );
    // The agent axes' ranges, and the significant digits of a table number.
    says(
        "docs/book/src/grid-spec.md",
        &format!("(1 to {}; every turn", rlfrontier::config::MAX_TURNS),
    );
    says(
        "docs/book/src/grid-spec.md",
        &format!(
            "(0 to {}; costs only",
            rlfrontier::format::thousands(rlfrontier::config::MAX_TOOL_SECONDS)
        ),
    );
    let digits = rlfrontier::format::number(1.0 / 3.0).len() - "0.".len();
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    says(
        "docs/book/src/outputs.md",
        &format!("Numbers have {} significant digits", words[digits]),
    );
    // The dollars grid as dollars.md describes it.
    let grid = rlfrontier::spec::load(std::path::Path::new("dollars"), &catalog).unwrap();
    let rlfrontier::spec::BudgetAxis::Budgets { amounts, .. } = &grid.axes.budget else {
        panic!("dollars.toml budgets in dollars");
    };
    let k = |usd: f64| {
        if usd >= 1e6 {
            format!("${}M", usd / 1e6)
        } else {
            format!("${}k", usd / 1e3)
        }
    };
    says(
        "docs/book/src/dollars.md",
        &format!(
            "{} to {} of GRPO on {} H100s",
            k(amounts[0]),
            k(*amounts.last().unwrap()),
            grid.hardware.gpus
        ),
    );
}
