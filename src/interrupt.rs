//! Stop requests (SIGINT from Ctrl-C, SIGTERM from Slurm time limits and preemption), visible
//! to every long loop and to every commit of outputs.
//!
//! The binary registers the signals ([`record_signal`] is called from the handler's flag); the
//! library checks [`check`] before it renames outputs into place and inside long loops, so an
//! interrupted command leaves the previous outputs untouched and no temporary file behind (the
//! staged files remove themselves when dropped). The signal's number decides the exit code:
//! 128 + 2 = 130 for SIGINT, 128 + 15 = 143 for SIGTERM.

use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{Error, Result};

/// The signal that asked to stop, 0 when none did.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Records a stop request by signal number (the first one wins).
pub fn record_signal(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// The signal that asked to stop, if any.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// `Err(Interrupted)` once a stop was requested.
pub fn check() -> Result<()> {
    match requested() {
        Some(_) => Err(Error::Interrupted),
        None => Ok(()),
    }
}

/// The exit code of an interrupted run: 128 + the signal number (130 when none is known).
pub fn exit_code() -> u8 {
    requested()
        .and_then(|s| u8::try_from(128 + s).ok())
        .unwrap_or(130)
}
