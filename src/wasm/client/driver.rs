//! The one I/O driver of the client: runs the core's [`Call`] state machine with `fetch` and timers, and the poll
//! and output planners on top of it. The core decides every header (the key only ever goes to `baseUrl`'s origin);
//! nothing here adds one.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::{convert, ClientState};
use crate::client::output::{OutputPlanner, OutputStep};
use crate::client::polling::{PollPlanner, PollStep, PollTiming};
use crate::client::retry;
use crate::client::{
    Action, ApiError, ApiResponse, Call, CallOptions, Env, ErrorKind, HttpRequest, LogLevel,
    LogRecord, Method, RequestSpec, TransportError,
};
use crate::wasm::interop;
use crate::wasm::platform::{self, AbortWatch, Sleep};

/// One JS method call: the client, the options and the caller's abort signal (watched once for every request the
/// method makes).
pub struct Ctx<'a> {
    inner: &'a ClientState,
    options: CallOptions,
    signal: JsValue,
    abort: Option<AbortWatch>,
}

/// A finished call: the core's response and the last answer's body, as JS sees it.
pub struct Outcome {
    /// The core's view of the answer.
    pub response: ApiResponse,
    /// The body text, when the core read it.
    pub text: String,
    /// The body parsed by JS ([`BodyKind::Json`]).
    pub parsed: Option<JsValue>,
    /// The body bytes (downloads).
    pub bytes: Option<js_sys::Uint8Array>,
    /// The answer's `Headers` object (made a plain object only when `withResponse()` reads it).
    pub headers: JsValue,
}

impl Outcome {
    /// The answer's JSON body as a JS value (`null` for an empty body).
    pub fn data(&self) -> JsValue {
        match &self.parsed {
            Some(value) => value.clone(),
            None => convert::parse_json(&self.text),
        }
    }
}

/// What to do with an answer's body. Crosses to `attempt` in `promise.js` as the number of the same name in its
/// `BodyMode` table (`BodyKind::mode`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// Read it as text and hand it to the core (the core needs the body: polls, pages, registrations).
    Text,
    /// Parse a 2xx body as JSON in JS: the data never enters wasm, the core sees the status and the headers it
    /// reads. A body that does not parse goes to the core as text (which reports `non_json_body`).
    Json,
    /// As [`BodyKind::Json`], and a 2xx whose body parses ends the call in JS (the core said so:
    /// [`crate::client::Call::json_success_is_final`]), with the request id and replay flag read from its headers.
    /// Only the JS-driven path (`stepper.rs`) uses it.
    FinalJson,
    /// Read the bytes (a signed download); only an error answer's text goes to the core.
    Bytes,
}

impl BodyKind {
    /// The `mode` argument of `attempt` in `promise.js`: `BodyMode.TEXT`, `.BYTES`, `.JSON`, `.FINAL_JSON`.
    pub(super) fn mode(self) -> u8 {
        match self {
            BodyKind::Text => 0,
            BodyKind::Bytes => 1,
            BodyKind::Json => 2,
            BodyKind::FinalJson => 3,
        }
    }
}

