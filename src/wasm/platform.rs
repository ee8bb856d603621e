//! Bindings to the host's globals: `fetch`, timers, WebCrypto and duck-typed Fetch API objects.
//!
//! Every import that can throw is declared `catch`, so a JS exception becomes an `Err` instead of unwinding
//! through Rust frames. Objects are used structurally (`unchecked_into`), never checked with `instanceof`, which
//! fails across realms (Vercel's edge VM, iframes, worker isolates).

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_name = setTimeout)]
    fn set_timeout(handler: &JsValue, ms: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = fetch)]
    fn global_fetch(url: &str, init: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = parse)]
    pub fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = stringify)]
    pub fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `crypto.subtle`.
    pub type Subtle;
    #[wasm_bindgen(catch, method, js_name = verify)]
    pub fn verify(
        this: &Subtle,
        algorithm: &JsValue,
        key: &JsValue,
        signature: &[u8],
        data: &[u8],
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, method, js_name = importKey)]
    pub fn import_key(
        this: &Subtle,
        format: &str,
        key: &JsValue,
        algorithm: &JsValue,
        extractable: bool,
        usages: &JsValue,
    ) -> Result<Promise, JsValue>;

    /// A Fetch API `Headers` (or anything with `get(name)`).
    pub type HeadersLike;
    #[wasm_bindgen(catch, method, js_name = get)]
    pub fn get(this: &HeadersLike, name: &str) -> Result<Option<String>, JsValue>;

    /// A Fetch API `Request` or `Response`: `headers`, `status`, `arrayBuffer()`.
    pub type MessageLike;
    #[wasm_bindgen(catch, method, getter, structural)]
    pub fn headers(this: &MessageLike) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, getter, structural)]
    pub fn status(this: &MessageLike) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, js_name = arrayBuffer)]
    pub fn array_buffer(this: &MessageLike) -> Result<Promise, JsValue>;

    type AbortControllerLike;
    #[wasm_bindgen(catch, constructor, js_class = AbortController)]
    fn new_abort_controller() -> Result<AbortControllerLike, JsValue>;
    #[wasm_bindgen(method, getter, structural)]
    fn signal(this: &AbortControllerLike) -> JsValue;
    #[wasm_bindgen(catch, method, structural)]
    fn abort(this: &AbortControllerLike) -> Result<(), JsValue>;
}

/// `globalThis.crypto.subtle`, when the runtime has it (browsers expose it only in secure contexts).
pub fn subtle() -> Option<Subtle> {
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into())
        .ok()
        .filter(|v| v.is_object())?;
    let subtle = Reflect::get(&crypto, &"subtle".into())
        .ok()
        .filter(|v| v.is_object())?;
    Some(subtle.unchecked_into())
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

/// Reads `headers.get(name)` of a Request or Response.
pub fn header(message: &MessageLike, name: &str) -> Result<Option<String>, JsValue> {
    let headers: HeadersLike = message.headers()?.unchecked_into();
    headers.get(name)
}

/// A timer that rejects its promise after `ms` and aborts the controller; cleared on drop.
pub struct Deadline {
    promise: Promise,
    handle: JsValue,
    controller: Option<AbortControllerLike>,
}

impl Deadline {
    /// Starts a deadline of `ms` milliseconds.
    pub fn start(ms: f64) -> Self {
        let controller = AbortControllerLike::new_abort_controller().ok();
        let for_timer = controller
            .as_ref()
            .map(|c| AsRef::<JsValue>::as_ref(c).clone());
        let mut handle = JsValue::UNDEFINED;
        let promise = Promise::new(&mut |_resolve, reject| {
            let for_timer = for_timer.clone();
            let on_timeout = Closure::once_into_js(move || {
                if let Some(c) = for_timer {
                    let _ = c.unchecked_into::<AbortControllerLike>().abort();
                }
                let _ = reject.call1(&JsValue::UNDEFINED, &"timeout".into());
            });
            handle = set_timeout(&on_timeout, ms).unwrap_or(JsValue::UNDEFINED);
        });
        Self {
            promise,
            handle,
            controller,
        }
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

/// Starts `fetch(url, init)` with the given function, or the global `fetch`.
pub fn fetch(custom: Option<&Function>, url: &str, init: &JsValue) -> Result<Promise, JsValue> {
    match custom {
        Some(f) => Ok(Promise::resolve(&f.call2(
            &JsValue::UNDEFINED,
            &url.into(),
            init,
        )?)),
        None => global_fetch(url, init),
    }
}
