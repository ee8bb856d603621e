//! `cargo xtask test`: every suite, each contributing counts; the last line is `N passed, N failed`.

use crate::util::{self, root, step};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod node_lines;

/// Running totals over all suites, and the checks that are not tests (fmt, clippy, tsc): those are reported on
/// their own line and fail the run, but are not counted as tests.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    notes: Vec<String>,
    checks: Vec<(String, bool)>,
    /// One summary line per Node line (`node_lines`).
    lines: Vec<String>,
}

impl Tally {
    /// A suite that could not run (or a step without test counts) counts as one failed test.
    fn check(&mut self, name: &str, ok: bool, why: &str) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            self.notes.push(format!("{name}: {why}"));
        }
    }

    /// A lint or type check: reported, not counted.
    fn lint(&mut self, name: &str, ok: bool, why: &str) {
        if !ok {
            self.notes.push(format!("{name}: {why}"));
        }
        self.checks.push((name.to_owned(), ok));
    }
}

/// Runs everything; Ok(true) when nothing failed.
pub fn test() -> Result<bool, String> {
    let started = std::time::Instant::now();
    let mut t = Tally::default();
    let mut tmp = util::RunTmp::enter();
    let sound = SoundServer::note();
    let setup = crate::install::install().and_then(|()| crate::build::build());
    if let Err(e) = &setup {
        t.check("install+build", false, e);
    }
    native(&mut t);
    wasm_bindgen_tests(&mut t, "wasm-node", Browser::None);
    wasm_bindgen_tests(&mut t, "wasm-chromium", Browser::Chromium);
    wasm_bindgen_tests(&mut t, "wasm-webkit", Browser::WebKit);
    if setup.is_ok() {
        js_suites(&mut t);
        emulator_conformance(&mut t, "", None);
        node_lines::run(&mut t);
    } else {
        t.check("package suites", false, "not run: pkg/ was not built");
    }
    sound.restore();
    tmp.leave();
    println!();
    if !t.notes.is_empty() {
        println!("Failures:");
        for n in &t.notes {
            println!("  - {n}");
        }
    }
    let checks: Vec<String> = t
        .checks
        .iter()
        .map(|(name, ok)| format!("{name} {}", if *ok { "ok" } else { "FAILED" }))
        .collect();
    if !t.lines.is_empty() {
        println!("Node lines:");
        for l in &t.lines {
            println!("  {l}");
        }
    }
    println!("checks (not counted as tests): {}", checks.join(", "));
    println!("the run took {} s", started.elapsed().as_secs());
    println!("{} passed, {} failed", t.passed, t.failed);
    Ok(t.failed == 0 && t.checks.iter().all(|(_, ok)| *ok))
}

/// `cargo xtask test --docs`: installs and builds what the docs test needs, then runs every JS and TS block of the
/// documentation (tests/docs/run.mjs): its lines (`ok README.md:57`, `not ok docs/x.md:12 why`) and its
/// `N passed, N failed` are the output. Ok(true) when every block passed.
pub fn docs() -> Result<bool, String> {
    let mut tmp = util::RunTmp::enter();
    crate::install::install()?;
    crate::build::build()?;
    step("node tests/docs/run.mjs (every JS and TS block of README.md, MIGRATION.md and docs/)");
    let ok = util::run(
        Command::new("node")
            .arg("tests/docs/run.mjs")
            .current_dir(root())
            .env("CI", "true"),
        Duration::from_secs(DOCS_SECS),
    )
    .is_ok();
    tmp.leave();
    Ok(ok)
}

/// The time limit of the docs test (about 2 minutes on 2 cores).
const DOCS_SECS: u64 = 600;

/// The time limit of the site's suite in one engine (its own watchdog ends it a minute earlier).
const SITE_SECS: u64 = 480;

/// PulseAudio, which the Firefox audio suites start with a null sink when none answers (tests/js/firefox.mjs, as a
/// daemon that every later suite reuses): stopped when the run ends if it was not running when the run began, so a
/// run leaves no daemon behind.
struct SoundServer {
    was_running: bool,
}

