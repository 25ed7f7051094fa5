//! The `rlfrontier` binary: a thin command line over the `rlfrontier` library (its `app`
//! module, feature `cli`).

#[allow(
    clippy::disallowed_methods,
    reason = "main alone reads the process's arguments and hands them to the app"
)]
fn main() -> std::process::ExitCode {
    rlfrontier::app::main(std::env::args_os().collect())
}
