//! One recommendation per budget, standing on differences (docs/design.md §8).
//!
//! The shortlist ranks a budget's regimes by the probability that each is the best
//! ([`crate::analysis::shortlist`]); the recommendation is its first entry, so the best, the
//! cheaper alternative and the shortlist are views of one ranking. For every listed regime it
//! gives the difference to the recommended one with its own 90% interval, from the same joint
//! draws: what two regimes share (the model's parameters, the shared discrepancy, the default
//! base score of a model they both train) cancels, so the difference interval is much narrower
//! than either absolute interval. Then:
//!
//! - **No clear lead**: when the recommendation's P(best) is below [`CLEAR_LEAD`] and the
//!   runner-up's difference interval spans 0, the regimes whose difference spans 0 are reported
//!   as one group, indistinguishable under the current model.
//! - **A second validation run**: among the other listed regimes that could be the best (their
//!   difference spans 0; all listed ones when none does), the one that differs from the
//!   recommendation on the most axes: validating it tells the most about where the answer lies.
//! - **Cheaper and within noise**: the cheapest regime, at this budget or a smaller one, that
//!   costs at most [`CHEAPER_SHARE`] of the recommendation's dollars and whose difference to it
//!   spans 0.
//! - **Why**: the recommendation's predicted advantage over the runner-up, and over the cheaper
//!   regime within noise, split over the levers in points and in dollars
//!   ([`crate::analysis::why`]).
//! - **Edges**: the axes the recommendation sits at the edge of, to extend first.

use crate::analysis::draws::{Interval, JointDraws};
use crate::analysis::frontier::{Aggregate, Point};
use crate::analysis::shortlist::{self, Entry, Flag};
use crate::analysis::why::{LeverShare, explain as split_by_lever};
use crate::spec::Axis;
use crate::spec::{AxisIndices, Grid};

/// The P(best) at or above which the recommendation has a clear lead whatever the runner-up's
/// difference (issue 25: "say P(best) < 0.5").
pub const CLEAR_LEAD: f64 = 0.5;

/// A cheaper alternative must cost at most this share of the recommendation's dollars: on
/// dollar grids every cell of a budget spends about the budget, and "99.9% of the dollars" is
/// no alternative.
pub const CHEAPER_SHARE: f64 = 0.9;

/// Cheaper candidates drawn beside the pool (the best-scoring ones under the dollar bound).
pub const CHEAPER_DRAWN: usize = 64;

/// A regime compared with the recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The cell.
    pub point: Point,
    /// Its probability of being the best of its budget (0 for a cheaper regime drawn from a
    /// smaller budget).
    pub probability_best: f64,
    /// Its score minus the recommendation's, over the joint draws (score units).
    pub difference: Interval,
    /// Its gain over its own base score: the predicted score and its 90% interval less the base
    /// (score units; the gain that dollars per point divide by).
    pub gain: Interval,
}

/// One budget's recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Index of the budget on the budget axis.
    pub budget_index: usize,
    /// The shortlist of this budget, rank order (the recommendation first).
    pub shortlist: Vec<Entry>,
    /// Each shortlist entry compared with the recommendation (parallel to `shortlist`; the
    /// first is the recommendation itself, its difference 0).
    pub compared: Vec<Compared>,
    /// Whether the recommendation has a clear lead (see the module doc).
    pub clear_lead: bool,
    /// Indices into `compared` of the regimes indistinguishable from the recommendation (the
    /// recommendation included), when it has no clear lead; empty when it has one.
    pub indistinguishable: Vec<usize>,
    /// Index into `compared` of the second regime to validate.
    pub second: Option<usize>,
    /// The cheapest regime within noise of the recommendation.
    pub cheaper: Option<Compared>,
    /// The regime the advantage is explained against (the shortlist's rank 2, else the pool's
    /// best-scoring other regime).
    pub runner_up: Option<Compared>,
    /// The recommendation's advantage over the runner-up, by lever (points and dollars).
    pub why: Vec<LeverShare>,
    /// The recommendation's advantage over the cheaper regime within noise, by lever (empty
    /// when there is none).
    pub why_cheaper: Vec<LeverShare>,
}

/// Every budget's shortlist entries, in budget and rank order.
pub fn shortlist_entries(decisions: &[Decision]) -> Vec<Entry> {
    decisions
        .iter()
        .flat_map(|d| d.shortlist.iter().cloned())
        .collect()
}

impl Decision {
    /// The recommended regime.
    pub fn recommended(&self) -> &Compared {
        &self.compared[0]
    }

    /// The grid-edge flags of the recommendation (the axes to extend first).
    pub fn edges(&self) -> Vec<&Flag> {
        self.shortlist[0]
            .flags
            .iter()
            .filter(|f| matches!(f, Flag::LowerEdge { .. } | Flag::UpperEdge { .. }))
            .collect()
    }
}

/// The recommendation of every budget that has a feasible cell, in budget order. Budgets are
/// decided in parallel on the current rayon pool (each from its own draws, so the result does not
/// depend on the thread count); a stop request skips the budgets not yet started, and the
/// caller's commit then refuses to write.
pub fn decide(grid: &Grid, aggregate: &Aggregate) -> Vec<Decision> {
    use rayon::prelude::*;
    let budgets: Vec<usize> = aggregate.shortlist_pool.keys().copied().collect();
    budgets
        .par_iter()
        .filter_map(|&b| {
            crate::interrupt::requested()
                .is_none()
                .then(|| decide_budget(grid, aggregate, b))
                .flatten()
        })
        .collect()
}

