//! Capability runs: lazy state (processing -> processed at `done_ms`, ttl purge), rendering, events, and the
//! `/v1/runs` routes (list, read with wait, cancel, delete, keep, output redirect).

use crate::app::{App, Shared};
use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ApiResult};
use crate::files::file_entry;
use crate::host::{self, Instant};
use crate::state::{CapRun, PendingEvent, Space, State, WebhookRef};
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::time::Duration;

/// After ttl purge, reads answer 410 `run_expired` for this long (emulator time), then 404.
pub const PURGE_GRACE_MS: i64 = 24 * 3600 * 1000;

/// Events to deliver after the lock is released.
pub type Outbox = Vec<(String, WebhookRef, PendingEvent)>;

fn event(run: &CapRun, kind: &str, at: i64, data: Value) -> PendingEvent {
    PendingEvent {
        event_id: new_id("evt_"),
        kind: kind.into(),
        processing_id: run.id.clone(),
        occurred_ms: at,
        data,
        attempts: 0,
    }
}

fn push(out: &mut Outbox, run: &CapRun, ev: PendingEvent) {
    if let Some(w) = &run.webhook {
        out.push((run.org.clone(), w.clone(), ev));
    }
}

/// Queues `processing.started` for a new run.
pub fn started(run: &CapRun, out: &mut Outbox) {
    push(
        out,
        run,
        event(
            run,
            "processing.started",
            run.created_ms,
            json!({"object": run.object, "id": run.id, "status": "processing"}),
        ),
    );
}

/// The run's processing time is over and its completion is not yet recorded.
fn finish_due(run: &CapRun, now: i64) -> bool {
    run.status == "processing" && now >= run.done_ms && !run.deleted
}

/// The run passed its ttl and is not yet purged (deleted runs and open sign envelopes are never purged).
fn purge_due(run: &CapRun, now: i64) -> bool {
    run.expires_ms.is_some_and(|e| now >= e)
        && run.purged_ms.is_none()
        && !run.deleted
        && run.status != "needs_input"
}

/// Brings a run up to date (finish, purge) and returns the events it fired.
pub fn materialize(st: &mut State, id: &str, now: i64) -> Outbox {
    let mut out = Outbox::new();
    // nothing due: the record is left untouched (not re-inserted, so not journaled again by every poll of a `wait`)
    if !st
        .runs
        .get(id)
        .is_some_and(|r| finish_due(r, now) || purge_due(r, now))
    {
        return out;
    }
    let Some(mut run) = st.runs.remove(id) else {
        return out;
    };
    if finish_due(&run, now) {
        run.status = if run.error.is_some() {
            "failed".into()
        } else {
            "processed".into()
        };
        for f in run.failed_files.clone() {
            let mut data = json!({"fileId": f, "runId": run.id});
            if let (Some((c, m)), Some(o)) = (&run.error, data.as_object_mut()) {
                o.insert("error".into(), json!({"code": c, "message": m}));
            }
            let ev = event(&run, "file.failed", run.done_ms, data);
            push(&mut out, &run, ev);
        }
        if run.error.is_none() {
            for f in run.inputs.clone() {
                let ev = event(
                    &run,
                    "file.processed",
                    run.done_ms,
                    json!({"fileId": f, "runId": run.id}),
                );
                push(&mut out, &run, ev);
            }
        }
        let steps = if run.steps.is_empty() {
            vec![run.object.trim_end_matches("_run").to_string()]
        } else {
            run.steps.clone()
        };
        for s in steps {
            let kind = if run.error.is_some() {
                "run.failed"
            } else {
                "run.completed"
            };
            let mut data =
                json!({"object": run.object, "id": run.id, "status": run.status, "capability": s});
            if let (Some((c, m)), Some(o)) = (&run.error, data.as_object_mut()) {
                o.insert("error".into(), json!({"code": c, "message": m}));
            }
            let ev = event(&run, kind, run.done_ms, data);
            push(&mut out, &run, ev);
        }
        let ev = event(
            &run,
            "processing.completed",
            run.done_ms,
            json!({"object": run.object, "id": run.id, "status": run.status}),
        );
        push(&mut out, &run, ev);
        run.finished_events = true;
    }
    if purge_due(&run, now) {
        purge_data(st, &mut run);
        run.status = "expired".into();
        run.purged_ms = Some(now);
        let ev = event(
            &run,
            "processing.expired",
            now,
            json!({"object": run.object, "id": run.id, "status": "expired"}),
        );
        push(&mut out, &run, ev);
    }
    st.runs.insert(id.to_string(), run);
    out
}

