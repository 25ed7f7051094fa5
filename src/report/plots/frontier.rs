//! `frontier.svg`: predicted score against dollars, a sample of cells and the cost–score front.
//!
//! On a grid whose budgets are fixed amounts of dollars or GPU-hours every cell of a budget costs
//! about that budget, so the cells stand in one vertical strip per budget: the strip is split into
//! one lane per model (a small offset in log dollars) and the ticks are the budgets themselves, in
//! money ($10k, $50k). The front's 90% interval is drawn as whiskers along the front (at most a
//! dozen, evenly spaced), not a filled band: under the uncalibrated prior the intervals span most
//! of the score range and a band would cover the plot.

use crate::spec::Axis;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::analysis::frontier::{Aggregate, CostBasis, Point};
use crate::spec::Grid;

use super::*;

/// `frontier.svg`: with a shaded 90% band along the front, and every front point carrying its
/// full configuration as an SVG `<title>` (a tooltip in browsers, text for screen readers).
pub fn frontier(
    grid: &Grid,
    aggregate: &Aggregate,
    decisions: &[crate::analysis::decision::Decision],
) -> String {
    let mut tips: Vec<(i32, i32, String)> = Vec::new();
    let strips = budget_strips(grid);
    let lane = |p: &Point| match &strips {
        Some(_) => p.usd * lane_factor(p.indices[Axis::Model], grid.axes.model.len()),
        None => p.usd,
    };
    let svg = render(1000, 640, |root| {
        let title = format!(
            "Cost-score frontier, grid {} ({})",
            grid.name,
            grid.outcome_state.short()
        );
        let front = aggregate.front(CostBasis::Usd);
        if front.is_empty() {
            return empty_message(root, &title);
        }
        let picks: Vec<Point> = decisions.iter().map(|d| d.recommended().point).collect();
        let all: Vec<&Point> = [&aggregate.sample, &front, &picks]
            .into_iter()
            .flatten()
            .collect();
        let (x0, x1) = log_range(all.iter().map(|p| lane(p)));
        // The axis fits the points; the whiskers are clipped to it.
        let (y0, y1) = score_range(&all);
        let root = root.titled(&title, ("sans-serif", TITLE))?;
        let (legend, plot) = root.split_vertically(LEGEND_HEIGHT);
        draw_legend(&legend, grid)?;
        let root = &plot;
        let mut chart = ChartBuilder::on(root)
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(76)
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
        let x_desc = match &strips {
            Some(_) => "budget of the run (each strip: its cells, one lane per model)",
            None => "cost of the run (USD, log scale)",
        };
        // With strips the ticks are the budgets, drawn below; the mesh draws none of its own.
        let tick = |x: &f64| match &strips {
            Some(_) => String::new(),
            None => log_tick(*x),
        };
        chart
            .configure_mesh()
            .x_labels(if strips.is_some() { 0 } else { 10 })
            .x_desc(x_desc)
            .y_desc(format!(
                "predicted {}",
                grid.metric.as_deref().unwrap_or("score")
            ))
            .x_label_formatter(&tick)
            .y_label_formatter(&|y| super::number_tick(*y, y1 - y0))
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        if let Some(budgets) = &strips {
            draw_budget_ticks(root, &chart, budgets, (x0, x1), y0)?;
        }
        for m in 0..grid.axes.model.len() {
            let c = colour(m);
            chart.draw_series(
                aggregate
                    .sample
                    .iter()
                    .filter(|p| p.indices[Axis::Model] == m)
                    .map(|p| Circle::new((lane(p), p.score), 2, c.mix(0.3).filled())),
            )?;
        }
        draw_front(&mut chart, &front, &lane, (y0, y1))?;
        for p in &front {
            let (px, py) = chart.backend_coord(&(lane(p), p.score));
            tips.push((px, py, front_tip(grid, p)));
        }
        draw_picks(&mut chart, &picks, &lane)?;
        for p in &picks {
            let (px, py) = chart.backend_coord(&(lane(p), p.score));
            tips.push((px, py, format!("recommended: {}", front_tip(grid, p))));
        }
        Ok(())
    });
    with_tooltips(svg, &tips)
}

