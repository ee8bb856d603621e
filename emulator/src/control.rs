//! The test-only control API under `/__emulator/` (mounted only with `--control`; no auth).
//!
//! - `GET  /__emulator/clock` -> `{now, offsetMs}`
//! - `POST /__emulator/clock/advance` `{seconds}` or `{ms}` -> `{now, offsetMs}`
//! - `POST /__emulator/faults` `{kind, count?, retryAfter?, delayMs?}`: the next `count` (default 1) `/v1` requests
//!   (the JWKS excepted) get the fault; kinds: `rate_limited` (429, `Retry-After: retryAfter`, default 60),
//!   `auth_unavailable` (503), `internal_error` (500), `drop_connection` (the request is fully handled and
//!   committed, then the connection is cut without an answer), `slow` (held `delayMs`, default 2000, then handled),
//!   `ambiguous_capability` (422), `upstream_error` (`status`, default 502; `retryable: false`).
//! - `POST /__emulator/agent-runs/:id/{pause|resume|cancel}`: `paused` (`{reason}`), back, or `cancelled`.
//! - `DELETE /__emulator/faults` clears queued faults.
//! - `POST /__emulator/credits` `{org, exhausted}`: starts (verbs, agent runs, realtime sessions) of that
//!   organization answer 402 `credits_exhausted` while `exhausted` is true; reads, cancel, keep, deletes still work.
//! - `GET /__emulator/state`: the state as the `--state` snapshot holds it, read without bringing any run up to date
//!   (what a test checks when a read would change what it checks), the secrets left out: no signing key, and the
//!   keys of agent runs and the tickets of realtime sessions as `"redacted"`.

use crate::app::{FaultKind, Shared};
use crate::error::{ApiError, ApiResult};
use crate::util::iso;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

fn clock_json(app: &Shared) -> Value {
    json!({"now": iso(app.now_ms()), "offsetMs": app.clock_offset()})
}

/// `GET /__emulator/clock`.
pub async fn clock(State(app): State<Shared>) -> Json<Value> {
    Json(clock_json(&app))
}

/// `GET /__emulator/state`.
pub async fn state(State(app): State<Shared>) -> ApiResult<Json<Value>> {
    let mut v = serde_json::to_value(&*crate::util::lock(&app.state))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    if let Some(o) = v.as_object_mut() {
        o.remove("signing_secret");
        for (collection, secret) in [("agent_runs", "key"), ("realtime", "ticket")] {
            if let Some(Value::Object(items)) = o.get_mut(collection) {
                for item in items.values_mut().filter_map(Value::as_object_mut) {
                    if item.contains_key(secret) {
                        item.insert(secret.into(), "redacted".into());
                    }
                }
            }
        }
    }
    Ok(Json(v))
}

/// `POST /__emulator/clock/advance`.
pub async fn advance(State(app): State<Shared>, b: Bytes) -> ApiResult<Json<Value>> {
    let b = crate::body::object(&b)?;
    let ms = match (
        b.get("seconds").and_then(Value::as_f64),
        b.get("ms").and_then(Value::as_i64),
    ) {
        (Some(s), None) if s >= 0.0 && s.is_finite() => (s * 1000.0) as i64,
        (None, Some(ms)) if ms >= 0 => ms,
        _ => {
            return Err(ApiError::bad(
                "give exactly one of seconds (number >= 0) or ms (integer >= 0)",
            ))
        }
    };
    app.advance_clock(ms);
    Ok(Json(clock_json(&app)))
}

