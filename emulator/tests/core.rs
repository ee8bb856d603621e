//! Authentication, error envelope, request ids, rate limit, organization isolation, control faults.
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
async fn missing_authorization_is_401_unauthorized_with_envelope() {
    let h = start_fast().await;
    let r = call(&h, "GET", "/v1/agents", None, None, &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.code(), "unauthorized");
    assert_eq!(r.body["retryable"], false);
    let rid = r.body["requestId"].as_str().unwrap();
    assert_eq!(r.header("x-request-id").as_deref(), Some(rid));
    assert!(r.body["message"].is_string());
}

#[tokio::test]
async fn malformed_authorization_is_401_unauthorized() {
    let h = start_fast().await;
    let r = call(
        &h,
        "GET",
        "/v1/agents",
        None,
        None,
        &[("authorization", "Token abc")],
    )
    .await;
    assert_eq!(r.code(), "unauthorized");
    let r = call(
        &h,
        "GET",
        "/v1/agents",
        None,
        None,
        &[("authorization", "Bearer ")],
    )
    .await;
    assert_eq!(r.code(), "unauthorized");
}

#[tokio::test]
async fn unknown_key_is_401_invalid_token() {
    let h = start_fast().await;
    let r = call(&h, "GET", "/v1/agents", Some("sk_test_nope"), None, &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.code(), "invalid_token");
}

#[tokio::test]
async fn key_without_organization_is_404_org_not_found() {
    let h = start(&["--key", "sk_orphan:"]).await;
    let r = call(&h, "GET", "/v1/agents", Some("sk_orphan"), None, &[]).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["message"], "org not found");
}

#[tokio::test]
async fn every_response_carries_x_request_id_equal_to_envelope() {
    let h = start_fast().await;
    let ok = get(&h, "/v1/agents").await;
    assert!(ok.header("x-request-id").unwrap().starts_with("req_"));
    let e = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest"}),
    )
    .await;
    assert_eq!(e.status, 400);
    assert_eq!(
        e.header("x-request-id").unwrap(),
        e.body["requestId"].as_str().unwrap()
    );
}

#[tokio::test]
async fn field_errors_prefix_message_with_path_and_carry_doc_url() {
    let h = start_fast().await;
    let e = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest", "files": []}),
    )
    .await;
    assert_eq!(e.code(), "invalid_request");
    assert!(
        e.body["message"].as_str().unwrap().starts_with("files: "),
        "{}",
        e.body
    );
    assert_eq!(
        e.body["docUrl"],
        "https://docs.docauto.dev/developers/errors#invalid_request"
    );
    let keys: Vec<_> = e.body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
}

#[tokio::test]
async fn rate_limit_is_429_rate_limited_with_retry_after_60() {
    let h = start(&["--rate-limit", "3", "--control"]).await;
    for _ in 0..3 {
        assert_eq!(get(&h, "/v1/agents").await.status, 200);
    }
    let r = get(&h, "/v1/agents").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.code(), "rate_limited");
    assert_eq!(r.body["retryable"], true);
    assert_eq!(r.header("retry-after").as_deref(), Some("60"));
    // the budget refills after a minute of emulator time
    post(&h, "/__emulator/clock/advance", json!({"seconds": 61})).await;
    assert_eq!(get(&h, "/v1/agents").await.status, 200);
}

#[tokio::test]
async fn jwks_is_exempt_from_rate_limit_and_auth_and_cacheable() {
    let h = start(&["--rate-limit", "1"]).await;
    assert_eq!(get(&h, "/v1/agents").await.status, 200);
    assert_eq!(get(&h, "/v1/agents").await.status, 429);
    for path in ["/v1/webhooks/jwks.json", "/process/jwks.json"] {
        for _ in 0..5 {
            let r = call(&h, "GET", path, None, None, &[]).await;
            assert_eq!(r.status, 200);
            assert_eq!(
                r.header("cache-control").as_deref(),
                Some("public, max-age=3600")
            );
            let k = &r.body["keys"][0];
            assert_eq!(k["kty"], "EC");
            assert_eq!(k["crv"], "P-256");
            assert_eq!(k["alg"], "ES256");
            assert_eq!(k["use"], "sig");
        }
    }
}

