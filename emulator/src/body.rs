//! Request body and query helpers that answer with the spec's field-path errors.

use crate::error::{ApiError, ApiResult};
use crate::state::WebhookRef;
use serde_json::{Map, Value};

/// Largest request body of an API route (JSON): the spec's largest, an approval's `params` plus `files`, stays under
/// 1 MiB. A larger body is 413 `payload_too_large` (the spec's code), unread past this.
pub const MAX_REQUEST_BODY: usize = 4 * 1024 * 1024;

/// Parses a JSON object body (an empty body is `{}`).
///
/// # Errors
/// 400 `invalid_request` for invalid JSON or a non-object.
pub fn object(bytes: &[u8]) -> ApiResult<Map<String, Value>> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::field("body", "must be a JSON object")),
        Err(e) => Err(ApiError::field("body", &format!("is not valid JSON ({e})"))),
    }
}

/// An optional string field.
///
/// # Errors
/// 400 when present and not a string.
pub fn opt_str(b: &Map<String, Value>, k: &str) -> ApiResult<Option<String>> {
    match b.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::field(k, "must be a string")),
    }
}

/// Decoded `key=value` query pairs.
pub fn query_pairs(q: Option<&str>) -> Vec<(String, String)> {
    q.map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// First value of a query key.
pub fn q_get(q: &[(String, String)], k: &str) -> Option<String> {
    q.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone())
}

/// The `wait` query parameter, 0 to 120 seconds.
///
/// # Errors
/// 400 `invalid_request` naming `wait`.
pub fn wait(q: &[(String, String)], default: u64) -> ApiResult<u64> {
    match q_get(q, "wait") {
        None => Ok(default),
        Some(v) => v.parse::<u64>().ok().filter(|w| *w <= 120).ok_or_else(|| {
            ApiError::field("wait", "must be a whole number of seconds from 0 to 120")
        }),
    }
}

/// Optional `metadata`: an object of at most 10 KB serialized.
///
/// # Errors
/// 400 naming `metadata`.
pub fn metadata(b: &Map<String, Value>) -> ApiResult<Option<Value>> {
    match b.get("metadata") {
        None | Some(Value::Null) => Ok(None),
        Some(m @ Value::Object(_)) => {
            if m.to_string().len() > 10 * 1024 {
                Err(ApiError::field("metadata", "must be at most 10 KB"))
            } else {
                Ok(Some(m.clone()))
            }
        }
        Some(_) => Err(ApiError::field("metadata", "must be an object")),
    }
}

/// Whether a webhook URL is acceptable: https, or http on loopback with `--allow-http-webhooks`.
pub fn check_webhook_url(url: &str, allow_http: bool, path: &str) -> ApiResult<()> {
    let uri: axum::http::Uri = url
        .parse()
        .map_err(|_| ApiError::field(path, "must be an absolute URL"))?;
    let host = uri.host().unwrap_or("");
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(()),
        Some("http") if allow_http && is_loopback(host) => Ok(()),
        Some("http") if allow_http => Err(ApiError::field(
            path,
            "http is accepted only on loopback (127.0.0.1, ::1, localhost)",
        )),
        _ => Err(ApiError::field(path, "must be an https URL")),
    }
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Optional `webhook`: `{url}` or `{id}`.
///
/// # Errors
/// 400 for a bad shape or URL.
pub fn webhook(b: &Map<String, Value>, allow_http: bool) -> ApiResult<Option<WebhookRef>> {
    let Some(w) = b.get("webhook").filter(|w| !w.is_null()) else {
        return Ok(None);
    };
    let o = w
        .as_object()
        .ok_or_else(|| ApiError::field("webhook", "must be {url} or {id}"))?;
    match (o.get("url"), o.get("id")) {
        (Some(Value::String(u)), None) => {
            check_webhook_url(u, allow_http, "webhook.url")?;
            Ok(Some(WebhookRef::Url(u.clone())))
        }
        (None, Some(Value::String(id))) => Ok(Some(WebhookRef::Id(id.clone()))),
        _ => Err(ApiError::field("webhook", "must be {url} or {id}")),
    }
}

/// Idempotency key from headers.
pub fn idempotency_key(h: &axum::http::HeaderMap) -> Option<String> {
    h.get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty())
        .map(String::from)
}
