//! Typed API errors: one kind per status class, the service's stable `code`, and everything a
//! caller needs to decide what to do next. Errors never carry the API key or a request body.

use super::retry::{self, header, RetryClass};
use serde_json::{Map, Value};
use std::fmt;

/// The class of an error. Each maps to one exported JS error class ([`ErrorKind::js_class_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// 400.
    BadRequest,
    /// 401.
    Authentication,
    /// 402: the organization is out of credits; never retried.
    CreditsExhausted,
    /// 403.
    PermissionDenied,
    /// 404.
    NotFound,
    /// 409.
    Conflict,
    /// 410: the run passed its ttl; terminal.
    Gone,
    /// 422.
    UnprocessableEntity,
    /// 429.
    RateLimit,
    /// Any 5xx.
    InternalServer,
    /// Any other status (3xx on a JSON route, 405, 413, ...): the base `APIError` class.
    OtherStatus,
    /// The connection failed before an answer arrived.
    Connection,
    /// An attempt exceeded its timeout.
    Timeout,
    /// The caller aborted the call.
    UserAbort,
    /// The input was rejected before any request was spent (same code the service would give).
    Validation,
    /// A success status whose body could not be decoded as the route promises.
    InvalidResponse,
}

impl ErrorKind {
    /// The kind of an HTTP error status.
    pub fn from_status(status: u16) -> Self {
        match status {
            400 => Self::BadRequest,
            401 => Self::Authentication,
            402 => Self::CreditsExhausted,
            403 => Self::PermissionDenied,
            404 => Self::NotFound,
            409 => Self::Conflict,
            410 => Self::Gone,
            422 => Self::UnprocessableEntity,
            429 => Self::RateLimit,
            500..=599 => Self::InternalServer,
            _ => Self::OtherStatus,
        }
    }

    /// The name of the JS `Error` subclass for this kind. Stable; the wasm layer binds on it.
    /// A pre-flight [`ErrorKind::Validation`] error uses `BadRequestError`, the class the service's
    /// own 400 would have produced, so one `catch` handles both.
    pub fn js_class_name(self) -> &'static str {
        match self {
            Self::BadRequest | Self::Validation => "BadRequestError",
            Self::Authentication => "AuthenticationError",
            Self::CreditsExhausted => "CreditsExhaustedError",
            Self::PermissionDenied => "PermissionDeniedError",
            Self::NotFound => "NotFoundError",
            Self::Conflict => "ConflictError",
            Self::Gone => "GoneError",
            Self::UnprocessableEntity => "UnprocessableEntityError",
            Self::RateLimit => "RateLimitError",
            Self::InternalServer => "InternalServerError",
            Self::OtherStatus | Self::InvalidResponse => "APIError",
            Self::Connection => "APIConnectionError",
            Self::Timeout => "APITimeoutError",
            Self::UserAbort => "APIUserAbortError",
        }
    }

    /// The code used when an error answer carries none.
    pub(crate) fn default_code(self) -> &'static str {
        match self {
            Self::BadRequest | Self::Validation => "invalid_request",
            Self::Authentication => "unauthorized",
            Self::CreditsExhausted => "credits_exhausted",
            Self::PermissionDenied => "permission_denied",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Gone => "expired",
            Self::UnprocessableEntity => "unprocessable_entity",
            Self::RateLimit => "rate_limited",
            Self::InternalServer => "internal_error",
            Self::OtherStatus => "http_error",
            Self::Connection => "connection_error",
            Self::Timeout => "timeout",
            Self::UserAbort => "aborted",
            Self::InvalidResponse => "invalid_response",
        }
    }
}