#[tokio::test]
async fn rate_limit_is_shared_by_keys_of_one_org_and_separate_per_org() {
    let h = start(&[
        "--rate-limit",
        "2",
        "--key",
        "k1:org_a",
        "--key",
        "k2:org_a",
        "--key",
        "k3:org_b",
    ])
    .await;
    assert_eq!(
        call(&h, "GET", "/v1/agents", Some("k1"), None, &[])
            .await
            .status,
        200
    );
    assert_eq!(
        call(&h, "GET", "/v1/agents", Some("k2"), None, &[])
            .await
            .status,
        200
    );
    assert_eq!(
        call(&h, "GET", "/v1/agents", Some("k2"), None, &[])
            .await
            .status,
        429
    );
    assert_eq!(
        call(&h, "GET", "/v1/agents", Some("k3"), None, &[])
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn another_orgs_agent_run_is_404() {
    let h = start(&[
        "--key",
        "ka:org_a",
        "--key",
        "kb:org_b",
        "--time-scale",
        "0.01",
    ])
    .await;
    let f = {
        let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
        let r = call(
            &h,
            "POST",
            "/v1/files",
            Some("ka"),
            Some(json!({"url": format!("{base}/a.txt")})),
            &[],
        )
        .await;
        r.body["id"].as_str().unwrap().to_string()
    };
    let r = call(
        &h,
        "POST",
        "/v1/agent-runs?wait=0",
        Some("ka"),
        Some(json!({"agent": "agt_document_digest", "files": [{"id": f}]})),
        &[],
    )
    .await;
    let id = r.body["id"].as_str().unwrap().to_string();
    let other = call(
        &h,
        "GET",
        &format!("/v1/agent-runs/{id}"),
        Some("kb"),
        None,
        &[],
    )
    .await;
    assert_eq!(other.status, 404);
    assert_eq!(other.code(), "not_found");
    // and b cannot use a's file either
    let r = call(
        &h,
        "POST",
        "/v1/agent-runs",
        Some("kb"),
        Some(json!({"agent": "agt_document_digest", "files": [{"id": f}]})),
        &[],
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn scope_keys_hides_runs_of_other_keys_of_the_org() {
    let h = start(&[
        "--key",
        "ka:org_a",
        "--key",
        "kb:org_a",
        "--scope-keys",
        "--time-scale",
        "0.01",
    ])
    .await;
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = call(
        &h,
        "POST",
        "/v1/agent-runs?wait=0",
        Some("ka"),
        Some(json!({"agent": "agt_document_digest", "files": [{"url": format!("{base}/a.txt")}]})),
        &[],
    )
    .await;
    let id = r.body["id"].as_str().unwrap().to_string();
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/v1/agent-runs/{id}"),
            Some("kb"),
            None,
            &[]
        )
        .await
        .status,
        404
    );
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/v1/agent-runs/{id}"),
            Some("ka"),
            None,
            &[]
        )
        .await
        .status,
        200
    );
}

#[tokio::test]
async fn without_scope_keys_any_key_of_the_org_reads_the_run() {
    let h = start(&[
        "--key",
        "ka:org_a",
        "--key",
        "kb:org_a",
        "--time-scale",
        "0.01",
    ])
    .await;
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = call(
        &h,
        "POST",
        "/v1/agent-runs?wait=0",
        Some("ka"),
        Some(json!({"agent": "agt_document_digest", "files": [{"url": format!("{base}/a.txt")}]})),
        &[],
    )
    .await;
    let id = r.body["id"].as_str().unwrap().to_string();
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/v1/agent-runs/{id}"),
            Some("kb"),
            None,
            &[]
        )
        .await
        .status,
        200
    );
}

#[tokio::test]
async fn unknown_route_is_404_not_found_envelope() {
    let h = start_fast().await;
    let r = get(&h, "/v1/nope").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.code(), "not_found");
}

