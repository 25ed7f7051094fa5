//! Helpers shared by the CLI tests: the binary, paths in the repository, CSV reading.
//!
//! Each test file includes this module with `mod common;` and uses what it needs, so some
//! helpers are unused in some files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The real `rlfrontier` binary, built by cargo for this test run.
pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("rlfrontier").unwrap()
}

/// A path inside the repository.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A bundled grid by name: `grids/NAME.toml`.
pub fn grid(name: &str) -> PathBuf {
    repo(&format!("grids/{name}.toml"))
}

/// Header and rows of a CSV file, as strings.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (headers, rows)
}

/// Writes a file, creating its folder.
pub fn write_file(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

/// Parses stdout of a command that printed JSON.
pub fn stdout_json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// A 172,800-cell slice of `grids/big.toml` (two models, three update epochs), written into
/// `dir`: big enough for several chunks, Parquet row groups and a merge that takes a moment.
pub fn big_slice_grid(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo("grids/big.toml"))
        .unwrap()
        .replace(
            "update_epochs = [1, 2, 3, 4, 8]",
            "update_epochs = [1, 2, 3]",
        )
        .replace(
            r#"model = ["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen3-4b", "qwen3-8b"]"#,
            r#"model = ["qwen2.5-0.5b", "qwen2.5-7b"]"#,
        );
    let path = dir.join("slice.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `grids/race-pilot.toml` with `edit` applied, written into `dir` as `<name>.toml`, and planned
/// there (`plan --pilot-budget 3e17 flops --max-pilots <max_pilots> --framework <framework>`)
/// into `dir/<name>`: the plan's folder.
pub fn plan_edited_race_pilot(
    dir: &Path,
    name: &str,
    edit: impl Fn(String) -> String,
    framework: &str,
    max_pilots: &str,
) -> PathBuf {
    let text = edit(std::fs::read_to_string(grid("race-pilot")).unwrap());
    let grid_path = dir.join(format!("{name}.toml"));
    std::fs::write(&grid_path, text).unwrap();
    let out = dir.join(name);
    bin()
        .args(["plan", grid_path.to_str().unwrap()])
        .args(["--pilot-budget", "3e17 flops", "--max-pilots", max_pilots])
        .args(["--framework", framework, "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

/// Records that test `name` could not run its tool (`why`): fails when
/// `RLFRONTIER_REQUIRE_TOOLS` is set (`.ci/run` sets it, and installs every tool), else prints
/// the reason and leaves a marker under `target/test-skips/` that `.ci/run`'s summary line
/// counts, so a skip is never a silent pass.
#[allow(dead_code)] // not every test binary skips
pub fn skip(name: &str, why: &str) {
    if std::env::var_os("RLFRONTIER_REQUIRE_TOOLS").is_some() {
        panic!("{name}: {why}, and RLFRONTIER_REQUIRE_TOOLS is set: install it");
    }
    eprintln!("skipped {name}: {why}");
    let dir = repo("target/test-skips");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(name), format!("{why}\n"));
}

/// Share of pixels that are not (near) white, and the number of distinct colours seen.
pub fn ink(png_path: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buffer[..info.buffer_size()];
    let mut inked = 0usize;
    let mut colours = std::collections::BTreeSet::new();
    let total = pixels.len() / channels;
    for px in pixels.chunks(channels) {
        if px[..3.min(channels)].iter().any(|&c| c < 235) {
            inked += 1;
        }
        if colours.len() < 1000 {
            colours.insert((
                px[0] / 16,
                px.get(1).copied().unwrap_or(0) / 16,
                px.get(2).copied().unwrap_or(0) / 16,
            ));
        }
    }
    (inked as f64 / total as f64, colours.len())
}
