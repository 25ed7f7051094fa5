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
    "open-rs",
    "deepmath",
    "ttrl",
    "tina",
    "prime-rl",
    "eurus",
    "one-shot rlvr",
    "1-shot rlvr",
    "areal",
    "limr",
];

/// Released checkpoints whose names contain a reserved study's name, allowed only in the
/// `start_model` column of `before_after.csv`: other, allowed studies start RL from them and
/// measure them themselves (no score the reserved study published is used).
const START_CHECKPOINTS: &[&str] = &[
    "deepseek-r1-distill-qwen-1.5b",
    "deepseek-r1-distill-qwen-7b",
    "deepseek-r1-distill-qwen-14b",
    "deepseek-r1-distill-qwen-32b",
    "deepseek-r1-distill-llama-8b",
    "deepseek-r1-distill-llama-70b",
];

/// The studies the evidence base may cite (a row's `source` names one of them).
const ALLOWED: &[&str] = &[
    "2510.13786",
    "2509.25300",
    "2603.12151",
    "2503.18892",
    "simplerl",
    "2607.13389",
    // Before/after pairs (before_after.csv): MiMo, Light-R1, AceReason-Nemotron, LUFFY, Qwen3,
    // Tulu 3, GFPO.
    "2505.07608",
    "2503.10460",
    "2505.16400",
    "2504.14945",
    "2505.09388",
    "2411.15124",
    "2508.09726",
    // Round 4 (research/outcome/candidates_round4.csv): INTUITOR, Co-rewarding, Archer, Logic-RL.
    "2505.19590",
    "2508.00410",
    "2507.15778",
    "2502.14768",
    // Round 5 (research/outcome/candidates_round5_{a,b,c}.csv): Magistral, RLPR, SPIRAL, SvS,
    // QeRL.
    "2506.10910",
    "2506.18254",
    "2506.24119",
    "2508.14029",
    "2510.11696",
    // Round 6 (research/outcome/candidates_round6.csv): YouronMath, the Tinker Cookbook's
    // code_rl recipe.
    "2506.08935",
    "tinker-cookbook",
];

/// Whether `name` occurs in `text` as a word of its own (not inside a longer word: "tina" in
/// "retina" is not the study).
fn mentions(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(name).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + name.len()).copied();
        let word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
        !word(before) && !word(after)
    })
}

/// `text` with the allowed start checkpoints' names blanked out of `before_after.csv`'s
/// `start_model` column (every other column keeps them, so the test still sees them there).
fn without_start_checkpoints(path: &std::path::Path, text: &str) -> String {
    if path.file_name().and_then(|n| n.to_str()) != Some("before_after.csv") {
        return text.to_string();
    }
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let start = headers.iter().position(|h| h == "start_model").unwrap();
    let mut out = headers.iter().collect::<Vec<_>>().join(",");
    for record in reader.records() {
        let record = record.unwrap();
        let fields: Vec<String> = record
            .iter()
            .enumerate()
            .map(|(k, f)| {
                if k == start && START_CHECKPOINTS.contains(&f) {
                    String::new()
                } else {
                    f.to_string()
                }
            })
            .collect();
        out.push('\n');
        out.push_str(&fields.join(","));
    }
    out
}

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
        let text = without_start_checkpoints(&path, &text);
        for name in RESERVED {
            assert!(
                !mentions(&text, name),
                "{} mentions `{name}`, a study reserved for independent validation",
                path.display()
            );
        }
    }
}

#[test]
fn every_row_names_an_allowed_source_and_its_check() {
    for file in ["published_results.csv", "before_after.csv"] {
        let path = common::repo(&format!("evidence/{file}"));
        assert!(path.exists(), "{} is missing", path.display());
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
                "{file} row {}: source `{}` is not one of the allowed studies",
                k + 2,
                row[source]
            );
            let status = &row[checked];
            assert!(
                ["yes:", "corrected:", "not checked:"]
                    .iter()
                    .any(|p| status.starts_with(p)),
                "{file} row {}: `checked` must say yes:, corrected: or not checked:, found `{status}`",
                k + 2
            );
        }
    }
}

#[test]
fn the_readme_counts_each_studys_pairs_and_timed_pairs_as_the_csv_holds_them() {
    // evidence/README.md's table: `| Name (`id`) | arXiv | pairs | kinds | with steps ... |`.
    let readme = std::fs::read_to_string(common::repo("evidence/README.md")).unwrap();
    let (header, rows) = common::read_csv(&common::repo("evidence/before_after.csv"));
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (study, steps) = (column("study"), column("steps"));
    let mut listed = 0;
    let table = readme
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("(`"));
    for line in table.filter(|l| !l.contains("| pairs |")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let id = cells[1].split('`').nth(1).unwrap();
        let pairs: usize = cells[3].parse().unwrap();
        let timed: usize = cells[5].split(' ').next().unwrap().parse().unwrap();
        let of_study: Vec<&Vec<String>> = rows.iter().filter(|r| r[study] == id).collect();
        assert_eq!(of_study.len(), pairs, "{id}: pairs");
        let with_steps = of_study.iter().filter(|r| !r[steps].is_empty()).count();
        assert_eq!(with_steps, timed, "{id}: pairs with steps");
        listed += pairs;
    }
    assert_eq!(
        listed,
        rows.len(),
        "every study of before_after.csv is in the table"
    );
    assert!(readme.contains(&format!("holds {} before/after pairs", rows.len())));
}
