//! `split.svg`: search, learning and feedback shares of the frontier cells, FLOPs against dollars.

use plotters::prelude::*;

use crate::analysis::frontier::{Aggregate, CostBasis, Point};
use crate::spec::Grid;

use super::*;

/// `split.svg`.
pub fn split(grid: &Grid, aggregate: &Aggregate) -> String {
    render(1000, 520, |root| {
        let title = format!(
            "Where the frontier's compute goes: FLOPs vs dollars, grid {}",
            grid.name
        );
        let front = aggregate.front(CostBasis::BudgetUnit);
        if front.is_empty() {
            return empty_message(root, &title);
        }
        let shown: Vec<Point> = if front.len() <= 24 {
            front.clone()
        } else {
            (0..24).map(|k| front[k * (front.len() - 1) / 23]).collect()
        };
        let root = root.titled(&title, ("sans-serif", 20))?;
        let (legend, charts) = root.split_vertically(28);
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        let centre = legend.dim_in_pixel().0 as i32 / 2;
        for (k, name) in BUCKET_NAMES.iter().enumerate() {
            let x = centre - 150 + 110 * k as i32;
            legend.draw(&Rectangle::new(
                [(x, 6), (x + 14, 20)],
                BUCKET_COLOURS[k].filled(),
            ))?;
            legend.draw(&Text::new(*name, (x + 20, 5), font.clone()))?;
        }
        let panels = charts.split_evenly((1, 2));
        for (panel, (name, dollars)) in panels
            .iter()
            .zip([("share of FLOPs", false), ("share of dollars", true)])
        {
            let n = shown.len() as f64;
            let mut chart = ChartBuilder::on(panel)
                .caption(name, ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(50)
                .build_cartesian_2d(0.0..n, 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_desc("frontier cells, cheapest to costliest")
                .y_desc(name)
                .x_labels(shown.len().min(12))
                .x_label_formatter(&|x| format!("{}", (*x as usize) + 1))
                .y_label_formatter(&|y| format!("{:.0}%", 100.0 * y))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            for (k, c) in BUCKET_COLOURS.iter().copied().enumerate() {
                let bars = shown.iter().enumerate().map(move |(i, p)| {
                    let shares = if dollars {
                        p.usd_shares
                    } else {
                        p.flops_shares
                    };
                    let below: f64 = shares[..k].iter().sum();
                    Rectangle::new(
                        [
                            (i as f64 + 0.12, below),
                            (i as f64 + 0.88, below + shares[k]),
                        ],
                        c.filled(),
                    )
                });
                chart.draw_series(bars)?;
            }
        }
        Ok(())
    })
}
