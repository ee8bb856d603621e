//! `cargo xtask bench`'s cold-start benchmark: the first verified delivery of `docauto/webhooks` against jose's from
//! a cold start in workerd (through miniflare, and `workerd serve` alone), Deno, Bun and Node, the package installed
//! from its packed tarball (tests/js/cold-start.mjs), and the targets its ratios are held to.

use crate::bench::{ratio, signed_ms, Json, Run, Verdict};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Interleaved rounds (after one warm-up): the shared 2-core machine moves single starts by tens of ms, and a bare
/// workerd start through miniflare (about 100 to 140 ms) by more than the 10 to 30 ms compared on top of it: at 15
/// rounds, three runs on one idle machine put jose's workerd cost at +0.5, +11.7 and +14.4 ms over bare. A round
/// (seven starts in each of five ways) takes about 3.5 s, so 41 rounds between two and three minutes.
const ROUNDS: &str = "41";

/// The targets: our cost over a bare start at most this many times jose's, per runtime (the key the script's
/// `BENCH` line uses, the runtime as the tables name it, the ratio). workerd decodes and validates every `.wasm`
/// module of a Worker when it starts, which a pure-JS verifier never pays, so its target is the loosest.
pub(crate) const TARGETS: [(&str, &str, f64); 4] = [
    ("workerd-serve", "workerd (`workerd serve`)", 1.8),
    ("deno", "Deno", 1.2),
    ("bun", "Bun", 1.0),
    ("node", "Node", 0.8),
];

/// Runs the cold-start benchmark.
pub(crate) fn run(r: &Path) -> Run {
    let args = ["tests/js/cold-start.mjs", "--rounds", ROUNDS];
    crate::util::step(&format!(
        "node {} (first verified delivery after a cold start, docauto/webhooks vs jose: workerd via miniflare and alone, Deno, Bun, Node)",
        args.join(" ")
    ));
    let mut c = Command::new("node");
    c.args(args).current_dir(r);
    Run::capture(
        format!("node {}", args.join(" ")),
        &mut c,
        Duration::from_secs(20 * 60),
    )
}

/// The summary's rows: per runtime of the targets, our cost over a bare start, jose's, and the ratio; "not measured
/// in this run" when the benchmark gave no figures.
pub(crate) fn summary_rows(bench: Option<&Json>) -> Vec<String> {
    TARGETS
        .iter()
        .map(|(key, label, _)| {
            let runtime = bench.and_then(|b| b.at(&["runtimes", key]));
            let figures = runtime
                .and_then(|x| Some((x.num(&["oursMs"])?, x.num(&["joseMs"])?, x.num(&["ratio"])?)));
            match figures {
                Some((ours, jose, r)) => format!(
                    "| {label} | {} | {} | **{}** |",
                    signed_ms(ours),
                    signed_ms(jose),
                    ratio(r)
                ),
                None => format!("| {label} | {} | | |", crate::bench::NOT_MEASURED),
            }
        })
        .collect()
}

/// The verdict of each target, from the ratios of this run.
pub(crate) fn verdicts(bench: Option<&Json>, why_not: &str) -> Vec<Verdict> {
    TARGETS
        .iter()
        .map(|(key, label, target)| {
            let target_text = format!(
                "{label}: at most {}x jose's cost over a bare start",
                crate::bench::decimal(*target)
            );
            match bench.and_then(|b| b.num(&["runtimes", key, "ratio"])) {
                Some(r) => Verdict::against(
                    "Cold start",
                    target_text,
                    format!("{}x", ratio(r)),
                    r <= *target,
                ),
                None => Verdict::not_measured("Cold start", target_text, why_not),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench() -> Json {
        Json::parse(
            r#"{"bench":"cold-start","runtimes":{"workerd-serve":{"oursMs":8.84,"joseMs":5.4,"ratio":1.637},
            "deno":{"oursMs":13.8,"joseMs":11.9,"ratio":1.16},"node":{"oursMs":18.2,"joseMs":65.5,"ratio":0.278}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn the_targets_are_the_decided_ones() {
        let by_key = |k: &str| TARGETS.iter().find(|t| t.0 == k).map(|t| t.2);
        assert_eq!(by_key("workerd-serve"), Some(1.8));
        assert_eq!(by_key("deno"), Some(1.2));
        assert_eq!(by_key("bun"), Some(1.0));
        assert_eq!(by_key("node"), Some(0.8));
    }

    #[test]
    fn a_runtime_without_figures_is_not_measured() {
        let b = bench();
        let rows = summary_rows(Some(&b));
        assert_eq!(
            rows[0],
            "| workerd (`workerd serve`) | +8.8 ms | +5.4 ms | **1.64** |"
        );
        assert_eq!(rows[2], "| Bun | not measured in this run | | |");
        let v = verdicts(Some(&b), "it did not finish");
        assert_eq!(
            v[0].target,
            "workerd (`workerd serve`): at most 1.8x jose's cost over a bare start"
        );
        assert_eq!(v[0].verdict, "met");
        assert!(v[1].target.contains("at most 1.2x"));
        assert_eq!(v[1].verdict, "met");
        assert!(v[2].target.contains("at most 1.0x"));
        assert_eq!(v[2].verdict, "not measured in this run (it did not finish)");
        assert_eq!(v[3].measured, "0.28x");
        let none = summary_rows(None);
        assert!(none.iter().all(|r| r.contains("not measured in this run")));
    }
}
