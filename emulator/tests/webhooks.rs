//! Webhook endpoints, deliveries log, signed agent-run events and the in-request retry ladder.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;
use std::collections::HashSet;

#[tokio::test]
async fn endpoint_crud_round_trip() {
    let h = start_fast().await;
    let a = post(&h, "/v1/webhooks", json!({"url": "https://example.com/a"})).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["object"], "webhook_endpoint");
    assert!(a.body["id"].as_str().unwrap().starts_with("whe_"));
    assert_eq!(a.body["disabled"], false);
    assert_eq!(
        a.body["events"].as_array().unwrap().len(),
        13,
        "omitted events means all types"
    );
    let b = post(
        &h,
        "/v1/webhooks",
        json!({"url": "https://example.com/b", "events": ["agent_run.completed"]}),
    )
    .await;
    let list = get(&h, "/v1/webhooks").await;
    assert_eq!(list.body["data"][0]["id"], b.body["id"], "newest first");
    let id = a.body["id"].as_str().unwrap();
    let p = call(
        &h,
        "PATCH",
        &format!("/v1/webhooks/{id}"),
        Some(KEY),
        Some(json!({"disabled": true, "events": ["run.completed"]})),
        &[],
    )
    .await;
    assert_eq!(p.body["disabled"], true);
    assert_eq!(p.body["events"], json!(["run.completed"]));
    assert_eq!(
        get(&h, &format!("/v1/webhooks/{id}")).await.body["disabled"],
        true
    );
    let d = call(
        &h,
        "DELETE",
        &format!("/v1/webhooks/{id}"),
        Some(KEY),
        None,
        &[],
    )
    .await;
    assert_eq!(d.status, 204);
    assert_eq!(get(&h, &format!("/v1/webhooks/{id}")).await.status, 404);
}

#[tokio::test]
async fn http_webhook_url_is_400_without_the_flag() {
    let h = start(&[]).await;
    let r = post(
        &h,
        "/v1/webhooks",
        json!({"url": "http://127.0.0.1:9/hook"}),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "invalid_request"));
    assert!(r.body["message"].as_str().unwrap().starts_with("url: "));
}

#[tokio::test]
async fn http_webhook_url_needs_loopback_even_with_the_flag() {
    let h = start_fast().await;
    assert_eq!(
        post(
            &h,
            "/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/hook"})
        )
        .await
        .status,
        200
    );
    assert_eq!(
        post(
            &h,
            "/v1/webhooks",
            json!({"url": "http://localhost:9/hook"})
        )
        .await
        .status,
        200
    );
    assert_eq!(
        post(
            &h,
            "/v1/webhooks",
            json!({"url": "http://example.com/hook"})
        )
        .await
        .status,
        400
    );
}

#[tokio::test]
async fn unknown_event_type_is_400_with_index_path() {
    let h = start_fast().await;
    let r = post(
        &h,
        "/v1/webhooks",
        json!({"url": "https://example.com/a", "events": ["agent_run.completed", "nope"]}),
    )
    .await;
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .starts_with("events[1]: "));
}

#[tokio::test]
async fn run_with_disabled_endpoint_is_422_and_unknown_endpoint_is_422() {
    let h = start_fast().await;
    let e = post(&h, "/v1/webhooks", json!({"url": "https://example.com/a"})).await;
    let id = e.body["id"].as_str().unwrap();
    call(
        &h,
        "PATCH",
        &format!("/v1/webhooks/{id}"),
        Some(KEY),
        Some(json!({"disabled": true})),
        &[],
    )
    .await;
    let r = start_run(
        &h,
        "agt_document_digest",
        json!({"webhook": {"id": id}}),
        "",
    )
    .await;
    assert_eq!((r.status, r.code()), (422, "webhook_endpoint_disabled"));
    let r = start_run(
        &h,
        "agt_document_digest",
        json!({"webhook": {"id": "whe_nope"}}),
        "",
    )
    .await;
    assert_eq!((r.status, r.code()), (422, "webhook_endpoint_not_found"));
}

