//! Files: registration by URL or by upload address, the upload PUT, signed downloads, and file references.

use crate::app::{App, Shared};
use crate::error::{ApiError, ApiResult};
use crate::host::FetchError;
use crate::state::{FileRec, State};
use crate::util::{b64url, iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Upload address validity: 15 minutes.
pub const UPLOAD_VALIDITY_MS: i64 = 15 * 60 * 1000;
/// Output URL validity: one hour.
pub const DOWNLOAD_VALIDITY_MS: i64 = 3600 * 1000;
/// Time a fetched or uploaded file spends `processing` before `ready` (scaled).
pub const PREPARE_MS: f64 = 1000.0;

/// Status as of `now` (`processing` turns `ready` at `ready_ms`).
pub fn file_status(f: &FileRec, now: i64) -> &'static str {
    match f.status.as_str() {
        "processing" if now >= f.ready_ms => "ready",
        "processing" => "processing",
        "awaiting_upload" => "awaiting_upload",
        "failed" => "failed",
        _ => "ready",
    }
}

/// Inserts a produced file (already `ready`) and returns its id.
pub fn make_file(
    st: &mut State,
    org: &str,
    name: &str,
    mime: &str,
    bytes: Vec<u8>,
    now: i64,
    run_id: Option<String>,
) -> String {
    let id = new_id("file_");
    st.files.insert(
        id.clone(),
        FileRec {
            id: id.clone(),
            org: org.into(),
            name: name.into(),
            mime_type: mime.into(),
            bytes,
            status: "ready".into(),
            created_ms: now,
            ready_ms: now,
            source_url: None,
            upload_token: None,
            upload_expires_ms: 0,
            run_id,
        },
    );
    id
}

fn sig(app: &App, file_id: &str, expires: i64) -> String {
    let mut h = Sha256::new();
    h.update(app.signer.secret());
    h.update(file_id.as_bytes());
    h.update(expires.to_le_bytes());
    b64url(h.finalize().get(..16).unwrap_or_default())
}

/// A signed download URL valid one hour.
pub fn download_url(app: &App, file_id: &str) -> String {
    let expires = app.now_ms() + DOWNLOAD_VALIDITY_MS;
    format!(
        "{}/downloads/{file_id}?expires={expires}&sig={}",
        app.base_url,
        sig(app, file_id, expires)
    )
}

/// Served entry of an output file: `{id, name, mimeType, size, url}`.
pub fn file_entry(app: &App, st: &State, id: &str) -> Value {
    match st.files.get(id) {
        Some(f) => {
            json!({"id": f.id, "name": f.name, "mimeType": f.mime_type, "size": f.bytes.len(), "url": download_url(app, id)})
        }
        None => json!({"id": id}),
    }
}

/// The served file record.
pub fn file_json(app: &App, f: &FileRec) -> Value {
    let now = app.now_ms();
    let mut v = json!({
        "object": "file", "id": f.id, "name": f.name, "mimeType": f.mime_type,
        "size": f.bytes.len(), "status": file_status(f, now), "createdAt": iso(f.created_ms),
    });
    if let (Some(o), Some(t)) = (v.as_object_mut(), &f.upload_token) {
        if f.status == "awaiting_upload" {
            o.insert(
                "uploadUrl".into(),
                format!("{}/uploads/{t}", app.base_url).into(),
            );
            o.insert("uploadExpiresAt".into(), iso(f.upload_expires_ms).into());
        }
    }
    if let (Some(o), Some(u)) = (v.as_object_mut(), &f.source_url) {
        o.insert("url".into(), u.clone().into());
    }
    v
}

