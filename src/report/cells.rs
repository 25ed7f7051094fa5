//! `cells.csv`: one row per evaluated cell.

use crate::config::Stop;
use crate::evaluate::{Evaluated, usd_per_point};
use crate::format::number;
use crate::ledger::Bucket;

/// The columns of `cells.csv`, in order.
pub const CELL_COLUMNS: &[&str] = &[
    "cell_id",
    "model",
    "finetune",
    "reward",
    "group_size",
    "max_response_len",
    "update_epochs",
    "prompts_per_step",
    "budget",
    "budget_unit",
    "iterations",
    "rollouts",
    "mean_response_tokens",
    "truncation_rate",
    "zero_signal_rate",
    "flops_search",
    "flops_learning",
    "flops_feedback",
    "flops_total",
    "flops_share_search",
    "flops_share_learning",
    "flops_share_feedback",
    "gpu_hours_search",
    "gpu_hours_learning",
    "gpu_hours_feedback",
    "gpu_hours",
    "usd",
    "usd_share_search",
    "usd_share_learning",
    "usd_share_feedback",
    "wall_hours",
    "feasible",
    "infeasible_reason",
    "infeasible_code",
    "step_seconds",
    "usd_per_step",
    "generated_tokens",
    "straggler_response_tokens",
    "tensor_parallel",
    "sequences_in_flight",
    "training_memory_gb_per_gpu",
    "waste_zero_signal_usd",
    "waste_truncated_usd",
    "waste_straggler_gpu_hours",
    "predicted_score",
    "score_low",
    "score_high",
    "base_score",
    "usd_per_point",
    "gpu_hours_per_point",
    "on_frontier",
];

/// One `cells.csv` row for an evaluated cell.
pub fn cell_row(e: &Evaluated, on_frontier: bool) -> Vec<String> {
    let (cell, ledger, prediction) = (&e.cell, &e.ledger, &e.prediction);
    let (budget, unit) = match cell.stop {
        Stop::Budget(b) => (number(b.amount), b.unit.as_str().to_string()),
        Stop::Iterations(n) => (n.to_string(), "iterations".to_string()),
    };
    let reason = ledger.infeasible.map(|r| r.to_string()).unwrap_or_default();
    let code = ledger
        .infeasible
        .map(|r| r.code().to_string())
        .unwrap_or_default();
    let feasible = ledger.feasible();
    let predicted = |x: f64| if feasible { number(x) } else { String::new() };
    vec![
        cell.id.to_string(),
        cell.model.id.clone(),
        cell.finetune.to_string(),
        cell.reward.to_string(),
        cell.group_size.to_string(),
        cell.max_response_len.to_string(),
        cell.update_epochs.to_string(),
        cell.prompts_per_step.to_string(),
        budget,
        unit,
        ledger.iterations.to_string(),
        number(ledger.tokens.rollouts_per_step * ledger.iterations as f64),
        number(ledger.tokens.mean_response_tokens),
        number(ledger.tokens.truncation_rate),
        number(ledger.tokens.zero_signal_rate),
        number(ledger.flops(Bucket::Search)),
        number(ledger.flops(Bucket::Learning)),
        number(ledger.flops(Bucket::Feedback)),
        number(ledger.total_flops()),
        number(ledger.flops_share(Bucket::Search)),
        number(ledger.flops_share(Bucket::Learning)),
        number(ledger.flops_share(Bucket::Feedback)),
        number(ledger.gpu_hours(Bucket::Search)),
        number(ledger.gpu_hours(Bucket::Learning)),
        number(ledger.gpu_hours(Bucket::Feedback)),
        number(ledger.total_gpu_hours()),
        number(ledger.total_usd()),
        number(ledger.usd_share(Bucket::Search)),
        number(ledger.usd_share(Bucket::Learning)),
        number(ledger.usd_share(Bucket::Feedback)),
        number(ledger.wall_hours()),
        feasible.to_string(),
        reason,
        code,
        number(ledger.step_seconds),
        number(ledger.total_usd_per_step()),
        number(ledger.tokens.generated_tokens_per_step * ledger.iterations as f64),
        number(ledger.tokens.straggler_response_tokens),
        ledger.decode.tensor_parallel.to_string(),
        number(ledger.decode.sequences_in_flight),
        number(ledger.training_memory_gb_per_gpu),
        number(ledger.waste.zero_signal_usd),
        number(ledger.waste.truncated_usd),
        number(ledger.waste.straggler_idle_gpu_hours),
        predicted(prediction.score),
        predicted(prediction.score_low),
        predicted(prediction.score_high),
        number(prediction.base_score),
        if feasible {
            usd_per_point(ledger.total_usd(), prediction.score, prediction.base_score)
                .map(number)
                .unwrap_or_default()
        } else {
            String::new()
        },
        if feasible {
            usd_per_point(
                ledger.total_gpu_hours(),
                prediction.score,
                prediction.base_score,
            )
            .map(number)
            .unwrap_or_default()
        } else {
            String::new()
        },
        on_frontier.to_string(),
    ]
}

/// The header line of `cells.csv`.
pub fn cells_header() -> Vec<u8> {
    let mut header = csv::Writer::from_writer(Vec::new());
    header.write_record(CELL_COLUMNS).expect("memory");
    header.into_inner().expect("memory")
}
