//! Bindings to the host's globals: `fetch`, timers, WebCrypto and duck-typed Fetch API objects.
//!
//! Every import that can throw is declared `catch`, so a JS exception becomes an `Err` instead of unwinding
//! through Rust frames. Objects are used structurally (`unchecked_into`), never checked with `instanceof`, which
//! fails across realms (Vercel's edge VM, iframes, worker isolates).
// Helpers shared by every class; the webhook-only build (no `client`/`realtime` feature) uses a subset.
#![cfg_attr(not(all(feature = "client", feature = "realtime")), allow(dead_code))]

use js_sys::{Function, Promise, Reflect};

/// Longest delay `setTimeout` honours: a larger one (or NaN) fires at once in Node, browsers, Deno and Bun.
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// `setTimeout` with the delay clamped to `0..=MAX_TIMER_MS` (NaN becomes 0): a longer wait is cut to about 24.8 days
/// instead of firing at once.
fn set_timeout(handler: &JsValue, ms: f64) -> Result<JsValue, JsValue> {
    let ms = if ms.is_nan() {
        0.0
    } else {
        ms.clamp(0.0, MAX_TIMER_MS)
    };
    set_timeout_raw(handler, ms)
}
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_name = setTimeout)]
    fn set_timeout_raw(handler: &JsValue, ms: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = fetch)]
    fn global_fetch(url: &str, init: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = parse)]
    pub fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = stringify)]
    pub fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;
    /// `Object.assign(target, source)`: runs the source's getters (and a `Proxy`'s traps), which may throw.
    #[cfg(feature = "testing")]
    #[wasm_bindgen(catch, js_namespace = Object, js_name = assign)]
    pub fn object_assign(target: &JsValue, source: &JsValue) -> Result<JsValue, JsValue>;
    /// `Object.keys(value)`: runs a `Proxy`'s traps, which may throw.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    pub fn object_keys(value: &JsValue) -> Result<js_sys::Array, JsValue>;

    /// `crypto.subtle`, called in host_crypto.js.
    pub type Subtle;

    /// A Fetch API `Headers` (or anything with `get(name)`). Its answer is taken as a JS value and read only when it
    /// is a string: wasm-bindgen's string return would copy whatever `length` a hostile object claims.
    pub type HeadersLike;
    #[wasm_bindgen(catch, method, js_name = get)]
    pub fn get(this: &HeadersLike, name: &str) -> Result<JsValue, JsValue>;

    /// A Fetch API `Request` or `Response`: `headers`, `status`, `arrayBuffer()`.
    pub type MessageLike;
    #[wasm_bindgen(catch, method, getter, structural)]
    pub fn headers(this: &MessageLike) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, getter, structural)]
    pub fn status(this: &MessageLike) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, js_name = arrayBuffer)]
    pub fn array_buffer(this: &MessageLike) -> Result<Promise, JsValue>;

    /// An `AbortSignal` (or anything with `aborted` and `add/removeEventListener`).
    pub type SignalLike;
    #[wasm_bindgen(method, getter, structural)]
    fn aborted(this: &SignalLike) -> JsValue;
    #[wasm_bindgen(catch, method, js_name = addEventListener)]
    fn add_event_listener(this: &SignalLike, kind: &str, listener: &JsValue)
        -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = removeEventListener)]
    fn remove_event_listener(
        this: &SignalLike,
        kind: &str,
        listener: &JsValue,
    ) -> Result<(), JsValue>;

    type CryptoLike;
    #[wasm_bindgen(catch, method, js_name = getRandomValues)]
    fn get_random_values(
        this: &CryptoLike,
        buffer: &js_sys::Uint8Array,
    ) -> Result<JsValue, JsValue>;

    /// A Promise, continued with functions made by `Closure::once_into_js`.
    pub type PromiseLike;
    #[wasm_bindgen(method, js_name = then)]
    pub fn then_both(this: &PromiseLike, on_fulfilled: &JsValue, on_rejected: &JsValue) -> Promise;

    type TextDecoderLike;
    #[wasm_bindgen(catch, constructor, js_class = TextDecoder)]
    fn new_text_decoder(label: &str, options: &JsValue) -> Result<TextDecoderLike, JsValue>;
    #[wasm_bindgen(catch, method, js_name = decode)]
    fn decode(this: &TextDecoderLike, input: &JsValue) -> Result<JsValue, JsValue>;

    /// An `AbortController`.
    pub type AbortControllerLike;
    #[wasm_bindgen(catch, constructor, js_class = AbortController)]
    pub fn new_abort_controller() -> Result<AbortControllerLike, JsValue>;
    #[wasm_bindgen(method, getter, structural)]
    pub fn signal(this: &AbortControllerLike) -> JsValue;
    #[wasm_bindgen(catch, method, structural)]
    pub fn abort(this: &AbortControllerLike) -> Result<(), JsValue>;

    /// A Fetch API `Response` made here.
    type ResponseLike;
    /// `new Response(body, init)` of the runtime.
    #[wasm_bindgen(catch, constructor, js_class = Response)]
    fn new_response(body: &str, init: &JsValue) -> Result<ResponseLike, JsValue>;
    #[wasm_bindgen(catch, js_namespace = console, js_name = error)]
    fn console_error(message: &str, error: &JsValue) -> Result<(), JsValue>;
}

