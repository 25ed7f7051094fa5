//! The catalog: model architectures and GPU profiles, embedded from TOML data files.
//!
//! The embedded files (`models.toml`, `gpus.toml` beside this module) carry a source and a date
//! for every entry. A user's file (`--catalog FILE`) is merged over them: an entry with a known id
//! overrides only the fields it sets (so a calibrated GPU profile can change two efficiencies and
//! keep the rest), an entry with a new id is added.

mod api;
pub mod base_score;
mod engine;
mod gpu;
pub mod import;
pub mod listing;
mod model;
mod service;

pub use api::ApiSpec;
pub use engine::EngineSpec;
pub use gpu::GpuSpec;
pub use model::{BF16_BYTES, ModelSpec};
pub use service::ServiceSpec;

use std::path::Path;

use crate::error::{Error, Result, suggestion};
use crate::toml_text::toml_error;

/// The embedded model catalog (TOML).
pub const MODELS_TOML: &str = include_str!("models.toml");
/// The embedded GPU catalog (TOML).
pub const GPUS_TOML: &str = include_str!("gpus.toml");
/// The embedded services catalog (TOML).
pub const SERVICES_TOML: &str = include_str!("services.toml");
/// The embedded rollout-engine catalog (TOML).
pub const ENGINES_TOML: &str = include_str!("engines.toml");
/// The embedded API price list (TOML).
pub const APIS_TOML: &str = include_str!("apis.toml");

/// "did you mean `qwen3-8b` or `qwen3-8b-base`?": the catalog names of the wanted name's
/// family (its first dash-separated word, `qwen3` in `qwen3-8b-instruct`) sharing the most of
/// its other words, when they share one at least (the size, `8b`); None otherwise. Edit
/// distance alone suggested `qwen2-7b-instruct` for `qwen3-8b-instruct`.
fn same_family_and_size<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let words: std::collections::BTreeSet<&str> = wanted.split('-').collect();
    let family = wanted.split('-').next().unwrap_or(wanted);
    let mut best: (usize, Vec<&str>) = (1, Vec::new());
    for name in names.filter(|n| n.split('-').next() == Some(family)) {
        let shared = name.split('-').filter(|w| words.contains(w)).count();
        if shared > best.0 {
            best = (shared, vec![name]);
        } else if shared == best.0 && shared > 1 && !best.1.contains(&name) {
            best.1.push(name);
        }
    }
    let found: Vec<String> = best.1.iter().take(3).map(|n| format!("`{n}`")).collect();
    (!found.is_empty()).then(|| format!("did you mean {}?", found.join(" or ")))
}

/// The id of a model read from `config` (a checkpoint's config.json): the last part of its
/// `_name_or_path` when it names one, else the checkpoint folder's name.
fn checkpoint_id(config: &Path) -> String {
    let named = crate::input::read_text(config, crate::input::MAX_CONFIG_BYTES, "a config.json")
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| {
            v.get("_name_or_path")
                .and_then(|n| n.as_str())
                .map(str::to_string)
        })
        .and_then(|n| {
            n.trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|last| !last.is_empty())
                .map(str::to_string)
        });
    let folder = config
        .parent()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned());
    named
        .or(folder)
        .unwrap_or_else(|| "model".to_string())
        .to_ascii_lowercase()
}

/// The engine a run uses when nothing names one: vLLM with CUDA graphs, the default of current
/// RL frameworks' rollouts.
pub const DEFAULT_ENGINE: &str = "vllm-cudagraph";

/// Models and GPUs known to a run: the embedded catalog, possibly merged with a user's file.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Models, in file order.
    pub models: Vec<ModelSpec>,
    /// GPUs, in file order.
    pub gpus: Vec<GpuSpec>,
    /// Services, in file order.
    pub services: Vec<ServiceSpec>,
    /// Rollout engines, in file order.
    pub engines: Vec<EngineSpec>,
    /// API-priced judges, in file order.
    pub apis: Vec<ApiSpec>,
    /// Version string: the embedded catalog's, plus `+FILE` when a user file was merged.
    pub version: String,
}

