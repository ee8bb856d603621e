//! The `/v1` error envelope: `{code, message, retryable, requestId, docUrl}`.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Base of `docUrl` (`{docs_url}/developers/errors#<code>`).
pub const DOCS_URL: &str = "https://docs.docauto.dev";

tokio::task_local! {
    /// The id of the request being answered (set by the request-id middleware).
    pub static REQUEST_ID: String;
}

/// Current request id, or a fresh one outside a request.
pub fn current_request_id() -> String {
    REQUEST_ID
        .try_with(|s| s.clone())
        .unwrap_or_else(|_| crate::util::new_id("req_"))
}

/// An API error answered with the spec's envelope.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable snake_case code.
    pub code: &'static str,
    /// Human text, prefixed by a field path when a field is at fault.
    pub message: String,
    /// Whether a retry can succeed.
    pub retryable: bool,
    /// Whether `docUrl` is set (a specific rule was broken).
    pub doc: bool,
    /// `Retry-After` seconds for 429 answers.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A new error; `docUrl` is set for 4xx other than 401/404, `retryable` for 5xx.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        let s = status.as_u16();
        ApiError {
            status,
            code,
            message: message.into(),
            retryable: s >= 500 || s == 429,
            doc: (400..500).contains(&s) && s != 401 && s != 404 && s != 429,
            retry_after: None,
        }
    }

    /// 400 `invalid_request` for a field: message is `path: text`.
    pub fn field(path: &str, text: &str) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("{path}: {text}"),
        )
    }

    /// 400 `invalid_request` without a field.
    pub fn bad(text: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", text)
    }

    /// 404 `not_found`.
    pub fn not_found(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such {what}"),
        )
    }

    /// 409 with a code.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    /// 500 `internal_error`.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", message)
    }

    /// Overrides `retryable`.
    pub fn retryable(mut self, r: bool) -> ApiError {
        self.retryable = r;
        self
    }

    /// The JSON envelope for a request id.
    pub fn body(&self, request_id: &str) -> serde_json::Value {
        let mut v = serde_json::json!({
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "requestId": request_id,
        });
        if self.doc {
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "docUrl".into(),
                    format!("{DOCS_URL}/developers/errors#{}", self.code).into(),
                );
            }
        }
        v
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let rid = current_request_id();
        let mut resp = (self.status, axum::Json(self.body(&rid))).into_response();
        if let Some(secs) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                resp.headers_mut().insert("retry-after", v);
            }
        }
        resp
    }
}

/// Handler result.
pub type ApiResult<T> = Result<T, ApiError>;
