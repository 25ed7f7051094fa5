//! # rlfrontier
//!
//! Where should the compute of an RL post-training run (GRPO, PPO) go? rlfrontier expands a grid
//! of allocations (model, fine-tuning mode, reward, group size G, response cap, update epochs,
//! prompts per step, budget) into cells, prices each cell with an exact ledger (FLOPs, seconds,
//! GPU-hours and dollars, split into search, learning and feedback), and writes the result for
//! the RACE protocol's next steps (arXiv 2607.13389).
//!
//! The modules form layers; each uses only those above it in this list (`tests/layers.rs`
//! checks it against the table of `docs/design.md` §11, which explains it):
//!
//! - [`error`], [`input`], [`format`](mod@format), [`rng`], [`stats`], [`toml_text`], [`logs`],
//!   [`interrupt`], [`bounds`], [`identity`]: typed errors, bounded reading of the user's files,
//!   number formatting, seeded randomness, statistics, lines in TOML text, log lines, signals,
//!   physical bounds, the model's identity;
//! - [`catalog`]: models, GPUs, services;
//! - [`config`]: the settings every entry point shares, and the single source of their defaults;
//! - [`ledger`]: tokens, FLOPs, seconds, memory, GPU-hours, dollars and waste of a run;
//! - [`outcome`]: the outcome prior and its parameter table;
//! - [`spec`]: grid files, axes and cells;
//! - [`evaluate`]: one cell's ledger and prediction;
//! - [`analysis`]: Pareto sets, frontiers, the shortlist;
//! - [`fit`]: sigmoid curves, RACE surfaces, calibration;
//! - [`pilot`]: pilot plans, launch scripts, results ingestion;
//! - [`report`]: CSV rows and tables, plots, the HTML report, atomic staging;
//! - [`engine`]: sweep, merge, manifest, planning and fitting end to end;
//! - [`costing`]: one run priced (`cost`, `compare`, `calibrate-hw`).
//!
//! - feature `research` (on with `cli`): the harness that chooses the model's defaults and
//!   measures them, `fit::prior`, `fit::starts`, `fit::study_backtest`, `engine::backtest`,
//!   `costing::validation` and `costing::transfer`; the model builds and runs without it;
//! - `app` (feature `cli`, on by default): the command line, the only code that knows about
//!   command-line flags; the `rlfrontier` binary (`src/main.rs`) and the Python package's
//!   extension module call it. Without the feature the library has no clap in its graph.

#![warn(missing_docs)]

pub mod analysis;
#[cfg(feature = "cli")]
pub mod app;
pub mod bounds;
pub mod catalog;
pub mod config;
pub mod costing;
pub mod engine;
pub mod error;
pub mod evaluate;
pub mod fit;
pub mod format;
pub mod identity;
pub mod input;
pub mod interrupt;
pub mod ledger;
pub mod logs;
pub mod outcome;
pub mod pilot;
pub mod report;
pub mod rng;
pub mod spec;
pub mod stats;
pub mod toml_text;

// The command line names the library by its crate name (`rlfrontier::…`), as every outside
// caller does, so it reads the same compiled here as it would as a crate of its own.
#[cfg(feature = "cli")]
extern crate self as rlfrontier;

pub use error::{Error, Result};

/// The tool's version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
