//! Webhook endpoint management, delivery history, and the public key set.

use super::common::ObjectList;
use super::error::ApiError;
use super::params::{Field, Fields, Kind, Params, Table, STRINGS};
use super::request::{segment, Method, RequestSpec, ResponseKind};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Body of `POST /v1/webhooks`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct WebhookCreateParams {
    /// https URL.
    pub url: String,
    /// Event types; omitted means all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
}

/// Body of `PATCH /v1/webhooks/:id`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct WebhookUpdateParams {
    /// New https URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// New event filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    /// Pause or resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

impl Fields for WebhookCreateParams {
    const TABLE: &'static Table = &Table {
        fields: &[Field::req("url", Kind::Str), Field::opt("events", STRINGS)],
        keep_others: false,
    };
}

impl Fields for WebhookUpdateParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::opt("url", Kind::Str),
            Field::opt("events", STRINGS),
            Field::opt("disabled", Kind::Bool),
        ],
        keep_others: false,
    };
}

/// A saved endpoint (`object: webhook_endpoint`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    /// `whe_...`.
    pub id: String,
    /// Destination.
    #[serde(default)]
    pub url: Option<String>,
    /// Event filter.
    #[serde(default)]
    pub events: Option<Vec<String>>,
    /// Paused.
    #[serde(default)]
    pub disabled: Option<bool>,
    /// Creation time.
    #[serde(default)]
    pub created_at: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One delivery attempt (`object: webhook_delivery`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// Endpoint.
    #[serde(default)]
    pub endpoint_id: Option<String>,
    /// Run id.
    #[serde(default)]
    pub processing_id: Option<String>,
    /// Event id.
    #[serde(default)]
    pub event_id: Option<String>,
    /// Event type.
    #[serde(rename = "type", default)]
    pub event_type: Option<String>,
    /// Attempt number.
    #[serde(default)]
    pub attempt: Option<u32>,
    /// Status the receiver answered.
    #[serde(default)]
    pub response_status: Option<u16>,
    /// Whether it was 2xx.
    #[serde(default)]
    pub ok: Option<bool>,
    /// Time.
    #[serde(default)]
    pub at: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Endpoint list, newest first.
pub type WebhookList = ObjectList<WebhookEndpoint>;
/// The 50 most recent deliveries, newest first.
pub type DeliveryList = ObjectList<WebhookDelivery>;

fn check_events(events: Option<&[Value]>) -> Result<(), ApiError> {
    for (i, e) in events.unwrap_or(&[]).iter().enumerate() {
        validate::required_text(&format!("events[{i}]"), e.as_str().unwrap_or(""))?;
    }
    Ok(())
}

#[inline(never)]
fn path(id: &str) -> Result<String, ApiError> {
    Ok(format!("/v1/webhooks/{}", segment("id", id)?))
}

/// `POST /v1/webhooks`.
///
/// # Errors
/// As [`create_params`].
pub fn create(params: &WebhookCreateParams) -> Result<RequestSpec, ApiError> {
    create_params(Params::from_typed(params)?)
}

/// `POST /v1/webhooks` of checked params.
///
/// # Errors
/// `invalid_request` when `url` is not an absolute https URL or an event type is blank.
pub fn create_params(params: Params<WebhookCreateParams>) -> Result<RequestSpec, ApiError> {
    validate::https_url("url", params.str("url").unwrap_or(""))?;
    check_events(params.list("events"))?;
    Ok(params.into_body(RequestSpec::api(Method::Post, "/v1/webhooks".to_owned())))
}

/// `GET /v1/webhooks`.
pub fn list() -> RequestSpec {
    RequestSpec::api(Method::Get, "/v1/webhooks".to_owned())
}

/// `GET /v1/webhooks/:id`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn retrieve(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(Method::Get, path(id)?))
}

/// `PATCH /v1/webhooks/:id`.
///
/// # Errors
/// As [`update_params`].
pub fn update(id: &str, params: &WebhookUpdateParams) -> Result<RequestSpec, ApiError> {
    update_params(id, Params::from_typed(params)?)
}

/// `PATCH /v1/webhooks/:id` of checked params.
///
/// # Errors
/// `invalid_request` for an empty id, a non-https url, a blank event, or no field at all.
pub fn update_params(
    id: &str,
    params: Params<WebhookUpdateParams>,
) -> Result<RequestSpec, ApiError> {
    let p = path(id)?;
    if let Some(u) = params.str("url") {
        validate::https_url("url", u)?;
    }
    check_events(params.list("events"))?;
    if !params.has("url") && !params.has("events") && !params.has("disabled") {
        return Err(ApiError::validation(
            "invalid_request",
            "body",
            "give at least one of url, events, disabled",
        ));
    }
    Ok(params.into_body(RequestSpec::api(Method::Patch, p)))
}

/// `DELETE /v1/webhooks/:id` (204).
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn delete(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(Method::Delete, path(id)?).expecting(ResponseKind::NoContent))
}

/// `GET /v1/webhooks/:id/deliveries`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn deliveries(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Get,
        format!("{}/deliveries", path(id)?),
    ))
}

/// `GET /v1/webhooks/jwks.json`: no authentication, so no key is sent.
pub fn jwks() -> RequestSpec {
    let mut spec = RequestSpec::api(Method::Get, "/v1/webhooks/jwks.json".to_owned());
    spec.auth = false;
    spec
}