#[tokio::test]
async fn agent_events_are_delivered_inside_the_observing_request_and_signed() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"url": rcv.url}, "metadata": {"m": 1}}),
        "",
    )
    .await;
    assert_eq!(r.body["status"], "waiting");
    // delivered before the answer left
    let types = rcv.types();
    assert!(
        types.contains(&"agent_run.waiting".to_string()),
        "{types:?}"
    );
    assert!(
        types.contains(&"agent_run.task_ready".to_string()),
        "{types:?}"
    );
    let hits = rcv.hits.lock().unwrap().clone();
    for hit in &hits {
        let token = hit
            .headers
            .get("x-svc-signature")
            .unwrap()
            .to_str()
            .unwrap();
        verify_signature(&h, token, &hit.body).await;
        let env: serde_json::Value = serde_json::from_slice(&hit.body).unwrap();
        assert_eq!(env.as_object().unwrap().len(), 5, "five envelope fields");
        assert_eq!(env["processingId"], r.body["id"]);
        assert_eq!(env["data"]["object"], "agent_run");
        assert_eq!(env["data"]["id"], r.body["id"]);
        assert_eq!(env["data"]["metadata"], json!({"m": 1}));
        assert!(env["occurredAt"].as_str().unwrap().ends_with('Z'));
    }
    let ev = rcv.events();
    let waiting = ev
        .iter()
        .find(|e| e["type"] == "agent_run.waiting")
        .unwrap();
    assert_eq!(waiting["data"]["waiting"]["tasks"], 1);
    let ready = ev
        .iter()
        .find(|e| e["type"] == "agent_run.task_ready")
        .unwrap();
    assert_eq!(
        ready["data"]["task"],
        json!({"id": "legal_review", "title": "Legal review of the clauses", "executor": "human", "status": "ready"})
    );
    let ids: HashSet<_> = ev
        .iter()
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), ev.len(), "unique eventIds");
}

#[tokio::test]
async fn approval_requested_payload_is_minimal_and_completed_carries_progress_and_output() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_invoice_summary",
        json!({"webhook": {"url": rcv.url}}),
        "",
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    let ev = rcv.events();
    let ar = ev
        .iter()
        .find(|e| e["type"] == "agent_run.approval_requested")
        .unwrap();
    let keys: Vec<_> = ar["data"]["approval"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    // spec, Agent-run payloads: `approval: {id, kind, action, requestedAt}`, in that order
    assert_eq!(keys, vec!["id", "kind", "action", "requestedAt"]);
    let aid = ar["data"]["approval"]["id"].as_str().unwrap();
    post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}?wait=10"),
        json!({"decision": "approve"}),
    )
    .await;
    let ev = rcv.events();
    let done = ev
        .iter()
        .find(|e| e["type"] == "agent_run.completed")
        .unwrap();
    assert_eq!(done["data"]["status"], "completed");
    assert_eq!(done["data"]["progress"]["tasks"]["completed"], 2);
    assert!(done["data"]["result"].is_string());
    assert!(done["data"]["output"]["files"][0]["url"].is_string());
}

#[tokio::test]
async fn failed_run_event_carries_error() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    start_run(
        &h,
        "agt_flaky_import",
        json!({"webhook": {"url": rcv.url}}),
        "?wait=10",
    )
    .await;
    let ev = rcv.events();
    let f = ev.iter().find(|e| e["type"] == "agent_run.failed").unwrap();
    assert_eq!(f["data"]["error"]["code"], "task_failed");
    assert_eq!(f["data"]["status"], "failed");
}

