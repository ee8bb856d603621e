//! The wasm build's front door, driven by the JS glue of `docauto/emulator`: the exported [`Emulator`] answers one
//! request at a time through the router (axum's `Router` is a tower service, called here without a socket), takes the
//! realtime sockets the JS server upgraded, hands its state out in the `--state` snapshot format, and closes.
//! Each method decodes, calls the emulator, encodes; it decides nothing.

use super::{socket as sockets, Host};
use crate::app::{App, Shared};
use crate::config::Config;
use crate::host::Frame;
use crate::util::lock;
use axum::body::Body;
use axum::http::Request;
use axum::Router;
use http_body_util::BodyExt;
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use serde_json::Value;
use std::sync::Arc;
use tower_service::Service;
use wasm_bindgen::prelude::*;

/// A JS `Error` with a stable `code`.
fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(code));
    e.into()
}

/// The agent definitions of the `agents` option (objects, or their JSON text), named `agents[i]` in errors.
fn agent_texts(v: Option<&Value>) -> Result<Vec<(String, String)>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => Ok(list
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let text = match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (format!("agents[{i}]"), text)
            })
            .collect()),
        Some(_) => Err("agents: must be an array of agent definitions".into()),
    }
}

/// The command line of `docauto-emulator` read as the native binary reads it: the JSON
/// `{options, addr, state, agents, caFile}` (`options` for [`Emulator::new`]; the rest the JS side acts on).
///
/// # Errors
/// An `Error` with code `invalid_flags` and the binary's message naming the flag.
#[wasm_bindgen(js_name = parseArgs)]
pub fn parse_args(args: Vec<String>) -> Result<String, JsValue> {
    let c = Config::from_args(args).map_err(|e| error("invalid_flags", &e))?;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    Ok(serde_json::json!({
        "options": c.to_options(),
        "addr": c.addr.to_string(),
        "state": path(&c.state),
        "agents": path(&c.agents_dir),
        "caFile": path(&c.ca_file),
    })
    .to_string())
}

/// The `--help` text of the binary.
#[wasm_bindgen]
pub fn usage() -> String {
    crate::config::USAGE.to_string()
}

/// A running emulator of the wasm build.
#[wasm_bindgen]
pub struct Emulator {
    app: Shared,
    router: Router,
}