/// The UTF-8 text of an ArrayBuffer view, decoded in JS: `None` when it is not valid UTF-8. A leading BOM is kept
/// (as `core::str::from_utf8` keeps it), so `JSON.parse` refuses it as it refuses it from a copied body.
pub fn utf8_text(view: &JsValue) -> Option<JsValue> {
    let options = object(&[("fatal", true.into()), ("ignoreBOM", true.into())]);
    TextDecoderLike::new_text_decoder("utf-8", &options)
        .ok()?
        .decode(view)
        .ok()
}

/// Current time in seconds since the epoch.
pub fn now_seconds() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// A plain object from `(key, value)` pairs.
pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let obj = js_sys::Object::new();
    for (key, value) in entries {
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&obj, &(*key).into(), value);
    }
    obj.into()
}

/// Reads `headers.get(name)` of a Request or Response: `None` when it answers `null` or `undefined`.
///
/// # Errors
/// What `headers` or `get` throws, or `TypeError` when `get` answers anything but a string or null.
pub fn header(message: &MessageLike, name: &str) -> Result<Option<String>, JsValue> {
    let headers: HeadersLike = message.headers()?.unchecked_into();
    let value = headers.get(name)?;
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    value
        .as_string()
        .map(Some)
        .ok_or_else(|| js_sys::TypeError::new("headers.get() answered a non-string").into())
}

/// A timer that rejects its promise (with the string `"timeout"`) after `ms` and aborts the controller; cleared on
/// drop, which also frees its callback.
pub struct Deadline {
    promise: Promise,
    handle: JsValue,
    controller: Option<AbortControllerLike>,
    /// `Date.now()` when it passes.
    until_ms: f64,
    _on_timeout: Option<Closure<dyn FnMut()>>,
}

impl Deadline {
    /// Starts a deadline of `ms` milliseconds.
    pub fn start(ms: f64) -> Self {
        let until_ms = js_sys::Date::now() + ms;
        let controller = AbortControllerLike::new_abort_controller().ok();
        let for_timer = controller
            .as_ref()
            .map(|c| AsRef::<JsValue>::as_ref(c).clone());
        let mut handle = JsValue::UNDEFINED;
        let mut callback = None;
        let promise = Promise::new(&mut |_resolve, reject| {
            let for_timer = for_timer.clone();
            let on_timeout = Closure::<dyn FnMut()>::new(move || {
                if let Some(c) = &for_timer {
                    let _ = c.unchecked_ref::<AbortControllerLike>().abort();
                }
                let _ = reject.call1(&JsValue::UNDEFINED, &"timeout".into());
            });
            handle = set_timeout(on_timeout.as_ref(), ms).unwrap_or(JsValue::UNDEFINED);
            callback = Some(on_timeout);
        });
        Self {
            promise,
            handle,
            controller,
            until_ms,
            _on_timeout: callback,
        }
    }

    /// Whether the deadline has passed, by the clock: also when its timer could not run yet (work that only ever
    /// waits for settled promises never lets a timer run).
    pub fn expired(&self) -> bool {
        js_sys::Date::now() >= self.until_ms
    }

    /// The abort signal to give `fetch`, when the runtime has `AbortController`.
    pub fn signal(&self) -> JsValue {
        self.controller
            .as_ref()
            .map_or(JsValue::UNDEFINED, AbortControllerLike::signal)
    }

