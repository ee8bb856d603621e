//! The sans-IO call driver: one API call with its retries, as a state machine.
//!
//! ```text
//! let mut call = Call::new(&config, spec, &options, random_bytes)?;
//! loop {
//!     match call.next() {
//!         Action::Send(req) => match fetch(req) {        // caller's I/O
//!             Ok(r) => call.on_response(r.status, &r.headers, &r.body, env()),
//!             Err(e) => call.on_transport_error(e, env()),
//!         },
//!         Action::Sleep { ms } => sleep(ms),              // caller's timer
//!         Action::Done(result) => return result,
//!     }
//! }
//! ```
//! `env()` supplies the current time (for `Retry-After` dates) and a jitter number in `[0, 1)`.

use super::error::{ApiError, ErrorKind};
use super::request::{
    self, AttemptParts, HttpRequest, Method, RequestSpec, ResponseKind, RetryClass,
    MAX_ERROR_BODY_BYTES,
};
use super::retry::{self, header, RetryDecision};
use super::telemetry::{Attempt, Failure, Pause, PauseReason, Resend};
use super::url;
use super::validate;
use super::{ClientConfig, LogLevel};
use crate::text;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Per-call overrides, the last argument of every JS method (`{wait, idempotencyKey, timeoutMs,
/// maxRetries}` on the wire; `signal` stays in the JS layer, which calls [`Call::abort`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CallOptions {
    /// `wait` query parameter in seconds (0 to 120), for routes that take it.
    pub wait: Option<u32>,
    /// The caller's idempotency key for a POST (otherwise one is generated per call).
    pub idempotency_key: Option<String>,
    /// Per-attempt timeout override.
    pub timeout_ms: Option<u64>,
    /// Retry count override.
    pub max_retries: Option<u32>,
}

/// Inputs the caller supplies with each outcome: the clock and a jitter number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Env {
    /// Current time, epoch milliseconds (reads `Retry-After` HTTP dates).
    pub now_ms: u64,
    /// Uniform random number in `[0, 1)` (backoff jitter).
    pub jitter: f64,
}

/// A failure below HTTP, reported by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// A dropped connection or any failure that may have come after the request went out. The text is the
    /// runtime's message (no secrets).
    Connection(String),
    /// The request was never sent: the connection was refused or could not be made (DNS, TCP connect, TLS).
    /// See [`TransportError::from_runtime`].
    NotSent(String),
    /// The attempt exceeded `timeout_ms`.
    Timeout,
    /// The caller's abort signal fired.
    Aborted,
    /// The answer's body was longer than [`HttpRequest::max_body_bytes`] (reading stopped there).
    TooLarge,
}

impl TransportError {
    /// A runtime's failure of `fetch` (its error code and message): [`TransportError::NotSent`] when it proves the
    /// request was never sent ([`retry::failed_before_sending`]), otherwise [`TransportError::Connection`].
    pub fn from_runtime(code: &str, message: &str) -> Self {
        if retry::failed_before_sending(code, message) {
            Self::NotSent(message.to_owned())
        } else {
            Self::Connection(message.to_owned())
        }
    }
}

/// A successful answer. `Debug` shows the body's top-level keys only (a realtime session's
/// ticket or an output's signed URL never reach a Debug print) and `location` without its query.
#[derive(Clone, PartialEq)]
pub struct ApiResponse {
    /// HTTP status (200, 201, 202, 204 or the 3xx of a redirect route).
    pub status: u16,
    /// Response headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// `x-request-id`.
    pub request_id: Option<String>,
    /// `idempotent-replay: true`: the service returned the original result of this key.
    pub idempotent_replay: bool,
    /// Parsed JSON body (`null` when there is none).
    pub body: Value,
    /// `Location` of a redirect route.
    pub location: Option<String>,
    /// Number of attempts the call took.
    pub attempts: u32,
}

impl std::fmt::Debug for ApiResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body_keys: Vec<&String> = self
            .body
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        f.debug_struct("ApiResponse")
            .field("status", &self.status)
            .field("request_id", &self.request_id)
            .field("idempotent_replay", &self.idempotent_replay)
            .field("body_keys", &body_keys)
            .field(
                "location",
                &self.location.as_deref().map(super::url::path_for_log),
            )
            .field("attempts", &self.attempts)
            .field("headers", &super::request::RedactedHeaders(&self.headers))
            .finish()
    }
}

