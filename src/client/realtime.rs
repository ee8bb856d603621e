//! `POST /v1/realtime/transcriptions`: a live transcription session. The answer carries a
//! `wss://` address with a single-use ticket; the ticket is a secret, so [`RealtimeSession`]'s
//! `Debug` never prints the address's query.

use super::error::ApiError;
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
/// not named by the spec; this type reads `url` (or `wsUrl`) and keeps every other field.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RealtimeSession {
    /// Session id.
    #[serde(default)]
    pub id: Option<String>,
    /// `wss://` address with the single-use ticket (secret).
    #[serde(default, alias = "wsUrl")]
    pub url: Option<String>,
    /// Fields this version does not know (may include the ticket: never printed).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for RealtimeSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeSession")
            .field("id", &self.id)
            .field("url", &self.url.as_deref().map(super::url::path_for_log))
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