impl Catalog {
    /// SHA-256 of every entry (models, GPUs, services, engines, as JSON): two runs priced with
    /// the same numbers have the same hash, whatever file the numbers came from.
    pub fn sha256(&self) -> String {
        use sha2::Digest;
        let value = serde_json::json!({
            "models": self.models,
            "gpus": self.gpus,
            "services": self.services,
            "engines": self.engines,
            "apis": self.apis,
        });
        let text = serde_json::to_string(&value).expect("catalog entries serialise");
        crate::format::hex(&sha2::Sha256::digest(text.as_bytes()))
    }

    /// The catalog compiled into the binary.
    pub fn embedded() -> Self {
        Self::load(None).expect("the embedded catalog is valid (checked by unit tests)")
    }

    /// The embedded catalog, merged with `user_file` when one is given.
    pub fn load(user_file: Option<&Path>) -> Result<Self> {
        Self::load_files(user_file.as_slice())
    }

    /// The embedded catalog merged with each user file in turn (a later file's entry overrides
    /// the fields it sets of an earlier one's, as a file does the embedded entries).
    pub fn load_files(user_files: &[&Path]) -> Result<Self> {
        let texts: Vec<(&Path, String)> = user_files
            .iter()
            .map(|path| {
                crate::input::read_text(path, crate::input::MAX_CONFIG_BYTES, "a catalog")
                    .map(|text| (*path, text))
            })
            .collect::<Result<_>>()?;
        let users: Vec<(&Path, &str)> = texts.iter().map(|(p, t)| (*p, t.as_str())).collect();
        Self::load_texts(&users)
    }

    /// The embedded catalog merged with a user catalog's text (`path` names it in messages).
    pub fn load_text(user: Option<(&Path, &str)>) -> Result<Self> {
        Self::load_texts(user.as_slice())
    }

    /// The embedded catalog merged with user catalogs' texts, in order.
    pub fn load_texts(users: &[(&Path, &str)]) -> Result<Self> {
        let embedded_models = Path::new("<embedded models.toml>");
        let embedded_gpus = Path::new("<embedded gpus.toml>");
        let mut model_tables = entries(MODELS_TOML, "model", embedded_models)?;
        let mut gpu_tables = entries(GPUS_TOML, "gpu", embedded_gpus)?;
        let mut service_tables = entries(
            SERVICES_TOML,
            "service",
            Path::new("<embedded services.toml>"),
        )?;
        let mut engine_tables =
            entries(ENGINES_TOML, "engine", Path::new("<embedded engines.toml>"))?;
        let mut api_tables = entries(APIS_TOML, "api", Path::new("<embedded apis.toml>"))?;
        let version = version_of(MODELS_TOML);
        let mut full_version = version.clone();
        for &(path, text) in users {
            let table: toml::Table =
                toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
            for key in table.keys() {
                if !SECTIONS.contains(&key.as_str()) {
                    return Err(Error::in_file(
                        path,
                        crate::toml_text::locate_key(text, None, key),
                        key,
                        format!("unknown catalog section; {}", suggestion(key, SECTIONS)),
                    ));
                }
            }
            merge_entries(&mut model_tables, entries(text, "model", path)?, path)?;
            merge_entries(&mut gpu_tables, entries(text, "gpu", path)?, path)?;
            merge_entries(&mut service_tables, entries(text, "service", path)?, path)?;
            merge_entries(&mut engine_tables, entries(text, "engine", path)?, path)?;
            merge_entries(&mut api_tables, entries(text, "api", path)?, path)?;
            full_version.push_str(&format!("+{}", path.display()));
        }
        let models = parse_entries(model_tables, "model", ModelSpec::validate)?;
        let gpus = parse_entries(gpu_tables, "gpu", GpuSpec::validate)?;
        let services = parse_entries(service_tables, "service", ServiceSpec::validate)?;
        let engines = parse_entries(engine_tables, "engine", EngineSpec::validate)?;
        let apis = parse_entries(api_tables, "api", ApiSpec::validate)?;
        Ok(Catalog {
            models,
            gpus,
            services,
            engines,
            apis,
            version: full_version,
        })
    }

