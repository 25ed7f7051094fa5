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

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::frontier::{Aggregate, CostBasis, Point};
use crate::spec::Grid;

use super::tables::budget_label;

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

/// `frontier.svg`.
pub fn frontier(grid: &Grid, aggregate: &Aggregate) -> String {
    render(1000, 640, |root| {
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
            .x_label_formatter(&|x| crate::format::number(*x))
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
    })
}

/// Budgets shown in the allocation plot: all when four or fewer, else four spread evenly.
fn shown_budgets(count: usize) -> Vec<usize> {
    if count <= 4 {
        (0..count).collect()
    } else {
        (0..4).map(|k| k * (count - 1) / 3).collect()
    }
}

/// `allocation.svg`.
pub fn allocation(grid: &Grid, aggregate: &Aggregate) -> String {
    let budgets = shown_budgets(grid.axes.budget.len());
    let series: Vec<(usize, usize)> = (0..grid.axes.model.len())
        .flat_map(|m| (0..grid.axes.reward.len()).map(move |r| (m, r)))
        .collect();
    let legend_rows = series.len().div_ceil(3) as u32;
    let width = (360 * budgets.len() as u32 + 40).max(760);
    let height = 480 + 24 * legend_rows;
    render(width, height, |root| {
        let title = format!(
            "Best predicted score against update fraction, grid {} (the RACE picture)",
            grid.name
        );
        if aggregate.allocation.is_empty() {
            return empty_message(root, &title);
        }
        let root = root.titled(&title, ("sans-serif", 20))?;
        let (charts, legend) = root.split_vertically(root.dim_in_pixel().1 - 24 * legend_rows - 16);
        let panels = charts.split_evenly((1, budgets.len()));
        for (panel, &b) in panels.iter().zip(&budgets) {
            let in_budget: Vec<&Point> = aggregate
                .allocation
                .iter()
                .filter(|((_, _, bb, _), _)| *bb == b)
                .map(|(_, p)| p)
                .collect();
            let (y0, y1) = padded(
                in_budget
                    .iter()
                    .map(|p| p.score)
                    .fold(f64::INFINITY, f64::min),
                in_budget
                    .iter()
                    .map(|p| p.score)
                    .fold(f64::NEG_INFINITY, f64::max),
                0.08,
            );
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!("budget {}", budget_label(grid, b)),
                    ("sans-serif", 16),
                )
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(55)
                .build_cartesian_2d(0.0..1.0, y0..y1)?;
            chart
                .configure_mesh()
                .x_desc("update fraction (learning share of FLOPs)")
                .y_desc("best predicted score")
                .y_label_formatter(&|y| format!("{y:.3}"))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            let mut best: Option<Point> = None;
            for &(m, r) in &series {
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
                    chart.draw_series(points.iter().map(|p| {
                        TriangleMarker::new((p.update_fraction, p.score), 4, c.filled())
                    }))?;
                }
            }
            if let Some(p) = best {
                chart.draw_series(std::iter::once(Circle::new(
                    (p.update_fraction, p.score),
                    9,
                    BLACK.stroke_width(2),
                )))?;
            }
        }
        // Legend strip under the panels: one entry per model and reward.
        let font = ("sans-serif", 13).into_font().color(&BLACK);
        let column_width = (legend.dim_in_pixel().0 as i32 - 40) / 3;
        for (k, &(m, r)) in series.iter().enumerate() {
            let x = 30 + (k % 3) as i32 * column_width;
            let y = 8 + (k / 3) as i32 * 24;
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
    })
}

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

