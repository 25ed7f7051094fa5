//! Fuzz target: what users paste from their frameworks (veRL launch scripts, TRL configs, metric
//! logs in every format) is read without panicking; failures are input errors with a line.
//! Run: `cargo +nightly fuzz run framework_files --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rlfrontier::config::import::{TrlLaunch, import_trl, import_verl};
use rlfrontier::logs::{LogFormat, parse_log};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let _ = import_verl(&text);
    let _ = import_trl(
        &text,
        TrlLaunch {
            processes: Some(u64::from(selector % 17)),
            num_generations: None,
        },
    );
    let format = LogFormat::ALL.get(usize::from(selector) % 6).copied();
    let name = if selector & 0x80 != 0 {
        "trainer_state.json"
    } else {
        "metrics.jsonl"
    };
    if let Err(e) = parse_log(Path::new(name), &text, format) {
        assert!(e.is_input(), "{e}");
    }
});
