//! SVG plots of a sweep (plotters, SVG backend only: no font or image libraries are linked; text
//! is written as plain `<text>` elements).
//!
//! - `frontier.svg`: predicted score against dollars (log axis): a sample of feasible cells,
//!   faint and coloured by model, with the cost–score front highlighted.
//! - `allocation.svg`: the RACE picture: per budget, the best predicted score against the update
//!   fraction (learning share of FLOPs), one line per model and reward.
//! - `split.svg`: the search/learning/feedback shares of the frontier cells, in FLOPs and in
//!   dollars side by side.
//! - `simplex.svg`: a ternary plot of the three FLOP shares, coloured by predicted score.
//! - `fit_<run>.svg` and `calibration.svg` (from `fit`): a pilot's checkpoints with the fitted
//!   curve and its band; measured against predicted scores, prior and calibrated.
//!
//! One file per plot; the palette, the page and the axis helpers are shared here.

mod allocation;
mod fit;
mod frontier;
mod simplex;
mod split;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::frontier::Aggregate;
use crate::spec::Grid;

pub use allocation::allocation;
pub use fit::{FitPlot, calibration_plot, fit_plot};
pub use frontier::frontier;
pub use simplex::{score_colour, simplex, ternary};
pub use split::split;

/// Model colours (Tableau 10).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Bucket colours: search, learning, feedback.
const BUCKET_COLOURS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];
const BUCKET_NAMES: [&str; 3] = ["search", "learning", "feedback"];

type PlotResult = Result<(), Box<dyn std::error::Error>>;

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn render(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> PlotResult,
) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let outcome = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|_| draw(&root).map_err(|e| e.to_string()));
        if let Err(message) = outcome {
            // Drawing into a string only fails on a bug; say so in the picture rather than panic.
            let _ = root.fill(&WHITE);
            let _ = root.draw_text(
                &format!("plot failed: {message}"),
                &("sans-serif", 16).into_font().color(&BLACK),
                (20, 20),
            );
        }
        let _ = root.present();
    }
    svg
}

fn padded(min: f64, max: f64, fraction: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite()) {
        return (0.0, 1.0);
    }
    let span = (max - min).abs().max(1e-6);
    (min - fraction * span, max + fraction * span)
}

fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    (lo / 1.5, hi * 1.5)
}

fn empty_message(area: &DrawingArea<SVGBackend, Shift>, title: &str) -> PlotResult {
    area.draw_text(
        title,
        &("sans-serif", 22).into_font().color(&BLACK),
        (20, 20),
    )?;
    area.draw_text(
        "no feasible cell to plot: see infeasible_reason in cells.csv",
        &("sans-serif", 16).into_font().color(&BLACK),
        (20, 60),
    )?;
    Ok(())
}

/// Every plot, as (file name, SVG text).
pub fn render_all(grid: &Grid, aggregate: &Aggregate) -> Vec<(String, String)> {
    vec![
        ("frontier.svg".to_string(), frontier(grid, aggregate)),
        ("allocation.svg".to_string(), allocation(grid, aggregate)),
        ("split.svg".to_string(), split(grid, aggregate)),
        ("simplex.svg".to_string(), simplex(grid, aggregate)),
    ]
}
