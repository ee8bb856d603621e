//! Shared test harness: an emulator on 127.0.0.1:0, a JSON client, and a webhook receiver.
//!
//! The emulator is the native one, in-process, unless `DOCAUTO_EMULATOR_BIN` names the npm package's
//! `docauto-emulator` command (`pkg/emulator/bin.js`, the wasm build): then every test starts that command with
//! the same flags and speaks to it over the same loopback HTTP and WebSocket, so these tests are the conformance
//! suite of both builds (`cargo xtask test` runs them twice). Tests of what only the native binary promises (the
//! per-write journal of `--state`) live in `durability.rs`, which the wasm run leaves out.
#![allow(dead_code)]

use axum::body::Bytes;
use axum::http::HeaderMap;
use docauto_emulator::host::HttpClient;
use docauto_emulator::{serve, Config};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const KEY: &str = "sk_test_docauto";

/// A fresh `--state` path for a test (`docauto-emu-<suite>-<pid>-<name>.json` in the temp folder), with no snapshot
/// or journal left there by an earlier run; both are removed again when the test ends (the value is dropped).
pub fn state_file(suite: &str, name: &str) -> StateFile {
    let p = StateFile(std::env::temp_dir().join(format!(
        "docauto-emu-{suite}-{}-{name}.json",
        std::process::id()
    )));
    p.remove();
    p
}

/// A test's `--state` path ([`state_file`]); its snapshot and journal are removed on drop.
pub struct StateFile(std::path::PathBuf);

impl StateFile {
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(docauto_emulator::store::journal_path(&self.0));
    }
}

impl std::ops::Deref for StateFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for StateFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The npm command under test, when the wasm build is.
pub fn bin() -> Option<String> {
    std::env::var("DOCAUTO_EMULATOR_BIN")
        .ok()
        .filter(|b| !b.is_empty())
}

enum Running {
    Native(docauto_emulator::Handle),
    Bin(tokio::process::Child),
}

/// A running emulator of either build.
pub struct Emu {
    /// The bound address.
    pub addr: SocketAddr,
    running: Running,
}

impl Emu {
    /// `http://ADDR`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A clean stop (the native `Handle::shutdown`; SIGINT to the command, which must then exit by itself with 0):
    /// the `--state` snapshot is written.
    pub async fn shutdown(self) -> Result<(), String> {
        match self.running {
            Running::Native(h) => h.shutdown().await,
            Running::Bin(mut child) => {
                let pid = child.id().ok_or("the command already exited")?;
                let _ = tokio::process::Command::new("kill")
                    .args(["-INT", &pid.to_string()])
                    .status()
                    .await;
                match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
                    Ok(Ok(s)) if s.success() => Ok(()),
                    Ok(Ok(s)) => Err(format!("the command exited with {s}")),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err("the command did not exit within 10 s of SIGINT".into()),
                }
            }
        }
    }

    /// Ends the emulator without a clean stop: SIGKILL to the command; the native in-process server (which has no
    /// process of its own) stops as at a clean stop.
    pub async fn kill(self) {
        match self.running {
            Running::Native(h) => h.shutdown().await.unwrap(),
            Running::Bin(mut child) => {
                child.start_kill().unwrap();
                let _ = child.wait().await;
            }
        }
    }

    /// The in-process app of the native build (durability.rs only: the wasm run leaves that file out).
    pub fn app(&self) -> &docauto_emulator::app::Shared {
        match &self.running {
            Running::Native(h) => &h.app,
            Running::Bin(_) => panic!("an in-process app exists only for the native build"),
        }
    }

    /// The state as the snapshot holds it, read through the control API (`--control`) without observing any run.
    pub async fn state(&self) -> Value {
        let r = call(self, "GET", "/__emulator/state", None, None, &[]).await;
        assert_eq!(r.status, 200, "GET /__emulator/state needs --control");
        r.body
    }

    /// The emulator clock in unix milliseconds (control API).
    pub async fn now_ms(&self) -> i64 {
        let r = call(self, "GET", "/__emulator/clock", None, None, &[]).await;
        docauto_emulator::util::parse_iso(r.body["now"].as_str().unwrap()).unwrap()
    }
}