impl SoundServer {
    fn note() -> Self {
        Self {
            was_running: pulseaudio("--check"),
        }
    }

    fn restore(self) {
        if !self.was_running && pulseaudio("--check") {
            step("pulseaudio --kill (started by this run's Firefox suites)");
            pulseaudio("--kill");
        }
    }
}

/// Runs `pulseaudio <arg>` quietly; whether it ran and succeeded.
fn pulseaudio(arg: &str) -> bool {
    Command::new("pulseaudio")
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn cargo(args: &[&str]) -> Command {
    let mut c = Command::new("cargo");
    c.args(args).current_dir(root());
    c
}

/// Each package is tested on its own, so its dependencies build with its own features only: one `cargo test
/// --workspace` would unify them, and a feature one package enables (the emulator's) could hide in another's native
/// tests a bug that its shipped wasm has. (Both now enable `serde_json/preserve_order`, as the wasm is built.)
/// `--no-fail-fast`: every test binary runs and is counted.
const NATIVE_PACKAGES: &[&str] = &["docauto", "docauto-emulator", "xtask"];

fn native(t: &mut Tally) {
    for package in NATIVE_PACKAGES {
        step(&format!("cargo test -p {package} --no-fail-fast"));
        let res = util::run_capture(
            &mut cargo(&["test", "-p", package, "--no-fail-fast"]),
            Duration::from_secs(30 * 60),
            true,
        );
        add_libtest(t, &format!("cargo test -p {package}"), res);
    }

    step("cargo fmt --all -- --check");
    let ok = util::run(
        &mut cargo(&["fmt", "--all", "--", "--check"]),
        Duration::from_secs(120),
    );
    t.lint("cargo fmt --check", ok.is_ok(), "unformatted code");

    step("cargo clippy --workspace --all-targets -- -D warnings");
    let ok = util::run(
        &mut cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
        Duration::from_secs(30 * 60),
    );
    t.lint("cargo clippy", ok.is_ok(), "clippy warnings or errors");

    // The JS layer (`src/wasm`) and the wasm tests compile for wasm32 only: the native run above never sees them.
    step("cargo clippy -p docauto --target wasm32-unknown-unknown --all-targets --features talc-allocator,testing,webhooks-p256 -- -D warnings");
    let ok = util::run(
        &mut cargo(&[
            "clippy",
            "-p",
            "docauto",
            "--target",
            "wasm32-unknown-unknown",
            "--all-targets",
            "--features",
            "talc-allocator,testing,webhooks-p256",
            "--",
            "-D",
            "warnings",
        ]),
        Duration::from_secs(30 * 60),
    );
    t.lint(
        "cargo clippy (wasm32)",
        ok.is_ok(),
        "clippy warnings or errors in the wasm build",
    );

    // The emulator's wasm host (`emulator/src/host/wasm`) compiles for wasm32 only. Its library alone: the binary and
    // the integration tests are native (they listen, spawn processes, use tokio's runtime).
    step("cargo clippy -p docauto-emulator --lib --target wasm32-unknown-unknown -- -D warnings");
    let ok = util::run(
        &mut cargo(&[
            "clippy",
            "-p",
            "docauto-emulator",
            "--lib",
            "--target",
            "wasm32-unknown-unknown",
            "--",
            "-D",
            "warnings",
        ]),
        Duration::from_secs(30 * 60),
    );
    t.lint(
        "cargo clippy (emulator wasm32)",
        ok.is_ok(),
        "clippy warnings or errors in the emulator's wasm build",
    );
}

/// Where `wasm-bindgen-test-runner` runs the wasm tests.
#[derive(PartialEq)]
enum Browser {
    None,
    Chromium,
    WebKit,
}

fn wasm_bindgen_tests(t: &mut Tally, name: &str, browser: Browser) {
    let r = root();
    step(&format!(
        "{name}: cargo test -p docauto --target wasm32-unknown-unknown --tests --features talc-allocator,webhooks-p256"
    ));
    let mut c = cargo(&[
        "test",
        "-p",
        "docauto",
        "--target",
        "wasm32-unknown-unknown",
        "--tests",
        // The package's allocator, so these tests run on what the package ships; the P-256 module's export, which
        // the webhook tests hand to the verifier as the package's entries hand over that module.
        "--features",
        "talc-allocator,webhooks-p256",
    ]);
    c.env(
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
        r.join(".tools/bin/wasm-bindgen-test-runner"),
    );
    c.env("WASM_BINDGEN_TEST_TIMEOUT", "120");
    // Kept until the run ends: the X display WebKit's MiniBrowser draws on.
    let mut _display = None;
    if browser == Browser::WebKit {
        // The runner drives WebKitWebDriver as `safaridriver` (it sends no capabilities to that driver, not even
        // webdriver.json's: WebKitWebDriver then starts its default MiniBrowser, which needs an X display).
        match crate::xvfb::Display::start() {
            Ok(display) => {
                c.env("WASM_BINDGEN_USE_BROWSER", "1")
                    .env("SAFARIDRIVER", "/usr/bin/WebKitWebDriver")
                    .env("DISPLAY", &display.name);
                _display = Some(display);
            }
            Err(e) => return t.check(name, false, &e),
        }
    }
    if browser == Browser::Chromium {
        // wasm-bindgen-test-runner reads webdriver.json from its working directory, which cargo sets to the package
        // root for a test binary: the path is given explicitly, or Chromium starts without the flags of that file.
        // Chromium reaches the runner's page server through `page_proxy` (see there: without it the page sometimes
        // never loads).
        match proxied_webdriver_json() {
            Ok(json) => {
                c.env("WASM_BINDGEN_USE_BROWSER", "1")
                    .env("CHROMEDRIVER", "/usr/bin/chromedriver")
                    .env("WASM_BINDGEN_TEST_WEBDRIVER_JSON", json);
            }
            Err(e) => return t.check(name, false, &e),
        }
    }
    // Every test binary runs and is counted, even after one fails.
    c.arg("--no-fail-fast");
    add_libtest(
        t,
        name,
        util::run_capture(&mut c, Duration::from_secs(20 * 60), true),
    );
}

/// tests/webdriver/webdriver.json with Chromium sent through a freshly started `page_proxy`, written under target/.
fn proxied_webdriver_json() -> Result<std::path::PathBuf, String> {
    let r = root();
    let port = crate::page_proxy::start().map_err(|e| format!("page proxy: {e}"))?;
    let base = std::fs::read_to_string(r.join("tests/webdriver/webdriver.json"))
        .map_err(|e| format!("tests/webdriver/webdriver.json: {e}"))?;
    let json = with_proxy_args(&base, port)
        .ok_or("tests/webdriver/webdriver.json has no \"args\": [ list")?;
    let out = r.join("target/xtask/webdriver.json");
    std::fs::create_dir_all(r.join("target/xtask")).map_err(|e| e.to_string())?;
    std::fs::write(&out, json).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}

/// Adds `--proxy-server` (loopback included: `<-loopback>`) at the head of the first `"args": [` list.
fn with_proxy_args(webdriver_json: &str, port: u16) -> Option<String> {
    let key = "\"args\": [";
    let at = webdriver_json.find(key)? + key.len();
    let args =
        format!("\"--proxy-server=http://127.0.0.1:{port}\", \"--proxy-bypass-list=<-loopback>\",");
    Some(format!(
        "{}{args}{}",
        &webdriver_json[..at],
        &webdriver_json[at..]
    ))
}

/// Adds the `test result:` counts of libtest-style output; a run without any result line, or one that
/// ran zero tests in total, counts as one failure (a suite that did not run is not a pass).
fn add_libtest(t: &mut Tally, name: &str, res: Result<util::Finished, String>) {
    let fin = match res {
        Ok(f) => f,
        Err(e) => return t.check(name, false, &e),
    };
    let (mut p, mut f, mut seen) = (0u64, 0u64, false);
    for line in fin.output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        seen = true;
        p += count_before(rest, " passed");
        f += count_before(rest, " failed");
    }
    t.passed += p;
    t.failed += f;
    if f > 0 {
        t.notes.push(format!("{name}: {f} failed"));
    }
    if !seen || p + f == 0 {
        t.check(name, false, "no tests ran (build error or no tests)");
    } else if !fin.ok() && f == 0 {
        t.check(name, false, "exited non-zero without a failing test");
    }
}

