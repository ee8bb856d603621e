//! `POST /v1/realtime/transcriptions`: a live transcription session. The answer carries a
//! `wss://` address with a single-use ticket; the ticket is a secret, so [`RealtimeSession`]'s
//! `Debug` never prints the address's query, and no error about the answer holds the address.
//!
//! The spec does not name the field holding the address: [`session_url`] reads `url`, else
//! `wsUrl`, and refuses an answer without a `ws(s)://` address with `unexpected_shape`; the
//! method's value then has `url` set to it (the flow's [`super::Goal::RealtimeSession`]). Every
//! other field is kept as the service sent it, `wsUrl` included: code that read `wsUrl` before
//! keeps working, and the value stays what the service answered plus `url`.

use super::error::{ApiError, ErrorKind};
use super::params::{Field, Fields, Kind, Params, Table};
use super::request::{Method, RequestSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Body of a session creation. Fields beyond `finalPass` are not shown in the spec and pass
/// through `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RealtimeSessionParams {
    /// Keep a stored diarized transcript after close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_pass: Option<bool>,
    /// Further fields, sent as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Fields for RealtimeSessionParams {
    const TABLE: &'static Table = &Table {
        fields: &[Field::opt("finalPass", Kind::Bool)],
        keep_others: true,
    };
}

/// A live session: its `wss://` address carries a single-use ticket (a secret). The field holding the address is
/// not named by the spec; the client reads `url` (or `wsUrl`), refuses an answer without one, and keeps every other
/// field.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RealtimeSession {
    /// Session id.
    #[serde(default)]
    pub id: Option<String>,
    /// The session's `ws://` / `wss://` address with its single-use ticket: always present (the client refuses an
    /// answer without one with `unexpected_shape`, and takes it from `wsUrl` when the service names it so). A secret:
    /// hand it to one browser or `RealtimeTranscriber`, never log it.
    pub url: String,
    /// Fields this version does not know (may include the ticket: never printed).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for RealtimeSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeSession")
            .field("id", &self.id)
            .field("url", &super::url::path_for_log(&self.url))
            .field("extra_keys", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `POST /v1/realtime/transcriptions`.
///
/// # Errors
/// Never fails today; the `Result` keeps the signature uniform with the other builders.
pub fn create_session(params: &RealtimeSessionParams) -> Result<RequestSpec, ApiError> {
    create_session_params(Params::from_typed(params)?)
}

/// `POST /v1/realtime/transcriptions` of checked params.
///
/// # Errors
/// Never fails today; the `Result` keeps the signature uniform with the other builders.
pub fn create_session_params(
    params: Params<RealtimeSessionParams>,
) -> Result<RequestSpec, ApiError> {
    Ok(params.into_body(RequestSpec::api(
        Method::Post,
        "/v1/realtime/transcriptions".to_owned(),
    )))
}

/// The address of a session answer: its `url`, else (when `url` is absent or `null`) its `wsUrl`; it must be a string
/// holding an absolute `ws://` or `wss://` URL ([`super::url::is_websocket_url`]). A `url` that is present but not
/// such a URL is refused, never passed over for `wsUrl`.
///
/// # Errors
/// `unexpected_shape` ([`ErrorKind::InvalidResponse`]) when the answer has no such address. The message names the
/// fields, never their values: the address carries a secret ticket.
pub fn session_url(answer: &Value) -> Result<String, ApiError> {
    let (name, found) = match answer.get("url") {
        Some(url) if !url.is_null() => ("url", Some(url)),
        _ => ("wsUrl", answer.get("wsUrl").filter(|u| !u.is_null())),
    };
    let refused = |detail: &str| {
        Err(ApiError::new(
            ErrorKind::InvalidResponse,
            "unexpected_shape",
            format!("the realtime session answer {detail}"),
        ))
    };
    match found {
        None => refused("has no url (nor wsUrl)"),
        Some(Value::String(url)) if super::url::is_websocket_url(url) => Ok(url.clone()),
        Some(Value::String(_)) => {
            refused(&format!("has a {name} that is not a ws:// or wss:// URL"))
        }
        Some(_) => refused(&format!("has a {name} that is not a string")),
    }
}