/// Guesses a MIME type from a header value, a name and the bytes.
pub fn sniff_mime(header: Option<&str>, name: &str, bytes: &[u8]) -> String {
    let h = header.map(|h| {
        h.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    if let Some(h) = h.filter(|h| !h.is_empty() && h != "application/octet-stream") {
        return h;
    }
    let lower = name.to_ascii_lowercase();
    if bytes.starts_with(b"%PDF") || lower.ends_with(".pdf") {
        "application/pdf".into()
    } else if lower.ends_with(".md") || lower.ends_with(".markdown") {
        "text/markdown".into()
    } else if lower.ends_with(".txt") || std::str::from_utf8(bytes).is_ok() {
        "text/plain".into()
    } else {
        "application/octet-stream".into()
    }
}

fn name_from_url(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or("document")
        .to_string()
}

/// Fetches a document by URL (`path` names the field for errors). Returns `(bytes, mime, name)`.
///
/// # Errors
/// 422 `file_fetch_failed` (unreachable, non-2xx, empty), 502 `file_upload_failed` (no Content-Length),
/// 422 `file_ineligible` (over 25 MiB).
pub async fn fetch_document(
    app: &App,
    url: &str,
    path: &str,
) -> ApiResult<(Vec<u8>, String, String)> {
    let fetch_failed = |m: String| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "file_fetch_failed",
            format!("{path}: {m}"),
        )
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ApiError::field(path, "must be an http or https URL"));
    }
    let res = app
        .host
        .send(
            axum::http::Method::GET,
            url,
            &[("user-agent", "docauto-emulator".into())],
            Bytes::new(),
            Duration::from_secs(30),
        )
        .await;
    let f = match res {
        Ok(f) => f,
        Err(FetchError::TooLarge) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "file_ineligible",
                format!("{path}: the document is larger than 25 MiB"),
            ))
        }
        Err(e) => {
            return Err(fetch_failed(format!(
                "the source could not be fetched ({e})"
            )))
        }
    };
    if !(200..300).contains(&f.status) {
        return Err(fetch_failed(format!(
            "the source answered HTTP {}",
            f.status
        )));
    }
    if f.body.is_empty() {
        return Err(fetch_failed("the source sent an empty body".into()));
    }
    if !f.headers.contains_key(axum::http::header::CONTENT_LENGTH) {
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "file_upload_failed",
            format!("{path}: the source did not send a Content-Length, so the bytes could not be stored"),
        ));
    }
    let name = name_from_url(url);
    let ct = f
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let mime = sniff_mime(ct, &name, &f.body);
    Ok((f.body.to_vec(), mime, name))
}

/// Resolves a file reference (`{url, name?, processing?}` or `{id}`) to a file id, fetching and registering by URL.
///
/// # Errors
/// 400 for a malformed reference, 404 for an unknown id, the fetch errors of [`fetch_document`].
pub async fn resolve_ref(
    app: &App,
    org: &str,
    v: &Value,
    path: &str,
    run_id: Option<&str>,
) -> ApiResult<String> {
    let Some(o) = v.as_object() else {
        return Err(ApiError::field(path, "must be an object {url} or {id}"));
    };
    if let Some(p) = o.get("processing") {
        let ok = p.as_str().is_some_and(|p| {
            ["auto", "ocr", "simple", "transcribe", "transcribe_diarize"].contains(&p)
        });
        if !ok {
            return Err(ApiError::field(
                &format!("{path}.processing"),
                "must be auto, ocr, simple, transcribe or transcribe_diarize",
            ));
        }
    }
    match (o.get("url"), o.get("id")) {
        (Some(_), Some(_)) => Err(ApiError::field(path, "give either url or id, not both")),
        (None, Some(id)) => {
            let id = id
                .as_str()
                .ok_or_else(|| ApiError::field(&format!("{path}.id"), "must be a string"))?;
            let st = lock(&app.state);
            match st.files.get(id) {
                Some(f) if f.org == org => Ok(id.to_string()),
                _ => Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    format!("{path}.id: no such file"),
                )),
            }
        }
        (Some(url), None) => {
            let url = url
                .as_str()
                .ok_or_else(|| ApiError::field(&format!("{path}.url"), "must be a string"))?;
            let (bytes, mime, fetched_name) =
                fetch_document(app, url, &format!("{path}.url")).await?;
            let name = match o.get("name") {
                Some(n) => n
                    .as_str()
                    .ok_or_else(|| ApiError::field(&format!("{path}.name"), "must be a string"))?
                    .to_string(),
                None => fetched_name,
            };
            let now = app.now_ms();
            let ready = now + app.delay_ms(PREPARE_MS);
            let mut st = lock(&app.state);
            let id = make_file(
                &mut st,
                org,
                &name,
                &mime,
                bytes,
                now,
                run_id.map(String::from),
            );
            if let Some(f) = st.files.get_mut(&id) {
                f.status = "processing".into();
                f.ready_ms = ready;
                f.source_url = Some(url.to_string());
            }
            Ok(id)
        }
        (None, None) => Err(ApiError::field(path, "must carry url or id")),
    }
}

