//! The answer per budget, in one line each: the regime with the best predicted score, and the
//! knee, the cheapest regime (at this budget or a smaller one) whose predicted score is within
//! [`KNEE_POINTS`] percentage points of that best. When the cost–score front is flat, the knee
//! is what a team should buy: on a wide grid the best of a $1M budget is often a fraction of a
//! point above what $50k reaches.
//!
//! Both come from the shortlist pool (each budget's best-scoring cells), so the headline agrees
//! with the shortlist and costs nothing extra to compute.

use super::frontier::{Aggregate, Point};

/// How close to the best predicted score the knee must come, in percentage points (0-100
/// scale). One point is below the resolution of a typical 500-problem benchmark (its standard
/// error at a 50% pass rate is 2.2 points), so a regime within it is, for planning, as good.
pub const KNEE_POINTS: f64 = 1.0;

/// One budget's headline.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// Index of the budget on the budget axis.
    pub budget_index: usize,
    /// The best predicted score at this budget.
    pub best: Point,
    /// The cheapest regime within [`KNEE_POINTS`] of `best`, at this budget or a smaller one
    /// (in dollars; the best itself when nothing cheaper comes close).
    pub knee: Point,
}

impl Headline {
    /// Percentage points the knee gives up against the best.
    pub fn points_below_best(&self) -> f64 {
        100.0 * (self.best.score - self.knee.score)
    }

    /// The knee's dollars as a share of the best's.
    pub fn usd_share_of_best(&self) -> f64 {
        if self.best.usd > 0.0 {
            self.knee.usd / self.best.usd
        } else {
            1.0
        }
    }
}

/// The headline of every budget that has a feasible cell, in budget order.
pub fn headlines(aggregate: &Aggregate) -> Vec<Headline> {
    let by_score = |a: &&Point, b: &&Point| {
        a.score
            .total_cmp(&b.score)
            .then_with(|| b.usd.total_cmp(&a.usd))
            .then_with(|| b.id.cmp(&a.id))
    };
    let mut out = Vec::new();
    for (&budget_index, pool) in &aggregate.shortlist_pool {
        let Some(best) = pool.iter().max_by(by_score) else {
            continue;
        };
        let threshold = best.score - KNEE_POINTS / 100.0;
        let knee = aggregate
            .shortlist_pool
            .range(..=budget_index)
            .flat_map(|(_, cells)| cells.iter())
            .filter(|p| p.score >= threshold)
            .min_by(|a, b| {
                a.usd
                    .total_cmp(&b.usd)
                    .then_with(|| b.score.total_cmp(&a.score))
                    .then_with(|| a.id.cmp(&b.id))
            })
            .unwrap_or(best);
        out.push(Headline {
            budget_index,
            best: *best,
            knee: *knee,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::AxisIndices;

    fn point(id: u64, budget: usize, usd: f64, score: f64) -> Point {
        Point {
            id,
            indices: AxisIndices {
                budget,
                ..AxisIndices::default()
            },
            cost: usd,
            usd,
            gpu_hours: usd / 3.0,
            wall_hours: 1.0,
            score,
            score_low: score - 0.1,
            score_high: score + 0.1,
            base_score: 0.3,
            update_fraction: 0.5,
            flops_shares: [0.5, 0.5, 0.0],
            usd_shares: [0.7, 0.3, 0.0],
        }
    }

    #[test]
    fn the_knee_is_the_cheapest_regime_within_a_point_of_the_best() {
        let mut a = Aggregate::default();
        a.shortlist_pool.insert(
            0,
            vec![point(1, 0, 1_000.0, 0.700), point(2, 0, 900.0, 0.650)],
        );
        a.shortlist_pool.insert(
            1,
            vec![point(3, 1, 10_000.0, 0.712), point(4, 1, 9_000.0, 0.690)],
        );
        let h = headlines(&a);
        assert_eq!(h.len(), 2);
        // Budget 0: the best (0.700) and nothing within a point is cheaper than itself.
        assert_eq!((h[0].best.id, h[0].knee.id), (1, 1));
        // Budget 1: the best is 0.712; cell 1 from the smaller budget reaches 0.700 (1.2
        // points below: too far); cell 4 reaches 0.690 (2.2 below). With the threshold at
        // 0.702 only the best qualifies.
        assert_eq!((h[1].best.id, h[1].knee.id), (3, 3));
        // Raise cell 1 to 0.705: now within a point, and a tenth of the dollars.
        a.shortlist_pool.get_mut(&0).unwrap()[0].score = 0.705;
        let h = headlines(&a);
        assert_eq!((h[1].best.id, h[1].knee.id), (3, 1));
        assert!((h[1].points_below_best() - 0.7).abs() < 1e-9);
        assert!((h[1].usd_share_of_best() - 0.1).abs() < 1e-12);
    }
}
