//! `cargo xtask bench`: every benchmark of the package in one run. The webhook verifier against jose in Node, workerd
//! and Chromium (tests/js/bench.mjs); what each entry adds to a bundle (tests/js/size-bench.mjs); the first verified
//! delivery after a cold start against jose (tests/js/cold-start.mjs, [`crate::cold_start`]); the client against
//! openai-node and raw `fetch` (tests/js/client/bench.mjs); live transcription's resampling and its capture path in
//! Chromium (tests/js/realtime/); the emulator's wasm build beside the native binary (tests/js/emulator/bench.mjs) and
//! under load (docauto-emulator-bench); the static playground (tests/js/playground/bench.mjs); the documentation site (tests/js/site/bench.mjs).
//!
//! Each benchmark runs whatever became of the others. `--write` writes the run into BENCHMARKS.md: the summary at its
//! top, assembled from the benchmarks' `BENCH {...}` lines, and each benchmark's section between its markers. A
//! section whose benchmark did not finish says so (and the summary shows its figures as not measured in this run);
//! a check a benchmark failed is named in its section. The targets below are held against the same run's figures and
//! their verdicts written into PERFORMANCE.md. The command fails when a benchmark did not finish or failed a check,
//! after writing; a target not met is a verdict, not a failure of the run.

use crate::util::{self, root, step};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What a figure of the summary or a verdict reads when its benchmark gave none in this run.
pub(crate) const NOT_MEASURED: &str = "not measured in this run";

/// Size budgets: gzip -9 of the `.wasm` each entry loads, at most this many KiB, and a stretch goal where there is one.
const SIZE_BUDGETS: [(&str, u64, Option<u64>); 4] = [
    ("docauto", 110, Some(80)),
    ("docauto/webhooks", 64, None),
    ("docauto/realtime", 80, Some(40)),
    ("docauto/testing", 80, None),
];
/// The same for `docauto/emulator`'s module, measured by tests/js/emulator/bench.mjs.
const EMULATOR_BUDGET: (u64, Option<u64>) = (1024, Some(600));
/// The client's time per call, every shape: at most this share of openai-node's (median of the rounds' ratios).
const CLIENT_VS_OPENAI: f64 = 0.90;
/// The client's time per call against raw `fetch` + `response.json()`, for the shapes that have a target.
const CLIENT_VS_RAW: [(&str, f64); 2] = [("get", 1.10), ("post", 1.25)];
/// The client benchmark's shapes: the key of its `BENCH` line and the name its table gives.
/// The summary's row of the client observed by an OpenTelemetry SDK.
const OBSERVED_ROW: &str =
    "get, post, wait and list with an OpenTelemetry SDK listening (every span exported, metrics recorded)";
const CLIENT_SHAPES: [(&str, &str); 4] = [
    ("get", "GET a run"),
    ("post", "POST a config (20 KB schema)"),
    ("wait", "wait over 3 polls"),
    ("list", "5 list pages of 100 runs"),
];
/// The checks the realtime benchmarks make (each fails its script when it fails): the start of the check's name (the
/// resampler's ends with its floor, which the script's `BENCH` line gives too), the script, and what it holds, as the
/// verdict table says it.
const REALTIME_CHECKS: [(&str, &str, &str); 4] = [
    (
        "wasm_resample_and_encode_is_at_least_",
        "realtime",
        "resampling 48 kHz audio to 16 kHz PCM16 frames in wasm (Node): at least {floor}x realtime",
    ),
    (
        "both_paths_produce_the_same_amount_of_pcm16",
        "realtime",
        "the wasm resampler and the plain-JS one give the same amount of PCM16",
    ),
    (
        "every_session_opened_and_gave_a_partial",
        "realtime-browser",
        "Chromium: every session opened and gave a partial transcript",
    ),
    (
        "the_capture_path_stays_under_a_tenth_of_a_core",
        "realtime-browser",
        "Chromium: the capture path under 100 ms of CPU per second of audio, over the same microphone into a no-op worklet",
    ),
];

/// A section of BENCHMARKS.md: the name of its markers (`<!-- bench-NAME:begin -->`) and the heading it is added
/// under when the file lacks them.
struct Place {
    key: &'static str,
    heading: &'static str,
}

const SUMMARY: Place = Place {
    key: "summary",
    heading: "## What you pay",
};
const VERIFY: Place = Place {
    key: "verify",
    heading: "## Verifications per second against jose",
};
const COLD: Place = Place {
    key: "cold",
    heading: "## First verified delivery after a cold start, against jose",
};
const SIZE: Place = Place {
    key: "size",
    heading: "## What each entry adds to a bundle",
};
const CLIENT: Place = Place {
    key: "client",
    heading: "## The API client against openai-node and raw `fetch`",
};
const REALTIME: Place = Place {
    key: "realtime",
    heading: "## Live transcription: resampling",
};
const REALTIME_BROWSER: Place = Place {
    key: "realtime-browser",
    heading: "## Live transcription in Chromium",
};
const EMULATOR: Place = Place {
    key: "emulator",
    heading: "## The emulator in-process against the native binary",
};
const EMULATOR_LOAD: Place = Place {
    key: "emulator-load",
    heading: "## The emulator under load",
};
const PLAYGROUND: Place = Place {
    key: "playground",
    heading: "## The static playground",
};
const SITE: Place = Place {
    key: "site",
    heading: "## The documentation site",
};
/// The verdicts' markers in PERFORMANCE.md.
const VERDICTS_BEGIN: &str = "<!-- perf-verdicts:begin -->";
const VERDICTS_END: &str = "<!-- perf-verdicts:end -->";

/// Every benchmark of one run.
struct Runs {
    verify: Run,
    size: Run,
    cold: Run,
    client: Run,
    realtime: Run,
    realtime_browser: Run,
    emulator: Run,
    playground: Run,
    site: Run,
    load: Run,
}

impl Runs {
    fn all(&self) -> [&Run; 10] {
        [
            &self.verify,
            &self.size,
            &self.cold,
            &self.client,
            &self.realtime,
            &self.realtime_browser,
            &self.emulator,
            &self.playground,
            &self.site,
            &self.load,
        ]
    }
}

