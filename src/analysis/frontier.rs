//! Streaming aggregation of a sweep: the cost–score frontier, the allocation frontiers, the
//! shortlist candidates and a plot sample, each reduced per chunk and merged in chunk order, so
//! memory does not grow with the cell count and the result does not depend on the thread count.

use crate::spec::Axis;
use std::collections::BTreeMap;

use crate::analysis::front_guard::FrontGuard;
use crate::analysis::pareto::{Sense, front_2d};
use crate::evaluate::CostShares;
use crate::ledger::{Bucket, INFEASIBLE_KINDS, InfeasibleKind, Ledger};
use crate::outcome::Prediction;
use crate::spec::{AxisIndices, Cell};

/// Width of an update-fraction bin in `allocation_frontier.csv`.
pub const UPDATE_FRACTION_BIN: f64 = 0.05;

/// Candidates kept per budget for the shortlist.
pub const SHORTLIST_POOL: usize = 256;

/// Target number of feasible cells drawn in the scatter plots.
pub const PLOT_SAMPLE: u64 = 4000;

/// Front candidates held before they are reduced to the union of the two fronts: small enough
/// to stay in cache, large enough that the reduction (a sort) is rare. The reduction is exact
/// (a point off the front of a subset is off the front of the whole), so the value only moves
/// speed.
const FRONT_CANDIDATES_HELD: usize = 4096;

/// A feasible cell as the frontier and shortlist see it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Cell id.
    pub id: u64,
    /// Axis indices.
    pub indices: AxisIndices,
    /// Spend in the grid's budget unit (dollars in fixed-iterations grids).
    pub cost: f64,
    /// Spend in dollars.
    pub usd: f64,
    /// GPU-hours.
    pub gpu_hours: f64,
    /// Wall-clock hours.
    pub wall_hours: f64,
    /// Iterations (optimizer steps of the policy's batch: the steps the run is told to take).
    pub iterations: u64,
    /// Predicted score, and its interval.
    pub score: f64,
    /// Low end.
    pub score_low: f64,
    /// High end.
    pub score_high: f64,
    /// Base score R0 of the cell's policy.
    pub base_score: f64,
    /// Learning share of FLOPs (RACE's update fraction).
    pub update_fraction: f64,
    /// FLOP shares (search, learning, feedback).
    pub flops_shares: [f64; 3],
    /// Dollar shares (search, learning, feedback).
    pub usd_shares: [f64; 3],
}

impl Point {
    /// The point of an evaluated feasible cell.
    pub fn of(cell: &Cell, ledger: &Ledger, prediction: &Prediction, cost: f64) -> Self {
        let shares = |f: &dyn Fn(Bucket) -> f64| {
            [f(Bucket::Search), f(Bucket::Learning), f(Bucket::Feedback)]
        };
        Point {
            id: cell.id,
            indices: cell.indices,
            cost,
            usd: ledger.total_usd(),
            gpu_hours: ledger.total_gpu_hours(),
            wall_hours: ledger.wall_hours(),
            iterations: ledger.iterations,
            score: prediction.score,
            score_low: prediction.score_low,
            score_high: prediction.score_high,
            base_score: prediction.base_score,
            update_fraction: ledger.flops_share(Bucket::Learning),
            flops_shares: shares(&|b| ledger.flops_share(b)),
            usd_shares: shares(&|b| ledger.usd_share(b)),
        }
    }

    fn better_than(&self, other: &Point) -> bool {
        Rank::of(self).beats(Rank::of(other))
    }
}

/// What the aggregate reads of a feasible cell before it knows whether it needs the cell's whole
/// [`Point`]: each field is the value `Point::of` gives (bit for bit), so a cell can be
/// aggregated from its probe and its point built only when a frontier, pool or sample takes it.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    /// Cell id.
    pub id: u64,
    /// Axis indices.
    pub indices: AxisIndices,
    /// Spend in the grid's budget unit.
    pub cost: f64,
    /// Spend in dollars.
    pub usd: f64,
    /// Predicted score.
    pub score: f64,
    /// Learning share of FLOPs.
    pub update_fraction: f64,
    /// Search share of FLOPs.
    pub flops_share_search: f64,
    /// Search share of dollars.
    pub usd_share_search: f64,
}

