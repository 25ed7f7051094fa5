//! SVG plots of a sweep (plotters, SVG backend only: no font or image libraries are linked; text
//! is written as plain `<text>` elements).
//!
//! - `frontier.svg`: predicted score against dollars (log axis): a sample of feasible cells,
//!   faint and coloured by model, with the cost–score front highlighted.
//! - `allocation.svg`: the RACE picture: per budget, the best predicted score against the update
//!   fraction (learning share of FLOPs), one line per model and reward.
//! - `split.svg`: the search/learning/feedback shares of the frontier cells, in FLOPs and in
//!   dollars side by side.
//! - `regimes.svg`: per budget, the shortlisted regimes' paired difference to the
//!   recommendation in points with 90% intervals (what a one-budget grid asks).
//! - `simplex.svg`: the three FLOP shares (learning across, feedback up, search the rest),
//!   coloured by predicted score.
//! - `fit_<run>.svg` and `calibration.svg` (from `fit`): a pilot's checkpoints with the fitted
//!   curve and its band; measured against predicted scores, prior and calibrated.
//!
//! One file per plot; the palette, the page and the axis helpers are shared here.

mod allocation;
mod fit;
mod frontier;
mod regimes;
mod simplex;
mod split;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::frontier::Aggregate;
use crate::spec::Grid;

pub use allocation::allocation;
pub use fit::{FitPlot, calibration_plot, fit_plot};
pub use frontier::frontier;
pub use regimes::regimes;
pub use simplex::{score_colour, simplex};
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

/// plotters' SVG backend writes a font of size s as `font-size` s / 1.24 pixels, so sizes are
/// asked for at 1.24 times the pixels wanted: [`TEXT`] renders at 12.9 px, [`TITLE`] at 18.5 px
/// (issue 25: text of at least 12 px at 100% zoom).
const PLOTTERS_FONT_SCALE: f64 = 1.24;

/// Font size (plotters units) of every label, tick and legend entry: 12.9 px.
const TEXT: u32 = 16;

/// Font size (plotters units) of titles: 18.5 px.
const TITLE: u32 = 23;

/// The pixel size a plotters font size renders at.
pub fn rendered_px(size: u32) -> f64 {
    size as f64 / PLOTTERS_FONT_SCALE
}

/// A money tick: $10k, $50k, $1M, $2.5M.
pub fn money_tick(usd: f64) -> String {
    if !(usd.is_finite() && usd > 0.0) {
        return String::new();
    }
    let (value, suffix) = if usd >= 1e9 {
        (usd / 1e9, "B")
    } else if usd >= 1e6 {
        (usd / 1e6, "M")
    } else if usd >= 1e3 {
        (usd / 1e3, "k")
    } else {
        (usd, "")
    };
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("${text}{suffix}")
}

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
                &("sans-serif", TEXT).into_font().color(&BLACK),
                (20, 20),
            );
        }
        let _ = root.present();
    }
    element_opacity_to_paint_opacity(&svg)
}

/// Adds an invisible hover target with a `<title>` at each (x, y) pixel: browsers show the title
/// as a tooltip when the pointer rests on the point.
pub fn with_tooltips(svg: String, tips: &[(i32, i32, String)]) -> String {
    let Some(end) = svg.rfind("</svg>") else {
        return svg;
    };
    let mut out = String::with_capacity(svg.len() + tips.len() * 160);
    out.push_str(&svg[..end]);
    out.push_str("<g class=\"tips\">\n");
    for (x, y, text) in tips {
        out.push_str(&format!(
            "<circle class=\"tip\" cx=\"{x}\" cy=\"{y}\" r=\"8\" fill=\"#000000\" fill-opacity=\"0\"><title>{}</title></circle>\n",
            crate::report::html::escape(text)
        ));
    }
    out.push_str("</g>\n");
    out.push_str(&svg[end..]);
    out
}

