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

fn replay(app: &Shared, c: &Caller, key: &Option<String>) -> Option<ApiResult<Response>> {
    let k = key.as_ref()?;
    let id = lock(&app.state).idempotency.get(k).cloned()?;
    Some((|| {
        let run = lock(&app.state)
            .runs
            .get(&id)
            .cloned()
            .filter(|r| r.org == c.org)
            .ok_or_else(|| ApiError::not_found("run"))?;
        let mut r = respond(app, &run);
        r.headers_mut()
            .insert("idempotent-replay", HeaderValue::from_static("true"));
        Ok(r)
    })())
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
            output: Some(output),
            error: None,
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
            finished_events: false,
            seq,
        };
        runs::started(&run, &mut out);
        st.runs.insert(id.clone(), run);
        if let Some(k) = cm.idem {
            st.idempotency.insert(k, id.clone());
        }
        st.runs.get(&id).cloned()
    };
    app.mark_dirty();
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
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
        let now = bg.now_ms();
        let out = runs::materialize(&mut lock(&bg.state), &rid, now);
        bg.mark_dirty();
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
                o.remove("fileRefName");
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

/// Parses and checks extract options; returns `(schema, source, citations, config)`.
fn extract_config(
    st: &crate::state::State,
    org: &str,
    b: &Map<String, Value>,
    batch: bool,
) -> ApiResult<(Value, &'static str, bool, Value)> {
    let schema = b.get("schema").filter(|v| !v.is_null());
    let hints = body::opt_str(b, "hints")?;
    let action = body::opt_str(b, "action")?;
    if batch && (schema.is_some() || hints.is_some()) {
        return Err(ApiError::field(
            if schema.is_some() { "schema" } else { "hints" },
            "extract/batch takes a saved action only, not schema or hints",
        ));
    }
    if hints.is_some() && (schema.is_some() || action.is_some()) {
        return Err(ApiError::field(
            "hints",
            "cannot be combined with schema or action; use instructions",
        ));
    }
    if schema.is_some() && action.is_some() {
        return Err(ApiError::bad("schema and action are mutually exclusive"));
    }
    let citations_inline = match b.get("citations") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(x)) => Some(*x),
        Some(_) => return Err(ApiError::field("citations", "must be a boolean")),
    };
    let unit = body::opt_str(b, "unit")?.unwrap_or_else(|| "per_document".into());
    if !["per_document", "across_documents", "rows_per_document"].contains(&unit.as_str()) {
        return Err(ApiError::field(
            "unit",
            "must be per_document, across_documents or rows_per_document",
        ));
    }
    let instructions = body::opt_str(b, "instructions")?;
    let (schema, source, saved_citations) = if let Some(s) = schema {
        crate::extract::check_schema(s)?;
        (s.clone(), "inline", None)
    } else if let Some(h) = hints {
        (crate::extract::schema_from_hints(&h), "inferred", None)
    } else if let Some(a) = action {
        let act = crate::actions::resolve(st, org, &a, "extract")?;
        let s = act
            .config
            .get("schema")
            .cloned()
            .ok_or_else(|| ApiError::field("action", "the saved action has no schema"))?;
        (
            s,
            "saved",
            act.config.get("citations").and_then(Value::as_bool),
        )
    } else {
        return Err(ApiError::field("schema", "give schema, hints or action"));
    };
    let citations = citations_inline.or(saved_citations).unwrap_or(false);
    let config = json!({"schema": schema, "schemaSource": source, "citations": citations, "unit": unit, "instructions": instructions});
    Ok((schema, source, citations, config))
}

/// Citations larger than this (serialized, all documents together) are dropped: `citationsOmitted: true`.
pub const MAX_CITATIONS_BYTES: usize = 128 * 1024;

