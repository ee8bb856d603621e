//! The single-request path of the client, driven from JS: the core's [`Call`] behind a handle whose steps
//! `drive` in `promise.js` runs (send, pause, end), with no Rust future, waker or closure in between. Most methods are
//! one call with its retries; they take this path. Methods that chain calls (waits, uploads, downloads, pages) keep
//! the async driver in `driver.rs`; both run the same core state machine and the same `attempt`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{self, error_to_js};
use super::driver::{AttemptAnswer, BodyKind};
use super::{Data, Inner};
use crate::client::{Action, ApiError, Call, Env, TransportError};
use crate::wasm::interop;

#[wasm_bindgen(module = "/src/wasm/client/promise.js")]
extern "C" {
    #[wasm_bindgen(js_name = drive)]
    fn drive_js(
        stepper: CallStepper,
        fetch: Option<js_sys::Function>,
        signal: &JsValue,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = sendStep)]
    #[allow(clippy::too_many_arguments)]
    fn send_step(
        url: &str,
        method: &str,
        header_lines: &str,
        body: &JsValue,
        redirect: &str,
        timeout_ms: f64,
        mode: u8,
    ) -> JsValue;
    #[wasm_bindgen(js_name = pauseStep)]
    fn pause_step(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = endStep)]
    fn end_step(ok: bool, value: &JsValue) -> JsValue;
}

/// One call in flight on the JS-driven path. Internal: the package does not export it.
#[wasm_bindgen(skip_typescript)]
pub struct CallStepper {
    inner: Rc<Inner>,
    call: Call,
    data: Data,
    last: Option<Last>,
}

/// What the last answer left for the result.
struct Last {
    answer: AttemptAnswer,
    text: String,
}

fn env() -> Env {
    Env {
        now_ms: js_sys::Date::now() as u64,
        jitter: js_sys::Math::random(),
    }
}

/// Starts `call` on the JS-driven path: the `{ data, response }` promise an `APIPromise` wraps.
pub(crate) fn drive(
    inner: &Rc<Inner>,
    call: Call,
    data: Data,
    signal: &JsValue,
) -> js_sys::Promise {
    let fetch = inner.fetch.clone();
    let stepper = CallStepper {
        inner: inner.clone(),
        call,
        data,
        last: None,
    };
    drive_js(stepper, fetch, signal)
}

/// Checks a caller's `signal` before a request is spent: `undefined`, `null` or an `AbortSignal`-like object.
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

#[wasm_bindgen]
impl CallStepper {
    /// The next step: `{ kind: 0, url, method, headers, body, redirect, timeoutMs, mode }` to send,
    /// `{ kind: 1, timeoutMs }` to pause that long, `{ kind: 2, value }` at the end (`{ data, response }`), `{ kind: 3, value }` on
    /// failure (the error to throw).
    pub fn step(&mut self) -> JsValue {
        let action = self.call.next();
        self.flush(None);
        match action {
            Action::Send(request) => {
                let mut headers = String::new();
                for (name, value) in &request.headers {
                    headers.push_str(name);
                    headers.push('\n');
                    headers.push_str(value);
                    headers.push('\n');
                }
                let body = request
                    .body
                    .as_deref()
                    .map_or(JsValue::UNDEFINED, JsValue::from_str);
                let redirect = if request.follow_redirects {
                    "follow"
                } else {
                    "manual"
                };
                let mode = match self.data {
                    Data::Json => BodyKind::Json,
                    Data::Void => BodyKind::Text,
                };
                send_step(
                    &request.url,
                    request.method.as_str(),
                    &headers,
                    &body,
                    redirect,
                    request.timeout_ms as f64,
                    mode.mode(),
                )
            }
            Action::Sleep { ms } => pause_step(ms as f64),
            Action::Done(Ok(response)) => {
                let (headers, parsed, text) = match &self.last {
                    Some(last) => (
                        last.answer.headers(),
                        (last.answer.parsed().as_bool() == Some(true)).then(|| last.answer.data()),
                        last.text.as_str(),
                    ),
                    None => (JsValue::UNDEFINED, None, ""),
                };
                let data = match (self.data, parsed) {
                    (Data::Void, _) => JsValue::UNDEFINED,
                    (Data::Json, Some(value)) => value,
                    (Data::Json, None) => convert::parse_json(text),
                };
                let value = super::with_response_js(
                    &data,
                    response.status,
                    &headers,
                    response.request_id,
                    response.idempotent_replay,
                );
                end_step(true, &value)
            }
            Action::Done(Err(error)) => end_step(false, &error_to_js(&error)),
        }
    }

    /// Reports what `attempt` resolved to; `elapsed_ms` goes into the debug log line.
    #[wasm_bindgen(js_name = onAnswer)]
    pub fn on_answer(&mut self, answer: JsValue, elapsed_ms: f64) {
        if !answer.is_object() {
            self.call
                .on_transport_error(TransportError::Connection("fetch failed".to_owned()), env());
            self.flush(Some(elapsed_ms));
            return;
        }
        let answer: AttemptAnswer = answer.unchecked_into();
        let status = answer
            .status()
            .as_f64()
            .filter(|s| (0.0..1000.0).contains(s))
            .map_or(0, |s| s as u16);
        let head = super::driver::parse_header_text(&answer.head().as_string().unwrap_or_default());
        // A body JS parsed stays in JS: the core sees none (an empty body, which it reads as `null`).
        let text = if answer.parsed().as_bool() == Some(true) {
            String::new()
        } else {
            answer.text().as_string().unwrap_or_default()
        };
        self.call.on_response(status, &head, &text, env());
        self.last = Some(Last { answer, text });
        self.flush(Some(elapsed_ms));
    }

    /// Reports what `attempt` rejected with (`{ kind, message }`).
    #[wasm_bindgen(js_name = onFailure)]
    pub fn on_failure(&mut self, failure: JsValue, elapsed_ms: f64) {
        let error = super::driver::transport_error(&failure);
        self.call.on_transport_error(error, env());
        self.flush(Some(elapsed_ms));
    }

    /// The caller's signal fired: the next step ends the call with `APIUserAbortError`.
    pub fn abort(&mut self) {
        self.call.abort();
    }

    fn flush(&mut self, elapsed: Option<f64>) {
        for record in self.call.take_logs() {
            self.inner.log(&record, elapsed);
        }
    }
}
