//! `split.svg`: search, learning and feedback shares of the frontier cells, FLOPs beside
//! dollars, one horizontal bar per regime, labelled with the regime and its cost.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::analysis::frontier::{Aggregate, CostBasis, Point};
use crate::report::tables::regime_label;
use crate::spec::Grid;

use super::*;

/// Most bars shown; longer fronts are sampled evenly from cheapest to costliest.
const MAX_BARS: usize = 24;
/// Pixels per bar row.
const ROW: i32 = 26;
/// Width of the label column.
const LABEL_WIDTH: i32 = 660;
/// Width of one share panel.
const PANEL_WIDTH: i32 = 320;
/// Gap between the two share panels (their end labels never meet).
const PANEL_GAP: i32 = 60;

/// `split.svg`.
pub fn split(grid: &Grid, aggregate: &Aggregate) -> String {
    let front = aggregate.front(CostBasis::BudgetUnit);
    let shown: Vec<Point> = if front.len() <= MAX_BARS {
        front.clone()
    } else {
        (0..MAX_BARS)
            .map(|k| front[k * (front.len() - 1) / (MAX_BARS - 1)])
            .collect()
    };
    let top = 96;
    let height = (top + ROW * shown.len().max(1) as i32 + 64) as u32;
    let width = (LABEL_WIDTH + 2 * PANEL_WIDTH + PANEL_GAP + 60) as u32;
    render(width, height, |root| {
        let title = format!(
            "Where the frontier's compute goes: FLOPs against dollars, grid {}",
            grid.name
        );
        if shown.is_empty() {
            return empty_message(root, &title);
        }
        let black = |size: u32| ("sans-serif", size).into_font().color(&BLACK);
        root.draw(&Text::new(title, (20, 12), black(TITLE)))?;
        // Legend.
        for (k, name) in BUCKET_NAMES.iter().enumerate() {
            let x = LABEL_WIDTH + 20 + 130 * k as i32;
            root.draw(&Rectangle::new(
                [(x, 44), (x + 14, 58)],
                BUCKET_COLOURS[k].filled(),
            ))?;
            root.draw(&Text::new(*name, (x + 20, 43), black(TEXT)))?;
        }
        let panel_x = |k: i32| LABEL_WIDTH + 20 + k * (PANEL_WIDTH + PANEL_GAP);
        for (k, name) in ["share of FLOPs", "share of dollars"].iter().enumerate() {
            root.draw(&Text::new(*name, (panel_x(k as i32), 70), black(TEXT)))?;
        }
        root.draw(&Text::new(
            format!(
                "frontier regime, by cost in {} (cheapest first), and its dollars",
                crate::evaluate::cost_unit(grid)
            ),
            (20, 70),
            black(TEXT),
        ))?;
        for (i, p) in shown.iter().enumerate() {
            let y = top + ROW * i as i32;
            let label = format!(
                "{}  ${}",
                regime_label(grid, p),
                crate::format::money(p.usd)
            );
            root.draw(&Text::new(label, (20, y + 5), black(TEXT)))?;
            for (k, shares) in [p.flops_shares, p.usd_shares].iter().enumerate() {
                let mut x = panel_x(k as i32);
                for (b, share) in shares.iter().enumerate() {
                    let w = (share.clamp(0.0, 1.0) * PANEL_WIDTH as f64).round() as i32;
                    if w > 0 {
                        root.draw(&Rectangle::new(
                            [(x, y + 3), (x + w, y + ROW - 5)],
                            BUCKET_COLOURS[b].filled(),
                        ))?;
                    }
                    x += w;
                }
            }
        }
        let axis_y = top + ROW * shown.len() as i32 + 4;
        for k in 0..2 {
            draw_share_axis(root, panel_x(k), axis_y)?;
        }
        Ok(())
    })
}

/// A share panel's axis from `x0` at height `y`: ticks at 0, 50% and 100%, each label centred
/// under its tick (the panels' gap keeps one panel's "100%" from the next one's "0%").
fn draw_share_axis(root: &DrawingArea<SVGBackend, Shift>, x0: i32, y: i32) -> PlotResult {
    root.draw(&PathElement::new(
        vec![(x0, y), (x0 + PANEL_WIDTH, y)],
        BLACK.stroke_width(1),
    ))?;
    let font = ("sans-serif", TEXT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (t, text) in [(0, "0%"), (PANEL_WIDTH / 2, "50%"), (PANEL_WIDTH, "100%")] {
        root.draw(&PathElement::new(
            vec![(x0 + t, y), (x0 + t, y + 5)],
            BLACK.stroke_width(1),
        ))?;
        root.draw(&Text::new(text, (x0 + t, y + 8), font.clone()))?;
    }
    Ok(())
}