    /// The API-priced judge with this id (any case), or an error suggesting the nearest id.
    pub fn api(&self, id: &str) -> std::result::Result<&ApiSpec, String> {
        self.apis
            .iter()
            .find(|a| a.id.eq_ignore_ascii_case(id.trim()))
            .ok_or_else(|| {
                format!(
                    "unknown API `{id}`; {} (see `rlfrontier catalog apis`; add one with ⟨catalog⟩)",
                    suggestion(id, self.apis.iter().map(|a| a.id.as_str()))
                )
            })
    }

    /// The model with this id, or an error suggesting the nearest id. Ids match without regard
    /// to case; a Hugging Face repository (`Qwen/Qwen2.5-7B`) matches the entry of that name,
    /// and an alias (`qwen2.5-7b-instruct`, a model of the same shape) its entry.
    pub fn model(&self, id: &str) -> std::result::Result<&ModelSpec, String> {
        let wanted = id.trim().to_ascii_lowercase();
        let bare = wanted.rsplit('/').next().unwrap_or(&wanted).to_string();
        let found = self
            .models
            .iter()
            .find(|m| m.id == wanted)
            .or_else(|| {
                self.models
                    .iter()
                    .find(|m| m.name.eq_ignore_ascii_case(id.trim()))
            })
            .or_else(|| self.models.iter().find(|m| m.id == bare))
            .or_else(|| {
                self.models
                    .iter()
                    .find(|m| m.aliases.iter().any(|a| a.eq_ignore_ascii_case(&bare)))
            });
        found.ok_or_else(|| {
            let names = self
                .models
                .iter()
                .flat_map(|m| std::iter::once(m.id.as_str()).chain(m.aliases.iter().map(String::as_str)));
            let nearest = same_family_and_size(&bare, names.clone())
                .unwrap_or_else(|| suggestion(&bare, names));
            format!(
                "unknown model `{id}`; {nearest} (see `rlfrontier catalog models`); a model outside the catalog: give its config.json or checkpoint folder (⟨model⟩ path/to/config.json), or write an entry with `rlfrontier import-model CONFIG.json` and pass it with ⟨catalog⟩"
            )
        })
    }

    /// A policy or reward model as a user names it: a catalog id, Hugging Face id or alias (the
    /// entry keeps the alias as its id, so `Qwen/Qwen2.5-Math-7B` is shown as
    /// `qwen2.5-math-7b`, not as the entry it shares a shape with), a `config.json` path, or a
    /// checkpoint folder holding one (the shape read as `import-model` reads it, the id the
    /// config's `_name_or_path` or the folder's name).
    pub fn resolve_model(&self, text: &str) -> std::result::Result<ModelSpec, String> {
        let path = Path::new(text.trim());
        let config = if path.is_dir() {
            Some(path.join("config.json"))
        } else if path.extension().is_some_and(|e| e == "json") {
            Some(path.to_path_buf())
        } else {
            None
        };
        let Some(config) = config else {
            let looks_like_a_path = ["/", "./", "../", "~"]
                .iter()
                .any(|p| text.trim().starts_with(p));
            if looks_like_a_path {
                return Err(format!(
                    "{} does not exist: give a checkpoint folder holding the model's config.json, its path, or a catalog id",
                    path.display()
                ));
            }
            return self.model_with_its_name(text);
        };
        if !config.is_file() {
            return Err(format!(
                "{} has no config.json: give a checkpoint folder holding the model's config.json, its path, or a catalog id",
                path.display()
            ));
        }
        let id = checkpoint_id(&config);
        import::model_from_config(&config, &id, &id).map_err(|e| e.to_string())
    }

