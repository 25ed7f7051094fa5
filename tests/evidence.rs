//! The evidence base (`evidence/`) holds only the studies the outcome model may be fitted to, and
//! every row says where it comes from and whether it was checked against that source.
//!
//! The studies reserved for independent validation must never enter it: the test searches every
//! file under `evidence/` for their names (case-insensitive) and fails on any mention.

mod common;

/// Names (lower case) of the studies reserved for independent validation.
const RESERVED: &[&str] = &[
    "open-reasoner",
    "deepscaler",
    "skywork-or1",
    "justrl",
    "oat-zero",
    "dr. grpo",
    "dr.grpo",
    "dapo",
    "polaris",
    "prorl",
    "deepseek-r1",
];

/// The studies the evidence base may cite (a row's `source` names one of them).
const ALLOWED: &[&str] = &[
    "2510.13786",
    "2509.25300",
    "2603.12151",
    "2503.18892",
    "simplerl",
    "2607.13389",
];

fn evidence_files() -> Vec<std::path::PathBuf> {
    let dir = common::repo("evidence");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn no_reserved_study_is_named_in_the_evidence_base() {
    for path in evidence_files() {
        let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
        for name in RESERVED {
            assert!(
                !text.contains(name),
                "{} mentions `{name}`, a study reserved for independent validation",
                path.display()
            );
        }
    }
}

#[test]
fn every_row_names_an_allowed_source_and_its_check() {
    let path = common::repo("evidence/published_results.csv");
    if !path.exists() {
        return;
    }
    let (header, rows) = common::read_csv(&path);
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{} has no `{name}` column", path.display()))
    };
    let (source, checked) = (column("source"), column("checked"));
    assert!(!rows.is_empty());
    for (k, row) in rows.iter().enumerate() {
        let cited = row[source].to_lowercase();
        assert!(
            ALLOWED.iter().any(|a| cited.contains(a)),
            "row {}: source `{}` is not one of the allowed studies",
            k + 2,
            row[source]
        );
        let status = &row[checked];
        assert!(
            ["yes:", "corrected:", "not checked:"]
                .iter()
                .any(|p| status.starts_with(p)),
            "row {}: `checked` must say yes:, corrected: or not checked:, found `{status}`",
            k + 2
        );
    }
}