fn extract_output(schema: &Value, citations: bool, docs: &[(Input, DocText)]) -> Value {
    let filled: Vec<(&Input, Value, Map<String, Value>)> = docs
        .iter()
        .map(|(i, d)| {
            let (v, c) = crate::extract::fill(schema, d, &i.id);
            (i, v, c)
        })
        .collect();
    let size: usize = filled
        .iter()
        .map(|(_, _, c)| Value::Object(c.clone()).to_string().len())
        .sum();
    let omitted = citations && size > MAX_CITATIONS_BYTES;
    let cite = citations && !omitted;
    let documents: Vec<Value> = filled
        .iter()
        .map(|(i, v, c)| {
            let mut e = json!({"fileId": i.id, "name": i.name, "status": "processed", "value": v});
            if let (true, false, Some(o)) = (cite, c.is_empty(), e.as_object_mut()) {
                o.insert("citations".into(), Value::Object(c.clone()));
            }
            e
        })
        .collect();
    let (value, cites) = filled
        .first()
        .map(|(_, v, c)| (v.clone(), c.clone()))
        .unwrap_or((Value::Null, Map::new()));
    let mut out = json!({"value": value, "documents": documents});
    if let Some(o) = out.as_object_mut() {
        if cite && !cites.is_empty() {
            o.insert("citations".into(), Value::Object(cites));
        }
        if omitted {
            o.insert("citationsOmitted".into(), true.into());
        }
    }
    out
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
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

/// `POST /v1/extract`.
pub async fn extract(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "extract");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let f = single(&b)?;
    let (schema, _, citations, config) = extract_config(&lock(&app.state), &c.org, &b, false)?;
    let id = new_id("exr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let i2 = inp.clone();
    let output = blocking(move || extract_output(&schema, citations, &[(i2, d)])).await?;
    finish(
        &app,
        &c,
        id,
        "extract_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced: vec![],
            steps: vec![],
        },
        None,
    )
    .await
}

/// `POST /v1/extract/batch`: always 202; one extract run per file; ignores `idempotency-key`.
pub async fn extract_batch(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, mut cm) = verb_prelude!(app, c, q, h, raw, "extract_batch");
    cm.idem = None;
    if b.get("action").is_none() && b.get("schema").is_none() && b.get("hints").is_none() {
        return Err(ApiError::field("action", "is required"));
    }
    let (schema, _, citations, config) = extract_config(&lock(&app.state), &c.org, &b, true)?;
    let files = many(&b)?;
    let mut handles = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let id = new_id("exr_");
        let inp = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
        let d = doc_of(&inp, &format!("files[{n}]"))?;
        let (s, i2) = (schema.clone(), inp.clone());
        let output = blocking(move || extract_output(&s, citations, &[(i2, d)])).await?;
        let sub = Common {
            metadata: cm.metadata.clone(),
            webhook: cm.webhook.clone(),
            ttl: cm.ttl,
            wait: 0,
            idem: None,
        };
        finish(
            &app,
            &c,
            id.clone(),
            "extract_run",
            sub,
            &[inp],
            Done {
                config: config.clone(),
                output,
                produced: vec![],
                steps: vec![],
            },
            None,
        )
        .await?;
        handles.push(json!({"object": "extract_run", "id": id, "status": "processing", "statusUrl": runs::status_url(&id)}));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"object": "extract_batch", "id": new_id("exb_"), "runs": handles})),
    )
        .into_response())
}

fn parse_output(d: &DocText) -> Value {
    let markdown = if d.markdown {
        d.pages.join("\n\n")
    } else {
        d.pages
            .iter()
            .enumerate()
            .map(|(i, p)| format!("<!-- page {} -->\n{}", i + 1, p.trim()))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let pages: Vec<Value> = d
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"page": i, "text": p, "lines": p.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>()}))
        .collect();
    json!({"markdown": markdown, "json": {"pageCount": d.pages.len(), "pages": pages}})
}

/// `POST /v1/parse`.
pub async fn parse(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "parse");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let f = single(&b)?;
    let id = new_id("par_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let output = parse_output(&d);
    finish(
        &app,
        &c,
        id,
        "parse_run",
        cm,
        &[inp],
        Done {
            config: json!({}),
            output,
            produced: vec![],
            steps: vec![],
        },
        None,
    )
    .await
}

