//! The framework versions the pilot scripts and the importers target, read from
//! `frameworks/versions.toml` (the same file pins the packages CI runs the generated scripts
//! on, `frameworks/test.sh`): a script says which release it was written for, and `plan.json`
//! records it.

use serde::Deserialize;

use super::launch::Framework;

/// `frameworks/versions.toml`, embedded.
pub const VERSIONS_TOML: &str = include_str!("../../frameworks/versions.toml");

/// One framework's entry.
#[derive(Debug, Clone, Deserialize)]
pub struct FrameworkTarget {
    /// The release line the scripts are written for (`1.16`).
    pub target: String,
    /// The pinned PyPI requirements CI tests the scripts with.
    pub packages: Vec<String>,
}

impl FrameworkTarget {
    /// The exact version CI tests, from the framework's own pin (`trl==1.16.0` → `1.16.0`).
    pub fn tested(&self, package: &str) -> &str {
        self.packages
            .iter()
            .find_map(|p| p.strip_prefix(package)?.strip_prefix("=="))
            .unwrap_or(&self.target)
    }
}

#[derive(Deserialize)]
struct Versions {
    trl: FrameworkTarget,
    verl: FrameworkTarget,
}

/// The entry of `framework`.
pub fn target(framework: Framework) -> FrameworkTarget {
    let v: Versions =
        toml::from_str(VERSIONS_TOML).expect("frameworks/versions.toml is checked by its test");
    match framework {
        Framework::Trl => v.trl,
        Framework::Verl => v.verl,
    }
}

/// `veRL 0.9 (tested with verl==0.9.1)`: what a script's header and `plan.json` say.
pub fn describe(framework: Framework) -> String {
    let t = target(framework);
    let (name, package) = match framework {
        Framework::Trl => ("TRL", "trl"),
        Framework::Verl => ("veRL", "verl"),
    };
    format!(
        "{name} {} (tested with {package}=={})",
        t.target,
        t.tested(package)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_framework_has_a_target_and_a_pinned_package() {
        assert_eq!(
            describe(Framework::Trl),
            "TRL 1.16 (tested with trl==1.16.0)"
        );
        assert_eq!(
            describe(Framework::Verl),
            "veRL 0.9 (tested with verl==0.9.1)"
        );
        for f in [Framework::Trl, Framework::Verl] {
            let t = target(f);
            assert!(
                t.packages.iter().all(|p| p.contains("==")),
                "{:?}",
                t.packages
            );
        }
    }
}
