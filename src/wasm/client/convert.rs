//! Conversions of the client's JS values: parameters in, errors and responses out.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::client::options::{CallOptionsInput, RawOption};
use crate::client::params::{Fields, Params};
use crate::client::polling::Until;
use crate::client::{self, ApiError, CallOptions};
use crate::wasm::{interop, platform};

#[wasm_bindgen(module = "/src/wasm/client/promise.js")]
extern "C" {
    /// A string as UTF-8 bytes (the runtime's `TextEncoder`, then one copy into wasm).
    #[wasm_bindgen(js_name = utf8Bytes)]
    fn utf8_bytes(text: &JsValue) -> Vec<u8>;
    /// A string as UTF-8 written straight into `into` (the runtime's `TextEncoder.encodeInto`) when it fits: the
    /// bytes written, or -1 when it does not (a text of one byte per UTF-16 unit fits, and only it: an ASCII text).
    #[wasm_bindgen(js_name = utf8Into)]
    fn utf8_into(text: &JsValue, into: &mut [u8]) -> i32;
}

thread_local! {
    /// The JS string of the params text [`checked`] last read, until [`take_params_text`] takes it: `start` hands it
    /// to the stepper of the same method call, which sends it when the core says the body is that text as given.
    static PARAMS_TEXT: std::cell::RefCell<JsValue> = const { std::cell::RefCell::new(JsValue::UNDEFINED) };
}

/// The JS string of the params text of the method being started (`undefined` when it read none), taken once.
pub(super) fn take_params_text() -> JsValue {
    PARAMS_TEXT.with(|t| t.replace(JsValue::UNDEFINED))
}

/// Per-call options as read from JS: the core's part and the caller's `signal`.
pub struct JsCallOptions {
    /// `wait`, `idempotencyKey`, `timeoutMs`, `maxRetries`.
    pub core: CallOptions,
    /// `signal` (an `AbortSignal`), or `undefined`.
    pub signal: JsValue,
}

/// Reads `{ wait, idempotencyKey, timeoutMs, maxRetries, signal }` plus the method's own `extra` names (which the
/// caller reads itself); the core's `client::options::call_options` decides what they mean.
///
/// # Errors
/// `invalid_request` naming the option: an unknown name, a wrong type, a negative or fractional number.
pub fn call_options(options: &JsValue, extra: &[&str]) -> Result<JsCallOptions, ApiError> {
    if options.is_undefined() || options.is_null() {
        return Ok(JsCallOptions {
            core: CallOptions::default(),
            signal: JsValue::UNDEFINED,
        });
    }
    if !options.is_object() {
        return Err(ApiError::validation(
            "invalid_request",
            "options",
            "must be an object",
        ));
    }
    let raw = |name: &str| {
        let value = read_option(options, name)?;
        Ok(if value.is_undefined() {
            RawOption::Absent
        } else if let Some(n) = value.as_f64() {
            RawOption::Number(n)
        } else if let Some(text) = value.as_string() {
            RawOption::Text(text)
        } else {
            RawOption::Other
        })
    };
    let names = platform::object_keys(options)
        .map_err(|_| unreadable("options"))?
        .iter()
        .filter_map(|k| k.as_string())
        .collect();
    let core = client::options::call_options(&CallOptionsInput {
        names,
        extra,
        wait: raw("wait")?,
        idempotency_key: raw("idempotencyKey")?,
        timeout_ms: raw("timeoutMs")?,
        max_retries: raw("maxRetries")?,
    })?;
    Ok(JsCallOptions {
        core,
        signal: read_option(options, "signal")?,
    })
}

/// One option of an options object; a getter or `Proxy` trap that throws is caught (never unwound through wasm) and
/// refused at the option's name.
///
/// # Errors
/// `invalid_request` at `name`.
fn read_option(options: &JsValue, name: &str) -> Result<JsValue, ApiError> {
    Reflect::get(options, &JsValue::from_str(name)).map_err(|_| unreadable(name))
}

fn unreadable(path: &str) -> ApiError {
    ApiError::validation(
        "invalid_request",
        path,
        "cannot be read (a getter or Proxy trap threw)",
    )
}

/// Builds a route from the caller's params read as JSON text (`JSON.stringify`: `undefined` fields dropped, `toJSON`
/// honoured) and checked by the core against the route's table ([`Params::from_string`]); `undefined` or `null` is
/// no params when `optional`.
///
/// # Errors
/// `invalid_request` at `path` when the value is missing (and required) or not an object, at the field when the
/// core's table refuses it; and the route's own errors.
pub fn checked<T: Fields, R>(
    value: &JsValue,
    path: &str,
    optional: bool,
    build: impl FnOnce(Params<T>) -> Result<R, ApiError>,
) -> Result<R, ApiError> {
    let params = match params_text(value, path, optional)? {
        Some((text, js)) => {
            PARAMS_TEXT.with(|t| t.replace(js));
            Params::from_stringified(text)?
        }
        None => Params::empty(),
    };
    build(params)
}

/// The JSON text of a params object (`None` for absent optional params), and the JS string it was read from.
fn params_text(
    value: &JsValue,
    path: &str,
    optional: bool,
) -> Result<Option<(String, JsValue)>, ApiError> {
    if value.is_undefined() || value.is_null() {
        return if optional {
            Ok(None)
        } else {
            Err(ApiError::validation("invalid_request", path, "is required"))
        };
    }
    if !value.is_object() {
        return Err(ApiError::validation(
            "invalid_request",
            path,
            "must be an object",
        ));
    }
    json_text(value).map(Some).ok_or_else(|| {
        ApiError::validation("invalid_request", path, "cannot be serialized as JSON")
    })
}

