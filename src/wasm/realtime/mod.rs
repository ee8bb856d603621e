//! `RealtimeTranscriber` for JS: microphone (or any audio) in, `partial` / `final` events out.
//!
//! Every decision lives in the sans-IO core, [`crate::realtime::Session`] (options, phases, reconnects, timeouts,
//! stop sequencing, timestamps, levels). This layer converts and drives: each exported method decodes its
//! arguments, calls the session, and lets the host pump of `session.rs` apply the effects.
//!
//! Files: `session.rs` (the host pump: one loop applies the core's effects; socket, timer and capture callbacks
//! only feed inputs), `capture.rs` (getUserMedia, AudioContext, the AudioWorklet of `worklet.js` from a Blob URL;
//! `capture.js` sequences their promises and answers each wait with one callback, so this module has no Rust
//! futures), `host.rs` (duck-typed WebSocket, events, timers, `RealtimeError` objects).
//!
//! Decisions where the spec is silent (written in the core next to each rule, listed here for JS readers):
//! - the transcriber does not extend `EventTarget` (a wasm-bindgen class cannot) but forwards `addEventListener`,
//!   `removeEventListener` and `dispatchEvent` to one it owns (so `event.target` is that inner target);
//! - a stream passed to `start({ stream })` belongs to the caller: its tracks are not stopped;
//! - `stop()` never rejects;
//! - errors are `Error` objects named `RealtimeError` with `code` and `retryable`;
//! - a live session (from `start()` or the first `sendAudio` until it closes) keeps its transcriber from being
//!   garbage-collected, as an open `WebSocket` is not collected: the host holds the JS object between the core's
//!   `Retain` and `Release` (the package's glue hands it over at construction, [`bind_transcriber`]), and the
//!   caller's values (event target, `getUrl`, `WebSocket`) hang on that object, so a listener that refers to the
//!   transcriber does not keep a closed one alive;
//! - `free()` and `[Symbol.dispose]()` (the end of a `using` block) end a live session at once ([`Drop`] feeds the
//!   core's `dispose`): microphone tracks stopped, AudioContext closed, socket closed with 1000, timers cleared,
//!   handlers detached, a pending `start()` rejected with `disposed`, pending `stop()`s resolved, no event after.

mod capture;
mod host;
mod session;

use std::rc::Rc;

