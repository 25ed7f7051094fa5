//! The README's command outputs are real: every example whose output the README shows is run
//! here and must print exactly what the README says.
//!
//! Two shapes are recognised:
//! - a block whose first line is `$ cargo run --release -- ARGS` (continued with `\`), followed
//!   by the output in the same block;
//! - a ```` ```sh ```` block holding one `cargo run --release -- ARGS` command, followed directly
//!   by a plain ```` ``` ```` block holding its output.
//!
//! Commands that elide arguments (`...`) are skipped. Commands run from a temporary folder, with
//! `grids/` and `results/` paths pointing into the repository and `evidence/` linked, so an
//! example that writes a file (`calibrate-hw --out h100-mine.toml`) leaves the checkout clean.

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

#[test]
fn every_readme_example_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(common::repo("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(
        examples.len() >= 3,
        "the README's examples were not found; did their format change?"
    );
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Commands that read a default path inside the repository (`backtest` reads
    // evidence/published_results.csv and grids/race-pilot.toml) find it through a link.
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
    let bless = std::env::var_os("RLFRONTIER_BLESS").is_some();
    let mut blessed: Vec<((usize, usize), String)> = Vec::new();
    let mut checked = 0;
    for example in &examples {
        if example.args.contains("...") {
            continue;
        }
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
        let output = common::bin()
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "README line {}: `{}` failed: {}",
            example.line,
            example.args,
            String::from_utf8_lossy(&output.stderr)
        );
        let actual = String::from_utf8(output.stdout).unwrap();
        let actual = actual.replace(&dir.path().display().to_string(), ".");
        if bless {
            // Only the timing line moved: keep the README's (measured on a release build).
            let keep = without_timing(&actual) == without_timing(&example.expected);
            let text = if keep {
                example.expected.clone()
            } else {
                actual
            };
            blessed.push((example.output_at, text));
            checked += 1;
            continue;
        }
        assert_eq!(
            without_timing(&actual),
            without_timing(&example.expected),
            "README line {}: `{}` prints something else than the README shows",
            example.line,
            example.args
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} README examples were checked");
    if bless {
        // Rewrite the shown outputs from the last to the first, so earlier indices hold.
        let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
        for ((start, len), actual) in blessed.into_iter().rev() {
            let new: Vec<String> = actual
                .trim_end_matches('\n')
                .lines()
                .map(str::to_string)
                .collect();
            lines.splice(start..start + len, new);
        }
        std::fs::write(common::repo("README.md"), lines.join("\n") + "\n").unwrap();
    }
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
fn the_readmes_python_snippets_run_against_the_committed_results() {
    // Each ```python block of the README runs from the repository root (it reads the committed
    // results/); ```py blocks show code that needs outputs of a run of your own and are not run. `.ci/run` installs pandas and sets RLFRONTIER_REQUIRE_PYTHON=1, so in CI the
    // snippets always run; elsewhere they are skipped when pandas is missing, and say so.
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
    let readme = std::fs::read_to_string(common::repo("README.md")).unwrap();
    let snippets: Vec<(usize, String, Vec<String>)> = fenced_blocks(&readme)
        .into_iter()
        .filter(|(_, info, _)| info == "python")
        .collect();
    assert!(!snippets.is_empty(), "the README has no python snippet");
    for (line, _, body) in snippets {
        let output = std::process::Command::new("python3")
            .arg("-c")
            .arg(body.join("\n"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "README line {line}: the python snippet failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Every `cargo run --release -- ARGS` command in the README's code blocks, in order, with its
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
fn running_every_readme_command_in_a_clone_leaves_git_status_clean() {
    // Issue 14: the README's commands write only where git does not look (results/<grid>/ is
    // ignored; the committed examples live in results/examples/). Runs them all, in order, in
    // a clone of the committed tree, then asks git.
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
    let readme = std::fs::read_to_string(clone.join("README.md")).unwrap();
    let commands = every_command(&readme);
    assert!(
        commands.len() >= 10,
        "only {} README commands found",
        commands.len()
    );
    for (line, args) in &commands {
        let output = common::bin()
            .current_dir(&clone)
            .args(shell_words(args))
            .output()
            .unwrap();
        // Exit 3 is an infeasible run priced on purpose; anything else must succeed.
        assert!(
            matches!(output.status.code(), Some(0 | 3)),
            "README line {line}: `{args}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let status = git(&clone, &["status", "--porcelain"]).unwrap();
    let dirty = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(
        dirty.is_empty(),
        "the README's commands changed tracked files or left untracked ones:\n{dirty}"
    );
}
