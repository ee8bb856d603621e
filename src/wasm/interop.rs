//! Conversions between JS values and the core's types, in one place.
//!
//! Values the application hands over (options, bodies, events, stores, audio) may throw when touched: a getter, a
//! `Proxy` trap, a detached buffer. Every touch goes through a `catch` binding or `interop.js` (which reads arrays
//! through the engine's intrinsics), so a JS exception never unwinds through Rust frames: the caller gets the entry's
//! own error with its stable code.
// Helpers shared by every class; the webhook-only build (no `client`/`realtime` feature) uses a subset.
#![cfg_attr(not(all(feature = "client", feature = "realtime")), allow(dead_code))]

use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::json::Json;
use crate::webhook::{ErrorCode, WebhookError};

#[wasm_bindgen(module = "/src/wasm/errors.js")]
extern "C" {
    #[wasm_bindgen(js_name = createWebhookError)]
    fn create_webhook_error(code: &str, message: &str, status: u16) -> JsValue;
    #[wasm_bindgen(js_name = createApiError)]
    fn create_api_error(class_name: &str, message: &str, fields: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = createRealtimeError)]
    fn create_realtime_error(code: &str, message: &str, retryable: bool) -> JsValue;
}

#[wasm_bindgen(module = "/src/wasm/interop.js")]
extern "C" {
    /// A new `Uint8Array` over the bytes of an ArrayBuffer or a view, or `undefined` (see `interop.js`).
    #[wasm_bindgen(js_name = bytesOf)]
    fn bytes_of(value: &JsValue) -> JsValue;
    /// A new `Float32Array` or `Int16Array` over the samples of one, or `undefined` (see `interop.js`).
    #[wasm_bindgen(js_name = samplesOf)]
    pub fn samples_of(value: &JsValue) -> JsValue;
    /// A promise of this module that settles as `value` does, never throwing (see `interop.js`).
    fn settled(value: &JsValue) -> js_sys::Promise;
    /// A promise of `[true, result]` or `[false, reason]` once `value` settles; it never rejects (see `interop.js`).
    pub fn outcome(value: &JsValue) -> js_sys::Promise;
    /// A new fencing token for a dedupe claim, a string (see `interop.js`; it catches inside).
    pub fn token() -> JsValue;
    /// The data options as JSON text, or `None` (see `interop.js`; it catches inside).
    #[wasm_bindgen(js_name = plainOptionsText)]
    fn plain_options_js(options: &JsValue, handles: &str) -> Option<String>;
    /// A `Uint8Array` of this module's making, whose `length` is read as a number (js-sys's `length()` is a `u32`:
    /// 4 GiB and more would wrap).
    type OwnBytes;
    #[wasm_bindgen(method, getter, js_name = length)]
    fn length(this: &OwnBytes) -> f64;
}

/// A `RealtimeError` (the class of `errors.js`) with a stable `code`; `message` must hold no secret (no ticket).
pub fn realtime_error(code: &str, message: &str, retryable: bool) -> JsValue {
    create_realtime_error(code, message, retryable)
}

/// A `WebhookVerificationError` (the class of `errors.js`: `name` "WebhookVerificationError", a stable `code`,
/// the `status` to answer the sender with); the message is the core's static text.
fn coded_error(code: &str, message: &str, status: u16) -> JsValue {
    create_webhook_error(code, message, status)
}

/// An instance of the `errors.js` class `class_name` (`APIError` or a subclass) with `fields`
/// (`status`, `code`, `retryable`, `requestId`, `docUrl`, `headers`, `retryAfter`).
pub fn api_error(class_name: &str, message: &str, fields: &JsValue) -> JsValue {
    create_api_error(class_name, message, fields)
}

/// A webhook failure as a JS `WebhookVerificationError`.
pub fn webhook_error(e: WebhookError) -> JsValue {
    coded_error(e.code().as_str(), &e.to_string(), e.code().http_status())
}

/// A webhook failure of `code` with a static explanation.
pub fn webhook_failure(code: ErrorCode, detail: &'static str) -> JsValue {
    webhook_error(WebhookError::new(code, detail))
}

/// A raw body: its bytes, and the original JS string when one was given (parsed without re-decoding).
pub struct RawBody {
    /// The bytes that were signed.
    pub bytes: Vec<u8>,
    /// The JS string, when the body came as one.
    pub text: Option<JsValue>,
}

/// Reads a body given as a string, any ArrayBuffer view (Uint8Array, Buffer, DataView) or an ArrayBuffer.
///
/// # Errors
/// `invalid_input` for any other value, or a detached buffer.
pub fn raw_body(value: &JsValue) -> Result<RawBody, JsValue> {
    if let Some(text) = value.as_string() {
        return Ok(RawBody {
            bytes: text.into_bytes(),
            text: Some(value.clone()),
        });
    }
    let view = body_bytes(value).ok_or_else(not_a_body)?;
    Ok(RawBody {
        bytes: view.to_vec(),
        text: None,
    })
}

