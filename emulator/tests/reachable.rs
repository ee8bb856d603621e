//! Every behaviour the API specification names is reachable: `file.failed`, `run_too_large`,
//! `ambiguous_capability`, `upstream_error`, agent runs `paused` (`model_error`, `system_error`), resumed and
//! `cancelled`. Each test cites the spec row it checks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

async fn control(h: &Emu, path: &str, body: Value) -> Resp {
    call(
        h,
        "POST",
        &format!("/__emulator/{path}"),
        None,
        Some(body),
        &[],
    )
    .await
}

async fn wait_for_events(r: &Receiver, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..300 {
        let ev = r.events();
        if pred(&ev) {
            return ev;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("events never arrived: {:?}", r.types());
}

/// Spec, Events: "`file.failed` | a file fails to parse"; extract batch is "always 202", so an unreadable file
/// among several cannot refuse the batch: its run ends `failed` and fires `file.failed`.
#[tokio::test]
async fn unreadable_files_in_a_batch_fire_file_failed_and_fail_their_run() {
    let h = start_fast().await;
    let recv = receiver(vec![200]).await;
    let base = doc_server(vec![
        ("/ok.txt", "text/plain", INVOICE_TXT.as_bytes().to_vec()),
        (
            "/broken.pdf",
            "application/pdf",
            b"%PDF-1.7\nthis is not a pdf body".to_vec(),
        ),
        (
            "/blob.bin",
            "application/octet-stream",
            vec![0, 159, 146, 150, 1, 2, 3],
        ),
    ])
    .await;
    let act = post(
        &h,
        "/v1/extract/configs",
        json!({"name": "inv", "config": {"schema": {"type": "object", "properties": {"total": {"type": "string"}}}}}),
    )
    .await;
    let b = post(
        &h,
        "/v1/extract/batch",
        json!({"action": act.body["id"], "webhook": {"url": recv.url}, "files": [
            {"url": format!("{base}/ok.txt")},
            {"url": format!("{base}/broken.pdf")},
            {"url": format!("{base}/blob.bin")},
        ]}),
    )
    .await;
    assert_eq!(b.status, 202, "{:?}", b.body);
    let runs: Vec<String> = b.body["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let ok = get(&h, &format!("/v1/runs/{}?wait=10", runs[0])).await;
    assert_eq!(ok.body["status"], "processed");
    for (id, code) in [(&runs[1], "file_unreadable"), (&runs[2], "file_ineligible")] {
        let r = get(&h, &format!("/v1/runs/{id}?wait=10")).await;
        assert_eq!(r.body["status"], "failed", "{:?}", r.body);
        assert_eq!(r.body["error"]["code"], code);
        assert!(r.body.get("output").is_none(), "no output on a failed run");
    }
    let ev = wait_for_events(&recv, |ev| {
        ev.iter()
            .filter(|e| e["type"] == "processing.completed")
            .count()
            == 3
    })
    .await;
    for (id, code) in [(&runs[1], "file_unreadable"), (&runs[2], "file_ineligible")] {
        let mine: Vec<&Value> = ev
            .iter()
            .filter(|e| e["processingId"] == id.as_str())
            .collect();
        let types: Vec<&str> = mine.iter().map(|e| e["type"].as_str().unwrap()).collect();
        for t in [
            "processing.started",
            "file.failed",
            "run.failed",
            "processing.completed",
        ] {
            assert!(types.contains(&t), "{id}: {types:?}");
        }
        assert!(!types.contains(&"file.processed"));
        let ff = mine.iter().find(|e| e["type"] == "file.failed").unwrap();
        assert!(ff["data"]["fileId"].as_str().unwrap().starts_with("file_"));
        assert_eq!(ff["data"]["runId"], id.as_str());
        assert_eq!(ff["data"]["error"]["code"], code);
    }
    let good: Vec<&str> = ev
        .iter()
        .filter(|e| e["processingId"] == runs[0].as_str())
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(good.contains(&"file.processed") && !good.contains(&"file.failed"));
}

/// Spec, Errors: "`run_too_large` | 4xx | request exceeds dispatch size budget".
#[tokio::test]
async fn a_run_over_the_dispatch_budget_is_run_too_large() {
    let h = start(&[
        "--control",
        "--time-scale",
        "0.01",
        "--dispatch-budget",
        "100",
    ])
    .await;
    let f = ready_file(&h).await; // the invoice is 200 bytes
    let r = post(&h, "/v1/parse", json!({"file": {"id": f}})).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(r.code(), "run_too_large");
    assert_eq!(r.body["retryable"], false);
    let a = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest", "files": [{"id": f}]}),
    )
    .await;
    assert_eq!(a.code(), "run_too_large");
    let st = h.state().await;
    assert_eq!(st["runs"], json!({}));
    assert_eq!(st["agent_runs"], json!({}));
    // under the budget the same call works
    let h2 = start(&["--time-scale", "0.01", "--dispatch-budget", "1000"]).await;
    let f2 = ready_file(&h2).await;
    assert_eq!(
        post(&h2, "/v1/parse?wait=10", json!({"file": {"id": f2}}))
            .await
            .status,
        200
    );
}

/// Spec, Errors: `ambiguous_capability` 4xx; `upstream_error` "4xx or 5xx ... `retryable` false".
#[tokio::test]
async fn ambiguous_capability_and_upstream_error_through_control_faults() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let body = json!({"file": {"id": f}, "categories": ["email"], "mode": "mask"});
    assert_eq!(
        control(&h, "faults", json!({"kind": "ambiguous_capability"}))
            .await
            .status,
        200
    );
    let r = post(&h, "/v1/redact", body.clone()).await;
    assert_eq!((r.status, r.code()), (422, "ambiguous_capability"));
    assert_eq!(r.body["retryable"], false);
    control(
        &h,
        "faults",
        json!({"kind": "upstream_error", "status": 503}),
    )
    .await;
    let r = post(&h, "/v1/redact", body.clone()).await;
    assert_eq!((r.status, r.code()), (503, "upstream_error"));
    assert_eq!(r.body["retryable"], false, "spec: retryable false");
    control(&h, "faults", json!({"kind": "upstream_error"})).await;
    let r = post(&h, "/v1/redact", body.clone()).await;
    assert_eq!((r.status, r.code()), (502, "upstream_error"));
    assert_eq!(
        control(
            &h,
            "faults",
            json!({"kind": "upstream_error", "status": 200})
        )
        .await
        .status,
        400
    );
    // faults are one-shot: the next call works
    assert_eq!(post(&h, "/v1/redact?wait=10", body).await.status, 200);
    assert_eq!(h.state().await["runs"].as_object().unwrap().len(), 1);
}

/// Spec, Agent run: `paused` "only while status is `paused`: `reason` is `model_error` or `system_error`. Not a
/// failure."; transitions into and out of `paused` are not shown, so the control API drives them.
#[tokio::test]
async fn a_paused_run_does_not_advance_and_resumes_where_it_stopped() {
    let h = start(&["--control", "--time-scale", "1", "--allow-http-webhooks"]).await;
    let recv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_document_digest",
        json!({"webhook": {"url": recv.url}}),
        "?wait=0",
    )
    .await;
    assert_eq!(r.body["status"], "processing", "{:?}", r.body);
    let id = r.body["id"].as_str().unwrap().to_string();
    let p = control(
        &h,
        &format!("agent-runs/{id}/pause"),
        json!({"reason": "system_error"}),
    )
    .await;
    assert_eq!(p.status, 200, "{:?}", p.body);
    assert_eq!(p.body["status"], "paused");
    assert_eq!(p.body["paused"], json!({"reason": "system_error"}));
    // an hour passes on the emulator clock: nothing moves while paused, and a read does not wait on it
    control(&h, "clock/advance", json!({"seconds": 3600})).await;
    let t0 = std::time::Instant::now();
    let g = get(&h, &format!("/v1/agent-runs/{id}?wait=5")).await;
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "a paused run releases the hold"
    );
    assert_eq!(g.body["status"], "paused");
    assert_eq!(g.body["paused"]["reason"], "system_error");
    assert!(g.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] != "completed"));
    assert_eq!(
        control(
            &h,
            &format!("agent-runs/{id}/pause"),
            json!({"reason": "model_error"})
        )
        .await
        .status,
        409,
        "already paused"
    );
    assert_eq!(
        control(
            &h,
            &format!("agent-runs/{id}/pause"),
            json!({"reason": "tired"})
        )
        .await
        .status,
        400
    );
    let res = control(&h, &format!("agent-runs/{id}/resume"), json!({})).await;
    assert_eq!(res.body["status"], "processing", "{:?}", res.body);
    assert!(res.body.get("paused").is_none());
    let done = get(&h, &format!("/v1/agent-runs/{id}?wait=10")).await;
    assert_eq!(done.body["status"], "completed", "{:?}", done.body);
    let types = recv.types();
    assert!(
        types.contains(&"agent_run.completed".to_string()),
        "{types:?}"
    );
    assert!(
        !types.contains(&"agent_run.failed".to_string()),
        "a pause is not a failure"
    );
}

