//! Fitting pilot data: per-run sigmoid curves ([`sigmoid`]), RACE response surfaces over the
//! update fraction ([`surface`]), and calibration of the outcome prior ([`calibrate`]), on a small
//! Levenberg-Marquardt solver ([`lm`]).

pub mod calibrate;
pub mod lm;
pub mod sigmoid;
pub mod surface;