/// The bytes of an ArrayBuffer or any ArrayBuffer view (of any realm) as a new `Uint8Array` over the same memory,
/// read through the engine's intrinsics (no getter of the value runs, no length it claims is believed); `None` for
/// anything else, or a detached buffer.
pub fn body_bytes(value: &JsValue) -> Option<Uint8Array> {
    let view = bytes_of(value);
    (!view.is_undefined()).then(|| view.unchecked_into())
}

/// The length of a `Uint8Array` [`body_bytes`] made (its own, exact: no value of the caller's is asked).
pub fn byte_count(view: &Uint8Array) -> u64 {
    view.unchecked_ref::<OwnBytes>().length() as u64
}

/// `invalid_input` for a body that is not one.
pub fn not_a_body() -> JsValue {
    webhook_error(crate::webhook::body_limit::NOT_A_BODY)
}

/// The body as text for `JSON.parse`: the original string, or the bytes decoded as UTF-8.
pub fn body_text(body: &RawBody) -> Option<JsValue> {
    match &body.text {
        Some(text) => Some(text.clone()),
        None => core::str::from_utf8(&body.bytes)
            .ok()
            .map(JsValue::from_str),
    }
}

/// Reads option `name` of an options object (`undefined` when absent, when the object is not an object, or when
/// reading it throws: see [`try_option`]).
pub fn option(options: &JsValue, name: &str) -> JsValue {
    try_option(options, name).unwrap_or(JsValue::UNDEFINED)
}

/// Reads option `name` of an options object (`undefined` when absent or the object is not an object).
///
/// # Errors
/// `Err(())` when reading it throws (a getter, a `Proxy` trap, a revoked `Proxy`).
pub fn try_option(options: &JsValue, name: &str) -> Result<JsValue, ()> {
    if options.is_object() {
        Reflect::get(options, &name.into()).map_err(|_| ())
    } else {
        Ok(JsValue::UNDEFINED)
    }
}

/// Names of the own enumerable keys of an options object (none when listing them throws: see [`own_names`]).
#[cfg(feature = "testing")]
pub fn option_names(options: &JsValue) -> Vec<String> {
    own_names(options).unwrap_or_default()
}

/// Names of the own enumerable string keys of an object (none for a non-object).
///
/// # Errors
/// `Err(())` when listing them throws (a `Proxy` trap, a revoked `Proxy`).
#[cfg(feature = "testing")]
pub fn own_names(value: &JsValue) -> Result<Vec<String>, ()> {
    if !value.is_object() {
        return Ok(Vec::new());
    }
    Ok(super::platform::object_keys(value)
        .map_err(|_| ())?
        .iter()
        .filter_map(|k| k.as_string())
        .collect())
}

/// An object without prototype holding the own enumerable members of `value` (`Object.assign(Object.create(null),
/// value)`): every getter runs once, here, and what is read from the copy afterwards runs no code of the caller's
/// (nor inherits anything: an own `__proto__` member is copied as a member, not made the copy's prototype).
///
/// # Errors
/// `Err(())` when copying throws (a getter, a `Proxy` trap, a revoked `Proxy`).
#[cfg(feature = "testing")]
pub fn plain_copy(value: &JsValue) -> Result<JsValue, ()> {
    let target = js_sys::Object::create(JsValue::NULL.unchecked_ref::<js_sys::Object>());
    super::platform::object_assign(&target, value).map_err(|_| ())
}

/// A function option, when present and callable.
pub fn function_option(value: &JsValue) -> Option<Function> {
    value.dyn_ref::<Function>().cloned().or_else(|| {
        (value.js_typeof().as_string().as_deref() == Some("function"))
            .then(|| value.clone().unchecked_into())
    })
}

/// Awaits a value that may be a promise (a thenable, however hostile) or a plain value: a failure of its `then` is a
/// rejection, never an exception through this frame.
pub async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(settled(&value)).await
}

/// A promise of this module that settles as `value` does (a plain value, a promise, a thenable), for
/// `JsFuture::from` and `Promise.race`, which call its `then`: never the caller's own object.
pub fn own_promise(value: &JsValue) -> js_sys::Promise {
    settled(value)
}

/// The plain-data part of an options object, for the core's options decoder: a copy without the `handles` (JS
/// functions and objects the host keeps), as JSON. A non-finite number (which JSON cannot carry, and which would
/// otherwise read as "not given") becomes the string `"NaN"` or `"Infinity"`, so the core reports it as the wrong
/// type at its name.
///
/// # Errors
/// `Err(())` when a data option cannot be read as JSON (a function or a symbol where data is expected, a cycle, a
/// `BigInt`).
pub fn plain_options(options: &JsValue, handles: &[&str]) -> Result<serde_json::Value, ()> {
    // The client's reader of `serde_json::Value`s (the one its answers and params go through), not a second one.
    crate::json::parse_value_exact(&plain_options_text(options, handles)?).ok_or(())
}

