//! Non-dominated sets.
//!
//! A point dominates another when it is at least as good in every objective and strictly better
//! in one. Identical points do not dominate each other, so duplicates on the front are all kept,
//! in index order: the result is a deterministic function of the input, whatever the ties.
//!
//! - [`front_2d`]: the two-objective front. A single pass keeps the current front as a staircase
//!   (O(n log k) for a front of k points, with a branch-free block test that skips most dominated
//!   points); when the front grows past a few thousand points it falls back to sort-and-sweep,
//!   O(n log n) (Kung, Luccio and Preparata 1975, "On finding the maxima of a set of vectors").
//! - [`nondominated_ranks`]: non-dominated sorting into ranks for any number of objectives
//!   (Deb et al. 2002, NSGA-II's fast non-dominated sort, O(m·n²)), on an ndarray objective
//!   matrix of points × objectives.
//!
//! Non-finite values are rejected: a single NaN would otherwise silently join or empty the front.

use ndarray::ArrayView2;

/// Whether an objective is to be minimised (cost) or maximised (score).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sense {
    /// Smaller is better.
    Minimize,
    /// Larger is better.
    Maximize,
}

impl std::str::FromStr for Sense {
    type Err = String;

    /// `min` or `max`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "min" => Ok(Sense::Minimize),
            "max" => Ok(Sense::Maximize),
            other => Err(format!("`{other}` is not a sense; write min or max")),
        }
    }
}

impl Sense {
    fn oriented(self, x: f64) -> f64 {
        match self {
            Sense::Minimize => x,
            Sense::Maximize => -x,
        }
    }
}

/// Why a front cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParetoError {
    /// A value is NaN or infinite.
    #[error(
        "point {point}, objective {objective}: {value} is not finite; remove or fix it before computing a front"
    )]
    NonFinite {
        /// Row.
        point: usize,
        /// Column.
        objective: usize,
        /// The value.
        value: f64,
    },
    /// The objective columns disagree in length, or senses do not match the columns.
    #[error("shape mismatch: {0}")]
    Shape(String),
}

/// Indices of the non-dominated points of two objectives, ordered by the first objective (best
/// first), then the second (best first), then index.
pub fn front_2d(
    first: &[f64],
    second: &[f64],
    senses: [Sense; 2],
) -> Result<Vec<usize>, ParetoError> {
    if first.len() != second.len() {
        return Err(ParetoError::Shape(format!(
            "{} values against {}",
            first.len(),
            second.len()
        )));
    }
    // The single pass also checks finiteness; the explicit check below runs only when it gives
    // up (a non-finite value, or most points on the front), so typical data is read once.
    if let Some(front) = staircase_front(first, second, senses, STAIRCASE_LIMIT) {
        return Ok(front);
    }
    for (objective, column) in [first, second].iter().enumerate() {
        if let Some((point, &value)) = column.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ParetoError::NonFinite {
                point,
                objective,
                value,
            });
        }
    }
    Ok(front_2d_sorted(first, second, senses))
}