/// Runs every benchmark and prints its results; with `write`, writes them into BENCHMARKS.md and PERFORMANCE.md.
pub fn bench(write: bool) -> Result<(), String> {
    let started = Instant::now();
    let load_before = load_average();
    let r = root();
    let _tmp = util::RunTmp::enter();

    step("node tests/js/bench.mjs (verifications per second: docauto vs jose in Node, workerd and Chromium)");
    let verify = Run::node(&r, &["tests/js/bench.mjs"], &[]);
    step("node tests/js/size-bench.mjs (per entry: wasm and JS sizes, jose's beside docauto/webhooks; cold start in Node and workerd; npm tarball)");
    let size = Run::node(&r, &["tests/js/size-bench.mjs"], &[]);
    let cold = crate::cold_start::run(&r);

    step("cargo build --release -p docauto-emulator -p docauto-emulator-bench (benchmarks run against a release emulator)");
    let release = util::run(
        Command::new("cargo")
            .args([
                "build",
                "--release",
                "-p",
                "docauto-emulator",
                "-p",
                "docauto-emulator-bench",
                "--bins",
            ])
            .current_dir(&r),
        Duration::from_secs(20 * 60),
    )
    .map_err(|e| format!("the release emulator did not build ({e})"));
    let emulator = r
        .join("target/release/docauto-emulator")
        .to_string_lossy()
        .into_owned();
    let with_emulator = [("DOCAUTO_EMULATOR", emulator.as_str())];
    let needs_emulator = |args: &[&str]| match &release {
        Ok(()) => Run::node(&r, args, &with_emulator),
        Err(e) => Run::skipped(format!("node {}", args.join(" ")), e),
    };

    step("node tests/js/client/bench.mjs 15 1 --otel (client vs openai-node and raw fetch, and observed by an OpenTelemetry SDK; four shapes, one local server)");
    let client = Run::node(&r, &["tests/js/client/bench.mjs", "15", "1", "--otel"], &[]);
    step("node tests/js/realtime/bench.mjs (resample + encode one second of 48 kHz audio)");
    let realtime = Run::node(&r, &["tests/js/realtime/bench.mjs"], &[]);
    step("node tests/js/realtime/browser-bench.mjs (Chromium: start() to open and first partial, capture CPU)");
    let realtime_browser = needs_emulator(&["tests/js/realtime/browser-bench.mjs"]);
    step("node tests/js/emulator/bench.mjs (docauto/emulator: size, cold start, latency, creations/s beside the native binary)");
    let emulator_run = needs_emulator(&["tests/js/emulator/bench.mjs"]);
    step("node tests/js/playground/bench.mjs (the static playground: size, time to the first panel in Chromium beside the served demo)");
    let playground = needs_emulator(&["tests/js/playground/bench.mjs"]);
    step("node tests/js/site/bench.mjs (the documentation site: size, a guide's first Run answer in Chromium beside the playground's first panel)");
    let site = Run::node(&r, &["tests/js/site/bench.mjs"], &[]);
    step("docauto-emulator-bench (requests/s, creations with and without --state, mixed load over 100 000 runs)");
    let load = match &release {
        Ok(()) => Run::capture(
            "docauto-emulator-bench".into(),
            Command::new(r.join("target/release/docauto-emulator-bench")).current_dir(&r),
            Duration::from_secs(15 * 60),
        ),
        Err(e) => Run::skipped("docauto-emulator-bench".into(), e),
    };
    let runs = Runs {
        verify,
        size,
        cold,
        client,
        realtime,
        realtime_browser,
        emulator: emulator_run,
        playground,
        site,
        load,
    };

    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let machine = Machine::read(&r, load_before, load_average());
    let sections = sections(&runs, &machine);
    let verdicts = verdicts(&runs);
    let verdict_table = verdict_table(&verdicts, minutes, &machine);
    for (place, body) in &sections {
        println!("\n{}\n\n{body}", place.heading);
    }
    println!("\nPERFORMANCE.md, targets\n\n{verdict_table}");
    if write {
        write_sections(&r.join("BENCHMARKS.md"), &sections)?;
        let path = r.join("PERFORMANCE.md");
        let doc = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read PERFORMANCE.md: {e}"))?;
        let doc = replace_or_append(
            &doc,
            "## Targets and their verdicts",
            VERDICTS_BEGIN,
            VERDICTS_END,
            &verdict_table,
        );
        std::fs::write(&path, doc).map_err(|e| format!("cannot write PERFORMANCE.md: {e}"))?;
        step("BENCHMARKS.md and PERFORMANCE.md written");
    }
    println!("xtask bench: {minutes:.1} minutes");
    for v in verdicts
        .iter()
        .filter(|v| v.verdict != "met" && !v.verdict.starts_with("met "))
    {
        println!("xtask bench: {} / {}: {}", v.area, v.target, v.verdict);
    }
    let failed: Vec<String> = runs.all().iter().filter_map(|run| run.problem()).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of the benchmarks did not finish or failed a check{}: {}",
            failed.len(),
            if write { " (the rest is written)" } else { "" },
            failed.join("; ")
        ))
    }
}

// ---------------------------------------------------------------------------------------------------------------
// One benchmark's process.

/// What one benchmark's process printed and how it ended.
pub(crate) struct Run {
    /// The command, as the report names it.
    command: String,
    /// Everything it printed, stdout and stderr interleaved by line.
    text: String,
    /// Why it did not exit 0 (a status, a deadline, a start that failed); `None` when it did.
    failure: Option<String>,
}

/// A check a benchmark printed (`ok   name` or `FAIL name: reason`).
struct Check {
    name: String,
    /// Why it failed; `None` when it passed.
    failed: Option<String>,
}

impl Run {
    /// Runs `node args...` in `r`.
    fn node(r: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = Command::new("node");
        c.args(args).current_dir(r);
        for (k, v) in env {
            c.env(k, v);
        }
        Run::capture(
            format!("node {}", args.join(" ")),
            &mut c,
            Duration::from_secs(15 * 60),
        )
    }

    /// Runs `c` with a deadline, echoing and keeping its output.
    pub(crate) fn capture(command: String, c: &mut Command, limit: Duration) -> Run {
        match util::run_capture(c, limit, true) {
            Ok(fin) => {
                let failure = if fin.ok() {
                    None
                } else if fin.timed_out {
                    Some(format!("was stopped after {} s", limit.as_secs()))
                } else {
                    Some(match fin.code {
                        Some(code) => format!("exited with status {code}"),
                        None => "was killed by a signal".to_owned(),
                    })
                };
                Run {
                    command,
                    text: fin.output,
                    failure,
                }
            }
            Err(e) => Run {
                command,
                text: String::new(),
                failure: Some(e),
            },
        }
    }

    /// A benchmark not started, and why.
    fn skipped(command: String, why: &str) -> Run {
        Run {
            command,
            text: String::new(),
            failure: Some(format!("was not started: {why}")),
        }
    }

    /// The markdown report it printed between `<!-- table -->` and `<!-- /table -->` (or its end).
    fn table(&self) -> Option<String> {
        let (_, rest) = self.text.split_once("<!-- table -->")?;
        let table = rest.split_once("<!-- /table -->").map_or(rest, |(t, _)| t);
        let table = table.trim();
        (!table.is_empty()).then(|| table.to_owned())
    }