use js_sys::{Array, Float32Array, Int16Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use self::session::{Host, HostHandles};
use super::interop;
use crate::realtime::session::{AudioOrigin, CaptureSource};
use crate::realtime::{RealtimeError, Session, TranscriberOptions};

/// The options that are JS handles, taken out before the rest is decoded by the core.
const HANDLE_OPTIONS: [&str; 4] = ["getUrl", "WebSocket", "tracerProvider", "meterProvider"];

/// Live transcription over the service's realtime socket; the server mints the session (with the API key) and hands the
/// page only its single-use ticket URL.
///
/// Events (`addEventListener`): `open`, `partial`, `final`, `usage`, `error`, `close`, `reconnecting`, `level`,
/// `devicechange`; each a `CustomEvent` whose `detail` holds the data.
///
/// Lifetime: from `start()` (or the first `sendAudio()`) until the session closes, the transcriber keeps itself
/// alive: it is not garbage-collected even when the page keeps no reference to it. Closed (or never started), it is
/// collected once the page lets it go, its own listeners referring to it included.
/// `free()` and `[Symbol.dispose]()` (the end of a `using` block) end a live session at once, without waiting for
/// the service (use `stop()` to get the last `final`): the microphone's tracks are stopped (a `stream` given to
/// `start()` stays untouched), the AudioContext closed, the socket closed with code 1000, a pending `start()`
/// rejected with code `disposed`, pending `stop()` calls resolved; no event is dispatched after.
#[wasm_bindgen]
pub struct RealtimeTranscriber {
    host: Rc<Host>,
}

impl Drop for RealtimeTranscriber {
    /// `free()`, `[Symbol.dispose]()`, or the collector (which only ever frees a transcriber whose session is not
    /// live): the core's `dispose` decides what ends, the host applies it before anything is freed.
    fn drop(&mut self) {
        self.host.input(Session::dispose);
    }
}

/// Called once by `RealtimeTranscriber`'s constructor in the package's glue (`xtask/src/build.rs` inserts the call,
/// and makes this function private to the glue): hands the transcriber its own JS object, which the session holds
/// while it is live. Not part of the API.
#[wasm_bindgen(js_name = bindTranscriber, skip_typescript)]
pub fn bind_transcriber(transcriber: &RealtimeTranscriber, object: JsValue) {
    transcriber.host.set_owner(&object);
}

fn invalid_options(path: &str, detail: &str) -> JsValue {
    host::realtime_error(&RealtimeError::InvalidOptions {
        path: path.to_owned(),
        detail: detail.to_owned(),
    })
}

#[wasm_bindgen]
impl RealtimeTranscriber {
    /// A transcriber for one realtime session; nothing connects until `start()` or `sendAudio()`.
    ///
    /// # Errors
    /// `invalid_options` naming the option (unknown, wrong type, out of range, a `url` that is not `ws://` or
    /// `wss://`, neither `url` nor `getUrl`, no WebSocket: pass `WebSocket` in Node 20); `unsupported_audio_format`
    /// for a `sampleRate` outside 8 000..=48 000 or a `frameMs` outside 20..=100.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "RealtimeTranscriberOptions")] options: JsValue,
    ) -> Result<RealtimeTranscriber, JsValue> {
        if !options.is_object() {
            return Err(invalid_options(
                "",
                "options must be an object with url and/or getUrl",
            ));
        }
        // A getter or a Proxy of the caller's that throws is caught where it is read (here, and in the copy of the
        // data options).
        let read = |name: &str| {
            interop::try_option(&options, name)
                .map_err(|()| invalid_options(name, "reading it threw (a getter or a Proxy)"))
        };
        let get_url_value = read("getUrl")?;
        let get_url = interop::function_option(&get_url_value);
        if !get_url_value.is_undefined() && get_url.is_none() {
            return Err(invalid_options("getUrl", "must be a function"));
        }
        let mut socket_ctor = read("WebSocket")?;
        if socket_ctor.is_undefined() {
            socket_ctor = host::global("WebSocket");
        }
        if !socket_ctor.is_function() {
            return Err(invalid_options(
                "WebSocket",
                "this runtime has no WebSocket: pass one as the WebSocket option (e.g. the ws package in Node 20)",
            ));
        }
        let text = interop::plain_options_text(&options, &HANDLE_OPTIONS).map_err(|()| {
            invalid_options(
                "",
                "options must be plain data besides getUrl, WebSocket, tracerProvider and meterProvider",
            )
        })?;
        let telemetry = crate::wasm::telemetry::providers(&options).map_err(|name| {
            invalid_options(
                name,
                "must be an OpenTelemetry provider (getTracer, getMeter)",
            )
        })?;
        let config = TranscriberOptions::from_json(&text)
            .and_then(|o| o.validate(get_url.is_some()))
            .map_err(|e| host::realtime_error(&e))?;
        let seed = (js_sys::Math::random() * f64::from(u32::MAX)) as u64;
        let session = Session::new(config, seed).map_err(|e| host::realtime_error(&e))?;
        let events = host::construct(&host::global("EventTarget"), &Array::new())
            .map_err(|_| invalid_options("", "this runtime has no EventTarget"))?
            .unchecked_into();
        Ok(Self {
            host: Host::new(
                session,
                HostHandles {
                    events,
                    get_url,
                    socket_ctor,
                    telemetry,
                },
            ),
        })
    }

    /// Starts capturing (the microphone, `options.stream`, or nothing with `{ microphone: false }`) and opens the
    /// socket; resolves when the service sent `open`.
    ///
    /// # Errors
    /// Rejects with `microphone_denied`, `no_audio_device`, `ticket_used` / `ticket_invalid` / `ticket_expired`,
    /// `open_timeout`, `socket_closed`, `unsupported_audio_format`, `reconnect_failed`, `audio_not_allowed` (the
    /// browser's autoplay policy kept the audio from running within `openTimeoutMs`: call it from a click),
    /// `invalid_state` when already started, or `disposed` when `free()` came first.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn start(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RealtimeStartOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let read = |name: &str| {
            interop::try_option(&options, name)
                .map_err(|()| invalid_options(name, "reading it threw (a getter or a Proxy)"))
        };
        let (stream, microphone) = match (read("stream"), read("microphone")) {
            (Ok(stream), Ok(microphone)) => (stream, microphone),
            (Err(e), _) | (_, Err(e)) => return Promise::reject(&e),
        };
        let source = if stream.is_object() {
            CaptureSource::Stream
        } else if microphone.as_bool() == Some(false) {
            CaptureSource::None
        } else {
            CaptureSource::Microphone
        };
        self.host.start(source, stream)
    }

    /// Sends audio from any source: mono `Float32Array` (nominally -1..1) or `Int16Array` samples at `sampleRate`
    /// Hz (8 000..=192 000). Connects first when nothing is connected yet; audio is buffered until `open`.
    ///
    /// # Errors
    /// `unsupported_audio_format` for another array type or a rate out of range; `invalid_state` after `stop()`.
    #[wasm_bindgen(js_name = sendAudio)]
    pub fn send_audio(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Float32Array | Int16Array")] samples: JsValue,
        #[wasm_bindgen(js_name = sampleRate, unchecked_param_type = "number")] sample_rate: JsValue,
    ) -> Result<(), JsValue> {
        let unsupported = |detail: &str| {
            host::realtime_error(&RealtimeError::UnsupportedAudioFormat {
                detail: detail.into(),
            })
        };
        let sample_rate = sample_rate.as_f64().unwrap_or(f64::NAN);
        if !(sample_rate.is_finite() && sample_rate.fract() == 0.0 && sample_rate > 0.0) {
            return Err(unsupported("the sample rate must be a positive integer"));
        }
        let rate = sample_rate.min(f64::from(u32::MAX)) as u32;
        // A new view over the caller's samples, made by `interop.js` from the array's own internal slots: an object
        // that only claims to be a typed array (or shadows its `length`) is refused, never believed.
        let view = interop::samples_of(&samples);
        let pushed = if let Some(v) = view.dyn_ref::<Float32Array>() {
            let v = v.to_vec();
            self.host
                .input(|s| s.push_f32(&v, rate, AudioOrigin::Caller))
        } else if let Some(v) = view.dyn_ref::<Int16Array>() {
            let v = v.to_vec();
            self.host
                .input(|s| s.push_i16(&v, rate, AudioOrigin::Caller))
        } else {
            return Err(unsupported(
                "samples must be a Float32Array or an Int16Array (mono)",
            ));
        };
        pushed
            .unwrap_or(Ok(()))
            .map_err(|e| host::realtime_error(&e))
    }

    /// Flushes the audio, sends `stop`, waits for the service's last `final`, `usage` and close (at most
    /// `stopTimeoutMs`), and releases everything: tracks, AudioContext, worklet, socket, timers. Never rejects.
    /// (`free()` releases the same at once, without waiting for the service.)
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        self.host.stop()
    }

    /// Stops sending audio (capture, meter and keep-alive go on; nothing reconnects) until `resume()`.
    ///
    /// # Errors
    /// `invalid_state` after `stop()`.
    pub fn pause(&self) -> Result<(), JsValue> {
        self.host
            .input(Session::pause)
            .unwrap_or(Ok(()))
            .map_err(|e| host::realtime_error(&e))
    }

    /// Sends audio again after `pause()`.
    ///
    /// # Errors
    /// `invalid_state` after `stop()`.
    pub fn resume(&self) -> Result<(), JsValue> {
        self.host
            .input(Session::resume)
            .unwrap_or(Ok(()))
            .map_err(|e| host::realtime_error(&e))
    }

    /// Whether `pause()` is in effect.
    #[wasm_bindgen(getter)]
    pub fn paused(&self) -> bool {
        self.host.read(Session::is_paused).unwrap_or(false)
    }

    /// Usage so far: the service's last `usage` message, else the client's estimate by the service's published pricing
    /// (5 credits on the first join, 2 per started minute of audio sent).
    #[wasm_bindgen(getter, unchecked_return_type = "RealtimeUsage")]
    pub fn usage(&self) -> JsValue {
        session::usage_detail(self.host.read(Session::usage).unwrap_or_default())
    }

    /// `"idle"`, `"connecting"`, `"open"`, `"reconnecting"` or `"closed"`.
    #[wasm_bindgen(getter, unchecked_return_type = "RealtimeState")]
    pub fn state(&self) -> String {
        self.host
            .read(|s| s.phase().name())
            .unwrap_or("closed")
            .to_owned()
    }

    /// Milliseconds of audio waiting in the reconnect buffer.
    #[wasm_bindgen(getter, js_name = bufferedMs)]
    pub fn buffered_ms(&self) -> f64 {
        self.host.read(|s| s.buffered_ms() as f64).unwrap_or(0.0)
    }

    /// `EventTarget.addEventListener`. Typed per event in `realtime_types.d.ts` (`RealtimeEventMap`).
    ///
    /// # Errors
    /// What the host's `addEventListener` throws.
    #[wasm_bindgen(js_name = addEventListener, skip_typescript)]
    pub fn add_event_listener(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] kind: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EventListenerOrEventListenerObject | null")]
        listener: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | AddEventListenerOptions")]
        options: Option<JsValue>,
    ) -> Result<(), JsValue> {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        if kind.as_string().as_deref() == Some("level") {
            self.host.input(Session::want_levels);
        }
        match self.host.events() {
            Some(events) => events.add_event_listener(&kind, &listener, &options),
            None => Ok(()),
        }
    }

    /// `EventTarget.removeEventListener`.
    ///
    /// # Errors
    /// What the host's `removeEventListener` throws.
    #[wasm_bindgen(js_name = removeEventListener, skip_typescript)]
    pub fn remove_event_listener(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] kind: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EventListenerOrEventListenerObject | null")]
        listener: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | EventListenerOptions")]
        options: Option<JsValue>,
    ) -> Result<(), JsValue> {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        match self.host.events() {
            Some(events) => events.remove_event_listener(&kind, &listener, &options),
            None => Ok(()),
        }
    }

    /// `EventTarget.dispatchEvent`.
    ///
    /// # Errors
    /// What the host's `dispatchEvent` throws.
    #[wasm_bindgen(js_name = dispatchEvent)]
    pub fn dispatch_event(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Event")] event: JsValue,
    ) -> Result<bool, JsValue> {
        match self.host.events() {
            Some(events) => events.dispatch_event(&event).map(|r| r.is_truthy()),
            None => Ok(false),
        }
    }
}
