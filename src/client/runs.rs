//! Capability runs: list (cursor pages, metadata filters), read with `wait`, cancel, delete,
//! keep into a space, the output redirect, and the `waitFor` planner.

use super::common::{string_enum, Metadata};
use super::error::ApiError;
use super::pagination::Page;
use super::params::{Field, Fields, Kind, Params, Table};
use super::polling::{PollPlanner, Until};
use super::request::{segment, Method, RequestSpec, ResponseKind, Target};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

string_enum! {
    /// Status of a capability run.
    RunStatus {
        /// Waiting to start.
        Queued = "queued",
        /// Working.
        Processing = "processing",
        /// Done; `output` is present.
        Processed = "processed",
        /// Failed.
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
        /// Purged at its ttl.
        Expired = "expired",
        /// A signature envelope is open.
        NeedsInput = "needs_input",
    }
}

/// Query of `GET /v1/runs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct RunListParams {
    /// Page size, 1 to 50 (server default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Status filter (any status except `queued`).
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Exclude<RunStatus, \"queued\">", optional))]
    pub status: Option<String>,
    /// Object filter (for example `extract_run`).
    #[serde(default)]
    pub object: Option<String>,
    /// Up to three `metadata.<key>=<value>` filters, in order. On the wire (from JS) an object
    /// `{key: value}`.
    #[serde(default, with = "ordered_pairs")]
    #[cfg_attr(
        test,
        ts(as = "Option<std::collections::HashMap<String, String>>", optional)
    )]
    pub metadata: Vec<(String, String)>,
}

/// Body of a keep: one of `spaceId` or `space`, or neither.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeepParams {
    /// Existing space id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_id: Option<String>,
    /// Space name (semantics beyond the name: not shown in the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<String>,
}

impl Fields for RunListParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::opt("limit", Kind::Uint),
            Field::opt("cursor", Kind::Str),
            Field::opt("status", Kind::Str),
            Field::opt("object", Kind::Str),
            Field::opt("metadata", Kind::Map(&Kind::Str)),
        ],
        keep_others: false,
    };
}

impl RunListParams {
    /// The query of checked params; `metadata` filters keep the caller's order.
    ///
    /// # Errors
    /// `invalid_request` at `limit` over 4 294 967 295 (the list's own check then names its range).
    pub fn from_params(params: &Params<Self>) -> Result<Self, ApiError> {
        let text = |name: &str| params.str(name).map(str::to_owned);
        let limit = match params.get("limit").and_then(Value::as_u64) {
            Some(n) => Some(u32::try_from(n).map_err(|_| {
                ApiError::validation("invalid_request", "limit", "must be between 1 and 50")
            })?),
            None => None,
        };
        let values = params.get("metadata");
        let metadata = params
            .names_in_order("metadata")
            .into_iter()
            .map(|name| {
                let value = values
                    .and_then(|m| m.get(&name))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                (name, value)
            })
            .collect();
        Ok(Self {
            limit,
            cursor: text("cursor"),
            status: text("status"),
            object: text("object"),
            metadata,
        })
    }
}

impl Fields for KeepParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::opt("spaceId", Kind::Str),
            Field::opt("space", Kind::Str),
        ],
        keep_others: false,
    };
}