/// The score axis: the points' lowest to highest score, padded by 8% of the span.
fn score_range(points: &[&Point]) -> (f64, f64) {
    padded(
        points.iter().map(|p| p.score).fold(f64::INFINITY, f64::min),
        points
            .iter()
            .map(|p| p.score)
            .fold(f64::NEG_INFINITY, f64::max),
        0.08,
    )
}

/// The frontier chart's coordinates: cost on a log axis, score on a linear one.
type FrontierChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<LogCoord<f64>, plotters::coord::types::RangedCoordf64>,
>;

/// The budgets as ticks under the x axis (the strips' labels), those within `x_range`.
fn draw_budget_ticks(
    root: &DrawingArea<SVGBackend, Shift>,
    chart: &FrontierChart,
    budgets: &[f64],
    x_range: (f64, f64),
    y0: f64,
) -> PlotResult {
    let font = ("sans-serif", TEXT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    // backend_coord is in the whole picture's pixels; `root` is the area under the legend,
    // which draws relative to its own corner.
    let (dx, dy) = root.get_base_pixel();
    for &b in budgets
        .iter()
        .filter(|b| (x_range.0..=x_range.1).contains(*b))
    {
        let (px, py) = chart.backend_coord(&(b, y0));
        let (px, py) = (px - dx, py - dy);
        root.draw(&PathElement::new(
            vec![(px, py), (px, py + 6)],
            BLACK.stroke_width(1),
        ))?;
        root.draw(&Text::new(money_tick(b), (px, py + 9), font.clone()))?;
    }
    Ok(())
}

/// The front: each point's 90% interval as a whisker clipped to `y_range` (at most
/// [`MAX_WHISKERS`], evenly spaced; none whose interval passes both ends of the axis), the line through the points, and the points in their
/// model's colour. `lane` places a point on the x axis.
fn draw_front(
    chart: &mut FrontierChart,
    front: &[Point],
    lane: &dyn Fn(&Point) -> f64,
    y_range: (f64, f64),
) -> PlotResult {
    let clamp = |y: f64| y.clamp(y_range.0, y_range.1);
    // A forest of lines reads as none.
    let step = front.len().div_ceil(MAX_WHISKERS).max(1);
    // An interval past both ends of the axis says only "wider than the plot" and, drawn, reads
    // as a wall: such whiskers are left out (regimes.svg has the intervals that matter, paired).
    let informative = |p: &&Point| p.score_low > y_range.0 || p.score_high < y_range.1;
    chart.draw_series(front.iter().step_by(step).filter(informative).map(|p| {
        PathElement::new(
            vec![
                (lane(p), clamp(p.score_low)),
                (lane(p), clamp(p.score_high)),
            ],
            BLACK.mix(0.35).stroke_width(2),
        )
    }))?;
    chart.draw_series(LineSeries::new(
        front.iter().map(|p| (lane(p), p.score)),
        BLACK.stroke_width(2),
    ))?;
    chart.draw_series(front.iter().map(|p| {
        Circle::new(
            (lane(p), p.score),
            5,
            colour(p.indices[Axis::Model]).filled(),
        )
    }))?;
    chart.draw_series(
        front
            .iter()
            .map(|p| Circle::new((lane(p), p.score), 5, BLACK.stroke_width(1))),
    )?;
    Ok(())
}

/// Each budget's recommendation, ringed, whether or not its cell is on the front (P(best) and
/// the best point prediction can differ).
fn draw_picks(
    chart: &mut FrontierChart,
    picks: &[Point],
    lane: &dyn Fn(&Point) -> f64,
) -> PlotResult {
    chart.draw_series(
        picks
            .iter()
            .map(|p| Circle::new((lane(p), p.score), 10, BLACK.stroke_width(2))),
    )?;
    Ok(())
}

/// Most whiskers drawn along the front.
const MAX_WHISKERS: usize = 12;

/// Height of the legend strip under the title, pixels.
const LEGEND_HEIGHT: u32 = 34;

/// The legend, in one row above the plot (it never covers a point): the models' colours, the
/// front's line and its whiskers.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, grid: &Grid) -> PlotResult {
    let font = ("sans-serif", TEXT).into_font().color(&BLACK);
    let mut x = 90;
    let y = 12;
    for (m, model) in grid.axes.model.iter().enumerate() {
        area.draw(&Circle::new((x, y + 6), 5, colour(m).filled()))?;
        area.draw(&Text::new(model.id.clone(), (x + 10, y), font.clone()))?;
        x += 24 + 8 * model.id.chars().count() as i32;
    }
    area.draw(&PathElement::new(
        vec![(x - 8, y + 6), (x + 8, y + 6)],
        BLACK.stroke_width(2),
    ))?;
    area.draw(&Text::new("frontier", (x + 14, y), font.clone()))?;
    x += 90;
    area.draw(&PathElement::new(
        vec![(x, y - 2), (x, y + 14)],
        BLACK.mix(0.35).stroke_width(2),
    ))?;
    area.draw(&Text::new(
        "90% interval, where within the plot",
        (x + 8, y),
        font.clone(),
    ))?;
    x += 300;
    area.draw(&Circle::new((x, y + 6), 8, BLACK.stroke_width(2)))?;
    area.draw(&Text::new("recommended", (x + 14, y), font))?;
    Ok(())
}

