//! `fit_<run>.svg` and `calibration.svg`: what `fit` draws.

use plotters::prelude::*;

use super::*;

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
    /// What the title adds about the fit: why there is none, or that the asymptote is not
    /// identified (None when the fit is sound).
    pub warning: Option<&'a str>,
}

/// The fit plot's axes: compute on a log range over points, curve and extrapolation; score
/// padded around every point and band edge.
fn fit_plot_ranges(plot: &FitPlot) -> ((f64, f64), (f64, f64)) {
    let xs = plot
        .points
        .iter()
        .map(|p| p.0)
        .chain(plot.curve.iter().map(|c| c.0))
        .chain(plot.extrapolation.iter().map(|c| c.0));
    let ys: Vec<f64> = plot
        .points
        .iter()
        .map(|p| p.1)
        .chain(plot.curve.iter().flat_map(|c| [c.2, c.3]))
        .chain(plot.extrapolation.iter().flat_map(|c| [c.2, c.3]))
        .filter(|v| v.is_finite())
        .collect();
    let y = padded(
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        0.08,
    );
    (log_range(xs), y)
}

/// `plots/fit_<run>.svg`: measured points, fitted sigmoid, bootstrap band, dashed extrapolation.
pub fn fit_plot(plot: &FitPlot) -> String {
    render(760, 480, |root| {
        let title = match plot.warning {
            None => format!("Pilot {}: score against compute", plot.run_id),
            Some(w) => format!("Pilot {}: score against compute ({w})", plot.run_id),
        };
        let ((x0, x1), (y0, y1)) = fit_plot_ranges(plot);
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", TITLE))
            .margin(14)
            .x_label_area_size(52)
            .y_label_area_size(72)
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(format!("compute spent ({}, log scale)", plot.unit))
            .y_desc("held-out score")
            .x_label_formatter(&|x| log_tick(*x))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let band = RGBColor(31, 119, 180);
        for (curve, opacity) in [(plot.curve, 0.18), (plot.extrapolation, 0.08)] {
            if curve.len() > 1 {
                chart.draw_series(std::iter::once(Polygon::new(
                    band_polygon(curve),
                    band.mix(opacity).filled(),
                )))?;
            }
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
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", TEXT))
            .draw()?;
        Ok(())
    })
}

/// A curve's band as one polygon: along its upper ends (the fourth value of each point), back
/// along its lower ends (the third).
fn band_polygon(curve: &[(f64, f64, f64, f64)]) -> Vec<(f64, f64)> {
    curve
        .iter()
        .map(|p| (p.0, p.3))
        .chain(curve.iter().rev().map(|p| (p.0, p.2)))
        .collect()
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
            .caption(&title, ("sans-serif", TITLE))
            .margin(14)
            .x_label_area_size(52)
            .y_label_area_size(72)
            .build_cartesian_2d(lo..hi, lo..hi)?;
        chart
            .configure_mesh()
            .x_desc("measured score")
            .y_desc("predicted score")
            .x_label_formatter(&|x| format!("{x:.3}"))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
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
            .label_font(("sans-serif", TEXT))
            .draw()?;
        Ok(())
    })
}
