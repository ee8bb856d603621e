//! The command line itself, in both builds: the native `docauto-emulator` binary, or `npx docauto-emulator` (the
//! wasm build) when `DOCAUTO_EMULATOR_BIN` names it. Same help text, start lines, error lines and exit codes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;

/// The command under test with `args`.
fn command(args: &[&str]) -> tokio::process::Command {
    let mut c = match bin() {
        Some(bin) => {
            let mut c = tokio::process::Command::new("node");
            c.arg(bin);
            c
        }
        None => tokio::process::Command::new(env!("CARGO_BIN_EXE_docauto-emulator")),
    };
    c.args(args).kill_on_drop(true);
    c
}

#[tokio::test]
async fn help_prints_the_usage_and_exits_0() {
    let out = command(&["--help"]).output().await.unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        docauto_emulator::config::USAGE
    );
}

#[tokio::test]
async fn a_bad_flag_names_it_on_stderr_and_exits_2() {
    for (args, message) in [
        (&["--nope"][..], "unknown flag `--nope` (see --help)"),
        (
            &["--rate-limit", "0"][..],
            "--rate-limit: `0` is not a positive integer",
        ),
        (
            &["--key", "a b"][..],
            "--key: the key must be non-empty without spaces",
        ),
        (&["--state"][..], "--state: needs a value"),
    ] {
        let out = command(args).output().await.unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("docauto-emulator: {message}\n"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[tokio::test]
async fn the_start_lines_name_the_address_and_every_key() {
    let mut c = command(&["--addr", "127.0.0.1:0", "--key", "k1:org_a", "--key", "k2:"]);
    c.stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let second = lines.next_line().await.unwrap().unwrap();
    assert!(
        first.starts_with("docauto emulator listening on http://127.0.0.1:"),
        "{first}"
    );
    assert_eq!(second, "accepted dev keys: k1 (org org_a), k2 (org <none>)");
    let _ = child.start_kill();
}

#[tokio::test]
async fn a_start_error_names_its_cause_and_exits_1() {
    let err = start_err(&["--agents", "/nonexistent-docauto-dir"]).await;
    assert!(
        err.starts_with("--agents /nonexistent-docauto-dir: "),
        "{err}"
    );
    let out = command(&[
        "--addr",
        "127.0.0.1:0",
        "--agents",
        "/nonexistent-docauto-dir",
    ])
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[tokio::test]
async fn an_address_in_use_is_a_start_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = command(&["--addr", &addr]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!("docauto-emulator: --addr {addr}: cannot bind: ")),
        "{err}"
    );
}
