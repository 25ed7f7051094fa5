//! A cheap test that a cell cannot be on the cost–score front: the staircase of points already
//! held as front candidates, per cost basis, and strict dominance against it.
//!
//! A sweep's first pass used to push every feasible cell into the front candidates and reduce
//! them to the union of the two fronts now and then. A point strictly dominated (no dearer and
//! no worse, and better on one of the two) on both cost bases by a point already held is never
//! on either front, and leaving it out changes no front: strict dominance is transitive, so
//! whatever dominates it stays held or is itself dominated by a point that does. The guard
//! answers that test with one search by score per basis, so the cell's point need not be built.

use super::frontier::{CostBasis, Point};

/// Per cost basis ([`CostBasis::BudgetUnit`], then [`CostBasis::Usd`]): a staircase of held
/// points (or of points a held point strictly dominates, which dominate no less).
#[derive(Debug, Clone, Default)]
pub(super) struct FrontGuard {
    staircases: [Staircase; 2],
}

/// Steps with cost strictly increasing and score strictly increasing; the costs apart from the
/// scores, so the search reads a dense array.
#[derive(Debug, Clone, Default)]
struct Staircase {
    costs: Vec<f64>,
    scores: Vec<f64>,
    /// Where the search for a score starts and ends ([`Buckets`]), when the scores allow it.
    buckets: Option<Buckets>,
}

/// A monotone index over a staircase's scores (any strictly increasing non-negative values), so
/// that a search reads a few neighbouring values instead of a chain of dependent loads across the
/// whole array (the guard's binary search was the largest single cost of a ten-million-cell first
/// pass).
///
/// For finite doubles with the sign bit clear the bit pattern, read as an integer, rises with
/// the value; its top bits (the exponent and the first 52 − `shift` bits of the mantissa) name a
/// bucket, 2^(52 − shift) per octave, with at most four buckets per value (and at least 64 in
/// all). A value in a lower bucket than the query is below it and one in a higher bucket above
/// it, so the answer lies among the values of the query's own bucket: the same index as the
/// search over the whole array, exactly.
#[derive(Debug, Clone)]
struct Buckets {
    /// Bits dropped from a value's bit pattern to make its key (52 less the mantissa bits kept).
    shift: u32,
    /// The bucket of the lowest value.
    first: u64,
    /// `starts[b]`: how many values lie in buckets below `first + b`; one more entry than
    /// buckets, the last the number of values.
    starts: Vec<u32>,
}

impl Buckets {
    /// At most this many buckets per value (fewer where the values cluster).
    const BUCKETS_PER_VALUE: u64 = 4;
    /// At most this many mantissa bits in a key (a million buckets per octave).
    const MAX_MANTISSA_BITS: u32 = 20;
    /// At most this many buckets, 256 KB.
    const MAX_BUCKETS: u64 = 1 << 16;

    /// The bucket of a finite value with its sign bit clear (-0.0 is refused by the callers).
    fn key(value: f64, shift: u32) -> u64 {
        value.to_bits() >> shift
    }

    /// The index over `values` (strictly increasing), or none when a value is negative, -0.0 or
    /// not finite, or the values span too many octaves for even one bucket per octave.
    fn of(values: &[f64]) -> Option<Self> {
        let (&low, &high) = (values.first()?, values.last()?);
        if !values.iter().all(|v| v.is_finite() && v.is_sign_positive()) {
            return None;
        }
        let wanted = (Self::BUCKETS_PER_VALUE * values.len() as u64).clamp(64, Self::MAX_BUCKETS);
        let buckets = |shift: u32| Self::key(high, shift) - Self::key(low, shift) + 1;
        // The most mantissa bits whose buckets stay within what is wanted.
        let shift = (0..=Self::MAX_MANTISSA_BITS)
            .rev()
            .map(|bits| 52 - bits)
            .find(|&shift| buckets(shift) <= wanted)?;
        if values.len() > u32::MAX as usize {
            return None;
        }
        let first = Self::key(low, shift);
        let count = buckets(shift);
        let mut starts = Vec::with_capacity(count as usize + 1);
        let mut below = 0usize;
        for b in 0..count {
            while below < values.len() && Self::key(values[below], shift) < first + b {
                below += 1;
            }
            starts.push(below as u32);
        }
        starts.push(values.len() as u32);
        Some(Buckets {
            shift,
            first,
            starts,
        })
    }