#[tokio::test]
async fn injected_faults_apply_to_the_next_n_requests() {
    let h = start_fast().await;
    post(
        &h,
        "/__emulator/faults",
        json!({"kind": "rate_limited", "count": 2, "retryAfter": 7}),
    )
    .await;
    let r = get(&h, "/v1/agents").await;
    assert_eq!((r.status, r.code()), (429, "rate_limited"));
    assert_eq!(r.header("retry-after").as_deref(), Some("7"));
    assert_eq!(get(&h, "/v1/agents").await.status, 429);
    assert_eq!(get(&h, "/v1/agents").await.status, 200);
    post(
        &h,
        "/__emulator/faults",
        json!({"kind": "auth_unavailable"}),
    )
    .await;
    let r = get(&h, "/v1/agents").await;
    assert_eq!((r.status, r.code()), (503, "auth_unavailable"));
    assert_eq!(r.body["retryable"], true);
    post(&h, "/__emulator/faults", json!({"kind": "internal_error"})).await;
    let r = get(&h, "/v1/agents").await;
    assert_eq!((r.status, r.code()), (500, "internal_error"));
    post(
        &h,
        "/__emulator/faults",
        json!({"kind": "slow", "delayMs": 300}),
    )
    .await;
    let t = std::time::Instant::now();
    assert_eq!(get(&h, "/v1/agents").await.status, 200);
    assert!(t.elapsed().as_millis() >= 300);
}

#[tokio::test]
async fn dropped_connection_fault_commits_the_work_first() {
    let h = start_fast().await;
    post(&h, "/__emulator/faults", json!({"kind": "drop_connection"})).await;
    let url = format!("{}/v1/webhooks", h.base_url());
    let res = docauto_emulator::host::HttpClient::default()
        .send(
            hyper::Method::POST,
            &url,
            &[
                ("authorization", format!("Bearer {KEY}")),
                ("content-type", "application/json".into()),
            ],
            json!({"url": "https://example.com/hook"})
                .to_string()
                .into(),
            std::time::Duration::from_secs(5),
        )
        .await;
    assert!(
        res.is_err(),
        "the client must not get a complete answer: {res:?}"
    );
    let list = get(&h, "/v1/webhooks").await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        1,
        "the create was committed"
    );
}

#[tokio::test]
async fn control_api_is_absent_without_the_flag() {
    let h = start(&[]).await;
    let r = call(
        &h,
        "POST",
        "/__emulator/faults",
        None,
        Some(json!({"kind": "internal_error"})),
        &[],
    )
    .await;
    assert_ne!(r.status, 200);
    assert_eq!(
        get(&h, "/v1/agents").await.status,
        200,
        "no fault was queued"
    );
}

#[tokio::test]
async fn bad_wait_is_400_naming_wait() {
    let h = start_fast().await;
    let r = get(&h, "/v1/agent-runs/agr_x?wait=121").await;
    assert_eq!(r.code(), "invalid_request");
    assert!(r.body["message"].as_str().unwrap().starts_with("wait: "));
}

#[tokio::test]
async fn out_of_credits_starts_are_402_and_reads_still_work() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let run = post(&h, "/v1/parse", json!({"file": {"id": f}})).await;
    let id = run.body["id"].as_str().unwrap();
    post(
        &h,
        "/__emulator/credits",
        json!({"org": "org_demo", "exhausted": true}),
    )
    .await;
    for (path, body) in [
        ("/v1/parse", json!({"file": {"id": f}})),
        (
            "/v1/agent-runs",
            json!({"agent": "agt_document_digest", "files": [{"id": f}]}),
        ),
        ("/v1/realtime/transcriptions", json!({})),
    ] {
        let r = post(&h, path, body).await;
        assert_eq!((r.status, r.code()), (402, "credits_exhausted"), "{path}");
        assert_eq!(r.body["retryable"], false);
    }
    assert_eq!(get(&h, &format!("/v1/runs/{id}")).await.status, 200);
    assert_eq!(
        post(&h, &format!("/v1/runs/{id}/keep"), json!({}))
            .await
            .status,
        200
    );
    post(
        &h,
        "/__emulator/credits",
        json!({"org": "org_demo", "exhausted": false}),
    )
    .await;
    assert_eq!(
        post(&h, "/v1/parse", json!({"file": {"id": f}}))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn cors_preflight_is_204_without_auth_and_answers_expose_headers() {
    let h = start_fast().await;
    let r = call(
        &h,
        "OPTIONS",
        "/v1/agent-runs",
        None,
        None,
        &[
            ("origin", "http://localhost:5173"),
            ("access-control-request-method", "POST"),
        ],
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(r
        .header("access-control-allow-headers")
        .unwrap()
        .contains("authorization"));
    let g = get(&h, "/v1/agents").await;
    assert_eq!(
        g.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert!(g
        .header("access-control-expose-headers")
        .unwrap()
        .contains("x-request-id"));
}
