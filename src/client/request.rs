//! Request building: a resource function describes a route as a [`RequestSpec`]; the call driver
//! turns it into an [`HttpRequest`] for one attempt, adding the key, the idempotency key and
//! the `wait` query parameter.

use super::error::ApiError;
use super::retry::header;
pub use super::retry::RetryClass;
use super::url;
use super::ClientConfig;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// HTTP method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET.
    Get,
    /// POST (always carries an `idempotency-key`).
    Post,
    /// PUT (file upload to an `uploadUrl`).
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Method {
    /// The retry class of a route of this method when the route says nothing more: a POST is not replay-safe.
    pub fn retry_class(self) -> RetryClass {
        match self {
            Self::Post => RetryClass::NotReplaySafe,
            Self::Get | Self::Put | Self::Patch | Self::Delete => RetryClass::Idempotent,
        }
    }

    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// What a successful answer of a route looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    /// A JSON body (an empty body decodes to `null`).
    Json,
    /// 204 and no body (deletes).
    NoContent,
    /// A 3xx whose `Location` is the result; the redirect must not be followed.
    Redirect,
    /// Any body; JSON is decoded when it parses, otherwise `null` (uploads to a storage host).
    Opaque,
}

/// Where a request goes. `Debug` prints an external URL without its (signed) query.
#[derive(Clone, PartialEq, Eq)]
pub enum Target {
    /// A path under `base_url`, for example `/v1/runs/exr_1`.
    Api(String),
    /// An absolute URL given by the service (upload address, signed download URL).
    External(String),
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Api(path) => f.debug_tuple("Api").field(path).finish(),
            Self::External(u) => f
                .debug_tuple("External")
                .field(&url::path_for_log(u))
                .finish(),
        }
    }
}

/// A route-level description of a request, independent of attempt and client.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestSpec {
    /// Method.
    pub method: Method,
    /// Destination.
    pub target: Target,
    /// Query pairs (not including `wait`).
    pub query: Vec<(String, String)>,
    /// JSON body.
    pub body: Option<RequestBody>,
    /// Whether the route accepts the `wait` query parameter.
    pub accepts_wait: bool,
    /// `wait` the route sets by itself (a planner's `120`); a per-call `wait` overrides it.
    pub wait: Option<u32>,
    /// Shape of the success answer.
    pub response: ResponseKind,
    /// Whether the route wants the API key (still only ever sent to `base_url`'s origin).
    pub auth: bool,
    /// Content type of a body the caller attaches itself (the bytes of an upload).
    pub raw_body_content_type: Option<String>,
    /// When the route may be sent again (see [`RetryClass`]).
    pub retry: RetryClass,
}

/// A request's JSON body.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestBody {
    /// A value the client built, written as compact JSON ([`crate::json::to_text`]).
    Value(Value),
    /// A value read from the caller's params and changed by the check (a `null` dropped), written in the caller's key
    /// order with the caller's digits ([`write_in_order`]).
    Ordered(Value, Arc<KeyOrder>),
    /// The caller's params text, sent as it is: `verbatim` when exactly the caller's, else with a member the client
    /// adds after the caller's (an approval's `decision`).
    Text {
        /// The text.
        text: Arc<str>,
        /// Whether it is exactly the caller's.
        verbatim: bool,
    },
}

impl RequestBody {
    /// The body's JSON value (read from the text of [`RequestBody::Text`]; `null` if it were not JSON).
    pub fn to_value(&self) -> Value {
        match self {
            Self::Value(v) | Self::Ordered(v, _) => v.clone(),
            Self::Text { text, .. } => crate::json::parse_value_exact(text).unwrap_or(Value::Null),
        }
    }

    /// The text sent.
    fn to_text(&self) -> Arc<str> {
        match self {
            Self::Value(v) => crate::json::to_text(v).into(),
            Self::Ordered(v, order) => write_in_order(v, order).into(),
            Self::Text { text, .. } => Arc::clone(text),
        }
    }
}

impl RequestSpec {
    /// A JSON route under `base_url` with the key.
    pub fn api(method: Method, path: String) -> Self {
        Self {
            method,
            target: Target::Api(path),
            query: Vec::new(),
            body: None,
            accepts_wait: false,
            wait: None,
            response: ResponseKind::Json,
            auth: true,
            raw_body_content_type: None,
            retry: method.retry_class(),
        }
    }

