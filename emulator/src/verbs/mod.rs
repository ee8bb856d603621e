//! The capability verbs: extract, extract/batch, parse, redact, fill, sign, pipeline; and the sign envelope page.
//!
//! Every verb resolves its files, computes its result at once (on a blocking thread), and reveals it at
//! `processed` after the processing delay (1.5 s x time scale). Produced files settle 1 s x time scale later
//! (until then: 409 `output_not_ready`).

use crate::app::{App, Shared};
use crate::auth::Caller;
use crate::body;
use crate::documents::{text_of, DocError, DocText};
use crate::error::{ApiError, ApiResult};
use crate::files::{file_status, make_file, resolve_ref};
use crate::runs::{self, Outbox};
use crate::state::{CapRun, WebhookRef};
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Map, Value};

/// Processing time of a verb (ms, scaled).
pub const PROCESS_MS: f64 = 1500.0;
/// Time a produced file takes to register after `processed` (ms, scaled).
pub const SETTLE_MS: f64 = 1000.0;
/// Default and maximum ttl (seconds).
pub const TTL_DEFAULT: i64 = 86_400;
/// Maximum ttl.
pub const TTL_MAX: i64 = 604_800;

/// Shared optional fields of every verb.
struct Common {
    metadata: Option<Value>,
    webhook: Option<WebhookRef>,
    ttl: i64,
    wait: u64,
    idem: Option<String>,
    /// The reserved idempotency key (released when dropped; see [`crate::idempotency`]).
    reservation: Option<crate::idempotency::Reservation>,
    /// The run's input could not be read: it is created `processing` and ends `failed` with this error, firing
    /// `file.failed` for its inputs (extract batch, which cannot refuse one file of many).
    failure: Option<(String, String)>,
}

fn common(
    app: &App,
    c: &Caller,
    verb: &str,
    b: &Map<String, Value>,
    q: &[(String, String)],
    h: &HeaderMap,
) -> ApiResult<Common> {
    let wait = body::wait(q, 60)?;
    app.check_credits(&c.org)?;
    let metadata = body::metadata(b)?;
    let webhook = body::webhook(b, app.config.allow_http_webhooks)?;
    crate::webhooks::check_ref(&lock(&app.state), &c.org, &webhook)?;
    let ttl = match b.get("ttl") {
        None | Some(Value::Null) => TTL_DEFAULT,
        Some(v) => v
            .as_i64()
            .filter(|t| (1..=TTL_MAX).contains(t))
            .ok_or_else(|| ApiError::field("ttl", "must be whole seconds from 1 to 604800"))?,
    };
    let idem = body::idempotency_key(h).map(|k| format!("{}|{verb}|{k}", c.org));
    Ok(Common {
        metadata,
        webhook,
        ttl,
        wait,
        idem,
        reservation: None,
        failure: None,
    })
}

/// An input document resolved to text.
#[derive(Clone)]
struct Input {
    id: String,
    name: String,
    mime: String,
    bytes: Vec<u8>,
    ready_ms: i64,
}

async fn input(app: &App, c: &Caller, v: &Value, path: &str, run_id: &str) -> ApiResult<Input> {
    let id = resolve_ref(app, &c.org, v, path, Some(run_id)).await?;
    let st = lock(&app.state);
    let f = st
        .files
        .get(&id)
        .ok_or_else(|| ApiError::not_found("file"))?;
    if file_status(f, app.now_ms()) == "awaiting_upload" {
        return Err(ApiError::conflict(
            "file_not_ready",
            format!("{path}: the file's upload has not arrived yet"),
        ));
    }
    Ok(Input {
        id: f.id.clone(),
        name: f.name.clone(),
        mime: f.mime_type.clone(),
        bytes: f.bytes.clone(),
        ready_ms: f.ready_ms,
    })
}