/// Sweep period of [`spawn_sweeper`] (wall clock).
pub const SWEEP_MS: u64 = 1000;

/// One sweep: every run due is brought up to date (so ttl purges and `processing.expired` happen without a read),
/// and the records of runs purged or deleted more than [`PURGE_GRACE_MS`] ago are dropped with the idempotency keys
/// that named them (a read of them was already a 404; a `DELETE` of such an id is now 404 too). Returns the events
/// to dispatch.
pub fn sweep(st: &mut State, now: i64) -> Outbox {
    let due: Vec<String> = st
        .runs
        .values()
        .filter(|r| finish_due(r, now) || purge_due(r, now))
        .map(|r| r.id.clone())
        .collect();
    let mut out = Outbox::new();
    for id in due {
        out.extend(materialize(st, &id, now));
    }
    let gone: Vec<String> = st
        .runs
        .values()
        .filter(|r| {
            let deleted = r.deleted.then_some(r.deleted_ms.unwrap_or(r.created_ms));
            r.purged_ms
                .or(deleted)
                .is_some_and(|t| now >= t + PURGE_GRACE_MS)
        })
        .map(|r| r.id.clone())
        .collect();
    if !gone.is_empty() {
        for id in &gone {
            st.runs.remove(id);
        }
        // the idempotency keys that named a dropped run go with it (else the key map grows with every keyed run
        // ever made); a later request with such a key creates a new run
        let gone: std::collections::HashSet<String> = gone.into_iter().collect();
        st.idempotency.retain(|_, run_id| !gone.contains(run_id));
    }
    out
}

/// Runs [`sweep`] every [`SWEEP_MS`] until the app is dropped.
pub fn spawn_sweeper(app: &Shared) {
    let weak = std::sync::Arc::downgrade(app);
    app.host.spawn(async move {
        loop {
            {
                let Some(app) = weak.upgrade() else { return };
                let now = app.now_ms();
                let out = sweep(&mut lock(&app.state), now);
                let _ = app.persist().await;
                dispatch(&app, out);
            }
            host::sleep(Duration::from_millis(SWEEP_MS)).await;
        }
    });
}

fn purge_data(st: &mut State, run: &mut CapRun) {
    run.output = None;
    for (_, fid) in run.produced.drain(..) {
        st.files.remove(&fid);
    }
    st.files
        .retain(|_, f| f.run_id.as_deref() != Some(run.id.as_str()));
}

/// Hands fired events to the background delivery ladder.
pub fn dispatch(app: &Shared, out: Outbox) {
    for (org, w, ev) in out {
        crate::webhooks::spawn_cap_delivery(app.clone(), org, w, ev);
    }
}

/// Replaces every `{"fileRef": id}` object with the file's served entry (fresh signed URL).
fn expand(app: &App, st: &State, v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(id)) = o.get("fileRef") {
                return file_entry(app, st, id);
            }
            Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), expand(app, st, x)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| expand(app, st, x)).collect()),
        other => other.clone(),
    }
}

/// `statusUrl` of a capability run.
pub fn status_url(id: &str) -> String {
    format!("/v1/runs/{id}")
}

/// The served run.
pub fn run_json(app: &App, st: &State, run: &CapRun) -> Value {
    let mut v = json!({
        "object": run.object, "id": run.id, "status": run.status, "config": run.config,
        "statusUrl": status_url(&run.id), "createdAt": iso(run.created_ms),
        "expiresAt": run.expires_ms.map(iso), "ttl": run.ttl,
    });
    if let Some(o) = v.as_object_mut() {
        if run.status == "processed" {
            if let Some(out) = &run.output {
                o.insert("output".into(), expand(app, st, out));
            }
        }
        if let Some((c, m)) = &run.error {
            if run.status == "failed" {
                o.insert("error".into(), json!({"code": c, "message": m}));
            }
        }
        if let Some(m) = &run.metadata {
            o.insert("metadata".into(), m.clone());
        }
        if run.object == "sign_run" {
            o.insert(
                "envelopeUrl".into(),
                format!("{}/envelopes/{}", app.base_url, run.id).into(),
            );
            if let Some(e) = &run.envelope {
                o.insert(
                    "signers".into(),
                    e.get("signers").cloned().unwrap_or(Value::Null),
                );
            }
        }
        if let Some(s) = &run.space_id {
            o.insert("spaceId".into(), s.clone().into());
        }
    }
    v
}

/// The minimal handle `{object, id, status, statusUrl}`.
pub fn handle_json(run: &CapRun) -> Value {
    json!({"object": run.object, "id": run.id, "status": run.status, "statusUrl": status_url(&run.id)})
}

