//! Spans and metrics: the JS half (`telemetry.js`) finds the OpenTelemetry providers (the `tracerProvider` and
//! `meterProvider` options, else the registered ones) and turns the core's records into spans, events and metric
//! points. This side only hands it the handles and the records. Where nobody listens, an observed operation costs one
//! call of `listening`, which answers a boolean.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/telemetry.js")]
extern "C" {
    /// The options' providers: 0 none given, 1 given (taken by `heldProviders`), 2 or 3 the `tracerProvider` or the
    /// `meterProvider` is not one (it catches inside).
    #[wasm_bindgen(js_name = providers)]
    fn providers_js(options: &JsValue) -> u8;
    /// The pair the last `providers` call found.
    #[wasm_bindgen(js_name = heldProviders)]
    fn held_providers() -> JsValue;
    /// Whether a tracer or meter provider listens: the `held` ones, or registered ones (it catches inside).
    fn listening(held: &JsValue) -> bool;
}

#[cfg(feature = "client")]
#[wasm_bindgen(module = "/src/wasm/telemetry.js")]
extern "C" {
    #[wasm_bindgen(js_name = observeCall)]
    fn observe_call_js(held: &JsValue, op: u8) -> JsValue;
    /// A request of an observed method was answered or failed, or (`call` 0) the method paused between two calls:
    /// the fields of the core's `Attempt` or `Pause` (it catches inside).
    #[allow(clippy::too_many_arguments)]
    pub fn attempted(
        observation: &JsValue,
        call: u32,
        number: u32,
        resends: u32,
        resend: u16,
        idempotency_key: bool,
        status: u16,
        failure: u8,
        pause_ms: f64,
        pause_reason: u8,
    );
}

/// The observation of one client method (its `Operation` number), or `None` when nobody listens.
#[cfg(feature = "client")]
pub fn observe_call(held: &JsValue, op: u8) -> Option<JsValue> {
    listening(held).then(|| observe_call_js(held, op))
}

#[cfg(feature = "webhooks")]
#[wasm_bindgen(module = "/src/wasm/telemetry.js")]
extern "C" {
    #[wasm_bindgen(js_name = observeDelivery)]
    fn observe_delivery_js(held: &JsValue, method: &str) -> JsValue;
    #[wasm_bindgen(js_name = observeKeyFetch)]
    fn observe_key_fetch_js(held: &JsValue, url: &str) -> JsValue;
    /// Tells an observation what happened: `what` is one of [`delivery`]'s numbers, `value` what it is about (it
    /// catches inside).
    pub fn observed(observation: &JsValue, what: u8, value: &JsValue);
    /// The promise of a verification's result that ends its delivery's span first (it catches inside).
    pub fn settling(observation: &JsValue, verified: &js_sys::Promise) -> js_sys::Promise;
    /// Calls `handler(event, context)` with the delivery's span active, timing it: its result, or a rejected promise
    /// of what it threw (it catches inside).
    #[wasm_bindgen(js_name = runHandler)]
    pub fn run_handler(
        observation: &JsValue,
        handler: &JsValue,
        event: &JsValue,
        context: &JsValue,
    ) -> JsValue;
}

/// The observation of one delivery (`method`: the verifier's method), or `None` when nobody listens.
#[cfg(feature = "webhooks")]
pub fn observe_delivery(held: &JsValue, method: &str) -> Option<JsValue> {
    listening(held).then(|| observe_delivery_js(held, method))
}

/// The observation of one key-set fetch of `url`, or `None` when nobody listens.
#[cfg(feature = "webhooks")]
pub fn observe_key_fetch(held: &JsValue, url: &str) -> Option<JsValue> {
    listening(held).then(|| observe_key_fetch_js(held, url))
}

/// What [`observed`] is told about a delivery or a key-set fetch (`telemetry.js` reads the same numbers).
#[cfg(feature = "webhooks")]
pub mod delivery {
    /// `value` is the verified event; the delivery ends (a synchronous verification).
    pub const VERIFIED: u8 = 1;
    /// `value` is the refusal's error; the delivery ends.
    pub const REFUSED: u8 = 2;
    /// `value` is the verified event; `handle` goes on.
    pub const EVENT: u8 = 3;
    /// A record of the handling ([`crate::webhook::handle::Record`]): this plus its place in the host's table.
    pub const RECORD: u8 = 10;
    /// The answer: this plus the outcome's place ([`crate::webhook::handle::Outcome`]); `value` is its status.
    pub const ANSWERED: u8 = 20;
    /// A key-set fetch ended: `value` is the status (fetched) or the error.
    pub const FETCHED: u8 = 30;
    /// A key-set fetch failed: `value` is the error.
    pub const FETCH_FAILED: u8 = 31;
}

#[cfg(feature = "realtime")]
#[wasm_bindgen(module = "/src/wasm/telemetry.js")]
extern "C" {
    #[wasm_bindgen(js_name = observeSession)]
    fn observe_session_js(held: &JsValue) -> JsValue;
    /// A record of an observed session (`kind`: its place in `telemetry.js`'s list; two numbers, an error's code,
    /// the close reason; it catches inside).
    #[wasm_bindgen(js_name = sessionRecord)]
    pub fn session_record(
        observation: &JsValue,
        kind: u8,
        a: f64,
        b: f64,
        code: &str,
        reason: &str,
    );
}

/// The observation of one live session, or `None` when nobody listens.
#[cfg(feature = "realtime")]
pub fn observe_session(held: &JsValue) -> Option<JsValue> {
    listening(held).then(|| observe_session_js(held))
}

/// The `tracerProvider` and `meterProvider` of a constructor's `options` (JS handles, kept by the instance, never
/// handed to the core): `undefined` when neither is given.
///
/// # Errors
/// The name of an option that is not a provider (or whose reading threw).
pub fn providers(options: &JsValue) -> Result<JsValue, &'static str> {
    match providers_js(options) {
        0 => Ok(JsValue::UNDEFINED),
        1 => Ok(held_providers()),
        2 => Err("tracerProvider"),
        _ => Err("meterProvider"),
    }
}