impl ApiResponse {
    /// Decodes the body into a typed resource.
    ///
    /// # Errors
    /// `unexpected_shape` ([`ErrorKind::InvalidResponse`]) when the body does not match `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        T::deserialize(&self.body).map_err(|e| {
            let mut err = ApiError::new(
                ErrorKind::InvalidResponse,
                "unexpected_shape",
                format!("response body does not match the expected type: {e}"),
            );
            err.status = Some(self.status);
            err.request_id = self.request_id.clone();
            err
        })
    }
}

/// What an answer's headers say of it: the request id and the replay flag, read once here for the core and for a
/// host that finished a call on the answer itself ([`Call::json_success_is_final`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnswerMeta {
    /// `x-request-id`.
    pub request_id: Option<String>,
    /// `idempotent-replay: true` (any case, surrounding spaces ignored).
    pub idempotent_replay: bool,
}

impl AnswerMeta {
    /// Reads the two headers from header pairs whose names are in lower case.
    pub fn read(headers: &[(String, String)]) -> Self {
        Self {
            request_id: header(headers, "x-request-id").map(str::to_owned),
            idempotent_replay: header(headers, "idempotent-replay")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
        }
    }
}

/// What the caller must do next.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Perform this request and report with [`Call::on_response`] or [`Call::on_transport_error`].
    Send(HttpRequest),
    /// Wait, then call [`Call::next`] again.
    Sleep {
        /// Milliseconds to wait.
        ms: u64,
    },
    /// The call is over.
    Done(Result<ApiResponse, ApiError>),
}

/// One log line. Never holds the key, a body or a query string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Severity.
    pub level: LogLevel,
    /// Text.
    pub message: String,
}

#[derive(Debug)]
enum State {
    ReadyToSend,
    Awaiting,
    Sleeping(u64),
    Finished(Option<Result<ApiResponse, ApiError>>),
}

/// One API call and its retries. `Debug` never shows the key.
#[derive(Debug)]
pub struct Call {
    config: ClientConfig,
    spec: RequestSpec,
    wait: Option<u32>,
    idempotency_key: Option<String>,
    timeout_ms: u64,
    max_retries: u32,
    attempts: u32,
    /// A previous attempt of this call may have reached the service (its answer was lost or it timed out).
    lost_answer: Option<ErrorKind>,
    /// The URL of the last request sent (a redirect's `Location` is read against it).
    last_url: String,
    /// Where a same-origin redirect sends the next request of this attempt.
    redirect_url: Option<String>,
    /// Redirects followed so far.
    redirects: u32,
    state: State,
    logs: Vec<LogRecord>,
    /// Why the next request is sent again (what happened to the last one).
    resend: Option<Resend>,
    /// Requests sent so far, retries and followed redirects included.
    requests: u32,
    /// The request in flight: its attempt number, the requests before it and why it was sent again.
    sent: (u32, u32, Option<Resend>),
    /// The pause decided on the last outcome, before the next attempt.
    retry: Option<Pause>,
    /// Whether the host observes this call: only then is an [`Attempt`] kept.
    observe: bool,
    /// Which call of its flow this is, from 1 (its records say so).
    index: u32,
    /// The record of the last request answered or failed, until the host takes it.
    attempt: Option<Attempt>,
}

