//! `simplex.svg`: the three FLOP shares of the sampled cells, coloured by predicted score.

use crate::spec::Axis;
use plotters::prelude::*;

use crate::analysis::frontier::Aggregate;
use crate::spec::Grid;

use super::*;

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

/// `simplex.svg`: the three FLOP shares of every sampled cell, drawn as a plain scatter rather
/// than a ternary plot (whose points crowd one corner and carry no ticks): the learning share
/// (RACE's update fraction) across, the feedback share up, the search share the rest
/// (1 − the two), each axis fitted to the data; colour is the predicted score.
pub fn simplex(grid: &Grid, aggregate: &Aggregate) -> String {
    render(900, 680, |root| {
        let title = format!(
            "FLOP split of feasible cells, coloured by predicted score, grid {}",
            grid.name
        );
        if aggregate.sample.is_empty() {
            return empty_message(root, &title);
        }
        let sample = &aggregate.sample;
        let range = |f: &dyn Fn(&crate::analysis::frontier::Point) -> f64| share_range(sample, f);
        // Without feedback FLOPs the split is one number (learning against search): it is then
        // drawn against the predicted score, coloured by model.
        let no_feedback = sample.iter().all(|p| p.flops_shares[2] < 1e-3);
        let y_of = |p: &crate::analysis::frontier::Point| {
            if no_feedback {
                p.score
            } else {
                p.flops_shares[2]
            }
        };
        let (x0, x1) = range(&|p| p.flops_shares[1]);
        let (y0, y1) = range(&y_of);
        let root = root.titled(&title, ("sans-serif", TITLE))?;
        let (plot, bar) = root.split_horizontally(780);
        let mut chart = ChartBuilder::on(&plot)
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(76)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("learning share of FLOPs (update fraction); search is the rest")
            .y_desc(if no_feedback {
                "predicted score"
            } else {
                "feedback share of FLOPs"
            })
            .x_label_formatter(&|x| percent_tick(*x, x1 - x0))
            .y_label_formatter(&|y| {
                if no_feedback {
                    format!("{y:.3}")
                } else {
                    percent_tick(*y, y1 - y0)
                }
            })
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let (lo, hi) = sample
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.score), b.max(p.score))
            });
        let span = (hi - lo).max(1e-9);
        chart.draw_series(sample.iter().map(|p| {
            let fill = if no_feedback {
                colour(p.indices[Axis::Model])
            } else {
                score_colour((p.score - lo) / span)
            };
            Circle::new((p.flops_shares[1], y_of(p)), 3, fill.filled())
        }))?;
        if no_feedback {
            plot.draw(&Text::new(
                "no cell spends FLOPs on feedback: the split is learning against search, shown against the score",
                (96, 2),
                ("sans-serif", TEXT).into_font().color(&BLACK),
            ))?;
            draw_model_key(&bar, grid)
        } else {
            draw_colour_bar(&bar, lo, span)
        }
    })
}

/// An axis of shares (or scores) over the sample: their lowest to highest value (at least 0.01
/// apart), padded by 6% and kept within [0, 1].
fn share_range(
    sample: &[crate::analysis::frontier::Point],
    f: &dyn Fn(&crate::analysis::frontier::Point) -> f64,
) -> (f64, f64) {
    let (lo, hi) = sample
        .iter()
        .map(f)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = padded(lo, hi.max(lo + 0.01), 0.06);
    (lo.max(0.0), hi.min(1.0))
}

/// A percentage tick with as many decimals as an axis spanning `span` (a share) needs to tell
/// its ticks apart.
fn percent_tick(x: f64, span: f64) -> String {
    let step_percent = (100.0 * span / 10.0).max(1e-9);
    let decimals = (-step_percent.log10()).ceil().clamp(0.0, 3.0) as usize;
    format!("{:.*}%", decimals, 100.0 * x)
}

/// The models' colours, one per line.
fn draw_model_key(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    grid: &Grid,
) -> PlotResult {
    let font = ("sans-serif", TEXT).into_font().color(&BLACK);
    for (m, model) in grid.axes.model.iter().enumerate() {
        let y = 40 + 26 * m as i32;
        area.draw(&Circle::new((12, y + 7), 5, colour(m).filled()))?;
        area.draw(&Text::new(model.id.clone(), (22, y), font.clone()))?;
    }
    Ok(())
}

/// The colour bar: five swatches with their predicted scores.
fn draw_colour_bar(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    lo: f64,
    span: f64,
) -> PlotResult {
    let font = ("sans-serif", TEXT).into_font().color(&BLACK);
    area.draw(&Text::new("predicted", (4, 40), font.clone()))?;
    area.draw(&Text::new("score", (4, 58), font.clone()))?;
    for k in 0..5 {
        let t = k as f64 / 4.0;
        let y = 90 + 36 * (4 - k);
        area.draw(&Rectangle::new(
            [(6, y), (30, y + 28)],
            score_colour(t).filled(),
        ))?;
        area.draw(&Text::new(
            format!("{:.3}", lo + t * span),
            (36, y + 6),
            font.clone(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_ticks_carry_the_decimals_their_axis_needs() {
        assert_eq!(percent_tick(0.5, 0.6), "50%");
        assert_eq!(percent_tick(0.8925, 0.02), "89.2%");
        assert_eq!(percent_tick(0.89251, 0.002), "89.25%");
    }

    #[test]
    fn colour_scale_ends_are_viridis_ends() {
        assert_eq!(score_colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(score_colour(1.0), RGBColor(253, 231, 37));
        assert_eq!(score_colour(f64::NAN), RGBColor(68, 1, 84));
    }
}
