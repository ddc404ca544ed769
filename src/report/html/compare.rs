//! Several runs on one page (for `dbio compare --html`): the sections of
//! [`crate::report::sections::compare`] — the runs, then per event each run's IOPS, MiB/s,
//! p50 and p99 with its ratio to the first run, and the runs' latency histograms on one axis.

use super::Page;
use crate::report::result::RunResult;

/// Renders a self-contained HTML page comparing `runs`, each given with its label; the
/// first run is the baseline every ratio is taken against. Events are listed in the order
/// they first appear; a run without an event shows a dash.
pub fn compare_html(runs: &[(String, &RunResult)]) -> String {
    let mut page = Page::new("dbio — comparison of runs");
    page.report(&crate::report::sections::compare(runs));
    page.finish()
}
