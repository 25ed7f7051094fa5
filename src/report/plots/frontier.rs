//! `frontier.svg`: predicted score against dollars, a sample of cells and the cost–score front.

use plotters::prelude::*;

use crate::analysis::frontier::{Aggregate, CostBasis, Point};
use crate::spec::Grid;

use super::*;

/// `frontier.svg`: with a shaded 90% band along the front, and every front point carrying its
/// full configuration as an SVG `<title>` (a tooltip in browsers, text for screen readers).
pub fn frontier(grid: &Grid, aggregate: &Aggregate) -> String {
    let mut tips: Vec<(i32, i32, String)> = Vec::new();
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
        let all: Vec<&Point> = aggregate.sample.iter().chain(front.iter()).collect();
        let (x0, x1) = log_range(all.iter().map(|p| p.usd));
        let (y0, y1) = padded(
            all.iter().map(|p| p.score).fold(f64::INFINITY, f64::min),
            all.iter()
                .map(|p| p.score)
                .fold(f64::NEG_INFINITY, f64::max),
            0.05,
        );
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("cost of the run (USD, log scale)")
            .y_desc(format!(
                "predicted {}",
                grid.metric.as_deref().unwrap_or("score")
            ))
            .x_label_formatter(&|x| log_tick(*x))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (m, model) in grid.axes.model.iter().enumerate() {
            let c = colour(m);
            chart
                .draw_series(
                    aggregate
                        .sample
                        .iter()
                        .filter(|p| p.indices.model == m)
                        .map(|p| Circle::new((p.usd, p.score), 2, c.mix(0.3).filled())),
                )?
                .label(model.id.clone())
                .legend(move |(x, y)| Circle::new((x, y), 5, c.filled()));
        }
        // The front's 90% predictive band, clamped to the plotted range.
        let clamp = |y: f64| y.clamp(y0, y1);
        let band: Vec<(f64, f64)> = front
            .iter()
            .map(|p| (p.usd, clamp(p.score_high)))
            .chain(front.iter().rev().map(|p| (p.usd, clamp(p.score_low))))
            .collect();
        if front.len() > 1 {
            chart
                .draw_series(std::iter::once(Polygon::new(
                    band,
                    BLACK.mix(0.05).filled(),
                )))?
                .label("90% band of the front (clipped to the plot)")
                .legend(|(x, y)| {
                    Rectangle::new([(x - 8, y - 5), (x + 8, y + 5)], BLACK.mix(0.12).filled())
                });
        }
        for p in &front {
            let (px, py) = chart.backend_coord(&(p.usd, p.score));
            tips.push((
                px,
                py,
                format!(
                    "{} | budget {} | score {:.3} [{:.3}, {:.3}] | ${} | {} GPU-h | cell {}",
                    crate::report::tables::regime_label(grid, p),
                    crate::report::tables::budget_label(grid, p.indices.budget),
                    p.score,
                    p.score_low,
                    p.score_high,
                    crate::format::money(p.usd),
                    crate::format::money(p.gpu_hours),
                    p.id
                ),
            ));
        }
        chart
            .draw_series(LineSeries::new(
                front.iter().map(|p| (p.usd, p.score)),
                BLACK.stroke_width(2),
            ))?
            .label("frontier")
            .legend(|(x, y)| PathElement::new(vec![(x - 8, y), (x + 8, y)], BLACK.stroke_width(2)));
        chart.draw_series(
            front
                .iter()
                .map(|p| Circle::new((p.usd, p.score), 5, colour(p.indices.model).filled())),
        )?;
        chart.draw_series(
            front
                .iter()
                .map(|p| Circle::new((p.usd, p.score), 5, BLACK.stroke_width(1))),
        )?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()?;
        Ok(())
    });
    with_tooltips(svg, &tips)
}
