//! `rlfrontier flops`: FLOPs of one pass over a batch, in rlfrontier's or veRL's convention, so
//! users can reconcile with the `perf/mfu/actor` veRL logs.

use std::io::Write;

use serde_json::json;

use crate::cli::{Convention, FlopsArgs, PassKind};
use crate::error::{Error, Result};
use crate::format::{Table, flops as fmt_flops, thousands};
use crate::ledger::flops::{TokenSums, forward_flops, train_flops, verl_train_flops};
use crate::spec::Finetune;

/// Prints the FLOPs of the pass.
pub fn run(args: &FlopsArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let model = catalog
        .model(&args.model)
        .map_err(|m| Error::in_flag("--model", m))?;
    let finetune = Finetune::parse(&args.finetune).map_err(|m| Error::in_flag("--finetune", m))?;
    let batch = TokenSums::of_lengths(&args.seqlens);
    let ours = match args.pass_kind {
        PassKind::Train => train_flops(model, finetune, batch),
        PassKind::Forward => forward_flops(model, batch),
    };
    // veRL's counter is a training (6·N) count; its forward-only equivalent is one third.
    let verl_train = verl_train_flops(model, &args.seqlens);
    let verl = match args.pass_kind {
        PassKind::Train => verl_train as f64,
        PassKind::Forward => verl_train as f64 / 3.0,
    };
    let chosen = match args.convention {
        Convention::Rlfrontier => ours,
        Convention::Verl => verl,
    };
    let mut notes = Vec::new();
    if args.convention == Convention::Verl && finetune != Finetune::Full {
        notes.push(
            "veRL's counter ignores LoRA: it counts a full 6·N training pass whatever the adapters"
                .to_string(),
        );
    }
    if args.convention == Convention::Verl && args.pass_kind == PassKind::Forward {
        notes.push("veRL counts training passes only; forward = its number / 3".to_string());
    }
    let achieved = match args.seconds {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(chosen / s),
        Some(s) => {
            return Err(Error::in_flag(
                "--seconds",
                format!("{s} must be a positive, finite number of seconds"),
            ));
        }
    };
    let mfu = match (&args.gpu, achieved) {
        (Some(id), Some(rate)) => {
            let gpu = catalog.gpu(id).map_err(|m| Error::in_flag("--gpu", m))?;
            Some(rate / (args.gpus as f64 * gpu.peak_flops_per_second()))
        }
        (Some(_), None) => return Err(Error::in_flag("--gpu", "MFU needs --seconds too")),
        _ => None,
    };
    if args.json {
        let value = json!({
            "model": model.id,
            "seqlens": args.seqlens,
            "pass": match args.pass_kind { PassKind::Train => "train", PassKind::Forward => "forward" },
            "finetune": finetune.to_string(),
            "convention": match args.convention { Convention::Rlfrontier => "rlfrontier", Convention::Verl => "verl" },
            "flops": chosen,
            "flops_rlfrontier": ours,
            "flops_verl": verl,
            "tokens": batch.tokens,
            "achieved_tflops_per_second": achieved.map(|r| r / 1e12),
            "mfu": mfu,
            "notes": notes,
        });
        let mut text = serde_json::to_string_pretty(&value).expect("json");
        text.push('\n');
        return super::emit(out, &text);
    }
    let mut text = format!(
        "{} pass of {} ({}) over {} sequences, {} tokens\n",
        match args.pass_kind {
            PassKind::Train => "training",
            PassKind::Forward => "forward",
        },
        model.id,
        finetune,
        args.seqlens.len(),
        thousands(batch.tokens)
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
            verl_train.to_string()
        } else {
            format!("{chosen:.0}")
        }
    ));
    if let Some(rate) = achieved {
        text.push_str(&format!("achieved: {:.1} TFLOP/s", rate / 1e12));
        if let Some(m) = mfu {
            text.push_str(&format!(" = MFU {:.3} on {} GPU(s)", m, args.gpus));
        }
        text.push('\n');
    }
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    super::emit(out, &text)
}