/// A blue-to-yellow colour scale (viridis anchors) for t in [0, 1].
pub fn score_colour(t: f64) -> RGBColor {
    const ANCHORS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * 4.0;
    let i = (x.floor() as usize).min(3);
    let f = x - i as f64;
    let (a, b) = (ANCHORS[i], ANCHORS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Ternary coordinates of (search, learning, feedback) shares: search at (0, 0), learning at
/// (1, 0), feedback at (0.5, √3/2).
pub fn ternary(shares: [f64; 3]) -> (f64, f64) {
    let h = 3f64.sqrt() / 2.0;
    (shares[1] + shares[2] / 2.0, shares[2] * h)
}

/// `simplex.svg`.
pub fn simplex(grid: &Grid, aggregate: &Aggregate) -> String {
    render(820, 760, |root| {
        let title = format!(
            "FLOP split of feasible cells, coloured by predicted score, grid {}",
            grid.name
        );
        if aggregate.sample.is_empty() {
            return empty_message(root, &title);
        }
        let h = 3f64.sqrt() / 2.0;
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 18))
            .margin(20)
            .build_cartesian_2d(-0.12..1.12, -0.1..(h + 0.08))?;
        let corners = [(0.0, 0.0), (1.0, 0.0), (0.5, h)];
        // Guide lines at 25%, 50%, 75% of each share.
        for k in 1..4 {
            let t = k as f64 / 4.0;
            let grey = RGBColor(210, 210, 210);
            for (a, b) in [
                (ternary([1.0 - t, t, 0.0]), ternary([0.0, t, 1.0 - t])),
                (ternary([1.0 - t, 0.0, t]), ternary([0.0, 1.0 - t, t])),
                (ternary([t, 1.0 - t, 0.0]), ternary([t, 0.0, 1.0 - t])),
            ] {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![a, b],
                    grey.stroke_width(1),
                )))?;
            }
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![corners[0], corners[1], corners[2], corners[0]],
            BLACK.stroke_width(2),
        )))?;
        let (lo, hi) = aggregate
            .sample
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.score), b.max(p.score))
            });
        let span = (hi - lo).max(1e-9);
        chart.draw_series(aggregate.sample.iter().map(|p| {
            let (x, y) = ternary(p.flops_shares);
            Circle::new((x, y), 3, score_colour((p.score - lo) / span).filled())
        }))?;
        let font = ("sans-serif", 16).into_font().color(&BLACK);
        chart.draw_series(std::iter::once(Text::new(
            "search (100%)",
            (-0.1, -0.06),
            font.clone(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            "learning (100%)",
            (0.88, -0.06),
            font.clone(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            "feedback (100%)",
            (0.42, h + 0.05),
            font.clone(),
        )))?;
        // Colour legend.
        let small = ("sans-serif", 13).into_font().color(&BLACK);
        chart.draw_series(std::iter::once(Text::new(
            "predicted score",
            (0.86, h - 0.02),
            small.clone(),
        )))?;
        for k in 0..5 {
            let t = k as f64 / 4.0;
            let y = h - 0.08 - 0.06 * (4 - k) as f64;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.86, y), (0.9, y + 0.04)],
                score_colour(t).filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{:.3}", lo + t * span),
                (0.92, y + 0.03),
                small.clone(),
            )))?;
        }
        Ok(())
    })
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

/// What a per-run fit plot shows.
pub struct FitPlot<'a> {
    /// Run id (title).
    pub run_id: &'a str,
    /// Compute unit (axis label).
    pub unit: &'a str,
    /// Measured checkpoints (compute, score); those before the warm-up are drawn hollow.
    pub points: &'a [(f64, f64, bool)],
    /// Fitted curve sampled over the observed range (compute, score, low, high).
    pub curve: &'a [(f64, f64, f64, f64)],
    /// Extrapolation beyond the observed range (compute, score, low, high).
    pub extrapolation: &'a [(f64, f64, f64, f64)],
}

