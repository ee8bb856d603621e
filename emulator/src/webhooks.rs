//! Webhook endpoints (CRUD, deliveries log), the JWKS routes, and signed event delivery with the retry ladders.

use crate::app::{App, Shared};
use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ApiResult};
use crate::state::{Delivery, Endpoint, PendingEvent, State, WebhookRef};
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::time::Duration;

/// Every event type of the spec.
pub const EVENT_TYPES: &[&str] = &[
    "processing.started",
    "file.processed",
    "file.failed",
    "run.completed",
    "run.failed",
    "processing.completed",
    "processing.expired",
    "agent_run.waiting",
    "agent_run.approval_requested",
    "agent_run.task_ready",
    "agent_run.completed",
    "agent_run.failed",
    "space.expired",
];

/// Agent-run ladder: waits between the attempts made inside the observing request (ms, before scaling).
pub const AGENT_LADDER_MS: [f64; 4] = [500.0, 1000.0, 2000.0, 4000.0];
/// Capability-run ladder (ms, before scaling), each capped at 5 minutes; 5 attempts in all.
pub const CAP_LADDER_MS: [f64; 4] = [10_000.0, 20_000.0, 40_000.0, 80_000.0];
/// Rows kept per endpoint.
pub const DELIVERIES_KEPT: usize = 50;

fn endpoint_json(e: &Endpoint) -> Value {
    let events: Vec<String> = match &e.events {
        Some(v) => v.clone(),
        None => EVENT_TYPES.iter().map(|s| s.to_string()).collect(),
    };
    json!({"object": "webhook_endpoint", "id": e.id, "url": e.url, "events": events, "disabled": e.disabled, "createdAt": iso(e.created_ms)})
}

fn parse_events(v: &Value) -> ApiResult<Vec<String>> {
    let arr = v
        .as_array()
        .ok_or_else(|| ApiError::field("events", "must be an array of event types"))?;
    if arr.is_empty() {
        return Err(ApiError::field(
            "events",
            "must list at least one event type (omit it for all types)",
        ));
    }
    let mut out = Vec::new();
    for (i, t) in arr.iter().enumerate() {
        match t.as_str() {
            Some(s) if EVENT_TYPES.contains(&s) => out.push(s.to_string()),
            _ => {
                return Err(ApiError::field(
                    &format!("events[{i}]"),
                    "is not a known event type",
                ))
            }
        }
    }
    Ok(out)
}

/// `POST /v1/webhooks`.
pub async fn create(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    b: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&b)?;
    let url = body::opt_str(&b, "url")?.ok_or_else(|| ApiError::field("url", "is required"))?;
    body::check_webhook_url(&url, app.config.allow_http_webhooks, "url")?;
    let events = match b.get("events") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_events(v)?),
    };
    let mut st = lock(&app.state);
    let seq = st.next_seq();
    let e = Endpoint {
        id: new_id("whe_"),
        org: c.org,
        url,
        events,
        disabled: false,
        created_ms: app.now_ms(),
        seq,
    };
    let out = endpoint_json(&e);
    st.endpoints.insert(e.id.clone(), e);
    Ok(Json(out))
}

/// `GET /v1/webhooks` (newest first).
pub async fn list(AxState(app): AxState<Shared>, Extension(c): Extension<Caller>) -> Json<Value> {
    let st = lock(&app.state);
    let mut v: Vec<&Endpoint> = st.endpoints.values().filter(|e| e.org == c.org).collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.seq));
    Json(json!({"object": "list", "data": v.into_iter().map(endpoint_json).collect::<Vec<_>>()}))
}

fn own<'a>(st: &'a mut State, org: &str, id: &str) -> ApiResult<&'a mut Endpoint> {
    st.endpoints
        .get_mut(id)
        .filter(|e| e.org == org)
        .ok_or_else(|| ApiError::not_found("webhook endpoint"))
}

/// `GET /v1/webhooks/:id`.
pub async fn get(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let mut st = lock(&app.state);
    Ok(Json(endpoint_json(own(&mut st, &c.org, &id)?)))
}