    /// [`Catalog::model`], with the entry's id replaced by the alias the user named it by.
    fn model_with_its_name(&self, text: &str) -> std::result::Result<ModelSpec, String> {
        let found = self.model(text)?;
        let bare = text
            .trim()
            .rsplit('/')
            .next()
            .unwrap_or(text)
            .to_ascii_lowercase();
        let mut model = found.clone();
        if let Some(alias) = found.aliases.iter().find(|a| a.eq_ignore_ascii_case(&bare)) {
            // The entry's own id becomes one of the model's aliases: what matches the entry
            // (a service that trains it) still matches.
            model.id = alias.to_ascii_lowercase();
            model.aliases.push(found.id.clone());
            if let Some((_, &context)) = found
                .alias_context_tokens
                .iter()
                .find(|(a, _)| a.eq_ignore_ascii_case(alias))
            {
                model.context_tokens = Some(context);
            }
        }
        Ok(model)
    }

    /// The rollout engine with this id, or an error suggesting the nearest id.
    pub fn engine(&self, id: &str) -> std::result::Result<&EngineSpec, String> {
        let wanted = id.trim().to_ascii_lowercase();
        self.engines.iter().find(|e| e.id == wanted).ok_or_else(|| {
            format!(
                "unknown engine `{id}`; {} (see `rlfrontier catalog engines`)",
                suggestion(id, self.engines.iter().map(|e| e.id.as_str()))
            )
        })
    }

    /// The engine runs use when none is named ([`DEFAULT_ENGINE`]).
    pub fn default_engine(&self) -> &EngineSpec {
        self.engine(DEFAULT_ENGINE)
            .expect("the embedded catalog has the default engine (checked by unit tests)")
    }

    /// The GPU with this id, or an error suggesting the nearest id.
    pub fn gpu(&self, id: &str) -> std::result::Result<&GpuSpec, String> {
        let key = gpu_key(id);
        if let Some(g) = self.gpus.iter().find(|g| gpu_key(&g.id) == key) {
            return Ok(g);
        }
        match GPU_ALIASES.iter().find(|(alias, _)| *alias == key) {
            Some((_, GpuAlias::Is(target))) => {
                if let Some(g) = self.gpus.iter().find(|g| g.id == *target) {
                    return Ok(g);
                }
            }
            Some((_, GpuAlias::Distinct(what))) => {
                return Err(format!(
                    "`{id}` is {what}, which is not in the catalog; add it with ⟨catalog⟩ (a [[gpu]] entry: see `rlfrontier catalog gpus` for the fields)"
                ));
            }
            None => {}
        }
        Err(format!(
            "unknown GPU `{id}`; {} (see `rlfrontier catalog gpus`; a suggestion may be a different GPU: check its memory and bandwidth there)",
            suggestion(id, self.gpus.iter().map(|g| g.id.as_str()))
        ))
    }
}

/// A GPU name as users type it, reduced for comparison: lowercase, without spaces, `-`, `_` or
/// `/`, and without a leading vendor name (`NVIDIA H100 SXM` → `h100sxm`).
fn gpu_key(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    let lower = ["nvidia", "amd", "instinct"]
        .iter()
        .fold(lower, |s, vendor| s.replace(vendor, ""));
    lower
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '/'))
        .collect()
}

