//! `report.html`: one self-contained page (inline CSS and SVG, no script, nothing fetched from
//! the network) with the grid summary, the plots, the shortlist, the assumptions and the state
//! of the predictions.

use crate::analysis::frontier::{Aggregate, CostBasis};
use crate::analysis::shortlist::Entry;
use crate::format::{money, percent, thousands};
use crate::outcome::params::PARAMS;
use crate::spec::{Axis, Grid};

use super::recommendation::{points_interval, sentences};
use super::tables::{budget_label, regime_label, setup_label, shortlist_cells, sweeps_setup};
use crate::analysis::decision::{Compared, Decision};
use crate::analysis::shortlist::Flag;

/// Escapes text for HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    }
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:min(1500px,96vw);color:#222;line-height:1.45;padding:0 1rem}table{display:block;overflow-x:auto;max-width:100%}.controls button{margin:.1rem;font-size:.8rem}\
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}\
.state{display:inline-block;background:#fff3cd;border:1px solid #e0c36a;border-radius:4px;padding:.2rem .6rem;font-weight:600}\
table{border-collapse:collapse;font-size:.88rem;margin:.6rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f7f7f7;padding:.8rem;overflow-x:auto;font-size:.8rem}\
figure{margin:1rem 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85rem;color:#555}\
.kpi{display:flex;gap:1rem;flex-wrap:wrap}.kpi div{background:#f4f7fb;border:1px solid #dce4ef;border-radius:6px;padding:.5rem .9rem}.kpi b{display:block;font-size:1.2rem}\
ul.advice{margin:.1rem 0;padding-left:1.1rem}.why div{white-space:nowrap;font-size:.8rem}.why .lever{display:inline-block;width:6.5em}\
.why .bar{display:inline-block;height:.7em;vertical-align:middle}.why .up{background:#4c9a52}.why .down{background:#c0504d}";

/// The document head, the title and the state of the predictions.
fn page_head(grid: &Grid) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(&format!(
        "<title>rlfrontier report: {}</title>",
        escape(&grid.name)
    ));
    h.push_str(&format!("<style>{STYLE}</style></head><body>\n"));
    h.push_str(&format!(
        "<h1>rlfrontier report: grid <code>{}</code></h1>\n",
        escape(&grid.name)
    ));
    if !grid.description.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", escape(&grid.description)));
    }
    let explanation = match &grid.outcome_state {
        crate::outcome::OutcomeState::Prior => {
            "the outcome model's documented defaults, not fitted to pilot runs".to_string()
        }
        crate::outcome::OutcomeState::Calibrated {
            prior_rmse, file, ..
        } => format!(
            "fitted to pilot runs ({}); the uncalibrated prior's error on the same checkpoints was {prior_rmse:.4}",
            escape(file)
        ),
    };
    h.push_str(&format!(
        "<p>Predictions: <span class=\"state\">{}</span> &mdash; {explanation}. Costs come from the ledger and do not depend on the predictions.</p>\n",
        escape(&grid.outcome_state.label())
    ));

    h
}

/// The key figures: cells, feasibility, the front, generation's share, the best score.
fn key_figures(aggregate: &Aggregate, decisions: &[Decision]) -> String {
    let mut h = String::new();
    let front = aggregate.front(CostBasis::Usd);
    let best = front.last();
    h.push_str("<div class=\"kpi\">");
    h.push_str(&format!(
        "<div>cells evaluated<b>{}</b></div>",
        thousands(aggregate.evaluated as f64)
    ));
    h.push_str(&format!(
        "<div>feasible<b>{}</b></div>",
        thousands(aggregate.feasible as f64)
    ));
    h.push_str(&format!(
        "<div>on the cost-score front<b>{}</b></div>",
        front.len()
    ));
    if aggregate.feasible > 0 {
        h.push_str(&format!(
            "<div>generation's share<b>{} of dollars, {} of FLOPs</b></div>",
            percent(aggregate.mean_usd_share_search()),
            percent(aggregate.mean_flops_share_search())
        ));
    }
    if let Some(p) = best {
        h.push_str(&format!(
            "<div>best predicted score<b>{:.3} for ${}</b></div>",
            p.score,
            money(p.usd)
        ));
    }
    if let Some(cheaper) = decisions.last().and_then(|d| d.cheaper.as_ref()) {
        h.push_str(&format!(
            "<div>within noise of the last budget's pick<b>{:.3} for ${}</b></div>",
            cheaper.point.score,
            money(cheaper.point.usd)
        ));
    }
    h.push_str("</div>\n");

    h
}

/// The recommendation per budget: the sentences, the paired differences of the shortlist and
/// a bar per lever for why it wins.
fn recommendation_section(grid: &Grid, decisions: &[Decision]) -> String {
    let mut h = String::new();
    h.push_str("<h2>Recommendation per budget</h2>\n<p>For each budget, the regime most likely to be the best under the outcome model, compared with the others <b>in pairs</b>: both are drawn together from the model, so what they share (its parameters, the default base score of a model both train) cancels, and the difference's 90% interval is much narrower than either score's. When the runner-up's difference spans 0 and no regime has a clear lead, the regimes within noise are named as a group. Why: the predicted advantage over the runner-up, split over the levers, in points and in the runs' dollars (Shapley values: each lever's average effect as the runner-up's run is moved to the recommendation's, lever by lever); on a fixed budget the dollars sum to about zero and show the trade, what a bigger model costs paid for by fewer updates.</p>\n");
    if decisions.is_empty() {
        h.push_str("<p>No feasible cell.</p>\n");
        return h;
    }
    h.push_str("<table id=\"headline\"><tr><th>budget</th><th>recommendation</th><th>score [90%]</th><th>gain over base [90%]</th><th>dollars (steps)</th><th>FLOPs split</th><th>dollar split</th><th>why (points, dollars)</th></tr>\n");
    let split = |x: [f64; 3]| format!("{} / {} / {}", percent(x[0]), percent(x[1]), percent(x[2]));
    for d in decisions {
        let a = d.recommended();
        let p = &a.point;
        h.push_str(&format!(
            "<tr class=\"best\"><td>{}</td><td>{}</td><td class=\"n\">{:.3} [{:.3}, {:.3}]</td><td class=\"n\">{} over {:.3}</td><td class=\"n\">${} ({} steps)</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
            escape(&budget_label(grid, d.budget_index)),
            escape(&regime_label(grid, p)),
            p.score,
            p.score_low,
            p.score_high,
            escape(&super::recommendation::gain_phrase(grid, a)),
            p.base_score,
            money(p.usd),
            crate::format::thousands(p.iterations as f64),
            split(p.flops_shares),
            split(p.usd_shares),
            why_bars(d),
        ));
        let sentences = sentences(grid, d);
        h.push_str("<tr class=\"advice\"><td></td><td colspan=\"7\"><ul class=\"advice\">");
        for sentence in sentences.all().into_iter().skip(1) {
            h.push_str(&format!("<li>{}</li>", escape(sentence)));
        }
        h.push_str("</ul></td></tr>\n");
    }
    h.push_str("</table>\n");
    h.push_str("<p>Data: <a href=\"cells.csv\">cells.csv</a> &middot; <a href=\"frontier.csv\">frontier.csv</a> &middot; <a href=\"allocation_frontier.csv\">allocation_frontier.csv</a> &middot; <a href=\"shortlist.csv\">shortlist.csv</a> &middot; <a href=\"shortlist.md\">shortlist.md</a> &middot; <a href=\"manifest.json\">manifest.json</a></p>\n");
    h
}

/// Width in pixels of the largest lever's bar.
const WHY_BAR_PX: f64 = 80.0;

/// One small horizontal bar per lever (green when it favours the recommendation, red when it
/// works against it), scaled to the largest share of the row, with its points and dollars.
fn why_bars(d: &Decision) -> String {
    let largest = d.why.iter().map(|s| s.score.abs()).fold(0.0, f64::max);
    if largest <= 0.0 {
        return "-".to_string();
    }
    let mut h = String::from("<div class=\"why\">");
    for share in &d.why {
        let points = 100.0 * share.score;
        let width = (WHY_BAR_PX * share.score.abs() / largest).max(1.0);
        let class = if share.score >= 0.0 { "up" } else { "down" };
        let usd = share
            .usd
            .map(|u| format!(" pt, {}", escape(&super::recommendation::signed_money(u))))
            .unwrap_or_default();
        h.push_str(&format!(
            "<div><span class=\"lever\">{}</span><span class=\"bar {class}\" style=\"width:{width:.0}px\"></span> {points:+.1}{usd}</div>",
            escape(share.lever.label())
        ));
    }
    h.push_str("</div>");
    h
}

/// The grid's summary, as `check` prints it.
fn grid_section(grid: &Grid) -> String {
    let mut h = String::new();
    h.push_str("<h2>Grid</h2>\n<pre>");
    h.push_str(&escape(&crate::spec::describe(grid)));
    h.push_str("</pre>\n");

    h
}

/// The plots, inline, with their captions.
fn plots_section(svgs: &[(String, String)]) -> String {
    let mut h = String::new();
    h.push_str("<h2>Plots</h2>\n");
    let captions = [
        (
            "frontier.svg",
            "Predicted score against the run's cost. Faint points: a sample of feasible cells; line: the cost-score front; ring: each budget's recommendation (the regime most likely to be best).",
        ),
        (
            "regimes.svg",
            "Per budget, each shortlisted regime's predicted score against the recommendation's (rank 1), in points: the dot is the median of the paired difference, the bar its 90% interval from the same joint draws; a grey bar crosses 0 (the model cannot tell it from the pick), a red one does not.",
        ),
        (
            "allocation.svg",
            "Per budget, the best predicted score in each update-fraction bin, one line per model and reward (circles: rule reward; triangles: model-based reward). The ringed point is the budget's best.",
        ),
        (
            "split.svg",
            "Search, learning and feedback shares of the frontier cells: decoding is memory-bound, so generation takes a larger share of dollars than of FLOPs.",
        ),
        (
            "simplex.svg",
            "The three FLOP shares of every sampled cell, coloured by predicted score.",
        ),
    ];
    for (name, svg) in svgs {
        let caption = captions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| *c)
            .unwrap_or("");
        h.push_str(&format!(
            "<figure>{}<figcaption><b>{}</b>: {}</figcaption></figure>\n",
            inline_svg(svg),
            escape(name),
            escape(caption)
        ));
    }

    h
}

/// The shortlist table.
fn shortlist_section(grid: &Grid, decisions: &[Decision]) -> String {
    let shortlist: Vec<(&Entry, &Compared)> = decisions
        .iter()
        .flat_map(|d| d.shortlist.iter().zip(&d.compared))
        .collect();
    let mut h = String::new();
    h.push_str("<h2>Shortlist</h2>\n<p>Per budget, the regimes most likely to be the best (P(best) from joint draws of the outcome model; near-duplicates count towards the regime they duplicate), with 90% predictive intervals; each with the cost of a full validation run and the dollars per point of predicted improvement over the base score.</p>\n");
    if shortlist.is_empty() {
        h.push_str("<p>No feasible cell.</p>\n");
    } else {
        // Filter box, one button per model and reward (they fill the box), a row count.
        let mut names: Vec<String> = grid.axes.model.iter().map(|m| m.id.clone()).collect();
        names.extend(grid.axes.reward.iter().map(|r| r.to_string()));
        h.push_str("<p class=\"controls\"><label>Filter rows: <input id=\"shortlist-filter\" type=\"search\" placeholder=\"e.g. qwen2.5-7b prm\"></label> ");
        for name in &names {
            h.push_str(&format!(
                "<button type=\"button\" class=\"pick\" data-filter=\"{0}\">{0}</button> ",
                escape(name)
            ));
        }
        h.push_str("<button type=\"button\" class=\"pick\" data-filter=\"\">all</button> <span id=\"shortlist-count\"></span> &middot; click a column heading to sort</p>\n");
        let setup = sweeps_setup(grid);
        let setup_head = if setup { "<th>setup</th>" } else { "" };
        h.push_str(&format!("<table id=\"shortlist\"><thead><tr><th>budget</th><th>rank</th><th>P(best)</th><th>model</th><th>finetune</th><th>reward</th>{setup_head}<th>G</th><th>cap</th><th>epochs</th><th>prompts</th><th>score [low, high]</th><th>vs rank 1 (points)</th><th>update fraction</th><th>validation run</th><th>$/point</th><th>flags</th></tr></thead><tbody>\n"));
        for (e, compared) in shortlist {
            let c = shortlist_cells(grid, e);
            let difference = if e.rank == 1 {
                "-".to_string()
            } else {
                points_interval(&compared.difference)
            };
            let f = &c.fields;
            let setup_cell = if setup {
                format!("<td>{}</td>", escape(&setup_label(grid, f)))
            } else {
                String::new()
            };
            h.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td>{setup_cell}<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">${} ({} steps, {} GPU-h)</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                escape(&budget_label(grid, e.budget_index)),
                e.rank,
                c.probability_best,
                escape(f.label(Axis::Model)),
                escape(f.label(Axis::Finetune)),
                escape(f.label(Axis::Reward)),
                f.label(Axis::GroupSize),
                f.label(Axis::MaxResponseLen),
                f.label(Axis::UpdateEpochs),
                f.label(Axis::PromptsPerStep),
                c.score,
                escape(&difference),
                c.update_fraction,
                c.usd,
                c.steps,
                c.gpu_hours,
                c.usd_per_point,
                escape(
                    &e.flags
                        .iter()
                        .filter(|f| **f != Flag::Uncalibrated)
                        .map(Flag::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ));
        }
        h.push_str("</tbody></table>\n");
        h.push_str(&format!("<script>{SHORTLIST_SCRIPT}</script>\n"));
    }

    h
}

/// The shortlist's filter, buttons and sorting: inline, no library, no network. A filter in the
/// address (`report.html#filter=qwen2.5-7b`) is applied on load, so a filtered view can be
/// linked (and tested).
const SHORTLIST_SCRIPT: &str = r#"(function () {
  var table = document.getElementById("shortlist");
  var box = document.getElementById("shortlist-filter");
  if (!table || !box) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var count = document.getElementById("shortlist-count");
  function apply() {
    var terms = box.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var keep = terms.every(function (w) { return text.indexOf(w) >= 0; });
      row.style.display = keep ? "" : "none";
      row.setAttribute("data-shown", keep ? "1" : "0");
      if (keep) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " rows";
  }
  box.addEventListener("input", apply);
  Array.prototype.forEach.call(document.querySelectorAll("button.pick"), function (b) {
    b.addEventListener("click", function () { box.value = b.getAttribute("data-filter"); apply(); });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("data-ascending") !== "1";
      th.setAttribute("data-ascending", ascending ? "1" : "0");
      function key(row) {
        var text = row.cells[i].textContent.replace(/[$,%]/g, "");
        var n = parseFloat(text);
        return isNaN(n) ? text : n;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  // Any address must leave a working page: a malformed escape is used as typed, and an
  // overlong filter is cut (it only ever reaches the text box, never the document).
  var wanted = /filter=([^&]*)/.exec(window.location.hash);
  if (wanted) {
    var text = wanted[1].slice(0, 500);
    try { text = decodeURIComponent(text); } catch (e) { }
    box.value = text;
  }
  apply();
})();"#;

/// The ledger's assumptions and the hardware price.
fn assumptions_section(grid: &Grid) -> String {
    let mut h = String::new();
    h.push_str(
        "<h2>Assumptions</h2>\n<table><tr><th>what</th><th>model</th><th>source</th></tr>\n",
    );
    for (what, model, source) in LEDGER_ASSUMPTIONS {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(what),
            escape(model),
            escape(source)
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&format!(
        "<p>Hardware: {} &times; {} at ${}/GPU-hour ({}; {}).</p>\n",
        grid.hardware.gpus,
        escape(&grid.hardware.gpu.id),
        money(grid.hardware.usd_per_gpu_hour),
        escape(&grid.hardware.gpu.price_provider),
        escape(&grid.hardware.gpu.price_date)
    ));
    h
}

/// The outcome prior: its formula and every parameter with its range and evidence.
fn prior_section(grid: &Grid) -> String {
    let mut h = String::new();
    h.push_str("<h3>Outcome prior (ScaleRL sigmoid, arXiv 2510.13786)</h3>\n<p>R = R0 + (A &minus; R0) / (1 + (K_mid / K)<sup>&beta;</sup>) with A = &sigma;(logit R0 + &Delta;): the gain is &Delta; logit units over the measured base score. K = iterations &times; reuse(epochs) &times; (useful rollouts / 1024)<sup>&kappa;</sup> &times; reward signal &times; LoRA efficiency counts updates, not GPU-hours. Intervals are 90% predictive intervals (parameter uncertainty, model discrepancy, seed noise). Parameters marked <em>fitted</em> are the tool's own fit to published evidence (<code>rlfrontier fit-prior</code>; <code>rlfrontier backtest</code> measures them); the others are hypotheses.</p>\n");
    h.push_str("<table><tr><th>parameter</th><th>value</th><th>range</th><th>basis</th><th>evidence</th></tr>\n");
    for spec in &PARAMS {
        let (name, evidence) = (spec.name, spec.evidence);
        let p = grid.outcome.param(spec.id);
        let basis = match spec.basis {
            crate::outcome::params::Basis::Fitted => "fitted",
            crate::outcome::params::Basis::Hypothesis => "hypothesis",
        };
        // A fitted value at its range's end: its uncertainty is one-sided, and the table says so.
        let at_end = spec.basis == crate::outcome::params::Basis::Fitted
            && p.high > p.low
            && [p.low, p.high]
                .iter()
                .any(|end| (p.value - end).abs() <= 1e-3 * (p.high - p.low));
        let basis = if at_end {
            format!("{basis}; at the end of its plausible range, so its uncertainty is one-sided")
        } else {
            basis.to_string()
        };
        h.push_str(&format!(
            "<tr><td><code>{name}</code></td><td class=\"n\">{}</td><td class=\"n\">[{}, {}]</td><td>{basis}</td><td>{}</td></tr>\n",
            crate::format::significant(p.value),
            crate::format::significant(p.low),
            crate::format::significant(p.high),
            escape(evidence)
        ));
    }
    h.push_str("</table>\n");
    h
}

/// How the grid's outcome parameters fare on published outcomes. The default prior's numbers
/// are those `fit-prior` recorded with it (`outcome::fitted::PRIOR_BACKTEST`: each model's gain
/// refitted without it, as `rlfrontier backtest` does); a grid that overrides or calibrates the
/// parameters has them scored as they are on the bundled outcomes, nothing refitted.
fn trust_section(grid: &Grid) -> String {
    use crate::outcome::fitted::{PRIOR_BACKTEST, PriorBacktest};
    let evidence = crate::fit::evidence::embedded_evidence();
    let prior = grid.outcome_state == crate::outcome::OutcomeState::Prior
        && grid.outcome == crate::outcome::OutcomeParams::default();
    let s = if prior {
        PRIOR_BACKTEST
    } else {
        let (_, s) = crate::fit::backtest::backtest(
            &evidence.outcomes,
            &grid.outcome,
            &std::collections::BTreeMap::new(),
        );
        PriorBacktest {
            outcomes: s.outcomes,
            rmse_points: s.rmse_model,
            no_gain_rmse_points: s.rmse_no_gain,
            mean_gain_rmse_points: s.rmse_mean_gain,
            interval_coverage: s.coverage,
            mean_interval_width_points: s.mean_interval_width,
            gain_correlation: s.gain_correlation,
        }
    };
    format!(
        "<h3>How far to trust the predictions</h3>\n<p>On {} published before/after RL outcomes (SimpleRL-Zoo, arXiv 2503.18892{}), this grid's outcome parameters predict the after-RL score with an RMSE of {:.1} points, against {:.1} for \"no RL gain\" and {:.1} for \"base score + the other models' mean gain\"; their 90% intervals hold {:.0}% of the outcomes (mean width {:.1} points); predicted and measured gains correlate at {:.2}. That check is one study's run shape (the evidence the prior is fitted to holds {} before/after pairs of {} studies): budgets, G, lengths and rewards beyond the evidence rest on ScaleRL's curves and on stated hypotheses; <code>rlfrontier backtest</code> scores the prior leave one study out on every published before/after pair of the evidence (instruct and distilled starts included), overall and by start kind, base score, cap and benchmark. {}</p>\n",
        s.outcomes,
        if prior {
            "; each model held out of the gain fit in turn"
        } else {
            ""
        },
        s.rmse_points,
        s.no_gain_rmse_points,
        s.mean_gain_rmse_points,
        100.0 * s.interval_coverage,
        s.mean_interval_width_points,
        s.gain_correlation,
        evidence.pairs.len(),
        evidence
            .pairs
            .iter()
            .map(|p| p.study.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        match grid.outcome_state {
            crate::outcome::OutcomeState::Prior =>
                "Calibrate on your own pilots (<code>rlfrontier plan</code>, <code>fit</code>) before spending on a full run.",
            crate::outcome::OutcomeState::Calibrated { .. } =>
                "These parameters are calibrated on your pilots; the pilots' own cross-validated error is in the grid summary.",
        }
    )
}

/// Renders the page (`targets_section`: the comparison of target metrics, or empty).
pub fn render(
    grid: &Grid,
    aggregate: &Aggregate,
    decisions: &[Decision],
    svgs: &[(String, String)],
    targets_section: &str,
) -> String {
    let mut h = page_head(grid);
    h.push_str(&key_figures(aggregate, decisions));
    h.push_str(&recommendation_section(grid, decisions));
    h.push_str(&grid_section(grid));
    h.push_str(&plots_section(svgs));
    h.push_str(&shortlist_section(grid, decisions));
    h.push_str(targets_section);
    h.push_str(&assumptions_section(grid));
    h.push_str(&prior_section(grid));
    h.push_str(&trust_section(grid));
    h.push_str(&format!(
        "<p style=\"color:#777;font-size:.8rem\">rlfrontier {} &middot; grid sha256 {} &middot; seed {}</p>\n</body></html>\n",
        crate::VERSION,
        escape(&grid.sha256),
        grid.seed
    ));
    h
}

/// The ledger's main assumptions, for the report (the book's assumptions chapter has the full table).
pub const LEDGER_ASSUMPTIONS: [(&str, &str, &str); 8] = [
    (
        "FLOPs per pass",
        "forward 2·N·Σs + 2·A·Σs²; full training 3× forward; LoRA 2× forward + 6·P_lora·Σs",
        "Kaplan et al. 2020; Megatron-LM; Hu et al. 2021",
    ),
    (
        "response lengths",
        "lognormal(mean, cv) truncated at the cap, closed-form moments",
        "lognormal partial moments",
    ),
    (
        "zero-signal groups",
        "E[p^G] + E[(1-p)^G] over a Beta pass-rate profile",
        "docs/design.md §5; DAPO (arXiv 2503.14476)",
    ),
    (
        "decode time",
        "memory-bound roofline per step, KV-cache-limited batch, straggler tail",
        "Kwon et al. 2023 (PagedAttention); vLLM defaults",
    ),
    (
        "compute-bound time",
        "FLOPs / (GPUs × peak × efficiency); recomputation adds a forward to the update",
        "roofline; Llama 3 report MFU",
    ),
    (
        "training memory",
        "16 bytes/parameter (mixed-precision Adam) sharded; activations 34·H per token per block",
        "ZeRO (Rajbhandari et al. 2020); Korthikanti et al. 2022",
    ),
    (
        "GPU peaks",
        "dense BF16 spec-sheet numbers",
        "vendor datasheets",
    ),
    (
        "prices",
        "on-demand per GPU-hour with provider and date; several are estimates",
        "rlfrontier catalog gpus",
    ),
];
