//! A progress bar for commands that work through a known number of tasks (the backtest's
//! held-out studies), or a spinner for those that do not know their size (a fit, a plan): on
//! stderr, only when stderr is a terminal and `--quiet` is not given, cleared when the work ends
//! so the command's output starts on a clean line.

use std::io::IsTerminal;

/// A bar over `total` tasks, or a hidden one.
pub struct TaskBar(indicatif::ProgressBar);

impl TaskBar {
    /// A bar labelled `label` over `total` tasks named `unit` ("studies"); hidden when `quiet`
    /// or when stderr is not a terminal.
    pub fn new(label: &str, total: u64, unit: &str, quiet: bool) -> Self {
        Self::drawn(
            quiet,
            || indicatif::ProgressBar::new(total),
            &format!("{{spinner}} {label} {{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed}}"),
        )
    }

    /// A spinner with the time elapsed, for work whose size is not known ahead (a pilot fit, a
    /// decision's search); hidden like [`TaskBar::new`].
    pub fn spinner(label: &str, quiet: bool) -> Self {
        Self::drawn(
            quiet,
            indicatif::ProgressBar::new_spinner,
            &format!("{{spinner}} {label}  {{elapsed}}"),
        )
    }

    /// `bar` in `template`, ticking on its own, or a hidden bar when `quiet` or when stderr is
    /// not a terminal.
    fn drawn(quiet: bool, bar: impl FnOnce() -> indicatif::ProgressBar, template: &str) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return TaskBar(indicatif::ProgressBar::hidden());
        }
        let bar = bar();
        bar.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        TaskBar(bar)
    }

    /// One more task is done (callable from any thread).
    pub fn inc(&self) {
        self.0.inc(1);
    }

    /// All done: the bar is cleared.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Drop for TaskBar {
    fn drop(&mut self) {
        // An error or an interrupt returns early: never leave a stale bar above the message.
        self.0.finish_and_clear();
    }
}