fn count_before(s: &str, suffix: &str) -> u64 {
    let Some(end) = s.find(suffix) else { return 0 };
    let head = s.get(..end).unwrap_or("");
    head.rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Integration tests of the emulator (emulator/tests) that only the native binary passes by design: its per-write
/// `--state` journal. Every other file is the conformance suite of both builds.
const NATIVE_ONLY_EMULATOR_TESTS: &[&str] = &["durability"];

/// The emulator's integration tests again, against the npm package's `docauto-emulator` command (the wasm build,
/// pkg/emulator/bin.js): `DOCAUTO_EMULATOR_BIN` makes their harness start it (`node bin.js`) instead of the native
/// emulator. `node_dir`: a folder put first on PATH, so that its `node` runs the command (`node_lines`); the suite's
/// name then starts with `prefix`.
fn emulator_conformance(t: &mut Tally, prefix: &str, node_dir: Option<&Path>) {
    let r = root();
    let name = &format!(
        "{prefix}cargo test -p docauto-emulator against npx docauto-emulator (wasm build)"
    );
    let mut files: Vec<String> = match std::fs::read_dir(r.join("emulator/tests")) {
        Ok(d) => d
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_suffix(".rs").map(str::to_owned)
            })
            .filter(|n| !NATIVE_ONLY_EMULATOR_TESTS.contains(&n.as_str()))
            .collect(),
        Err(e) => return t.check(name, false, &format!("cannot list emulator/tests: {e}")),
    };
    files.sort();
    step(&format!(
        "{name}: DOCAUTO_EMULATOR_BIN=pkg/emulator/bin.js cargo test -p docauto-emulator --test {}",
        files.join(" --test ")
    ));
    let mut c = cargo(&["test", "-p", "docauto-emulator", "--no-fail-fast"]);
    for f in &files {
        c.args(["--test", f]);
    }
    c.env("DOCAUTO_EMULATOR_BIN", r.join("pkg/emulator/bin.js"));
    if let Some(dir) = node_dir {
        c.env("PATH", node_lines::path_with(dir));
    }
    let res = util::run_capture(&mut c, Duration::from_secs(20 * 60), true);
    add_libtest(t, name, res);
}

