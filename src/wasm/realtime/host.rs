//! Host bindings of the realtime transcriber: a duck-typed WebSocket, events, timers and realtime errors.
//!
//! Like `platform.rs`, every import that can throw is `catch` and objects are used structurally, so the `ws` npm
//! package (Node 20), Deno's, Bun's and the browsers' WebSockets all fit.

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::realtime::RealtimeError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_name = setTimeout)]
    fn set_timeout(handler: &JsValue, ms: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;

    /// A WebSocket (browser, Deno, Bun, Node 22, or the `ws` package).
    pub type SocketLike;
    #[wasm_bindgen(catch, method, js_name = send)]
    pub fn send_bytes(this: &SocketLike, data: &Uint8Array) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = send)]
    pub fn send_text(this: &SocketLike, data: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = close)]
    pub fn close_with(this: &SocketLike, code: u16, reason: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, setter, structural, js_name = binaryType)]
    pub fn set_binary_type(this: &SocketLike, value: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, setter, structural, js_name = onopen)]
    pub fn set_onopen(this: &SocketLike, handler: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, setter, structural, js_name = onmessage)]
    pub fn set_onmessage(this: &SocketLike, handler: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, setter, structural, js_name = onclose)]
    pub fn set_onclose(this: &SocketLike, handler: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, setter, structural, js_name = onerror)]
    pub fn set_onerror(this: &SocketLike, handler: &JsValue) -> Result<(), JsValue>;

    /// An `EventTarget`.
    pub type EventTargetLike;
    #[wasm_bindgen(catch, method, js_name = addEventListener)]
    pub fn add_event_listener(
        this: &EventTargetLike,
        kind: &JsValue,
        listener: &JsValue,
        options: &JsValue,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = removeEventListener)]
    pub fn remove_event_listener(
        this: &EventTargetLike,
        kind: &JsValue,
        listener: &JsValue,
        options: &JsValue,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = dispatchEvent)]
    pub fn dispatch_event(this: &EventTargetLike, event: &JsValue) -> Result<JsValue, JsValue>;
}

/// A property of the global object (`undefined` when absent).
pub fn global(name: &str) -> JsValue {
    Reflect::get(&js_sys::global(), &name.into()).unwrap_or(JsValue::UNDEFINED)
}

/// `new Ctor(...args)` when `ctor` is a function.
///
/// # Errors
/// The constructor's exception, or a `TypeError` when `ctor` is not a function.
pub fn construct(ctor: &JsValue, args: &Array) -> Result<JsValue, JsValue> {
    let ctor = ctor
        .dyn_ref::<Function>()
        .ok_or_else(|| JsValue::from(js_sys::TypeError::new("not a constructor")))?;
    Reflect::construct(ctor, args)
}

/// A plain object from `(key, value)` pairs.
pub fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o.into()
}

/// A `RealtimeError` (class of `errors.js`) with the stable `code` and `retryable` of a core error.
pub fn realtime_error(e: &RealtimeError) -> JsValue {
    crate::wasm::interop::realtime_error(e.code(), &e.to_string(), e.is_retryable())
}

/// The event `kind` carrying `detail`: a `CustomEvent`, or an `Event` with a `detail` property where the runtime
/// has no `CustomEvent`.
pub fn custom_event(kind: &str, detail: &JsValue) -> Result<JsValue, JsValue> {
    let custom = global("CustomEvent");
    if custom.is_function() {
        return construct(
            &custom,
            &Array::of2(&kind.into(), &object(&[("detail", detail.clone())])),
        );
    }
    let event = construct(&global("Event"), &Array::of1(&kind.into()))?;
    Object::define_property(
        event.unchecked_ref::<Object>(),
        &"detail".into(),
        object(&[("value", detail.clone())]).unchecked_ref::<Object>(),
    );
    Ok(event)
}

/// A one-shot timer, cleared (and its callback freed) on drop.
pub struct Timer {
    handle: JsValue,
    _callback: Closure<dyn FnMut()>,
}

impl Timer {
    /// Calls `f` once after `ms`.
    pub fn once(ms: f64, f: impl FnMut() + 'static) -> Self {
        let callback = Closure::<dyn FnMut()>::new(f);
        let handle = set_timeout(callback.as_ref(), ms).unwrap_or(JsValue::UNDEFINED);
        Self {
            handle,
            _callback: callback,
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if !self.handle.is_undefined() {
            let _ = clear_timeout(&self.handle);
        }
    }
}