#[tokio::test]
async fn agent_ladder_retries_after_half_then_one_second_scaled() {
    let h = start(&["--time-scale", "0.1", "--allow-http-webhooks"]).await;
    let rcv = receiver(vec![500, 503, 200]).await;
    start_run(
        &h,
        "agt_flaky_import",
        json!({"webhook": {"url": rcv.url}}),
        "?wait=10",
    )
    .await;
    let hits = rcv.hits.lock().unwrap().clone();
    assert_eq!(
        hits.len(),
        3,
        "two failures then success, inside the request"
    );
    let g1 = hits[1].at - hits[0].at;
    let g2 = hits[2].at - hits[1].at;
    assert!(g1.as_millis() >= 45 && g1.as_millis() < 1500, "{g1:?}");
    assert!(g2.as_millis() >= 95 && g2.as_millis() < 2000, "{g2:?}");
    let ids: HashSet<_> = rcv
        .events()
        .iter()
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 1, "the same event is retried");
    for hit in &hits {
        verify_signature(
            &h,
            hit.headers
                .get("x-svc-signature")
                .unwrap()
                .to_str()
                .unwrap(),
            &hit.body,
        )
        .await;
    }
}

#[tokio::test]
async fn receiver_down_past_the_ladder_gets_the_event_at_the_next_observation() {
    let h = start(&[
        "--time-scale",
        "0.001",
        "--allow-http-webhooks",
        "--rate-limit",
        "1000",
    ])
    .await;
    let rcv = receiver(vec![500, 500, 500, 500, 500, 200]).await;
    let r = start_run(
        &h,
        "agt_flaky_import",
        json!({"webhook": {"url": rcv.url}}),
        "?wait=10",
    )
    .await;
    assert_eq!(
        rcv.hits.lock().unwrap().len(),
        5,
        "five attempts inside the first request"
    );
    get(
        &h,
        &format!("/v1/agent-runs/{}", r.body["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(
        rcv.hits.lock().unwrap().len(),
        6,
        "redelivered on the next read"
    );
    get(
        &h,
        &format!("/v1/agent-runs/{}", r.body["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(rcv.hits.lock().unwrap().len(), 6, "delivered once");
}

#[tokio::test]
async fn saved_endpoint_filters_events_and_logs_deliveries() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": rcv.url, "events": ["agent_run.task_ready"]}),
    )
    .await;
    let eid = e.body["id"].as_str().unwrap();
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"id": eid}}),
        "",
    )
    .await;
    assert_eq!(rcv.types(), vec!["agent_run.task_ready"]);
    let d = get(&h, &format!("/v1/webhooks/{eid}/deliveries")).await;
    assert_eq!(d.body["object"], "list");
    let row = &d.body["data"][0];
    assert_eq!(row["object"], "webhook_delivery");
    assert_eq!(row["endpointId"], eid);
    assert_eq!(row["processingId"], r.body["id"]);
    assert_eq!(row["type"], "agent_run.task_ready");
    assert_eq!(row["attempt"], 1);
    assert_eq!(row["responseStatus"], 200);
    assert_eq!(row["ok"], true);
}

#[tokio::test]
async fn deliveries_log_keeps_the_50_newest_attempts_newest_first() {
    let h = start(&[
        "--time-scale",
        "0.001",
        "--allow-http-webhooks",
        "--rate-limit",
        "100000",
    ])
    .await;
    let rcv = receiver(vec![500]).await;
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": rcv.url, "events": ["agent_run.failed"]}),
    )
    .await;
    let eid = e.body["id"].as_str().unwrap();
    let f = ready_file(&h).await;
    for _ in 0..11 {
        post(
            &h,
            "/v1/agent-runs?wait=10",
            json!({"agent": "agt_flaky_import", "files": [{"id": f}], "webhook": {"id": eid}}),
        )
        .await;
    }
    assert_eq!(rcv.hits.lock().unwrap().len(), 55);
    let d = get(&h, &format!("/v1/webhooks/{eid}/deliveries")).await;
    let rows = d.body["data"].as_array().unwrap();
    assert_eq!(rows.len(), 50);
    assert_eq!(rows[0]["attempt"], 5, "newest first");
    assert_eq!(rows[0]["ok"], false);
    assert_eq!(rows[0]["responseStatus"], 500);
    assert!(rows[0]["at"].as_str() >= rows[49]["at"].as_str());
}