/// The client's `node --test` files (tests/js/client/NAME.test.mjs), run on every Node line.
const CLIENT_TESTS: &[&str] = &[
    "agents",
    "client",
    "faults",
    "files",
    "node-lines",
    "scripted",
    "verbs",
    "webhooks",
];

/// The JS suites: each script prints `RESULT {"suite":..,"passed":N,"failed":M}` lines.
fn js_suites(t: &mut Tally) {
    let r = root();
    let bin = |b: &str| r.join("node_modules/.bin").join(b);
    step("cargo build -p docauto-emulator (the end-to-end suites start it)");
    if let Err(e) = util::run(
        &mut cargo(&["build", "-p", "docauto-emulator"]),
        Duration::from_secs(20 * 60),
    ) {
        t.check("emulator build", false, &e);
    }
    step("mint test tokens with jose (tests/js/mint-fixtures.mjs)");
    let mint = util::run(
        Command::new("node")
            .arg("tests/js/mint-fixtures.mjs")
            .current_dir(&r),
        Duration::from_secs(120),
    );
    if let Err(e) = mint {
        return t.check("fixtures", false, &e);
    }
    let node = |script: &str| {
        let mut c = Command::new("node");
        c.arg(script);
        c
    };
    // The same suite in WebKit (WebKitGTK's MiniBrowser under WebKitWebDriver and Xvfb: tests/js/webkit.mjs).
    let webkit = |script: &str| {
        let mut c = node(script);
        c.args(["--browser", "webkit"]);
        c
    };
    let mut deno = Command::new(bin("deno"));
    deno.args(["run", "--allow-read", "--allow-net", "--allow-env"])
        .arg("tests/js/run-deno.mjs")
        .env("DENO_NO_UPDATE_CHECK", "1");
    let mut bun = Command::new(bin("bun"));
    bun.arg("tests/js/run-bun.mjs");
    let mut tsc = Command::new(bin("tsc"));
    tsc.args(["-p", "tests/types/tsconfig.json"]);
    let suites: Vec<(&str, Command, u64)> = vec![
        ("node (import)", node("tests/js/run-node.mjs"), 180),
        ("node (require)", node("tests/js/run-node-require.cjs"), 120),
        ("deno", deno, 180),
        ("bun", bun, 180),
        ("workerd (miniflare)", node("tests/js/run-workerd.mjs"), 240),
        (
            "workerd edge isolates: slow key set, ended requests",
            node("tests/js/edge-isolate.mjs"),
            180,
        ),
        ("vercel edge-runtime", node("tests/js/run-edge.mjs"), 180),
        (
            "chromium (playwright)",
            node("tests/js/run-chromium.mjs"),
            240,
        ),
        (
            "firefox (puppeteer-core, webdriver bidi)",
            node("tests/js/run-firefox.mjs"),
            240,
        ),
        (
            "webkit (WebKitGTK MiniBrowser, webdriver)",
            webkit("tests/js/run-chromium.mjs"),
            240,
        ),
        (
            "node (docauto/testing: TestSigner vs jose and the verifier)",
            node("tests/js/run-testing.mjs"),
            120,
        ),
        (
            "deno (docauto/testing: TestSigner vs jose and the verifier)",
            {
                let mut c = Command::new(bin("deno"));
                c.args(["run", "--allow-read", "--allow-net", "--allow-env"])
                    .arg("tests/js/run-testing.mjs")
                    .env("DENO_NO_UPDATE_CHECK", "1");
                c
            },
            120,
        ),
        (
            "workerd (docauto/testing: TestSigner vs jose and the verifier)",
            node("tests/js/run-testing-workerd.mjs"),
            180,
        ),
        (
            "node (host crypto)",
            node("tests/js/run-node-hostcrypto.mjs"),
            180,
        ),
        (
            "wasm boundary: 21 000 hostile JS values at one instance (node)",
            node("tests/js/boundary.mjs"),
            180,
        ),
        ("no any in .d.ts", node("tests/types/no-any.mjs"), 120),
        ("package entries (node)", node("tests/js/entries.mjs"), 120),
        (
            "lockfiles: every platform's packages locked",
            node("tests/js/lockfiles.mjs"),
            60,
        ),
        (
            "docs: every JS and TS block of README.md, MIGRATION.md and docs/ where it runs, and the links",
            node("tests/docs/run.mjs"),
            DOCS_SECS,
        ),
        (
            "api.md: current with the declarations, every method listed, every client route as documented",
            {
                let mut c = node("tests/docs/api-reference.mjs");
                c.arg("--check");
                c
            },
            120,
        ),
        (
            "realtime: chromium + emulator",
            node("tests/js/realtime/e2e.mjs"),
            300,
        ),
        (
            "realtime: firefox + emulator",
            {
                let mut c = node("tests/js/realtime/e2e.mjs");
                c.args(["--browser", "firefox"]);
                c
            },
            300,
        ),
        (
            "realtime: webkit + emulator",
            webkit("tests/js/realtime/e2e.mjs"),
            300,
        ),
        (
            "realtime: deno, bun, node 20 + ws",
            node("tests/js/realtime/runtimes.mjs"),
            180,
        ),
        (
            "telemetry: spans and metrics with the OpenTelemetry SDK in node, deno, bun, workerd",
            node("tests/js/telemetry/runtimes.mjs"),
            180,
        ),
        (
            "demo: every panel in chromium",
            node("tests/js/demo/e2e.mjs"),
            300,
        ),
        (
            "demo: every panel in webkit (Safari's autoplay policy)",
            webkit("tests/js/demo/e2e.mjs"),
            300,
        ),
        (
            "demo: the backend in deno, bun, workerd",
            node("tests/js/demo/runtimes.mjs"),
            180,
        ),
        (
            "dedupe: exactly once across 8 Node processes (Redis via node-redis, ioredis, @upstash/redis; PostgreSQL)",
            node("tests/js/dedupe/fleet-node.mjs"),
            600,
        ),
        (
            "dedupe: exactly once across 8 Workers (D1, Durable Objects; miniflare)",
            node("tests/js/dedupe/fleet-workers.mjs"),
            300,
        ),
        (
            "playground: static files under /docauto/ in chromium (every panel, reload, reset)",
            node("tests/js/playground/e2e.mjs"),
            300,
        ),
        (
            "playground: static files under /docauto/ in firefox (every panel, reload, reset)",
            {
                let mut c = node("tests/js/playground/e2e.mjs");
                c.args(["--browser", "firefox"]);
                c
            },
            300,
        ),
        (
            "site: the build (a broken link or anchor fails it with its file and line; pages, anchors, where each example runs)",
            node("tests/js/site/build-checks.mjs"),
            120,
        ),
        (
            "site: every page and every Run button under /docauto/ in chromium (no error, no other origin)",
            node("tests/js/site/e2e.mjs"),
            SITE_SECS,
        ),
        (
            "site: every page and every Run button under /docauto/ in firefox (no error, no other origin)",
            {
                let mut c = node("tests/js/site/e2e.mjs");
                c.args(["--browser", "firefox"]);
                c
            },
            SITE_SECS,
        ),
        (
            "site: every page and every Run button under /docauto/ in webkit (no error, no other origin)",
            webkit("tests/js/site/e2e.mjs"),
            SITE_SECS,
        ),
        (
            "docauto/emulator: node, deno, bun (full flow in-process and listening; each process exits after close)",
            node("tests/js/emulator/runtimes.mjs"),
            300,
        ),
        (
            "docauto/emulator: one state format for both builds (native --state file, snapshot(), the command's --state)",
            node("tests/js/emulator/snapshot.mjs"),
            120,
        ),
        (
            "docauto/emulator: workerd (miniflare)",
            node("tests/js/emulator/run-workerd.mjs"),
            240,
        ),
        (
            "docauto/emulator: Vercel edge-runtime (in-process, the edge-light entry)",
            node("tests/js/emulator/run-edge.mjs"),
            180,
        ),
        (
            "docauto/emulator: chromium",
            node("tests/js/emulator/run-chromium.mjs"),
            240,
        ),
        (
            "docauto/emulator: webkit",
            webkit("tests/js/emulator/run-chromium.mjs"),
            240,
        ),
    ];
    for (name, mut cmd, secs) in suites {
        step(name);
        cmd.current_dir(&r).env("CI", "true");
        let res = util::run_capture(&mut cmd, Duration::from_secs(secs), true);
        add_js(t, name, res);
    }
    step("client end to end against the emulator: node --test tests/js/client/");
    let mut client = Command::new("node");
    client.args(["--test", "--test-reporter=tap", "--test-concurrency=1"]);
    for file in CLIENT_TESTS {
        client.arg(format!("tests/js/client/{file}.test.mjs"));
    }
    let res = util::run_capture(client.current_dir(&r), Duration::from_secs(600), true);
    add_node_test(t, "client e2e (node --test)", res);

    step("client rules against a scripted server in Deno: deno test tests/js/client/scripted.test.mjs");
    let mut deno_client = Command::new(bin("deno"));
    deno_client
        .args([
            "test",
            "-A",
            "--no-check",
            "tests/js/client/scripted.test.mjs",
        ])
        .env("NO_COLOR", "1");
    let res = util::run_capture(deno_client.current_dir(&r), Duration::from_secs(300), true);
    add_deno_test(t, "client scripted (deno test)", res);

    package_hygiene(t);

    step("tsc --strict --noEmit -p tests/types (usage.ts and every file listed there)");
    let ok = util::run(tsc.current_dir(&r), Duration::from_secs(180));
    t.lint(
        "tsc --strict",
        ok.is_ok(),
        "type errors in tests/types (see the tsc output above)",
    );
}