/// Closes a space past its `expiresAt` (lazily, once): its runs and their files are deleted, and `space.expired`
/// goes to every saved endpoint of the organization that takes it.
pub fn close_space_if_expired(app: &Shared, sid: &str) -> Outbox {
    let now = app.now_ms();
    let mut out = Outbox::new();
    let mut st = lock(&app.state);
    let Some(space) = st.spaces.get_mut(sid) else {
        return out;
    };
    if space.closed || space.expires_ms.is_none_or(|e| now < e) {
        return out;
    }
    space.closed = true;
    let space = space.clone();
    let ids: Vec<String> = st
        .runs
        .values()
        .filter(|r| r.space_id.as_deref() == Some(sid))
        .map(|r| r.id.clone())
        .collect();
    for id in ids {
        if let Some(mut r) = st.runs.remove(&id) {
            purge_data(&mut st, &mut r);
            r.deleted = true;
            r.deleted_ms = Some(now);
            st.runs.insert(id, r);
        }
    }
    let data =
        json!({"spaceId": space.id, "name": space.name, "expiresAt": space.expires_ms.map(iso)});
    for e in st.endpoints.values().filter(|e| e.org == space.org) {
        let ev = PendingEvent {
            event_id: new_id("evt_"),
            kind: "space.expired".into(),
            processing_id: space.id.clone(),
            occurred_ms: now,
            data: data.clone(),
            attempts: 0,
        };
        out.push((space.org.clone(), WebhookRef::Id(e.id.clone()), ev));
    }
    out
}

/// Looks a run up for a caller, materializing it. Deleted or unknown: 404; purged: 410 then 404.
fn load(app: &Shared, c: &Caller, id: &str) -> ApiResult<CapRun> {
    let now = app.now_ms();
    // isolation: the caller's organization is checked before anything is read or changed (a space closed by
    // this lookup must be the caller's own)
    let space = {
        let st = lock(&app.state);
        match st.runs.get(id) {
            Some(r) if r.org == c.org => r.space_id.clone(),
            _ => return Err(ApiError::not_found("run")),
        }
    };
    if let Some(sid) = space {
        let out = close_space_if_expired(app, &sid);
        dispatch(app, out);
    }
    let (res, out) = {
        let mut st = lock(&app.state);
        if st.runs.get(id).is_none_or(|r| r.org != c.org) {
            return Err(ApiError::not_found("run"));
        }
        let out = materialize(&mut st, id, now);
        (st.runs.get(id).cloned(), out)
    };
    dispatch(app, out);
    let run = res.ok_or_else(|| ApiError::not_found("run"))?;
    if run.deleted {
        return Err(ApiError::not_found("run"));
    }
    if let Some(p) = run.purged_ms {
        if now < p + PURGE_GRACE_MS {
            return Err(ApiError::new(
                StatusCode::GONE,
                "run_expired",
                "the run passed its ttl and was purged",
            )
            .retryable(false));
        }
        return Err(ApiError::not_found("run"));
    }
    Ok(run)
}