    /// Marks a decision the service takes once ([`RetryClass::DecideOnce`]).
    pub fn decide_once(mut self) -> Self {
        self.retry = RetryClass::DecideOnce;
        self
    }

    /// Marks a run creation: the service dedupes its `idempotency-key`, so a lost answer is resent with the same key.
    pub fn run_creation(mut self) -> Self {
        self.retry = RetryClass::KeyedCreate;
        self
    }

    /// Sets the JSON body.
    pub fn with_body(mut self, body: Value) -> Self {
        self.body = Some(RequestBody::Value(body));
        self
    }

    /// Marks the route as accepting `wait`.
    pub fn with_wait(mut self, wait: Option<u32>) -> Self {
        self.accepts_wait = true;
        self.wait = wait;
        self
    }

    /// Sets the answer shape.
    pub fn expecting(mut self, response: ResponseKind) -> Self {
        self.response = response;
        self
    }

    /// A short `METHOD path` label for logs (no query, no host for API routes).
    pub fn label(&self) -> String {
        match &self.target {
            Target::Api(path) => format!("{} {path}", self.method.as_str()),
            Target::External(u) => format!("{} {}", self.method.as_str(), url::path_for_log(u)),
        }
    }
}

/// One attempt, ready for `fetch`. `Debug` redacts the `authorization` header.
#[derive(Clone, PartialEq)]
pub struct HttpRequest {
    /// Method.
    pub method: Method,
    /// Absolute URL including the query.
    pub url: String,
    /// Header pairs, names in lower case.
    pub headers: Vec<(String, String)>,
    /// JSON body text (shared by every attempt of the call, not copied for each). `None` with
    /// [`HttpRequest::raw_body`] true means the caller attaches the bytes it holds (upload).
    pub body: Option<Arc<str>>,
    /// The caller attaches its own bytes as the body (the `PUT` of an upload).
    pub raw_body: bool,
    /// `body` is the caller's params text exactly as given ([`RequestBody::Text`], `verbatim`): a host that still holds that
    /// text (the JS string it made with `JSON.stringify`) may send it instead of a copy of `body`.
    pub caller_text: bool,
    /// Per-attempt timeout the caller enforces; report expiry with `TransportError::Timeout`.
    pub timeout_ms: u64,
    /// Whether redirects may be followed (`false`: use `redirect: "manual"` and hand back the 3xx).
    pub follow_redirects: bool,
    /// 1-based attempt number.
    pub attempt: u32,
    /// Most bytes of the answer's body the host reads; a longer body fails the call with `response_too_large`
    /// (report it with `TransportError::TooLarge`).
    pub max_body_bytes: u64,
    /// Most bytes of the body of an answer with status 400 or above that the host reads; a longer one is not read:
    /// report the answer with [`super::Body::Unread`], and the error is made from its status and headers.
    pub max_error_body_bytes: u64,
}

/// Largest API answer read (JSON): far above any answer of the spec, small enough to never exhaust a worker.
pub const MAX_API_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// Largest error body read (status 400 or above): the spec's error envelope is a few hundred bytes; a longer body is
/// not read, so a hostile or broken server cannot make every failed attempt cost 64 MiB of memory.
pub const MAX_ERROR_BODY_BYTES: u64 = 1024 * 1024;
/// Largest download read (an output file or an upload's answer from the storage host).
pub const MAX_DOWNLOAD_BODY_BYTES: u64 = 512 * 1024 * 1024;

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &url::path_for_log(&self.url))
            .field("headers", &RedactedHeaders(&self.headers))
            .field(
                "body",
                &self.body.as_ref().map(|b| format!("<{} bytes>", b.len())),
            )
            .field("raw_body", &self.raw_body)
            .field("caller_text", &self.caller_text)
            .field("timeout_ms", &self.timeout_ms)
            .field("follow_redirects", &self.follow_redirects)
            .field("attempt", &self.attempt)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_error_body_bytes", &self.max_error_body_bytes)
            .finish()
    }
}

impl HttpRequest {
    /// Case-insensitive header lookup.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// Debug helper printing header names with `authorization` (and similar) values redacted.
pub(crate) struct RedactedHeaders<'a>(pub &'a [(String, String)]);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for (name, value) in self.0 {
            let lower = name.to_ascii_lowercase();
            if lower == "authorization"
                || lower.contains("key")
                || lower.contains("token")
                || lower.contains("secret")
                || lower == "cookie"
                || lower == "set-cookie"
            {
                list.entry(&(name, "[redacted]"));
            } else if lower == "location" {
                list.entry(&(name, url::path_for_log(value)));
            } else {
                list.entry(&(name, value));
            }
        }
        list.finish()
    }
}

