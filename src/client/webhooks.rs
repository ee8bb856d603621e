//! Webhook endpoint management, delivery history, and the public key set.

use super::common::ObjectList;
use super::error::ApiError;
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

fn check_events(events: Option<&Vec<String>>) -> Result<(), ApiError> {
    if let Some(events) = events {
        for (i, e) in events.iter().enumerate() {
            validate::required_text(&format!("events[{i}]"), e)?;
        }
    }
    Ok(())
}

fn path(id: &str) -> Result<String, ApiError> {
    Ok(format!("/v1/webhooks/{}", segment("id", id)?))
}

/// `POST /v1/webhooks`.
///
/// # Errors
/// `invalid_request` when `url` is not an absolute https URL or an event type is blank.
pub fn create(params: &WebhookCreateParams) -> Result<RequestSpec, ApiError> {
    validate::https_url("url", &params.url)?;
    check_events(params.events.as_ref())?;
    Ok(RequestSpec::api(Method::Post, "/v1/webhooks".to_owned())
        .with_body(super::common::to_body(params)?))
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
/// `invalid_request` for an empty id, a non-https url, a blank event, or no field at all.
pub fn update(id: &str, params: &WebhookUpdateParams) -> Result<RequestSpec, ApiError> {
    let p = path(id)?;
    if let Some(u) = &params.url {
        validate::https_url("url", u)?;
    }
    check_events(params.events.as_ref())?;
    if params.url.is_none() && params.events.is_none() && params.disabled.is_none() {
        return Err(ApiError::validation(
            "invalid_request",
            "body",
            "give at least one of url, events, disabled",
        ));
    }
    Ok(RequestSpec::api(Method::Patch, p).with_body(super::common::to_body(params)?))
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