/// `POST /v1/files`.
pub async fn create(
    AxState(app): AxState<Shared>,
    Extension(caller): Extension<crate::auth::Caller>,
    body: Bytes,
) -> ApiResult<Response> {
    let b = crate::body::object(&body)?;
    let url = crate::body::opt_str(&b, "url")?;
    let name = crate::body::opt_str(&b, "name")?;
    let mime = crate::body::opt_str(&b, "mimeType")?;
    let now = app.now_ms();
    let rec = match (url, mime) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad(
                "give either url or {name, mimeType}, not both",
            ))
        }
        (Some(url), None) => {
            let (bytes, mime, fetched) = fetch_document(&app, &url, "url").await?;
            let now = app.now_ms();
            FileRec {
                id: new_id("file_"),
                org: caller.org.clone(),
                name: name.unwrap_or(fetched),
                mime_type: mime,
                bytes,
                status: "processing".into(),
                created_ms: now,
                ready_ms: now + app.delay_ms(PREPARE_MS),
                source_url: Some(url),
                upload_token: None,
                upload_expires_ms: 0,
                run_id: None,
            }
        }
        (None, Some(mime)) => {
            let name = name.ok_or_else(|| ApiError::field("name", "is required with mimeType"))?;
            if !mime.contains('/') {
                return Err(ApiError::field(
                    "mimeType",
                    "must be a MIME type like application/pdf",
                ));
            }
            FileRec {
                id: new_id("file_"),
                org: caller.org.clone(),
                name,
                mime_type: mime,
                bytes: Vec::new(),
                status: "awaiting_upload".into(),
                created_ms: now,
                ready_ms: i64::MAX,
                source_url: None,
                upload_token: Some(new_id("upl_")),
                upload_expires_ms: now + UPLOAD_VALIDITY_MS,
                run_id: None,
            }
        }
        (None, None) => return Err(ApiError::bad("body needs url, or name and mimeType")),
    };
    let out = file_json(&app, &rec);
    lock(&app.state).files.insert(rec.id.clone(), rec);
    Ok((StatusCode::OK, Json(out)).into_response())
}

/// `GET /v1/files/:id`.
pub async fn get(
    AxState(app): AxState<Shared>,
    Extension(caller): Extension<crate::auth::Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let st = lock(&app.state);
    match st.files.get(&id) {
        Some(f) if f.org == caller.org => Ok(Json(file_json(&app, f))),
        _ => Err(ApiError::not_found("file")),
    }
}

/// Largest upload (`PUT /uploads/:token`): the emulator's one document size limit, as for a source fetched by URL
/// ([`crate::host::MAX_BODY`], 25 MiB, over which a source is `file_ineligible`). The spec gives no maximum
/// file size ("not shown"). A larger upload is refused unread with 413 `payload_too_large`.
pub const MAX_UPLOAD_BYTES: usize = crate::host::MAX_BODY;

/// `PUT /uploads/:token` (the signed upload address; no bearer).
pub async fn upload(
    AxState(app): AxState<Shared>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let now = app.now_ms();
    let mut st = lock(&app.state);
    let fid = st
        .files
        .values()
        .find(|f| f.upload_token.as_deref() == Some(token.as_str()))
        .map(|f| f.id.clone())
        .ok_or_else(|| ApiError::not_found("upload address"))?;
    let f = st
        .files
        .get_mut(&fid)
        .ok_or_else(|| ApiError::not_found("upload address"))?;
    if f.status != "awaiting_upload" {
        return Err(ApiError::conflict(
            "already_uploaded",
            "this upload address was already used",
        ));
    }
    if now >= f.upload_expires_ms {
        return Err(ApiError::new(
            StatusCode::GONE,
            "expired",
            "the upload address is valid 15 minutes and has expired",
        ));
    }
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct != f.mime_type {
        return Err(ApiError::field(
            "content-type",
            &format!(
                "must be exactly `{}`, the mimeType given at registration",
                f.mime_type
            ),
        ));
    }
    if body.is_empty() {
        return Err(ApiError::field("body", "an upload cannot be empty"));
    }
    f.bytes = body.to_vec();
    f.status = "processing".into();
    f.ready_ms = now + app.delay_ms(PREPARE_MS);
    Ok(StatusCode::OK.into_response())
}

/// `GET /downloads/:id?expires&sig` (signed output URL; no bearer).
pub async fn download(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult<Response> {
    let q = crate::body::query_pairs(q.as_deref());
    let expires: i64 = crate::body::q_get(&q, "expires")
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let given = crate::body::q_get(&q, "sig").unwrap_or_default();
    if given != sig(&app, &id, expires) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "invalid_signature",
            "the download URL signature is invalid",
        ));
    }
    if app.now_ms() > expires {
        return Err(ApiError::new(
            StatusCode::GONE,
            "expired",
            "the download URL is valid one hour and has expired",
        ));
    }
    let st = lock(&app.state);
    let f = st
        .files
        .get(&id)
        .ok_or_else(|| ApiError::not_found("file"))?;
    if file_status(f, app.now_ms()) != "ready" {
        return Err(ApiError::conflict(
            "output_not_ready",
            "the file bytes are still settling; retry shortly",
        )
        .retryable(true));
    }
    let mut resp = f.bytes.clone().into_response();
    if let Ok(v) = f.mime_type.parse() {
        resp.headers_mut().insert("content-type", v);
    }
    Ok(resp)
}
