//! Idempotency under concurrency. The API specification, POST /v1/agent-runs: "With the same `idempotency-key`, a
//! replay returns the original run with response header `idempotent-replay: true`"; Limits: "header
//! `idempotency-key` on writes makes a retry return the original run; extract batch ignores it". Requests that
//! arrive together while the document server is slow must still make one run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A document server that holds every answer `delay` before sending the invoice text; counts fetches.
async fn slow_doc_server(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let fetches = Arc::new(AtomicUsize::new(0));
    let f2 = fetches.clone();
    let app = axum::Router::new().fallback(move || {
        let f = f2.clone();
        async move {
            f.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            ([("content-type", "text/plain")], INVOICE_TXT)
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (format!("http://{addr}/invoice.txt"), fetches)
}

async fn fire(h: &Emu, path: &str, body: Value, key: &str, n: usize) -> Vec<Resp> {
    let calls = (0..n).map(|_| {
        let body = body.clone();
        async move {
            call(
                h,
                "POST",
                path,
                Some(KEY),
                Some(body),
                &[("idempotency-key", key)],
            )
            .await
        }
    });
    futures_util::future::join_all(calls).await
}

fn one_run_many_replays(rs: &[Resp]) -> String {
    let ids: HashSet<String> = rs
        .iter()
        .map(|r| {
            assert!(r.status == 200 || r.status == 202, "{:?}", r.body);
            r.body["id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(ids.len(), 1, "one key, one run: {ids:?}");
    let replays = rs
        .iter()
        .filter(|r| r.header("idempotent-replay").as_deref() == Some("true"))
        .count();
    assert_eq!(replays, rs.len() - 1, "every later answer is a replay");
    ids.into_iter().next().unwrap()
}

#[tokio::test]
async fn concurrent_agent_run_starts_with_one_key_make_one_run() {
    let h = start_fast().await;
    let (url, fetches) = slow_doc_server(Duration::from_millis(400)).await;
    let rs = fire(
        &h,
        "/v1/agent-runs?wait=0",
        json!({"agent": "agt_document_digest", "files": [{"url": url}]}),
        "same-key",
        6,
    )
    .await;
    let id = one_run_many_replays(&rs);
    let st = h.state().await;
    let runs = st["agent_runs"].as_object().unwrap();
    assert_eq!(runs.len(), 1, "exactly one agent run stored");
    assert!(runs.contains_key(&id));
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "the file was fetched once"
    );
}

#[tokio::test]
async fn concurrent_verb_calls_with_one_key_make_one_run() {
    let h = start_fast().await;
    let (url, fetches) = slow_doc_server(Duration::from_millis(400)).await;
    let rs = fire(
        &h,
        "/v1/parse?wait=0",
        json!({"file": {"url": url}}),
        "parse-key",
        6,
    )
    .await;
    let id = one_run_many_replays(&rs);
    assert_eq!(h.state().await["runs"].as_object().unwrap().len(), 1);
    assert!(id.starts_with("par_"));
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_first_request_releases_the_key() {
    let h = start_fast().await;
    let (url, _) = slow_doc_server(Duration::from_millis(200)).await;
    // an unreachable document: the first request fails and creates nothing; the key stays free
    let bad = fire(
        &h,
        "/v1/parse?wait=0",
        json!({"file": {"url": "http://127.0.0.1:9/none.txt"}}),
        "k",
        2,
    )
    .await;
    assert!(bad.iter().all(|r| r.status == 422), "{:?}", bad[0].body);
    let good = fire(
        &h,
        "/v1/parse?wait=0",
        json!({"file": {"url": url}}),
        "k",
        3,
    )
    .await;
    one_run_many_replays(&good);
}

#[tokio::test]
async fn extract_batch_ignores_the_key_even_when_concurrent() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let act = post(
        &h,
        "/v1/extract/configs",
        json!({"name": "inv", "config": {"schema": {"type": "object", "properties": {"total": {"type": "string"}}}}}),
    )
    .await;
    assert_eq!(act.status, 200, "{:?}", act.body);
    let rs = fire(
        &h,
        "/v1/extract/batch",
        json!({"action": act.body["id"], "files": [{"id": f}]}),
        "batch-key",
        3,
    )
    .await;
    let ids: HashSet<&str> = rs.iter().map(|r| r.body["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "each batch call is a new batch");
    assert!(rs.iter().all(|r| r.header("idempotent-replay").is_none()));
}
