//! The sans-IO core of the typed API client.
//!
//! Nothing in this module performs I/O, reads a clock or draws random numbers. It builds requests
//! ([`HttpRequest`]), interprets responses ([`ApiResponse`], [`ApiError`]), decides retries
//! ([`retry`]), validates inputs before a request is spent ([`validate`]) and plans long polls
//! ([`polling`]). The wasm layer runs `fetch` and timers and feeds the outcomes back into a
//! [`Call`]:
//!
//! ```
//! use docauto::client::{runs, Action, Call, CallOptions, ClientConfig, Env};
//!
//! let config = ClientConfig::new("sk_test", "https://api.example.com").unwrap();
//! let spec = runs::retrieve("exr_1").unwrap();
//! let mut call = Call::new(&config, spec, &CallOptions::default(), [7u8; 16]).unwrap();
//! let Action::Send(request) = call.next() else { unreachable!() };
//! assert_eq!(request.url, "https://api.example.com/v1/runs/exr_1");
//! call.on_response(200, &[], r#"{"object":"extract_run","id":"exr_1","status":"processed"}"#,
//!                  Env { now_ms: 0, jitter: 0.5 });
//! let Action::Done(Ok(response)) = call.next() else { unreachable!() };
//! assert_eq!(response.body["status"], "processed");
//! ```
//!
//! Decisions taken where the spec is silent are written next to the code that implements them.

// `ApiError` is a plain struct with public fields (the JS error's own fields); errors are the
// cold path, so the size of `Result<_, ApiError>` is accepted rather than boxed.
#![allow(clippy::result_large_err)]

pub mod actions;
pub mod agent_runs;
pub mod agents;
pub mod call;
pub mod common;
pub mod configs;
pub mod error;
pub mod files;
pub mod flow;
pub mod options;
pub mod output;
pub mod pagination;
pub mod params;
pub mod polling;
pub mod realtime;
pub mod request;
pub mod retry;
pub mod runs;
pub mod telemetry;
/// URL rules (origins, encoding, the https-or-loopback rule), shared with the webhook verifier.
pub use crate::url;
pub mod validate;
pub mod verbs;
pub mod webhooks;

#[cfg(test)]
mod tests;

/// What the host looks like, for the browser-key guard (`dangerouslyAllowBrowser`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// `window` and `document` exist (a page).
    pub page: bool,
    /// `WorkerGlobalScope` exists and the global object is one (a Web Worker, a service worker, a shared worker;
    /// also Cloudflare's workerd, whose global is a `ServiceWorkerGlobalScope`).
    pub worker_scope: bool,
    /// A server runtime's own marker: `Deno`, `Bun`, `process.versions.node`, `EdgeRuntime`, or the user agent
    /// `Cloudflare-Workers`.
    pub server_runtime: bool,
}

impl HostFacts {
    /// Whether code runs where a user can read it (a page or a browser's worker): the key would be exposed.
    pub fn is_browser(self) -> bool {
        self.page || (self.worker_scope && !self.server_runtime)
    }
}

pub use call::{
    Action, AnswerMeta, ApiResponse, Call, CallOptions, Env, LogRecord, TransportError,
};
pub use error::{ApiError, ErrorKind};
pub use flow::{Body, Finished, Flow, FlowValue, Goal, Read, Step};
pub use request::{HttpRequest, Method, RequestSpec, ResponseKind, RetryClass, Target};
pub use validate::validate_extraction_schema;

use std::fmt;
use std::sync::Arc;

/// Default number of retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// Default per-attempt timeout: 10 minutes (long enough for a `wait=120` hold).
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// Default cap on an honoured `Retry-After`: 60 seconds.
pub const DEFAULT_MAX_RETRY_AFTER_MS: u64 = 60_000;

/// How much the client reports about its calls; each level includes the ones before it (ordered
/// `off < error < warn < info < debug`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename_all = "lowercase"))]
pub enum LogLevel {
    /// Nothing.
    Off,
    /// Calls that failed after exhausting their retries (connection errors, 429, 5xx).
    Error,
    /// Those, and each retry (the default).
    #[default]
    Warn,
    /// Warnings, and every call that ended in an error (4xx included) or completed.
    Info,
    /// Every attempt: method, path, status, request id, attempt number.
    Debug,
}

impl LogLevel {
    /// Parses `off`, `error`, `warn`, `info` or `debug` (case-insensitive).
    ///
    /// # Errors
    /// `invalid_config` for any other string.
    pub fn parse(value: &str) -> Result<Self, ApiError> {
        match value.to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(Self::Off),
            "error" => Ok(Self::Error),
            "warn" | "warning" => Ok(Self::Warn),
            "info" => Ok(Self::Info),
            "debug" => Ok(Self::Debug),
            _ => Err(ApiError::invalid_config(
                "logLevel",
                "must be one of off, error, warn, info, debug",
            )),
        }
    }

    /// The lower-case name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
        }
    }
}