impl Probe {
    /// The probe of a feasible cell with this predicted score and these costs and shares.
    pub fn of(cell: &Cell, score: f64, c: &CostShares) -> Self {
        Probe {
            id: cell.id,
            indices: cell.indices,
            cost: c.cost,
            usd: c.usd,
            score,
            update_fraction: c.learning_flops_share,
            flops_share_search: c.search_flops_share,
            usd_share_search: c.search_usd_share,
        }
    }

    /// The probe a point was built from.
    pub fn of_point(p: &Point) -> Self {
        Probe {
            id: p.id,
            indices: p.indices,
            cost: p.cost,
            usd: p.usd,
            score: p.score,
            update_fraction: p.update_fraction,
            flops_share_search: p.flops_shares[0],
            usd_share_search: p.usd_shares[0],
        }
    }
}

/// What decides which of two points is better: the higher score, then the lower id (a strict
/// total order, since ids are unique).
#[derive(Debug, Clone, Copy)]
struct Rank {
    score: f64,
    id: u64,
}

impl Rank {
    fn of(p: &Point) -> Self {
        Rank {
            score: p.score,
            id: p.id,
        }
    }

    fn beats(self, other: Rank) -> bool {
        self.score > other.score || (self.score == other.score && self.id < other.id)
    }
}

/// A multiply-rotate hash of an allocation bin's four indices (after FxHash): the bins are
/// small integers and never chosen by an adversary, and the map is only looked up, never
/// iterated, so neither the hash's quality nor its order reaches an output.
#[derive(Debug, Default, Clone, Copy)]
struct BinHasher(u64);

impl std::hash::Hasher for BinHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type BinHash = std::hash::BuildHasherDefault<BinHasher>;

/// Key of an allocation-frontier bin: model, reward and budget indices, and the update-fraction bin.
pub type BinKey = (usize, usize, usize, usize);

/// Everything a sweep aggregates.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "AggregateFile", into = "AggregateFile")]
pub struct Aggregate {
    /// Cells evaluated.
    pub evaluated: u64,
    /// Cells pruned by constraints.
    pub pruned: u64,
    /// Feasible cells.
    pub feasible: u64,
    /// Infeasible cells per reason, in [`InfeasibleKind::ALL`] order.
    pub infeasible: [u64; INFEASIBLE_KINDS],
    /// Sum of search dollar shares over feasible cells, in units of 1e-15 (integer addition is
    /// associative, so the mean does not depend on how cells were split into chunks or shards).
    pub usd_share_search_sum: i128,
    /// Sum of search FLOP shares over feasible cells, in units of 1e-15.
    pub flops_share_search_sum: i128,
    /// Candidates for the two cost–score fronts (budget unit and dollars).
    pub front_candidates: Vec<Point>,
    /// Best cell per allocation bin.
    pub allocation: BTreeMap<BinKey, Point>,
    /// Best cells per budget index, at most [`SHORTLIST_POOL`], best first.
    pub shortlist_pool: BTreeMap<usize, Vec<Point>>,
    /// A deterministic sample of feasible cells for scatter plots.
    pub sample: Vec<Point>,
    /// Per budget, the worst member of the shortlist pool after its last trim (a speed-up only).
    pool_floor: BTreeMap<usize, Rank>,
    /// Per allocation bin, a point no better than the bin's best (a speed-up only: a cell that
    /// does not beat it does not beat the best, so most cells skip the ordered map).
    allocation_floor: std::collections::HashMap<BinKey, Rank, BinHash>,
    /// Staircases of front candidates held (here or, after [`Aggregate::after`], in the
    /// aggregate this one is merged into): a cell they strictly dominate on both cost bases is
    /// not pushed (a speed-up only; see `front_guard`).
    front_guard: FrontGuard,
}

