//! Saved actions (configs): `POST /v1/{extract|redact|fill}/configs`, the deprecated `POST /v1/actions`,
//! and `GET /v1/actions/catalog`. An action is referenced by id or slug in a verb's `action` field.

use crate::app::Shared;
use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ApiResult};
use crate::state::{Action, State};
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde_json::{json, Value};

const CAPS: &[&str] = &["extract", "redact", "fill", "sign"];

fn slug(name: &str) -> String {
    crate::extract::words_of(name).join("-")
}

fn action_json(a: &Action) -> Value {
    json!({"object": "action", "id": a.id, "capability": a.capability, "name": a.name, "slug": a.slug, "config": a.config, "createdAt": iso(a.created_ms)})
}

fn save(
    app: &Shared,
    org: &str,
    capability: &str,
    b: &serde_json::Map<String, Value>,
) -> ApiResult<Json<Value>> {
    let name = body::opt_str(b, "name")?
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::field("name", "is required"))?;
    let config = match b.get("config") {
        Some(c @ Value::Object(_)) => c.clone(),
        Some(_) => return Err(ApiError::field("config", "must be an object")),
        None => return Err(ApiError::field("config", "is required")),
    };
    if capability == "extract" {
        if let Some(s) = config.get("schema") {
            crate::extract::check_schema(s).map_err(|mut e| {
                e.message = format!("config.{}", e.message);
                e
            })?;
        }
    }
    let mut st = lock(&app.state);
    let a = Action {
        id: new_id("act_"),
        org: org.into(),
        capability: capability.into(),
        slug: slug(&name),
        name,
        config,
        created_ms: app.now_ms(),
    };
    let out = action_json(&a);
    st.actions.insert(a.id.clone(), a);
    Ok(Json(out))
}

/// `POST /v1/{capability}/configs`.
pub async fn create_config(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(cap): Path<String>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    if !["extract", "redact", "fill"].contains(&cap.as_str()) {
        return Err(ApiError::not_found("route"));
    }
    save(&app, &c.org, &cap, &body::object(&raw)?)
}

/// `POST /v1/actions` (deprecated alias).
pub async fn create_action(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&raw)?;
    let cap = body::opt_str(&b, "capability")?
        .ok_or_else(|| ApiError::field("capability", "is required"))?;
    if !CAPS.contains(&cap.as_str()) {
        return Err(ApiError::field(
            "capability",
            "must be extract, redact, fill or sign",
        ));
    }
    save(&app, &c.org, &cap, &b)
}

/// `GET /v1/actions/catalog`.
pub async fn catalog() -> Json<Value> {
    Json(json!({"object": "list", "data": [
        {"capability": "extract", "config": {"schema": "object (JSON Schema subset)", "instructions": "string", "citations": "boolean", "unit": "per_document | across_documents | rows_per_document"}},
        {"capability": "redact", "config": {"categories": "array of email | phone | name", "mode": "mask | remove"}},
        {"capability": "fill", "config": {"values": "object", "output": "string", "review": "string"}},
        {"capability": "sign", "config": {"signers": "array of {name, email}"}},
    ]}))
}

/// Finds an action of the organization by id or slug for `verb`.
///
/// # Errors
/// 404 `action_unknown`; 400 `invalid_request` when a sign action is used by another verb (or the kinds differ).
pub fn resolve(st: &State, org: &str, reference: &str, verb: &str) -> ApiResult<Action> {
    let a = st
        .actions
        .values()
        .find(|a| a.org == org && (a.id == reference || a.slug == reference))
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "action_unknown",
                "action: no action with this id or slug in the organization",
            )
        })?;
    if a.capability != verb {
        return Err(ApiError::field(
            "action",
            &format!(
                "is a saved {} action and cannot be used by {verb}",
                a.capability
            ),
        ));
    }
    Ok(a.clone())
}