    /// Its last `BENCH {...}` line, read.
    fn bench(&self) -> Option<Json> {
        self.text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("BENCH "))
            .and_then(|j| Json::parse(j).ok())
    }

    /// The checks it printed, in order (a `FAIL setup: ...` line is a run that did not get to its checks).
    fn checks(&self) -> Vec<Check> {
        self.text
            .lines()
            .filter_map(|l| {
                if let Some(name) = l.strip_prefix("ok   ") {
                    Some(Check {
                        name: name.trim().to_owned(),
                        failed: None,
                    })
                } else if let Some(rest) = l.strip_prefix("FAIL ") {
                    let (name, why) = rest.split_once(": ").unwrap_or((rest, "no reason given"));
                    (name != "setup").then(|| Check {
                        name: name.trim().to_owned(),
                        failed: Some(why.trim().to_owned()),
                    })
                } else {
                    None
                }
            })
            .collect()
    }

    /// The line that says why it stopped, shortened, without a closing period: the last error it printed
    /// (`Error: ...`, `TypeError: ...`, `FAIL setup: ...`), else its last line that is neither a stack frame nor
    /// Node's version banner.
    fn reason(&self) -> Option<String> {
        let lines: Vec<&str> = self
            .text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let error = lines.iter().rev().find(|l| {
            l.starts_with("FAIL setup:")
                || l.split_once(": ").is_some_and(|(head, _)| {
                    head.ends_with("Error") && !head.contains(char::is_whitespace)
                })
        });
        let line = error
            .or_else(|| {
                lines
                    .iter()
                    .rev()
                    .find(|l| !l.starts_with("at ") && !l.starts_with("Node.js v"))
            })?
            .trim_end_matches('.');
        let short: String = line.chars().take(240).collect();
        let short = short.replace('`', "'");
        Some(if line.chars().count() > 240 {
            format!("{short}...")
        } else {
            short
        })
    }

    /// Why it gave no report, as the end of a sentence that starts with its command.
    fn why_not(&self) -> String {
        let how = self.failure.as_deref().unwrap_or("printed no report");
        match self.reason() {
            Some(reason) if self.failure.is_some() => format!("{how} before its report: {reason}"),
            _ => how.to_owned(),
        }
    }

    /// The lines its section adds under its report: each check it failed, or how it ended when that was not well
    /// and no check says why.
    fn failure_lines(&self) -> Vec<String> {
        let failed: Vec<String> = self
            .checks()
            .into_iter()
            .filter_map(|c| {
                c.failed.map(|why| {
                    format!(
                        "This run's check `{}` failed: {}.",
                        c.name,
                        why.trim_end_matches('.')
                    )
                })
            })
            .collect();
        match &self.failure {
            Some(how) if failed.is_empty() => vec![format!(
                "This run's `{}` {how} after its report{}.",
                self.command,
                self.reason().map(|r| format!(": {r}")).unwrap_or_default()
            )],
            _ => failed,
        }
    }

    /// What went wrong, for the command's own error: `None` when it finished and every check passed.
    fn problem(&self) -> Option<String> {
        let failed: Vec<String> = self
            .checks()
            .into_iter()
            .filter(|c| c.failed.is_some())
            .map(|c| c.name)
            .collect();
        match (&self.failure, failed.is_empty()) {
            (None, true) => None,
            (Some(how), true) => Some(format!("`{}` {how}", self.command)),
            (_, false) => Some(format!("`{}` failed {}", self.command, failed.join(", "))),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// BENCHMARKS.md.

/// The machine a run measured on, and its load.
struct Machine {
    /// The CPU, the cores, the memory and the kernel, in a few words.
    host: String,
    /// The runtimes' versions.
    versions: String,
    /// The 1-minute load average at the run's start and end.
    load: (Option<f64>, Option<f64>),
}

impl Machine {
    fn read(r: &Path, before: Option<f64>, after: Option<f64>) -> Machine {
        let file = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = file("/proc/cpuinfo");
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or("unknown CPU", |(_, m)| m.trim())
            .to_owned();
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let memory = file("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| format!(", {:.0} GiB", kb / 1024.0 / 1024.0))
            .unwrap_or_default();
        let kernel = file("/proc/sys/kernel/osrelease");
        let host = format!("{cpu}, {cores} cores{memory}, Linux {}", kernel.trim());
        let bin = |b: &str| r.join("node_modules/.bin").join(b);
        let version = |cmd: &Path, prefix: &str| {
            first_line(cmd, &["--version"]).map(|v| {
                let v = v.split(" (").next().unwrap_or(&v).to_owned();
                let v = v.strip_prefix(prefix).unwrap_or(&v).trim().to_owned();
                format!("{} {v}", prefix.trim())
            })
        };
        let versions = [
            first_line(Path::new("node"), &["--version"]).map(|v| format!("Node {v}")),
            version(&bin("deno"), "deno ").map(|v| v.replacen("deno", "Deno", 1)),
            first_line(&bin("bun"), &["--version"]).map(|v| format!("Bun {v}")),
            version(&bin("workerd"), "workerd "),
            first_line(Path::new("/usr/bin/chromium"), &["--version"])
                .map(|v| v.split(" built").next().unwrap_or(&v).to_owned()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        Machine {
            host,
            versions,
            load: (before, after),
        }
    }

    fn load_text(&self) -> String {
        let one = |x: Option<f64>| x.map_or("unknown".to_owned(), |x| format!("{x:.1}"));
        format!(
            "1-minute load average {} at its start, {} at its end",
            one(self.load.0),
            one(self.load.1)
        )
    }
}

/// The first line `cmd args` prints, if it runs.
fn first_line(cmd: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim();
    (out.status.success() && !line.is_empty()).then(|| line.to_owned())
}

/// The 1-minute load average (/proc/loadavg).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Every section of BENCHMARKS.md as this run writes it.
fn sections<'a>(runs: &Runs, machine: &Machine) -> Vec<(&'a Place, String)> {
    let realtime_finished = |run: &Run| run.bench().is_some();
    let load_finished = runs.load.text.contains("memory verdict:");
    vec![
        (&SUMMARY, summary(runs, machine)),
        (&VERIFY, section(&runs.verify, runs.verify.table())),
        (&COLD, section(&runs.cold, runs.cold.table())),
        (&SIZE, section(&runs.size, runs.size.table())),
        (&CLIENT, section(&runs.client, runs.client.table())),
        (
            &REALTIME,
            section(
                &runs.realtime,
                realtime_finished(&runs.realtime).then(|| text_block(&runs.realtime)),
            ),
        ),
        (
            &REALTIME_BROWSER,
            section(
                &runs.realtime_browser,
                realtime_finished(&runs.realtime_browser)
                    .then(|| text_block(&runs.realtime_browser)),
            ),
        ),
        (&EMULATOR, section(&runs.emulator, runs.emulator.table())),
        (
            &EMULATOR_LOAD,
            section(&runs.load, load_finished.then(|| text_block(&runs.load))),
        ),
        (
            &PLAYGROUND,
            section(&runs.playground, runs.playground.table()),
        ),
        (&SITE, section(&runs.site, runs.site.table())),
    ]
}

/// A benchmark's section: its report and the checks it failed, or why it gave none.
fn section(run: &Run, report: Option<String>) -> String {
    match report {
        None => format!(
            "Not measured in this run: `{}` {}.",
            run.command,
            run.why_not()
        ),
        Some(report) => {
            let mut out = report;
            for line in run.failure_lines() {
                out.push_str("\n\n");
                out.push_str(&line);
            }
            out
        }
    }
}

/// The result lines of a benchmark that prints lines rather than a table, in a text block (its machine-readable
/// line, its checks and its tallies are left out: the section names a failed check below the block).
fn text_block(run: &Run) -> String {
    let lines: Vec<&str> = run
        .text
        .lines()
        .filter(|l| {
            let t = l.trim();
            !(t.is_empty()
                || l.starts_with("==>")
                || l.starts_with("   Compiling")
                || l.starts_with("BENCH ")
                || l.starts_with("RESULT ")
                || l.starts_with("ok   ")
                || l.starts_with("FAIL ")
                || l.starts_with("docauto-emulator-bench: ")
                || is_tally(t))
        })
        .collect();
    format!("```text\n{}\n```", lines.join("\n"))
}

/// `N passed, N failed`.
fn is_tally(line: &str) -> bool {
    line.split_once(" passed, ")
        .and_then(|(p, f)| Some((p, f.strip_suffix(" failed")?)))
        .is_some_and(|(p, f)| p.parse::<u64>().is_ok() && f.parse::<u64>().is_ok())
}

/// The summary at the top of BENCHMARKS.md: what a user pays, each figure beside what they would use instead, all
/// from this run's `BENCH` lines.
fn summary(runs: &Runs, machine: &Machine) -> String {
    let size = runs.size.bench();
    let cold = runs.cold.bench();
    let verify = runs.verify.bench();
    let client = runs.client.bench();
    let emulator = runs.emulator.bench();
    let blank = |label: &str| format!("| {label} | {NOT_MEASURED} | | |");
    let mut rows = vec![
        "| | docauto | instead | docauto / instead |".to_owned(),
        "| --- | --- | --- | --- |".to_owned(),
        "| **Module size**, gzip -9: the `.wasm` an entry loads + its JS, bundled and minified | | | |".to_owned(),
    ];
    let entry = |name: &str| {
        size.as_ref()?
            .items(&["entries"])
            .into_iter()
            .find(|e| e.str(&["name"]) == Some(name))
    };
    for (name, label) in [
        ("docauto", "`docauto`, the API client"),
        ("docauto/webhooks", "`docauto/webhooks`"),
        ("docauto/realtime", "`docauto/realtime`"),
        ("docauto/testing", "`docauto/testing`"),
    ] {
        let e = entry(name);
        let wasm = e.as_ref().and_then(|e| e.num(&["wasm", "gzip"]));
        let js = e.as_ref().and_then(|e| e.num(&["js", "gzip"]));
        let (Some(wasm), Some(js)) = (wasm, js) else {
            rows.push(blank(label));
            continue;
        };
        let mut ours = format!("{} wasm + {} JS", kib(wasm), kib(js));
        let mut instead = String::new();
        let mut vs = String::new();
        if name == "docauto/webhooks" {
            if let Some(p256) = e.as_ref().and_then(|e| e.num(&["companion", "gzip"])) {
                ours.push_str(&format!(
                    "; `verifySync` outside Node loads {} more",
                    kib(p256)
                ));
            }
            let jose = size.as_ref().and_then(|s| s.num(&["jose", "js", "gzip"]));
            if let Some(jose) = jose {
                let version = size
                    .as_ref()
                    .and_then(|s| s.str(&["jose", "version"]))
                    .unwrap_or("");
                instead = format!("jose {version}: {}", kib(jose));
                vs = ratio((wasm + js) / jose);
            }
        }
        rows.push(format!("| {label} | {ours} | {instead} | {vs} |"));
    }
    match emulator.as_ref().and_then(|e| e.num(&["wasm", "gzip"])) {
        Some(gz) => rows.push(format!("| `docauto/emulator` | {} of wasm | | |", kib(gz))),
        None => rows.push(blank("`docauto/emulator`")),
    }

    rows.push(
        "| **First verified delivery after a cold start**: time over a bare start (lower is better) | | jose | |"
            .to_owned(),
    );
    rows.extend(crate::cold_start::summary_rows(cold.as_ref()));

    let body = verify
        .as_ref()
        .and_then(|v| v.num(&["bodyBytes"]))
        .map_or(String::new(), |b| format!(", a {b:.0}-byte delivery"));
    rows.push(format!(
        "| **Verifications per second**{body} (higher is better) | | jose | |"
    ));
    for (runtime, label) in [
        ("node", "Node"),
        ("workerd", "workerd"),
        ("chromium", "Chromium"),
    ] {
        for (call, crypto) in [("verify", "verify"), ("verifySync", "verifySync")] {
            let how = match (runtime, call) {
                ("node", _) => "node:crypto",
                (_, "verify") => "WebCrypto",
                _ => "p256 in wasm",
            };
            let row_label = format!("{label}: `{crypto}` ({how})");
            let v = verify.as_ref();
            let figures = v.and_then(|v| {
                Some((
                    v.num(&[runtime, call])?,
                    v.num(&[runtime, "jose"])?,
                    v.num(&[runtime, &format!("{call}Ratio")])?,
                ))
            });
            rows.push(match figures {
                Some((ours, jose, r)) => format!(
                    "| {row_label} | {} | {} | {} |",
                    thousands(ours),
                    thousands(jose),
                    ratio(r)
                ),
                None => blank(&row_label),
            });
        }
    }

    rows.push(
        "| **API client, time per call** in Node, one local server (lower is better) | | openai-node; raw `fetch` | |"
            .to_owned(),
    );
    let shapes = client
        .as_ref()
        .map(|c| c.items(&["shapes"]))
        .unwrap_or_default();
    for (key, name) in CLIENT_SHAPES {
        let s = shapes.iter().find(|s| s.str(&["shape"]) == Some(key));
        let figures = s.and_then(|s| {
            Some((
                s.num(&["us", "docauto"])?,
                s.num(&["us", "openai"])?,
                s.num(&["us", "raw"])?,
                s.num(&["vs_openai", "median"])?,
                s.num(&["vs_raw", "median"])?,
            ))
        });
        rows.push(match figures {
            Some((d, o, w, vo, vw)) => format!(
                "| {name} | {:.0} us | {:.0} us; {:.0} us | {}; {} |",
                d.round(),
                o.round(),
                w.round(),
                ratio(vo),
                ratio(vw)
            ),
            None => blank(name),
        });
    }
    // The same calls with an OpenTelemetry SDK listening (the bench's `--otel` side): the cost of being observed.
    let observed: Vec<(&str, f64, f64)> = CLIENT_SHAPES
        .iter()
        .filter_map(|(key, _)| {
            let s = shapes.iter().find(|s| s.str(&["shape"]) == Some(*key))?;
            Some((
                *key,
                s.num(&["us", "otel"])?,
                s.num(&["otel_vs_docauto", "median"])?,
            ))
        })
        .collect();
    rows.push(if observed.len() == CLIENT_SHAPES.len() {
        let times: Vec<String> = observed
            .iter()
            .map(|(key, us, _)| format!("{key} {us:.0} us"))
            .collect();
        let ratios: Vec<String> = observed.iter().map(|(_, _, r)| ratio(*r)).collect();
        format!(
            "| {OBSERVED_ROW} | {} | the same calls, no SDK | {} |",
            times.join(", "),
            ratios.join(", ")
        )
    } else {
        blank(OBSERVED_ROW)
    });

    rows.push(
        "| **The emulator in-process** (`createEmulator`), against the native binary over HTTP | | native binary | |"
            .to_owned(),
    );
    let e = emulator.as_ref();
    let pair = |path: &str| {
        e.and_then(|e| Some((e.num(&[path, "inProcess"])?, e.num(&[path, "native"])?)))
    };
    rows.push(match pair("p50Ms") {
        Some((ours, native)) => format!(
            "| `GET /v1/agents`, median latency (lower is better) | {:.0} us | {:.0} us | {} |",
            (ours * 1000.0).round(),
            (native * 1000.0).round(),
            ratio(ours / native)
        ),
        None => blank("`GET /v1/agents`, median latency (lower is better)"),
    });
    rows.push(match pair("creationsPerSecond") {
        Some((ours, native)) => format!(
            "| agent-run creations per second (higher is better) | {} | {} | {} |",
            thousands(ours),
            thousands(native),
            ratio(ours / native)
        ),
        None => blank("agent-run creations per second (higher is better)"),
    });
    rows.push(match pair("coldMs") {
        Some((ours, native)) => format!(
            "| a fresh process to its first answer (lower is better) | {:.0} ms | {:.0} ms | {} |",
            ours.round(),
            native.round(),
            ratio(ours / native)
        ),
        None => blank("a fresh process to its first answer (lower is better)"),
    });

    format!(
        "Measured by one `cargo xtask bench` run on {} ({}); {}.\n\n{}\n\n\
         Every ratio is taken within the run. Verifications and the client's calls alternate with their peer's round \
         by round, and their ratio is the median of the rounds' ratios, so it can differ from the quotient of the two \
         figures beside it; the other ratios divide the two figures.",
        machine.host,
        machine.load_text(),
        machine.versions,
        rows.join("\n")
    )
}

/// Writes each section between its markers in the file at `path` (a section whose markers are missing is added at
/// the end, under its heading).
fn write_sections(path: &Path, sections: &[(&Place, String)]) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or("BENCHMARKS.md".into(), |n| n.to_string_lossy());
    let mut doc = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    for (place, body) in sections {
        doc = replace_or_append(
            &doc,
            place.heading,
            &format!("<!-- bench-{}:begin -->", place.key),
            &format!("<!-- bench-{}:end -->", place.key),
            body,
        );
    }
    std::fs::write(path, doc).map_err(|e| format!("cannot write {name}: {e}"))
}

// ---------------------------------------------------------------------------------------------------------------
// PERFORMANCE.md: targets and verdicts.

/// A target held against this run's figures.
pub(crate) struct Verdict {
    /// What it concerns ("Cold start", "Module size", ...).
    pub area: &'static str,
    /// The target, in words.
    pub target: String,
    /// This run's figure.
    pub measured: String,
    /// "met", "not met", "met (stretch ... not met)", or why it has none.
    pub verdict: String,
}

impl Verdict {
    /// A target with a figure.
    pub(crate) fn against(area: &'static str, target: String, measured: String, met: bool) -> Self {
        Verdict {
            area,
            target,
            measured,
            verdict: if met { "met" } else { "not met" }.to_owned(),
        }
    }

    /// A target without a figure in this run, and why.
    pub(crate) fn not_measured(area: &'static str, target: String, why: &str) -> Self {
        Verdict {
            area,
            target,
            measured: "-".to_owned(),
            verdict: format!("{NOT_MEASURED} ({why})"),
        }
    }
}

/// Every target's verdict in this run.
fn verdicts(runs: &Runs) -> Vec<Verdict> {
    let why = |run: &Run| format!("`{}` {}", run.command, run.why_not());
    let mut out = crate::cold_start::verdicts(runs.cold.bench().as_ref(), &why(&runs.cold));

    let size = runs.size.bench();
    for (name, budget, stretch) in SIZE_BUDGETS {
        let target = size_target(&format!("`{name}`"), budget, stretch);
        let gzip = size.as_ref().and_then(|s| {
            s.items(&["entries"])
                .iter()
                .find(|e| e.str(&["name"]) == Some(name))?
                .num(&["wasm", "gzip"])
        });
        out.push(match gzip {
            Some(gz) => size_verdict(target, gz, budget, stretch),
            None => Verdict::not_measured("Module size", target, &why(&runs.size)),
        });
    }
    let (budget, stretch) = EMULATOR_BUDGET;
    let target = size_target("`docauto/emulator`", budget, stretch);
    out.push(
        match runs.emulator.bench().and_then(|e| e.num(&["wasm", "gzip"])) {
            Some(gz) => size_verdict(target, gz, budget, stretch),
            None => Verdict::not_measured("Module size", target, &why(&runs.emulator)),
        },
    );

    let client = runs.client.bench();
    let shapes = client
        .as_ref()
        .map(|c| c.items(&["shapes"]))
        .unwrap_or_default();
    let shape_ratio = |key: &str, peer: &str| {
        shapes
            .iter()
            .find(|s| s.str(&["shape"]) == Some(key))?
            .num(&[peer, "median"])
    };
    let mut client_targets: Vec<(&str, &str, &str, f64)> = CLIENT_SHAPES
        .iter()
        .map(|(key, name)| (*key, *name, "openai-node", CLIENT_VS_OPENAI))
        .collect();
    for (key, limit) in CLIENT_VS_RAW {
        let name = CLIENT_SHAPES
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(key, |(_, n)| n);
        client_targets.push((key, name, "raw `fetch`", limit));
    }
    for (key, name, peer, limit) in client_targets {
        let target = format!("{name}: at most {limit:.2} of {peer}'s time per call");
        let field = if peer == "openai-node" {
            "vs_openai"
        } else {
            "vs_raw"
        };
        out.push(match shape_ratio(key, field) {
            Some(r) => Verdict::against("API client", target, ratio(r), r <= limit),
            None => Verdict::not_measured("API client", target, &why(&runs.client)),
        });
    }

    for (check, script, target) in REALTIME_CHECKS {
        let run = if script == "realtime" {
            &runs.realtime
        } else {
            &runs.realtime_browser
        };
        let bench = run.bench();
        let floor = bench.as_ref().and_then(|b| b.num(&["floor"]));
        let target = target.replace(
            "{floor}",
            &floor.map_or("200".to_owned(), |f| format!("{f:.0}")),
        );
        let measured = match check {
            "wasm_resample_and_encode_is_at_least_" => bench
                .as_ref()
                .and_then(|b| b.num(&["wasmRealtimeFactor"]))
                .map(|x| format!("{x:.0}x realtime")),
            "the_capture_path_stays_under_a_tenth_of_a_core" => bench.as_ref().and_then(|b| {
                let ours = b.num(&["captureCpuMsPerAudioSecond"])?;
                let peer = b.num(&["peerCpuMsPerAudioSecond"])?;
                Some(format!("{:.1} ms", ours - peer))
            }),
            _ => None,
        };
        let found = run.checks().into_iter().find(|c| c.name.starts_with(check));
        out.push(match found {
            Some(c) => Verdict {
                area: "Live transcription",
                target,
                measured: measured.unwrap_or_else(|| "-".to_owned()),
                verdict: match c.failed {
                    None => "met".to_owned(),
                    Some(why) => format!("check failed: {why}"),
                },
            },
            None if bench.is_some() => Verdict::not_measured(
                "Live transcription",
                target,
                &format!("`{}` printed no check named `{check}...`", run.command),
            ),
            None => Verdict::not_measured("Live transcription", target, &why(run)),
        });
    }

    let target =
        "the live heap levels off over a mixed workload of 100 000 runs (`docauto-emulator-bench`)";
    let memory = runs
        .load
        .text
        .lines()
        .find_map(|l| l.trim().strip_prefix("memory verdict: "))
        .map(|v| v.split(" (").next().unwrap_or(v).to_owned());
    out.push(match memory {
        Some(m) => Verdict {
            area: "Emulator",
            target: target.to_owned(),
            measured: m,
            verdict: match &runs.load.failure {
                None => "met".to_owned(),
                Some(_) => format!("check failed: {}", runs.load.reason().unwrap_or_default()),
            },
        },
        None => Verdict::not_measured("Emulator", target.to_owned(), &why(&runs.load)),
    });
    out
}

fn size_target(entry: &str, budget: u64, stretch: Option<u64>) -> String {
    let limit = |kib: u64| {
        if kib.is_multiple_of(1024) {
            format!("{} MiB", kib / 1024)
        } else {
            format!("{kib} KiB")
        }
    };
    match stretch {
        Some(s) => format!(
            "{entry}: its module at most {} gzip -9 (stretch {})",
            limit(budget),
            limit(s)
        ),
        None => format!("{entry}: its module at most {} gzip -9", limit(budget)),
    }
}

fn size_verdict(target: String, gzip: f64, budget: u64, stretch: Option<u64>) -> Verdict {
    let bytes = |kib: u64| (kib * 1024) as f64;
    let mut v = Verdict::against("Module size", target, kib(gzip), gzip <= bytes(budget));
    if let Some(s) = stretch {
        let met = if gzip <= bytes(s) { "met" } else { "not met" };
        v.verdict = format!("{} (stretch {met})", v.verdict);
    }
    v
}

/// PERFORMANCE.md's table of targets and verdicts.
fn verdict_table(verdicts: &[Verdict], minutes: f64, machine: &Machine) -> String {
    let rows: Vec<String> = verdicts
        .iter()
        .map(|v| {
            format!(
                "| {} | {} | {} | {} |",
                v.area, v.target, v.measured, v.verdict
            )
        })
        .collect();
    format!(
        "Written by the last `cargo xtask bench --write`, from the figures BENCHMARKS.md shows (a run of {minutes:.0} \
         minutes on {}; {}).\n\n| area | target | this run | verdict |\n| --- | --- | --- | --- |\n{}",
        machine.host,
        machine.load_text(),
        rows.join("\n")
    )
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting, as the benchmarks' own tables print the same figures.

/// A target's number as written: one decimal at least (`1.0`, `1.8`), more when it has more (`0.85`).
pub(crate) fn decimal(x: f64) -> String {
    let one = format!("{x:.1}");
    if one.parse::<f64>() == Ok(x) {
        one
    } else {
        format!("{x}")
    }
}

/// A ratio with two decimals.
pub(crate) fn ratio(x: f64) -> String {
    format!("{x:.2}")
}

/// Milliseconds with a sign: `+8.8 ms`.
pub(crate) fn signed_ms(x: f64) -> String {
    format!("{}{x:.1} ms", if x >= 0.0 { "+" } else { "" })
}

/// Bytes as KiB with one decimal.
fn kib(bytes: f64) -> String {
    format!("{:.1} KiB", bytes / 1024.0)
}

/// A count rounded, its thousands set apart by spaces: `16 767`.
fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.round().abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    if x.round() < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Like `replace_between`, but a document without the markers gets them, under `heading`, at its end.
fn replace_or_append(doc: &str, heading: &str, begin: &str, end: &str, body: &str) -> String {
    replace_between(doc, begin, end, body).unwrap_or_else(|_| {
        format!(
            "{}\n\n{heading}\n\n{begin}\n{body}\n{end}\n",
            doc.trim_end()
        )
    })
}

fn replace_between(doc: &str, begin: &str, end: &str, body: &str) -> Result<String, String> {
    let (head, rest) = doc
        .split_once(begin)
        .ok_or(format!("the document lacks {begin}"))?;
    let (_, tail) = rest
        .split_once(end)
        .ok_or(format!("the document lacks {end}"))?;
    Ok(format!("{head}{begin}\n{body}\n{end}{tail}"))
}

// ---------------------------------------------------------------------------------------------------------------
// The `BENCH {...}` lines: JSON, read by serde_json (the workspace's own).

/// A JSON value, with the lookups the reports need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Json(serde_json::Value);

impl Json {
    /// Reads one JSON text.
    pub(crate) fn parse(text: &str) -> Result<Json, String> {
        serde_json::from_str(text)
            .map(Json)
            .map_err(|e| e.to_string())
    }

    /// The value at `path` through nested objects.
    fn value_at(&self, path: &[&str]) -> Option<&serde_json::Value> {
        path.iter().try_fold(&self.0, |v, k| v.get(k))
    }

    /// The value at `path`, as a value of its own.
    pub(crate) fn at(&self, path: &[&str]) -> Option<Json> {
        self.value_at(path).cloned().map(Json)
    }

    /// The number at `path`.
    pub(crate) fn num(&self, path: &[&str]) -> Option<f64> {
        self.value_at(path)?.as_f64().filter(|n| n.is_finite())
    }

    /// The string at `path`.
    pub(crate) fn str(&self, path: &[&str]) -> Option<&str> {
        self.value_at(path)?.as_str()
    }

    /// The items of the array at `path` (none for any other value).
    pub(crate) fn items(&self, path: &[&str]) -> Vec<Json> {
        self.value_at(path)
            .and_then(serde_json::Value::as_array)
            .map(|items| items.iter().cloned().map(Json).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, failure: Option<&str>) -> Run {
        Run {
            command: "node tests/js/x.mjs".into(),
            text: text.into(),
            failure: failure.map(str::to_owned),
        }
    }

    fn machine() -> Machine {
        Machine {
            host: "a CPU, 2 cores".into(),
            versions: "Node v20".into(),
            load: (Some(1.0), Some(2.0)),
        }
    }

    #[test]
    fn replace_between_keeps_the_markers() {
        let out = replace_between(
            "a <!-- x --> old <!-- y --> b",
            "<!-- x -->",
            "<!-- y -->",
            "new",
        )
        .unwrap();
        assert_eq!(out, "a <!-- x -->\nnew\n<!-- y --> b");
        assert!(replace_between("no markers", "<!-- x -->", "<!-- y -->", "new").is_err());
    }

    #[test]
    fn replace_or_append_adds_the_section_once() {
        let once = replace_or_append("# Doc\n", "## Size", "<!-- s -->", "<!-- /s -->", "one");
        assert_eq!(once, "# Doc\n\n## Size\n\n<!-- s -->\none\n<!-- /s -->\n");
        let twice = replace_or_append(&once, "## Size", "<!-- s -->", "<!-- /s -->", "two");
        assert_eq!(twice, "# Doc\n\n## Size\n\n<!-- s -->\ntwo\n<!-- /s -->\n");
    }

    #[test]
    fn json_reads_what_the_benchmarks_print() {
        let j = Json::parse(
            r#" {"a": {"b": [1, -2.5e3, true, null, "x\"\u00e9\ud83d\ude00"]}, "c": "", "d": {}} "#,
        )
        .unwrap();
        let items = j.items(&["a", "b"]);
        assert_eq!(items[0].num(&[]), Some(1.0));
        assert_eq!(items[1].num(&[]), Some(-2500.0));
        assert_eq!(items[4].str(&[]), Some("x\"é😀"));
        assert_eq!(j.str(&["c"]), Some(""));
        assert_eq!(j.num(&["a"]), None);
        assert!(j.at(&["a", "z"]).is_none());
        assert!(j.items(&["c"]).is_empty());
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "\"open", "tru", "1 2"] {
            assert!(Json::parse(bad).is_err(), "{bad:?} was read");
        }
    }

    #[test]
    fn a_run_gives_its_report_its_bench_line_and_its_checks() {
        let r = run(
            "progress\nBENCH {\"x\":1}\nok   first_check\nFAIL second_check: 3x is below the 200x floor\nFAIL setup: ignored\n<!-- table -->\n| a |\n<!-- /table -->\nafter\n",
            Some("exited with status 1"),
        );
        assert_eq!(r.table().as_deref(), Some("| a |"));
        assert_eq!(r.bench().unwrap().num(&["x"]), Some(1.0));
        let checks = r.checks();
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].name, "first_check");
        assert!(checks[0].failed.is_none());
        assert_eq!(
            checks[1].failed.as_deref(),
            Some("3x is below the 200x floor")
        );
        assert_eq!(
            section(&r, r.table()),
            "| a |\n\nThis run's check `second_check` failed: 3x is below the 200x floor."
        );
        assert_eq!(
            r.problem().as_deref(),
            Some("`node tests/js/x.mjs` failed second_check")
        );
    }

    #[test]
    fn a_run_that_did_not_finish_says_so_in_its_section() {
        let crashed = run(
            "starting\nError: cannot reach `the` server\n",
            Some("exited with status 1"),
        );
        assert_eq!(
            section(&crashed, crashed.table()),
            "Not measured in this run: `node tests/js/x.mjs` exited with status 1 before its report: Error: cannot \
             reach 'the' server."
        );
        let skipped = Run::skipped(
            "node tests/js/y.mjs".into(),
            "the release emulator did not build",
        );
        assert_eq!(
            section(&skipped, skipped.table()),
            "Not measured in this run: `node tests/js/y.mjs` was not started: the release emulator did not build."
        );
        // A report printed, then a failure no check explains.
        let late = run(
            "<!-- table -->\n| a |\n<!-- /table -->\nboom\n",
            Some("exited with status 2"),
        );
        assert_eq!(
            section(&late, late.table()),
            "| a |\n\nThis run's `node tests/js/x.mjs` exited with status 2 after its report: boom."
        );
        // Node's report of an uncaught error: the error line, not the stack or the version banner after it.
        let thrown = run(
            "file:///x.mjs:30\nthrow new Error(\"simulated\");\n      ^\n\nError: simulated: no server.\n    at file:///x.mjs:30:7\n\nNode.js v20.20.2\n",
            Some("exited with status 1"),
        );
        assert_eq!(
            thrown.why_not(),
            "exited with status 1 before its report: Error: simulated: no server"
        );
        let long = run(
            &format!("TypeError: {}\n", "x".repeat(300)),
            Some("exited with status 1"),
        );
        assert_eq!(long.reason().unwrap().chars().count(), 243);
        let fine = run("<!-- table -->\n| a |\n", None);
        assert_eq!(section(&fine, fine.table()), "| a |");
        assert!(fine.problem().is_none());
    }

    #[test]
    fn a_text_report_keeps_its_result_lines() {
        let r = run(
            "audio: 20 s\nwasm: 325x\nBENCH {}\nok   a\nFAIL b: slow\nRESULT {}\n2 passed, 1 failed\n",
            Some("exited with status 1"),
        );
        assert_eq!(text_block(&r), "```text\naudio: 20 s\nwasm: 325x\n```");
        assert!(is_tally("12 passed, 0 failed"));
        assert!(!is_tally("a passed, 0 failed"));
    }

    fn runs(size: Run, client: Run, realtime: Run) -> Runs {
        let none = || run("", Some("exited with status 1"));
        Runs {
            verify: run(
                "BENCH {\"bodyBytes\":745,\"node\":{\"jose\":10201.9,\"verify\":16766.7,\"verifySync\":17101.8,\"verifyRatio\":1.597,\"verifySyncRatio\":1.608},\"workerd\":{\"jose\":12814,\"verify\":16173.9,\"verifyRatio\":1.141,\"verifySync\":831.3,\"verifySyncRatio\":0.065},\"chromium\":{}}\n<!-- table -->\n| v |\n",
                None,
            ),
            size,
            cold: none(),
            client,
            realtime,
            realtime_browser: none(),
            emulator: run(
                "BENCH {\"wasm\":{\"gzip\":733753},\"p50Ms\":{\"inProcess\":0.327,\"native\":0.506},\"creationsPerSecond\":{\"inProcess\":4105.2,\"native\":1573.4},\"coldMs\":{\"inProcess\":233.2,\"native\":11.1}}\n<!-- table -->\n| e |\n",
                None,
            ),
            playground: none(),
            site: none(),
            load: none(),
        }
    }

    fn size_run() -> Run {
        run(
            "BENCH {\"entries\":[{\"name\":\"docauto\",\"wasm\":{\"gzip\":109948},\"js\":{\"gzip\":8112}},{\"name\":\"docauto/webhooks\",\"wasm\":{\"gzip\":63025},\"js\":{\"gzip\":6854},\"companion\":{\"gzip\":13129}},{\"name\":\"docauto/realtime\",\"wasm\":{\"gzip\":37888},\"js\":{\"gzip\":4563}}],\"jose\":{\"version\":\"6.2.17\",\"js\":{\"gzip\":6933}}}\n<!-- table -->\n| s |\n",
            None,
        )
    }

    fn client_run() -> Run {
        run(
            "BENCH {\"shapes\":[{\"shape\":\"get\",\"us\":{\"docauto\":755.4,\"openai\":996,\"raw\":646},\"vs_openai\":{\"median\":0.751},\"vs_raw\":{\"median\":1.164}},{\"shape\":\"post\",\"us\":{\"docauto\":1299,\"openai\":1559,\"raw\":1088},\"vs_openai\":{\"median\":0.88},\"vs_raw\":{\"median\":1.19}}]}\n<!-- table -->\n| c |\n",
            None,
        )
    }

    #[test]
    fn the_summary_takes_each_figure_from_the_run_or_says_it_is_missing() {
        let rs = runs(size_run(), client_run(), run("", None));
        let s = summary(&rs, &machine());
        assert!(s.starts_with("Measured by one `cargo xtask bench` run on a CPU, 2 cores (1-minute load average 1.0 at its start, 2.0 at its end); Node v20."), "{s}");
        assert!(
            s.contains("| `docauto`, the API client | 107.4 KiB wasm + 7.9 KiB JS |  |  |"),
            "{s}"
        );
        assert!(s.contains("| `docauto/webhooks` | 61.5 KiB wasm + 6.7 KiB JS; `verifySync` outside Node loads 12.8 KiB more | jose 6.2.17: 6.8 KiB | 10.08 |"), "{s}");
        assert!(
            s.contains("| `docauto/testing` | not measured in this run | | |"),
            "{s}"
        );
        assert!(
            s.contains("| `docauto/emulator` | 716.6 KiB of wasm | | |"),
            "{s}"
        );
        assert!(s.contains("| Deno | not measured in this run | | |"), "{s}");
        assert!(s.contains("| **Verifications per second**, a 745-byte delivery (higher is better) | | jose | |"), "{s}");
        assert!(
            s.contains("| Node: `verify` (node:crypto) | 16 767 | 10 202 | 1.60 |"),
            "{s}"
        );
        assert!(
            s.contains("| workerd: `verifySync` (p256 in wasm) | 831 | 12 814 | 0.07 |"),
            "{s}"
        );
        assert!(
            s.contains("| Chromium: `verify` (WebCrypto) | not measured in this run | | |"),
            "{s}"
        );
        assert!(
            s.contains("| GET a run | 755 us | 996 us; 646 us | 0.75; 1.16 |"),
            "{s}"
        );
        assert!(
            s.contains("| wait over 3 polls | not measured in this run | | |"),
            "{s}"
        );
        assert!(
            s.contains(
                "| `GET /v1/agents`, median latency (lower is better) | 327 us | 506 us | 0.65 |"
            ),
            "{s}"
        );
        assert!(
            s.contains(
                "| agent-run creations per second (higher is better) | 4 105 | 1 573 | 2.61 |"
            ),
            "{s}"
        );
        assert!(!s.contains("FAIL") && !s.contains("target"));
    }

    #[test]
    fn verdicts_hold_the_targets_against_the_run() {
        let realtime = run(
            "BENCH {\"wasmRealtimeFactor\":150,\"floor\":1000}\nok   both_paths_produce_the_same_amount_of_pcm16\nFAIL wasm_resample_and_encode_is_at_least_1000x_realtime: 150x is below the 1000x floor\n",
            Some("exited with status 1"),
        );
        let rs = runs(size_run(), client_run(), realtime);
        let v = verdicts(&rs);
        let find = |t: &str| v.iter().find(|v| v.target.starts_with(t)).unwrap();
        assert_eq!(find("`docauto/webhooks`").verdict, "met");
        assert_eq!(find("`docauto/webhooks`").measured, "61.5 KiB");
        assert_eq!(find("`docauto`:").verdict, "met (stretch not met)");
        assert_eq!(find("`docauto/realtime`").verdict, "met (stretch met)");
        assert!(find("`docauto/testing`")
            .verdict
            .starts_with("not measured in this run"));
        assert_eq!(
            find("`docauto/emulator`").target,
            "`docauto/emulator`: its module at most 1 MiB gzip -9 (stretch 600 KiB)"
        );
        assert_eq!(
            find("GET a run: at most 0.90 of openai-node").verdict,
            "met"
        );
        assert_eq!(find("GET a run: at most 1.10 of raw").verdict, "not met");
        assert_eq!(
            find("POST a config (20 KB schema): at most 1.25").verdict,
            "met"
        );
        assert!(find("wait over 3 polls")
            .verdict
            .starts_with("not measured in this run"));
        let floor = find("resampling");
        assert_eq!(floor.measured, "150x realtime");
        assert_eq!(floor.verdict, "check failed: 150x is below the 1000x floor");
        assert!(
            floor.target.ends_with("at least 1000x realtime"),
            "{}",
            floor.target
        );
        // The browser bench did not finish: its checks are not measured, and say why.
        assert!(find("Chromium: every session")
            .verdict
            .starts_with("not measured in this run (`node tests/js/x.mjs` exited with status 1"));
        assert_eq!(find("the wasm resampler").verdict, "met");
        assert!(find("workerd (`workerd serve`)")
            .verdict
            .starts_with("not measured in this run (`node tests/js/x.mjs` exited with status 1"));
        let table = verdict_table(&v, 20.0, &machine());
        assert!(table.contains("| Module size | `docauto/webhooks`: its module at most 64 KiB gzip -9 | 61.5 KiB | met |"));
    }

    #[test]
    fn every_section_is_written_whatever_became_of_the_others() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("BENCHMARKS.md");
        std::fs::write(
            &path,
            "# B\n\n<!-- bench-summary:begin -->\nstale\n<!-- bench-summary:end -->\n\nprose\n\n<!-- bench-client:begin -->\nstale\n<!-- bench-client:end -->\n",
        )
        .unwrap();
        let crashed = run("Error: no server\n", Some("exited with status 1"));
        let rs = runs(size_run(), crashed, run("", None));
        write_sections(&path, &sections(&rs, &machine())).unwrap();
        let doc = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(doc.contains("prose"), "{doc}");
        assert!(!doc.contains("stale"), "{doc}");
        assert!(doc.contains("<!-- bench-client:begin -->\nNot measured in this run: `node tests/js/x.mjs` exited with status 1 before its report: Error: no server.\n<!-- bench-client:end -->"), "{doc}");
        assert!(
            doc.contains("<!-- bench-size:begin -->\n| s |\n<!-- bench-size:end -->"),
            "{doc}"
        );
        assert!(doc.contains("## The emulator in-process against the native binary\n\n<!-- bench-emulator:begin -->\n| e |\n"), "{doc}");
        assert!(
            doc.contains("| GET a run | not measured in this run | | |"),
            "{doc}"
        );
    }

    #[test]
    fn thousands_are_set_apart() {
        assert_eq!(thousands(16766.7), "16 767");
        assert_eq!(thousands(831.3), "831");
        assert_eq!(thousands(1_234_567.0), "1 234 567");
        assert_eq!(thousands(-1500.0), "-1 500");
        assert_eq!(signed_ms(8.84), "+8.8 ms");
        assert_eq!(signed_ms(-0.04), "-0.0 ms");
        assert_eq!(decimal(1.0), "1.0");
        assert_eq!(decimal(1.8), "1.8");
        assert_eq!(decimal(0.85), "0.85");
        assert_eq!(decimal(0.01), "0.01");
    }
}