fn doc_of(i: &Input, path: &str) -> ApiResult<DocText> {
    text_of(&i.bytes, &i.mime).map_err(|e| match e {
        DocError::Ineligible(m) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "file_ineligible",
            format!("{path}: {m}"),
        ),
        DocError::Unreadable(m) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "file_unreadable",
            format!("{path}: {m}"),
        ),
    })
}

fn single(b: &Map<String, Value>) -> ApiResult<&Value> {
    if b.contains_key("file") && b.contains_key("files") {
        return Err(ApiError::bad(
            "file and files are mutually exclusive; this verb takes file",
        ));
    }
    if b.contains_key("files") {
        return Err(ApiError::field(
            "files",
            "this verb takes a single file; send file",
        ));
    }
    b.get("file")
        .ok_or_else(|| ApiError::field("file", "is required"))
}

fn many(b: &Map<String, Value>) -> ApiResult<Vec<Value>> {
    if b.contains_key("file") && b.contains_key("files") {
        return Err(ApiError::bad(
            "file and files are mutually exclusive; this verb takes files",
        ));
    }
    match b.get("files") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= 100 => Ok(a.clone()),
        Some(Value::Array(_)) => Err(ApiError::field(
            "files",
            "must hold 1 to 100 file references",
        )),
        Some(_) => Err(ApiError::field("files", "must be an array")),
        None => Err(ApiError::field("files", "is required")),
    }
}

fn replay(app: &Shared, c: &Caller, id: &str) -> ApiResult<Response> {
    (|| {
        let run = lock(&app.state)
            .runs
            .get(id)
            .cloned()
            .filter(|r| r.org == c.org)
            .ok_or_else(|| ApiError::not_found("run"))?;
        let mut r = respond(app, &run);
        r.headers_mut()
            .insert("idempotent-replay", HeaderValue::from_static("true"));
        Ok(r)
    })()
}

fn respond(app: &Shared, run: &CapRun) -> Response {
    match run.status.as_str() {
        "processed" | "failed" | "cancelled" => {
            (StatusCode::OK, Json(runs::render(app, run))).into_response()
        }
        "needs_input" => (StatusCode::ACCEPTED, Json(runs::render(app, run))).into_response(),
        _ => (StatusCode::ACCEPTED, Json(runs::handle_json(run))).into_response(),
    }
}

