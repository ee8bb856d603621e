//! Request id, injected faults, bearer authentication and the per-organization rate limit.

use crate::app::{FaultKind, Shared};
use crate::error::{current_request_id, ApiError, REQUEST_ID};
use crate::util::new_id;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The authenticated caller.
#[derive(Clone)]
pub struct Caller {
    /// Organization.
    pub org: String,
    /// The key used (secret; never printed).
    pub key: String,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("org", &self.org)
            .finish_non_exhaustive()
    }
}

/// Outermost layer: assigns the request id (also `x-request-id`), and writes the state file before answering.
///
/// It also answers CORS for browsers: a preflight (`OPTIONS` with `Access-Control-Request-Method`) gets 204 before
/// any authentication, and every answer allows any origin and exposes the headers clients read.
pub async fn request_id(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let rid = new_id("req_");
    let preflight = req.method() == axum::http::Method::OPTIONS
        && req.headers().contains_key("access-control-request-method");
    let mut resp = if preflight {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            "access-control-allow-methods",
            HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        h.insert(
            "access-control-allow-headers",
            HeaderValue::from_static("authorization, content-type, idempotency-key"),
        );
        h.insert("access-control-max-age", HeaderValue::from_static("600"));
        r
    } else {
        REQUEST_ID.scope(rid.clone(), next.run(req)).await
    };
    let h = resp.headers_mut();
    h.insert("access-control-allow-origin", HeaderValue::from_static("*"));
    h.insert(
        "access-control-expose-headers",
        HeaderValue::from_static("x-request-id, idempotent-replay, retry-after, location"),
    );
    if let Ok(v) = HeaderValue::from_str(&rid) {
        resp.headers_mut().insert("x-request-id", v);
    }
    if let Err(e) = app.persist().await {
        eprintln!("docauto-emulator: {e}");
    }
    resp
}

/// `/v1` gate: faults, then authentication, then the rate limit.
pub async fn gate(State(app): State<Shared>, mut req: Request, next: Next) -> Response {
    let fault = app.next_fault();
    match fault {
        Some(FaultKind::RateLimited(secs)) => return rate_limited(secs),
        Some(FaultKind::AuthUnavailable) => return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "auth_unavailable",
            "the key validation service is temporarily unavailable; retry (the key is not revoked)",
        )
        .into_response(),
        Some(FaultKind::Internal) => {
            return ApiError::internal("injected internal error").into_response()
        }
        Some(FaultKind::Slow(ms)) => crate::host::sleep(std::time::Duration::from_millis(ms)).await,
        Some(FaultKind::AmbiguousCapability) => return ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "ambiguous_capability",
            "the saved redact action lacks a document-or-audio target; send mimeType at creation",
        )
        .into_response(),
        Some(FaultKind::Upstream(status)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            return ApiError::new(
                status,
                "upstream_error",
                "a downstream service rejected the request (injected)",
            )
            .retryable(false)
            .into_response();
        }
        _ => {}
    }
    let caller = match authenticate(&app, req.headers()) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    if !app.take_token(&caller.org) {
        return rate_limited(60);
    }
    req.extensions_mut().insert(caller);
    let resp = next.run(req).await;
    if fault == Some(FaultKind::DropAfterCommit) {
        if let Err(e) = app.persist().await {
            eprintln!("docauto-emulator: {e}");
        }
        return dropped_connection();
    }
    resp
}

fn rate_limited(secs: u64) -> Response {
    let mut e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        "request budget of the organization exhausted; nothing was started or billed",
    );
    e.retry_after = Some(secs);
    e.into_response()
}

/// A response whose body fails at once: hyper aborts the connection, the client sees no complete answer.
fn dropped_connection() -> Response {
    let stream = futures_util::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::other("injected dropped connection"))
    });
    let mut resp = Response::new(Body::from_stream(stream));
    let _ = current_request_id();
    resp.headers_mut()
        .insert("x-emulator-fault", HeaderValue::from_static("drop"));
    resp
}

fn authenticate(app: &Shared, headers: &axum::http::HeaderMap) -> Result<Caller, ApiError> {
    let unauthorized = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or malformed Authorization header; send `Authorization: Bearer <API_KEY>`",
        )
    };
    let raw = headers.get("authorization").ok_or_else(unauthorized)?;
    let raw = raw.to_str().map_err(|_| unauthorized())?;
    let (scheme, token) = raw.split_once(' ').ok_or_else(unauthorized)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer")
        || token.is_empty()
        || token.contains(char::is_whitespace)
    {
        return Err(unauthorized());
    }
    let key = app
        .config
        .keys
        .iter()
        .find(|k| k.key == token)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                "the API key is not valid",
            )
        })?;
    match &key.org {
        Some(org) => Ok(Caller {
            org: org.clone(),
            key: key.key.clone(),
        }),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "org not found",
        )),
    }
}
