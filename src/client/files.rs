//! Registered files: create by URL, the upload plan (register `{name, mimeType}` -> `uploadUrl`,
//! then `PUT` the bytes with the identical Content-Type and no Authorization header), read, and
//! the `waitUntilReady` planner.

use super::error::{ApiError, ErrorKind};
use super::params::{Field, Fields, Kind, Params, Table};
use super::polling::PollPlanner;
use super::request::{segment, Method, RequestSpec, ResponseKind, Target};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Body of a registration by URL (the source must serve a Content-Length).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct FileCreateParams {
    /// Source URL.
    pub url: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Fields for FileCreateParams {
    const TABLE: &'static Table = &Table {
        fields: &[Field::req("url", Kind::Str), Field::opt("name", Kind::Str)],
        keep_others: false,
    };
}

/// A registered file. Only `id` and `status` are shown in the spec; `ready` is the state to wait for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    /// File id.
    pub id: String,
    /// Status (`ready` when usable).
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub status: Option<String>,
    /// Upload address of a `{name, mimeType}` registration, valid 15 minutes.
    #[serde(default)]
    pub upload_url: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `POST /v1/files` with `{url, name?}`.
///
/// # Errors
/// As [`create_params`].
pub fn create(params: &FileCreateParams) -> Result<RequestSpec, ApiError> {
    create_params(Params::from_typed(params)?)
}

/// `POST /v1/files` with `{url, name?}`, of checked params.
///
/// # Errors
/// `invalid_request` when `url` is not an absolute http(s) URL or `name` is blank.
pub fn create_params(params: Params<FileCreateParams>) -> Result<RequestSpec, ApiError> {
    if super::url::origin(params.str("url").unwrap_or("")).is_none() {
        return Err(ApiError::validation(
            "invalid_request",
            "url",
            "must be an absolute http(s) URL",
        ));
    }
    if let Some(n) = params.str("name") {
        validate::required_text("name", n)?;
    }
    Ok(params.into_body(RequestSpec::api(Method::Post, "/v1/files".to_owned())))
}

/// Step 1 of an upload: `POST /v1/files` with `{name, mimeType}`; the answer has `uploadUrl`.
///
/// # Errors
/// `invalid_request` when `name` or `mimeType` is blank, or the mime type holds characters a
/// header cannot carry (it is sent again as the PUT's Content-Type).
pub fn register_upload(name: &str, mime_type: &str) -> Result<RequestSpec, ApiError> {
    validate::required_text("name", name)?;
    check_mime(mime_type)?;
    Ok(
        RequestSpec::api(Method::Post, "/v1/files".to_owned()).with_body(Value::Object(object(&[
            ("name", name),
            ("mimeType", mime_type),
        ]))),
    )
}

/// An object of string members.
fn object(members: &[(&str, &str)]) -> Map<String, Value> {
    let mut map = Map::new();
    for (name, value) in members {
        map.insert((*name).to_owned(), Value::from(*value));
    }
    map
}

fn check_mime(mime_type: &str) -> Result<(), ApiError> {
    validate::required_text("mimeType", mime_type)?;
    if !mime_type.bytes().all(|b| (0x20..=0x7e).contains(&b)) || !mime_type.contains('/') {
        return Err(ApiError::validation(
            "invalid_request",
            "mimeType",
            "must be a media type like application/pdf",
        ));
    }
    Ok(())
}

/// Reads `uploadUrl` from the registration answer.
///
/// # Errors
/// `unexpected_shape` when the answer has no `uploadUrl` string.
pub fn upload_url(registration: &Value) -> Result<String, ApiError> {
    registration
        .get("uploadUrl")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            ApiError::new(
                ErrorKind::InvalidResponse,
                "unexpected_shape",
                "the registration answer has no uploadUrl",
            )
        })
}

/// Step 2 of an upload: `PUT` of the bytes to `upload_url`, `Content-Type: mime_type`, never
/// the Authorization header (even if the upload host is the API's own). The request has
/// `raw_body: true`: the caller attaches the bytes. Any 2xx answer is success.
///
/// # Errors
/// `invalid_request` when the URL is not an absolute http(s) URL or the mime type is invalid.
pub fn upload_put(upload_url: &str, mime_type: &str) -> Result<RequestSpec, ApiError> {
    if super::url::origin(upload_url).is_none() {
        return Err(ApiError::validation(
            "invalid_request",
            "uploadUrl",
            "must be an absolute http(s) URL",
        ));
    }
    check_mime(mime_type)?;
    let mut spec = RequestSpec::api(Method::Put, String::new()).expecting(ResponseKind::Opaque);
    spec.target = Target::External(upload_url.to_owned());
    spec.auth = false;
    spec.raw_body_content_type = Some(mime_type.to_owned());
    Ok(spec)
}

/// `GET /v1/files/:id`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn retrieve(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Get,
        format!("/v1/files/{}", segment("id", id)?),
    ))
}

/// Step 3 of an upload, and `files.waitUntilReady`: polls the file until `ready`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn wait_until_ready(id: &str) -> Result<PollPlanner, ApiError> {
    PollPlanner::file(id)
}