/// Rewrites plotters' element `opacity="a"` as `fill-opacity="a" stroke-opacity="a"` (dropping it
/// where it is 1). Renderers that implement element opacity by compositing an offscreen group
/// (ImageMagick's built-in SVG reader, some librsvg versions) paint those elements as black
/// shapes; paint opacity renders the same everywhere, and for a single shape it looks the same.
pub fn element_opacity_to_paint_opacity(svg: &str) -> String {
    const NEEDLE: &str = " opacity=\"";
    let mut out = String::with_capacity(svg.len() + svg.len() / 8);
    let mut rest = svg;
    while let Some(at) = rest.find(NEEDLE) {
        out.push_str(&rest[..at]);
        let after = &rest[at + NEEDLE.len()..];
        let Some(end) = after.find('"') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let value = &after[..end];
        if value.parse::<f64>().is_ok_and(|v| v < 1.0) {
            out.push_str(&format!(
                " fill-opacity=\"{value}\" stroke-opacity=\"{value}\""
            ));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `(min, max)` widened about its middle to at least `span` (unchanged when already wider, or
/// when either end is not finite: an empty series).
pub fn at_least(min: f64, max: f64, span: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite()) || max - min >= span {
        return (min, max);
    }
    let middle = 0.5 * (min + max);
    (middle - 0.5 * span, middle + 0.5 * span)
}

/// A tick on a linear axis spanning `span`, with as many decimals as its ticks (about a sixth
/// of the span apart) need to read apart: 0.92 on a 0.9-1.0 axis, 0.9215 on a 0.921-0.923 one
/// (two decimals always printed 0.92, 0.92, 0.92 on a one-budget grid's narrow axis).
pub fn number_tick(x: f64, span: f64) -> String {
    let step = (span.abs() / 6.0).max(1e-9);
    let decimals = (-step.log10()).ceil().clamp(2.0, 5.0) as usize;
    format!("{x:.decimals$}")
}

/// A log axis's tick label: only at 1, 2 and 5 times a power of ten (plotters places a tick at
/// every integer multiple, whose labels overlap towards the next decade).
pub fn log_tick(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return String::new();
    }
    let mantissa = x / 10f64.powf(x.log10().floor());
    let keep = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6 * m);
    if keep {
        crate::format::number(x)
    } else {
        String::new()
    }
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
        &("sans-serif", TITLE).into_font().color(&BLACK),
        (20, 20),
    )?;
    area.draw_text(
        "no feasible cell to plot: see infeasible_reason in cells.csv",
        &("sans-serif", TEXT).into_font().color(&BLACK),
        (20, 60),
    )?;
    Ok(())
}

/// The sweep's plots, by file stem.
pub const PLOT_NAMES: [&str; 5] = ["frontier", "regimes", "allocation", "split", "simplex"];

/// Every plot, as (file name, SVG text), in [`PLOT_NAMES`] order.
pub fn render_all(
    grid: &Grid,
    aggregate: &Aggregate,
    decisions: &[crate::analysis::decision::Decision],
) -> Vec<(String, String)> {
    vec![
        (
            "frontier.svg".to_string(),
            frontier(grid, aggregate, decisions),
        ),
        ("regimes.svg".to_string(), regimes(grid, decisions)),
        ("allocation.svg".to_string(), allocation(grid, aggregate)),
        ("split.svg".to_string(), split(grid, aggregate)),
        ("simplex.svg".to_string(), simplex(grid, aggregate)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_ticks_read_as_people_write_budgets() {
        assert_eq!(money_tick(10_000.0), "$10k");
        assert_eq!(money_tick(50_000.0), "$50k");
        assert_eq!(money_tick(1_000_000.0), "$1M");
        assert_eq!(money_tick(2_500_000.0), "$2.5M");
        assert_eq!(money_tick(250.0), "$250");
        assert_eq!(money_tick(f64::NAN), "");
    }

    #[test]
    fn text_renders_at_twelve_pixels_or_more() {
        assert!(rendered_px(TEXT) >= 12.0 && rendered_px(TITLE) > rendered_px(TEXT));
    }

    #[test]
    fn log_ticks_keep_one_two_five() {
        assert_eq!(log_tick(1e17), "1e17");
        assert_eq!(log_tick(2e17), "2e17");
        assert_eq!(log_tick(5e17), "5e17");
        assert_eq!(log_tick(7e17), "");
        assert_eq!(log_tick(3e17), "");
    }

    #[test]
    fn element_opacity_becomes_paint_opacity() {
        let svg =
            r##"<circle cx="1" opacity="0.3" fill="#2CA02C"/><rect opacity="1" fill="#FFF"/>"##;
        assert_eq!(
            element_opacity_to_paint_opacity(svg),
            r##"<circle cx="1" fill-opacity="0.3" stroke-opacity="0.3" fill="#2CA02C"/><rect fill="#FFF"/>"##
        );
    }
}