/// `PATCH /v1/webhooks/:id`.
pub async fn patch(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
    b: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&b)?;
    let url = body::opt_str(&b, "url")?;
    if let Some(u) = &url {
        body::check_webhook_url(u, app.config.allow_http_webhooks, "url")?;
    }
    let events = match b.get("events") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(parse_events(v)?)),
    };
    let disabled = match b.get("disabled") {
        None => None,
        Some(Value::Bool(d)) => Some(*d),
        Some(_) => return Err(ApiError::field("disabled", "must be a boolean")),
    };
    let mut st = lock(&app.state);
    let e = own(&mut st, &c.org, &id)?;
    if let Some(u) = url {
        e.url = u;
    }
    if let Some(ev) = events {
        e.events = ev;
    }
    if let Some(d) = disabled {
        e.disabled = d;
    }
    let out = endpoint_json(e);
    Ok(Json(out))
}

/// `DELETE /v1/webhooks/:id` (204).
pub async fn delete(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let mut st = lock(&app.state);
    own(&mut st, &c.org, &id)?;
    st.endpoints.remove(&id);
    st.deliveries.remove(&id);
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/webhooks/:id/deliveries` (50 newest attempts, newest first).
pub async fn deliveries(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let mut st = lock(&app.state);
    own(&mut st, &c.org, &id)?;
    let mut sorted: Vec<&Delivery> = st
        .deliveries
        .get(&id)
        .map(|d| d.iter().collect())
        .unwrap_or_default();
    // stable: rows with one `at` keep their recorded order (the later record first)
    sorted.sort_by_key(|r| std::cmp::Reverse(r.at_ms));
    let rows: Vec<Value> = Some(sorted)
        .map(|d| {
            d.into_iter()
                .map(|r| json!({
                    "object": "webhook_delivery", "endpointId": r.endpoint_id, "processingId": r.processing_id,
                    "eventId": r.event_id, "type": r.kind, "attempt": r.attempt,
                    "responseStatus": r.response_status, "ok": r.ok, "at": iso(r.at_ms),
                }))
                .collect()
        })
        .unwrap_or_default();
    Ok(Json(json!({"object": "list", "data": rows})))
}

/// `GET /v1/webhooks/jwks.json` and `/process/jwks.json`: no auth, never rate limited, cacheable one hour.
pub async fn jwks(AxState(app): AxState<Shared>) -> Response {
    let mut r = Json(app.signer.jwks()).into_response();
    r.headers_mut().insert(
        "cache-control",
        HeaderValue::from_static("public, max-age=3600"),
    );
    r
}

/// Checks a run's `webhook: {id}` at creation.
///
/// # Errors
/// 422 `webhook_endpoint_not_found` or `webhook_endpoint_disabled`.
pub fn check_ref(st: &State, org: &str, w: &Option<WebhookRef>) -> ApiResult<()> {
    if let Some(WebhookRef::Id(id)) = w {
        match st.endpoints.get(id).filter(|e| e.org == org) {
            None => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "webhook_endpoint_not_found",
                    "webhook.id: no such webhook endpoint",
                ))
            }
            Some(e) if e.disabled => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "webhook_endpoint_disabled",
                    "webhook.id: the webhook endpoint is disabled",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Where one attempt goes now: `(url, endpoint id)`; `None` drops the event (deleted or disabled endpoint, or
/// the endpoint's filter excludes the type).
fn target(st: &State, org: &str, w: &WebhookRef, kind: &str) -> Option<(String, Option<String>)> {
    match w {
        WebhookRef::Url(u) => Some((u.clone(), None)),
        WebhookRef::Id(id) => {
            let e = st
                .endpoints
                .get(id)
                .filter(|e| e.org == org && !e.disabled)?;
            if let Some(f) = &e.events {
                if !f.iter().any(|t| t == kind) {
                    return None;
                }
            }
            Some((e.url.clone(), Some(e.id.clone())))
        }
    }
}

/// The envelope bytes: `{eventId, type, processingId, occurredAt, data}`.
pub fn envelope(ev: &PendingEvent) -> Vec<u8> {
    let v = json!({"eventId": ev.event_id, "type": ev.kind, "processingId": ev.processing_id, "occurredAt": iso(ev.occurred_ms), "data": ev.data});
    serde_json::to_vec(&v).unwrap_or_default()
}

/// Outcome of one attempt.
#[derive(Debug, PartialEq)]
enum Attempt {
    Delivered,
    Failed,
    Dropped,
}

async fn attempt(app: &App, org: &str, w: &WebhookRef, ev: &mut PendingEvent) -> Attempt {
    let Some((url, endpoint)) = target(&lock(&app.state), org, w, &ev.kind) else {
        return Attempt::Dropped;
    };
    // at most DELIVERY_CONCURRENCY attempts on the wire (never closed, so an error cannot happen; then no bound)
    let _slot = app.delivery_slots.acquire().await;
    ev.attempts += 1;
    let body = envelope(ev);
    let now = app.now_ms();
    let token = app.signer.token(
        &ev.processing_id,
        &ev.event_id,
        &ev.kind,
        &body,
        now.div_euclid(1000),
    );
    let headers = [
        ("content-type", "application/json".to_string()),
        ("x-svc-signature", token),
        ("user-agent", "docauto-emulator-webhooks".to_string()),
    ];
    let res = app
        .host
        .deliver(&url, &headers, Bytes::from(body), Duration::from_secs(10))
        .await;
    let status = res.as_ref().map(|f| f.status).unwrap_or(0);
    let ok = (200..300).contains(&status);
    if let Some(eid) = endpoint {
        let mut st = lock(&app.state);
        let rows = st.deliveries.entry(eid.clone()).or_default();
        // newest first by `at` (the attempt's signing time): an attempt that answered late goes behind the attempts
        // that started after it, so interleaved deliveries of several events stay sorted
        let pos = rows
            .iter()
            .position(|r| r.at_ms <= now)
            .unwrap_or(rows.len());
        rows.insert(
            pos,
            Delivery {
                endpoint_id: eid,
                processing_id: ev.processing_id.clone(),
                event_id: ev.event_id.clone(),
                kind: ev.kind.clone(),
                attempt: ev.attempts,
                response_status: status,
                ok,
                at_ms: now,
            },
        );
        rows.truncate(DELIVERIES_KEPT);
    }
    if ok {
        Attempt::Delivered
    } else {
        Attempt::Failed
    }
}

/// Delivers an agent run's pending events inside the observing request: up to 5 attempts each
/// (waits 0.5, 1, 2, 4 s scaled). Events still failing stay pending for the next observation.
///
/// With `retries` false, only events never attempted are sent (so one request runs the ladder of an old event once).
pub async fn deliver_agent_events(app: &App, run_id: &str, retries: bool) {
    let (events, w, org) = {
        let mut st = lock(&app.state);
        let Some(run) = st.agent_runs.get_mut(run_id) else {
            return;
        };
        let (evs, keep): (Vec<PendingEvent>, Vec<PendingEvent>) =
            std::mem::take(&mut run.pending_events)
                .into_iter()
                .partition(|e| retries || e.attempts == 0);
        run.pending_events = keep;
        if evs.is_empty() {
            return;
        }
        (evs, run.webhook.clone(), run.org.clone())
    };
    let Some(w) = w else { return };
    let jobs = events.into_iter().map(|mut ev| {
        let w = w.clone();
        let org = org.clone();
        async move {
            for i in 0..=AGENT_LADDER_MS.len() {
                match attempt(app, &org, &w, &mut ev).await {
                    Attempt::Delivered | Attempt::Dropped => return None,
                    Attempt::Failed => {}
                }
                if let Some(ms) = AGENT_LADDER_MS.get(i) {
                    crate::host::sleep(Duration::from_millis(app.config.scaled_ms(*ms))).await;
                }
            }
            Some(ev)
        }
    });
    let failed: Vec<PendingEvent> = futures_util::future::join_all(jobs)
        .await
        .into_iter()
        .flatten()
        .collect();
    if !failed.is_empty() {
        let mut st = lock(&app.state);
        if let Some(run) = st.agent_runs.get_mut(run_id) {
            let mut keep = failed;
            keep.append(&mut run.pending_events);
            run.pending_events = keep;
        }
    }
}

/// Delivers a capability-run event in the background: 5 attempts, waits 10, 20, 40, 80 s (scaled, each at most
/// 5 minutes); then the event is dropped.
pub fn spawn_cap_delivery(app: Shared, org: String, w: WebhookRef, mut ev: PendingEvent) {
    let bg = app.clone();
    bg.host.spawn(async move {
        for i in 0..=CAP_LADDER_MS.len() {
            match attempt(&app, &org, &w, &mut ev).await {
                Attempt::Delivered | Attempt::Dropped => return,
                Attempt::Failed => {}
            }
            if let Some(ms) = CAP_LADDER_MS.get(i) {
                let wait = app.config.scaled_ms(*ms).min(300_000);
                crate::host::sleep(Duration::from_millis(wait)).await;
            }
        }
    });
}