/// The sort-and-sweep front (validated, finite input): the fallback of [`front_2d`] when most
/// points are on the front.
fn front_2d_sorted(first: &[f64], second: &[f64], senses: [Sense; 2]) -> Vec<usize> {
    // Orient both objectives as "minimise". Then drop every point strictly dominated by one of
    // three pivots (the best x, the best y, and the best x + y after scaling): an O(n) filter that
    // is always safe (a dominated point is never on the front) and leaves only the corner of
    // typical data to sort. Worst case (every point on the front) it removes nothing.
    let n = first.len();
    let x = |i: usize| senses[0].oriented(first[i]);
    let y = |i: usize| senses[1].oriented(second[i]);
    let mut survivors: Vec<(f64, f64, usize)> = Vec::new();
    if n > 0 {
        let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for i in 0..n {
            let (a, b) = (x(i), y(i));
            x_lo = x_lo.min(a);
            x_hi = x_hi.max(a);
            y_lo = y_lo.min(b);
            y_hi = y_hi.max(b);
        }
        let (sx, sy) = (
            (x_hi - x_lo).max(f64::MIN_POSITIVE),
            (y_hi - y_lo).max(f64::MIN_POSITIVE),
        );
        let mut pivots = [(f64::INFINITY, f64::INFINITY); 3];
        let mut knee = f64::INFINITY;
        for i in 0..n {
            let (a, b) = (x(i), y(i));
            if (a, b) < pivots[0] {
                pivots[0] = (a, b);
            }
            if (b, a) < (pivots[1].1, pivots[1].0) {
                pivots[1] = (a, b);
            }
            let k = (a - x_lo) / sx + (b - y_lo) / sy;
            if k < knee {
                knee = k;
                pivots[2] = (a, b);
            }
        }
        let strictly_dominated = |a: f64, b: f64| {
            pivots
                .iter()
                .any(|&(pa, pb)| pa <= a && pb <= b && (pa < a || pb < b))
        };
        for i in 0..n {
            let (a, b) = (x(i), y(i));
            if !strictly_dominated(a, b) {
                survivors.push((a, b, i));
            }
        }
    }
    survivors.sort_unstable_by(|p, q| {
        p.0.total_cmp(&q.0)
            .then(p.1.total_cmp(&q.1))
            .then(p.2.cmp(&q.2))
    });
    let mut front = Vec::new();
    let mut best_y_before = f64::INFINITY; // best y among strictly smaller x
    let mut i = 0;
    while i < survivors.len() {
        // One group of equal x: its best y is its first element (sorted by y).
        let (group_x, group_best, _) = survivors[i];
        let mut j = i;
        while j < survivors.len() && survivors[j].0 == group_x {
            if survivors[j].1 == group_best && group_best < best_y_before {
                front.push(survivors[j].2);
            }
            j += 1;
        }
        best_y_before = best_y_before.min(group_best);
        i = j;
    }
    front
}

/// Largest staircase the single-pass front keeps before it hands over to the sort-based one.
const STAIRCASE_LIMIT: usize = 2048;

/// Single pass over the points keeping the current front as a staircase sorted by the first
/// objective (x ascending, y descending, both oriented as "minimise"; duplicates in index order).
/// A point is dominated iff the staircase's last step with x ≤ its x has a smaller y (or an equal
/// y at a smaller x): one binary search over a handful of steps, which is why typical data (few
/// points on the front) costs a few nanoseconds a point. Returns None when the staircase grows
/// past `limit` (most points on the front), where inserting into it would be quadratic, or when a
/// value is not finite (the caller reports it).
fn staircase_front(
    first: &[f64],
    second: &[f64],
    senses: [Sense; 2],
    limit: usize,
) -> Option<Vec<usize>> {
    let sx = if senses[0] == Sense::Minimize {
        1.0
    } else {
        -1.0
    };
    let sy = if senses[1] == Sense::Minimize {
        1.0
    } else {
        -1.0
    };
    let mut steps: Vec<(f64, f64, usize)> = Vec::new();
    // The step with the smallest x + y so far: most points of typical data are dominated by it,
    // which two comparisons show before any search.
    let (mut kx, mut ky) = (f64::INFINITY, f64::INFINITY);
    const BLOCK: usize = 8;
    let n = first.len();
    let mut i = 0;
    while i < n {
        // Whole blocks dominated by the knee are skipped without branching per point.
        if i + BLOCK <= n {
            let mut all = true;
            for k in i..i + BLOCK {
                let (x, y) = (sx * first[k], sy * second[k]);
                all &= (kx <= x)
                    & (ky <= y)
                    & ((kx < x) | (ky < y))
                    & (x.abs() < f64::INFINITY)
                    & (y.abs() < f64::INFINITY);
            }
            if all {
                i += BLOCK;
                continue;
            }
        }
        let end = (i + BLOCK).min(n);
        for i in i..end {
            let (x, y) = (sx * first[i], sy * second[i]);
            if !(x.is_finite() && y.is_finite()) {
                return None;
            }
            consider(&mut steps, &mut kx, &mut ky, x, y, i);
            if steps.len() > limit {
                return None;
            }
        }
        i = end;
    }
    Some(steps.into_iter().map(|s| s.2).collect())
}