/// `plots/fit_<run>.svg`: measured points, fitted sigmoid, bootstrap band, dashed extrapolation.
pub fn fit_plot(plot: &FitPlot) -> String {
    render(760, 480, |root| {
        let title = format!("Pilot {}: score against compute", plot.run_id);
        let xs = plot
            .points
            .iter()
            .map(|p| p.0)
            .chain(plot.curve.iter().map(|c| c.0))
            .chain(plot.extrapolation.iter().map(|c| c.0));
        let (x0, x1) = log_range(xs);
        let ys: Vec<f64> = plot
            .points
            .iter()
            .map(|p| p.1)
            .chain(plot.curve.iter().flat_map(|c| [c.2, c.3]))
            .chain(plot.extrapolation.iter().flat_map(|c| [c.2, c.3]))
            .filter(|v| v.is_finite())
            .collect();
        let (y0, y1) = padded(
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            0.08,
        );
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(format!("compute spent ({}, log scale)", plot.unit))
            .y_desc("held-out score")
            .x_label_formatter(&|x| crate::format::number(*x))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let band = RGBColor(31, 119, 180);
        let band_polygon = |c: &[(f64, f64, f64, f64)]| -> Vec<(f64, f64)> {
            c.iter()
                .map(|p| (p.0, p.3))
                .chain(c.iter().rev().map(|p| (p.0, p.2)))
                .collect()
        };
        if plot.curve.len() > 1 {
            chart.draw_series(std::iter::once(Polygon::new(
                band_polygon(plot.curve),
                band.mix(0.18).filled(),
            )))?;
        }
        if plot.extrapolation.len() > 1 {
            chart.draw_series(std::iter::once(Polygon::new(
                band_polygon(plot.extrapolation),
                band.mix(0.08).filled(),
            )))?;
        }
        chart
            .draw_series(LineSeries::new(
                plot.curve.iter().map(|c| (c.0, c.1)),
                band.stroke_width(2),
            ))?
            .label("fitted sigmoid (90% bootstrap band)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x - 8, y), (x + 8, y)], band.stroke_width(2))
            });
        chart
            .draw_series(DashedLineSeries::new(
                plot.extrapolation.iter().map(|c| (c.0, c.1)),
                6,
                4,
                band.stroke_width(2),
            ))?
            .label("extrapolation to the grid's budgets")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x - 8, y), (x + 8, y)], band.stroke_width(1))
            });
        chart
            .draw_series(
                plot.points
                    .iter()
                    .filter(|p| p.0 > 0.0)
                    .map(|&(x, y, used)| {
                        if used {
                            Circle::new((x, y), 4, BLACK.filled())
                        } else {
                            Circle::new((x, y), 4, BLACK.stroke_width(1))
                        }
                    }),
            )?
            .label("measured (hollow: warm-up, not fitted)")
            .legend(|(x, y)| Circle::new((x, y), 4, BLACK.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    })
}

/// `plots/calibration.svg`: predicted against measured checkpoints, before and after calibration,
/// with the diagonal.
pub fn calibration_plot(
    title_grid: &str,
    prior: &[(f64, f64)],
    calibrated: &[(f64, f64)],
) -> String {
    render(640, 600, |root| {
        let title = format!("Calibration, grid {title_grid}: predicted against measured");
        let all = prior
            .iter()
            .chain(calibrated)
            .flat_map(|(a, b)| [*a, *b])
            .filter(|v| v.is_finite());
        let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        if !lo.is_finite() {
            return empty_message(root, &title);
        }
        let (lo, hi) = padded(lo, hi, 0.05);
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, lo..hi)?;
        chart
            .configure_mesh()
            .x_desc("measured score")
            .y_desc("predicted score")
            .x_label_formatter(&|x| format!("{x:.3}"))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        chart
            .draw_series(LineSeries::new([(lo, lo), (hi, hi)], BLACK.stroke_width(1)))?
            .label("perfect prediction")
            .legend(|(x, y)| PathElement::new(vec![(x - 8, y), (x + 8, y)], BLACK.stroke_width(1)));
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(
                prior
                    .iter()
                    .map(|&(m, p)| Circle::new((m, p), 3, grey.mix(0.6).filled())),
            )?
            .label("prior (uncalibrated)")
            .legend(move |(x, y)| Circle::new((x, y), 4, grey.filled()));
        let c = PALETTE[3];
        chart
            .draw_series(
                calibrated
                    .iter()
                    .map(|&(m, p)| Circle::new((m, p), 3, c.filled())),
            )?
            .label("calibrated")
            .legend(move |(x, y)| Circle::new((x, y), 4, c.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ternary_corners_and_centre() {
        assert_eq!(ternary([1.0, 0.0, 0.0]), (0.0, 0.0));
        assert_eq!(ternary([0.0, 1.0, 0.0]), (1.0, 0.0));
        let (x, y) = ternary([0.0, 0.0, 1.0]);
        assert!((x - 0.5).abs() < 1e-12 && (y - 3f64.sqrt() / 2.0).abs() < 1e-12);
        let (x, y) = ternary([1.0 / 3.0; 3]);
        assert!((x - 0.5).abs() < 1e-12 && (y - 3f64.sqrt() / 6.0).abs() < 1e-12);
    }

    #[test]
    fn colour_scale_ends_are_viridis_ends() {
        assert_eq!(score_colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(score_colour(1.0), RGBColor(253, 231, 37));
        assert_eq!(score_colour(f64::NAN), RGBColor(68, 1, 84));
    }
}