/// A share in units of 1e-15, for order-independent sums.
fn fixed(x: f64) -> i128 {
    let units = (x * 1e15).round();
    // Through i64 (one instruction) when it holds the value exactly; `as i128` otherwise
    // (shares are in [0, 1], so that is only for values that are not shares).
    if units.abs() < 9.0e18 {
        units as i64 as i128
    } else {
        units as i128
    }
}

impl Aggregate {
    /// Adds one feasible cell.
    pub fn add_feasible(&mut self, point: Point, sample_stride: u64) {
        self.add_probed(Probe::of_point(&point), sample_stride, || point);
    }

    /// Adds one feasible cell known by its probe; `point` builds its whole point (with
    /// `Point::of`, for the same probe), called only when a front, an allocation bin, a
    /// shortlist pool or the sample takes the cell. The aggregate is [`Aggregate::add_feasible`]'s.
    pub fn add_probed(&mut self, probe: Probe, sample_stride: u64, point: impl FnOnce() -> Point) {
        self.feasible += 1;
        self.usd_share_search_sum += fixed(probe.usd_share_search);
        self.flops_share_search_sum += fixed(probe.flops_share_search);
        let i = probe.indices;
        // `as usize` truncates toward zero and saturates (NaN and negatives to 0): the floor
        // for the share, without a call into libm.
        let bin = ((probe.update_fraction / UPDATE_FRACTION_BIN) as usize)
            .min((1.0 / UPDATE_FRACTION_BIN) as usize - 1);
        let key = (i[Axis::Model], i[Axis::Reward], i[Axis::Budget], bin);
        let rank = Rank {
            score: probe.score,
            id: probe.id,
        };
        let to_front = !self
            .front_guard
            .excludes(probe.cost, probe.usd, probe.score);
        let to_allocation = self
            .allocation_floor
            .get(&key)
            .is_none_or(|&known| rank.beats(known));
        // Once the pool has been trimmed, a point below its worst member can never enter it.
        let floor = self.pool_floor.get(&i[Axis::Budget]).copied();
        let to_pool = floor.is_none_or(|worst| rank.beats(worst));
        let to_sample = probe.id.is_multiple_of(sample_stride.max(1));
        if !(to_front || to_allocation || to_pool || to_sample) {
            return;
        }
        let point = point();
        if to_front {
            self.front_candidates.push(point);
            if self.front_candidates.len() >= FRONT_CANDIDATES_HELD {
                self.front_candidates = union_of_fronts(&self.front_candidates);
                self.front_guard = FrontGuard::of(&self.front_candidates);
            }
        }
        if to_allocation {
            let best = match self.allocation.get(&key) {
                Some(best) if !point.better_than(best) => Rank::of(best),
                _ => {
                    self.allocation.insert(key, point);
                    rank
                }
            };
            self.allocation_floor.insert(key, best);
        }
        if to_pool {
            let pool = self
                .shortlist_pool
                .entry(i[Axis::Budget])
                .or_insert_with(|| Vec::with_capacity(2 * SHORTLIST_POOL + 1));
            pool.push(point);
            if pool.len() > 2 * SHORTLIST_POOL {
                trim_pool(pool);
                if let Some(worst) = pool.last().map(Rank::of) {
                    // Keep the higher of this floor and one handed in by `after`.
                    if floor.is_none_or(|old| worst.beats(old)) {
                        self.pool_floor.insert(i[Axis::Budget], worst);
                    }
                }
            }
        }
        if to_sample {
            self.sample.push(point);
        }
    }

    /// The ids of the cells on the cost-score front in the grid's budget unit (`on_frontier`).
    pub fn front_ids(&self) -> std::collections::BTreeSet<u64> {
        self.front(CostBasis::BudgetUnit)
            .iter()
            .map(|p| p.id)
            .collect()
    }

    /// Adds one infeasible cell.
    pub fn add_infeasible(&mut self, kind: InfeasibleKind) {
        self.infeasible[kind.index()] += 1;
    }

