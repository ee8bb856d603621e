//! Order as the API specification writes it, checked on the raw bytes, never on a parsed object.
//! Spec, Events / Agent-run payloads: "`data` always begins with `object: agent_run`, `id`, `status`, and `metadata`
//! when one was set"; Envelope: "Five fields only: `eventId`, `type`, `processingId`, `occurredAt`, `data`";
//! Webhook management: deliveries are "the 50 most recent attempts, newest first".
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn agent_run_event_data_begins_object_id_status_metadata() {
    let h = start_fast().await;
    let recv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_document_digest",
        json!({"metadata": {"zeta": "1", "alpha": "2"}, "webhook": {"url": recv.url}}),
        "?wait=10",
    )
    .await;
    assert_eq!(r.body["status"], "completed", "{:?}", r.body);
    let id = r.body["id"].as_str().unwrap();
    // the read itself: object, id first
    let read = get(&h, &format!("/v1/agent-runs/{id}")).await;
    let text = String::from_utf8(read.raw.to_vec()).unwrap();
    assert!(
        text.starts_with(&format!(r#"{{"object":"agent_run","id":"{id}","#)),
        "{text}"
    );
    let hits = recv.hits.lock().unwrap().clone();
    assert!(!hits.is_empty());
    for hit in hits {
        let raw = String::from_utf8(hit.body.to_vec()).unwrap();
        let v: Value = serde_json::from_str(&raw).unwrap();
        assert!(
            raw.starts_with(r#"{"eventId":"evt_"#)
                && raw.contains(&format!(
                    r#"","type":"{}","processingId":"{id}","occurredAt":""#,
                    v["type"].as_str().unwrap()
                )),
            "envelope order: {raw}"
        );
        let data = &raw[raw.find(r#","data":"#).unwrap() + 8..];
        let want = format!(
            r#"{{"object":"agent_run","id":"{id}","status":"{}","metadata":{{"zeta":"1","alpha":"2"}}"#,
            v["data"]["status"].as_str().unwrap()
        );
        assert!(data.starts_with(&want), "data order: {data}");
    }
}

#[tokio::test]
async fn capability_runs_and_errors_keep_their_written_order() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let r = post(
        &h,
        "/v1/parse?wait=10",
        json!({"file": {"id": f}, "metadata": {"b": "1", "a": "2"}}),
    )
    .await;
    let text = String::from_utf8(r.raw.to_vec()).unwrap();
    assert!(
        text.starts_with(r#"{"object":"parse_run","id":"par_"#),
        "{text}"
    );
    assert!(text.contains(r#""metadata":{"b":"1","a":"2"}"#), "{text}");
    let e = post(&h, "/v1/parse", json!({})).await;
    let text = String::from_utf8(e.raw.to_vec()).unwrap();
    assert!(
        text.starts_with(r#"{"code":"invalid_request","message":"#),
        "{text}"
    );
    assert!(
        text.contains(r#","retryable":false,"requestId":"req_"#),
        "{text}"
    );
}

/// A receiver whose first answer is held `delay`; the rest answer at once.
async fn first_slow_receiver(delay: Duration) -> String {
    let n = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().fallback(move || {
        let n = n.clone();
        async move {
            if n.fetch_add(1, Ordering::SeqCst) == 0 {
                tokio::time::sleep(delay).await;
            }
            axum::http::StatusCode::OK
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    format!("http://{addr}/hook")
}

#[tokio::test]
async fn deliveries_are_newest_first_when_attempts_interleave() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let url = first_slow_receiver(Duration::from_millis(500)).await;
    let e = post(&h, "/v1/webhooks", json!({"url": url})).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    // run 1's first event is answered late; run 2's events start later and answer first
    let r1 = post(
        &h,
        "/v1/parse?wait=0",
        json!({"file": {"id": f}, "webhook": {"id": e}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r2 = post(
        &h,
        "/v1/parse?wait=0",
        json!({"file": {"id": f}, "webhook": {"id": e}}),
    )
    .await;
    assert!(r1.status < 300 && r2.status < 300);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let d = get(&h, &format!("/v1/webhooks/{e}/deliveries")).await;
    let rows = d.body["data"].as_array().unwrap();
    assert!(rows.len() >= 8, "{rows:?}");
    let ats: Vec<&str> = rows.iter().map(|r| r["at"].as_str().unwrap()).collect();
    let mut sorted = ats.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ats, sorted, "newest first by at");
    // the slow attempt (run 1's processing.started, the oldest) is the last row
    let last = rows.last().unwrap();
    assert_eq!(last["processingId"], r1.body["id"]);
    assert_eq!(last["type"], "processing.started");
}