/// The tooltip of a front point: its regime, budget, score, dollars, GPU-hours and id.
fn front_tip(grid: &Grid, p: &Point) -> String {
    format!(
        "{} | budget {} | score {:.3} [{:.3}, {:.3}] | ${} | {} GPU-h | cell {}",
        crate::report::tables::regime_label(grid, p),
        crate::report::tables::budget_label(grid, p.indices[Axis::Budget]),
        p.score,
        p.score_low,
        p.score_high,
        crate::format::money(p.usd),
        crate::format::money(p.gpu_hours),
        p.id
    )
}

/// Half the width of a budget's strip, in ln dollars (the lanes of the models share it).
const STRIP_HALF_WIDTH_LN: f64 = 0.12;

/// The budgets in dollars when every cell of a budget costs about that budget (budgets in
/// dollars, or GPU-hours at the grid's one price); None otherwise (FLOP budgets and fixed
/// iterations: the cost varies by cell).
fn budget_strips(grid: &Grid) -> Option<Vec<f64>> {
    use crate::config::BudgetUnit;
    match &grid.axes.budget {
        crate::spec::BudgetAxis::Budgets { unit, amounts } => match unit {
            BudgetUnit::Usd => Some(amounts.clone()),
            BudgetUnit::GpuHours => Some(
                amounts
                    .iter()
                    .map(|h| h * grid.hardware.usd_per_gpu_hour)
                    .collect(),
            ),
            BudgetUnit::Flops => None,
        },
        crate::spec::BudgetAxis::Iterations(_) => None,
    }
}

/// The multiplier that moves model `m` of `models` into its lane of a budget's strip.
fn lane_factor(m: usize, models: usize) -> f64 {
    if models <= 1 {
        return 1.0;
    }
    let position = m as f64 / (models - 1) as f64 - 0.5;
    (2.0 * STRIP_HALF_WIDTH_LN * position).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_spread_the_models_symmetrically_inside_the_strip() {
        assert_eq!(lane_factor(0, 1), 1.0);
        let (first, last) = (lane_factor(0, 3), lane_factor(2, 3));
        assert!((first * last - 1.0).abs() < 1e-12);
        assert!((lane_factor(1, 3) - 1.0).abs() < 1e-12);
        assert!((last.ln() - STRIP_HALF_WIDTH_LN).abs() < 1e-12);
    }
}