/// What a GPU name users type refers to.
enum GpuAlias {
    /// This catalog GPU.
    Is(&'static str),
    /// A different GPU than any in the catalog (named so that no near id is taken for it).
    Distinct(&'static str),
}

/// Names users type for catalog GPUs, and look-alike names of GPUs that are not in it (reduced
/// by [`gpu_key`]). The H100's common form is the SXM5 board; the PCIe and NVL boards have other
/// bandwidth and power and are their own GPUs.
const GPU_ALIASES: [(&str, GpuAlias); 18] = [
    ("h100", GpuAlias::Is("h100-sxm")),
    ("h100sxm5", GpuAlias::Is("h100-sxm")),
    ("h10080gb", GpuAlias::Is("h100-sxm")),
    ("h100sxm80gb", GpuAlias::Is("h100-sxm")),
    ("h100sxm580gb", GpuAlias::Is("h100-sxm")),
    ("a100", GpuAlias::Is("a100-80gb")),
    ("a100sxm", GpuAlias::Is("a100-80gb")),
    ("a100sxm480gb", GpuAlias::Is("a100-80gb")),
    ("h200sxm", GpuAlias::Is("h200")),
    ("h200141gb", GpuAlias::Is("h200")),
    (
        "h100pcie",
        GpuAlias::Distinct("the PCIe H100 (2.0 TB/s, 350 W; not the SXM h100-sxm)"),
    ),
    (
        "h100nvl",
        GpuAlias::Distinct("the H100 NVL (94 GB; not the SXM h100-sxm)"),
    ),
    (
        "a10040gb",
        GpuAlias::Distinct("the 40 GB A100 (not a100-80gb)"),
    ),
    (
        "a100sxm440gb",
        GpuAlias::Distinct("the 40 GB A100 (not a100-80gb)"),
    ),
    (
        "gh200",
        GpuAlias::Distinct("the Grace Hopper GH200 superchip (not the h200)"),
    ),
    ("l40", GpuAlias::Distinct("the L40 (not the l40s)")),
    ("rtx4090", GpuAlias::Distinct("the RTX 4090")),
    ("a10g", GpuAlias::Distinct("the A10G")),
];

fn version_of(text: &str) -> String {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| {
            t.get("version")
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// The sections a catalog file may have.
const SECTIONS: [&str; 6] = ["model", "gpu", "service", "engine", "api", "version"];

type Entries = Vec<(std::path::PathBuf, toml::Table)>;

/// The fields every entry of a section must have (the rest have defaults).
fn required_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "model" => &[
            "id",
            "name",
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "head_dim",
            "intermediate",
            "vocab",
            "tied_embeddings",
            "published_params",
            "source",
            "date",
        ],
        _ => &[],
    }
}

/// Deserialises and validates every entry of one section. Every missing required field is named
/// at once, so a new entry takes one round of fixes, not one per field.
fn parse_entries<T: serde::de::DeserializeOwned>(
    tables: Entries,
    kind: &str,
    validate: fn(&T, &Path) -> Result<()>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for (origin, table) in tables {
        let missing: Vec<&str> = required_fields(kind)
            .iter()
            .copied()
            .filter(|f| !table.contains_key(*f))
            .collect();
        if !missing.is_empty() {
            let id = table.get("id").and_then(|v| v.as_str()).unwrap_or("?");
            return Err(Error::in_file(
                &origin,
                None,
                &format!("{kind} `{id}`"),
                format!(
                    "missing {}: add them (a model's shape is in its config.json: num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim or hidden_size / heads, intermediate_size, vocab_size, tie_word_embeddings)",
                    missing.join(", ")
                ),
            ));
        }
        let entry: T = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                Error::in_file(&origin, None, kind, e.message().to_string())
            })?;
        validate(&entry, &origin)?;
        out.push(entry);
    }
    Ok(out)
}

fn entries(text: &str, key: &str, origin: &Path) -> Result<Entries> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(origin, text, &e))?;
    let Some(value) = table.get(key) else {
        return Ok(Vec::new());
    };
    let Some(array) = value.as_array() else {
        return Err(Error::in_file(
            origin,
            None,
            key,
            format!("must be an array of tables: write [[{key}]]"),
        ));
    };
    let mut out = Vec::new();
    for item in array {
        let Some(entry) = item.as_table() else {
            return Err(Error::in_file(
                origin,
                None,
                key,
                format!("must be an array of tables: write [[{key}]]"),
            ));
        };
        if !entry.get("id").is_some_and(|v| v.is_str()) {
            return Err(Error::in_file(
                origin,
                None,
                &format!("{key}.id"),
                "every entry needs a string `id`",
            ));
        }
        out.push((origin.to_path_buf(), entry.clone()));
    }
    Ok(out)
}

