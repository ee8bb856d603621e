//! The one driver of the client, seen from wasm: every method's core [`Flow`] (one call, a wait, an upload, a
//! download, a page) behind a handle whose steps `run` in `promise.js` performs (send, pause, end), with no Rust
//! future, waker or closure in between. This file only converts: steps out (`*Step` helpers of `promise.js`),
//! answers and failures in. The core decides every header (the key only ever goes to `baseUrl`'s origin), every
//! retry, pause and end.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::error_to_js;
use super::ClientState;
use crate::client::telemetry::{Operation, Resend};
use crate::client::{
    AnswerMeta, ApiError, Body, Env, Finished, Flow, FlowValue, HttpRequest, LogLevel, LogRecord,
    Method, Read, Step, TransportError,
};
use crate::wasm::{interop, platform, telemetry};

#[wasm_bindgen(module = "/src/wasm/client/promise.js")]
extern "C" {
    #[wasm_bindgen(js_name = drive)]
    fn drive_js(
        stepper: FlowStepper,
        first: JsValue,
        fetch: Option<js_sys::Function>,
        signal: &JsValue,
        list: &JsValue,
        observation: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = failed)]
    fn failed_js(error: &JsValue, paged: bool) -> JsValue;
    #[wasm_bindgen(js_name = setAnswerMeta)]
    fn set_answer_meta(reader: &JsValue);
    #[wasm_bindgen(js_name = sendStep)]
    #[allow(clippy::too_many_arguments)]
    fn send_step(
        url: &str,
        method: u8,
        header_lines: &str,
        body: &JsValue,
        follow: bool,
        timeout_ms: f64,
        read: u8,
        max_bytes: f64,
        max_error_bytes: f64,
    ) -> JsValue;
    #[wasm_bindgen(js_name = pauseStep)]
    fn pause_step(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = doneStep)]
    fn done_step(
        kind: u8,
        value: &JsValue,
        status: u16,
        request_id: Option<String>,
        idempotent_replay: bool,
    ) -> JsValue;
    #[wasm_bindgen(js_name = failStep)]
    fn fail_step(error: &JsValue) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    /// What `attempt` in `promise.js` resolves (or rejects) with.
    type AttemptAnswer;
    #[wasm_bindgen(method, getter, structural)]
    fn status(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn head(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn text(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn data(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn parsed(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn unread(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn read(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn kind(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn message(this: &AttemptAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn code(this: &AttemptAnswer) -> JsValue;
}

/// The `method` argument of `sendStep`: an index into its `METHODS` table.
fn method_code(method: Method) -> u8 {
    match method {
        Method::Get => 0,
        Method::Post => 1,
        Method::Put => 2,
        Method::Patch => 3,
        Method::Delete => 4,
    }
}

/// The `read` argument of `sendStep` and `attempt`: the number of the same name in `promise.js`'s `ReadMode`.
fn read_code(read: Read) -> u8 {
    match read {
        Read::Text => 0,
        Read::Bytes => 1,
        Read::Json => 2,
        Read::FinalJson => 3,
        Read::Page => 4,
    }
}

/// The `kind` argument of `doneStep`: the number of the same name in `promise.js`'s `ResultKind`.
fn result_code(value: &FlowValue) -> u8 {
    match value {
        FlowValue::Data => 0,
        FlowValue::Void => 1,
        FlowValue::Location(_) => 2,
        FlowValue::Bytes => 3,
        FlowValue::Page { .. } => 4,
        FlowValue::RealtimeSession { .. } => 5,
    }
}

/// One method call in flight. Internal: the package does not export it.
#[wasm_bindgen(skip_typescript)]
pub struct FlowStepper {
    inner: Rc<ClientState>,
    flow: Flow,
    bodies: Bodies,
    /// Who observes the method (`telemetry.js`), and the trace id of its span for the log lines.
    observation: Option<(JsValue, Option<String>)>,
}

/// What the caller handed a method that a request may carry as it is.
pub(crate) struct Bodies {
    /// The caller's bytes, attached to a request the core marks [`HttpRequest::raw_body`] (an upload's PUT).
    pub raw: JsValue,
    /// The JS string of the caller's params text, sent for a body the core marks [`HttpRequest::caller_text`] (the
    /// same text; the string `JSON.stringify` made is what `fetch` writes fastest, and nothing is copied out of wasm).
    pub params_text: JsValue,
}

/// The `signal` option checked before a request is spent: `undefined`, `null` or an `AbortSignal`-like object.
///
/// # Errors
/// `invalid_request` at `signal`.
pub(crate) fn check_signal(signal: &JsValue) -> Result<(), ApiError> {
    if signal.is_undefined() || signal.is_null() {
        return Ok(());
    }
    let listens = interop::function_option(&interop::option(signal, "addEventListener")).is_some();
    if signal.is_object() && listens {
        Ok(())
    } else {
        Err(ApiError::validation(
            "invalid_request",
            "signal",
            "must be an AbortSignal",
        ))
    }
}

thread_local! {
    /// Random bytes for idempotency keys, and how many are used ([`ClientState::random_for`]).
    static KEY_BYTES: std::cell::RefCell<([u8; 256], usize)> = const { std::cell::RefCell::new(([0; 256], 256)) };
    /// Whether `promise.js` has the core's reader of an answer's request id and replay flag.
    static META_SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Hands `promise.js` the core's [`AnswerMeta::read`], once: `withResponse()` of a call that JS ended on its answer
/// ([`Read::FinalJson`]) reads the request id and replay flag through it, only when asked.
fn share_answer_meta() {
    if META_SET.with(|set| set.replace(true)) {
        return;
    }
    let reader = Closure::<dyn Fn(String) -> JsValue>::new(|head: String| {
        let meta = AnswerMeta::read(&parse_header_text(&head));
        platform::object(&[
            (
                "requestId",
                meta.request_id.map_or(JsValue::NULL, JsValue::from),
            ),
            ("idempotentReplay", meta.idempotent_replay.into()),
        ])
    });
    set_answer_meta(&reader.into_js_value());
}

/// Starts `flow`, the method `op`: its `APIPromise` (a `PagePromise` when `list` is `{ resource, params, options }`).
/// Where a tracer or meter provider listens, the flow is observed from its first step: its records become the
/// method's spans and metric points (`telemetry.js`), and its log lines carry the span's trace id.
pub(crate) fn drive(
    inner: &Rc<ClientState>,
    mut flow: Flow,
    bodies: Bodies,
    signal: &JsValue,
    list: &JsValue,
    op: Operation,
) -> JsValue {
    share_answer_meta();
    let observation = telemetry::observe_call(&inner.telemetry, op as u8);
    let observed = observation.as_ref().map(|observation| {
        flow.observe();
        let trace_id = interop::option(observation, "traceId").as_string();
        (observation.clone(), trace_id)
    });
    let mut stepper = FlowStepper {
        inner: inner.clone(),
        flow,
        bodies,
        observation: observed,
    };
    // The first step goes with the handle: one crossing fewer per call.
    let first = stepper.step();
    drive_js(
        stepper,
        first,
        inner.fetch.clone(),
        signal,
        list,
        &observation.unwrap_or(JsValue::UNDEFINED),
    )
}

/// The `APIPromise` of a method refused before any request (bad arguments).
#[inline(never)]
pub(crate) fn rejected(error: &ApiError, paged: bool) -> JsValue {
    failed_js(&error_to_js(error), paged)
}

/// The clock and a jitter number, for the core's retry decisions.
fn env() -> Env {
    Env {
        now_ms: js_sys::Date::now() as u64,
        jitter: js_sys::Math::random(),
    }
}

#[wasm_bindgen]
impl FlowStepper {
    /// The next step (made by the `*Step` helpers of `promise.js`): send, pause, done (the result's kind and value,
    /// the last answer's status, request id and replay flag; JS holds the answer itself) or failed (the error).
    pub fn step(&mut self) -> JsValue {
        let now = if self.flow.uses_clock() {
            js_sys::Date::now() as u64
        } else {
            0
        };
        let step = self.flow.next(now);
        self.flush(None);
        match step {
            Step::Send { request, read } => self.send(&request, read),
            Step::Sleep { ms } => pause_step(ms as f64),
            Step::Done(Ok(finished)) => done(finished),
            Step::Done(Err(error)) => fail_step(&error_to_js(&error)),
        }
    }

    /// Reports what `attempt` resolved to (`elapsed_ms` goes into the debug log line); returns the next step.
    #[wasm_bindgen(js_name = onAnswer)]
    pub fn on_answer(&mut self, answer: JsValue, elapsed_ms: f64) -> JsValue {
        if !answer.is_object() {
            self.flow
                .on_transport_error(TransportError::Connection("fetch failed".to_owned()), env());
            self.flush(Some(elapsed_ms));
            return self.step();
        }
        let answer: AttemptAnswer = answer.unchecked_into();
        let status = answer
            .status()
            .as_f64()
            .filter(|s| (0.0..1000.0).contains(s))
            .map_or(0, |s| s as u16);
        let head = parse_header_text(&answer.head().as_string().unwrap_or_default());
        // The clock and the jitter only serve a failed answer (`Retry-After` dates, backoff): a 2xx skips reading them.
        let env = if (200..300).contains(&status) {
            Env {
                now_ms: 0,
                jitter: 0.0,
            }
        } else {
            env()
        };
        if answer.unread().as_bool() == Some(true) {
            // An error body over the core's cap, left unread.
            self.flow.on_response(status, &head, Body::Unread, env);
        } else if answer.parsed().as_bool() == Some(true) {
            // A body JS parsed stays in JS: the core sees only its `status`, and only when a wait reads it.
            let body_status = if self.flow.reads_status() {
                interop::option(&answer.data(), "status").as_string()
            } else {
                None
            };
            let body = Body::Parsed {
                status: body_status.as_deref(),
            };
            self.flow.on_response(status, &head, body, env);
        } else {
            let text = answer.text().as_string().unwrap_or_default();
            // An error body JSON.parse reads, as `promise.js` wrote it back, for the core when its reader refuses the
            // text (`errorRead`).
            match answer.read().as_string() {
                Some(host_read) => self.flow.on_response(
                    status,
                    &head,
                    Body::ErrorText {
                        text: &text,
                        host_read: &host_read,
                    },
                    env,
                ),
                None => self.flow.on_response(status, &head, Body::Text(&text), env),
            }
        }
        self.flush(Some(elapsed_ms));
        self.step()
    }

    /// Reports what `attempt` rejected with (`{ kind, message, code }`); returns the next step.
    #[wasm_bindgen(js_name = onFailure)]
    pub fn on_failure(&mut self, failure: JsValue, elapsed_ms: f64) -> JsValue {
        self.flow
            .on_transport_error(transport_error(&failure), env());
        self.flush(Some(elapsed_ms));
        self.step()
    }

    /// The caller's signal fired: the next step ends the flow with `APIUserAbortError`.
    pub fn abort(&mut self) {
        self.flow.abort();
    }

    fn send(&self, request: &HttpRequest, read: Read) -> JsValue {
        let body = match (&request.body, request.raw_body) {
            (Some(_), _) if request.caller_text && self.bodies.params_text.is_string() => {
                self.bodies.params_text.clone()
            }
            (Some(text), _) => JsValue::from_str(text),
            (None, true) => self.bodies.raw.clone(),
            (None, false) => JsValue::UNDEFINED,
        };
        send_step(
            &request.url,
            method_code(request.method),
            &header_lines(request),
            &body,
            request.follow_redirects,
            request.timeout_ms as f64,
            read_code(read),
            request.max_body_bytes as f64,
            request.max_error_body_bytes as f64,
        )
    }

    /// Writes the log lines of the last step, and hands an observer the records it left (a reason or failure by
    /// its place in `telemetry.js`'s lists, 0 for none).
    fn flush(&mut self, elapsed: Option<f64>) {
        let trace_id = self.observation.as_ref().and_then(|(_, id)| id.as_deref());
        for record in self.flow.take_logs() {
            self.inner.log(&record, elapsed, trace_id);
        }
        let Some((observation, _)) = &self.observation else {
            return;
        };
        if let Some(a) = self.flow.take_attempt() {
            let (retry_ms, retry_reason) = a
                .retry
                .map_or((0.0, 0), |p| (p.ms as f64, p.reason as u8 + 1));
            telemetry::attempted(
                observation,
                a.call,
                a.number,
                a.resends,
                a.resend.map_or(0, Resend::code),
                a.idempotency_key,
                a.status.unwrap_or(0),
                a.failure.map_or(0, |f| f as u8 + 1),
                retry_ms,
                retry_reason,
            );
        }
        if let Some(p) = self.flow.take_pause() {
            let reason = p.reason as u8 + 1;
            telemetry::attempted(observation, 0, 0, 0, 0, false, 0, 0, p.ms as f64, reason);
        }
    }
}

/// The done step of a finished flow; JS takes the data from the answer it holds (a page's items too: `JSON.parse`
/// of the answer the core read as a page, so they are what `fetch` gives), except a location, a page's cursor, and a
/// live session: the answer as the core read it and set its `url`, as JSON text for `JSON.parse`.
fn done(finished: Finished) -> JsValue {
    let kind = result_code(&finished.value);
    let value = match finished.value {
        FlowValue::RealtimeSession { .. } => {
            JsValue::from(crate::json::to_text(&finished.response.body))
        }
        FlowValue::Location(location) => location.map_or(JsValue::NULL, JsValue::from),
        FlowValue::Page {
            has_more,
            cursor,
            next_cursor,
            ..
        } => platform::object(&[
            ("hasMore", has_more.into()),
            ("cursor", cursor.map_or(JsValue::NULL, JsValue::from)),
            (
                "nextCursor",
                next_cursor.map_or(JsValue::UNDEFINED, JsValue::from),
            ),
        ]),
        FlowValue::Data | FlowValue::Void | FlowValue::Bytes => JsValue::UNDEFINED,
    };
    let response = finished.response;
    done_step(
        kind,
        &value,
        response.status,
        response.request_id,
        response.idempotent_replay,
    )
}

/// A request's headers as the `name\nvalue\n...` text `attempt` takes (one string across the boundary).
fn header_lines(request: &HttpRequest) -> String {
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
fn transport_error(failure: &JsValue) -> TransportError {
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
fn parse_header_text(text: &str) -> Vec<(String, String)> {
    let mut parts = text.split('\n');
    let mut out = Vec::new();
    while let (Some(name), Some(value)) = (parts.next(), parts.next()) {
        out.push((name.to_owned(), value.to_owned()));
    }
    out
}

impl ClientState {
    /// A POST's idempotency key seed (only a POST draws random bytes). The bytes come from one
    /// `crypto.getRandomValues` call per 16 keys (each byte used once): in Node a call costs about 20 us, whatever its
    /// length.
    pub(super) fn random_for(method: Method) -> [u8; 16] {
        if method != Method::Post {
            return [0; 16];
        }
        KEY_BYTES.with(|pool| {
            let mut pool = pool.borrow_mut();
            let (bytes, used) = &mut *pool;
            if *used + 16 > bytes.len() {
                *bytes = platform::random_array();
                *used = 0;
            }
            let mut out = [0; 16];
            if let Some(next) = bytes.get_mut(*used..*used + 16) {
                out.copy_from_slice(next);
                next.fill(0);
            }
            *used += 16;
            out
        })
    }

    /// Writes one log line to the `logger` option or the console; `elapsed` (ms) is appended to the lines of an
    /// answer, and the method's `trace_id` to every line of an observed method. Lines never hold the key, bodies or
    /// queries.
    fn log(&self, record: &LogRecord, elapsed: Option<f64>, trace_id: Option<&str>) {
        let method = match record.level {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error | LogLevel::Off => "error",
        };
        let mut line = format!("[docauto] {}", record.message);
        if let (Some(ms), true) = (elapsed, crate::text::contains(&record.message, " -> ")) {
            // A whole number of ms (never NaN or negative in practice): integer formatting, no float formatting code.
            line.push_str(&format!(" elapsed_ms={}", ms.round().max(0.0) as u64));
        }
        if let Some(id) = trace_id {
            line.push_str(" trace_id=");
            line.push_str(id);
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