    /// The indices of the values in `value`'s bucket (its start is the count of values in lower
    /// buckets); `None` when the buckets cannot answer (a negative or non-finite query).
    fn range(&self, value: f64) -> Option<std::ops::Range<usize>> {
        if !(value.is_finite() && value.is_sign_positive()) {
            return None;
        }
        let key = Self::key(value, self.shift);
        let last = self.starts.len() - 1;
        let start = |b: u64| self.starts[b as usize] as usize;
        Some(if key < self.first {
            0..0
        } else if key - self.first >= last as u64 {
            start(last as u64)..start(last as u64)
        } else {
            let b = key - self.first;
            start(b)..start(b + 1)
        })
    }
}

impl Staircase {
    /// The staircase of `(cost, score)` pairs.
    fn of(mut pairs: Vec<(f64, f64)>) -> Self {
        // A NaN score would be kept as a lone first step that the search by score cannot place
        // (front candidates are finite: the fronts refuse non-finite values before this).
        debug_assert!(pairs.iter().all(|p| !p.1.is_nan()), "a NaN score");
        // Cheapest first; at one cost, the best score first (it is the only one kept).
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut steps = Staircase::default();
        for (cost, score) in pairs {
            if steps.scores.last().is_none_or(|&best| score > best) {
                steps.costs.push(cost);
                steps.scores.push(score);
            }
        }
        steps.buckets = Buckets::of(&steps.scores);
        steps
    }

    /// How many steps score at most `score` (the scores' `partition_point`).
    fn steps_scoring_at_most(&self, score: f64) -> usize {
        match self.buckets.as_ref().and_then(|b| b.range(score)) {
            Some(range) => range.start + self.scores[range].partition_point(|&s| s <= score),
            None => self.scores.partition_point(|&s| s <= score),
        }
    }

    /// Whether a step no dearer than `cost` scores higher, or as high for less. Searched by
    /// score, not by cost: in the budget unit most costs sit just below one of the grid's
    /// budgets, clustered where no index helps, while scores spread. The first step scoring
    /// above `score` is the cheapest such step (costs rise along the staircase), so it alone
    /// decides "higher"; the step before it alone can score exactly as high.
    fn strictly_dominates(&self, cost: f64, score: f64) -> bool {
        // Nothing scores above NaN, or as high.
        if score.is_nan() {
            return false;
        }
        let k = self.steps_scoring_at_most(score);
        (k < self.costs.len() && self.costs[k] <= cost)
            || (k > 0 && self.scores[k - 1] == score && self.costs[k - 1] < cost)
    }
}

impl FrontGuard {
    /// The staircases of `points` (on both bases).
    pub(super) fn of(points: &[Point]) -> Self {
        let staircase = |basis: CostBasis| {
            Staircase::of(points.iter().map(|p| (basis.cost(p), p.score)).collect())
        };
        FrontGuard {
            staircases: [staircase(CostBasis::BudgetUnit), staircase(CostBasis::Usd)],
        }
    }

    /// Whether a point of this cost in the budget unit, cost in dollars and score is strictly
    /// dominated on both bases (so it can be on neither front).
    pub(super) fn excludes(&self, cost: f64, usd: f64, score: f64) -> bool {
        self.staircases[0].strictly_dominates(cost, score)
            && self.staircases[1].strictly_dominates(usd, score)
    }
}

#[cfg(test)]
mod tests {
    use super::super::frontier::tests::point;
    use super::*;

    #[test]
    fn only_points_strictly_dominated_on_both_bases_are_excluded() {
        let guard = FrontGuard::of(&[point(0, 10.0, 100.0, 0.5), point(1, 20.0, 150.0, 0.7)]);
        // Dearer and worse on both bases.
        assert!(guard.excludes(15.0, 120.0, 0.4));
        // Equal cost and score on one basis: not strictly dominated there, so kept.
        assert!(!guard.excludes(10.0, 120.0, 0.5));
        assert!(guard.excludes(10.5, 100.5, 0.5));
        // Cheaper in dollars than anything held: it may be on the dollar front.
        assert!(!guard.excludes(15.0, 90.0, 0.4));
        // Better than the best held point.
        assert!(!guard.excludes(30.0, 300.0, 0.8));
        // Nothing held excludes nothing.
        assert!(!FrontGuard::default().excludes(1e9, 1e9, 0.0));
    }