    /// Races `work` against the deadline.
    pub fn race(&self, work: &Promise) -> Promise {
        Promise::race(&js_sys::Array::of2(work, &self.promise))
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if !self.handle.is_undefined() {
            let _ = clear_timeout(&self.handle);
        }
    }
}

/// A timer that resolves after `ms`; cleared (and its callback freed) on drop.
pub struct Sleep {
    promise: Promise,
    handle: JsValue,
    _callback: Option<Closure<dyn FnMut()>>,
}

impl Sleep {
    /// Starts a sleep of `ms` milliseconds.
    pub fn start(ms: f64) -> Self {
        let mut handle = JsValue::UNDEFINED;
        let mut callback = None;
        let promise = Promise::new(&mut |resolve, _reject| {
            let done = Closure::<dyn FnMut()>::new(move || {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            });
            handle = set_timeout(done.as_ref(), ms).unwrap_or(JsValue::UNDEFINED);
            callback = Some(done);
        });
        Self {
            promise,
            handle,
            _callback: callback,
        }
    }

    /// The promise that resolves (to `undefined`) when the sleep is over.
    pub fn promise(&self) -> &Promise {
        &self.promise
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if !self.handle.is_undefined() {
            let _ = clear_timeout(&self.handle);
        }
    }
}

/// 16 random bytes from `crypto.getRandomValues`, or `Math.random` where the runtime has no WebCrypto.
pub fn random_bytes() -> [u8; 16] {
    random_array()
}

/// `N` random bytes from one `crypto.getRandomValues` call, or `Math.random` where the runtime has no WebCrypto.
pub fn random_array<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into())
        .ok()
        .filter(|v| v.is_object());
    if let Some(crypto) = crypto {
        let buffer = js_sys::Uint8Array::new_with_length(N as u32);
        if crypto
            .unchecked_into::<CryptoLike>()
            .get_random_values(&buffer)
            .is_ok()
        {
            buffer.copy_to(&mut out);
            return out;
        }
    }
    for b in &mut out {
        *b = (js_sys::Math::random() * 256.0) as u8;
    }
    out
}

/// `N` bytes from `crypto.getRandomValues`; `None` where the runtime has no WebCrypto (no weaker fallback: these
/// bytes become key material).
#[cfg(feature = "testing")]
pub fn secure_random_bytes<const N: usize>() -> Option<[u8; N]> {
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into())
        .ok()
        .filter(|v| v.is_object())?;
    let buffer = js_sys::Uint8Array::new_with_length(N as u32);
    crypto
        .unchecked_into::<CryptoLike>()
        .get_random_values(&buffer)
        .ok()?;
    let mut out = [0u8; N];
    buffer.copy_to(&mut out);
    Some(out)
}

/// A JSON `Response` of `status` with the members of `body` (`JSON.stringify`), by the runtime's `Response`.
///
/// # Errors
/// The runtime's own, where it has no `Response` (a `TypeError`).
pub fn json_response(status: u16, body: &[(&str, JsValue)]) -> Result<JsValue, JsValue> {
    let text = json_stringify(&object(body))?
        .as_string()
        .unwrap_or_default();
    let headers = object(&[("content-type", "application/json".into())]);
    ResponseLike::new_response(
        &text,
        &object(&[("status", status.into()), ("headers", headers)]),
    )
    .map(Into::into)
}

/// `console.error(message, error)`, where the runtime has a console (nothing otherwise).
pub fn log_error(message: &str, error: &JsValue) {
    let _ = console_error(message, error);
}

/// A property of the global object (`undefined` when absent).
pub fn global(name: &str) -> JsValue {
    Reflect::get(&js_sys::global(), &name.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Starts `fetch(url, init)` with the given function, or the global `fetch`: a promise of this module either way
/// (a custom `fetch` may answer anything, a hostile thenable included).
pub fn fetch(custom: Option<&Function>, url: &str, init: &JsValue) -> Result<Promise, JsValue> {
    match custom {
        Some(f) => Ok(super::interop::own_promise(&f.call2(
            &JsValue::UNDEFINED,
            &url.into(),
            init,
        )?)),
        None => global_fetch(url, init),
    }
}