impl Call {
    /// Prepares a call. `random_bytes` seed the idempotency key of a POST when the caller gave
    /// none; that one key is reused by every retry of this call.
    ///
    /// # Errors
    /// `invalid_request` when `wait` is outside 0..=120, given to a route without `wait`, or not
    /// shorter than the timeout, or when the idempotency key is empty, longer than 255 characters or not visible ASCII.
    pub fn new(
        config: &ClientConfig,
        spec: RequestSpec,
        options: &CallOptions,
        random_bytes: [u8; 16],
    ) -> Result<Self, ApiError> {
        let timeout_ms = options.timeout_ms.unwrap_or(config.timeout_ms);
        let wait = match options.wait {
            Some(_) if !spec.accepts_wait => {
                return Err(ApiError::validation(
                    "invalid_request",
                    "wait",
                    "this route does not accept wait",
                ));
            }
            Some(w) => Some(w),
            // A planner's own `wait=120` shrinks to fit a short timeout (5 s of margin).
            None => spec
                .wait
                .map(|w| w.min(u32::try_from((timeout_ms / 1000).saturating_sub(5)).unwrap_or(w))),
        };
        if let Some(w) = wait {
            validate::wait_seconds(w)?;
            // A hold of `wait` seconds would always outlast such a timeout: every attempt would
            // time out and be resent. Refuse the pair instead of failing slowly.
            if timeout_ms <= u64::from(w) * 1000 {
                return Err(ApiError::validation(
                    "invalid_request",
                    "timeoutMs",
                    &format!("must be longer than wait ({w} s)"),
                ));
            }
        }
        let idempotency_key = if spec.method == Method::Post {
            match &options.idempotency_key {
                Some(key) => {
                    validate::idempotency_key(key)?;
                    Some(key.clone())
                }
                None => Some(request::idempotency_key_from_bytes(random_bytes)),
            }
        } else {
            None
        };
        Ok(Self {
            config: config.clone(),
            spec,
            wait,
            idempotency_key,
            timeout_ms,
            max_retries: options.max_retries.unwrap_or(config.max_retries),
            attempts: 0,
            lost_answer: None,
            last_url: String::new(),
            redirect_url: None,
            redirects: 0,
            state: State::ReadyToSend,
            logs: Vec::new(),
            resend: None,
            requests: 0,
            sent: (0, 0, None),
            retry: None,
            observe: false,
            index: 1,
            attempt: None,
        })
    }

    /// From now on, keeps the [`Attempt`] record of each request's outcome (a request already in flight included),
    /// for [`Call::take_attempt`]. An unobserved call keeps none.
    pub fn observe(&mut self) {
        self.observe_as(1);
    }

    /// [`Call::observe`] for the `index`-th call of a flow.
    pub(crate) fn observe_as(&mut self, index: u32) {
        self.observe = true;
        self.index = index;
    }

    /// Takes the record of the last request answered or failed ([`Call::observe`]), once: take it after each report
    /// (a later report replaces it).
    pub fn take_attempt(&mut self) -> Option<Attempt> {
        self.attempt.take()
    }

    /// Whether any 2xx answer whose body is JSON ends this call as a success with nothing more for the core to
    /// read or log: a JSON route, at a log level below `info` (which would log the answer line). A host that decodes
    /// bodies itself may then finish such an answer without reporting it; the success is the one
    /// [`Call::on_response`] would give, with the `x-request-id` and `idempotent-replay` headers read as it reads them.
    pub fn json_success_is_final(&self) -> bool {
        self.spec.response == ResponseKind::Json && self.config.log_level < LogLevel::Info
    }

    /// The idempotency key every attempt of this POST carries.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// Attempts sent so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Takes the log lines produced since the last call (filtered by the configured level).
    pub fn take_logs(&mut self) -> Vec<LogRecord> {
        std::mem::take(&mut self.logs)
    }

