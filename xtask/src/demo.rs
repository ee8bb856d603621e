//! `cargo xtask demo`: builds the emulator, then runs www/dev.mjs, which starts the emulator and the demo backend on
//! 127.0.0.1 and prints the one address to open. Ctrl-C reaches it (same process group) and stops everything.

use crate::util::{self, root, step};
use std::process::Command;
use std::time::Duration;

/// Runs the demo in the foreground until Ctrl-C.
pub fn demo() -> Result<(), String> {
    let r = root();
    step("cargo build -p docauto-emulator");
    util::run(
        Command::new("cargo")
            .args(["build", "-p", "docauto-emulator"])
            .current_dir(&r),
        Duration::from_secs(20 * 60),
    )?;
    let status = Command::new("node")
        .arg("www/dev.mjs")
        .arg("--pkg")
        .arg(r.join("pkg"))
        .arg("--emulator")
        .arg(r.join("target/debug/docauto-emulator"))
        .current_dir(&r)
        .status()
        .map_err(|e| format!("cannot start node www/dev.mjs: {e}"))?;
    if status.success() || status.code().is_none() {
        Ok(())
    } else {
        Err(format!("the demo exited with {status}"))
    }
}
