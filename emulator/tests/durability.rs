//! What only the native binary promises: `--state` writes a journal line, fsynced, before every answer whose change
//! it carries, so a crash loses nothing acknowledged. The wasm build (`npx docauto-emulator`) writes its snapshot at
//! start and at a clean stop only (its README says so); `cargo xtask test` runs this file on the native build alone.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;

/// Snapshot and journal, as text.
fn on_disk(p: &std::path::Path) -> String {
    let snap = std::fs::read_to_string(p).unwrap_or_default();
    let journal =
        std::fs::read_to_string(docauto_emulator::store::journal_path(p)).unwrap_or_default();
    snap + &journal
}

#[tokio::test]
async fn state_is_on_disk_before_the_answer_arrives() {
    let path = state_file("durability", "wal");
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

/// Every answer that changed state leaves only after the change is durable. Runs, files and
/// endpoints are created under load by a separate emulator process, which is killed with SIGKILL mid-load; a
/// restart on the same state must hold every object whose creation was acknowledged.
#[tokio::test]
async fn sigkill_under_load_loses_no_acknowledged_object() {
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncBufReadExt;
    let path = state_file("durability", "sigkill");
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
    let path = state_file("durability", "torn");
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
    // the clean stop above compacted into the snapshot and emptied the journal: the bad line is now first of two
    let err = start_err(&["--state", path.to_str().unwrap()]).await;
    assert!(err.contains("journal") || err.contains("line"), "{err}");
}

/// A read (each poll of a `wait`) of a run with nothing due leaves its record untouched, so `--state` does not
/// journal the unchanged run again; a read once it is due records the change.
#[tokio::test]
async fn reading_a_run_with_nothing_due_marks_no_change() {
    let h = start(&["--control", "--time-scale", "1", "--rate-limit", "100000"]).await;
    let f = ready_file(&h).await;
    let r = post(&h, "/v1/parse?wait=0", json!({"file": {"id": f}})).await;
    let id = r.body["id"].as_str().unwrap().to_string();
    let now = h.app().now_ms();
    {
        let mut st = h.app().state.lock().unwrap();
        docauto_emulator::store::clear_changes(&mut st);
        let out = docauto_emulator::runs::materialize(&mut st, &id, now);
        assert!(out.is_empty());
        assert_eq!(st.runs.marks(), 0, "an unchanged run is not marked");
        assert_eq!(st.runs[&id].status, "processing");
        let out = docauto_emulator::runs::materialize(&mut st, &id, now + 60_000);
        assert!(out.is_empty(), "no webhook, no events");
        assert_eq!(st.runs.marks(), 1, "the finished run is marked");
        assert_eq!(st.runs[&id].status, "processed");
    }
}
