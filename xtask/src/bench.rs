//! `cargo xtask bench`: the webhook verifier against jose (tests/js/bench.mjs), the client against openai-node and
//! raw `fetch` (tests/js/client/bench.mjs), realtime resampling against plain JS, the emulator's load check, and the
//! static playground's size and time to the first panel beside the served demo (tests/js/playground/bench.mjs).
//! `--write` replaces the marked sections of BENCHMARKS.md.

use crate::util::{self, root, step};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BEGIN: &str = "<!-- bench:begin -->";
const END: &str = "<!-- bench:end -->";
const MORE_BEGIN: &str = "<!-- bench-more:begin -->";
const MORE_END: &str = "<!-- bench-more:end -->";
const SIZE_BEGIN: &str = "<!-- bench-size:begin -->";
const SIZE_END: &str = "<!-- bench-size:end -->";
const EMULATOR_BEGIN: &str = "<!-- bench-emulator:begin -->";
const EMULATOR_END: &str = "<!-- bench-emulator:end -->";
const CLIENT_BEGIN: &str = "<!-- bench-client:begin -->";
const CLIENT_END: &str = "<!-- bench-client:end -->";
const PLAYGROUND_BEGIN: &str = "<!-- bench-playground:begin -->";
const PLAYGROUND_END: &str = "<!-- bench-playground:end -->";

/// Runs every benchmark and prints its results; with `write`, updates BENCHMARKS.md.
pub fn bench(write: bool) -> Result<(), String> {
    let r = root();
    let _tmp = util::RunTmp::enter();
    step("node tests/js/bench.mjs (webhook verification vs jose, sizes, cold starts)");
    let webhook = run_node(&r, &["tests/js/bench.mjs"], &[])?;
    let table = webhook
        .split_once("<!-- table -->")
        .map(|(_, t)| t.trim().to_owned())
        .ok_or("bench printed no table")?;
    let size = size_bench(&r)?;
    let cold = crate::cold_start::bench(&r)?;

    step("cargo build --release -p docauto-emulator -p docauto-emulator-bench (benchmarks run against a release emulator)");
    util::run(
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
    )?;
    let emulator = r.join("target/release/docauto-emulator");
    let emulator = emulator.to_string_lossy().into_owned();
    step("node tests/js/client/bench.mjs (client vs openai-node and raw fetch, four shapes, one local server)");
    let client = run_node(&r, &["tests/js/client/bench.mjs"], &[])?;
    let client = client_table(&client)?;
    step("node tests/js/realtime/bench.mjs (resample + encode one second of 48 kHz audio)");
    let realtime = run_node(&r, &["tests/js/realtime/bench.mjs"], &[])?;
    step("node tests/js/realtime/browser-bench.mjs (Chromium: start() to open and first partial, capture CPU)");
    let realtime_browser = run_node(
        &r,
        &["tests/js/realtime/browser-bench.mjs"],
        &[("DOCAUTO_EMULATOR", &emulator)],
    )?;
    step("node tests/js/emulator/bench.mjs (docauto/emulator: size, cold start, latency, creations/s beside the native binary)");
    let wasm_emulator = run_node(
        &r,
        &["tests/js/emulator/bench.mjs"],
        &[("DOCAUTO_EMULATOR", &emulator)],
    )?;
    let wasm_emulator = wasm_emulator
        .split_once("<!-- table -->")
        .map(|(_, t)| t.trim().to_owned())
        .ok_or("the emulator bench printed no table")?;
    step("node tests/js/playground/bench.mjs (the static playground: size, time to the first panel in Chromium beside the served demo)");
    let playground = run_node(
        &r,
        &["tests/js/playground/bench.mjs"],
        &[("DOCAUTO_EMULATOR", &emulator)],
    )?;
    let playground = playground
        .split_once("<!-- table -->")
        .map(|(_, t)| t.trim().to_owned())
        .ok_or("the playground bench printed no table")?;
    step("docauto-emulator-bench (requests/s, creations with and without --state, mixed load over 100 000 runs)");
    let load = util::run_capture(
        Command::new(r.join("target/release/docauto-emulator-bench")).current_dir(&r),
        Duration::from_secs(15 * 60),
        true,
    )?;
    if !load.ok() {
        return Err("emulator load check failed".into());
    }

    let more = format!(
        "Realtime (`node tests/js/realtime/bench.mjs`, wasm windowed-sinc resampler + PCM16 framing vs a plain-JS linear resampler, same run):\n\n```text\n{}\n```\n\nRealtime in Chromium (`node tests/js/realtime/browser-bench.mjs`, fake microphone playing speech, emulator on loopback: `start()` to `open` and to the first `partial` vs raw getUserMedia + WebSocket; CPU of all Chromium processes per second of captured audio vs the same microphone into a no-op AudioWorklet, same run):\n\n```text\n{}\n```\n\nEmulator load check (`cargo run --release -p docauto-emulator-bench`: `GET /v1/agents` throughput; agent-run creations per second in memory and with `--state`; a mixed workload of 100 000 capability runs with ttl 60 s, each created, read and long-polled, one in ten delivering its events to a local receiver, the clock moved 25 h after every 5 000 so the ttl sweep purges and drops them, resident memory after each batch):\n\n```text\n{}\n```",
        summary(&realtime),
        summary(&realtime_browser),
        summary(&load.output)
    );
    println!(
        "\n{table}\n\n{size}\n\n{cold}\n\n{client}\n\n{more}\n\n{wasm_emulator}\n\n{playground}"
    );
    if write {
        let path = r.join("BENCHMARKS.md");
        let doc = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read BENCHMARKS.md: {e}"))?;
        let doc = replace_between(&doc, BEGIN, END, &table)?;
        let doc = replace_between(&doc, MORE_BEGIN, MORE_END, &more)?;
        let doc = replace_or_append(
            &doc,
            "## Package size per entry",
            SIZE_BEGIN,
            SIZE_END,
            &size,
        );
        let doc = replace_or_append(
            &doc,
            crate::cold_start::HEADING,
            crate::cold_start::BEGIN,
            crate::cold_start::END,
            &cold,
        );
        let doc = replace_or_append(
            &doc,
            "## Client against openai-node and raw `fetch`",
            CLIENT_BEGIN,
            CLIENT_END,
            &client,
        );
        let doc = replace_or_append(
            &doc,
            "## The emulator's wasm build beside the native binary",
            EMULATOR_BEGIN,
            EMULATOR_END,
            &wasm_emulator,
        );
        let doc = replace_or_append(
            &doc,
            "## The static playground (`cargo xtask playground`)",
            PLAYGROUND_BEGIN,
            PLAYGROUND_END,
            &playground,
        );
        std::fs::write(&path, doc).map_err(|e| format!("cannot write BENCHMARKS.md: {e}"))?;
        step("BENCHMARKS.md updated");
    }
    Ok(())
}

