//! One validator per setting (issue 52): every setting the run description declares
//! (`rlfrontier::config::setting::SETTINGS`) refuses the same bad value with the same message
//! whether it came through a grid file (`check`) or a `cost` flag; only the location differs
//! (`g.toml:LINE: table.key:` against `--flag:`). The Python door is the flag door with the
//! setting named as its keyword (python/tests). The value just outside each end of the range is
//! tried on both doors.

use std::path::Path;
use std::process::Command;

use rlfrontier::config::setting::{Range, SETTINGS, SettingDef};

mod common;

const GRID: &str = include_str!("../grids/race-pilot.toml");

/// Values just outside the setting's range, as text.
fn bad_values(def: &SettingDef) -> Vec<String> {
    match def.range {
        Range::Count { min, max } => {
            let mut values = vec![(max + 1).to_string()];
            if min > 0 {
                values.push((min - 1).to_string());
            }
            values
        }
        Range::NonNegative => vec!["-0.5".into()],
        Range::Between { min, max, .. } => {
            vec![format!("{}", min - 0.5), format!("{}", max * 2.0 + 1.0)]
        }
        Range::Positive { max, .. } => vec!["0".into(), format!("{}", max * 2.0)],
        Range::Fraction { one_allowed } => {
            let mut values = vec!["0".into(), "1.5".into()];
            if !one_allowed {
                values.push("1".into());
            }
            values
        }
    }
}

/// race-pilot's grid with the setting at `value`: `key = value` under its table (replacing the
/// key if it is there); the pass-rate concentration inside `[task] pass_rate = { ... }`.
fn grid_with(def: &SettingDef, value: &str) -> String {
    if def.name == "pass_rate_concentration" {
        return GRID.replace(
            "pass_rate = { mean = 0.35, concentration = 2.0 }",
            &format!("pass_rate = {{ mean = 0.35, concentration = {value} }}"),
        );
    }
    let (key, table) = (def.name, format!("[{}]", def.table.name()));
    let mut lines: Vec<String> = GRID
        .lines()
        .filter(|l| !l.starts_with(&format!("{key} =")))
        .map(str::to_string)
        .collect();
    match lines.iter().position(|l| *l == table) {
        Some(at) => lines.insert(at + 1, format!("{key} = {value}")),
        None => {
            lines.push(table);
            lines.push(format!("{key} = {value}"));
        }
    }
    lines.join("\n") + "\n"
}

/// The message of a one-line error after its location prefix.
fn message_after(stderr: &str, prefix: &str) -> Option<String> {
    let line = stderr.lines().next()?;
    let at = line.find(prefix)?;
    Some(line[at + prefix.len()..].to_string())
}

#[test]
fn every_setting_refuses_a_bad_value_alike_in_a_grid_and_as_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let grid_path = dir.path().join("g.toml");
    let mut compared = 0;
    for def in SETTINGS {
        let field = match def.name {
            "pass_rate_concentration" => "task.pass_rate.concentration".to_string(),
            name => format!("{}.{name}", def.table.name()),
        };
        let flag = format!("--{}", def.name.replace('_', "-"));
        for value in bad_values(def) {
            std::fs::write(&grid_path, grid_with(def, &value)).unwrap();
            let grid = run(dir.path(), &["check", "g.toml"]);
            let cost = run(
                dir.path(),
                &[
                    "cost",
                    "--model",
                    "qwen2.5-7b",
                    "--steps",
                    "10",
                    &format!("{flag}={value}"),
                ],
            );
            assert_eq!(
                grid.0,
                Some(2),
                "{} = {value} in a grid: {}",
                def.name,
                grid.1
            );
            assert_eq!(cost.0, Some(2), "{flag}={value}: {}", cost.1);
            let from_grid = message_after(&grid.1, &format!("{field}: "))
                .unwrap_or_else(|| panic!("{field} not named: {}", grid.1));
            let from_flag = message_after(&cost.1, &format!("{flag}: "))
                .unwrap_or_else(|| panic!("{flag} not named: {}", cost.1));
            assert_eq!(from_grid, from_flag, "{} = {value}", def.name);
            compared += 1;
        }
    }
    // Every setting tried at least once (43 values over 25 settings on 2026-12-07, 59 over 37
    // with the agent's).
    assert!(
        compared >= SETTINGS.len() && SETTINGS.len() >= 20,
        "{compared}"
    );
}

/// (exit code, stderr) of the binary run in `dir`.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_rlfrontier"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
