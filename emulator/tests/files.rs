//! File registration by URL and by upload address.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;

/// A PUT of `body` to the upload address `url` with `content_type` (no bearer: the address is the credential).
async fn put(
    url: &str,
    content_type: &str,
    body: impl Into<bytes::Bytes>,
) -> docauto_emulator::host::Fetched {
    docauto_emulator::host::HttpClient::default()
        .send(
            hyper::Method::PUT,
            url,
            &[("content-type", content_type.to_owned())],
            body.into(),
            std::time::Duration::from_secs(60),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn registration_by_url_goes_processing_then_ready() {
    let h = start(&["--control", "--time-scale", "1"]).await;
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = post(
        &h,
        "/v1/files",
        json!({"url": format!("{base}/a.txt"), "name": "greeting.txt"}),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.body["id"].as_str().unwrap().starts_with("file_"));
    assert_eq!(r.body["name"], "greeting.txt");
    assert_eq!(r.body["status"], "processing");
    let id = r.body["id"].as_str().unwrap();
    post(&h, "/__emulator/clock/advance", json!({"seconds": 2})).await;
    assert_eq!(
        get(&h, &format!("/v1/files/{id}")).await.body["status"],
        "ready"
    );
}

#[tokio::test]
async fn source_answering_404_is_422_file_fetch_failed() {
    let h = start_fast().await;
    let base = doc_server(vec![]).await;
    let r = post(
        &h,
        "/v1/files",
        json!({"url": format!("{base}/missing.pdf")}),
    )
    .await;
    assert_eq!((r.status, r.code()), (422, "file_fetch_failed"));
    assert!(r.body["message"].as_str().unwrap().starts_with("url: "));
}

#[tokio::test]
async fn unreachable_source_is_422_file_fetch_failed() {
    let h = start_fast().await;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let r = post(
        &h,
        "/v1/files",
        json!({"url": format!("http://127.0.0.1:{port}/x.txt")}),
    )
    .await;
    assert_eq!((r.status, r.code()), (422, "file_fetch_failed"));
}

#[tokio::test]
async fn empty_source_is_422_file_fetch_failed() {
    let h = start_fast().await;
    let base = doc_server(vec![("/empty.txt", "text/plain", vec![])]).await;
    let r = post(&h, "/v1/files", json!({"url": format!("{base}/empty.txt")})).await;
    assert_eq!((r.status, r.code()), (422, "file_fetch_failed"));
}

#[tokio::test]
async fn source_without_content_length_is_502_file_upload_failed() {
    let h = start_fast().await;
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = post(
        &h,
        "/v1/files",
        json!({"url": format!("{base}/chunked/a.txt")}),
    )
    .await;
    assert_eq!((r.status, r.code()), (502, "file_upload_failed"));
    assert_eq!(r.body["retryable"], true);
}

#[tokio::test]
async fn upload_address_takes_a_put_with_the_same_content_type() {
    let h = start_fast().await;
    let r = post(
        &h,
        "/v1/files",
        json!({"name": "notes.md", "mimeType": "text/markdown"}),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "awaiting_upload");
    let url = r.body["uploadUrl"].as_str().unwrap().to_string();
    assert!(r.body["uploadExpiresAt"].is_string());
    let id = r.body["id"].as_str().unwrap().to_string();
    let bad = call(&h, "PUT", &url, None, None, &[]).await; // content-type application/json
    assert_eq!((bad.status, bad.code()), (400, "invalid_request"));
    let ok = put(&url, "text/markdown", "# Hi\nTotal: 3").await;
    assert_eq!(ok.status, 200);
    let again = put(&url, "text/markdown", "x").await;
    assert_eq!(again.status, 409);
    for _ in 0..200 {
        if get(&h, &format!("/v1/files/{id}")).await.body["status"] == "ready" {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("uploaded file never ready");
}

#[tokio::test]
async fn upload_address_expires_after_15_minutes() {
    let h = start_fast().await;
    let r = post(
        &h,
        "/v1/files",
        json!({"name": "a.txt", "mimeType": "text/plain"}),
    )
    .await;
    let url = r.body["uploadUrl"].as_str().unwrap().to_string();
    post(
        &h,
        "/__emulator/clock/advance",
        json!({"seconds": 15 * 60 + 1}),
    )
    .await;
    let late = put(&url, "text/plain", "x").await;
    assert_eq!(late.status, 410);
}

#[tokio::test]
async fn url_and_mime_type_together_is_400() {
    let h = start_fast().await;
    let r = post(
        &h,
        "/v1/files",
        json!({"url": "http://127.0.0.1:1/a", "name": "a", "mimeType": "text/plain"}),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "invalid_request"));
    let r = post(&h, "/v1/files", json!({"mimeType": "text/plain"})).await;
    assert!(r.body["message"].as_str().unwrap().starts_with("name: "));
}

#[tokio::test]
async fn another_orgs_file_is_404() {
    let h = start(&["--key", "ka:org_a", "--key", "kb:org_b"]).await;
    let r = call(
        &h,
        "POST",
        "/v1/files",
        Some("ka"),
        Some(json!({"name": "a.txt", "mimeType": "text/plain"})),
        &[],
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    assert_eq!(
        call(&h, "GET", &format!("/v1/files/{id}"), Some("kb"), None, &[])
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn an_upload_of_several_mib_is_taken_and_one_over_the_limit_is_413_payload_too_large() {
    // The spec does not give a maximum file size; the emulator takes up to 25 MiB, as from a URL (a PDF is often more
    // than the 2 MiB a web framework takes by default), and answers more with the spec's 413 `payload_too_large`.
    let h = start_fast().await;
    let register = || {
        post(
            &h,
            "/v1/files",
            json!({"name": "a.md", "mimeType": "text/markdown"}),
        )
    };
    let first = register().await;
    let url = first.body["uploadUrl"].as_str().unwrap().to_string();
    let ok = put(&url, "text/markdown", vec![b'x'; 3 * 1024 * 1024]).await;
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    let second = register().await;
    let url = second.body["uploadUrl"].as_str().unwrap().to_string();
    let big = put(&url, "text/markdown", vec![b'x'; 25 * 1024 * 1024 + 1]).await;
    let body: serde_json::Value = serde_json::from_slice(&big.body).unwrap_or_default();
    assert_eq!(big.status, 413);
    assert_eq!(body["code"], "payload_too_large", "{body}");
}

#[tokio::test]
async fn an_api_request_body_over_4_mib_is_413_payload_too_large_in_the_spec_envelope() {
    let h = start_fast().await;
    let name = "x".repeat(4 * 1024 * 1024);
    let r = post(
        &h,
        "/v1/files",
        json!({"url": "https://docs.example/a.pdf", "name": name}),
    )
    .await;
    assert_eq!(
        (r.status, r.code()),
        (413, "payload_too_large"),
        "{}",
        r.body
    );
    assert!(r.header("x-request-id").is_some());
}