/// Per-attempt inputs of [`build`].
pub(crate) struct AttemptParts<'a> {
    pub attempt: u32,
    pub idempotency_key: Option<&'a str>,
    pub wait: Option<u32>,
    pub timeout_ms: u64,
}

/// Builds the request of one attempt.
///
/// The Authorization header is attached only when the route wants it AND the final URL is on
/// `base_url`'s origin; default headers follow the same rule. Every POST carries the
/// `idempotency-key` given in `parts`.
pub(crate) fn build(
    config: &ClientConfig,
    spec: &RequestSpec,
    parts: &AttemptParts<'_>,
) -> HttpRequest {
    let mut query = spec.query.clone();
    if let Some(wait) = parts.wait {
        query.push(("wait".to_owned(), wait.to_string()));
    }
    let mut full_url = match &spec.target {
        Target::Api(path) => format!("{}{path}", config.base_url()),
        Target::External(u) => u.clone(),
    };
    if !query.is_empty() {
        full_url.push(if full_url.contains('?') { '&' } else { '?' });
        full_url.push_str(&url::encode_query(&query));
    }
    // A route path (always `/...`, its segments encoded) appended to the base URL stays on its origin; any other
    // target is parsed and compared.
    let on_origin = match &spec.target {
        Target::Api(path) if path.starts_with('/') && !path.starts_with("//") => true,
        _ => url::same_origin(&full_url, config.base_origin()),
    };
    let mut headers: Vec<(String, String)> = Vec::new();
    if on_origin {
        for (name, value) in config.default_headers() {
            let lower = name.to_ascii_lowercase();
            if lower != "authorization" && lower != "idempotency-key" {
                headers.push((lower, value.clone()));
            }
        }
    }
    if matches!(spec.response, ResponseKind::Json | ResponseKind::NoContent) {
        set(&mut headers, "accept", "application/json");
    }
    let body = spec.body.as_ref().map(|body| {
        set(&mut headers, "content-type", "application/json");
        body.to_text()
    });
    if let Some(content_type) = &spec.raw_body_content_type {
        set(&mut headers, "content-type", content_type);
    }
    if spec.auth && on_origin {
        set(&mut headers, "authorization", config.authorization());
    }
    if spec.method == Method::Post {
        if let Some(key) = parts.idempotency_key {
            set(&mut headers, "idempotency-key", key);
        }
    }
    HttpRequest {
        method: spec.method,
        url: full_url,
        headers,
        body,
        raw_body: spec.raw_body_content_type.is_some(),
        caller_text: matches!(spec.body, Some(RequestBody::Text { verbatim: true, .. })),
        timeout_ms: parts.timeout_ms,
        // API routes never let the runtime follow a redirect (it would carry the default headers, the
        // idempotency key and the body to wherever `Location` points): the call decides ([`super::Call`]). Signed
        // download and upload URLs (no key, no default headers) follow as before.
        follow_redirects: spec.response != ResponseKind::Redirect
            && matches!(spec.target, Target::External(_)),
        attempt: parts.attempt,
        max_body_bytes: match spec.target {
            Target::Api(_) => MAX_API_BODY_BYTES,
            Target::External(_) => MAX_DOWNLOAD_BODY_BYTES,
        },
        max_error_body_bytes: MAX_ERROR_BODY_BYTES,
    }
}

fn set(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    headers.push((name.to_owned(), value.to_owned()));
}

/// A fresh idempotency key from 16 random bytes supplied by the caller: a UUID v4 string.
pub fn idempotency_key_from_bytes(bytes: [u8; 16]) -> String {
    let mut b = bytes;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let digit = |n: u8| char::from_digit(u32::from(n), 16).unwrap_or('0');
    let mut key = String::with_capacity(36);
    for (i, byte) in b.into_iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            key.push('-');
        }
        key.push(digit(byte >> 4));
        key.push(digit(byte & 0x0f));
    }
    key
}

