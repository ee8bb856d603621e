//! `cargo xtask fuzz`: bounded cargo-fuzz runs on stable Rust (RUSTC_BOOTSTRAP=1 unlocks the -Z flags), then the
//! wasm boundary's target: the built package in Node driven with random hostile JS values
//! (`tests/js/fuzz-boundary.mjs`).

use crate::util::{self, root, step};
use std::process::Command;
use std::time::Duration;

/// The targets of fuzz/Cargo.toml; each has seeds in fuzz/seeds/<target>/ (the working corpus is fuzz/corpus/).
const TARGETS: &[&str] = &["parse_compact", "keyset_from_json", "verify"];

/// The Node target of the wasm boundary: hostile JS values at every entry of the built package.
const BOUNDARY_TARGET: &str = "tests/js/fuzz-boundary.mjs";

/// Installs cargo-fuzz into .tools if needed, then fuzzes each target for `secs` seconds; then builds the package
/// and fuzzes its boundary from Node for `secs` seconds.
pub fn fuzz(secs: u64) -> Result<bool, String> {
    let r = root();
    let cargo_fuzz = r.join(".tools/bin/cargo-fuzz");
    if !cargo_fuzz.exists() {
        step("cargo install cargo-fuzz --root .tools");
        util::run(
            Command::new("cargo")
                .args(["install", "cargo-fuzz", "--root"])
                .arg(r.join(".tools")),
            Duration::from_secs(20 * 60),
        )?;
    }
    let mut all_ok = true;
    for target in TARGETS {
        step(&format!("fuzz {target} for {secs} s"));
        let corpus = r.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("cannot create the corpus dir: {e}"))?;
        let res = util::run(
            Command::new(&cargo_fuzz)
                .args(["fuzz", "run", "--fuzz-dir", "fuzz", target])
                .arg(&corpus)
                .arg(r.join("fuzz/seeds").join(target))
                .arg("--")
                .arg(format!("-max_total_time={secs}"))
                .arg("-rss_limit_mb=1024")
                .env("RUSTC_BOOTSTRAP", "1")
                .current_dir(&r),
            Duration::from_secs(secs + 20 * 60),
        );
        if let Err(e) = res {
            println!("fuzz {target}: {e}");
            all_ok = false;
        }
    }
    step(&format!(
        "fuzz the wasm boundary from Node for {secs} s ({BOUNDARY_TARGET})"
    ));
    let boundary = crate::install::install()
        .and_then(|()| crate::build::build())
        .and_then(|()| {
            util::run(
                Command::new("node")
                    .arg(BOUNDARY_TARGET)
                    .arg(secs.to_string())
                    .current_dir(&r),
                Duration::from_secs(secs + 120),
            )
        });
    if let Err(e) = boundary {
        println!("fuzz boundary: {e}");
        all_ok = false;
    }
    println!(
        "fuzz: {}",
        if all_ok {
            "no crash found"
        } else {
            "FAILED (see above)"
        }
    );
    Ok(all_ok)
}
