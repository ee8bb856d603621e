//! `cargo xtask site [--out DIR]`: the documentation as one folder of static files (default `target/site/`), written
//! by www/site/build.mjs from the Markdown of the repository and pkg/ (built before): the README as the home page,
//! the guides of docs/, api.md, CHANGELOG.md, MIGRATION.md and every Markdown file they link to, each with the
//! navigation; the playground under `playground/`; the package's browser files and the samples the examples read.
//! A link that resolves to no page or no heading fails the build with its file and line.

use crate::util::{self, root, step};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The folder of `site [--out DIR]` (default `target/site`, relative paths from the repository root).
///
/// # Errors
/// An argument other than `--out DIR`.
pub fn out_dir(args: &[String]) -> Result<PathBuf, String> {
    match args {
        [] => Ok(root().join("target/site")),
        [flag, dir] if flag == "--out" => Ok(root().join(dir)),
        _ => Err("usage: cargo xtask site [--out DIR]".into()),
    }
}

/// Writes the site into `out` from pkg/ (built before).
///
/// # Errors
/// node could not run www/site/build.mjs, or it failed (a broken link: its file and line are printed).
pub fn site(out: &Path) -> Result<(), String> {
    let r = root();
    step(&format!("node www/site/build.mjs --out {}", out.display()));
    util::run(
        Command::new("node")
            .arg("www/site/build.mjs")
            .arg("--out")
            .arg(out)
            .arg("--pkg")
            .arg(r.join("pkg"))
            .current_dir(&r),
        Duration::from_secs(300),
    )?;
    println!(
        "serve {} with any static file server (from a sub-path too) and open its index.html",
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_takes_an_out_folder_or_nothing() {
        assert_eq!(out_dir(&[]).unwrap(), root().join("target/site"));
        let args = ["--out".to_owned(), "site".to_owned()];
        assert_eq!(out_dir(&args).unwrap(), root().join("site"));
        assert!(out_dir(&["--outdir".to_owned(), "x".to_owned()]).is_err());
        assert!(out_dir(&["--out".to_owned()]).is_err());
    }
}