/// An error of a call. Fields mirror the JS error: `status`, `code`, `message`, `retryable`,
/// `requestId`, `docUrl`, `headers`, `retryAfter`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// The class.
    pub kind: ErrorKind,
    /// HTTP status; `None` for connection, timeout and abort errors. Validation errors carry the
    /// 400 the service would have answered.
    pub status: Option<u16>,
    /// Stable snake_case code (the service's own, unknown ones kept verbatim).
    pub code: String,
    /// Human text; a field path prefixes it when a field is at fault. Never parse it.
    pub message: String,
    /// Whether the retry policy considers this error retryable.
    pub retryable: bool,
    /// The service's request id (body `requestId` or header `x-request-id`).
    pub request_id: Option<String>,
    /// Link to the documentation of the rule that was broken (an absolute http(s) URL; any other `docUrl` of the
    /// answer, such as a `javascript:` URL a page might render as a link, is dropped).
    pub doc_url: Option<String>,
    /// Response headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The server-requested delay (`retry-after-ms` or `Retry-After`), in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// A write that is not replay-safe may have been applied: the request went out and no answer came back
    /// (connection lost after sending, timeout). It was not sent again; read the resource (or list) to learn whether
    /// it happened. JS: `outcomeUnknown`.
    pub outcome_unknown: bool,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(status) = self.status {
            write!(f, "{status} ")?;
        }
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request {id})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// A bare error of `kind` with `code` and `message`, no status or headers.
    #[inline(never)]
    pub fn new(kind: ErrorKind, code: &str, message: impl Into<String>) -> Self {
        Self {
            kind,
            status: None,
            code: code.to_owned(),
            message: message.into(),
            retryable: false,
            request_id: None,
            doc_url: None,
            headers: Vec::new(),
            retry_after_ms: None,
            outcome_unknown: false,
        }
    }

    /// A pre-flight validation error: `path: message`, status 400, not retryable.
    pub fn validation(code: &str, path: &str, message: &str) -> Self {
        let text = if path.is_empty() {
            message.to_owned()
        } else {
            format!("{path}: {message}")
        };
        let mut err = Self::new(ErrorKind::Validation, code, text);
        err.status = Some(400);
        err
    }

    /// An invalid client setting (`invalid_config`).
    pub fn invalid_config(field: &str, message: &str) -> Self {
        Self::validation("invalid_config", field, message)
    }

    /// The JS class name of this error.
    pub fn js_class_name(&self) -> &'static str {
        self.kind.js_class_name()
    }

    /// Interprets an error answer. Understands the `/v1` envelope
    /// `{code, message, retryable, requestId, docUrl}`, the older routes' `{error: code, ...}`
    /// (and `{error: {code|type, message}}`), and bodies that are not JSON at all, which give
    /// code `non_json_body` and a message naming the content type and length, never the body.
    /// `now_ms` (epoch milliseconds) is needed only for a `Retry-After` given as an HTTP date.
    pub fn from_response(
        status: u16,
        headers: &[(String, String)],
        body: &str,
        now_ms: Option<u64>,
    ) -> Self {
        Self::from_answer(status, headers, body, now_ms, RetryClass::Idempotent)
    }

    /// [`ApiError::from_response`] for a route of retry class `class`: a write that is not replay-safe is retryable
    /// only when the answer says nothing was done ([`retry::is_retryable_for`]).
    pub fn from_answer(
        status: u16,
        headers: &[(String, String)],
        body: &str,
        now_ms: Option<u64>,
        class: RetryClass,
    ) -> Self {
        let kind = ErrorKind::from_status(status);
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
            .collect();
        let mut parsed = ParsedBody::default();
        let trimmed = body.trim();
        if trimmed.is_empty() {
            parsed.message = Some(format!("HTTP {status} with an empty body"));
        } else {
            match crate::json::parse_value_exact(trimmed) {
                Some(Value::Object(map)) => parsed = ParsedBody::from_map(&map),
                Some(_) => {
                    parsed.message = Some(format!("HTTP {status} with an unexpected JSON body"));
                }
                None => {
                    let content_type = header(&headers, "content-type").unwrap_or("unknown");
                    parsed.code = Some("non_json_body".to_owned());
                    parsed.message = Some(format!(
                        "HTTP {status} answered with a body that is not JSON (content-type {}, {} bytes)",
                        sanitize(content_type, 80),
                        body.len()
                    ));
                }
            }
        }
        let code = parsed
            .code
            .unwrap_or_else(|| kind.default_code().to_owned());
        let retryable = retry::is_retryable_for(class, status, &code, parsed.retryable);
        let request_id = parsed
            .request_id
            .or_else(|| header(&headers, "x-request-id").map(str::to_owned));
        let retry_after_ms = retry::parse_retry_after(&headers, now_ms);
        Self {
            kind,
            status: Some(status),
            message: parsed
                .message
                .unwrap_or_else(|| format!("HTTP {status} ({code})")),
            code,
            retryable,
            request_id,
            doc_url: parsed.doc_url,
            headers,
            retry_after_ms,
            outcome_unknown: false,
        }
    }
}

/// Keeps at most `max` characters, replacing control characters.
fn sanitize(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[derive(Default)]
struct ParsedBody {
    code: Option<String>,
    message: Option<String>,
    retryable: Option<bool>,
    request_id: Option<String>,
    doc_url: Option<String>,
}

impl ParsedBody {
    fn from_map(map: &Map<String, Value>) -> Self {
        let text = |m: &Map<String, Value>, key: &str| {
            m.get(key)
                .and_then(Value::as_str)
                .map(|s| sanitize(s, 2000))
        };
        let mut out = Self {
            retryable: map.get("retryable").and_then(Value::as_bool),
            request_id: text(map, "requestId").or_else(|| text(map, "request_id")),
            doc_url: text(map, "docUrl").filter(|u| super::url::origin(u).is_some()),
            ..Self::default()
        };
        if let Some(code) = text(map, "code") {
            out.code = Some(code);
            out.message = text(map, "message");
        } else {
            match map.get("error") {
                Some(Value::String(code)) => {
                    out.code = Some(sanitize(code, 200));
                    out.message = text(map, "message").or_else(|| text(map, "detail"));
                    if out.message.is_none() {
                        out.message = detail_summary(map);
                    }
                }
                Some(Value::Object(inner)) => {
                    out.code = text(inner, "code").or_else(|| text(inner, "type"));
                    out.message = text(inner, "message");
                }
                _ => out.message = text(map, "message"),
            }
        }
        out
    }
}

/// For `{error: code, fields: [...]}`-style answers: names the other keys so the detail is not lost.
fn detail_summary(map: &Map<String, Value>) -> Option<String> {
    let parts: Vec<String> = map
        .iter()
        .filter(|(k, _)| k.as_str() != "error")
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={}", sanitize(s, 200)),
            other => format!("{k}={}", sanitize(&crate::json::to_text(other), 200)),
        })
        .collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join(", "))
    }
}
