//! # rlfrontier
//!
//! Where should the compute of an RL post-training run (GRPO, PPO) go? rlfrontier expands a grid
//! of allocations (model, fine-tuning mode, reward, group size G, response cap, update epochs,
//! prompts per step, budget) into cells, prices each cell with an exact ledger (FLOPs, seconds,
//! GPU-hours and dollars, split into search, learning and feedback), and writes the result for
//! the RACE protocol's next steps (arXiv 2607.13389).
//!
//! Module map: [`spec`] (grid files and cells), [`catalog`] (models and GPUs), [`ledger`] (the
//! accounting and every formula), [`sweep`] (parallel evaluation and `cells.csv`), [`export`]
//! (atomic files, manifest), [`commands`] (what each CLI subcommand does), [`cli`] (arguments).

#![warn(missing_docs)]

pub mod analysis;
pub mod catalog;
pub mod config;
pub mod costing;
pub mod engine;
pub mod error;
pub mod evaluate;
pub mod fit;
pub mod format;
pub mod ledger;
pub mod outcome;
pub mod pilot;
pub mod report;
pub mod rng;
pub mod spec;
pub mod toml_text;

pub use error::{Error, Result};

/// The tool's version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