#[wasm_bindgen]
extern "C" {
    /// What `attempt` in `promise.js` resolves (or rejects) with.
    pub(super) type AttemptAnswer;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn status(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn head(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn headers(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn text(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn bytes(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn data(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn parsed(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn kind(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn message(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub(super) fn code(this: &AttemptAnswer) -> JsValue;
}

impl AttemptAnswer {
    /// The answer's HTTP status (0 when it is not a number a status can be).
    pub(super) fn http_status(&self) -> u16 {
        self.status()
            .as_f64()
            .filter(|s| (0.0..1000.0).contains(s))
            .map_or(0, |s| s as u16)
    }
}

struct Answer {
    status: u16,
    head: Vec<(String, String)>,
    headers: JsValue,
    text: String,
    parsed: Option<JsValue>,
    bytes: Option<js_sys::Uint8Array>,
}

fn aborted() -> ApiError {
    ApiError::new(ErrorKind::UserAbort, "aborted", "the call was aborted")
}

/// The clock and a jitter number, for the core's retry decisions.
pub(super) fn env() -> Env {
    Env {
        now_ms: js_sys::Date::now() as u64,
        jitter: js_sys::Math::random(),
    }
}

impl<'a> Ctx<'a> {
    /// Prepares a method call.
    ///
    /// # Errors
    /// `invalid_request` at `signal` when the signal is not an `AbortSignal`.
    pub fn new(
        inner: &'a ClientState,
        options: CallOptions,
        signal: &JsValue,
    ) -> Result<Self, ApiError> {
        let abort = AbortWatch::new(signal).map_err(|()| invalid_signal())?;
        Ok(Self {
            inner,
            options,
            signal: if abort.is_some() {
                signal.clone()
            } else {
                JsValue::UNDEFINED
            },
            abort,
        })
    }

    fn is_aborted(&self) -> bool {
        self.abort.as_ref().is_some_and(AbortWatch::aborted)
    }

    async fn sleep(&self, ms: u64) -> bool {
        Sleep::start(ms as f64).wait(self.abort.as_ref()).await
    }

    /// Runs one call (with its retries).
    ///
    /// # Errors
    /// The core's error of the call.
    pub async fn call(
        &self,
        spec: RequestSpec,
        raw_body: Option<&JsValue>,
        kind: BodyKind,
    ) -> Result<Outcome, ApiError> {
        let mut call = self.inner.start_call(spec, &self.options)?;
        let mut last: Option<Answer> = None;
        loop {
            let action = call.next();
            self.inner.flush(&mut call, None);
            match action {
                Action::Send(request) => {
                    if self.is_aborted() {
                        call.abort();
                        continue;
                    }
                    let started = js_sys::Date::now();
                    match self.send(&request, raw_body, kind).await {
                        Ok(answer) => {
                            call.on_response(answer.status, &answer.head, &answer.text, env());
                            last = Some(answer);
                        }
                        Err(e) => call.on_transport_error(e, env()),
                    }
                    self.inner
                        .flush(&mut call, Some(js_sys::Date::now() - started));
                }
                Action::Sleep { ms } => {
                    if !self.sleep(ms).await {
                        call.abort();
                    }
                }
                Action::Done(result) => {
                    return result.map(|response| match last {
                        Some(answer) => Outcome {
                            response,
                            text: answer.text,
                            parsed: answer.parsed,
                            bytes: answer.bytes,
                            headers: answer.headers,
                        },
                        None => Outcome {
                            response,
                            text: String::new(),
                            parsed: None,
                            bytes: None,
                            headers: JsValue::UNDEFINED,
                        },
                    });
                }
            }
        }
    }

    /// Runs a wait: each planned request through [`Ctx::call`], sleeping where the planner says.
    ///
    /// # Errors
    /// The first failed call, an abort, or the planner's own error.
    pub async fn poll(&self, mut planner: PollPlanner) -> Result<Outcome, ApiError> {
        let mut last = None;
        let started = js_sys::Date::now();
        loop {
            match planner.next() {
                PollStep::Request(spec) => {
                    let sent = js_sys::Date::now();
                    // JS parses the answer (it never enters wasm); the planner reads only its `status`.
                    let outcome = self.call(spec, None, BodyKind::Json).await?;
                    let now = js_sys::Date::now();
                    let timing = PollTiming {
                        held_ms: (now - sent).max(0.0) as u64,
                        elapsed_ms: (now - started).max(0.0) as u64,
                        retry_after_ms: retry::parse_retry_after(
                            &outcome.response.headers,
                            Some(now as u64),
                        ),
                    };
                    let body = match &outcome.parsed {
                        Some(data) => match interop::option(data, "status").as_string() {
                            Some(status) => serde_json::json!({ "status": status }),
                            None => serde_json::Value::Null,
                        },
                        None => outcome.response.body.clone(),
                    };
                    planner.on_answer(&body, timing);
                    last = Some(outcome);
                }
                PollStep::Sleep { ms } => {
                    if !self.sleep(ms).await {
                        return Err(aborted());
                    }
                }
                PollStep::Done(Ok(_)) => {
                    return last.ok_or_else(|| {
                        ApiError::new(ErrorKind::InvalidResponse, "unexpected_shape", "no answer")
                    })
                }
                PollStep::Done(Err(e)) => return Err(e),
            }
        }
    }

    /// Runs an output wait: the signed `Location` of a run's output once it exists.
    ///
    /// # Errors
    /// The last error of the output route, or an abort.
    pub async fn output_location(&self, mut planner: OutputPlanner) -> Result<String, ApiError> {
        loop {
            match planner.next() {
                OutputStep::Request(spec) => {
                    let result = self
                        .call(spec, None, BodyKind::Text)
                        .await
                        .map(|o| o.response);
                    if matches!(&result, Err(e) if e.kind == ErrorKind::UserAbort) {
                        return Err(aborted());
                    }
                    planner.on_result(result);
                }
                OutputStep::Sleep { ms } => {
                    if !self.sleep(ms).await {
                        return Err(aborted());
                    }
                }
                OutputStep::Done(result) => return result,
            }
        }
    }

    async fn send(
        &self,
        request: &HttpRequest,
        raw_body: Option<&JsValue>,
        kind: BodyKind,
    ) -> Result<Answer, TransportError> {
        let headers = header_lines(request);
        let body = match (&request.body, request.raw_body, raw_body) {
            (Some(text), _, _) => JsValue::from_str(text),
            (None, true, Some(bytes)) => bytes.clone(),
            _ => JsValue::UNDEFINED,
        };
        let redirect = if request.follow_redirects {
            "follow"
        } else {
            "manual"
        };
        let pending = super::attempt(
            self.inner.fetch.clone(),
            &request.url,
            request.method.as_str(),
            &headers,
            &body,
            redirect,
            request.timeout_ms as f64,
            &self.signal,
            kind.mode(),
            request.max_body_bytes as f64,
        );
        match JsFuture::from(pending).await {
            Ok(answer) => {
                let answer: AttemptAnswer = answer.unchecked_into();
                let status = answer.http_status();
                let bytes = answer.bytes();
                let parsed = answer.parsed().as_bool() == Some(true);
                Ok(Answer {
                    status,
                    head: parse_header_text(&answer.head().as_string().unwrap_or_default()),
                    headers: answer.headers(),
                    text: answer.text().as_string().unwrap_or_default(),
                    parsed: parsed.then(|| answer.data()),
                    bytes: (!bytes.is_undefined()).then(|| bytes.unchecked_into()),
                })
            }
            Err(failure) => Err(transport_error(&failure)),
        }
    }
}

/// The error of a `signal` option that is not an `AbortSignal`.
pub(super) fn invalid_signal() -> ApiError {
    ApiError::validation("invalid_request", "signal", "must be an AbortSignal")
}

/// A request's headers as the `name\nvalue\n...` text `attempt` takes (one string across the boundary).
pub(super) fn header_lines(request: &HttpRequest) -> String {
    let mut lines = String::new();
    for (name, value) in &request.headers {
        lines.push_str(name);
        lines.push('\n');
        lines.push_str(value);
        lines.push('\n');
    }
    lines
}

/// The core's view of what `attempt` rejected with (`{ kind, message, code }`); the core decides from the code and
/// message whether the request was sent ([`TransportError::from_runtime`]).
pub(super) fn transport_error(failure: &JsValue) -> TransportError {
    if !failure.is_object() {
        return TransportError::Connection("fetch failed".to_owned());
    }
    let failure: &AttemptAnswer = failure.unchecked_ref();
    match failure.kind().as_string().as_deref() {
        Some("timeout") => TransportError::Timeout,
        Some("aborted") => TransportError::Aborted,
        Some("too_large") => TransportError::TooLarge,
        _ => TransportError::from_runtime(
            &failure.code().as_string().unwrap_or_default(),
            &failure
                .message()
                .as_string()
                .unwrap_or_else(|| "fetch failed".to_owned()),
        ),
    }
}

/// Splits `name\nvalue\n...` header text into pairs.
pub(super) fn parse_header_text(text: &str) -> Vec<(String, String)> {
    let mut parts = text.split('\n');
    let mut out = Vec::new();
    while let (Some(name), Some(value)) = (parts.next(), parts.next()) {
        out.push((name.to_owned(), value.to_owned()));
    }
    out
}

impl ClientState {
    /// Prepares a call of the core. Only a POST draws an idempotency key from the random bytes.
    ///
    /// # Errors
    /// The core's refusal of the options (see [`Call::new`]).
    pub(super) fn start_call(
        &self,
        spec: RequestSpec,
        options: &CallOptions,
    ) -> Result<Call, ApiError> {
        let random = if spec.method == Method::Post {
            platform::random_bytes()
        } else {
            [0; 16]
        };
        Call::new(&self.config, spec, options, random)
    }

    /// Hands the call's log lines to the logger; `elapsed` (ms) is appended to the lines of an answer.
    pub(super) fn flush(&self, call: &mut Call, elapsed: Option<f64>) {
        for record in call.take_logs() {
            self.log(&record, elapsed);
        }
    }

    /// Writes one log line to the `logger` option or the console. Lines never hold the key, bodies or queries.
    pub(super) fn log(&self, record: &LogRecord, elapsed: Option<f64>) {
        let method = match record.level {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error | LogLevel::Off => "error",
        };
        let mut line = format!("[docauto] {}", record.message);
        if let (Some(ms), true) = (elapsed, record.message.contains(" -> ")) {
            line.push_str(&format!(" elapsed_ms={}", ms.round()));
        }
        let target = self
            .logger
            .clone()
            .unwrap_or_else(|| platform::global("console"));
        if let Some(f) = interop::function_option(&interop::option(&target, method)) {
            let _ = f.call1(&target, &line.into());
        }
    }
}
