//! What the evaluated cells say: non-dominated sets ([`pareto`], with `front_bits` for large
//! fronts in four or more objectives), the cost-score and allocation
//! frontiers with their streaming aggregate ([`frontier`], which skips cells a front cannot take
//! with `front_guard`), the joint draws of the outcome model
//! ([`draws`]), the shortlist of regimes worth a validation run ([`shortlist`]), the
//! recommendation per budget that stands on paired differences ([`decision`]) and why it wins
//! ([`why`]).

pub mod decision;
pub mod draws;
mod front_bits;
mod front_guard;
pub mod frontier;
pub mod pareto;
pub mod shortlist;
pub mod why;
