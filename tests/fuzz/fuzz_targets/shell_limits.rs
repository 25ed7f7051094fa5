//! Fuzz target: the shell reader's expansion limits. Scripts that assign and expand variables
//! (doubling chains, nested defaults, arithmetic, quoting) must never panic, never hold a word
//! past `MAX_WORD_BYTES` nor words past `MAX_WORDS_BYTES` together, and fail with a line inside
//! the script. Bytes below 0x80 are literal text; the others pick an expansion-heavy fragment, so
//! the fuzzer reaches deep doubling chains in a few steps.
//! Run: `cargo +nightly fuzz run shell_limits --fuzz-dir tests/fuzz -- -rss_limit_mb=512 -timeout=5`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rlfrontier::config::import::import_verl;
use rlfrontier::config::shell::{MAX_WORD_BYTES, MAX_WORDS_BYTES, words};

const FRAGMENTS: &[&str] = &[
    "a=$a$a\n",
    "b=${b}${a}${b}\n",
    "a=\"$b$a$b\"\n",
    "export c=${c:-$a$b}$c\n",
    "d=${d:-${a:-${b:-x}}}$d$d\n",
    "a=0123456789abcdef0123456789abcdef\n",
    "n=$(( ${n:-1} * 2 + ${#a} ))\n",
    "n=$((n*n*n*n))\n",
    "echo $a $b $c $d \"$a$b\" '$a' ${a}\n",
    "python3 -m verl.trainer.main_ppo data.train_batch_size=$n data.max_response_length=$a \\\n",
    "  actor_rollout_ref.rollout.n=${b:-8} \\\n",
    "${",
    "$((",
    "}",
    ")",
    "\"",
    "'",
    "\\\n",
];

fuzz_target!(|data: &[u8]| {
    let mut script = String::new();
    for &b in data {
        match b {
            0..0x80 => script.push(char::from(b)),
            _ => script.push_str(FRAGMENTS[usize::from(b & 0x7f) % FRAGMENTS.len()]),
        }
    }
    let lines = script.matches('\n').count() + 1;
    match words(&script) {
        Ok(found) => {
            let total: usize = found.iter().map(|w| w.text.len()).sum();
            assert!(total <= MAX_WORDS_BYTES, "{total} bytes of words");
            for w in &found {
                assert!(w.text.len() <= MAX_WORD_BYTES.max(script.len()), "a word of {} bytes", w.text.len());
                assert!((1..=lines).contains(&w.line), "word line {} of {lines}", w.line);
            }
        }
        Err(e) => {
            assert!((1..=lines).contains(&e.line), "error line {} of {lines}", e.line);
            assert!(!e.message.is_empty() && !e.message.contains('\n'), "{}", e.message);
        }
    }
    let _ = import_verl(&script);
});