/// One point of the staircase pass: skip it if dominated, else insert it and drop what it
/// dominates; keeps the knee (smallest x + y step) current.
fn consider(
    steps: &mut Vec<(f64, f64, usize)>,
    kx: &mut f64,
    ky: &mut f64,
    x: f64,
    y: f64,
    i: usize,
) {
    {
        if *kx <= x && *ky <= y && (*kx < x || *ky < y) {
            return;
        }
        // Steps with x ≤ this x form a prefix; its last step has the smallest y among them.
        let end = steps.partition_point(|s| s.0 <= x);
        if end > 0 {
            let (qx, qy, _) = steps[end - 1];
            if qy < y || (qy == y && qx < x) {
                return; // dominated
            }
        }
        // Not dominated: remove the steps it dominates (x ≥ its x and y ≥ its y, not equal to it),
        // which follow the prefix of steps with a smaller x, then insert it after its duplicates.
        let start = steps.partition_point(|s| s.0 < x);
        let mut keep_until = start;
        let mut j = start;
        while j < steps.len() && steps[j].0 == x && steps[j].1 == y {
            j += 1; // exact duplicates stay, ahead of the new point
            keep_until = j;
        }
        let mut remove_end = keep_until;
        while remove_end < steps.len() && steps[remove_end].1 >= y {
            remove_end += 1;
        }
        steps.splice(keep_until..remove_end, std::iter::once((x, y, i)));
        if x + y < *kx + *ky || kx.is_infinite() {
            (*kx, *ky) = (x, y);
        }
    }
}

/// Whether a dominates b (objectives already oriented as "minimise").
fn dominates(a: &[f64], b: &[f64]) -> bool {
    let mut strictly = false;
    for (x, y) in a.iter().zip(b) {
        if x > y {
            return false;
        }
        if x < y {
            strictly = true;
        }
    }
    strictly
}

/// The objectives row by row (one flat vector, `m` values per point), oriented so that smaller
/// is better; one sense per objective is required, and the first non-finite value is an error
/// naming its point and objective.
fn oriented_rows(objectives: ArrayView2<f64>, senses: &[Sense]) -> Result<Vec<f64>, ParetoError> {
    let (n, m) = objectives.dim();
    if senses.len() != m {
        return Err(ParetoError::Shape(format!(
            "{} senses for {m} objectives",
            senses.len()
        )));
    }
    let mut rows = Vec::with_capacity(n * m);
    for point in 0..n {
        for (objective, sense) in senses.iter().enumerate() {
            let value = objectives[[point, objective]];
            if !value.is_finite() {
                return Err(ParetoError::NonFinite {
                    point,
                    objective,
                    value,
                });
            }
            // + 0.0 makes a negative zero positive, so equal values sort and compare alike.
            rows.push(sense.oriented(value) + 0.0);
        }
    }
    Ok(rows)
}

/// Non-domination rank of every point (0 = the front, 1 = the front once rank 0 is removed, ...).
pub fn nondominated_ranks(
    objectives: ArrayView2<f64>,
    senses: &[Sense],
) -> Result<Vec<usize>, ParetoError> {
    let (n, m) = objectives.dim();
    let flat = oriented_rows(objectives, senses)?;
    let rows: Vec<&[f64]> = if m == 0 {
        vec![&[]; n]
    } else {
        flat.chunks(m).collect()
    };
    let mut dominated_by = vec![0usize; n];
    let mut dominates_list: Vec<Vec<usize>> = vec![Vec::new(); n];
    for a in 0..n {
        for b in (a + 1)..n {
            if dominates(rows[a], rows[b]) {
                dominates_list[a].push(b);
                dominated_by[b] += 1;
            } else if dominates(rows[b], rows[a]) {
                dominates_list[b].push(a);
                dominated_by[a] += 1;
            }
        }
    }
    let mut rank = vec![usize::MAX; n];
    let mut current: Vec<usize> = (0..n).filter(|&i| dominated_by[i] == 0).collect();
    let mut level = 0;
    while !current.is_empty() {
        let mut next = Vec::new();
        for &a in &current {
            rank[a] = level;
            for &b in &dominates_list[a] {
                dominated_by[b] -= 1;
                if dominated_by[b] == 0 {
                    next.push(b);
                }
            }
        }
        next.sort_unstable();
        current = next;
        level += 1;
    }
    Ok(rank)
}

/// The first non-dominated front of any number of objectives, in O(n log n + n·F) time (F the
/// front's size) and O(n) memory: the points sorted lexicographically (oriented so that smaller
/// is better) are scanned once, each kept unless a kept point dominates it. A dominator is
/// lexicographically smaller, so it is scanned first, and a dominated dominator has a kept
/// dominator of its own (dominance is transitive): the kept set is exactly the front. Returns
/// indices in ascending order. This replaces [`nondominated_ranks`] (O(n²) memory) when only the
/// front is wanted (Kung, Luccio and Preparata 1975 give the same result by divide and conquer).
pub fn first_front(
    objectives: ArrayView2<f64>,
    senses: &[Sense],
) -> Result<Vec<usize>, ParetoError> {
    let (n, m) = objectives.dim();
    let rows = oriented_rows(objectives, senses)?;
    let row = |i: usize| &rows[i * m..(i + 1) * m];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        row(a)
            .iter()
            .zip(row(b))
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut kept: Vec<usize> = if m == 3 {
        front_3d_scan(&order, &row)
    } else {
        wide_front(&order, &row, m)
    };
    kept.sort_unstable();
    Ok(kept)
}

