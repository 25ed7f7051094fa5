//! The `rlfrontier` binary: parses arguments, runs the library, maps errors to exit codes
//! (2 for bad input, 130 when interrupted, 1 otherwise).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = <rlfrontier::cli::Cli as clap::Parser>::parse();
    let interrupted = rlfrontier::cli::install_interrupt_handler();
    match rlfrontier::cli::run(args, &interrupted) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(error.exit_code() as u8)
        }
    }
}