/// Holds up to `wait` seconds while the run is `queued` or `processing`.
pub async fn hold(app: &Shared, c: &Caller, id: &str, wait: u64) -> ApiResult<CapRun> {
    let deadline = Instant::now() + Duration::from_secs(wait);
    loop {
        let run = load(app, c, id)?;
        if !(run.status == "processing" || run.status == "queued") || Instant::now() >= deadline {
            return Ok(run);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        host::sleep(left.min(Duration::from_millis(25))).await;
    }
}

/// Renders a run for a caller.
pub fn render(app: &App, run: &CapRun) -> Value {
    let st = lock(&app.state);
    run_json(app, &st, run)
}

/// `GET /v1/runs/:id`.
pub async fn get(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Value>> {
    let q = body::query_pairs(q.as_deref());
    let wait = body::wait(&q, 0)?;
    let run = hold(&app, &c, &id, wait).await?;
    Ok(Json(render(&app, &run)))
}

const STATUSES: &[&str] = &[
    "processing",
    "processed",
    "failed",
    "cancelled",
    "expired",
    "needs_input",
];

/// `GET /v1/runs`: newest first; `object`, `status`, `limit` 1..50 (20), `cursor`, up to three `metadata.k=v`.
pub async fn list(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Value>> {
    let q = body::query_pairs(q.as_deref());
    let limit = match body::q_get(&q, "limit") {
        None => 20,
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|l| (1..=50).contains(l))
            .ok_or_else(|| ApiError::field("limit", "must be an integer from 1 to 50"))?,
    };
    let status = body::q_get(&q, "status");
    if let Some(s) = &status {
        if !STATUSES.contains(&s.as_str()) {
            return Err(ApiError::field(
                "status",
                "must be one of processing, processed, failed, cancelled, expired, needs_input",
            ));
        }
    }
    let object = body::q_get(&q, "object");
    let cursor = match body::q_get(&q, "cursor") {
        None => None,
        Some(cur) => Some(
            cur.strip_prefix("cur_")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::field("cursor", "is not a cursor returned by this list")
                })?,
        ),
    };
    let filters: Vec<(String, String)> = q
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("metadata.")
                .map(|k| (k.to_string(), v.clone()))
        })
        .collect();
    if filters.len() > 3 {
        return Err(ApiError::field(
            "metadata",
            "at most three metadata filters",
        ));
    }
    for (k, v) in &q {
        if !["limit", "status", "object", "cursor"].contains(&k.as_str())
            && !k.starts_with("metadata.")
        {
            return Err(ApiError::field(
                k,
                &format!("unknown query parameter (value `{v}`)"),
            ));
        }
    }
    let now = app.now_ms();
    let ids: Vec<String> = lock(&app.state)
        .runs
        .values()
        .filter(|r| r.org == c.org)
        .map(|r| r.id.clone())
        .collect();
    let mut out = Outbox::new();
    let mut st = lock(&app.state);
    for id in &ids {
        out.extend(materialize(&mut st, id, now));
    }
    let mut rows: Vec<&CapRun> = st
        .runs
        .values()
        .filter(|r| {
            r.org == c.org && !r.deleted && r.purged_ms.is_none_or(|p| now < p + PURGE_GRACE_MS)
        })
        .filter(|r| object.as_ref().is_none_or(|o| &r.object == o))
        .filter(|r| status.as_ref().is_none_or(|s| &r.status == s))
        .filter(|r| cursor.is_none_or(|c| r.seq < c))
        .filter(|r| {
            filters.iter().all(|(k, v)| {
                r.metadata.as_ref().and_then(|m| m.get(k)).is_some_and(|x| {
                    x.as_str()
                        .map(String::from)
                        .unwrap_or_else(|| x.to_string())
                        == *v
                })
            })
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.seq));
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let next = if has_more {
        rows.last().map(|r| format!("cur_{}", r.seq))
    } else {
        None
    };
    let data: Vec<Value> = rows.iter().map(|r| run_json(&app, &st, r)).collect();
    drop(st);
    dispatch(&app, out);
    Ok(Json(
        json!({"object": "list", "data": data, "has_more": has_more, "cursor": next}),
    ))
}

/// `POST /v1/runs/:id/cancel`.
pub async fn cancel(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let run = load(&app, &c, &id)?;
    if !matches!(run.status.as_str(), "queued" | "processing" | "needs_input") {
        return Err(ApiError::conflict(
            "run_not_cancellable",
            format!("the run is already {}", run.status),
        ));
    }
    let now = app.now_ms();
    let mut out = Outbox::new();
    let rendered = {
        let mut st = lock(&app.state);
        let mut r = st
            .runs
            .remove(&id)
            .ok_or_else(|| ApiError::not_found("run"))?;
        r.status = "cancelled".into();
        r.output = None;
        if r.expires_ms.is_none() && r.space_id.is_none() {
            r.expires_ms = Some(r.created_ms + r.ttl * 1000);
        }
        let ev = event(
            &r,
            "processing.completed",
            now,
            json!({"object": r.object, "id": r.id, "status": "cancelled"}),
        );
        push(&mut out, &r, ev);
        let v = run_json(&app, &st, &r);
        st.runs.insert(id.clone(), r);
        v
    };
    dispatch(&app, out);
    Ok(Json(rendered))
}