/// Kept points past which the scan of [`wide_front`] hands over to dominance bitsets.
const SCAN_FRONT_LIMIT: usize = 1024;

/// The front of points in lexicographic `order` with `m` objectives other than three: the scan
/// against the kept points while the front stays small (O(n·k)), else dominance bitsets over
/// the distinct vectors ([`super::front_bits`], m·n²/64 word operations whatever the front's
/// size), every duplicate of a kept vector kept with it. Objectives that repeat another column
/// exactly are compared once.
fn wide_front<'r>(order: &[usize], row: &impl Fn(usize) -> &'r [f64], m: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for &i in order {
        if !kept.iter().any(|&k| dominates(row(k), row(i))) {
            kept.push(i);
            if kept.len() > SCAN_FRONT_LIMIT && m >= 4 {
                return bitset_front(order, row, m);
            }
        }
    }
    kept
}

/// [`wide_front`] by dominance bitsets: distinct vectors (adjacent in `order`) with duplicate
/// columns dropped, their front, and every point whose vector is on it.
fn bitset_front<'r>(order: &[usize], row: &impl Fn(usize) -> &'r [f64], m: usize) -> Vec<usize> {
    let columns: Vec<usize> = (0..m)
        .filter(|&j| !(0..j).any(|c| order.iter().all(|&i| row(i)[c] == row(i)[j])))
        .collect();
    let mut groups: Vec<&[usize]> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| row(i) == row(order[start]))
                .count();
        groups.push(&order[start..end]);
        start = end;
    }
    let vectors: Vec<f64> = groups
        .iter()
        .flat_map(|g| columns.iter().map(|&j| row(g[0])[j]))
        .collect();
    super::front_bits::distinct_front(&vectors, columns.len())
        .into_iter()
        .flat_map(|g| groups[g].iter().copied())
        .collect()
}

/// The 3-objective scan of [`first_front`] in O(n log n): the points come in lexicographic
/// order, so an earlier point dominates a later one exactly when it is no worse on the second and
/// third objectives and is not the same vector. The kept points' (second, third) projections are
/// held as a staircase (third objective strictly falling as the second rises) in an ordered map;
/// "is some kept point no worse on both" is one predecessor lookup. Identical vectors are
/// adjacent in the order and are judged together against the earlier ones (none dominates
/// another). Kung, Luccio and Preparata (1975), J. ACM 22(4), the 3-dimensional case.
fn front_3d_scan<'r>(order: &[usize], row: &impl Fn(usize) -> &'r [f64]) -> Vec<usize> {
    use std::collections::BTreeMap;
    // f64 in total order as an integer key (IEEE 754 sign-magnitude flipped to two's complement).
    let key = |x: f64| {
        let bits = x.to_bits() as i64;
        bits ^ ((((bits >> 63) as u64) >> 1) as i64)
    };
    let mut stair: BTreeMap<i64, i64> = BTreeMap::new();
    let covered = |stair: &BTreeMap<i64, i64>, second: i64, third: i64| {
        stair
            .range(..=second)
            .next_back()
            .is_some_and(|(_, &t)| t <= third)
    };
    let mut kept = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let first = row(order[start]);
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| row(i) == first)
                .count();
        let (second, third) = (key(first[1]), key(first[2]));
        if !covered(&stair, second, third) {
            kept.extend_from_slice(&order[start..end]);
            let shadowed: Vec<i64> = stair
                .range(second..)
                .take_while(|&(_, &t)| t >= third)
                .map(|(&s, _)| s)
                .collect();
            for s in shadowed {
                stair.remove(&s);
            }
            stair.insert(second, third);
        }
        start = end;
    }
    kept
}