    #[test]
    fn what_it_excludes_is_on_no_front_of_the_points_and_it() {
        // Random clouds: every excluded point is off both fronts of the held points plus it.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..200 {
            let held: Vec<Point> = (0..20)
                .map(|i| {
                    let cost = (next() * 8.0).round();
                    point(
                        i,
                        cost,
                        cost * 3.0 + (next() * 4.0).round(),
                        (next() * 5.0).round(),
                    )
                })
                .collect();
            let guard = FrontGuard::of(&held);
            for k in 0..50 {
                let cost = (next() * 8.0).round();
                let candidate = point(
                    100 + k,
                    cost,
                    cost * 3.0 + (next() * 4.0).round(),
                    (next() * 5.0).round(),
                );
                let mut all = held.clone();
                all.push(candidate);
                let on_a_front = [CostBasis::BudgetUnit, CostBasis::Usd]
                    .into_iter()
                    .any(|basis| {
                        super::super::frontier::front_of(&all, basis)
                            .iter()
                            .any(|p| p.id == candidate.id)
                    });
                if guard.excludes(candidate.cost, candidate.usd, candidate.score) {
                    assert!(
                        !on_a_front,
                        "{candidate:?} excluded but on a front of {held:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_bucketed_search_decides_as_the_definition_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for case in 0..300 {
            // Scores over 0 to 12 decades, costs on a coarse lattice (ties); every seventh case
            // with a zero score, 1,000 octaves below the rest (searched whole).
            let decades = (case % 13) as f64;
            let mut pairs: Vec<(f64, f64)> = (0..(1 + case % 200))
                .map(|_| ((next() * 50.0).round(), 10f64.powf(next() * decades - 3.0)))
                .collect();
            if case % 7 == 0 {
                pairs.push(((next() * 50.0).round(), 0.0));
            }
            let steps = Staircase::of(pairs.clone());
            if !steps.scores.contains(&0.0) {
                assert!(steps.buckets.is_some(), "case {case}");
            }
            let mut scores: Vec<f64> = steps.scores.clone();
            scores.extend(steps.scores.iter().map(|s| s * (1.0 + 1e-15)));
            scores.extend(steps.scores.iter().map(|s| s * (1.0 - 1e-15)));
            scores.extend((0..50).map(|_| 10f64.powf(next() * (decades + 4.0) - 5.0)));
            scores.extend([0.0, -0.0, -1.0, f64::INFINITY, f64::NAN, f64::MAX, 1e-320]);
            for (i, &score) in scores.iter().enumerate() {
                assert_eq!(
                    steps.steps_scoring_at_most(score),
                    steps.scores.partition_point(|&s| s <= score),
                    "case {case}, score {score:e}"
                );
                let cost = if i % 3 == 0 {
                    steps.costs[i % steps.costs.len()]
                } else {
                    (next() * 52.0).round() - 1.0
                };
                let by_definition = pairs
                    .iter()
                    .any(|&(c, s)| (c <= cost && s > score) || (c < cost && s == score));
                assert_eq!(
                    steps.strictly_dominates(cost, score),
                    by_definition,
                    "case {case}, cost {cost}, score {score:e}"
                );
            }
        }
        // Scores the buckets cannot index fall back to the whole search.
        let odd = Staircase::of(vec![(1.0, -1.0), (2.0, 0.5)]);
        assert!(odd.buckets.is_none());
        assert_eq!(odd.steps_scoring_at_most(0.0), 1);
        let wide = Staircase::of(vec![(1.0, 1e-300), (2.0, 1e300)]);
        assert!(wide.buckets.is_none());
        assert_eq!(wide.steps_scoring_at_most(1.0), 1);
        // A zero score among enough steps is indexed (one bucket per octave: its bucket is 0,
        // a thousand octaves below the rest) and searched as the whole array is.
        let pairs: Vec<(f64, f64)> = (0..300)
            .map(|i| (i as f64, if i == 0 { 0.0 } else { i as f64 / 300.0 }))
            .collect();
        let with_zero = Staircase::of(pairs);
        assert!(with_zero.buckets.is_some());
        for score in [0.0, -0.0, 1e-320, 0.5 / 300.0, 1.0 / 300.0, 0.5, 1.0, 2.0] {
            assert_eq!(
                with_zero.steps_scoring_at_most(score),
                with_zero.scores.partition_point(|&s| s <= score),
                "score {score:e}"
            );
        }
    }
}
