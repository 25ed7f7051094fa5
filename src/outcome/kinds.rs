//! What kind of start a run has and what kind of benchmark it is scored on: the two facts about
//! a run, beyond its ledger, that the evidence shows move its outcome most (docs/design.md §6).

use crate::config::RlStart;

/// Where a run starts, as the outcome prior distinguishes it: the user's four kinds plus the
/// reference run the time scale is anchored to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StartKind {
    /// Zero RL from a pretrained base model (SimpleRL-Zoo, MiMo-7B-RL-Zero, LUFFY's zero-RL runs).
    Base,
    /// An instruct, SFT or DPO'd chat checkpoint (LUFFY on Qwen2.5-7B-Instruct, Tulu 3).
    Instruct,
    /// A reasoning checkpoint distilled from long chains of thought (AceReason, Light-R1, GFPO,
    /// MiMo-7B-SFT, Qwen3's reasoning stage).
    Distilled,
    /// A tuned checkpoint of either kind, not said which: the instruct and distilled evidence
    /// pooled.
    Tuned,
    /// ScaleRL's runs (arXiv 2510.13786, Table 1), to which K_mid itself is fitted: time factor 1
    /// by definition, the gain of the size law.
    ScaleRlReference,
}

impl StartKind {
    /// The kinds a user may pick, in the order reports list them.
    pub const USER: [StartKind; 4] = [
        StartKind::Base,
        StartKind::Instruct,
        StartKind::Distilled,
        StartKind::Tuned,
    ];

    /// The name users write in `[task] start` (`scalerl` for the reference, which they cannot).
    pub fn as_str(self) -> &'static str {
        match self {
            StartKind::Base => "base",
            StartKind::Instruct => "instruct",
            StartKind::Distilled => "distilled",
            StartKind::Tuned => "tuned",
            StartKind::ScaleRlReference => "scalerl",
        }
    }

    /// Parses a kind name (`base`, `instruct`, `distilled`, `tuned`).
    pub fn from_name(name: &str) -> Option<StartKind> {
        Self::USER.into_iter().find(|k| k.as_str() == name)
    }
}

impl From<RlStart> for StartKind {
    fn from(start: RlStart) -> Self {
        match start {
            RlStart::Base => StartKind::Base,
            RlStart::Instruct => StartKind::Instruct,
            RlStart::Distilled => StartKind::Distilled,
            RlStart::Tuned => StartKind::Tuned,
        }
    }
}

/// The kind of benchmark a score is on: competition sets (AIME, HMMT, BRUMO, LiveCodeBench,
/// Codeforces, USAMO) have items of nearly one difficulty, so their score moves steeply with
/// ability (a large logit gain for a given gain in ability), and a base model's near-zero score
/// on them mostly measures format failure rather than ability (it is read at a floor). General
/// sets (knowledge, instruction following, chat: MMLU, IFEval, PopQA, ...) test what a math or
/// code reward does not train: the evidence's runs moved them a fraction of what they moved
/// reasoning sets (Co-rewarding, INTUITOR, LUFFY, Tulu 3, Qwen3 in `evidence/before_after.csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Benchmark {
    /// Graded sets whose items span many difficulties (MATH-500, GSM8K, Minerva, GPQA, MMLU,
    /// AMC, OlympiadBench, ...) and metrics this tool does not recognise.
    #[default]
    Standard,
    /// Competition sets of nearly uniform, high difficulty.
    Competition,
    /// Knowledge, instruction-following and chat sets, which a reasoning reward does not target.
    General,
}

/// Lower-case fragments of metric names that mark a competition benchmark.
const COMPETITION_MARKERS: [&str; 8] = [
    "aime",
    "hmmt",
    "brumo",
    "usamo",
    "livecodebench",
    "lcb",
    "codeforces",
    "imo",
];

/// Lower-case fragments that mark a general benchmark, matched at the start of a word or of the
/// name with its separators removed (`Multi-IF` is `multiif`).
const GENERAL_MARKERS: [&str; 14] = [
    "mmlu",
    "ifeval",
    "multiif",
    "popqa",
    "truthfulqa",
    "drop",
    "bigbenchhard",
    "bbh",
    "bfcl",
    "livebench",
    "arenahard",
    "alpacaeval",
    "mtbench",
    "triviaqa",
];

impl Benchmark {
    /// The kind of the benchmark a metric name refers to (case-insensitive; `aime24`,
    /// `AIME25_avg@64`, `LiveCodeBench_v5` are competition sets, anything unrecognised is
    /// standard).
    pub fn of_metric(name: &str) -> Benchmark {
        let lower = name.to_ascii_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        // A marker only at the start of a word ("aime24", "lcb_v5"), never inside one
        // ("claimed", "optimo").
        let competition = COMPETITION_MARKERS
            .iter()
            .any(|m| words.iter().any(|w| w.starts_with(m)));
        let compact: String = words.concat();
        let general = GENERAL_MARKERS
            .iter()
            .any(|m| compact.starts_with(m) || words.iter().any(|w| w.starts_with(m)));
        if competition {
            Benchmark::Competition
        } else if general {
            Benchmark::General
        } else {
            Benchmark::Standard
        }
    }

    /// `standard` or `competition`.
    pub fn as_str(self) -> &'static str {
        match self {
            Benchmark::Standard => "standard",
            Benchmark::Competition => "competition",
            Benchmark::General => "general",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_classed_as_the_evidence_labels_them() {
        for name in [
            "AIME24",
            "aime25_avg@64",
            "HMMT2025_avg@64",
            "LiveCodeBench_v6_avg@8",
            "lcb_v5",
            "Codeforces",
            "BRUMO2025",
        ] {
            assert_eq!(Benchmark::of_metric(name), Benchmark::Competition, "{name}");
        }
        for name in [
            "MATH500",
            "math-500",
            "GSM8K",
            "GPQA_Diamond",
            "Minerva",
            "OlympiadBench",
            "AMC",
            "CRUXEval-O",
            "claimed", // contains "aim" but not "aime"
            "optimo",  // contains "imo" inside a word
        ] {
            assert_eq!(Benchmark::of_metric(name), Benchmark::Standard, "{name}");
        }
        for name in [
            "MMLU-Redux",
            "mmlu_pro",
            "IFEval",
            "Multi-IF",
            "PopQA",
            "TruthfulQA",
            "BigBenchHard",
            "BFCL_v3",
            "LiveBench",
            "arena_hard",
        ] {
            assert_eq!(Benchmark::of_metric(name), Benchmark::General, "{name}");
        }
    }

    #[test]
    fn every_user_start_round_trips_through_its_name() {
        for kind in StartKind::USER {
            assert_eq!(StartKind::from_name(kind.as_str()), Some(kind));
        }
        for start in crate::config::RlStart::ALL {
            assert_eq!(StartKind::from(*start).as_str(), start.as_str());
        }
    }
}