    /// Infeasible cells per reason, in [`InfeasibleKind::ALL`] order.
    pub fn infeasible_counts(&self) -> impl Iterator<Item = (InfeasibleKind, u64)> + '_ {
        InfeasibleKind::ALL.into_iter().zip(self.infeasible)
    }

    /// An empty aggregate that already knows `earlier`'s shortlist floors: per budget whose pool
    /// is full, its worst member. A cell not better than that can never enter the final pool
    /// (it is beaten by [`SHORTLIST_POOL`] cells already seen), so skipping it is exact and the
    /// merged result is the same as without the floors.
    pub fn after(earlier: &Aggregate) -> Aggregate {
        let pool_floor = earlier
            .shortlist_pool
            .iter()
            .filter(|(_, pool)| pool.len() >= SHORTLIST_POOL)
            .filter_map(|(&budget, pool)| Some((budget, Rank::of(pool.last()?))))
            .collect();
        Aggregate {
            pool_floor,
            // The same argument for the front: what `earlier` holds stays held or dominated in
            // the merge, so a cell it strictly dominates on both bases is on no merged front.
            front_guard: FrontGuard::of(&earlier.front_candidates),
            ..Aggregate::default()
        }
    }

    /// Reduces the front candidates to the union of the two fronts (bounded memory).
    pub fn compact(&mut self) {
        self.front_candidates = union_of_fronts(&self.front_candidates);
        for pool in self.shortlist_pool.values_mut() {
            trim_pool(pool);
        }
    }

    /// Merges another chunk's aggregate (chunks are merged in cell order).
    pub fn merge(&mut self, other: Aggregate) {
        self.evaluated += other.evaluated;
        self.pruned += other.pruned;
        self.feasible += other.feasible;
        for k in 0..INFEASIBLE_KINDS {
            self.infeasible[k] += other.infeasible[k];
        }
        self.usd_share_search_sum += other.usd_share_search_sum;
        self.flops_share_search_sum += other.flops_share_search_sum;
        self.front_candidates.extend(other.front_candidates);
        if self.front_candidates.len() > FRONT_CANDIDATES_HELD {
            self.front_candidates = union_of_fronts(&self.front_candidates);
        }
        for (key, point) in other.allocation {
            match self.allocation.get(&key) {
                Some(best) if !point.better_than(best) => {}
                _ => {
                    self.allocation.insert(key, point);
                }
            }
        }
        for (budget, points) in other.shortlist_pool {
            let pool = self.shortlist_pool.entry(budget).or_default();
            *pool = merged_pool(std::mem::take(pool), points);
        }
        self.sample.extend(other.sample);
    }

    /// The cost–score front on one cost basis, sorted by cost (cheapest first). Candidates are
    /// taken in cell-id order, so ties resolve the same way however the cells were chunked.
    pub fn front(&self, basis: CostBasis) -> Vec<Point> {
        let mut candidates = self.front_candidates.clone();
        candidates.sort_by_key(|p| p.id);
        front_of(&candidates, basis)
    }

    /// Mean search share of dollars over feasible cells.
    pub fn mean_usd_share_search(&self) -> f64 {
        self.usd_share_search_sum as f64 * 1e-15 / self.feasible.max(1) as f64
    }

    /// Mean search share of FLOPs over feasible cells.
    pub fn mean_flops_share_search(&self) -> f64 {
        self.flops_share_search_sum as f64 * 1e-15 / self.feasible.max(1) as f64
    }

    /// The sample sorted by cell id (order-independent).
    pub fn sorted_sample(&self) -> Vec<Point> {
        let mut s = self.sample.clone();
        s.sort_by_key(|p| p.id);
        s
    }
}

/// The serialised form of [`Aggregate`] (JSON maps need string keys, so bins are a list).
#[derive(serde::Serialize, serde::Deserialize)]
struct AggregateFile {
    evaluated: u64,
    pruned: u64,
    feasible: u64,
    infeasible: [u64; INFEASIBLE_KINDS],
    usd_share_search_sum: String,
    flops_share_search_sum: String,
    front_candidates: Vec<Point>,
    allocation: Vec<(BinKey, Point)>,
    shortlist_pool: Vec<(usize, Vec<Point>)>,
    sample: Vec<Point>,
}

