//! Joint draws of the outcome model over a set of cells (docs/design.md §8): what the shortlist's
//! P(best) and the recommendation's paired differences are computed from.
//!
//! One draw fixes the shared normals (the parameters' uncertainty, the shared part of the
//! discrepancy, the default base score and the start's floor) and, per cell, the cell's own
//! normals (its regime's discrepancy and its seed). A difference between two cells in the same
//! draw cancels what they share: two regimes of the same model share its base score entirely,
//! so a comparison between them is not blurred by not knowing it.
//!
//! Each cell's own normals come from a stream keyed by the grid's seed, the budget and the cell's
//! id, so a cell's draws do not depend on which other cells are drawn beside it (the shortlist's
//! pool and the recommendation's cheaper candidates can be drawn together or apart).

use crate::outcome::{DrawNormals, Parts, Spread, draw_score_at, parts, unshifted_progress};
use crate::rng::SplitMix64;
use crate::spec::Grid;

/// Joint draws per budget.
pub const DRAWS: usize = 1000;

/// Stream of the shared normals (plus the budget index).
const SHARED_STREAM: u64 = 0x5157_0000;

/// Stream tag of a cell's own normals (the budget index and the cell id are mixed in).
const CELL_STREAM: u64 = 0x5158_0000_0000_0000;

/// A quantity's median and 90% interval over the draws, in score units (0 to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The median.
    pub median: f64,
    /// The 5% quantile.
    pub low: f64,
    /// The 95% quantile.
    pub high: f64,
}

impl Interval {
    /// The interval of a sample (reordered in place): the order statistics at 5%, 50% and 95%,
    /// linearly interpolated. NaN values are dropped; an empty sample gives NaN.
    pub fn of_sample(values: &mut Vec<f64>) -> Self {
        values.retain(|v| !v.is_nan());
        Interval {
            median: quantile(values, 0.5),
            low: quantile(values, 0.05),
            high: quantile(values, 0.95),
        }
    }

    /// Whether 0 lies inside the interval (ends included): the sign of the quantity is not
    /// settled by the model.
    pub fn spans_zero(&self) -> bool {
        self.low <= 0.0 && 0.0 <= self.high
    }

    /// The width, high − low.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// The q-quantile of `values` (linear interpolation between the order statistics of the
/// values sorted by `total_cmp`), found by selection, not a sort: the same two order statistics,
/// so the same bits as reading them off the sorted values. Reorders `values`.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    match values.len() {
        0 => f64::NAN,
        1 => values[0],
        n => {
            let at = q * (n - 1) as f64;
            let (i, frac) = (at.floor() as usize, at - at.floor());
            let (_, &mut x, above) = values.select_nth_unstable_by(i, f64::total_cmp);
            // The next order statistic is the least of what the selection put above the i-th.
            let y = above.iter().copied().min_by(f64::total_cmp).unwrap_or(x);
            x + frac * (y - x)
        }
    }
}

/// The joint draws of a set of cells: per cell, its score in each draw.
#[derive(Debug, Clone)]
pub struct JointDraws {
    /// Cell ids, in the order given.
    ids: Vec<u64>,
    /// Scores, cell-major: cell k's draws are `scores[k * DRAWS..(k + 1) * DRAWS]`; NaN for a
    /// cell that cannot run.
    scores: Vec<f64>,
}

impl JointDraws {
    /// Draws `ids` (cells of `grid`) jointly for budget `budget_index` (deterministic: seeded by
    /// the grid's seed, the budget and each cell's id).
    pub fn of(grid: &Grid, budget_index: usize, ids: &[u64]) -> Self {
        let scales = Spread::of(&grid.outcome).draw_scales();
        let mut shared = vec![0.0; 3 * DRAWS];
        SplitMix64::new(grid.seed, SHARED_STREAM + budget_index as u64).fill_normals(&mut shared);
        let mut scores = vec![f64::NAN; ids.len() * DRAWS];
        let mut own = vec![0.0; 3 * DRAWS];
        for (k, &id) in ids.iter().enumerate() {
            let Some(cell) = cell_parts(grid, id) else {
                continue;
            };
            SplitMix64::new(grid.seed, cell_stream(budget_index, id)).fill_normals(&mut own);
            let progress = unshifted_progress(&cell);
            for d in 0..DRAWS {
                let normals = DrawNormals {
                    shared_gain: shared[3 * d],
                    shared_time: shared[3 * d + 1],
                    shared_base: shared[3 * d + 2],
                    cell_gain: own[3 * d],
                    cell_time: own[3 * d + 1],
                    seed: own[3 * d + 2],
                };
                scores[k * DRAWS + d] = draw_score_at(&cell, progress, &scales, &normals);
            }
        }
        JointDraws {
            ids: ids.to_vec(),
            scores,
        }
    }

