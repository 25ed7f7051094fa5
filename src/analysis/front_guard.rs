//! A cheap test that a cell cannot be on the cost–score front: the staircase of points already
//! held as front candidates, per cost basis, and strict dominance against it.
//!
//! A sweep's first pass used to push every feasible cell into the front candidates and reduce
//! them to the union of the two fronts now and then. A point strictly dominated (no dearer and
//! no worse, and better on one of the two) on both cost bases by a point already held is never
//! on either front, and leaving it out changes no front: strict dominance is transitive, so
//! whatever dominates it stays held or is itself dominated by a point that does. The guard
//! answers that test with one binary search per basis, so the cell's point need not be built.

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
}

impl Staircase {
    /// The staircase of `(cost, score)` pairs.
    fn of(mut pairs: Vec<(f64, f64)>) -> Self {
        // Cheapest first; at one cost, the best score first (it is the only one kept).
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut steps = Staircase::default();
        for (cost, score) in pairs {
            if steps.scores.last().is_none_or(|&best| score > best) {
                steps.costs.push(cost);
                steps.scores.push(score);
            }
        }
        steps
    }

    /// Whether a step no dearer than `cost` scores higher, or as high for less. The last step
    /// with cost ≤ `cost` has the best score of all such steps (scores rise along the
    /// staircase), so it alone decides.
    fn strictly_dominates(&self, cost: f64, score: f64) -> bool {
        let k = self.costs.partition_point(|&c| c <= cost);
        k > 0 && {
            let (c, s) = (self.costs[k - 1], self.scores[k - 1]);
            s > score || (s == score && c < cost)
        }
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
}
