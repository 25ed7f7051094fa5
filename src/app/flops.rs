//! `rlfrontier flops`: FLOPs of one pass over a batch, in rlfrontier's or veRL's convention, so
//! users can reconcile with the `perf/mfu/actor` veRL logs.

use std::io::Write;

use clap::{Args, ValueEnum};

use serde_json::json;

use super::{CatalogFlag, emit, json_text};
use rlfrontier::config::Finetune;
use rlfrontier::error::{Error, Result};
use rlfrontier::format::{Table, flops as fmt_flops, thousands};
use rlfrontier::ledger::flops::{ConventionCounts, convention_counts};

/// Forward-only or training pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PassKind {
    /// Forward and backward (an update pass).
    Train,
    /// Forward only (log-prob or reward pass).
    Forward,
}

/// FLOPs counting convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Convention {
    /// rlfrontier's: N without the embedding lookup, LoRA-aware.
    Rlfrontier,
    /// veRL's flops_counter.py: embedding and LM head both counted, no biases, LoRA ignored.
    Verl,
}

/// Arguments of `flops`.
#[derive(Debug, Args)]
pub struct FlopsArgs {
    /// Catalog model id.
    #[arg(long)]
    pub model: String,
    /// Sequence lengths of the batch, comma-separated (prompt + response tokens each).
    #[arg(long, value_delimiter = ',', required = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub seqlens: Vec<u64>,
    /// Training (forward + backward) or forward-only pass.
    #[arg(long = "pass", value_enum, default_value_t = PassKind::Train)]
    pub pass_kind: PassKind,
    /// `full` or `lora:RANK`.
    #[arg(long, default_value = "full")]
    pub finetune: Finetune,
    /// Counting convention.
    #[arg(long, value_enum, default_value_t = Convention::Rlfrontier)]
    pub convention: Convention,
    /// Seconds the pass took: prints achieved TFLOP/s (and MFU with --gpu).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// GPU id, for MFU.
    #[arg(long)]
    pub gpu: Option<String>,
    /// GPUs that shared the pass, for MFU.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Achieved TFLOP/s and MFU when the pass's seconds (and GPU) are given.
fn achieved(
    args: &FlopsArgs,
    catalog: &rlfrontier::catalog::Catalog,
    flops: f64,
) -> Result<(Option<f64>, Option<f64>)> {
    let rate = match args.seconds {
        None => None,
        Some(s) => Some(
            flops
                / rlfrontier::bounds::MEASURED_SECONDS
                    .check(s)
                    .map_err(|m| Error::in_flag("--seconds", m))?,
        ),
    };
    let mfu = match (&args.gpu, rate) {
        (Some(id), Some(rate)) => {
            let gpu = catalog.gpu(id).map_err(|m| Error::in_flag("--gpu", m))?;
            Some(rate / (args.gpus as f64 * gpu.peak_flops_per_second()))
        }
        (Some(_), None) => return Err(Error::in_flag("--gpu", "MFU needs --seconds too")),
        _ => None,
    };
    Ok((rate, mfu))
}

/// The table and lines `flops` prints.
fn text(
    args: &FlopsArgs,
    model_id: &str,
    counts: &ConventionCounts,
    chosen: f64,
    (rate, mfu): (Option<f64>, Option<f64>),
    notes: &[String],
) -> String {
    let (ours, verl) = (counts.rlfrontier, counts.verl);
    let mut text = format!(
        "{} pass of {} ({}) over {} sequences, {} tokens\n",
        match args.pass_kind {
            PassKind::Train => "training",
            PassKind::Forward => "forward",
        },
        model_id,
        args.finetune,
        args.seqlens.len(),
        thousands(counts.tokens)
    );
    let mut table = Table::new(["convention", "FLOPs", "TFLOPs"]);
    table.row([
        "rlfrontier".to_string(),
        fmt_flops(ours),
        format!("{:.3}", ours / 1e12),
    ]);
    table.row([
        "verl".to_string(),
        fmt_flops(verl),
        format!("{:.3}", verl / 1e12),
    ]);
    text.push_str(&table.render());
    text.push_str(&format!(
        "selected ({}): {} FLOPs\n",
        match args.convention {
            Convention::Rlfrontier => "rlfrontier",
            Convention::Verl => "verl",
        },
        if args.convention == Convention::Verl && args.pass_kind == PassKind::Train {
            counts.verl_train_exact.to_string()
        } else {
            format!("{chosen:.0}")
        }
    ));
    if let Some(rate) = rate {
        text.push_str(&format!("achieved: {:.1} TFLOP/s", rate / 1e12));
        if let Some(m) = mfu {
            text.push_str(&format!(" = MFU {:.3} on {} GPU(s)", m, args.gpus));
        }
        text.push('\n');
    }
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    text
}

/// Counts the pass and prints it (table or JSON).
pub fn run(args: &FlopsArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let model = &catalog
        .resolve_model(&args.model)
        .map_err(|m| Error::in_flag("--model", m))?;
    let counts = convention_counts(
        model,
        args.finetune,
        &args.seqlens,
        args.pass_kind == PassKind::Forward,
    );
    let chosen = match args.convention {
        Convention::Rlfrontier => counts.rlfrontier,
        Convention::Verl => counts.verl,
    };
    let mut notes = Vec::new();
    if args.convention == Convention::Verl && args.finetune != Finetune::Full {
        notes.push(
            "veRL's counter ignores LoRA: it counts a full 6·N training pass whatever the adapters"
                .to_string(),
        );
    }
    if args.convention == Convention::Verl && args.pass_kind == PassKind::Forward {
        notes.push("veRL counts training passes only; forward = its number / 3".to_string());
    }
    let (rate, mfu) = achieved(args, &catalog, chosen)?;
    if args.json {
        let value = json!({
            "model": model.id,
            "seqlens": args.seqlens,
            "pass": match args.pass_kind { PassKind::Train => "train", PassKind::Forward => "forward" },
            "finetune": args.finetune.to_string(),
            "convention": match args.convention { Convention::Rlfrontier => "rlfrontier", Convention::Verl => "verl" },
            "flops": chosen,
            "flops_rlfrontier": counts.rlfrontier,
            "flops_verl": counts.verl,
            "tokens": counts.tokens,
            "achieved_tflops_per_second": rate.map(|r| r / 1e12),
            "mfu": mfu,
            "notes": notes,
        });
        return emit(out, &json_text(&value));
    }
    emit(
        out,
        &text(args, &model.id, &counts, chosen, (rate, mfu), &notes),
    )
}
