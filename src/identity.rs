//! The model's identity: one SHA-256 over everything that decides a number the tool computes
//! from the same inputs (the embedded catalog, the cost model's and the outcome model's source,
//! the fitted prior and the evidence it was fitted to). Two builds with the same identity give
//! the same numbers; a commit that changes none of these files keeps it, so recorded digests move
//! only when the model does.
//!
//! Every manifest, `plan.json` and `calibration.json` records it: `merge` refuses shards of two
//! models (two builds that both say 0.1.0 merged silently before), and `fit` warns when the
//! plan was made with another model (the plan stays usable).

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The files that make up the model, by path (the path is hashed with the text, so a file
/// moved between roles changes the identity too).
const MODEL_FILES: &[(&str, &str)] = &[
    ("catalog/models.toml", include_str!("catalog/models.toml")),
    ("catalog/gpus.toml", include_str!("catalog/gpus.toml")),
    ("catalog/engines.toml", include_str!("catalog/engines.toml")),
    (
        "catalog/services.toml",
        include_str!("catalog/services.toml"),
    ),
    ("catalog/apis.toml", include_str!("catalog/apis.toml")),
    (
        "catalog/base_scores.toml",
        include_str!("catalog/base_scores.toml"),
    ),
    ("config/mod.rs", include_str!("config/mod.rs")),
    ("config/framework.rs", include_str!("config/framework.rs")),
    ("ledger/accuracy.rs", include_str!("ledger/accuracy.rs")),
    (
        "../validation/loso_residuals.csv",
        include_str!("../validation/loso_residuals.csv"),
    ),
    ("ledger/agent.rs", include_str!("ledger/agent.rs")),
    ("ledger/decode/mod.rs", include_str!("ledger/decode/mod.rs")),
    ("ledger/flops.rs", include_str!("ledger/flops.rs")),
    ("ledger/lengths.rs", include_str!("ledger/lengths.rs")),
    ("ledger/memory.rs", include_str!("ledger/memory.rs")),
    ("ledger/mod.rs", include_str!("ledger/mod.rs")),
    ("ledger/offload.rs", include_str!("ledger/offload.rs")),
    ("ledger/passes.rs", include_str!("ledger/passes.rs")),
    ("ledger/residency.rs", include_str!("ledger/residency.rs")),
    ("ledger/run.rs", include_str!("ledger/run.rs")),
    ("ledger/step.rs", include_str!("ledger/step.rs")),
    ("ledger/whole_run.rs", include_str!("ledger/whole_run.rs")),
    ("ledger/supervised.rs", include_str!("ledger/supervised.rs")),
    ("ledger/time.rs", include_str!("ledger/time.rs")),
    ("outcome/ability.rs", include_str!("outcome/ability.rs")),
    ("outcome/fitted.rs", include_str!("outcome/fitted.rs")),
    ("outcome/kinds.rs", include_str!("outcome/kinds.rs")),
    ("outcome/mod.rs", include_str!("outcome/mod.rs")),
    ("outcome/params.rs", include_str!("outcome/params.rs")),
    ("outcome/prepared.rs", include_str!("outcome/prepared.rs")),
    (
        "evidence/published_results.csv",
        include_str!("../evidence/published_results.csv"),
    ),
    (
        "evidence/before_after.csv",
        include_str!("../evidence/before_after.csv"),
    ),
];

/// The model's identity: the first 16 bytes of the SHA-256, in hex.
pub fn model_identity() -> &'static str {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY.get_or_init(|| {
        let mut h = Sha256::new();
        for (path, text) in MODEL_FILES {
            h.update((path.len() as u64).to_le_bytes());
            h.update(path.as_bytes());
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        crate::format::hex(&h.finalize()[..16])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_cost_and_outcome_models_is_in_the_identity() {
        // A new file in ledger/ or outcome/ (tests aside) must be hashed too, or a change to it
        // would keep the identity.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for folder in ["ledger", "ledger/decode", "outcome"] {
            for entry in std::fs::read_dir(root.join(folder)).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                if !name.ends_with(".rs") || name == "tests.rs" || name == "reference.rs" {
                    continue;
                }
                let path = format!("{folder}/{name}");
                assert!(
                    MODEL_FILES.iter().any(|(p, _)| *p == path),
                    "{path} is not in MODEL_FILES"
                );
            }
        }
        assert_eq!(model_identity().len(), 32);
        assert_eq!(model_identity(), model_identity());
    }
}
