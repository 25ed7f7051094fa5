//! Several target metrics (`[outcome] metrics`): where the recommended regime differs between
//! them. The RACE paper (arXiv 2607.13389) reports that the best allocation changes with the
//! evaluation target; in the outcome prior a target enters through the models' measured base
//! scores on it (gains are in logit units over the base), so a hard benchmark and an easy one
//! can rank the same runs differently.
//!
//! Each target's full outputs are written under `targets/<metric>/`; this module writes the
//! comparison: `targets.md` and a section of the primary report.

use crate::analysis::shortlist::Entry;
use crate::report::html::escape;
use crate::report::tables::{budget_label, cell_fields};
use crate::spec::Axis;
use crate::spec::Grid;

/// One target's name and shortlist, for the comparison.
pub struct TargetShortlist<'a> {
    /// The metric's name.
    pub name: &'a str,
    /// Its view of the grid ([`Grid::for_target`]).
    pub grid: &'a Grid,
    /// Its shortlist.
    pub shortlist: &'a [Entry],
}

/// A regime in one line: model, fine-tuning, reward, G, cap, epochs, prompts.
fn regime(grid: &Grid, e: &Entry) -> String {
    let f = cell_fields(grid, &e.point);
    format!(
        "{} {} {} G={} cap={} epochs={} prompts={}",
        f.label(Axis::Model),
        f.column("finetune"),
        f.column("reward"),
        f.label(Axis::GroupSize),
        f.label(Axis::MaxResponseLen),
        f.label(Axis::UpdateEpochs),
        f.label(Axis::PromptsPerStep)
    )
}

/// Per budget index: each target's best regime (None where the target has no feasible cell),
/// and whether they differ.
fn rows(grid: &Grid, targets: &[TargetShortlist]) -> Vec<(usize, Vec<Option<String>>, bool)> {
    (0..grid.axes.budget.len())
        .map(|b| {
            // Each target's rank-1 regime at this budget, found once.
            let regimes: Vec<Option<(String, &Entry)>> = targets
                .iter()
                .map(|t| {
                    t.shortlist
                        .iter()
                        .find(|e| e.budget_index == b && e.rank == 1)
                        .map(|e| (regime(t.grid, e), e))
                })
                .collect();
            let differs = regimes
                .windows(2)
                .any(|w| w[0].as_ref().map(|r| &r.0) != w[1].as_ref().map(|r| &r.0));
            let best = regimes
                .iter()
                .map(|r| {
                    r.as_ref().map(|(text, e)| {
                        format!(
                            "{text} (P(best) {:.0}%, score {:.3})",
                            100.0 * e.probability_best,
                            e.point.score
                        )
                    })
                })
                .collect();
            (b, best, differs)
        })
        .collect()
}

/// One sentence: at how many budgets the targets disagree.
fn summary(rows: &[(usize, Vec<Option<String>>, bool)], targets: &[TargetShortlist]) -> String {
    let differing = rows.iter().filter(|r| r.2).count();
    let names: Vec<&str> = targets.iter().map(|t| t.name).collect();
    if differing == 0 {
        format!(
            "The recommended regime is the same for every target ({}) at all {} budgets.",
            names.join(", "),
            rows.len()
        )
    } else {
        format!(
            "The recommended regime differs between targets ({}) at {} of {} budgets: validate the regime of the target you will report, or one per target.",
            names.join(", "),
            differing,
            rows.len()
        )
    }
}

/// `targets.md`: per budget, each target's best regime, and where they differ.
pub fn targets_markdown(grid: &Grid, targets: &[TargetShortlist]) -> String {
    let rows = rows(grid, targets);
    let mut md = format!("# Target metrics: grid `{}`\n\n", grid.name);
    md.push_str(&crate::format::markdown_text(&summary(&rows, targets)));
    md.push_str(
        " Each target's frontiers, shortlist and report are in `targets/<metric>/`; the top level is the first target's.\n\n",
    );
    md.push_str("| budget |");
    for t in targets {
        md.push_str(&format!(
            " best for {} |",
            crate::format::markdown_text(t.name)
        ));
    }
    md.push_str(" differs |\n|---|");
    md.push_str(&"---|".repeat(targets.len()));
    md.push_str("---|\n");
    for (b, best, differs) in &rows {
        md.push_str(&format!("| {} |", budget_label(grid, *b)));
        for cell in best {
            md.push_str(&format!(
                " {} |",
                cell.as_deref().unwrap_or("no feasible cell")
            ));
        }
        md.push_str(if *differs { " yes |\n" } else { " no |\n" });
    }
    md
}

/// The report's "Target metrics" section (empty for single-metric grids).
pub fn targets_section(grid: &Grid, targets: &[TargetShortlist]) -> String {
    if targets.len() < 2 {
        return String::new();
    }
    let rows = rows(grid, targets);
    let mut h = String::from("<h2>Target metrics</h2>\n<p>");
    h.push_str(&escape(&summary(&rows, targets)));
    h.push_str(" Each target's own report is <code>targets/&lt;metric&gt;/report.html</code>.</p>\n<table><tr><th>budget</th>");
    for t in targets {
        h.push_str(&format!("<th>best for {}</th>", escape(t.name)));
    }
    h.push_str("<th>differs</th></tr>\n");
    for (b, best, differs) in &rows {
        h.push_str(&format!("<tr><td>{}</td>", escape(&budget_label(grid, *b))));
        for cell in best {
            h.push_str(&format!(
                "<td>{}</td>",
                escape(cell.as_deref().unwrap_or("no feasible cell"))
            ));
        }
        h.push_str(&format!(
            "<td>{}</td></tr>\n",
            if *differs { "yes" } else { "no" }
        ));
    }
    h.push_str("</table>\n");
    h
}