fn redact_opts(
    st: &crate::state::State,
    org: &str,
    b: &Map<String, Value>,
) -> ApiResult<(Vec<String>, String)> {
    let saved = match body::opt_str(b, "action")? {
        Some(a) => Some(crate::actions::resolve(st, org, &a, "redact")?.config),
        None => None,
    };
    let cats_v = b
        .get("categories")
        .cloned()
        .or_else(|| saved.as_ref().and_then(|s| s.get("categories").cloned()));
    let cats_v = cats_v.ok_or_else(|| ApiError::field("categories", "is required"))?;
    let arr = cats_v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::field("categories", "must be a non-empty array of strings"))?;
    let mut cats = Vec::new();
    for (i, v) in arr.iter().enumerate() {
        match v.as_str() {
            Some(s) if crate::redact::CATEGORIES.contains(&s) => cats.push(s.to_string()),
            _ => {
                return Err(ApiError::field(
                    &format!("categories[{i}]"),
                    "must be email, phone or name",
                ))
            }
        }
    }
    let mode = body::opt_str(b, "mode")?
        .or_else(|| {
            saved
                .as_ref()
                .and_then(|s| s.get("mode"))
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_else(|| "mask".into());
    if mode != "mask" && mode != "remove" {
        return Err(ApiError::field("mode", "must be mask or remove"));
    }
    Ok((cats, mode))
}

fn redact_done(
    inp: &Input,
    d: &DocText,
    cats: &[String],
    mode: &str,
) -> (Value, (String, String, Vec<u8>)) {
    let text = d.pages.join("\u{c}");
    let (red, counts) = crate::redact::redact(&text, cats, mode);
    let (ext, mime) = if d.markdown {
        ("md", "text/markdown")
    } else {
        ("txt", "text/plain")
    };
    let name = format!("{}.redacted.{ext}", stem(&inp.name));
    (
        json!({"file": file_ref_by_name(&name), "redactions": counts}),
        (name, mime.into(), red.into_bytes()),
    )
}

/// `POST /v1/redact`: returns a new file (text or markdown) with the categories removed.
pub async fn redact(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "redact");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let f = single(&b)?;
    let (cats, mode) = redact_opts(&lock(&app.state), &c.org, &b)?;
    let id = new_id("rdr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let (output, file) = redact_done(&inp, &d, &cats, &mode);
    let config = json!({"categories": cats, "mode": mode});
    finish(
        &app,
        &c,
        id,
        "redact_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced: vec![file],
            steps: vec![],
        },
        None,
    )
    .await
}

/// `POST /v1/fill`: `template {id}` plus exactly one of `values` or `files[]`; output is a text rendition.
pub async fn fill(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "fill");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let tpl = b
        .get("template")
        .filter(|t| t.get("id").is_some_and(Value::is_string))
        .ok_or_else(|| ApiError::field("template", "must be {id} of a registered file"))?;
    let saved = match body::opt_str(&b, "action")? {
        Some(a) => Some(crate::actions::resolve(&lock(&app.state), &c.org, &a, "fill")?.config),
        None => None,
    };
    let values = b
        .get("values")
        .cloned()
        .or_else(|| saved.as_ref().and_then(|s| s.get("values").cloned()));
    let files = b.get("files");
    if values.is_some() == files.is_some() {
        return Err(ApiError::field(
            "values",
            "send exactly one of values or files",
        ));
    }
    let out_kind = body::opt_str(&b, "output")?;
    let review = body::opt_str(&b, "review")?;
    let id = new_id("flr_");
    let t = input(&app, &c, tpl, "template", &id).await?;
    let td = doc_of(&t, "template")?;
    let labels: Vec<crate::extract::Labelled> = crate::extract::labelled_lines(&td);
    let mut filled: Map<String, Value> = Map::new();
    let mut inputs = vec![t.clone()];
    match (values, files) {
        (Some(v), None) => {
            let v = v
                .as_object()
                .cloned()
                .ok_or_else(|| ApiError::field("values", "must be an object"))?;
            for l in &labels {
                if let Some((_, val)) = v
                    .iter()
                    .find(|(k, _)| crate::extract::words_of(k) == l.label)
                {
                    filled.insert(l.label.join(" "), val.clone());
                }
            }
        }
        (None, Some(fs)) => {
            let arr = fs
                .as_array()
                .filter(|a| !a.is_empty() && a.len() <= 100)
                .ok_or_else(|| ApiError::field("files", "must hold 1 to 100 file references"))?;
            let mut docs = Vec::new();
            for (n, f) in arr.iter().enumerate() {
                let i = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
                docs.push(doc_of(&i, &format!("files[{n}]"))?);
                inputs.push(i);
            }
            for l in &labels {
                let name = l.label.join(" ");
                for d in &docs {
                    let lines = crate::extract::labelled_lines(d);
                    if let Some((m, _)) = crate::extract::find(&lines, &name, None) {
                        filled.insert(name.clone(), Value::String(m.value.clone()));
                        break;
                    }
                }
            }
        }
        _ => {}
    }
    let mut text = String::new();
    for page in &td.pages {
        for line in page.lines() {
            let key = line
                .split_once(':')
                .map(|(l, _)| crate::extract::words_of(l).join(" "));
            match key.and_then(|k| filled.get(&k).map(|v| (k, v))) {
                Some((_, v)) => {
                    let label = line.split_once(':').map(|(l, _)| l).unwrap_or(line);
                    let shown = v
                        .as_str()
                        .map(String::from)
                        .unwrap_or_else(|| v.to_string());
                    text.push_str(&format!("{label}: {shown}\n"));
                }
                None => {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    let unfilled: Vec<String> = labels
        .iter()
        .map(|l| l.label.join(" "))
        .filter(|k| !filled.contains_key(k))
        .collect();
    let name = format!("{}.filled.txt", stem(&t.name));
    let output = json!({"file": file_ref_by_name(&name), "values": filled, "unfilled": unfilled});
    let config = json!({"template": {"id": t.id}, "output": out_kind, "review": review});
    finish(
        &app,
        &c,
        id,
        "fill_run",
        cm,
        &inputs,
        Done {
            config,
            output,
            produced: vec![(name, "text/plain".into(), text.into_bytes())],
            steps: vec![],
        },
        None,
    )
    .await
}

/// `POST /v1/sign`: always 202 `needs_input` with an `envelopeUrl`; exempt from the purge while the envelope is open.
pub async fn sign(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "sign");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let f = single(&b)?;
    if let Some(a) = body::opt_str(&b, "action")? {
        crate::actions::resolve(&lock(&app.state), &c.org, &a, "sign")?;
    }
    let arr = b
        .get("signers")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::field("signers", "must be a non-empty array of {name, email}"))?;
    let mut signers = Vec::new();
    for (i, s) in arr.iter().enumerate() {
        let name = s
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| ApiError::field(&format!("signers[{i}].name"), "is required"))?;
        let email = s
            .get("email")
            .and_then(Value::as_str)
            .filter(|e| e.contains('@'))
            .ok_or_else(|| {
                ApiError::field(&format!("signers[{i}].email"), "must be an email address")
            })?;
        signers.push(json!({"name": name, "email": email, "status": "pending", "signedAt": null}));
    }
    let id = new_id("sgr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let name = format!(
        "{}.signed.{}",
        stem(&inp.name),
        inp.name.rsplit_once('.').map(|(_, e)| e).unwrap_or("bin")
    );
    let output = json!({"file": file_ref_by_name(&name)});
    let config = json!({"signers": signers.iter().map(|s| json!({"name": s["name"], "email": s["email"]})).collect::<Vec<_>>()});
    let produced = vec![(name, inp.mime.clone(), inp.bytes.clone())];
    let envelope = json!({"signers": signers});
    finish(
        &app,
        &c,
        id,
        "sign_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced,
            steps: vec![],
        },
        Some(envelope),
    )
    .await
}