#[wasm_bindgen]
impl Emulator {
    /// Starts an emulator: `options` is the JSON of `createEmulator`'s options (see `Config::from_options`, plus
    /// `agents` and `snapshot`), `base_url` the origin of the addresses it hands out, `fetch` the host's outgoing
    /// `fetch(method, url, headers, body, timeoutMs, maxBytes, purpose)` (`purpose`: "fetch" for a document,
    /// "deliver" for a webhook delivery). The command line adds `options.cli`:
    /// `{statePath, journal, agentNames}` (the `--state` file, its journal's text, replayed over the snapshot, and the
    /// `--agents` file names), so its errors read as the native binary's.
    ///
    /// # Errors
    /// An `Error` with code `invalid_options` (an option, an agent definition) or `invalid_snapshot`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str, base_url: String, fetch: Function) -> Result<Emulator, JsValue> {
        let invalid = |e: String| error("invalid_options", &e);
        let mut o: Value = serde_json::from_str(options).map_err(|e| invalid(e.to_string()))?;
        let cli = o
            .as_object_mut()
            .and_then(|m| m.remove("cli"))
            .unwrap_or(Value::Null);
        let config = Config::from_options(&o).map_err(invalid)?;
        let mut agents = agent_texts(o.get("agents")).map_err(invalid)?;
        if let Some(names) = cli.get("agentNames").and_then(Value::as_array) {
            for ((name, _), file) in agents.iter_mut().zip(names) {
                if let Some(file) = file.as_str() {
                    *name = file.to_owned();
                }
            }
        }
        let agents = crate::agent_definitions::load(agents).map_err(invalid)?;
        let snapshot = match o.get("snapshot") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_bytes()),
            Some(_) => {
                return Err(invalid(
                    "snapshot: must be a string (what snapshot() returned)".into(),
                ))
            }
        };
        let journal = cli.get("journal").and_then(Value::as_str);
        let state = match cli.get("statePath").and_then(Value::as_str) {
            Some(path) => crate::store::decode(
                snapshot,
                journal.map(str::as_bytes),
                path,
                &format!("{path}.journal"),
            )
            .map_err(|e| format!("--state: {e}")),
            None => {
                crate::store::decode(snapshot, journal.map(str::as_bytes), "snapshot", "journal")
            }
        }
        .map_err(|e| error("invalid_snapshot", &e))?;
        let app = Arc::new(App::new(config, base_url, agents, state, Host::new(fetch)));
        crate::start(&app).map_err(|e| error("internal_error", &e))?;
        let router = crate::router(app.clone());
        Ok(Emulator { app, router })
    }

    /// The first accepted API key.
    #[wasm_bindgen(getter, js_name = apiKey)]
    pub fn api_key(&self) -> String {
        self.app
            .config
            .keys
            .first()
            .map(|k| k.key.clone())
            .unwrap_or_default()
    }

    /// The two lines the binary prints once it listens.
    #[wasm_bindgen(js_name = startLines)]
    pub fn start_lines(&self) -> String {
        self.app.config.start_lines(&self.app.base_url)
    }

    /// Answers one request (`headers` as name, value, name, value...): resolves to `[status, headers, body]`.
    /// Rejects with a `TypeError` when the answer is cut (the `drop_connection` fault, as a network error would be),
    /// with code `emulator_closed` after [`Emulator::close`].
    pub fn handle(&self, method: &str, url: &str, headers: Vec<String>, body: Vec<u8>) -> Promise {
        let request = build_request(method, url, &headers, body);
        let mut router = self.router.clone();
        let work = self.app.host.guard(async move {
            let request = request?;
            let Ok(()) = futures_util::future::poll_fn(|cx| {
                <Router as Service<Request<Body>>>::poll_ready(&mut router, cx)
            })
            .await;
            let Ok(response) = router.call(request).await;
            let (parts, body) = response.into_parts();
            let bytes = body.collect().await.map(|c| c.to_bytes()).map_err(|_| {
                "network error: the emulator dropped the connection (fault drop_connection)"
                    .to_string()
            })?;
            Ok::<_, String>((parts, bytes))
        });
        wasm_bindgen_futures::future_to_promise(async move {
            let (parts, bytes) = match work.await {
                None => return Err(error("emulator_closed", "the emulator was closed")),
                Some(Err(e)) => return Err(js_sys::TypeError::new(&e).into()),
                Some(Ok(x)) => x,
            };
            let flat = Array::new();
            for (k, v) in &parts.headers {
                flat.push(&JsValue::from_str(k.as_str()));
                flat.push(&JsValue::from_str(&String::from_utf8_lossy(v.as_bytes())));
            }
            Ok(Array::of3(
                &JsValue::from(parts.status.as_u16()),
                &flat,
                &Uint8Array::from(bytes.as_ref()),
            )
            .into())
        })
    }

    /// The state in the native `--state` snapshot format (JSON text).
    ///
    /// # Errors
    /// Never in practice (serialization of the state's own types).
    pub fn snapshot(&self) -> Result<String, JsValue> {
        let bytes = crate::store::snapshot_bytes(&lock(&self.app.state))
            .map_err(|e| error("internal_error", &e))?;
        String::from_utf8(bytes).map_err(|e| error("internal_error", &e.to_string()))
    }

    /// Takes a realtime socket the JS server upgraded, or an `emulator.WebSocket` (`query`: the URL's query, with the
    /// ticket); frames go out through `send(text)` and `close(code, reason)`. Returns the socket's key for the calls
    /// below.
    ///
    /// # Errors
    /// An `Error` with code `emulator_closed` after [`Emulator::close`].
    pub fn socket(
        &self,
        query: Option<String>,
        send: Function,
        close: Function,
    ) -> Result<u32, JsValue> {
        if self.app.host.is_closed() {
            return Err(error("emulator_closed", "the emulator was closed"));
        }
        let (key, socket) = sockets::open(send, close)
            .ok_or_else(|| error("internal_error", "socket table busy"))?;
        let ticket = crate::realtime::ticket_of(query.as_deref());
        self.app.host.spawn(crate::realtime::run_socket(
            self.app.clone(),
            ticket,
            socket,
        ));
        Ok(key)
    }

    /// A text frame from the peer.
    #[wasm_bindgen(js_name = socketText)]
    pub fn socket_text(&self, key: u32, text: String) {
        sockets::frame(key, Frame::Text(text));
    }

    /// A binary frame from the peer.
    #[wasm_bindgen(js_name = socketBinary)]
    pub fn socket_binary(&self, key: u32, data: Vec<u8>) {
        sockets::frame(key, Frame::Binary(data.into()));
    }

    /// A ping or pong from the peer (it counts against the idle limit like any frame).
    #[wasm_bindgen(js_name = socketControl)]
    pub fn socket_control(&self, key: u32) {
        sockets::frame(key, Frame::Control);
    }

    /// The peer closed the socket.
    #[wasm_bindgen(js_name = socketClosed)]
    pub fn socket_closed(&self, key: u32) {
        sockets::closed(key);
    }

    /// Stops every timer, delivery and socket, and refuses requests from now on (they reject with code
    /// `emulator_closed`); requests in flight reject the same way.
    pub fn close(&self) {
        self.app.host.close();
    }
}

fn build_request(
    method: &str,
    url: &str,
    headers: &[String],
    body: Vec<u8>,
) -> Result<Request<Body>, String> {
    let mut b = Request::builder().method(method).uri(url);
    for pair in headers.chunks_exact(2) {
        if let [k, v] = pair {
            b = b.header(k.as_str(), v.as_str());
        }
    }
    b.body(Body::from(body))
        .map_err(|e| format!("invalid request: {e}"))
}