/// [`plain_options`] read by the crate's own JSON reader (`docauto/webhooks`, which links no `serde_json::Value`).
///
/// # Errors
/// As [`plain_options`].
pub fn plain_options_json(options: &JsValue, handles: &[&str]) -> Result<crate::json::Json, ()> {
    crate::json::Json::parse(&plain_options_text(options, handles)?).ok_or(())
}

/// A key set given as data (the verifier's `jwks` option: an object, or JSON text whose string holds a lone
/// surrogate), read as the core reads a fetched one: a string holding a lone surrogate (which `JSON.parse` and
/// `JSON.stringify` keep, and a Rust `String` cannot hold) is `null`, so only the key holding it is dropped
/// ([`crate::webhook::jwk`]), rather than the whole options refused.
///
/// # Errors
/// `Err(())` when it is not JSON data.
pub fn key_set_json(value: &JsValue) -> Result<Json, ()> {
    // JSON.parse and JSON.stringify (both `catch`) run a `toJSON` or a getter of the caller's inside their own call.
    let value = if value.is_string() {
        super::platform::json_parse(value).map_err(|_| ())?
    } else {
        value.clone()
    };
    let text = super::platform::json_stringify(&value)
        .ok()
        .and_then(|t| t.as_string())
        .ok_or(())?;
    Json::parse_lone_surrogates_as_null(&text).ok_or(())
}

/// [`plain_options`] as JSON text, for a core that reads it without serde (`docauto/realtime`).
///
/// # Errors
/// As [`plain_options`].
pub fn plain_options_text(options: &JsValue, handles: &[&str]) -> Result<String, ()> {
    // In JS, one call: the copy, the handles' removal, the non-finite numbers and the text (interop.js). Through
    // JSON text rather than serde-wasm-bindgen: each module reads it with the crate's JSON reader, and the
    // webhook-only module stays 20+ KB (gzip) smaller without a deserializer of JS values.
    debug_assert!(handles.iter().all(|h| !h.is_empty() && !h.contains(',')));
    plain_options_js(options, &handles.join(",")).ok_or(())
}

/// A JSON value as the JS value `JSON.parse` would give, built member by member: no JSON text is written, so the
/// serializer (and its float printing) stays out of the modules that only hand data out (the webhook verifier's
/// keys: 5 KB gzip of `docauto/webhooks`).
pub fn json_to_js(value: &Json) -> JsValue {
    match value {
        Json::Null => JsValue::NULL,
        Json::Bool(b) => JsValue::from_bool(*b),
        Json::Number(n) => JsValue::from_f64(*n),
        Json::String(s) => JsValue::from_str(s),
        Json::Array(items) => items
            .iter()
            .map(json_to_js)
            .collect::<js_sys::Array>()
            .into(),
        Json::Object(members) => {
            let object = js_sys::Object::new();
            for (name, member) in members {
                let (name, member) = (JsValue::from_str(name), json_to_js(member));
                if name == "__proto__" {
                    // An own member, as JSON.parse makes it; assigning would set the object's prototype.
                    let descriptor = super::platform::object(&[
                        ("value", member),
                        ("writable", JsValue::TRUE),
                        ("enumerable", JsValue::TRUE),
                        ("configurable", JsValue::TRUE),
                    ]);
                    js_sys::Object::define_property(&object, &name, descriptor.unchecked_ref());
                } else {
                    let _ = Reflect::set(&object, &name, &member);
                }
            }
            object.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn stringify(value: &JsValue) -> Option<String> {
        crate::wasm::platform::json_stringify(value)
            .ok()?
            .as_string()
    }

    #[wasm_bindgen_test]
    fn a_json_value_becomes_what_json_parse_makes_of_its_text() {
        let text =
            r#"{"__proto__":{"x":1},"a":[1,2.5,-0.001,"b\u00e9",null,true,false],"c":{},"d":[]}"#;
        let built = json_to_js(&Json::parse(text).unwrap());
        let parsed = crate::wasm::platform::json_parse(&JsValue::from_str(text)).unwrap();
        assert_eq!(stringify(&built), stringify(&parsed));
        // `__proto__` is an own member, as JSON.parse makes it: the prototype is still Object.prototype.
        let plain = js_sys::Object::get_prototype_of(&js_sys::Object::new().into());
        assert_eq!(js_sys::Object::get_prototype_of(&built), plain);
        assert!(Reflect::get(&built, &"x".into()).unwrap().is_undefined());
    }
}
