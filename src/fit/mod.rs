//! Fitting pilot data: per-run sigmoid curves ([`sigmoid`]), RACE response surfaces over the
//! update fraction ([`surface`]), calibration of the outcome prior on pilots ([`calibrate`]) and of its
//! defaults on published evidence ([`evidence`]), on a small
//! Levenberg-Marquardt solver ([`lm`]).

pub mod backtest;
pub mod calibrate;
pub mod evidence;
pub mod lm;
pub mod pairs;
pub mod prior;
pub mod sigmoid;
pub mod starts;
pub mod study_backtest;
pub mod surface;