/// A capability run (only `id` and `status` are sure; a 202 may carry only the handle).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRun {
    /// For example `extract_run`.
    #[serde(default)]
    pub object: Option<String>,
    /// `exr_`, `par_`, `rdr_`, `flr_`, `sgr_` or `plr_` prefixed id.
    pub id: String,
    /// Status.
    pub status: RunStatus,
    /// Config applied (for extract: the `schema`).
    #[serde(default)]
    #[cfg_attr(
        test,
        ts(type = "{ schema?: JsonSchema; [field: string]: unknown }", optional)
    )]
    pub config: Option<Value>,
    /// Present only at `processed`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "ExtractOutput", optional))]
    pub output: Option<Value>,
    /// `/v1/runs/<id>`.
    #[serde(default)]
    pub status_url: Option<String>,
    /// Purge deadline.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Signing envelope (sign runs).
    #[serde(default)]
    pub envelope_url: Option<String>,
    /// Caller key/values.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Metadata", optional))]
    pub metadata: Option<Metadata>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Output of an extract run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ExtractOutput {
    /// Alias of the first document's value.
    #[serde(default)]
    pub value: Option<Value>,
    /// Citations of the first document (only when grounded).
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Record<string, unknown>", optional))]
    pub citations: Option<Value>,
    /// Per-document results.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<ExtractDocument>>", optional))]
    pub documents: Vec<ExtractDocument>,
    /// Citations dropped for size.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "true", optional))]
    pub citations_omitted: Option<bool>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One document of an extract output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ExtractDocument {
    /// File id.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub file_id: Option<String>,
    /// Name.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub name: Option<String>,
    /// Status.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub status: Option<String>,
    /// Extracted value.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "JsonValue"))]
    pub value: Option<Value>,
    /// Citations keyed like the value.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Record<string, unknown>", optional))]
    pub citations: Option<Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A citation entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// File id.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub file_id: Option<String>,
    /// 0-based page.
    #[serde(default)]
    pub page: Option<u32>,
    /// Normalized box, top-left origin.
    #[serde(default)]
    #[cfg_attr(test, ts(inline))]
    pub bbox: Option<BoundingBox>,
    /// Cited text.
    #[serde(default)]
    pub text: Option<String>,
    /// 0 to 5.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Declared absent.
    #[serde(default)]
    pub not_found: Option<bool>,
    /// Fields this version does not know (audio timecodes).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{x, y, width, height}` normalized 0 to 1.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BoundingBox {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// A page of runs.
pub type RunPage = Page<CapabilityRun>;

/// `GET /v1/runs`.
///
/// # Errors
/// `invalid_request` for a limit outside 1..=50, more than 3 metadata filters, an empty filter
/// key, or the `queued` status filter (the list never holds queued runs).
pub fn list(params: &RunListParams) -> Result<RequestSpec, ApiError> {
    let mut query = Vec::new();
    if let Some(limit) = params.limit {
        if !(1..=validate::MAX_LIST_LIMIT).contains(&limit) {
            return Err(ApiError::validation(
                "invalid_request",
                "limit",
                "must be between 1 and 50",
            ));
        }
        query.push(("limit".to_owned(), limit.to_string()));
    }
    if let Some(cursor) = &params.cursor {
        validate::required_text("cursor", cursor)?;
        query.push(("cursor".to_owned(), cursor.clone()));
    }
    if let Some(status) = &params.status {
        if status == "queued" {
            return Err(ApiError::validation(
                "invalid_request",
                "status",
                "queued runs are not listed; filter on another status",
            ));
        }
        validate::required_text("status", status)?;
        query.push(("status".to_owned(), status.clone()));
    }
    if let Some(object) = &params.object {
        validate::required_text("object", object)?;
        query.push(("object".to_owned(), object.clone()));
    }
    if params.metadata.len() > validate::MAX_METADATA_FILTERS {
        return Err(ApiError::validation(
            "invalid_request",
            "metadata",
            "at most 3 metadata filters are allowed",
        ));
    }
    for (i, (key, value)) in params.metadata.iter().enumerate() {
        validate::required_text(&format!("metadata[{i}]"), key)?;
        query.push((format!("metadata.{key}"), value.clone()));
    }
    let mut spec = RequestSpec::api(Method::Get, "/v1/runs".to_owned());
    spec.query = query;
    Ok(spec)
}

/// The request of the page after `page`, or `None` at the end (see [`Page::next_cursor`]).
///
/// # Errors
/// As [`list`].
pub fn next_page<T>(
    params: &RunListParams,
    page: &Page<T>,
) -> Option<Result<RequestSpec, ApiError>> {
    let cursor = page.next_cursor(params.cursor.as_deref())?;
    let next = RunListParams {
        cursor: Some(cursor.to_owned()),
        ..params.clone()
    };
    Some(list(&next))
}

/// `GET /v1/runs/:id` (takes `wait`).
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn retrieve(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(Method::Get, format!("/v1/runs/{}", segment("id", id)?)).with_wait(None))
}

/// `POST /v1/runs/:id/cancel`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn cancel(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Post,
        format!("/v1/runs/{}/cancel", segment("id", id)?),
    )
    .with_body(Value::Object(Map::new())))
}

/// `DELETE /v1/runs/:id` (204, idempotent).
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn delete(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(
        RequestSpec::api(Method::Delete, format!("/v1/runs/{}", segment("id", id)?))
            .expecting(ResponseKind::NoContent),
    )
}

/// `POST /v1/runs/:id/keep` with one of `spaceId` or `space` (or neither).
///
/// # Errors
/// `invalid_request` for an empty id, both fields, or an empty one.
pub fn keep(id: &str, params: &KeepParams) -> Result<RequestSpec, ApiError> {
    keep_params(id, Params::from_typed(params)?)
}

/// `POST /v1/runs/:id/keep` of checked params.
///
/// # Errors
/// `invalid_request` for an empty id, both fields, or an empty one.
pub fn keep_params(id: &str, params: Params<KeepParams>) -> Result<RequestSpec, ApiError> {
    let path = format!("/v1/runs/{}/keep", segment("id", id)?);
    validate::exclusive(
        "spaceId",
        params.has("spaceId"),
        "space",
        params.has("space"),
    )?;
    if let Some(s) = params.str("spaceId") {
        validate::required_text("spaceId", s)?;
    }
    if let Some(s) = params.str("space") {
        validate::required_text("space", s)?;
    }
    Ok(params.into_body(RequestSpec::api(Method::Post, path)))
}

/// `GET /v1/runs/:id/output/:name`: the 302 is the answer; its `Location` (the signed URL) is
/// [`super::ApiResponse::location`]. The redirect is not followed. A 409 `output_not_ready` is
/// retryable and retried by the call.
///
/// # Errors
/// `invalid_request` for an empty id or name.
pub fn output_url(id: &str, name: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Get,
        format!(
            "/v1/runs/{}/output/{}",
            segment("id", id)?,
            segment("name", name)?
        ),
    )
    .expecting(ResponseKind::Redirect))
}

/// `GET` of a signed output URL: no Authorization header (another host), any body.
/// The caller reads the bytes of the answer itself.
pub fn download(signed_url: &str) -> RequestSpec {
    let mut spec = RequestSpec::api(Method::Get, String::new()).expecting(ResponseKind::Opaque);
    spec.target = Target::External(signed_url.to_owned());
    spec.auth = false;
    spec
}

/// The `runs.waitFor` planner (`wait=120` long polls).
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn wait_for(id: &str, until: Until) -> Result<PollPlanner, ApiError> {
    PollPlanner::run(id, until)
}

/// (De)serializes ordered string pairs as a JSON object, keeping the order of the input.
mod ordered_pairs {
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(pairs.len()))?;
        for (k, v) in pairs {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of string values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, String>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(PairsVisitor)
    }
}
