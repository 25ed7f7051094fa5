//! The `rlfrontier` binary: a thin command line over the `rlfrontier` library (see `app`).

mod app;

fn main() -> std::process::ExitCode {
    app::main()
}