#[tokio::test]
async fn deleted_endpoint_stops_delivering_for_runs_in_flight() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let e = post(&h, "/v1/webhooks", json!({"url": rcv.url})).await;
    let eid = e.body["id"].as_str().unwrap();
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"id": eid}}),
        "",
    )
    .await;
    let before = rcv.hits.lock().unwrap().len();
    call(
        &h,
        "DELETE",
        &format!("/v1/webhooks/{eid}"),
        Some(KEY),
        None,
        &[],
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete?wait=5"),
        json!({}),
    )
    .await;
    assert_eq!(rcv.hits.lock().unwrap().len(), before);
}

#[tokio::test]
async fn a_held_read_runs_the_ladder_of_an_old_event_only_once() {
    let h = start(&[
        "--time-scale",
        "0.001",
        "--allow-http-webhooks",
        "--rate-limit",
        "1000",
    ])
    .await;
    let rcv = receiver(vec![500]).await;
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"url": rcv.url}}),
        "",
    )
    .await;
    let first = rcv.hits.lock().unwrap().len();
    assert_eq!(first, 10, "two events, five attempts each");
    get(
        &h,
        &format!("/v1/agent-runs/{}?wait=1", r.body["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(
        rcv.hits.lock().unwrap().len(),
        20,
        "one more ladder per event in the next request, not one per poll"
    );
}

#[tokio::test]
async fn blocking_again_after_a_completion_fires_waiting_again() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"url": rcv.url}}),
        "",
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete?wait=10"),
        json!({}),
    )
    .await;
    let types = rcv.types();
    assert_eq!(
        types.iter().filter(|t| *t == "agent_run.waiting").count(),
        2,
        "{types:?}"
    );
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "agent_run.approval_requested")
            .count(),
        1
    );
    let last_waiting = rcv
        .events()
        .into_iter()
        .rfind(|e| e["type"] == "agent_run.waiting")
        .unwrap();
    assert_eq!(
        last_waiting["data"]["waiting"],
        json!({"approvals": 1, "tasks": 0, "summary": "Waiting on a person: approve send_email (before)."})
    );
}

/// Connections stay bounded: a burst of events (here 60 runs created at once, each firing `processing.started` and
/// its completion events) never has more than `DELIVERY_CONCURRENCY` attempts on the wire; every event still arrives.
/// Unbounded, each event opened its own connection at the same instant and the pool then kept them all.
#[tokio::test]
async fn a_burst_of_events_keeps_at_most_delivery_concurrency_attempts_in_flight() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (now, max, total) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (n2, m2, t2) = (now.clone(), max.clone(), total.clone());
    let app = axum::Router::new().fallback(move || {
        let (now, max, total) = (n2.clone(), m2.clone(), t2.clone());
        async move {
            let inflight = now.fetch_add(1, Ordering::SeqCst) + 1;
            max.fetch_max(inflight, Ordering::SeqCst);
            // held long enough that, without a bound, every event of the burst overlaps
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            total.fetch_add(1, Ordering::SeqCst);
            axum::http::StatusCode::OK
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    let h = start_fast().await;
    let f = ready_file(&h).await;
    const RUNS: usize = 60;
    let creations = (0..RUNS).map(|_| {
        post(
            &h,
            "/v1/parse?wait=0",
            json!({"file": {"id": f}, "webhook": {"url": url}}),
        )
    });
    for r in futures_util::future::join_all(creations).await {
        assert!(r.status == 200 || r.status == 202, "{:?}", r.body);
    }
    // processing.started, file.processed, run.completed, processing.completed per run
    let expected = RUNS * 4;
    for _ in 0..600 {
        if total.load(Ordering::SeqCst) >= expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        total.load(Ordering::SeqCst),
        expected,
        "every event arrives"
    );
    let max = max.load(Ordering::SeqCst);
    assert!(
        max <= docauto_emulator::app::DELIVERY_CONCURRENCY,
        "{max} attempts in flight at once"
    );
    assert!(max > 1, "the burst was delivered concurrently ({max})");
}