/// Per entry of the package: the wasm it loads against its size budget, cold start in Node and workerd, and the npm
/// tarball (tests/js/size-bench.mjs). Returns its markdown report.
fn size_bench(r: &Path) -> Result<String, String> {
    step("node tests/js/size-bench.mjs (per entry: wasm raw, gzip -9, brotli vs budgets; cold start in Node and workerd; npm tarball)");
    let out = run_node(r, &["tests/js/size-bench.mjs"], &[])?;
    out.split_once("<!-- table -->")
        .map(|(_, t)| t.trim().to_owned())
        .ok_or_else(|| "size bench printed no table".to_owned())
}

/// The client bench's markdown table and its targets line (tests/js/client/bench.mjs prints it between
/// `<!-- table -->` and `<!-- /table -->`).
fn client_table(output: &str) -> Result<String, String> {
    let (head, rest) = output
        .split_once("<!-- table -->")
        .ok_or("client bench printed no table")?;
    let (table, _) = rest
        .split_once("<!-- /table -->")
        .ok_or("client bench printed no table end")?;
    let targets = head
        .lines()
        .find(|l| l.starts_with("targets "))
        .unwrap_or("targets: not printed");
    Ok(format!("{}\n\n{targets}", table.trim()))
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

fn run_node(r: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String, String> {
    let mut c = Command::new("node");
    c.args(args).current_dir(r);
    for (k, v) in env {
        c.env(k, v);
    }
    let fin = util::run_capture(&mut c, Duration::from_secs(15 * 60), true)?;
    if fin.ok() {
        Ok(fin.output)
    } else {
        Err(format!("{} failed", args.join(" ")))
    }
}

/// The result lines of a benchmark's output (progress lines of the build are left out).
fn summary(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.starts_with("==>") && !l.trim().is_empty() && !l.starts_with("   Compiling"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn replace_between(doc: &str, begin: &str, end: &str, body: &str) -> Result<String, String> {
    let (head, rest) = doc
        .split_once(begin)
        .ok_or(format!("BENCHMARKS.md lacks {begin}"))?;
    let (_, tail) = rest
        .split_once(end)
        .ok_or(format!("BENCHMARKS.md lacks {end}"))?;
    Ok(format!("{head}{begin}\n{body}\n{end}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn client_table_takes_the_table_and_the_targets_line() {
        let out = "GET: ...\ntargets (...): met\n<!-- table -->\nMeasured by x\n\n| a |\n<!-- /table -->\n{\"bench\":1}";
        assert_eq!(
            client_table(out).unwrap(),
            "Measured by x\n\n| a |\n\ntargets (...): met"
        );
        assert!(client_table("no table").is_err());
    }

    #[test]
    fn replace_or_append_adds_the_section_once() {
        let once = replace_or_append("# Doc\n", "## Size", "<!-- s -->", "<!-- /s -->", "one");
        assert_eq!(once, "# Doc\n\n## Size\n\n<!-- s -->\none\n<!-- /s -->\n");
        let twice = replace_or_append(&once, "## Size", "<!-- s -->", "<!-- /s -->", "two");
        assert_eq!(twice, "# Doc\n\n## Size\n\n<!-- s -->\ntwo\n<!-- /s -->\n");
    }
}