/// `JSON.stringify(value)` read into wasm, and its JS string; `None` when it throws (a throwing getter or `toJSON`, a
/// `Proxy` trap, a cycle, a `BigInt`: caught, never unwound through wasm) or gives no text. The text crosses as UTF-8
/// bytes (encoded by the runtime, copied once): a string argument is copied into wasm one UTF-16 unit at a time.
fn json_text(value: &JsValue) -> Option<(String, JsValue)> {
    let js = platform::json_stringify(value).ok()?;
    if !js.is_string() {
        return None;
    }
    let text = String::from_utf8(utf8_of(&js)).ok()?;
    Some((text, js))
}

/// A JS string's UTF-8 bytes. An ASCII text (most JSON) is encoded by the runtime straight into a buffer of one
/// byte per UTF-16 unit, with no copy; another does not fit there (the runtime stops where the buffer is full) and is
/// encoded again by `TextEncoder.encode`, then copied in once.
fn utf8_of(text: &JsValue) -> Vec<u8> {
    let units = text.unchecked_ref::<js_sys::JsString>().length() as usize;
    let mut bytes = vec![0; units];
    match usize::try_from(utf8_into(text, &mut bytes)) {
        Ok(written) if written <= units => {
            bytes.truncate(written);
            bytes
        }
        _ => utf8_bytes(text),
    }
}

/// A JS value's JSON text (`JSON.stringify`; for schemas and other free-form values).
///
/// # Errors
/// `invalid_request` at `path` when it cannot be serialized.
pub fn json_source(value: &JsValue, path: &str) -> Result<String, ApiError> {
    json_text(value).map(|(text, _)| text).ok_or_else(|| {
        ApiError::validation("invalid_request", path, "cannot be serialized as JSON")
    })
}

/// A required string argument (an id).
///
/// # Errors
/// `invalid_request` at `path` when it is not a string.
#[inline(never)]
pub fn string_arg(value: &JsValue, path: &str) -> Result<String, ApiError> {
    value
        .as_string()
        .ok_or_else(|| ApiError::validation("invalid_request", path, "must be a string"))
}

/// Headers as a plain object `{ name: value }` (names in lower case).
pub fn headers_object(headers: &[(String, String)]) -> JsValue {
    let obj = js_sys::Object::new();
    for (name, value) in headers {
        let _ = Reflect::set(&obj, &name.into(), &value.into());
    }
    obj.into()
}

/// The JS error of a failed call: an instance of the `errors.js` class the core names.
pub fn error_to_js(err: &ApiError) -> JsValue {
    let retry_after = err
        .retry_after_ms
        .map_or(JsValue::UNDEFINED, |ms| JsValue::from(ms as f64 / 1000.0));
    let opt = |s: &Option<String>| s.as_deref().map_or(JsValue::UNDEFINED, JsValue::from);
    let fields = platform::object(&[
        (
            "status",
            err.status
                .map_or(JsValue::UNDEFINED, |s| JsValue::from(f64::from(s))),
        ),
        ("code", err.code.as_str().into()),
        ("retryable", err.retryable.into()),
        ("requestId", opt(&err.request_id)),
        ("docUrl", opt(&err.doc_url)),
        ("headers", headers_object(&err.headers)),
        ("retryAfter", retry_after),
        ("outcomeUnknown", err.outcome_unknown.into()),
    ]);
    interop::api_error(err.js_class_name(), &err.to_string(), &fields)
}

/// The `deadlineMs` of a wait's options (the core checks it).
///
/// # Errors
/// `invalid_request` at `deadlineMs`.
pub(super) fn wait_deadline(options: &JsValue) -> Result<Option<u64>, ApiError> {
    if !options.is_object() {
        return Ok(None);
    }
    let value = read_option(options, "deadlineMs")?;
    if value.is_undefined() {
        return Ok(None);
    }
    crate::client::polling::deadline_ms(value.as_f64().unwrap_or(f64::NAN)).map(Some)
}

/// The options of a `waitFor`: when it ends and its overall deadline.
#[derive(Clone, Copy, Default)]
pub(super) struct WaitOptions {
    pub until: Until,
    pub deadline: Option<u64>,
}

/// Reads the options of a `waitFor`: the call options (never `wait`: the planner chooses it), `until` and
/// `deadlineMs`.
pub(super) fn wait_options(options: &JsValue) -> Result<(JsCallOptions, WaitOptions), ApiError> {
    let parsed = super::prepare(options, &["until", "deadlineMs"])?;
    if parsed.core.wait.is_some() {
        return Err(ApiError::validation(
            "invalid_request",
            "wait",
            "waitFor chooses its own wait; give timeoutMs instead",
        ));
    }
    let until = if options.is_object() {
        read_option(options, "until")?
    } else {
        JsValue::UNDEFINED
    };
    let until = if until.is_undefined() {
        Until::Finished
    } else {
        Until::parse(&until.as_string().unwrap_or_default())?
    };
    let deadline = wait_deadline(options)?;
    Ok((parsed, WaitOptions { until, deadline }))
}