/// Client-wide settings. The API key is never printed: `Debug` shows `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientConfig {
    // Shared, not copied: every call holds a clone of the config.
    api_key: Arc<str>,
    /// `Bearer <key>`, made once.
    authorization: Arc<str>,
    base_url: Arc<str>,
    base_origin: Arc<str>,
    /// Retries after the first attempt (default 2).
    pub max_retries: u32,
    /// Per-attempt timeout in milliseconds (default 600 000).
    pub timeout_ms: u64,
    /// Largest `Retry-After` honoured; beyond it the error is returned with `retry_after_ms` set.
    pub max_retry_after_ms: u64,
    default_headers: Arc<[(String, String)]>,
    /// Logging threshold of [`Call::take_logs`].
    pub log_level: LogLevel,
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("api_key", &"[redacted]")
            .field("base_url", &self.base_url)
            .field("max_retries", &self.max_retries)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_retry_after_ms", &self.max_retry_after_ms)
            .field(
                "default_headers",
                &request::RedactedHeaders(&self.default_headers),
            )
            .field("log_level", &self.log_level)
            .finish()
    }
}

impl ClientConfig {
    /// Builds a configuration with the defaults (2 retries, 10 min timeout, 60 s Retry-After cap).
    ///
    /// `base_url` is an absolute `http` or `https` URL, optionally with a path prefix; a trailing
    /// `/` is dropped. There is no built-in default address: the spec only names `{base_url}`, so
    /// the JS layer supplies it (or `DOCAUTO_BASE_URL`).
    ///
    /// # Errors
    /// `invalid_config` when the key is empty or holds characters a header cannot carry, or when
    /// `base_url` is not an absolute http(s) URL without credentials, query or fragment. The key
    /// never appears in the message.
    pub fn new(api_key: &str, base_url: &str) -> Result<Self, ApiError> {
        if api_key.is_empty() {
            return Err(ApiError::invalid_config("apiKey", "is required"));
        }
        if !api_key.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(ApiError::invalid_config(
                "apiKey",
                "may only hold visible ASCII characters",
            ));
        }
        let trimmed = base_url.trim_end_matches('/');
        let Some(base_origin) = url::origin(trimmed) else {
            return Err(ApiError::invalid_config(
                "baseUrl",
                "must be an absolute http(s) URL without credentials",
            ));
        };
        if trimmed.contains('?') || trimmed.contains('#') {
            return Err(ApiError::invalid_config(
                "baseUrl",
                "must not carry a query or a fragment",
            ));
        }
        Ok(Self {
            api_key: api_key.into(),
            authorization: format!("Bearer {api_key}").into(),
            base_url: trimmed.into(),
            base_origin: base_origin.into(),
            max_retries: DEFAULT_MAX_RETRIES,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            default_headers: Arc::from(Vec::new()),
            log_level: LogLevel::default(),
        })
    }

    /// The base URL without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The normalized origin (`scheme://host:port`) the API key may be sent to.
    pub fn base_origin(&self) -> &str {
        &self.base_origin
    }

    /// Headers added to every request sent to `base_url`'s origin (never to other hosts).
    pub fn default_headers(&self) -> &[(String, String)] {
        &self.default_headers
    }

    /// Sets the default headers. `authorization` and `idempotency-key` entries are refused at
    /// send time (the key is always the one given to [`ClientConfig::new`]); names are stored in
    /// lower case.
    ///
    /// # Errors
    /// `invalid_config` at `defaultHeaders.<name>` for a name that is not an HTTP token or a
    /// value holding control characters (header injection).
    pub fn set_default_headers(&mut self, headers: Vec<(String, String)>) -> Result<(), ApiError> {
        let mut out = Vec::with_capacity(headers.len());
        for (name, value) in headers {
            let token = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err(ApiError::invalid_config(
                    "defaultHeaders",
                    "header names must be HTTP tokens",
                ));
            }
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(ApiError::invalid_config(
                    &format!("defaultHeaders.{name}"),
                    "must not hold control characters",
                ));
            }
            out.push((name.to_ascii_lowercase(), value));
        }
        self.default_headers = out.into();
        Ok(())
    }

    pub(crate) fn api_key(&self) -> &str {
        &self.api_key
    }

    /// The `authorization` header value, `Bearer <key>`.
    pub(crate) fn authorization(&self) -> &str {
        &self.authorization
    }
}