/// The packed tarball as the ecosystem's own linters see it (`@arethetypeswrong/cli`, `publint --strict`: a warning
/// fails), and a TypeScript usage file compiled from a CommonJS and an ES module project under `module: node16` and
/// under `moduleResolution: bundler`. Checks, not tests.
fn package_hygiene(t: &mut Tally) {
    let r = root();
    let bin = |b: &str| r.join("node_modules/.bin").join(b);
    let pack_dir = r.join("target/pack");
    let _ = std::fs::remove_dir_all(&pack_dir);
    let _ = std::fs::create_dir_all(&pack_dir);
    step("npm pack pkg/ (the tarball users install)");
    let packed = util::run(
        Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(&pack_dir)
            .current_dir(r.join("pkg")),
        Duration::from_secs(120),
    );
    let tarball = std::fs::read_dir(&pack_dir).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "tgz"))
    });
    match (packed, tarball) {
        (Ok(()), Some(tarball)) => {
            step("attw (@arethetypeswrong/cli) on the packed tarball");
            let ok = util::run(
                Command::new(bin("attw")).arg(&tarball).current_dir(&r),
                Duration::from_secs(180),
            );
            t.lint(
                "attw",
                ok.is_ok(),
                "type resolution problems in the tarball",
            );
            bundlers(t, &tarball);
        }
        (Err(e), _) => t.lint("attw", false, &e),
        (Ok(()), None) => t.lint("attw", false, "npm pack wrote no tarball"),
    }
    step("publint --strict pkg/");
    let ok = util::run(
        Command::new(bin("publint"))
            .args(["run", "--strict", "pkg"])
            .current_dir(&r),
        Duration::from_secs(180),
    );
    t.lint("publint", ok.is_ok(), "package problems or warnings");
}

