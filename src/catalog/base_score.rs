//! Published pre-RL scores of the checkpoints people start RL from (`base_scores.toml`): each
//! from the checkpoint's own technical report or model card, with the evaluation setting and the
//! table it is in. A grid that gives no `[task] base_score` for a model uses the score published
//! for that checkpoint on the grid's target metric (`spec`), instead of the prior's guess from
//! the model's size, and its outputs name the source.

use std::sync::OnceLock;

use serde::Deserialize;

/// The table, as bundled.
const EMBEDDED: &str = include_str!("base_scores.toml");

/// One published score of one checkpoint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedScore {
    /// The benchmark, as the table writes it (`math500`, `aime24`, `gsm8k`, `math` = full MATH).
    pub metric: String,
    /// The score, a fraction in [0, 1].
    pub score: f64,
    /// The evaluation as the source states it (shots, thinking mode, samples averaged).
    pub setting: String,
    /// The document and table.
    pub source: String,
}

/// A published score found for a grid's model: the checkpoint it belongs to and the score.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedBase {
    /// The Hugging Face checkpoint (`Qwen/Qwen3-8B`).
    pub checkpoint: String,
    /// The score and where it was published.
    pub published: PublishedScore,
}

/// One checkpoint's row of the table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Checkpoint {
    id: String,
    scores: Vec<PublishedScore>,
}

/// The table file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    checkpoint: Vec<Checkpoint>,
}

/// The bundled table, parsed once (a test checks it parses and every row is sound).
fn table() -> &'static [Checkpoint] {
    static TABLE: OnceLock<Vec<Checkpoint>> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str::<Table>(EMBEDDED)
            .map(|t| t.checkpoint)
            .unwrap_or_default()
    })
}

/// A metric's name reduced to what identifies the benchmark: lower case, letters and digits
/// only, an evaluation suffix dropped (`pass1`, `avg64`, `mean`, `acc`, ...), and a four-digit
/// AIME year written as two (`MATH-500` and `math500_pass1` are `math500`; `AIME 2024` is
/// `aime24`).
pub fn metric_key(name: &str) -> String {
    const SUFFIXES: [&str; 10] = [
        "pass1", "avg64", "avg32", "avg16", "avg8", "maj1", "mean", "accuracy", "acc", "score",
    ];
    let mut key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    while let Some(stripped) = SUFFIXES
        .iter()
        .find_map(|s| key.strip_suffix(s).filter(|rest| !rest.is_empty()))
    {
        key = stripped.to_string();
    }
    for (long, short) in [("aime2024", "aime24"), ("aime2025", "aime25")] {
        if key == long {
            key = short.to_string();
        }
    }
    key
}

/// The repository name of a checkpoint, lower case (`Qwen/Qwen3-8B-Base` → `qwen3-8b-base`):
/// how a grid's model (a catalog id or alias) names it.
fn repository(checkpoint: &str) -> String {
    checkpoint
        .rsplit('/')
        .next()
        .unwrap_or(checkpoint)
        .to_ascii_lowercase()
}

/// The published score of the checkpoint that catalog model `model_id` names (its id or alias,
/// or the Hugging Face id: the checkpoint's repository name) on `metric`, when its owner published one: the first listed
/// for that metric (see the table's header).
pub fn published(model_id: &str, metric: &str) -> Option<PublishedBase> {
    let (model, metric) = (repository(model_id), metric_key(metric));
    let checkpoint = table().iter().find(|c| repository(&c.id) == model)?;
    let published = checkpoint
        .scores
        .iter()
        .find(|s| metric_key(&s.metric) == metric)?;
    Some(PublishedBase {
        checkpoint: checkpoint.id.clone(),
        published: published.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_table_parses_and_every_row_is_sound() {
        let parsed: Table = toml::from_str(EMBEDDED).expect("base_scores.toml parses");
        assert!(parsed.checkpoint.len() >= 30);
        let catalog = crate::catalog::Catalog::embedded();
        let mut seen = std::collections::BTreeSet::new();
        for c in &parsed.checkpoint {
            // Every checkpoint is one the catalog prices (its id or an alias of the same shape).
            assert!(
                catalog.model(&repository(&c.id)).is_ok(),
                "{} is not in the catalog",
                c.id
            );
            for s in &c.scores {
                assert!((0.0..=1.0).contains(&s.score), "{} {}", c.id, s.metric);
                assert!(!s.source.is_empty() && !s.setting.is_empty());
                assert!(
                    seen.insert((c.id.clone(), s.metric.clone(), s.setting.clone())),
                    "{} lists {} ({}) twice",
                    c.id,
                    s.metric,
                    s.setting
                );
            }
        }
    }

    #[test]
    fn metric_names_reduce_to_their_benchmark() {
        for (name, key) in [
            ("math500_pass1", "math500"),
            ("MATH-500", "math500"),
            ("math_500", "math500"),
            ("AIME 2024", "aime24"),
            ("aime24_avg64", "aime24"),
            ("gpqa_diamond", "gpqadiamond"),
            ("math", "math"),
            ("gsm8k_acc", "gsm8k"),
        ] {
            assert_eq!(metric_key(name), key, "{name}");
        }
    }

    #[test]
    fn qwen3_8b_on_math500_is_its_report_s_non_thinking_score() {
        // Qwen3 Technical Report (arXiv 2505.09388) Table 18: Qwen3-8B non-thinking MATH-500
        // 87.4; Table 17 (thinking) 97.4 is listed after it and not used by default.
        let p = published("qwen3-8b", "math500_pass1").unwrap();
        assert_eq!(p.checkpoint, "Qwen/Qwen3-8B");
        assert_eq!(p.published.score, 0.874);
        assert_eq!(p.published.setting, "non-thinking");
        assert!(p.published.source.contains("2505.09388"));
        // The base checkpoint is another: its report gives full MATH (4-shot), not MATH-500.
        assert!(published("qwen3-8b-base", "math500").is_none());
        assert_eq!(
            published("qwen3-8b-base", "math").unwrap().published.score,
            0.608
        );
        // A model nobody published a score for on the metric.
        assert!(published("qwen2.5-7b", "math500").is_none());
    }
}