impl From<Aggregate> for AggregateFile {
    fn from(a: Aggregate) -> Self {
        AggregateFile {
            evaluated: a.evaluated,
            pruned: a.pruned,
            feasible: a.feasible,
            infeasible: a.infeasible,
            usd_share_search_sum: a.usd_share_search_sum.to_string(),
            flops_share_search_sum: a.flops_share_search_sum.to_string(),
            // Reduced to the fronts' union, so the file does not depend on how many dominated
            // candidates happened to be held (which the thread count and the guard move).
            front_candidates: union_of_fronts(&a.front_candidates),
            allocation: a.allocation.into_iter().collect(),
            shortlist_pool: a.shortlist_pool.into_iter().collect(),
            sample: a.sample,
        }
    }
}

impl From<AggregateFile> for Aggregate {
    fn from(f: AggregateFile) -> Self {
        Aggregate {
            evaluated: f.evaluated,
            pruned: f.pruned,
            feasible: f.feasible,
            infeasible: f.infeasible,
            usd_share_search_sum: f.usd_share_search_sum.parse().unwrap_or(0),
            flops_share_search_sum: f.flops_share_search_sum.parse().unwrap_or(0),
            front_candidates: f.front_candidates,
            allocation: f.allocation.into_iter().collect(),
            shortlist_pool: f.shortlist_pool.into_iter().collect(),
            sample: f.sample,
            pool_floor: BTreeMap::new(),
            allocation_floor: Default::default(),
            front_guard: FrontGuard::default(),
        }
    }
}

/// Which cost a front minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostBasis {
    /// The grid's budget unit.
    BudgetUnit,
    /// Dollars.
    Usd,
}

impl CostBasis {
    /// The point's cost on this basis.
    pub(crate) fn cost(self, p: &Point) -> f64 {
        match self {
            CostBasis::BudgetUnit => p.cost,
            CostBasis::Usd => p.usd,
        }
    }
}

pub(super) fn front_of(points: &[Point], basis: CostBasis) -> Vec<Point> {
    front_indices(points, basis)
        .into_iter()
        .map(|i| points[i])
        .collect()
}

/// The indices of `points` on the front of one cost basis, cheapest first.
fn front_indices(points: &[Point], basis: CostBasis) -> Vec<usize> {
    let cost: Vec<f64> = points.iter().map(|p| basis.cost(p)).collect();
    let score: Vec<f64> = points.iter().map(|p| p.score).collect();
    // Points are finite by construction (the ledger and prior never produce NaN for feasible cells).
    front_2d(&cost, &score, [Sense::Minimize, Sense::Maximize]).expect("finite costs and scores")
}

/// The points on either front, by cell id (ids are unique, so a point on both is kept once).
fn union_of_fronts(points: &[Point]) -> Vec<Point> {
    let mut on_a_front = vec![false; points.len()];
    for basis in [CostBasis::BudgetUnit, CostBasis::Usd] {
        for i in front_indices(points, basis) {
            on_a_front[i] = true;
        }
    }
    let mut kept: Vec<Point> = points
        .iter()
        .zip(&on_a_front)
        .filter_map(|(p, &on)| on.then_some(*p))
        .collect();
    kept.sort_by_key(|p| p.id);
    kept
}

/// The shortlist pool's order: best score first, ties by cell id (a strict total order, since
/// ids are unique).
fn pool_order(a: &Point, b: &Point) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.id.cmp(&b.id))
}

/// Keeps a pool's best [`SHORTLIST_POOL`] points, in pool order. The order is sorted on small
/// keys (score, id, position) and the points gathered once: sorting the 224-byte points
/// themselves moved each of them a dozen times per chunk.
fn trim_pool(pool: &mut Vec<Point>) {
    let mut keys: Vec<(f64, u64, usize)> = pool
        .iter()
        .enumerate()
        .map(|(k, p)| (p.score, p.id, k))
        .collect();
    // The same order as `pool_order` (strict: ids are unique), so an unstable sort is exact.
    keys.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    keys.truncate(SHORTLIST_POOL);
    *pool = keys.iter().map(|&(_, _, k)| pool[k]).collect();
}

