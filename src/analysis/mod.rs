//! What the evaluated cells say: non-dominated sets ([`pareto`]), the cost-score and allocation
//! frontiers with their streaming aggregate ([`frontier`]), and the shortlist of regimes worth a
//! validation run ([`shortlist`]), and the answer per budget ([`headline`]).

pub mod frontier;
pub mod headline;
pub mod pareto;
pub mod shortlist;
