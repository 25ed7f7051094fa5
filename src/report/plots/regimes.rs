//! `regimes.svg`: per budget, each shortlisted regime's predicted score against the
//! recommendation's, as a paired difference in points with its 90% interval (a forest plot),
//! labelled with the regime, its steps and its dollars. It answers the question a single-budget
//! grid asks ("how much better is the pick than the alternatives, and can the model tell?"),
//! where the frontier is a strip of dots at one price.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::analysis::decision::Decision;
use crate::report::tables::{budget_label, regime_label};
use crate::spec::Grid;

use super::*;

/// Pixels per regime row.
const ROW: i32 = 26;
/// Pixels of a budget's heading row.
const HEADING: i32 = 30;
/// Width of the label column.
const LABEL_WIDTH: i32 = 720;
/// Width of the difference panel.
const PANEL_WIDTH: i32 = 420;

/// The difference axis in points: symmetric about 0, covering every interval, at least ±1 point.
fn points_range(decisions: &[Decision]) -> f64 {
    decisions
        .iter()
        .flat_map(|d| d.compared.iter())
        .flat_map(|c| [c.difference.low, c.difference.high])
        .map(|x| (100.0 * x).abs())
        .fold(1.0, f64::max)
        * 1.08
}

/// `regimes.svg`.
pub fn regimes(grid: &Grid, decisions: &[Decision]) -> String {
    let rows: i32 = decisions.iter().map(|d| d.compared.len() as i32).sum();
    let top = 96;
    let height = (top + HEADING * decisions.len() as i32 + ROW * rows.max(1) + 64) as u32;
    let width = (LABEL_WIDTH + PANEL_WIDTH + 60) as u32;
    let title = format!(
        "Shortlisted regimes against the recommendation, paired difference in points, grid {}",
        grid.name
    );
    render(width, height, |root| {
        if decisions.is_empty() {
            return empty_message(root, &title);
        }
        let black = |size: u32| ("sans-serif", size).into_font().color(&BLACK);
        root.draw(&Text::new(title.clone(), (20, 12), black(TITLE)))?;
        root.draw(&Text::new(
            "regime: steps, dollars, P(best)  (rank 1 is the recommendation; a bar crossing 0 cannot be told from it)",
            (20, 48),
            black(TEXT),
        ))?;
        let span = points_range(decisions);
        let x0 = LABEL_WIDTH + 20;
        let to_x =
            |points: f64| x0 + ((points / span + 1.0) / 2.0 * PANEL_WIDTH as f64).round() as i32;
        let mut y = top;
        for d in decisions {
            root.draw(&Text::new(
                format!("budget {}", budget_label(grid, d.budget_index)),
                (20, y + 6),
                ("sans-serif", TEXT)
                    .into_font()
                    .style(FontStyle::Bold)
                    .color(&BLACK),
            ))?;
            y += HEADING;
            for (k, c) in d.compared.iter().enumerate() {
                let p = &c.point;
                let label = format!(
                    "{}. {}: {} steps, ${}, {}",
                    k + 1,
                    regime_label(grid, p),
                    crate::format::thousands(p.iterations as f64),
                    crate::format::money(p.usd),
                    crate::format::percent(c.probability_best)
                );
                root.draw(&Text::new(label, (20, y + 5), black(TEXT)))?;
                let mid = y + ROW / 2;
                let colour = if k == 0 { BLACK } else { colour_of(c) };
                root.draw(&PathElement::new(
                    vec![
                        (to_x(100.0 * c.difference.low), mid),
                        (to_x(100.0 * c.difference.high), mid),
                    ],
                    colour.stroke_width(3),
                ))?;
                root.draw(&Circle::new(
                    (to_x(100.0 * c.difference.median), mid),
                    5,
                    colour.filled(),
                ))?;
                y += ROW;
            }
        }
        draw_axis(root, x0, top, y + 4, span, &to_x)
    })
}

/// Grey when the difference spans 0 (indistinguishable), red when the regime is surely worse.
fn colour_of(c: &crate::analysis::decision::Compared) -> RGBColor {
    if c.difference.spans_zero() {
        RGBColor(110, 110, 110)
    } else {
        RGBColor(200, 60, 50)
    }
}

/// The zero line from `top` to `bottom` and the points axis under the rows, ticks at 0 and at
/// ±half and ±all of the span.
fn draw_axis(
    root: &DrawingArea<SVGBackend, Shift>,
    x0: i32,
    top: i32,
    bottom: i32,
    span: f64,
    to_x: &dyn Fn(f64) -> i32,
) -> PlotResult {
    root.draw(&PathElement::new(
        vec![(to_x(0.0), top), (to_x(0.0), bottom)],
        BLACK.mix(0.5).stroke_width(1),
    ))?;
    root.draw(&PathElement::new(
        vec![(x0, bottom), (x0 + PANEL_WIDTH, bottom)],
        BLACK.stroke_width(1),
    ))?;
    let font = ("sans-serif", TEXT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let step = nice_step(span / 2.0);
    let mut t = -(span / step).floor() * step;
    while t <= span + 1e-9 {
        let x = to_x(t);
        root.draw(&PathElement::new(
            vec![(x, bottom), (x, bottom + 5)],
            BLACK.stroke_width(1),
        ))?;
        let text = if t.abs() < 1e-9 {
            "0".to_string()
        } else {
            format!("{t:+}")
        };
        root.draw(&Text::new(text, (x, bottom + 8), font.clone()))?;
        t += step;
    }
    root.draw(&Text::new(
        "points against rank 1 (90% interval, paired)",
        (x0 + PANEL_WIDTH / 2, bottom + 30),
        font,
    ))?;
    Ok(())
}

/// The largest of 1, 2 or 5 times a power of ten at or below `x` (a tick step).
fn nice_step(x: f64) -> f64 {
    let power = 10f64.powf(x.max(1e-9).log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s <= x)
        .unwrap_or(power)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_steps_are_one_two_five() {
        assert_eq!(nice_step(7.3), 5.0);
        assert_eq!(nice_step(3.0), 2.0);
        assert_eq!(nice_step(1.5), 1.0);
        assert_eq!(nice_step(0.7), 0.5);
    }
}