    /// The next thing to do.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self) -> Action {
        match std::mem::replace(&mut self.state, State::Finished(None)) {
            State::ReadyToSend => self.send(),
            State::Sleeping(ms) => {
                self.state = State::ReadyToSend;
                Action::Sleep { ms }
            }
            State::Awaiting => Action::Done(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "next() called while a response was still awaited",
            ))),
            State::Finished(Some(result)) => Action::Done(result),
            State::Finished(None) => Action::Done(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "the call is already done",
            ))),
        }
    }

    fn send(&mut self) -> Action {
        self.attempts = self.attempts.saturating_add(1);
        let parts = AttemptParts {
            attempt: self.attempts,
            idempotency_key: self.idempotency_key.as_deref(),
            wait: self.wait,
            timeout_ms: self.timeout_ms,
        };
        let mut req = request::build(&self.config, &self.spec, &parts);
        if let Some(url) = &self.redirect_url {
            // Same origin, checked when the redirect was read: the same headers may go there.
            req.url = url.clone();
        }
        self.last_url.clone_from(&req.url);
        self.sent = (self.attempts, self.requests, self.resend.take());
        self.requests = self.requests.saturating_add(1);
        let (attempt, of) = (self.attempts, self.max_retries.saturating_add(1));
        self.log(LogLevel::Debug, |label| {
            format!("{} attempt {}/{}", label, attempt, of)
        });
        self.state = State::Awaiting;
        Action::Send(req)
    }

    /// Reports the answer of the last `Send`. `body` is the response text (may be empty).
    pub fn on_response(&mut self, status: u16, headers: &[(String, String)], body: &str, env: Env) {
        self.answer(status, headers, Some(body), env);
    }

    /// Reports the answer of the last `Send` whose body was not read: its status is 400 or above and the body is
    /// longer than [`HttpRequest::max_error_body_bytes`]. The error is made from the status and headers (retries
    /// and `Retry-After` as for an empty body). Any other status fails the call with `response_too_large`, as a body
    /// over the cap does.
    pub fn on_unread_response(&mut self, status: u16, headers: &[(String, String)], env: Env) {
        if status < 400 {
            self.on_transport_error(TransportError::TooLarge, env);
        } else {
            self.answer(status, headers, None, env);
        }
    }

    /// Reports an error answer (status 400 or above) of the last `Send` with its text and, when the host's
    /// `JSON.parse` reads that text, the reading written back plainly (`host_read`: well-formed strings, a number
    /// beyond a double as `null`, nesting deeper than the core reads as `null`). The error is made from the text;
    /// from `host_read` only when the core's own reader refuses the text (a lone surrogate, `1e400`, deep nesting),
    /// so an error envelope keeps its `code` whenever `JSON.parse` reads it.
    pub fn on_error_response(
        &mut self,
        status: u16,
        headers: &[(String, String)],
        text: &str,
        host_read: &str,
        env: Env,
    ) {
        let trimmed = text.trim();
        let readable = trimmed.is_empty() || crate::json::parse_value_exact(trimmed).is_some();
        let body = if status >= 400 && !readable {
            host_read
        } else {
            text
        };
        self.answer(status, headers, Some(body), env);
    }

    /// An answer, with its body text or `None` when an error body was not read.
    fn answer(&mut self, status: u16, headers: &[(String, String)], read: Option<&str>, env: Env) {
        if !matches!(self.state, State::Awaiting) {
            return;
        }
        self.answered(status, headers, read, env);
        if self.observe {
            self.record(Some(status), None);
        }
    }

    fn answered(
        &mut self,
        status: u16,
        headers: &[(String, String)],
        read: Option<&str>,
        env: Env,
    ) {
        let body = read.unwrap_or("");
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
            .collect();
        let request_id = AnswerMeta::read(&headers).request_id;
        self.log(LogLevel::Debug, |label| {
            format!(
                "{} -> {status} request_id={}",
                label,
                request_id.as_deref().unwrap_or("-")
            )
        });
        let is_redirect = (300..400).contains(&status);
        if self.spec.response != ResponseKind::Redirect
            && (status == 0 || (is_redirect && header(&headers, "location").is_some()))
        {
            self.on_redirect(status, &headers);
            return;
        }
        let success = (200..300).contains(&status)
            || (is_redirect && self.spec.response == ResponseKind::Redirect);
        if !success {
            let mut err =
                ApiError::from_answer(status, &headers, body, Some(env.now_ms), self.spec.retry);
            if read.is_none() {
                err.message = format!(
                    "HTTP {status} ({}); its body is longer than {MAX_ERROR_BODY_BYTES} bytes and was not read",
                    err.code
                );
            }
            if let (409, RetryClass::DecideOnce, Some(kind)) =
                (status, self.spec.retry, self.lost_answer)
            {
                // The decision is made; whether by the attempt whose answer was lost is not said.
                let mut unknown = ApiError::new(
                    kind,
                    kind.default_code(),
                    format!(
                        "an earlier attempt may have been applied (its answer was lost or did not say) and the \
                         resend got 409 {}: the decision is made, perhaps by this call{UNKNOWN_OUTCOME}",
                        err.code
                    ),
                );
                unknown.outcome_unknown = true;
                unknown.request_id = err.request_id.take();
                unknown.headers = std::mem::take(&mut err.headers);
                self.finish_err(unknown);
                return;
            }
            if self.spec.retry == RetryClass::DecideOnce
                && err.retryable
                && self.lost_answer.is_none()
                && !ApiError::from_answer(status, &headers, body, None, RetryClass::NotReplaySafe)
                    .retryable
            {
                // A bare 503/502/408 may follow the decision being applied: a 409 on the resend is then no proof
                // that someone else decided.
                self.lost_answer = Some(err.kind);
            }
            self.resend = Some(Resend::Status(status));
            self.fail(err, env);
            return;
        }
        let decoded = decode_success(self.spec.response, status, &headers, body).and_then(
            |(body, location)| match location {
                // A redirect route's answer is a URL the caller will fetch or link to: resolved against the request
                // (a relative `Location` is allowed) and http(s) only, never a `javascript:` or `data:` URL.
                Some(loc) if self.spec.response == ResponseKind::Redirect && is_redirect => {
                    match url::resolve_location(&loc, &self.last_url) {
                        Some(resolved) => Ok((body, Some(resolved))),
                        None => Err(invalid(
                            status,
                            "invalid_location",
                            "the redirect's Location is not an http(s) URL",
                        )),
                    }
                }
                location => Ok((body, location)),
            },
        );
        match decoded {
            Ok((body, location)) => {
                self.log(LogLevel::Info, |label| format!("{} -> {status}", label));
                let idempotent_replay = AnswerMeta::read(&headers).idempotent_replay;
                self.state = State::Finished(Some(Ok(ApiResponse {
                    status,
                    request_id,
                    idempotent_replay,
                    body,
                    location,
                    attempts: self.attempts,
                    headers,
                })));
            }
            Err(mut err) => {
                err.request_id = request_id;
                err.headers = headers;
                self.finish_err(err);
            }
        }
    }

    /// A 3xx on an API route (sent with `redirect: "manual"`), or a browser's opaque redirect (status 0). Followed by
    /// the call only to the same origin as `base_url`, keeping method, headers and body (307/308 for any method,
    /// 301/302/303 for GET and DELETE only, at most [`MAX_REDIRECTS`] in a call); otherwise the call fails with
    /// `redirect_refused` and nothing reaches the other host.
    fn on_redirect(&mut self, status: u16, headers: &[(String, String)]) {
        let refuse = |this: &mut Self, message: String| {
            let mut err = ApiError::new(ErrorKind::OtherStatus, "redirect_refused", message);
            err.status = Some(status);
            err.request_id = header(headers, "x-request-id").map(str::to_owned);
            this.finish_err(err);
        };
        if status == 0 {
            refuse(
                self,
                "the API answered with a redirect the runtime does not show (a browser's opaque redirect); not \
                 followed"
                    .to_owned(),
            );
            return;
        }
        let location = header(headers, "location").unwrap_or("");
        let Some(target) = url::resolve_location(location, &self.last_url) else {
            refuse(
                self,
                format!("the API answered {status} with a Location that is not an http(s) URL; not followed"),
            );
            return;
        };
        if !url::same_origin(&target, self.config.base_origin()) {
            let to = url::origin(&target).unwrap_or_default();
            refuse(
                self,
                format!(
                    "the API answered {status} redirecting to another origin ({to}); not followed: the key, the \
                     headers and the body stay with baseUrl"
                ),
            );
            return;
        }
        let keeps_method = matches!(status, 307 | 308)
            || (matches!(status, 301..=303)
                && matches!(self.spec.method, Method::Get | Method::Delete));
        if !keeps_method {
            refuse(
                self,
                format!(
                    "the API answered {status} to a {}; not followed (it would change the method)",
                    self.spec.method.as_str()
                ),
            );
            return;
        }
        if self.redirects >= MAX_REDIRECTS {
            refuse(self, format!("more than {MAX_REDIRECTS} redirects"));
            return;
        }
        self.redirects += 1;
        self.log(LogLevel::Debug, |label| {
            format!(
                "{label} -> {status}, following to {}",
                url::path_for_log(&target)
            )
        });
        self.redirect_url = Some(target);
        self.resend = Some(Resend::Redirect);
        // A hop of the same attempt, not a retry.
        self.attempts = self.attempts.saturating_sub(1);
        self.state = State::ReadyToSend;
    }

    /// Reports that the last `Send` produced no HTTP answer.
    pub fn on_transport_error(&mut self, error: TransportError, env: Env) {
        if !matches!(self.state, State::Awaiting) {
            return;
        }
        let failure = match error {
            TransportError::Timeout => Failure::Timeout,
            TransportError::Aborted => Failure::Aborted,
            TransportError::TooLarge => Failure::TooLarge,
            TransportError::Connection(_) | TransportError::NotSent(_) => Failure::Connection,
        };
        self.failed(error, env);
        if self.observe {
            self.record(None, Some(failure));
        }
    }

    fn failed(&mut self, error: TransportError, env: Env) {
        self.resend = match error {
            TransportError::Timeout => Some(Resend::Timeout),
            TransportError::Connection(_) => Some(Resend::AnswerLost),
            TransportError::NotSent(_) => Some(Resend::NotSent),
            TransportError::Aborted | TransportError::TooLarge => None,
        };
        let resend = self.spec.retry.resend_after_unknown_outcome();
        if let TransportError::Connection(_) | TransportError::Timeout = error {
            self.lost_answer = Some(if error == TransportError::Timeout {
                ErrorKind::Timeout
            } else {
                ErrorKind::Connection
            });
        }
        let err = match error {
            TransportError::NotSent(detail) => {
                let mut e = ApiError::new(
                    ErrorKind::Connection,
                    "connection_error",
                    format!(
                        "connection failed before the request was sent: {}",
                        scrub_urls(&truncate(&detail, 300))
                    ),
                );
                e.retryable = true;
                e
            }
            TransportError::Connection(detail) => {
                let mut e = ApiError::new(
                    ErrorKind::Connection,
                    "connection_error",
                    format!("connection failed: {}", scrub_urls(&truncate(&detail, 300))),
                );
                if resend {
                    e.retryable = true;
                } else {
                    e.outcome_unknown = true;
                    e.message.push_str(UNKNOWN_OUTCOME);
                }
                e
            }
            TransportError::Timeout => {
                let mut e = ApiError::new(
                    ErrorKind::Timeout,
                    "timeout",
                    format!("no answer within {} ms", self.timeout_ms),
                );
                if resend {
                    e.retryable = true;
                } else {
                    e.outcome_unknown = true;
                    e.message.push_str(UNKNOWN_OUTCOME);
                }
                e
            }
            TransportError::Aborted => {
                ApiError::new(ErrorKind::UserAbort, "aborted", "the call was aborted")
            }
            TransportError::TooLarge => {
                let err = ApiError::new(
                    ErrorKind::InvalidResponse,
                    "response_too_large",
                    "the answer's body is larger than the client reads (64 MiB for the API, 512 MiB for a download)",
                );
                self.finish_err(err);
                return;
            }
        };
        self.fail(err, env);
    }

    /// Aborts the call: the next [`Call::next`] returns an `aborted` error.
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Finished(_)) {
            self.state = State::Finished(Some(Err(ApiError::new(
                ErrorKind::UserAbort,
                "aborted",
                "the call was aborted",
            ))));
        }
    }

    fn fail(&mut self, err: ApiError, env: Env) {
        // A retry starts again at the route's own URL.
        self.redirect_url = None;
        let retries_done = self.attempts.saturating_sub(1);
        let retry_after = retry::retry_after(&err.headers, Some(env.now_ms));
        match retry::decide_after(
            err.retryable,
            retries_done,
            self.max_retries,
            retry_after,
            self.config.max_retry_after_ms,
            env.jitter,
        ) {
            RetryDecision::Retry { delay_ms } => {
                let reason = if matches!(retry_after, retry::RetryAfter::Delay(_)) {
                    PauseReason::RetryAfter
                } else {
                    PauseReason::Backoff
                };
                self.retry = Some(Pause {
                    ms: delay_ms,
                    reason,
                });
                // `output_not_ready` is the service saying a produced file is still being registered: an expected
                // wait of every download right after its run, not a fault worth a warning.
                let level = if err.code == "output_not_ready" {
                    LogLevel::Debug
                } else {
                    LogLevel::Warn
                };
                self.log(level, |label| {
                    let status = err.status.map(|s| format!("{s} ")).unwrap_or_default();
                    format!(
                        "{label} failed with {status}{}; retrying in {delay_ms} ms",
                        err.code
                    )
                });
                self.state = if delay_ms == 0 {
                    State::ReadyToSend
                } else {
                    State::Sleeping(delay_ms)
                };
            }
            RetryDecision::Stop => {
                let mut err = err;
                if retry_after == retry::RetryAfter::Unreadable
                    && err.retryable
                    && retries_done < self.max_retries
                {
                    err.message.push_str(
                        "; not retried: its Retry-After is neither a number of seconds nor an HTTP date",
                    );
                }
                self.finish_err(err);
            }
        }
    }

    fn finish_err(&mut self, mut err: ApiError) {
        // Defence in depth: whatever a server or runtime echoed, the key never leaves in an error.
        let key = self.config.api_key();
        if text::contains(&err.message, key) {
            err.message = text::replace(&err.message, key, "[redacted]");
        }
        for (_, value) in &mut err.headers {
            if text::contains(value, key) {
                *value = text::replace(value, key, "[redacted]");
            }
        }
        if err.kind != ErrorKind::UserAbort {
            // The caller receives the error: only a failure that outlived the retries is worth a console line at
            // the default level; a plain 4xx (a handled 404, a validation error) shows from `info` on.
            let level = if err.retryable {
                LogLevel::Error
            } else {
                LogLevel::Info
            };
            let attempts = self.attempts;
            self.log(level, |label| {
                format!(
                    "{} failed: {}{} after {} attempt(s)",
                    label,
                    err.status.map(|s| format!("{s} ")).unwrap_or_default(),
                    err.code,
                    attempts
                )
            });
        }
        self.state = State::Finished(Some(Err(err)));
    }

    /// Keeps the record of the request just answered (`status`) or failed (`failure`), with the decision taken: the
    /// pause before the next attempt, if the call sends again.
    fn record(&mut self, status: Option<u16>, failure: Option<Failure>) {
        let (number, resends, resend) = self.sent;
        self.attempt = Some(Attempt {
            call: self.index,
            number,
            resends,
            resend,
            method: self.spec.method,
            idempotency_key: self.idempotency_key.is_some(),
            status,
            failure,
            retry: self.retry.take(),
        });
    }

    /// Records a line when the configured level shows it; `message` gets the call's label (`GET /v1/...`) and runs
    /// only then, so a quiet client formats nothing.
    fn log(&mut self, level: LogLevel, message: impl FnOnce(&str) -> String) {
        if level != LogLevel::Off && level <= self.config.log_level {
            let message = message(&self.spec.label());
            self.logs.push(LogRecord { level, message });
        }
    }
}