/// `POST /__emulator/faults`.
pub async fn push_fault(State(app): State<Shared>, b: Bytes) -> ApiResult<Json<Value>> {
    let b = crate::body::object(&b)?;
    let count = match b.get("count") {
        None => 1,
        Some(v) => v
            .as_u64()
            .filter(|c| (1..=10_000).contains(c))
            .ok_or_else(|| ApiError::field("count", "must be an integer from 1 to 10000"))?
            as u32,
    };
    let kind = match crate::body::opt_str(&b, "kind")?.as_deref() {
        Some("rate_limited") => {
            FaultKind::RateLimited(b.get("retryAfter").and_then(Value::as_u64).unwrap_or(60))
        }
        Some("auth_unavailable") => FaultKind::AuthUnavailable,
        Some("internal_error") => FaultKind::Internal,
        Some("drop_connection") => FaultKind::DropAfterCommit,
        Some("slow") => FaultKind::Slow(b.get("delayMs").and_then(Value::as_u64).unwrap_or(2000)),
        Some("ambiguous_capability") => FaultKind::AmbiguousCapability,
        Some("upstream_error") => FaultKind::Upstream(match b.get("status") {
            None => 502,
            Some(v) => v
                .as_u64()
                .filter(|s| (400..=599).contains(s))
                .ok_or_else(|| {
                    ApiError::field("status", "must be an HTTP status from 400 to 599")
                })? as u16,
        }),
        _ => {
            return Err(ApiError::field(
                "kind",
                "must be rate_limited, auth_unavailable, internal_error, drop_connection, slow, \
                 ambiguous_capability or upstream_error",
            ))
        }
    };
    app.push_fault(kind, count);
    Ok(Json(json!({"queued": count})))
}

/// `POST /__emulator/credits` `{org, exhausted}`.
pub async fn credits(State(app): State<Shared>, b: Bytes) -> ApiResult<Json<Value>> {
    let b = crate::body::object(&b)?;
    let org =
        crate::body::opt_str(&b, "org")?.ok_or_else(|| ApiError::field("org", "is required"))?;
    let exhausted = b
        .get("exhausted")
        .and_then(Value::as_bool)
        .ok_or_else(|| ApiError::field("exhausted", "must be a boolean"))?;
    app.set_exhausted(&org, exhausted);
    Ok(Json(json!({"org": org, "exhausted": exhausted})))
}

/// `POST /__emulator/agent-runs/:id/{pause|resume|cancel}`: moves an agent run into `paused` (body
/// `{reason: model_error | system_error}`), back out of it, or into `cancelled` (one `agent_run.failed` with
/// `run_cancelled`). The run is brought up to date first and its events are delivered before the answer, as on
/// any observation. Answers the run as `GET /v1/agent-runs/:id` would; unknown id 404; a run that cannot make the
/// move 409 `run_not_active`.
pub async fn agent_run_control(
    State(app): State<Shared>,
    axum::extract::Path((id, op)): axum::extract::Path<(String, String)>,
    b: Bytes,
) -> ApiResult<Json<Value>> {
    let b = crate::body::object(&b)?;
    let reason = match op.as_str() {
        "pause" => match crate::body::opt_str(&b, "reason")?.as_deref() {
            Some(r @ ("model_error" | "system_error")) => Some(r.to_string()),
            _ => {
                return Err(ApiError::field(
                    "reason",
                    "must be model_error or system_error",
                ))
            }
        },
        "resume" | "cancel" => None,
        _ => return Err(ApiError::not_found("route")),
    };
    if !crate::util::lock(&app.state).agent_runs.contains_key(&id) {
        return Err(ApiError::not_found("agent run"));
    }
    crate::agent_runs::observe(&app, &id, true).await;
    {
        let mut st = crate::util::lock(&app.state);
        let run = st
            .agent_runs
            .get_mut(&id)
            .ok_or_else(|| ApiError::not_found("agent run"))?;
        let now = app.now_ms();
        let res = match (op.as_str(), reason) {
            ("pause", Some(r)) => crate::agent_engine::pause(run, &r, now),
            ("resume", _) => crate::agent_engine::resume(run, now),
            _ => crate::agent_engine::cancel(run, now),
        };
        res.map_err(|status| {
            ApiError::conflict(
                "run_not_active",
                format!("the run is {status}; it cannot {op}"),
            )
        })?;
    }
    crate::agent_runs::observe(&app, &id, false).await;
    let st = crate::util::lock(&app.state);
    let run = st
        .agent_runs
        .get(&id)
        .ok_or_else(|| ApiError::not_found("agent run"))?;
    Ok(Json(crate::agent_runs::run_json(&app, &st, run)))
}

/// `DELETE /__emulator/faults`.
pub async fn clear_faults(State(app): State<Shared>) -> StatusCode {
    app.clear_faults();
    StatusCode::NO_CONTENT
}
