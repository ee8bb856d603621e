//! `--state FILE` in both builds: restored at start, written at a clean stop. (The per-write journal, which only the
//! native binary keeps, is tested in durability.rs.)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn restart_restores_runs_endpoints_and_signing_key() {
    let path = state_file("state", "restart");
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
    let path = state_file("state", "corrupt");
    std::fs::write(&path, b"not json").unwrap();
    let err = start_err(&["--state", path.to_str().unwrap()]).await;
    assert!(
        err.starts_with(&format!(
            "--state: {} is not an emulator state file: ",
            path.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_file(&path);
}