/// Brute-force O(n²) front, for tests and as the specification of [`front_2d`].
pub fn front_brute_force(first: &[f64], second: &[f64], senses: [Sense; 2]) -> Vec<usize> {
    let rows: Vec<[f64; 2]> = first
        .iter()
        .zip(second)
        .map(|(&a, &b)| [senses[0].oriented(a), senses[1].oriented(b)])
        .collect();
    (0..rows.len())
        .filter(|&i| !rows.iter().any(|other| dominates(other, &rows[i])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use proptest::prelude::*;

    const COST_SCORE: [Sense; 2] = [Sense::Minimize, Sense::Maximize];

    #[test]
    fn hand_example_with_ties_and_duplicates() {
        // cost, score: (1, 0.5) front; (2, 0.5) dominated; (2, 0.7) front twice (duplicate);
        // (3, 0.6) dominated; (4, 0.9) front.
        let cost = [1.0, 2.0, 2.0, 3.0, 4.0, 2.0];
        let score = [0.5, 0.5, 0.7, 0.6, 0.9, 0.7];
        assert_eq!(
            front_2d(&cost, &score, COST_SCORE).unwrap(),
            vec![0, 2, 5, 4]
        );
        let mut brute = front_brute_force(&cost, &score, COST_SCORE);
        brute.sort_unstable();
        assert_eq!(brute, vec![0, 2, 4, 5]);
    }

    #[test]
    fn a_large_front_in_many_objectives_is_exact_with_duplicates_and_repeated_columns() {
        // Past SCAN_FRONT_LIMIT kept points the scan hands over to dominance bitsets (issue 51:
        // 1e5 mutually non-dominated rows in 4-8 objectives took 48 s); the answer must stay
        // the brute force's, duplicate rows kept together, a repeated column changing nothing.
        let mut state = 99u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 1000) as f64
        };
        let n = 3000;
        let mut data = Vec::with_capacity(n * 6);
        for i in 0..n {
            let row: Vec<f64> = if i % 10 == 9 {
                data[(i - 1) * 6..i * 6].to_vec()
            } else {
                let a = next();
                let b = next();
                let c = next();
                // On a plane (a + b + c + d = 3000): mostly mutually non-dominated.
                vec![a, b, c, 3000.0 - a - b - c, a, next()]
            };
            data.extend(row);
        }
        let matrix = ndarray::Array2::from_shape_vec((n, 6), data.clone()).unwrap();
        let senses = [Sense::Minimize; 6];
        let got = first_front(matrix.view(), &senses).unwrap();
        let row = |i: usize| &data[i * 6..(i + 1) * 6];
        let brute: Vec<usize> = (0..n)
            .filter(|&i| !(0..n).any(|j| dominates(row(j), row(i))))
            .collect();
        assert!(got.len() > SCAN_FRONT_LIMIT, "{}", got.len());
        assert_eq!(got, brute);
    }

    #[test]
    fn a_front_of_every_point_falls_back_to_sorting() {
        // 5,000 points on an anti-diagonal: all on the front, past the staircase limit.
        let cost: Vec<f64> = (0..5000).map(|i| i as f64).collect();
        let score: Vec<f64> = (0..5000).map(|i| i as f64).collect();
        assert!(staircase_front(&cost, &score, COST_SCORE, STAIRCASE_LIMIT).is_none());
        assert_eq!(front_2d(&cost, &score, COST_SCORE).unwrap().len(), 5000);
    }

    #[test]
    fn non_finite_values_are_rejected() {
        let err = front_2d(&[1.0, f64::NAN], &[0.1, 0.2], COST_SCORE).unwrap_err();
        assert!(matches!(
            err,
            ParetoError::NonFinite {
                point: 1,
                objective: 0,
                ..
            }
        ));
        let m = Array2::from_shape_vec((2, 2), vec![1.0, 2.0, f64::INFINITY, 0.0]).unwrap();
        assert!(nondominated_ranks(m.view(), &COST_SCORE).is_err());
        assert!(front_2d(&[1.0], &[1.0, 2.0], COST_SCORE).is_err());
    }

    #[test]
    fn ranks_hand_example() {
        // Three objectives, all minimised: (1,1,1) dominates everything else.
        let m = Array2::from_shape_vec(
            (4, 3),
            vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 1.0, 2.0, 3.0, 3.0, 3.0],
        )
        .unwrap();
        let ranks = nondominated_ranks(m.view(), &[Sense::Minimize; 3]).unwrap();
        assert_eq!(ranks, vec![0, 1, 1, 2]);
    }

    fn points(tie_heavy: bool) -> impl Strategy<Value = Vec<(f64, f64)>> {
        let value = if tie_heavy {
            (0u8..5).prop_map(f64::from).boxed()
        } else {
            (-1e6f64..1e6).boxed()
        };
        prop::collection::vec((value.clone(), value), 0..300)
    }

    proptest! {
        #[test]
        fn first_front_is_rank_zero(
            pts in prop::collection::vec(prop::collection::vec(0u8..6, 3), 0..200),
            wide in prop::collection::vec(prop::collection::vec(-1e6f64..1e6, 4), 0..150),
        ) {
            let as_matrix = |rows: Vec<Vec<f64>>, m: usize| {
                ndarray::Array2::from_shape_fn((rows.len(), m), |(i, j)| rows[i][j])
            };
            let small = as_matrix(pts.iter().cloned().map(|r| r.into_iter().map(f64::from).collect()).collect(), 3);
            let senses3 = [Sense::Minimize, Sense::Maximize, Sense::Minimize];
            let ranks = nondominated_ranks(small.view(), &senses3).unwrap();
            let want: Vec<usize> = (0..ranks.len()).filter(|&i| ranks[i] == 0).collect();
            prop_assert_eq!(first_front(small.view(), &senses3).unwrap(), want);
            // Negative zero and positive zero compare equal in the objectives.
            let signed = small.mapv(|x| if x == 0.0 { -0.0 } else { -x });
            let ranks = nondominated_ranks(signed.view(), &senses3).unwrap();
            let want: Vec<usize> = (0..ranks.len()).filter(|&i| ranks[i] == 0).collect();
            prop_assert_eq!(first_front(signed.view(), &senses3).unwrap(), want);
            let big = as_matrix(wide, 4);
            let senses4 = [Sense::Maximize; 4];
            let ranks = nondominated_ranks(big.view(), &senses4).unwrap();
            let want: Vec<usize> = (0..ranks.len()).filter(|&i| ranks[i] == 0).collect();
            prop_assert_eq!(first_front(big.view(), &senses4).unwrap(), want);
        }

        #[test]
        fn sweep_matches_brute_force(pts in points(false), tie_pts in points(true)) {
            for p in [pts, tie_pts] {
                let (a, b): (Vec<f64>, Vec<f64>) = p.into_iter().unzip();
                for senses in [COST_SCORE, [Sense::Minimize, Sense::Minimize], [Sense::Maximize, Sense::Maximize]] {
                    let mut fast = front_2d(&a, &b, senses).unwrap();
                    fast.sort_unstable();
                    prop_assert_eq!(fast, front_brute_force(&a, &b, senses));
                }
            }
        }

        #[test]
        fn staircase_and_sort_paths_agree(pts in points(false), tie_pts in points(true)) {
            for p in [pts, tie_pts] {
                let (a, b): (Vec<f64>, Vec<f64>) = p.into_iter().unzip();
                let stair = staircase_front(&a, &b, COST_SCORE, usize::MAX).unwrap();
                let mut sorted_stair = stair.clone();
                sorted_stair.sort_unstable();
                prop_assert_eq!(sorted_stair, front_brute_force(&a, &b, COST_SCORE));
                // Same order as the sort-based path: by cost, then score, then index.
                let via_sort = staircase_front(&a, &b, COST_SCORE, 0).is_none().then(|| front_2d_sorted(&a, &b, COST_SCORE));
                if let Some(v) = via_sort
                    && !a.is_empty() {
                        prop_assert_eq!(stair, v);
                    }
            }
        }

        #[test]
        fn rank_zero_is_the_front_and_ranks_are_consistent(tie_pts in points(true)) {
            let n = tie_pts.len();
            let flat: Vec<f64> = tie_pts.iter().flat_map(|&(a, b)| [a, b]).collect();
            let m = Array2::from_shape_vec((n, 2), flat).unwrap();
            let ranks = nondominated_ranks(m.view(), &COST_SCORE).unwrap();
            let (a, b): (Vec<f64>, Vec<f64>) = tie_pts.iter().copied().unzip();
            let front: Vec<usize> = (0..n).filter(|&i| ranks[i] == 0).collect();
            prop_assert_eq!(front, front_brute_force(&a, &b, COST_SCORE));
            // A dominated point always ranks after some point that dominates it.
            for i in 0..n {
                for j in 0..n {
                    let oi = [a[i], -b[i]];
                    let oj = [a[j], -b[j]];
                    if dominates(&oj, &oi) {
                        prop_assert!(ranks[j] < ranks[i]);
                    }
                }
            }
        }
    }
}