/// The best [`SHORTLIST_POOL`] of two pools: a linear merge when both are in pool order (as
/// every trimmed pool is), else a sort. The result is [`trim_pool`]'s on their union either way
/// (the order is strict), without moving every point through a sort on each chunk merged.
fn merged_pool(a: Vec<Point>, b: Vec<Point>) -> Vec<Point> {
    let sorted = |p: &[Point]| p.is_sorted_by(|x, y| pool_order(x, y).is_lt());
    if !(sorted(&a) && sorted(&b)) {
        let mut all = a;
        all.extend(b);
        trim_pool(&mut all);
        return all;
    }
    // A full pool that `b`'s best does not beat is the merge already (no copy).
    let beats_worst = |a: &[Point], b: &[Point]| match (a.last(), b.first()) {
        (Some(worst), Some(best)) => pool_order(best, worst).is_lt(),
        (_, first) => first.is_some(),
    };
    if a.len() >= SHORTLIST_POOL && !beats_worst(&a, &b) {
        let mut a = a;
        a.truncate(SHORTLIST_POOL);
        return a;
    }
    let mut out = Vec::with_capacity(SHORTLIST_POOL.min(a.len() + b.len()));
    let (mut i, mut j) = (0, 0);
    while out.len() < SHORTLIST_POOL && (i < a.len() || j < b.len()) {
        let take_a = j == b.len() || (i < a.len() && pool_order(&a[i], &b[j]).is_lt());
        if take_a {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A point with this id, costs and score (and fixed shares), for tests.
    pub(in crate::analysis) fn point(id: u64, cost: f64, usd: f64, score: f64) -> Point {
        Point {
            id,
            indices: AxisIndices::default(),
            cost,
            usd,
            gpu_hours: 0.0,
            wall_hours: 0.0,
            iterations: 1,
            score,
            score_low: score,
            score_high: score,
            base_score: 0.0,
            update_fraction: 0.5,
            flops_shares: [0.3, 0.5, 0.2],
            usd_shares: [0.5, 0.4, 0.1],
        }
    }

    #[test]
    fn merged_pools_equal_a_sort_of_their_union() {
        // Tie-heavy scores (ten values over 700 points), sorted and unsorted inputs, pools
        // shorter and longer than SHORTLIST_POOL.
        let pts: Vec<Point> = (0..700u64)
            .map(|i| point((i * 389) % 700, 0.0, 0.0, ((i * 31) % 10) as f64 / 10.0))
            .collect();
        for (split, sort_a, sort_b) in [
            (0, true, true),
            (100, true, true),
            (350, true, false),
            (600, false, true),
            (200, true, true),
        ] {
            let (mut a, mut b) = (pts[..split].to_vec(), pts[split..].to_vec());
            if sort_a {
                trim_pool(&mut a);
            }
            if sort_b {
                trim_pool(&mut b);
            }
            let mut expected = a.clone();
            expected.extend(b.clone());
            trim_pool(&mut expected);
            let merged = merged_pool(a, b);
            let ids = |p: &[Point]| p.iter().map(|x| x.id).collect::<Vec<_>>();
            assert_eq!(ids(&merged), ids(&expected), "split {split}");
        }
    }

    #[test]
    fn merged_partial_fronts_equal_the_global_front() {
        let pts: Vec<Point> = (0..2000u64)
            .map(|i| {
                let x = ((i * 7919) % 1000) as f64;
                let s = ((i * 104_729) % 997) as f64 / 997.0;
                point(i, x, x * 1.5 + (i % 13) as f64, s)
            })
            .collect();
        let mut whole = Aggregate::default();
        for p in &pts {
            whole.front_candidates.push(*p);
        }
        let mut merged = Aggregate::default();
        for chunk in pts.chunks(137) {
            let mut a = Aggregate::default();
            a.front_candidates.extend_from_slice(chunk);
            a.compact();
            merged.merge(a);
        }
        for basis in [CostBasis::BudgetUnit, CostBasis::Usd] {
            let a: Vec<u64> = whole.front(basis).iter().map(|p| p.id).collect();
            let b: Vec<u64> = merged.front(basis).iter().map(|p| p.id).collect();
            assert_eq!(a, b);
        }
    }
}