/// Most redirects one call follows.
pub const MAX_REDIRECTS: u32 = 5;

/// Appended to the message of a lost answer of a write that is not replay-safe.
const UNKNOWN_OUTCOME: &str = "; the request may have been applied (outcomeUnknown)";

/// Drops query strings of URLs quoted in a runtime's message (signed URLs carry tokens).
fn scrub_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_query = false;
    for c in text.chars() {
        if in_query {
            if c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>') {
                in_query = false;
                out.push(c);
            }
        } else if c == '?' {
            in_query = true;
            out.push_str("?[redacted]");
        } else {
            out.push(c);
        }
    }
    out
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

type Decoded = (Value, Option<String>);

fn decode_success(
    kind: ResponseKind,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> Result<Decoded, ApiError> {
    let trimmed = body.trim();
    let location = header(headers, "location").map(str::to_owned);
    match kind {
        ResponseKind::NoContent => Ok((Value::Null, None)),
        ResponseKind::Opaque => Ok((
            crate::json::parse_value_exact(trimmed).unwrap_or(Value::Null),
            None,
        )),
        ResponseKind::Redirect if (300..400).contains(&status) => match location {
            Some(loc) if !loc.trim().is_empty() => Ok((Value::Null, Some(loc))),
            _ => Err(invalid(
                status,
                "missing_location",
                "redirect without a Location header",
            )),
        },
        ResponseKind::Json | ResponseKind::Redirect => {
            if trimmed.is_empty() {
                return Ok((Value::Null, location));
            }
            crate::json::parse_value_exact(trimmed)
                .map(|v| (v, location))
                .ok_or_else(|| {
                    invalid(
                        status,
                        "non_json_body",
                        &format!(
                            "HTTP {status} answered with a body that is not JSON ({} bytes)",
                            body.len()
                        ),
                    )
                })
        }
    }
}

fn invalid(status: u16, code: &str, message: &str) -> ApiError {
    let mut err = ApiError::new(ErrorKind::InvalidResponse, code, message);
    err.status = Some(status);
    err
}