/// Whether `id` may be a catalog id: 1-128 lowercase letters, digits, `.`, `-` or `_`, starting
/// with a letter or a digit. Ids name output columns, files and plot labels, so nothing a shell,
/// a spreadsheet (`=`, `+`, `-`, `@`) or Markdown would read as code gets in.
pub fn is_valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_')
        })
}

/// The message for an id [`is_valid_id`] refuses.
pub fn invalid_id_message(id: &str) -> String {
    format!(
        "`{}` is not a catalog id: use lowercase letters, digits, `.`, `-` and `_`, starting with a letter or digit, at most 128 characters",
        id.escape_default()
    )
}

/// Keys a user's catalog may still spell by an older name: (old, new). An entry's old key is
/// read as the new one (the new one wins when both are given), so an override merges over the
/// embedded entry's field instead of beside it.
const RENAMED_KEYS: &[(&str, &str)] = &[
    // GPU memory was named `memory_gb` while it held the same (binary) number: see
    // `GpuSpec::memory_gib`.
    ("memory_gb", "memory_gib"),
];

fn merge_entries(base: &mut Entries, user: Entries, path: &Path) -> Result<()> {
    // Position of each id in `base`: one lookup per user entry (a catalog of 40,000 entries
    // merges in linear time).
    let mut index: std::collections::HashMap<String, usize> = base
        .iter()
        .enumerate()
        .filter_map(|(k, (_, t))| t["id"].as_str().map(|id| (id.to_string(), k)))
        .collect();
    for (origin, mut table) in user {
        for (old, new) in RENAMED_KEYS {
            if let Some(value) = table.remove(*old) {
                table.entry(*new).or_insert(value);
            }
        }
        let id = table["id"].as_str().unwrap_or_default().to_string();
        if !is_valid_id(&id) {
            return Err(Error::in_file(path, None, "id", invalid_id_message(&id)));
        }
        match index.get(&id) {
            Some(&k) => {
                let (existing_origin, existing) = &mut base[k];
                for (key, v) in table {
                    existing.insert(key, v);
                }
                *existing_origin = origin;
            }
            None => {
                index.insert(id, base.len());
                base.push((origin, table));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_catalog_s_memory_gb_overrides_memory_gib() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[[gpu]]\nid = \"h100-sxm\"\nmemory_gb = 96\n").unwrap();
        let catalog = Catalog::load(Some(&path)).unwrap();
        assert_eq!(catalog.gpu("h100-sxm").unwrap().memory_gib, 96.0);
    }

    #[test]
    fn gpu_names_as_users_type_them() {
        let c = Catalog::embedded();
        for (typed, id) in [
            ("H100", "h100-sxm"),
            ("h100", "h100-sxm"),
            ("NVIDIA H100 SXM", "h100-sxm"),
            ("H100-SXM5-80GB", "h100-sxm"),
            ("A100", "a100-80gb"),
            ("a100_80gb", "a100-80gb"),
            ("H200", "h200"),
            ("H20", "h20"),
            ("MI300X", "mi300x"),
            ("AMD Instinct MI300X", "mi300x"),
        ] {
            assert_eq!(c.gpu(typed).map(|g| g.id.as_str()), Ok(id), "{typed}");
        }
        // Look-alikes are other GPUs: never taken for the near id.
        for (typed, says) in [
            ("GH200", "not the h200"),
            ("A100-40GB", "not a100-80gb"),
            ("H100 PCIe", "PCIe"),
        ] {
            let e = c.gpu(typed).unwrap_err();
            assert!(e.contains(says) && e.contains("⟨catalog⟩"), "{typed}: {e}");
        }
    }

    #[test]
    fn catalog_ids_are_of_one_safe_alphabet() {
        for id in ["qwen2.5-7b", "h100-sxm", "my_model.v2", "7b"] {
            assert!(is_valid_id(id), "{id}");
        }
        for id in [
            "", "Bad Id", "=cmd", "+1", "-x", "@x", "a/b", "../x", "a|b", "x\ny",
        ] {
            assert!(!is_valid_id(id), "{id}");
        }
        let user = "[[model]]\nid = \"=hyperlink\"\n";
        let e = Catalog::load_text(Some((Path::new("c.toml"), user)))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("c.toml") && e.contains("not a catalog id"),
            "{e}"
        );
    }

    #[test]
    fn every_model_total_matches_its_published_count() {
        // Source: each entry's `source` (Hugging Face config.json and model card).
        let catalog = Catalog::embedded();
        assert!(catalog.models.len() >= 20);
        for m in &catalog.models {
            let computed = m.total_params() as i64;
            let published = m.published_params as i64;
            assert!(
                (computed - published).abs() <= m.published_params_tolerance as i64,
                "{}: computed {computed}, published {published} ± {}",
                m.id,
                m.published_params_tolerance
            );
        }
    }

    #[test]
    fn qwen3_moe_active_parameters_match_model_card() {
        // Qwen3-30B-A3B model card: 3.3B activated parameters (printed to two digits; the shape
        // gives 3.353B including both embedding matrices).
        let m = Catalog::embedded().model("qwen3-30b-a3b").unwrap().clone();
        let active = m.active_params() as f64 / 1e9;
        assert!((active - 3.3).abs() < 0.06, "{active}");
        assert!(m.matmul_params() < m.active_params() as f64);
    }

    #[test]
    fn reward_models_are_backbones_without_lm_head() {
        let c = Catalog::embedded();
        let base = c.model("qwen2.5-7b").unwrap();
        let prm = c.model("qwen2.5-math-prm-7b").unwrap();
        assert_eq!(
            prm.total_params(),
            base.total_params() - base.vocab * base.hidden + prm.score_head_params
        );
        // Score head Linear(3584, 3584) + Linear(3584, 2), both with bias.
        assert_eq!(prm.score_head_params, 3584 * 3584 + 3584 + 3584 * 2 + 2);
    }

    #[test]
    fn kv_bytes_per_token_hand_value() {
        // Qwen2.5-7B: 2 × 28 layers × 4 kv heads × 128 × 2 bytes = 57,344 bytes per token.
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        assert_eq!(m.kv_cache_bytes_per_token(), 57_344.0);
        // Split over 2 or 4 GPUs the replica still holds one copy of each head; over 8, vLLM
        // gives each GPU one head, so every head is stored twice: 114,688 bytes per token.
        assert_eq!(m.kv_cache_bytes_per_token_on(1.0), 57_344.0);
        assert_eq!(m.kv_cache_bytes_per_token_on(4.0), 57_344.0);
        assert_eq!(m.kv_cache_bytes_per_token_on(8.0), 114_688.0);
    }

    #[test]
    fn required_ids_exist() {
        let c = Catalog::embedded();
        for id in [
            "qwen2.5-7b",
            "qwen3-4b",
            "qwen3-30b-a3b",
            "llama-3.1-8b",
            "deepseek-r1-distill-qwen-1.5b",
            "qwen2.5-math-prm-7b",
            "qwen2.5-math-rm-72b",
        ] {
            assert!(c.model(id).is_ok(), "{id}");
        }
        for id in [
            "a100-80gb",
            "a800",
            "h100-sxm",
            "h800",
            "h20",
            "h200",
            "b200",
            "gb200",
            "l40s",
            "mi300x",
        ] {
            assert!(c.gpu(id).is_ok(), "{id}");
        }
        assert!(
            c.gpu("h100-sx")
                .unwrap_err()
                .contains("did you mean `h100-sxm`")
        );
        // A checkpoint name that does not exist is matched by family and size first (edit
        // distance alone suggested `qwen2-7b-instruct` for Qwen3-8B-Instruct).
        let e = c.model("Qwen/Qwen3-8B-Instruct").unwrap_err();
        assert!(
            e.contains("did you mean `qwen3-8b` or `qwen3-8b-base`?"),
            "{e}"
        );
        // Case, Hugging Face names and aliases of the same shape resolve.
        assert_eq!(c.gpu("H100-SXM").unwrap().id, "h100-sxm");
        assert_eq!(c.model("Qwen/Qwen2.5-7B").unwrap().id, "qwen2.5-7b");
        assert_eq!(c.model("qwen2.5-7b-instruct").unwrap().id, "qwen2.5-7b");
        assert_eq!(c.model("Qwen/Qwen2.5-Math-7B").unwrap().id, "qwen2.5-7b");
        assert_eq!(c.model("QWEN3-8B").unwrap().id, "qwen3-8b");
    }

    #[test]
    fn user_file_overrides_fields_and_adds_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(
            &path,
            "[[gpu]]\nid = \"h100-sxm\"\ndecode_bandwidth_efficiency = 0.55\n\n[[model]]\nid = \"tiny\"\nname = \"t\"\nlayers = 2\nhidden = 64\nheads = 4\nkv_heads = 4\nhead_dim = 16\nintermediate = 128\nvocab = 1000\ntied_embeddings = true\npublished_params = 0\nsource = \"test\"\ndate = \"2026\"\n",
        )
        .unwrap();
        let c = Catalog::load(Some(&path)).unwrap();
        let h100 = c.gpu("h100-sxm").unwrap();
        assert_eq!(h100.decode_bandwidth_efficiency, 0.55);
        assert_eq!(h100.bf16_dense_tflops, 989.0);
        assert!(c.model("tiny").is_ok());
        assert!(c.version.contains("mine.toml"));
    }

    #[test]
    fn a_new_model_names_every_missing_field_at_once_and_checks_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(
            &path,
            "[[model]]\nid = \"mine\"\nname = \"me/mine\"\nlayers = 28\n",
        )
        .unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.contains("missing hidden, heads, kv_heads, head_dim, intermediate, vocab, tied_embeddings, published_params, source, date"),
            "{err}"
        );
        // Qwen2.5-7B's shape with a published count off by 30%.
        let shape = "layers = 28\nhidden = 3584\nheads = 28\nkv_heads = 4\nhead_dim = 128\nintermediate = 18944\nvocab = 152064\ntied_embeddings = false\nqkv_bias = true\nsource = \"t\"\ndate = \"2026\"\n";
        std::fs::write(
            &path,
            format!("[[model]]\nid = \"mine\"\nname = \"me/mine\"\n{shape}published_params = 10000000000\n"),
        )
        .unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.contains("published_params")
                && err.contains("7615616512")
                && err.contains("check the dimensions"),
            "{err}"
        );
        std::fs::write(
            &path,
            format!("[[model]]\nid = \"mine\"\nname = \"me/mine\"\n{shape}published_params = 7600000000\n"),
        )
        .unwrap();
        assert!(Catalog::load(Some(&path)).is_ok());
    }

    #[test]
    fn aliases_keep_their_own_context_window_and_a_stray_alias_window_is_refused() {
        let c = Catalog::embedded();
        let window = |id: &str| c.resolve_model(id).unwrap().context_tokens;
        assert_eq!(window("qwen2.5-7b"), Some(131_072));
        assert_eq!(window("Qwen/Qwen2.5-7B-Instruct"), Some(32_768));
        assert_eq!(window("qwen2.5-math-7b"), Some(4_096));
        assert_eq!(window("qwen2-7b"), Some(131_072));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stray.toml");
        let mut model = c.model("qwen2.5-7b").unwrap().clone();
        model
            .alias_context_tokens
            .insert("qwen9-7b".to_string(), 1024);
        std::fs::write(&path, crate::catalog::import::model_toml(&model)).unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(err.contains("alias_context_tokens.qwen9-7b"), "{err}");
        model.alias_context_tokens.clear();
        model.context_tokens = Some(0);
        std::fs::write(&path, crate::catalog::import::model_toml(&model)).unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(err.contains("context_tokens"), "{err}");
    }

    #[test]
    fn user_file_with_bad_efficiency_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[[gpu]]\nid = \"h100-sxm\"\ntrain_mfu = 1.5\n").unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.contains("train_mfu") && err.contains("bad.toml"),
            "{err}"
        );
    }
}
