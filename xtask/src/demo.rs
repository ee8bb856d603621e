//! `cargo xtask demo`: builds the emulator, then runs www/dev.mjs, which starts the emulator and the demo backend on
//! 127.0.0.1 and prints the one address to open. Ctrl-C reaches it (same process group) and stops everything.
//!
//! `cargo xtask playground [--out DIR]`: the same demo as a folder of static files (www/playground/build.mjs), with
//! the emulator and the backend running in the page; any static file server serves it, from a sub-path too.

use crate::util::{self, root, step};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The folder of `playground [--out DIR]` (default `target/playground`, relative paths from the repository root).
///
/// # Errors
/// An argument other than `--out DIR`.
pub fn out_dir(args: &[String]) -> Result<PathBuf, String> {
    match args {
        [] => Ok(root().join("target/playground")),
        [flag, dir] if flag == "--out" => Ok(root().join(dir)),
        _ => Err("usage: cargo xtask playground [--out DIR]".into()),
    }
}

/// Writes the static playground into `out` from pkg/ (built before).
///
/// # Errors
/// node could not run www/playground/build.mjs, or it failed.
pub fn playground(out: &Path) -> Result<(), String> {
    let r = root();
    step(&format!(
        "node www/playground/build.mjs --out {}",
        out.display()
    ));
    util::run(
        Command::new("node")
            .arg("www/playground/build.mjs")
            .arg("--out")
            .arg(out)
            .arg("--pkg")
            .arg(r.join("pkg"))
            .current_dir(&r),
        Duration::from_secs(120),
    )?;
    println!(
        "serve {} with any static file server (from a sub-path too), then open its index.html over http://127.0.0.1 or https",
        out.display()
    );
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playground_takes_an_out_folder_or_nothing() {
        assert_eq!(out_dir(&[]).unwrap(), root().join("target/playground"));
        let args = ["--out".to_owned(), "/tmp/site".to_owned()];
        assert_eq!(out_dir(&args).unwrap(), PathBuf::from("/tmp/site"));
        assert!(out_dir(&["--outdir".to_owned(), "x".to_owned()]).is_err());
        assert!(out_dir(&["--out".to_owned()]).is_err());
    }
}
