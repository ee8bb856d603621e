//! `cargo xtask bench`'s cold-start section: `docauto/webhooks` against jose from a cold start in workerd (through
//! miniflare, and `workerd serve` alone), Deno, Bun and Node, installed from the packed tarball
//! (tests/js/cold-start.mjs).

use crate::util::{self, step};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The markers of its section in BENCHMARKS.md.
pub const BEGIN: &str = "<!-- bench-cold:begin -->";
pub const END: &str = "<!-- bench-cold:end -->";
/// The heading the section goes under when BENCHMARKS.md has no markers yet.
pub const HEADING: &str = "## Cold start: `docauto/webhooks` against jose";

/// Interleaved rounds (after one warm-up): the shared 2-core machine moves single starts by tens of ms, and a bare
/// workerd start through miniflare (about 100 to 140 ms) by more than the 10 to 30 ms compared on top of it: at 15
/// rounds, three runs on one idle morning put jose's workerd cost at +0.5, +11.7 and +14.4 ms over bare. A round
/// (seven starts in each of five ways) takes about 3.5 s, so 41 rounds between two and three minutes.
const ROUNDS: &str = "41";

/// Runs the cold-start bench and returns its markdown report.
pub fn bench(r: &Path) -> Result<String, String> {
    step(&format!(
        "node tests/js/cold-start.mjs --rounds {ROUNDS} (first verified delivery after a cold start, docauto/webhooks vs jose: workerd via miniflare and alone, Deno, Bun, Node)"
    ));
    let fin = util::run_capture(
        Command::new("node")
            .args(["tests/js/cold-start.mjs", "--rounds", ROUNDS])
            .current_dir(r),
        Duration::from_secs(20 * 60),
        true,
    )?;
    if !fin.ok() {
        return Err("tests/js/cold-start.mjs failed".into());
    }
    fin.output
        .split_once("<!-- table -->")
        .map(|(_, t)| t.trim().to_owned())
        .ok_or_else(|| "the cold-start bench printed no table".to_owned())
}