/// Encodes one path segment; refuses empty, `.` and `..` ids, which would change the route.
///
/// # Errors
/// `invalid_request` naming `field`.
#[inline(never)]
pub fn segment(field: &str, id: &str) -> Result<String, ApiError> {
    if id.is_empty() || id == "." || id == ".." {
        return Err(ApiError::validation(
            "invalid_request",
            field,
            "must be a non-empty id",
        ));
    }
    Ok(url::encode_component(id))
}

/// The key order of every object of a caller's JSON text, by position, and the text of each of its numbers.
/// serde_json (with `preserve_order`) keeps an object's members in the order they were read, but removing one (a
/// `null` the client does not send) moves the last member into its place; a body is written back in the caller's
/// order with [`write_in_order`], so what goes on the wire keeps the order the caller wrote (a schema's properties are the columns of an extraction table) and the
/// caller's own digits (`0.1`, `1e-7`, `9007199254740993`: no number is read into an `f64` and printed again).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyOrder {
    keys: Vec<(String, KeyOrder)>,
    items: Vec<KeyOrder>,
    /// The caller's text of a number.
    number: Option<String>,
}

impl KeyOrder {
    /// Reads the key order of a JSON text.
    ///
    /// # Errors
    /// `invalid_request` at `body` when the text is not JSON.
    pub fn of_text(text: &str) -> Result<Self, ApiError> {
        let (value, numbers) = crate::json::parse_with_number_texts(text)
            .ok_or_else(|| ApiError::validation("invalid_request", "body", "is not JSON"))?;
        Ok(Self::of(value, &mut numbers.into_iter()))
    }

    /// The order of a value read by [`crate::json::parse_with_number_texts`], its numbers' texts taken in document order. A
    /// name given twice keeps its first place and its last value, as `JSON.parse` and serde_json read it.
    fn of<'a>(value: crate::json::Json, numbers: &mut impl Iterator<Item = &'a str>) -> Self {
        use crate::json::Json;
        let mut order = KeyOrder::default();
        match value {
            Json::Object(members) => {
                for (name, member) in members {
                    let sub = Self::of(member, numbers);
                    match order.keys.iter_mut().find(|(k, _)| *k == name) {
                        Some((_, slot)) => *slot = sub,
                        None => order.keys.push((name, sub)),
                    }
                }
            }
            Json::Array(items) => {
                order.items = items.into_iter().map(|v| Self::of(v, numbers)).collect();
            }
            Json::Number(_) => order.number = numbers.next().map(str::to_owned),
            Json::Null | Json::Bool(_) | Json::String(_) => {}
        }
        order
    }

    /// The names of the object under `field`, in the text's order.
    pub fn names_of(&self, field: &str) -> Option<Vec<String>> {
        self.keys
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, sub)| sub.keys.iter().map(|(k, _)| k.clone()).collect())
    }
}

/// Writes `value` as JSON text with each object's keys in `order` (the caller's order); keys the caller did not
/// write (added by the client, such as an approval's `decision`) follow in the map's order.
pub fn write_in_order(value: &Value, order: &KeyOrder) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, Some(order));
    out
}

fn write_value(out: &mut String, value: &Value, order: Option<&KeyOrder>) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            let mut entry = |out: &mut String, key: &str, v: &Value, sub: Option<&KeyOrder>| {
                if !first {
                    out.push(',');
                }
                first = false;
                crate::json::write_string(out, key);
                out.push(':');
                write_value(out, v, sub);
            };
            let known = order.map_or(&[][..], |o| o.keys.as_slice());
            for (key, sub) in known {
                if let Some(v) = map.get(key) {
                    entry(out, key, v, Some(sub));
                }
            }
            // Keys the caller did not write (few: the client's own), found by a scan rather than a sorted set (no sort
            // code in the module for this).
            if map.len() > known.len() || known.iter().any(|(k, _)| !map.contains_key(k)) {
                for (key, v) in map {
                    if !known.iter().any(|(k, _)| k == key) {
                        entry(out, key, v, None);
                    }
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, v, order.and_then(|o| o.items.get(i)));
            }
            out.push(']');
        }
        scalar => match (scalar, order.and_then(|o| o.number.as_deref())) {
            // The caller's own digits where the caller wrote this number (and it is still the number read there).
            (Value::Number(n), Some(text)) if text.parse::<f64>().ok() == n.as_f64() => {
                out.push_str(text);
            }
            _ => crate::json::write_value(out, scalar),
        },
    }
}
