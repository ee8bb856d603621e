//! `--state FILE`: written before each answer that changed it, and restored at start.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;

fn tmp(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("docauto-emu-{}-{name}.json", std::process::id()));
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_file(docauto_emulator::store::journal_path(&p));
    p
}

/// Snapshot and journal, as text.
fn on_disk(p: &std::path::Path) -> String {
    let snap = std::fs::read_to_string(p).unwrap_or_default();
    let journal =
        std::fs::read_to_string(docauto_emulator::store::journal_path(p)).unwrap_or_default();
    snap + &journal
}

#[tokio::test]
async fn state_is_on_disk_before_the_answer_arrives() {
    let path = tmp("wal");
    let h = start(&["--state", path.to_str().unwrap()]).await;
    let r = post(
        &h,
        "/v1/webhooks",
        json!({"url": "https://example.com/hook"}),
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    assert!(on_disk(&path).contains(id), "written before the response");
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn restart_restores_runs_endpoints_and_signing_key() {
    let path = tmp("restart");
    let args = ["--state", path.to_str().unwrap(), "--time-scale", "0.01"];
    let h = start(&args).await;
    let kid = call(&h, "GET", "/v1/webhooks/jwks.json", None, None, &[])
        .await
        .body["keys"][0]["kid"]
        .clone();
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": "https://example.com/hook"}),
    )
    .await;
    let run = start_run(
        &h,
        "agt_contract_review",
        json!({"metadata": {"k": "v"}}),
        "",
    )
    .await;
    let run_id = run.body["id"].as_str().unwrap().to_string();
    h.shutdown().await.unwrap();
    let h2 = start(&args).await;
    let kid2 = call(&h2, "GET", "/v1/webhooks/jwks.json", None, None, &[])
        .await
        .body["keys"][0]["kid"]
        .clone();
    assert_eq!(kid, kid2, "same signing key after restart");
    assert_eq!(
        get(
            &h2,
            &format!("/v1/webhooks/{}", e.body["id"].as_str().unwrap())
        )
        .await
        .status,
        200
    );
    let r = get(&h2, &format!("/v1/agent-runs/{run_id}")).await;
    assert_eq!(r.body["status"], "waiting");
    assert_eq!(r.body["metadata"], json!({"k": "v"}));
    let c = post(
        &h2,
        &format!("/v1/agent-runs/{run_id}/tasks/legal_review/complete"),
        json!({}),
    )
    .await;
    assert_eq!(c.status, 200);
    h2.shutdown().await.unwrap();
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_corrupt_state_file_is_a_start_error() {
    let path = tmp("corrupt");
    std::fs::write(&path, b"not json").unwrap();
    let cfg = docauto_emulator::Config::from_args(
        ["--addr", "127.0.0.1:0", "--state", path.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string()),
    )
    .unwrap();
    let err = docauto_emulator::serve(cfg).await.err().unwrap();
    assert!(err.contains("--state"), "{err}");
    let _ = std::fs::remove_file(&path);
}

/// Issue 14, item 5: "every answer that changed state leaves only after the change is durable". Runs, files and
/// endpoints are created under load by a separate emulator process, which is killed with SIGKILL mid-load; a
/// restart on the same state must hold every object whose creation was acknowledged.
#[tokio::test]
async fn sigkill_under_load_loses_no_acknowledged_object() {
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncBufReadExt;
    let path = tmp("sigkill");
    let base = doc_server(vec![(
        "/a.txt",
        "text/plain",
        INVOICE_TXT.as_bytes().to_vec(),
    )])
    .await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_docauto-emulator"))
        .args([
            "--addr",
            "127.0.0.1:0",
            "--rate-limit",
            "1000000",
            "--time-scale",
            "0.01",
            "--state",
            path.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let url = first.rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{first}");
    let client = docauto_emulator::host::HttpClient::default();
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..6 {
        let (client, acked, stop, url, base) = (
            client.clone(),
            acked.clone(),
            stop.clone(),
            url.clone(),
            base.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                i += 1;
                let (route, read, body) = match (w + i) % 3 {
                    0 => (
                        "/v1/agent-runs?wait=0",
                        "/v1/agent-runs/",
                        json!({"agent": "agt_contract_review", "files": [{"url": format!("{base}/a.txt")}]}),
                    ),
                    1 => (
                        "/v1/files",
                        "/v1/files/",
                        json!({"url": format!("{base}/a.txt")}),
                    ),
                    _ => (
                        "/v1/webhooks",
                        "/v1/webhooks/",
                        json!({"url": "https://example.com/hook"}),
                    ),
                };
                let r = client
                    .send(
                        hyper::Method::POST,
                        &format!("{url}{route}"),
                        &[
                            ("authorization", format!("Bearer {KEY}")),
                            ("content-type", "application/json".into()),
                        ],
                        body.to_string().into(),
                        std::time::Duration::from_secs(10),
                    )
                    .await;
                let Ok(r) = r else { continue };
                // acknowledged: a complete success answer arrived
                if r.status == 200 || r.status == 202 {
                    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                    let id = v["id"].as_str().unwrap().to_string();
                    acked.lock().unwrap().push((read.to_string(), id));
                }
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    child.start_kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().await.unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for w in workers {
        let _ = w.await;
    }
    assert!(!status.success(), "killed, not stopped");
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 30,
        "load too small to mean anything: {}",
        acked.len()
    );
    let h = start(&["--rate-limit", "1000000", "--state", path.to_str().unwrap()]).await;
    let mut missing = Vec::new();
    for (read, id) in &acked {
        let r = get(&h, &format!("{read}{id}")).await;
        if r.status != 200 {
            missing.push((id.clone(), r.status));
        }
    }
    assert!(
        missing.is_empty(),
        "lost after SIGKILL: {missing:?} of {}",
        acked.len()
    );
    eprintln!(
        "{} acknowledged objects all found after SIGKILL",
        acked.len()
    );
    h.shutdown().await.unwrap();
}

/// A crash during an append leaves a torn last journal line: it was never acknowledged, so the start drops it and
/// keeps everything before it; a bad line followed by good ones is a start error.
#[tokio::test]
async fn a_torn_last_journal_line_is_dropped_and_a_bad_middle_line_refused() {
    let path = tmp("torn");
    let h = start(&["--state", path.to_str().unwrap()]).await;
    let e = post(&h, "/v1/webhooks", json!({"url": "https://example.com/a"})).await;
    let id = e.body["id"].as_str().unwrap().to_string();
    drop(h); // no clean stop: the endpoint lives in the journal only
    let jp = docauto_emulator::store::journal_path(&path);
    let good = std::fs::read(&jp).unwrap();
    assert!(String::from_utf8_lossy(&good).contains(&id));
    let mut torn = good.clone();
    torn.extend_from_slice(br#"{"endpoints":{"whe_x":{"id":"#);
    std::fs::write(&jp, &torn).unwrap();
    let h2 = start(&["--state", path.to_str().unwrap()]).await;
    assert_eq!(get(&h2, &format!("/v1/webhooks/{id}")).await.status, 200);
    h2.shutdown().await.unwrap();
    let mut bad = b"{not json}\n".to_vec();
    bad.extend_from_slice(&good);
    std::fs::write(&jp, &bad).unwrap();
    let cfg = docauto_emulator::Config::from_args(
        ["--addr", "127.0.0.1:0", "--state", path.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string()),
    )
    .unwrap();
    // the clean stop above compacted into the snapshot and emptied the journal: the bad line is now first of two
    let err = docauto_emulator::serve(cfg).await.err().unwrap();
    assert!(err.contains("journal") || err.contains("line"), "{err}");
}
