//! `simplex.svg`: the three FLOP shares on a ternary plot, coloured by predicted score.

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