    /// The cell ids drawn, in order.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    fn scores_of(&self, k: usize) -> &[f64] {
        &self.scores[k * DRAWS..(k + 1) * DRAWS]
    }

    /// For each of `members` (indices into [`Self::ids`]), the share of draws in which it scores
    /// highest among `members` (ties to the earlier member; cells that cannot run never win).
    pub fn probability_best(&self, members: &[usize]) -> Vec<f64> {
        let mut wins = vec![0usize; members.len()];
        for d in 0..DRAWS {
            let mut best: Option<(usize, f64)> = None;
            for (m, &k) in members.iter().enumerate() {
                let score = self.scores[k * DRAWS + d];
                if !score.is_nan() && best.is_none_or(|(_, b)| score > b) {
                    best = Some((m, score));
                }
            }
            if let Some((m, _)) = best {
                wins[m] += 1;
            }
        }
        wins.iter().map(|&w| w as f64 / DRAWS as f64).collect()
    }

    /// Cell `b`'s score minus cell `a`'s, draw by draw (what the two share cancels).
    pub fn difference(&self, a: usize, b: usize) -> Interval {
        let mut values: Vec<f64> = self
            .scores_of(b)
            .iter()
            .zip(self.scores_of(a))
            .map(|(y, x)| y - x)
            .collect();
        Interval::of_sample(&mut values)
    }

    /// Cell `k`'s score alone, over the draws.
    pub fn score(&self, k: usize) -> Interval {
        let mut values = self.scores_of(k).to_vec();
        Interval::of_sample(&mut values)
    }
}

/// The stream of a cell's own normals: the budget and the id mixed (SplitMix64's finaliser), so
/// that nearby ids and budgets get unrelated streams.
fn cell_stream(budget_index: usize, id: u64) -> u64 {
    let mut x = CELL_STREAM ^ id ^ ((budget_index as u64) << 40);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The outcome model's parts of a cell that can run.
fn cell_parts(grid: &Grid, id: u64) -> Option<Parts> {
    let e = crate::evaluate::evaluate_cell(grid, id)?;
    Some(parts(&grid.outcome, &e.signal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_a_known_sample() {
        // 0, 1, ..., 100: the 5% quantile is 5, the median 50, the 95% quantile 95.
        let mut v: Vec<f64> = (0..=100).rev().map(f64::from).collect();
        let i = Interval::of_sample(&mut v);
        assert_eq!((i.low, i.median, i.high), (5.0, 50.0, 95.0));
        // Interpolated: 0..=9 at q 0.05 is 0.45.
        let mut v: Vec<f64> = (0..10).map(f64::from).collect();
        assert!((Interval::of_sample(&mut v).low - 0.45).abs() < 1e-12);
        assert!(Interval::of_sample(&mut vec![f64::NAN]).median.is_nan());
    }

    #[test]
    fn selected_quantiles_are_the_sorted_ones_bit_for_bit() {
        // Random samples of every size up to 60, then 1,000, with ties, signed zeros and NaN.
        let mut rng = SplitMix64::new(5, 9);
        for n in (0..60).chain([1000]) {
            let mut v: Vec<f64> = (0..n)
                .map(|k| match k % 7 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => f64::NAN,
                    3 => 0.25,
                    _ => rng.uniform() - 0.5,
                })
                .collect();
            let mut sorted: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
            sorted.sort_by(f64::total_cmp);
            let by_sort = |q: f64| match sorted.len() {
                0 => f64::NAN,
                1 => sorted[0],
                m => {
                    let at = q * (m - 1) as f64;
                    let (i, frac) = (at.floor() as usize, at - at.floor());
                    let j = (i + 1).min(m - 1);
                    sorted[i] + frac * (sorted[j] - sorted[i])
                }
            };
            let i = Interval::of_sample(&mut v);
            for (got, q) in [(i.low, 0.05), (i.median, 0.5), (i.high, 0.95)] {
                assert_eq!(got.to_bits(), by_sort(q).to_bits(), "n {n}, q {q}");
            }
        }
    }

    #[test]
    fn streams_differ_by_budget_and_id() {
        let a = cell_stream(0, 1);
        assert_ne!(a, cell_stream(0, 2));
        assert_ne!(a, cell_stream(1, 1));
    }
}