fn args_with_addr(args: &[&str]) -> Vec<String> {
    let mut all = vec!["--addr".to_string(), "127.0.0.1:0".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

/// Starts the command under test; `Ok(child, first line)` once it printed its start line, `Err(stderr)` when it
/// exited instead.
async fn spawn_bin(bin: &str, args: &[String]) -> Result<(tokio::process::Child, String), String> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut child = tokio::process::Command::new("node")
        .arg(bin)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start node {bin}: {e}"));
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("no start line within 20 s")
        .unwrap_or_default();
    match first {
        Some(line) => {
            // the second start line and anything later: read, so the command never blocks on a full pipe
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            let mut stderr = child.stderr.take().unwrap();
            tokio::spawn(async move {
                let mut sink = Vec::new();
                let _ = stderr.read_to_end(&mut sink).await;
                if !sink.is_empty() {
                    eprintln!("{}", String::from_utf8_lossy(&sink));
                }
            });
            Ok((child, line))
        }
        None => {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err).await;
            let _ = child.wait().await;
            Err(err)
        }
    }
}

pub async fn start(args: &[&str]) -> Emu {
    let all = args_with_addr(args);
    match bin() {
        None => {
            let h = serve(Config::from_args(all).unwrap()).await.unwrap();
            Emu {
                addr: h.addr,
                running: Running::Native(h),
            }
        }
        Some(bin) => {
            let (child, line) = spawn_bin(&bin, &all)
                .await
                .unwrap_or_else(|e| panic!("the command did not start: {e}"));
            let url = line
                .strip_prefix("docauto emulator listening on http://")
                .unwrap_or_else(|| panic!("not the start line: {line}"));
            Emu {
                addr: url.parse().unwrap(),
                running: Running::Bin(child),
            }
        }
    }
}

/// The error of a start that must fail: the native `serve` error, or what the command printed (`docauto-emulator:
/// <the same message>`) before it exited with 1.
pub async fn start_err(args: &[&str]) -> String {
    let all = args_with_addr(args);
    match bin() {
        None => match Config::from_args(all) {
            Err(e) => e,
            Ok(cfg) => serve(cfg).await.err().expect("the start succeeded"),
        },
        Some(bin) => match spawn_bin(&bin, &all).await {
            Ok((_, line)) => panic!("the start succeeded: {line}"),
            Err(stderr) => stderr
                .trim()
                .strip_prefix("docauto-emulator: ")
                .unwrap_or_else(|| panic!("not the command's error line: {stderr}"))
                .to_string(),
        },
    }
}

/// Fast defaults: control on, time scale 0.01, http webhooks allowed, a high rate limit.
pub async fn start_fast() -> Emu {
    start(&[
        "--control",
        "--time-scale",
        "0.01",
        "--allow-http-webhooks",
        "--rate-limit",
        "100000",
    ])
    .await
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    pub raw: Bytes,
}

impl Resp {
    pub fn header(&self, k: &str) -> Option<String> {
        self.headers.get(k).map(|v| v.to_str().unwrap().to_string())
    }
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
}

pub async fn call(
    h: &Emu,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
    extra: &[(&str, &str)],
) -> Resp {
    let url = if path.starts_with("http") {
        path.to_string()
    } else {
        format!("{}{}", h.base_url(), path)
    };
    let mut headers: Vec<(&str, String)> = Vec::new();
    if let Some(k) = key {
        headers.push(("authorization", format!("Bearer {k}")));
    }
    headers.push(("content-type", "application/json".into()));
    for (k, v) in extra {
        headers.push((k, v.to_string()));
    }
    let b = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
    let f = HttpClient::default()
        .send(
            method.parse().unwrap(),
            &url,
            &headers,
            b,
            Duration::from_secs(60),
        )
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let body = serde_json::from_slice(&f.body).unwrap_or(Value::Null);
    Resp {
        status: f.status,
        headers: f.headers,
        body,
        raw: f.body,
    }
}

pub async fn get(h: &Emu, path: &str) -> Resp {
    call(h, "GET", path, Some(KEY), None, &[]).await
}

pub async fn post(h: &Emu, path: &str, body: Value) -> Resp {
    call(h, "POST", path, Some(KEY), Some(body), &[]).await
}

/// A captured webhook request.
#[derive(Clone, Debug)]
pub struct Hit {
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: std::time::Instant,
}

/// A loopback receiver answering with `statuses` in turn (then the last one forever).
pub struct Receiver {
    pub url: String,
    pub hits: Arc<Mutex<Vec<Hit>>>,
}