/// `GET /envelopes/:id` (the signing page, JSON; no bearer).
pub async fn envelope_get(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let st = lock(&app.state);
    let r = st
        .runs
        .get(&id)
        .filter(|r| r.object == "sign_run" && !r.deleted)
        .ok_or_else(|| ApiError::not_found("envelope"))?;
    Ok(Json(
        json!({"object": "envelope", "runId": r.id, "status": r.status, "signers": r.envelope.as_ref().and_then(|e| e.get("signers")).cloned()}),
    ))
}

/// `POST /envelopes/:id/sign` `{email}`: a signer signs; when all have signed, the run becomes `processed`.
pub async fn envelope_sign(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&raw)?;
    let email =
        body::opt_str(&b, "email")?.ok_or_else(|| ApiError::field("email", "is required"))?;
    let now = app.now_ms();
    let mut out = Outbox::new();
    let v = {
        let mut st = lock(&app.state);
        let r = st
            .runs
            .get_mut(&id)
            .filter(|r| r.object == "sign_run" && !r.deleted)
            .ok_or_else(|| ApiError::not_found("envelope"))?;
        if r.status != "needs_input" {
            return Err(ApiError::conflict(
                "envelope_closed",
                format!("the envelope is closed (run {})", r.status),
            ));
        }
        let signers = r
            .envelope
            .as_mut()
            .and_then(|e| e.get_mut("signers"))
            .and_then(Value::as_array_mut)
            .ok_or_else(|| ApiError::internal("envelope without signers"))?;
        let s = signers
            .iter_mut()
            .find(|s| s["email"] == email.as_str())
            .ok_or_else(|| ApiError::field("email", "is not a signer of this envelope"))?;
        if s["status"] == "signed" {
            return Err(ApiError::conflict(
                "already_signed",
                "this signer has already signed",
            ));
        }
        s["status"] = "signed".into();
        s["signedAt"] = iso(now).into();
        let all = signers.iter().all(|s| s["status"] == "signed");
        if all {
            r.status = "processing".into();
            r.done_ms = now;
            r.expires_ms = Some(now + r.ttl * 1000);
            let settle = now + app.config.scaled_ms(SETTLE_MS) as i64;
            let produced: Vec<String> = r.produced.iter().map(|(_, f)| f.clone()).collect();
            for f in produced {
                if let Some(file) = st.files.get_mut(&f) {
                    file.ready_ms = settle;
                }
            }
            out = runs::materialize(&mut st, &id, now);
        }
        let r = st
            .runs
            .get(&id)
            .ok_or_else(|| ApiError::not_found("envelope"))?;
        json!({"object": "envelope", "runId": r.id, "status": r.status, "signers": r.envelope.as_ref().and_then(|e| e.get("signers")).cloned()})
    };
    app.mark_dirty();
    runs::dispatch(&app, out);
    Ok(Json(v))
}

