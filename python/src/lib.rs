//! `rlfrontier._native`: the extension module of the Python package.
//!
//! It links the command line (`rlfrontier::app`, the library's `cli` feature) and exposes its
//! entry point, [`run`], which runs a command line in-process and returns what it printed, or its
//! exit code and one-line message; and [`stream::sweep_stream`], a `sweep` whose cells table
//! reaches pyarrow through the Arrow C stream interface instead of a file. The Python package
//! (`python/rlfrontier/`) builds command lines from keyword arguments and turns the outputs into dicts and DataFrames, so every number and every
//! error message is the command line's: the Rust library stays the single implementation.

mod stream;

use rlfrontier::app;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Runs `rlfrontier WORDS...` in this process, without the GIL. Returns `(0, stdout bytes)` on
/// success and `(exit code, message bytes)` on failure (2 bad input, 3 infeasible run, 1 an
/// environment failure), the message being the line the binary prints after "error: ".
#[pyfunction]
fn run<'py>(py: Python<'py>, words: Vec<String>) -> (u8, Bound<'py, PyBytes>) {
    let result = py.detach(|| app::run_captured(&words));
    outcome(py, result)
}

/// A command line's result as Python sees it: `(0, stdout bytes)` or `(exit code, message
/// bytes)`.
fn outcome(py: Python<'_>, result: Result<Vec<u8>, app::Failure>) -> (u8, Bound<'_, PyBytes>) {
    match result {
        Ok(stdout) => (0, PyBytes::new(py, &stdout)),
        Err(failure) => (
            failure.exit_code,
            PyBytes::new(py, failure.message.as_bytes()),
        ),
    }
}

/// A grid given as JSON text (a Python dict passed through `json.dumps`) as TOML text, the form
/// `sweep` and `check` read. Errors name what TOML cannot hold (null values, mixed arrays).
#[pyfunction]
fn toml_from_json(text: &str) -> PyResult<String> {
    let value: toml::Value = serde_json::from_str(text)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("grid dict: {e}")))?;
    toml::to_string(&value)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("grid dict: {e}")))
}

/// The module: `run`, `toml_from_json`, `sweep_stream` (with its `CellStream`) and the crate's
/// version.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(stream::sweep_stream, m)?)?;
    m.add_class::<stream::CellStream>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
