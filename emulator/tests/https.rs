//! https for outgoing fetches and deliveries. The API specification: "Wire format: JSON over HTTPS"; webhook
//! endpoint `url` is "https only". A local TLS server with a certificate made in the test by a CA made in the
//! test: trusted through `--ca-file`, refused without it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use http_body_util::BodyExt;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Tls {
    base: String,
    ca_file: std::path::PathBuf,
    hooks: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// The server's CA file is the test's own: removed with it.
impl Drop for Tls {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// A TLS server on 127.0.0.1 serving `/invoice.txt` and recording `POST /hook` bodies.
async fn tls_server(name: &str) -> Tls {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "docauto emulator test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let ca_file =
        std::env::temp_dir().join(format!("docauto-emu-{}-{name}-ca.pem", std::process::id()));
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let hooks: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let h2 = hooks.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = l.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let hooks = h2.clone();
            tokio::spawn(async move {
                // a client that does not trust the certificate aborts the handshake: nothing to serve
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let hooks = hooks.clone();
                        async move {
                            let path = req.uri().path().to_string();
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            let resp = if path == "/hook" {
                                hooks.lock().unwrap().push(body.to_vec());
                                hyper::Response::new(http_body_util::Full::new(bytes::Bytes::new()))
                            } else {
                                hyper::Response::builder()
                                    .header("content-type", "text/plain")
                                    .body(http_body_util::Full::new(bytes::Bytes::from(
                                        INVOICE_TXT,
                                    )))
                                    .unwrap()
                            };
                            Ok::<_, std::convert::Infallible>(resp)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    Tls {
        base: format!("https://127.0.0.1:{}", addr.port()),
        ca_file,
        hooks,
    }
}

#[tokio::test]
async fn https_documents_and_deliveries_work_with_the_test_ca() {
    let tls = tls_server("trusted").await;
    let h = start(&[
        "--time-scale",
        "0.01",
        "--ca-file",
        tls.ca_file.to_str().unwrap(),
    ])
    .await;
    // an https webhook endpoint (no --allow-http-webhooks needed) and an https document
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": format!("{}/hook", tls.base)}),
    )
    .await;
    assert_eq!(e.status, 200, "{:?}", e.body);
    let eid = e.body["id"].as_str().unwrap().to_string();
    let r = post(
        &h,
        "/v1/agent-runs?wait=10",
        json!({"agent": "agt_document_digest", "files": [{"url": format!("{}/invoice.txt", tls.base)}],
               "webhook": {"id": eid}}),
    )
    .await;
    assert!(r.status == 200 || r.status == 202, "{:?}", r.body);
    let id = r.body["id"].as_str().unwrap();
    let done = get(&h, &format!("/v1/agent-runs/{id}?wait=10")).await;
    assert_eq!(done.body["status"], "completed", "{:?}", done.body);
    let p = post(
        &h,
        "/v1/parse?wait=10",
        json!({"file": {"url": format!("{}/invoice.txt", tls.base)}}),
    )
    .await;
    assert_eq!(p.status, 200, "{:?}", p.body);
    assert!(p.body["output"]["markdown"]
        .as_str()
        .unwrap()
        .contains("INV-2041"));
    let hooks = tls.hooks.lock().unwrap().clone();
    assert!(
        hooks
            .iter()
            .any(|b| String::from_utf8_lossy(b).contains("agent_run.completed")),
        "the completed event arrived over https"
    );
    let d = get(&h, &format!("/v1/webhooks/{eid}/deliveries")).await;
    let rows = d.body["data"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r["ok"] == true && r["responseStatus"] == 200));
}

#[tokio::test]
async fn an_untrusted_certificate_fails_the_fetch_and_the_delivery() {
    let tls = tls_server("untrusted").await;
    let h = start(&["--time-scale", "0.01"]).await;
    let f = post(
        &h,
        "/v1/files",
        json!({"url": format!("{}/invoice.txt", tls.base)}),
    )
    .await;
    assert_eq!(
        (f.status, f.code()),
        (422, "file_fetch_failed"),
        "{:?}",
        f.body
    );
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": format!("{}/hook", tls.base)}),
    )
    .await;
    let eid = e.body["id"].as_str().unwrap().to_string();
    let r = start_run(
        &h,
        "agt_flaky_import",
        json!({"webhook": {"id": eid}}),
        "?wait=10",
    )
    .await;
    assert_eq!(r.body["status"], "failed", "{:?}", r.body);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let d = get(&h, &format!("/v1/webhooks/{eid}/deliveries")).await;
    let rows = d.body["data"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r["ok"] == false && r["responseStatus"] == 0));
    assert!(tls.hooks.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_ca_file_without_certificates_is_a_start_error() {
    let p = std::env::temp_dir().join(format!("docauto-emu-{}-empty.pem", std::process::id()));
    std::fs::write(&p, "not a certificate\n").unwrap();
    let err = start_err(&["--ca-file", p.to_str().unwrap()]).await;
    let _ = std::fs::remove_file(&p);
    assert_eq!(
        err,
        format!("--ca-file: {} holds no PEM certificate", p.display())
    );
}

/// `npx docauto-emulator --ca-file` runs itself again with the CA (Node reads extra roots only at start): killing the
/// command must not leave that second process serving. Before the child was tied to its parent, it did.
#[tokio::test]
async fn a_killed_emulator_with_a_ca_file_leaves_nothing_serving() {
    let tls = tls_server("killed").await;
    let h = start(&["--ca-file", tls.ca_file.to_str().unwrap()]).await;
    let url = format!("{}/v1/webhooks/jwks.json", h.base_url());
    let client = docauto_emulator::host::HttpClient::default();
    let get = || {
        client.send(
            axum::http::Method::GET,
            &url,
            &[],
            bytes::Bytes::new(),
            Duration::from_secs(2),
        )
    };
    assert_eq!(get().await.unwrap().status, 200);
    h.kill().await;
    let mut answered = true;
    for _ in 0..50 {
        if get().await.is_err() {
            answered = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !answered,
        "{url} still answers 5 s after the emulator was killed"
    );
}
