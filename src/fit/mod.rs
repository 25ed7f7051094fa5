//! Fitting pilot data: per-run sigmoid curves ([`sigmoid`]), RACE response surfaces over the
//! update fraction ([`surface`]), calibration of the outcome prior on pilots ([`calibrate`]) and of its
//! defaults on published evidence ([`evidence`]), on a small
//! Levenberg-Marquardt solver ([`lm`]).

pub mod backtest;
pub mod calibrate;
pub mod evidence;
pub mod lm;
pub mod pairs;
#[cfg(feature = "research")]
pub mod prior;
pub mod sigmoid;
#[cfg(feature = "research")]
pub mod starts;
#[cfg(feature = "research")]
pub mod study_backtest;
pub mod surface;
