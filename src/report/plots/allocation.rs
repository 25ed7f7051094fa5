//! `allocation.svg`: the RACE picture, best predicted score against the update fraction per budget.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::frontier::{Aggregate, Point};
use crate::spec::Grid;

use super::*;
use crate::report::tables::budget_label;

/// Panels per row of the small multiples.
const COLUMNS: usize = 3;

/// `allocation.svg`: one panel per budget (every budget, in rows of three), sharing one score
/// scale and one update-fraction scale fitted to the data, so panels compare at a glance; the
/// legend sits above the panels.
pub fn allocation(grid: &Grid, aggregate: &Aggregate) -> String {
    let budgets: Vec<usize> = (0..grid.axes.budget.len()).collect();
    let series: Vec<(usize, usize)> = (0..grid.axes.model.len())
        .flat_map(|m| (0..grid.axes.reward.len()).map(move |r| (m, r)))
        .collect();
    let columns = budgets.len().clamp(1, COLUMNS);
    let rows = budgets.len().div_ceil(columns).max(1);
    let legend_rows = series.len().div_ceil(3) as u32;
    let legend_height = 26 * legend_rows + 10;
    let width = (440 * columns as u32 + 40).max(900);
    let height = 50 + legend_height + 380 * rows as u32;
    // One score scale for every panel.
    let scores = || aggregate.allocation.values().map(|p| p.score);
    // At least one point (0.01) tall: scores that differ by less read as the flat line they are,
    // not as a slope between ticks that all print the same number.
    let (low, high) = super::at_least(
        scores().fold(f64::INFINITY, f64::min),
        scores().fold(f64::NEG_INFINITY, f64::max),
        0.01,
    );
    let (y0, y1) = padded(low, high, 0.06);
    // One update-fraction scale for every panel, fitted to the data (within 0 to 1).
    let fractions = || aggregate.allocation.values().map(|p| p.update_fraction);
    let (x0, x1) = padded(
        fractions().fold(f64::INFINITY, f64::min),
        fractions().fold(f64::NEG_INFINITY, f64::max),
        0.06,
    );
    let x = (x0.max(0.0), x1.min(1.0));
    render(width, height, |root| {
        let title = format!(
            "Best predicted score against update fraction, per budget, grid {} (the RACE picture)",
            grid.name
        );
        if aggregate.allocation.is_empty() {
            return empty_message(root, &title);
        }
        let root = root.titled(&title, ("sans-serif", TITLE))?;
        let (legend, charts) = root.split_vertically(legend_height);
        draw_legend(&legend, grid, &series)?;
        let panels = charts.split_evenly((rows, columns));
        for (panel, &b) in panels.iter().zip(&budgets) {
            draw_panel(panel, grid, aggregate, b, &series, (x, (y0, y1)))?;
        }
        Ok(())
    })
}

/// One budget's panel: per model and reward, the best score in each update-fraction bin, and
/// the budget's best ringed.
fn draw_panel(
    panel: &DrawingArea<SVGBackend, Shift>,
    grid: &Grid,
    aggregate: &Aggregate,
    b: usize,
    series: &[(usize, usize)],
    ((x0, x1), (y0, y1)): ((f64, f64), (f64, f64)),
) -> PlotResult {
    let mut chart = ChartBuilder::on(panel)
        .caption(
            format!("budget {}", budget_label(grid, b)),
            ("sans-serif", TITLE),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(62)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc("update fraction (learning share of FLOPs)")
        .y_desc("best predicted score")
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|x| super::number_tick(*x, x1 - x0))
        .y_label_formatter(&|y| super::number_tick(*y, y1 - y0))
        .label_style(("sans-serif", TEXT))
        .axis_desc_style(("sans-serif", TEXT))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let mut best: Option<Point> = None;
    for &(m, r) in series {
        let mut points: Vec<Point> = aggregate
            .allocation
            .iter()
            .filter(|((mm, rr, bb, _), _)| *mm == m && *rr == r && *bb == b)
            .map(|(_, p)| *p)
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, c| a.update_fraction.total_cmp(&c.update_fraction));
        for p in &points {
            if best.is_none_or(|q| p.score > q.score) {
                best = Some(*p);
            }
        }
        let c = colour(m);
        let rule = grid.axes.reward[r].kind == crate::config::RewardKind::Rule;
        let style = if rule {
            c.stroke_width(2)
        } else {
            c.mix(0.7).stroke_width(1)
        };
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.update_fraction, p.score)),
            style,
        ))?;
        if rule {
            chart.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.update_fraction, p.score), 3, c.filled())),
            )?;
        } else {
            chart.draw_series(
                points
                    .iter()
                    .map(|p| TriangleMarker::new((p.update_fraction, p.score), 4, c.filled())),
            )?;
        }
    }
    if let Some(p) = best {
        chart.draw_series(std::iter::once(Circle::new(
            (p.update_fraction, p.score),
            9,
            BLACK.stroke_width(2),
        )))?;
    }
    Ok(())
}

/// The legend strip above the panels: one entry per model and reward.
fn draw_legend(
    legend: &DrawingArea<SVGBackend, Shift>,
    grid: &Grid,
    series: &[(usize, usize)],
) -> PlotResult {
    let font = ("sans-serif", TEXT).into_font().color(&BLACK);
    let column_width = (legend.dim_in_pixel().0 as i32 - 40) / 3;
    for (k, &(m, r)) in series.iter().enumerate() {
        let x = 30 + (k % 3) as i32 * column_width;
        let y = 6 + (k / 3) as i32 * 26;
        let c = colour(m);
        if grid.axes.reward[r].kind == crate::config::RewardKind::Rule {
            legend.draw(&Circle::new((x, y + 6), 5, c.filled()))?;
        } else {
            legend.draw(&TriangleMarker::new((x, y + 6), 6, c.filled()))?;
        }
        let label = format!("{} / {}", grid.axes.model[m].id, grid.axes.reward[r]);
        legend.draw(&Text::new(label, (x + 12, y), font.clone()))?;
    }
    Ok(())
}