/// What a verb computed.
struct Done {
    config: Value,
    output: Value,
    produced: Vec<(String, String, Vec<u8>)>,
    steps: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
async fn finish(
    app: &Shared,
    c: &Caller,
    id: String,
    object: &str,
    cm: Common,
    inputs: &[Input],
    done: Done,
    envelope: Option<Value>,
) -> ApiResult<Response> {
    app.check_dispatch_budget(inputs.iter().map(|i| i.bytes.len() as u64).sum())?;
    let now = app.now_ms();
    let start = inputs
        .iter()
        .map(|i| i.ready_ms)
        .max()
        .unwrap_or(now)
        .max(now);
    let done_ms = start + app.delay_ms(PROCESS_MS);
    let settle = done_ms + app.delay_ms(SETTLE_MS);
    let mut out = Outbox::new();
    let run = {
        let mut st = lock(&app.state);
        let mut produced = Vec::new();
        let mut output = done.output;
        for (name, mime, bytes) in done.produced {
            let fid = make_file(&mut st, &c.org, &name, &mime, bytes, now, None);
            if let Some(f) = st.files.get_mut(&fid) {
                f.status = "processing".into();
                f.ready_ms = settle;
            }
            replace_name_ref(&mut output, &name, &fid);
            produced.push((name, fid));
        }
        let seq = st.next_seq();
        let run = CapRun {
            id: id.clone(),
            org: c.org.clone(),
            object: object.into(),
            status: if envelope.is_some() {
                "needs_input".into()
            } else {
                "processing".into()
            },
            config: done.config,
            output: cm.failure.is_none().then_some(output),
            failed_files: if cm.failure.is_some() {
                inputs.iter().map(|i| i.id.clone()).collect()
            } else {
                Vec::new()
            },
            error: cm.failure.clone(),
            metadata: cm.metadata,
            webhook: cm.webhook,
            created_ms: now,
            done_ms,
            expires_ms: if envelope.is_some() {
                None
            } else {
                Some(now + cm.ttl * 1000)
            },
            ttl: cm.ttl,
            space_id: None,
            produced,
            steps: done.steps,
            envelope,
            purged_ms: None,
            deleted: false,
            deleted_ms: None,
            finished_events: false,
            inputs: inputs.iter().map(|i| i.id.clone()).collect(),
            seq,
        };
        runs::started(&run, &mut out);
        st.runs.insert(id.clone(), run);
        crate::idempotency::commit(&mut st, cm.idem, &id);
        st.runs.get(&id).cloned()
    };
    // committed with the run: concurrent holders of the key replay it from here on
    drop(cm.reservation);
    runs::dispatch(app, out);
    let Some(run) = run else {
        return Err(ApiError::internal("run vanished"));
    };
    if run.status == "needs_input" {
        return Ok(respond(app, &run));
    }
    // wake the run at done time so its events fire without a read
    let bg = app.clone();
    let rid = id.clone();
    let delay = (done_ms - app.now_ms()).max(0) as u64;
    app.host.spawn(async move {
        crate::host::sleep(std::time::Duration::from_millis(delay)).await;
        let now = bg.now_ms();
        let out = runs::materialize(&mut lock(&bg.state), &rid, now);
        let _ = bg.persist().await;
        runs::dispatch(&bg, out);
    });
    let run = runs::hold(app, c, &id, cm.wait).await?;
    Ok(respond(app, &run))
}

fn replace_name_ref(v: &mut Value, name: &str, fid: &str) {
    match v {
        Value::Object(o) => {
            if o.get("fileRefName").and_then(Value::as_str) == Some(name) {
                o.shift_remove("fileRefName");
                o.insert("fileRef".into(), fid.into());
                return;
            }
            for x in o.values_mut() {
                replace_name_ref(x, name, fid);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_name_ref(x, name, fid)),
        _ => {}
    }
}

fn file_ref_by_name(name: &str) -> Value {
    json!({"fileRefName": name})
}

fn stem(name: &str) -> &str {
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> ApiResult<T> {
    crate::host::blocking(f)
        .await
        .map_err(|_| ApiError::internal("document processing failed"))
}

macro_rules! verb_prelude {
    ($app:ident, $c:ident, $q:ident, $h:ident, $raw:ident, $verb:literal) => {{
        let q = body::query_pairs($q.as_deref());
        let b = body::object(&$raw)?;
        let cm = common(&$app, &$c, $verb, &b, &q, &$h)?;
        (b, cm)
    }};
}

/// [`verb_prelude!`] for a verb that honours `idempotency-key`: a replay answers at once with the original run.
macro_rules! idempotent_verb_prelude {
    ($app:ident, $c:ident, $q:ident, $h:ident, $raw:ident, $verb:literal) => {{
        let (b, mut cm) = verb_prelude!($app, $c, $q, $h, $raw, $verb);
        // reserved before the verb's first await (file fetch); a concurrent request with the key waits, then replays
        if let Some(k) = cm.idem.clone() {
            match crate::idempotency::claim(&$app, &k).await {
                crate::idempotency::Claim::Replay(id) => return replay(&$app, &$c, &id),
                crate::idempotency::Claim::Reserved(r) => cm.reservation = Some(r),
            }
        }
        (b, cm)
    }};
}

mod extract;
mod fill;
mod parse;
mod pipeline;
mod redact;
mod sign;

pub use extract::{extract, extract_batch, MAX_CITATIONS_BYTES};
pub use fill::fill;
pub use parse::parse;
pub use pipeline::pipeline;
pub use redact::redact;
pub use sign::{envelope_get, envelope_sign, sign};