/// `POST /v1/pipeline`: `files[]` and `steps[]` (each `{extract: {...}}`, `{parse: {}}` or `{redact: {...}}`),
/// run in parallel over the same files, never chained.
pub async fn pipeline(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = verb_prelude!(app, c, q, h, raw, "pipeline");
    if let Some(r) = replay(&app, &c, &cm.idem) {
        return r;
    }
    let files = many(&b)?;
    let steps = b
        .get("steps")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::field("steps", "must be a non-empty array"))?
        .clone();
    enum Step {
        Extract(Value, bool),
        Parse,
        Redact(Vec<String>, String),
    }
    let mut plan = Vec::new();
    let mut names = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let o = s.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
            ApiError::field(
                &format!("steps[{i}]"),
                "must be an object with exactly one capability key",
            )
        })?;
        let (cap, cfg) = o
            .iter()
            .next()
            .ok_or_else(|| ApiError::field(&format!("steps[{i}]"), "is empty"))?;
        let cfg = cfg.as_object().cloned().unwrap_or_default();
        let prefix = |e: ApiError| ApiError {
            message: format!("steps[{i}].{cap}.{}", e.message),
            ..e
        };
        match cap.as_str() {
            "extract" => {
                let (schema, _, cit, _) =
                    extract_config(&lock(&app.state), &c.org, &cfg, false).map_err(prefix)?;
                plan.push(Step::Extract(schema, cit));
            }
            "parse" => plan.push(Step::Parse),
            "redact" => {
                let (cats, mode) = redact_opts(&lock(&app.state), &c.org, &cfg).map_err(prefix)?;
                plan.push(Step::Redact(cats, mode));
            }
            other => {
                return Err(ApiError::field(
                    &format!("steps[{i}]"),
                    &format!("`{other}` cannot run in a pipeline (extract, parse, redact)"),
                ))
            }
        }
        names.push(cap.clone());
    }
    let id = new_id("plr_");
    let mut inputs = Vec::new();
    let mut docs = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let i = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
        docs.push(doc_of(&i, &format!("files[{n}]"))?);
        inputs.push(i);
    }
    let pairs: Vec<(Input, DocText)> = inputs.iter().cloned().zip(docs).collect();
    let jobs = plan.into_iter().zip(names.iter().cloned()).map(|(step, cap)| {
        let pairs = pairs.clone();
        tokio::task::spawn_blocking(move || {
            let mut produced = Vec::new();
            let documents: Vec<Value> = match &step {
                Step::Extract(schema, cit) => pairs
                    .iter()
                    .map(|p| json!({"fileId": p.0.id, "name": p.0.name, "output": extract_output(schema, *cit, std::slice::from_ref(p))}))
                    .collect(),
                Step::Parse => pairs.iter().map(|(i, d)| json!({"fileId": i.id, "name": i.name, "output": parse_output(d)})).collect(),
                Step::Redact(cats, mode) => pairs
                    .iter()
                    .map(|(i, d)| {
                        let (o, f) = redact_done(i, d, cats, mode);
                        produced.push(f);
                        json!({"fileId": i.id, "name": i.name, "output": o})
                    })
                    .collect(),
            };
            (json!({"capability": cap, "status": "processed", "documents": documents}), produced)
        })
    });
    let results = futures_util::future::join_all(jobs).await;
    let mut step_out = Vec::new();
    let mut produced = Vec::new();
    for r in results {
        let (v, p) = r.map_err(|_| ApiError::internal("a pipeline step failed"))?;
        step_out.push(v);
        produced.extend(p);
    }
    let config = json!({"steps": steps});
    finish(
        &app,
        &c,
        id,
        "pipeline_run",
        cm,
        &inputs,
        Done {
            config,
            output: json!({"steps": step_out}),
            produced,
            steps: names,
        },
        None,
    )
    .await
}