/// A point's predicted score and interval less its base score: the one gain every output
/// states, the one [`crate::evaluate::usd_per_point`] divides by.
pub fn gain_over_base(p: &Point) -> Interval {
    Interval {
        median: p.score - p.base_score,
        low: p.score_low - p.base_score,
        high: p.score_high - p.base_score,
    }
}

/// One budget's decision (None when the budget has no listed regime).
fn decide_budget(grid: &Grid, aggregate: &Aggregate, budget_index: usize) -> Option<Decision> {
    let pool = shortlist::drawn_pool(aggregate.shortlist_pool.get(&budget_index)?);
    let mut ids: Vec<u64> = pool.iter().map(|p| p.id).collect();
    let members: Vec<usize> = (0..pool.len()).collect();
    let cheaper = cheaper_candidates(aggregate, budget_index, &pool);
    ids.extend(cheaper.iter().map(|p| p.id));
    let draws = JointDraws::of(grid, budget_index, &ids);
    let probability = draws.probability_best(&members);
    let entries = shortlist::entries(grid, budget_index, &pool, &probability);
    let first = entries.first()?;
    let index_of = |id: u64| ids.iter().position(|&x| x == id);
    let a = index_of(first.point.id)?;
    let compare = |k: usize, point: Point, probability_best: f64| Compared {
        point,
        probability_best,
        difference: draws.difference(a, k),
        gain: gain_over_base(&point),
    };
    let compared: Vec<Compared> = entries
        .iter()
        .filter_map(|e| Some(compare(index_of(e.point.id)?, e.point, e.probability_best)))
        .collect();
    let plausible: Vec<usize> = (1..compared.len())
        .filter(|&k| compared[k].difference.spans_zero())
        .collect();
    let clear_lead = compared[0].probability_best >= CLEAR_LEAD
        || compared.get(1).is_none_or(|r| !r.difference.spans_zero());
    let indistinguishable = if clear_lead {
        Vec::new()
    } else {
        std::iter::once(0)
            .chain(plausible.iter().copied())
            .collect()
    };
    let candidates = if plausible.is_empty() {
        (1..compared.len()).collect()
    } else {
        plausible
    };
    let second = most_different(&compared, &candidates);
    let cheapest = (pool.len()..ids.len())
        .map(|k| compare(k, cheaper[k - pool.len()], 0.0))
        .filter(|c| c.difference.spans_zero())
        .min_by(|x, y| {
            x.point
                .usd
                .total_cmp(&y.point.usd)
                .then(x.point.id.cmp(&y.point.id))
        });
    let runner_up = match compared.get(1) {
        Some(r) => Some(r.clone()),
        None => pool
            .iter()
            .enumerate()
            .find(|(_, p)| !shortlist::near_duplicate(grid, &first.point.indices, &p.indices))
            .map(|(k, p)| compare(k, *p, probability[k])),
    };
    let why = runner_up
        .as_ref()
        .and_then(|r| explain(grid, &first.point, &r.point))
        .unwrap_or_default();
    let why_cheaper = cheapest
        .as_ref()
        .and_then(|c| explain(grid, &first.point, &c.point))
        .unwrap_or_default();
    Some(Decision {
        budget_index,
        compared,
        clear_lead,
        indistinguishable,
        second,
        cheaper: cheapest,
        runner_up,
        why,
        why_cheaper,
        shortlist: entries,
    })
}

/// Cells of this budget or a smaller one that cost at most [`CHEAPER_SHARE`] of the pool's best
/// cell's dollars, the best [`CHEAPER_DRAWN`] by predicted score (then id), not already in the
/// pool.
fn cheaper_candidates(aggregate: &Aggregate, budget_index: usize, pool: &[Point]) -> Vec<Point> {
    let Some(top_usd) = pool.first().map(|p| p.usd) else {
        return Vec::new();
    };
    let mut candidates: Vec<Point> = aggregate
        .shortlist_pool
        .range(..=budget_index)
        .flat_map(|(_, cells)| cells.iter().copied())
        .filter(|p| p.usd <= CHEAPER_SHARE * top_usd && !pool.iter().any(|q| q.id == p.id))
        .collect();
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    candidates.dedup_by_key(|p| p.id);
    candidates.truncate(CHEAPER_DRAWN);
    candidates
}

/// Among `candidates` (indices into `compared`), the regime that differs from the first on the
/// most axes; ties to the higher P(best), then the lower id.
fn most_different(compared: &[Compared], candidates: &[usize]) -> Option<usize> {
    let a = &compared.first()?.point.indices;
    candidates.iter().copied().max_by(|&x, &y| {
        let (px, py) = (&compared[x], &compared[y]);
        axes_apart(a, &px.point.indices)
            .cmp(&axes_apart(a, &py.point.indices))
            .then(px.probability_best.total_cmp(&py.probability_best))
            .then(py.point.id.cmp(&px.point.id))
    })
}

/// On how many axes two cells differ (the budget aside).
pub fn axes_apart(a: &AxisIndices, b: &AxisIndices) -> usize {
    Axis::ALL
        .into_iter()
        .filter(|&axis| axis != Axis::Budget && a[axis] != b[axis])
        .count()
}

/// The Shapley split of `winner`'s advantage over `other`, in points and dollars (None when
/// either cell is pruned).
fn explain(grid: &Grid, winner: &Point, other: &Point) -> Option<Vec<LeverShare>> {
    let evaluated = |id: u64| crate::evaluate::evaluate_cell(grid, id);
    Some(split_by_lever(
        grid,
        &evaluated(winner.id)?,
        &evaluated(other.id)?,
    ))
}