/// `DELETE /v1/runs/:id`: purge now; 204, again 204; never-existing id 404.
pub async fn delete(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let mut st = lock(&app.state);
    // isolation: check the organization before removing anything (another tenant's id is a 404 and stays intact)
    if st.runs.get(&id).is_none_or(|r| r.org != c.org) {
        return Err(ApiError::not_found("run"));
    }
    let Some(mut run) = st.runs.remove(&id) else {
        return Err(ApiError::not_found("run"));
    };
    purge_data(&mut st, &mut run);
    if !run.deleted {
        run.deleted_ms = Some(app.now_ms());
    }
    run.deleted = true;
    run.metadata = None;
    run.config = Value::Null;
    st.runs.insert(id, run);
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/runs/:id/keep`: body `{spaceId}` or `{space: name}` (or empty: the organization's default space).
pub async fn keep(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&raw)?;
    let run = load(&app, &c, &id)?;
    let space_id = body::opt_str(&b, "spaceId")?;
    let mut space_expires: Option<i64> = None;
    let space_name = match b.get("space") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(o)) => {
            if let Some(e) = o.get("expiresAt").filter(|e| !e.is_null()) {
                let ms = e.as_str().and_then(crate::util::parse_iso);
                space_expires = Some(ms.ok_or_else(|| {
                    ApiError::field(
                        "space.expiresAt",
                        "must be an ISO 8601 UTC timestamp like 2026-01-02T03:04:05.000Z",
                    )
                })?);
            }
            Some(
                o.get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ApiError::field("space.name", "is required"))?
                    .to_string(),
            )
        }
        Some(_) => {
            return Err(ApiError::field(
                "space",
                "must be a name or {name, expiresAt?}",
            ))
        }
    };
    if space_id.is_some() && space_name.is_some() {
        return Err(ApiError::bad("spaceId and space are mutually exclusive"));
    }
    if run.status != "processed" && run.status != "failed" && run.status != "cancelled" {
        return Err(ApiError::conflict(
            "pipeline_running",
            "the run is not finished; keep it once it is processed",
        ));
    }
    let own_space = space_id.as_ref().is_some_and(|sid| {
        lock(&app.state)
            .spaces
            .get(sid)
            .is_some_and(|s| s.org == c.org)
    });
    if let Some(sid) = space_id.as_ref().filter(|_| own_space) {
        let out = close_space_if_expired(&app, sid);
        dispatch(&app, out);
    }
    let mut st = lock(&app.state);
    let now = app.now_ms();
    let target = match (space_id, space_name) {
        (Some(sid), _) => {
            if st
                .spaces
                .get(&sid)
                .is_none_or(|s| s.org != c.org || s.closed)
            {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    "spaceId: no such space",
                ));
            }
            sid
        }
        (None, name) => {
            let name = name.unwrap_or_else(|| "Default".into());
            match st
                .spaces
                .values()
                .find(|s| s.org == c.org && s.name == name && !s.closed)
            {
                Some(s) => s.id.clone(),
                None => {
                    let s = Space {
                        id: new_id("spc_"),
                        org: c.org.clone(),
                        name,
                        created_ms: now,
                        expires_ms: space_expires,
                        closed: false,
                    };
                    let sid = s.id.clone();
                    st.spaces.insert(sid.clone(), s);
                    sid
                }
            }
        }
    };
    if let Some(existing) = &run.space_id {
        if existing != &target {
            return Err(ApiError::conflict(
                "already_kept",
                "the run is already kept in another space",
            ));
        }
    }
    let r = st
        .runs
        .get_mut(&id)
        .ok_or_else(|| ApiError::not_found("run"))?;
    r.space_id = Some(target);
    r.expires_ms = None;
    let snapshot = r.clone();
    let inline: Vec<String> = st
        .files
        .values()
        .filter(|f| f.run_id.as_deref() == Some(id.as_str()))
        .map(|f| f.id.clone())
        .collect();
    for fid in inline {
        if let Some(f) = st.files.get_mut(&fid) {
            f.run_id = None;
        }
    }
    let v = run_json(&app, &st, &snapshot);
    Ok(Json(v))
}

/// `GET /v1/runs/:id/output/:name`: 302 to a signed URL; 409 `output_not_ready` while the file settles.
pub async fn output(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path((id, name)): Path<(String, String)>,
) -> ApiResult<Response> {
    let run = load(&app, &c, &id)?;
    let not_ready = || {
        ApiError::conflict(
            "output_not_ready",
            "the output file is still settling; retry shortly",
        )
        .retryable(true)
    };
    if run.status != "processed" {
        if matches!(run.status.as_str(), "processing" | "queued" | "needs_input") {
            return Err(not_ready());
        }
        return Err(ApiError::not_found("output"));
    }
    let fid = run
        .produced
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| f.clone())
        .ok_or_else(|| ApiError::not_found("output"))?;
    let ready = {
        let st = lock(&app.state);
        st.files
            .get(&fid)
            .is_some_and(|f| crate::files::file_status(f, app.now_ms()) == "ready")
    };
    if !ready {
        return Err(not_ready());
    }
    let url = crate::files::download_url(&app, &fid);
    let mut resp = StatusCode::FOUND.into_response();
    if let Ok(v) = url.parse() {
        resp.headers_mut().insert("location", v);
    }
    Ok(resp)
}