/// The bundler suite (tests/bundlers/run.mjs): apps of our own built from the packed tarball with Vite, webpack,
/// esbuild and Next.js, then run; its `RESULT` lines are tests, its `CHECK` lines (tsc) are checks.
fn bundlers(t: &mut Tally, tarball: &std::path::Path) {
    let r = root();
    if let Err(e) = crate::install::bundler_tooling() {
        return t.check("bundlers", false, &e);
    }
    step("bundlers: Vite, webpack, esbuild, Next.js and tsc apps built from the packed tarball (tests/bundlers/run.mjs)");
    let res = util::run_capture(
        Command::new("node")
            .arg("tests/bundlers/run.mjs")
            .arg(tarball)
            .current_dir(&r)
            .env("CI", "true"),
        Duration::from_secs(20 * 60),
        true,
    );
    if let Ok(fin) = &res {
        for line in fin.output.lines() {
            let Some(json) = line.trim().strip_prefix("CHECK ") else {
                continue;
            };
            let name = json
                .split("\"name\":\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or("tsc");
            t.lint(
                name,
                json.contains("\"ok\":true"),
                "the package's types do not compile there",
            );
        }
    }
    add_js(t, "bundlers", res);
}

/// Adds the `# pass N` / `# fail N` summary of `node --test --test-reporter=tap`.
/// Adds the counts of `deno test`'s summary line (`ok | N passed | M failed` or `FAILED | N passed | M failed`).
fn add_deno_test(t: &mut Tally, name: &str, res: Result<util::Finished, String>) {
    let fin = match res {
        Ok(f) => f,
        Err(e) => return t.check(name, false, &e),
    };
    let summary = fin
        .output
        .lines()
        .rev()
        .find(|l| l.contains(" passed |") && l.contains(" failed"));
    let (p, f) = summary.map_or((0, 0), |l| {
        (count_before(l, " passed"), count_before(l, " failed"))
    });
    t.passed += p;
    t.failed += f;
    if f > 0 {
        t.notes.push(format!("{name}: {f} failed"));
    }
    if p + f == 0 {
        t.check(name, false, "suite did not run (no deno test summary)");
    } else if !fin.ok() && f == 0 {
        t.check(name, false, "exited non-zero without a failing test");
    }
}

fn add_node_test(t: &mut Tally, name: &str, res: Result<util::Finished, String>) {
    let fin = match res {
        Ok(f) => f,
        Err(e) => return t.check(name, false, &e),
    };
    let count = |key: &str| {
        fin.output.lines().rev().find_map(|l| {
            l.trim()
                .strip_prefix(key)
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
    };
    let (p, f) = (count("# pass "), count("# fail "));
    t.passed += p.unwrap_or(0);
    t.failed += f.unwrap_or(0);
    if f.unwrap_or(0) > 0 {
        t.notes.push(format!("{name}: {} failed", f.unwrap_or(0)));
    }
    if p.unwrap_or(0) + f.unwrap_or(0) == 0 {
        t.check(
            name,
            false,
            "suite did not run (no # pass / # fail summary)",
        );
    } else if !fin.ok() && f == Some(0) {
        t.check(
            name,
            false,
            if fin.timed_out {
                "timed out"
            } else {
                "exited non-zero"
            },
        );
    }
}

fn add_js(t: &mut Tally, name: &str, res: Result<util::Finished, String>) {
    let fin = match res {
        Ok(f) => f,
        Err(e) => return t.check(name, false, &e),
    };
    let (mut p, mut f, mut seen) = (0u64, 0u64, false);
    for line in fin.output.lines() {
        let Some(json) = line.trim().strip_prefix("RESULT ") else {
            continue;
        };
        seen = true;
        p += count_json(json, "\"passed\":");
        f += count_json(json, "\"failed\":");
    }
    t.passed += p;
    t.failed += f;
    if f > 0 {
        t.notes.push(format!("{name}: {f} failed"));
    }
    if !seen || p + f == 0 {
        t.check(name, false, "suite did not run (no RESULT line)");
    } else if !fin.ok() && f == 0 {
        let why = if fin.timed_out {
            "timed out"
        } else {
            "exited non-zero"
        };
        t.check(name, false, why);
    }
}

fn count_json(s: &str, key: &str) -> u64 {
    let Some(i) = s.find(key) else { return 0 };
    s.get(i + key.len()..)
        .unwrap_or("")
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_counts_are_read_from_result_lines() {
        let s = "ok. 12 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s";
        assert_eq!(count_before(s, " passed"), 12);
        assert_eq!(count_before(s, " failed"), 3);
    }

    #[test]
    fn js_result_counts_are_read_from_json() {
        let s = r#"{"suite":"deno","passed":41,"failed":2}"#;
        assert_eq!(count_json(s, "\"passed\":"), 41);
        assert_eq!(count_json(s, "\"failed\":"), 2);
    }

    #[test]
    fn chromium_is_sent_through_the_page_proxy() {
        let base = std::fs::read_to_string(root().join("tests/webdriver/webdriver.json")).unwrap();
        let json = with_proxy_args(&base, 4321).unwrap();
        assert!(json.contains(
            r#""args": ["--proxy-server=http://127.0.0.1:4321", "--proxy-bypass-list=<-loopback>","#
        ));
        assert!(json.contains("--headless=new"));
        assert_eq!(with_proxy_args("{}", 1), None);
    }

    #[test]
    fn missing_result_counts_as_failure() {
        let mut t = Tally::default();
        add_js(
            &mut t,
            "x",
            Ok(util::Finished {
                code: Some(0),
                timed_out: false,
                output: "nothing".into(),
            }),
        );
        assert_eq!((t.passed, t.failed), (0, 1));
    }
}
