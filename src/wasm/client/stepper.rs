//! The single-request path of the client, driven from JS: the core's [`Call`] behind a handle whose steps
//! `drive` in `promise.js` runs (send, pause, end), with no Rust future, waker or closure in between. Most methods are
//! one call with its retries; they take this path. Methods that chain calls (waits, uploads, downloads, pages) keep
//! the async driver in `driver.rs`; both run the same core state machine and the same `attempt`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::error_to_js;
use super::driver::{env, AttemptAnswer, BodyKind};
use super::{ClientState, Data};
use crate::client::{Action, ApiError, Call, Env, Method, TransportError};
use crate::wasm::interop;

#[wasm_bindgen(module = "/src/wasm/client/promise.js")]
extern "C" {
    #[wasm_bindgen(js_name = drive)]
    fn drive_js(stepper: CallStepper, fetch: Option<js_sys::Function>, signal: &JsValue)
        -> JsValue;
    #[wasm_bindgen(js_name = sendStep)]
    fn send_step(
        url: &str,
        method: u8,
        header_lines: &str,
        body: &JsValue,
        follow: bool,
        timeout_ms: f64,
        mode: u8,
        max_bytes: f64,
    ) -> JsValue;
    #[wasm_bindgen(js_name = pauseStep)]
    fn pause_step(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = doneStep)]
    fn done_step(status: u16, request_id: Option<String>, idempotent_replay: bool) -> JsValue;
    #[wasm_bindgen(js_name = failStep)]
    fn fail_step(error: &JsValue) -> JsValue;
}

/// One call in flight on the JS-driven path. Internal: the package does not export it.
#[wasm_bindgen(skip_typescript)]
pub struct CallStepper {
    inner: Rc<ClientState>,
    call: Call,
    data: Data,
}

/// The `method` argument of `sendStep` (an index into its `METHODS` table of names).
fn method_code(method: Method) -> u8 {
    match method {
        Method::Get => 0,
        Method::Post => 1,
        Method::Put => 2,
        Method::Patch => 3,
        Method::Delete => 4,
    }
}

/// Starts `call` on the JS-driven path: its `APIPromise`.
pub(crate) fn drive(inner: &Rc<ClientState>, call: Call, data: Data, signal: &JsValue) -> JsValue {
    let fetch = inner.fetch.clone();
    let stepper = CallStepper {
        inner: inner.clone(),
        call,
        data,
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
        Err(super::driver::invalid_signal())
    }
}

#[wasm_bindgen]
impl CallStepper {
    /// The next step (made by the `*Step` helpers of `promise.js`): send, pause, done (status, request id, replay
    /// flag; JS builds the result from the answer it holds) or failed (the error to throw).
    pub fn step(&mut self) -> JsValue {
        let action = self.call.next();
        self.flush(None);
        match action {
            Action::Send(request) => {
                let headers = super::driver::header_lines(&request);
                let body = request
                    .body
                    .as_deref()
                    .map_or(JsValue::UNDEFINED, JsValue::from_str);
                let kind = match self.data {
                    // The core needs nothing more of a JSON 2xx: JS parses it and ends the call itself.
                    Data::Json if self.call.json_success_is_final() => BodyKind::FinalJson,
                    Data::Json => BodyKind::Json,
                    Data::Void => BodyKind::Text,
                };
                send_step(
                    &request.url,
                    method_code(request.method),
                    &headers,
                    &body,
                    request.follow_redirects,
                    request.timeout_ms as f64,
                    kind.mode(),
                    request.max_body_bytes as f64,
                )
            }
            Action::Sleep { ms } => pause_step(ms as f64),
            // JS builds the result from the answer it holds: its parsed body (a `Data::Json` route's 2xx is always
            // parsed there; a body that did not parse failed the call) and its `Headers`.
            Action::Done(Ok(response)) => done_step(
                response.status,
                response.request_id,
                response.idempotent_replay,
            ),
            Action::Done(Err(error)) => fail_step(&error_to_js(&error)),
        }
    }

    /// Reports what `attempt` resolved to (`elapsed_ms` goes into the debug log line); returns the next step.
    #[wasm_bindgen(js_name = onAnswer)]
    pub fn on_answer(&mut self, answer: JsValue, elapsed_ms: f64) -> JsValue {
        if !answer.is_object() {
            self.call
                .on_transport_error(TransportError::Connection("fetch failed".to_owned()), env());
            self.flush(Some(elapsed_ms));
            return self.step();
        }
        let answer: AttemptAnswer = answer.unchecked_into();
        let status = answer.http_status();
        let head = super::driver::parse_header_text(&answer.head().as_string().unwrap_or_default());
        // A body JS parsed stays in JS: the core sees none (an empty body, which it reads as `null`).
        let text = if answer.parsed().as_bool() == Some(true) {
            String::new()
        } else {
            answer.text().as_string().unwrap_or_default()
        };
        // The clock and the jitter only serve a failed answer (`Retry-After` dates, backoff): a 2xx skips reading them.
        let env = if (200..300).contains(&status) {
            Env {
                now_ms: 0,
                jitter: 0.0,
            }
        } else {
            env()
        };
        self.call.on_response(status, &head, &text, env);
        self.flush(Some(elapsed_ms));
        self.step()
    }

    /// Reports what `attempt` rejected with (`{ kind, message }`); returns the next step.
    #[wasm_bindgen(js_name = onFailure)]
    pub fn on_failure(&mut self, failure: JsValue, elapsed_ms: f64) -> JsValue {
        let error = super::driver::transport_error(&failure);
        self.call.on_transport_error(error, env());
        self.flush(Some(elapsed_ms));
        self.step()
    }

    /// The caller's signal fired: the next step ends the call with `APIUserAbortError`.
    pub fn abort(&mut self) {
        self.call.abort();
    }

    fn flush(&mut self, elapsed: Option<f64>) {
        self.inner.flush(&mut self.call, elapsed);
    }
}