/// Spec, Agent-run payloads: "`agent_run.failed` ... for cancelled or expired runs the codes are `run_cancelled`
/// and `run_expired`; `data.status` is the truth".
#[tokio::test]
async fn a_cancelled_run_fires_agent_run_failed_with_run_cancelled() {
    let h = start_fast().await;
    let recv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"url": recv.url}}),
        "?wait=10",
    )
    .await;
    assert_eq!(r.body["status"], "waiting");
    let id = r.body["id"].as_str().unwrap().to_string();
    let human = r.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["executor"] == "human")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // a paused waiting run takes no work, then is cancelled
    let p = control(
        &h,
        &format!("agent-runs/{id}/pause"),
        json!({"reason": "model_error"}),
    )
    .await;
    assert_eq!(p.body["paused"]["reason"], "model_error");
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/{human}/complete"),
        json!({}),
    )
    .await;
    assert_eq!((c.status, c.code()), (409, "run_not_active"));
    let x = control(&h, &format!("agent-runs/{id}/cancel"), json!({})).await;
    assert_eq!(x.body["status"], "cancelled", "{:?}", x.body);
    assert_eq!(x.body["error"]["code"], "run_cancelled");
    assert_eq!(
        control(&h, &format!("agent-runs/{id}/cancel"), json!({}))
            .await
            .status,
        409
    );
    assert_eq!(
        control(&h, "agent-runs/agr_unknown/cancel", json!({}))
            .await
            .status,
        404
    );
    let ev = wait_for_events(&recv, |ev| {
        ev.iter().any(|e| e["type"] == "agent_run.failed")
    })
    .await;
    let failed: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "agent_run.failed")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["data"]["status"], "cancelled");
    assert_eq!(failed[0]["data"]["error"]["code"], "run_cancelled");
    assert_eq!(
        get(&h, &format!("/v1/agent-runs/{id}")).await.body["status"],
        "cancelled"
    );
}