pub async fn receiver(statuses: Vec<u16>) -> Receiver {
    let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
    let h2 = hits.clone();
    let statuses = Arc::new(statuses);
    let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
        let hits = h2.clone();
        let statuses = statuses.clone();
        async move {
            let mut v = hits.lock().unwrap();
            let n = v.len();
            v.push(Hit {
                headers,
                body,
                at: std::time::Instant::now(),
            });
            let s = *statuses.get(n).or(statuses.last()).unwrap_or(&200);
            axum::http::StatusCode::from_u16(s).unwrap()
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    Receiver {
        url: format!("http://{addr}/hook"),
        hits,
    }
}

impl Receiver {
    pub fn events(&self) -> Vec<Value> {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .map(|h| serde_json::from_slice(&h.body).unwrap())
            .collect()
    }
    pub fn types(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect()
    }
}

/// A loopback document server: path -> (content-type, bytes); `/chunked/...` omits Content-Length.
pub async fn doc_server(docs: Vec<(&'static str, &'static str, Vec<u8>)>) -> String {
    use axum::response::IntoResponse;
    let docs = Arc::new(docs);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let docs = docs.clone();
        async move {
            let path = uri.path().to_string();
            if let Some(rest) = path.strip_prefix("/chunked") {
                if let Some((_, ct, b)) = docs.iter().find(|(p, _, _)| *p == rest) {
                    let b = Bytes::from(b.clone());
                    let stream =
                        futures_util::stream::once(async move { Ok::<_, std::io::Error>(b) });
                    return (
                        [("content-type", *ct)],
                        axum::body::Body::from_stream(stream),
                    )
                        .into_response();
                }
            }
            match docs.iter().find(|(p, _, _)| *p == path) {
                Some((_, ct, b)) => ([("content-type", *ct)], b.clone()).into_response(),
                None => axum::http::StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    format!("http://{addr}")
}

pub const INVOICE_TXT: &str = "ACME Corporation\nInvoice Number: INV-2041\nInvoice Date: 2026-03-14\nCustomer Name: Jane Smith\nEmail: jane.smith@example.com\nPhone: +1 415 555 0134\nTotal Amount: 1,250.50 EUR\nPaid: yes\n";

/// Serves the invoice text and returns a ready file id registered by URL (waits for `ready`).
pub async fn ready_file(h: &Emu) -> String {
    let base = doc_server(vec![(
        "/invoice.txt",
        "text/plain",
        INVOICE_TXT.as_bytes().to_vec(),
    )])
    .await;
    let r = post(
        h,
        "/v1/files",
        serde_json::json!({"url": format!("{base}/invoice.txt")}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let id = r.body["id"].as_str().unwrap().to_string();
    for _ in 0..500 {
        if get(h, &format!("/v1/files/{id}")).await.body["status"] == "ready" {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("file never ready");
}

/// Verifies an `x-svc-signature` token over `body` with the served JWKS; returns the claims.
pub async fn verify_signature(h: &Emu, token: &str, body: &[u8]) -> Value {
    use base64::Engine;
    use p256::ecdsa::{signature::Verifier, Signature, VerifyingKey};
    use sha2::Digest;
    let dec = |p: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(p)
            .unwrap()
    };
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&dec(parts[0])).unwrap();
    assert_eq!(
        header.as_object().unwrap().len(),
        2,
        "header is exactly alg + kid"
    );
    assert_eq!(header["alg"], "ES256");
    let jwks = call(h, "GET", "/v1/webhooks/jwks.json", None, None, &[])
        .await
        .body;
    let jwk = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == header["kid"])
        .expect("kid in JWKS");
    let mut sec1 = vec![4u8];
    sec1.extend(dec(jwk["x"].as_str().unwrap()));
    sec1.extend(dec(jwk["y"].as_str().unwrap()));
    let vk = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
    let sig_bytes = dec(parts[2]);
    assert_eq!(sig_bytes.len(), 64, "raw r||s");
    let sig = Signature::from_slice(&sig_bytes).unwrap();
    vk.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
        .expect("signature verifies");
    let claims: Value = serde_json::from_slice(&dec(parts[1])).unwrap();
    let sha = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body));
    assert_eq!(claims["bodySha256"], sha);
    assert_eq!(claims["iss"], "svc-process");
    assert_eq!(
        claims["exp"].as_i64().unwrap(),
        claims["iat"].as_i64().unwrap() + 300
    );
    let env: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(claims["eventId"], env["eventId"]);
    assert_eq!(claims["type"], env["type"]);
    assert_eq!(claims["processingId"], env["processingId"]);
    claims
}

/// Creates an agent run with a ready file; returns the response.
pub async fn start_run(h: &Emu, agent: &str, extra: Value, query: &str) -> Resp {
    let f = ready_file(h).await;
    let mut body = serde_json::json!({"agent": agent, "files": [{"id": f}]});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    post(h, &format!("/v1/agent-runs{query}"), body).await
}
