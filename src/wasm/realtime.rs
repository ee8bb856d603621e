//! `RealtimeTranscriber` for JS: microphone (or any audio) in, `partial` / `final` events out.
//!
//! The decisions live in the sans-IO core (`crate::realtime`): resampling, PCM16, framing, the reconnect buffer,
//! message parsing, close codes, backoff and usage. This file only wires the host: a WebSocket (global or the
//! `WebSocket` option), timers, an `EventTarget`, and the AudioWorklet capture of `realtime/capture.rs`.
//!
//! Files: `realtime/session.rs` (socket lifecycle, reconnects, keep-alive, stop), `realtime/capture.rs`
//! (getUserMedia, AudioContext, the AudioWorklet of `worklet.js` loaded from a Blob URL), `realtime/host.rs`
//! (duck-typed WebSocket, events, timers, `RealtimeError` objects).
//!
//! Decisions where the spec is silent:
//! - the transcriber does not extend `EventTarget` (a wasm-bindgen class cannot) but forwards `addEventListener`,
//!   `removeEventListener` and `dispatchEvent` to one it owns (so `event.target` is that inner target);
//! - `start()` resolves when the service sent `open`; a failed `start()` ends the transcriber; capture starts before
//!   the socket opens, so a refused microphone never spends the single-use ticket;
//! - a stream passed to `start({ stream })` belongs to the caller: its tracks are not stopped;
//! - `sendAudio` before `start()` connects by itself (audio waits in the reconnect buffer until `open`);
//! - reconnects: only after a drop (`socket_closed`, `idle_timeout`) and only with `getUrl`; 6 attempts per outage,
//!   500 ms doubling to 8 s with jitter; then `reconnect_failed`. Ticket errors are final;
//! - `stop()` never rejects; it gives up waiting for the service's close after `stopTimeoutMs` (default 10 s) and
//!   closes the socket itself;
//! - errors are `Error` objects named `RealtimeError` with `code` and `retryable`; besides the core's codes the
//!   binding adds `invalid_options` (constructor) and `invalid_state` (`start()` twice, `sendAudio` after `stop()`).

mod capture;
mod host;
mod session;

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Float32Array, Int16Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use self::session::{usage_detail, ws_url, Audio, Inner, Settings, State};
use super::interop;
use crate::realtime::backoff::{Backoff, DEFAULT_INITIAL_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_MS};
use crate::realtime::keepalive::DEFAULT_KEEPALIVE_MS;
use crate::realtime::{Pipeline, PipelineConfig, RealtimeError, ReconnectPolicy};

const OPTIONS: [&str; 10] = [
    "url",
    "getUrl",
    "WebSocket",
    "sampleRate",
    "frameMs",
    "bufferMs",
    "keepaliveMs",
    "stopTimeoutMs",
    "reconnectAttempts",
    "reconnectDelayMs",
];
const DEFAULT_STOP_TIMEOUT_MS: f64 = 10_000.0;

/// Live transcription over the service's realtime socket; the server mints the session (with the API key) and hands the
/// page only its single-use ticket URL.
///
/// Events (`addEventListener`): `open`, `partial`, `final`, `usage`, `error`, `close`, `reconnecting`; each a
/// `CustomEvent` whose `detail` holds the data.
#[wasm_bindgen]
pub struct RealtimeTranscriber {
    inner: Rc<Inner>,
}

fn invalid_options(message: &str) -> JsValue {
    host::coded("invalid_options", message)
}

fn positive_option(options: &JsValue, name: &str, default: f64) -> Result<f64, JsValue> {
    match interop::number_option(options, name) {
        Ok(None) => Ok(default),
        Ok(Some(n)) if n >= 0.0 => Ok(n),
        _ => Err(invalid_options(&format!(
            "{name} must be a non-negative number"
        ))),
    }
}

fn u32_option(options: &JsValue, name: &str, default: u32) -> Result<u32, JsValue> {
    let n = positive_option(options, name, f64::from(default))?;
    if n.fract() != 0.0 || n > f64::from(u32::MAX) {
        return Err(invalid_options(&format!("{name} must be an integer")));
    }
    Ok(n as u32)
}

#[wasm_bindgen]
impl RealtimeTranscriber {
    /// A transcriber for one realtime session; nothing connects until `start()` or `sendAudio()`.
    ///
    /// # Errors
    /// `invalid_options` for an unknown option, a `url` that is not `ws://` or `wss://`, neither `url` nor
    /// `getUrl`, or no WebSocket (pass `WebSocket` in Node 20); `unsupported_audio_format` for a `sampleRate`
    /// outside 8 000..=48 000 or a `frameMs` outside 20..=100.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "RealtimeTranscriberOptions")] options: JsValue,
    ) -> Result<RealtimeTranscriber, JsValue> {
        if !options.is_object() {
            return Err(invalid_options(
                "options must be an object with url and/or getUrl",
            ));
        }
        if let Some(name) = interop::option_names(&options)
            .into_iter()
            .find(|n| !OPTIONS.contains(&n.as_str()))
        {
            return Err(invalid_options(&format!("unknown option {name:?}")));
        }
        let url = interop::option(&options, "url");
        let first_url = if url.is_undefined() {
            None
        } else {
            match url.as_string() {
                Some(u) if ws_url(&u) => Some(u),
                _ => return Err(invalid_options("url must be a ws:// or wss:// URL string")),
            }
        };
        let get_url_value = interop::option(&options, "getUrl");
        let get_url = interop::function_option(&get_url_value);
        if !get_url_value.is_undefined() && get_url.is_none() {
            return Err(invalid_options("getUrl must be a function"));
        }
        if first_url.is_none() && get_url.is_none() {
            return Err(invalid_options("url or getUrl is required"));
        }
        let mut socket_ctor = interop::option(&options, "WebSocket");
        if socket_ctor.is_undefined() {
            socket_ctor = host::global("WebSocket");
        }
        if !socket_ctor.is_function() {
            return Err(invalid_options(
                "this runtime has no WebSocket: pass one as the WebSocket option (e.g. the ws package in Node 20)",
            ));
        }
        let config = PipelineConfig {
            session_rate: u32_option(&options, "sampleRate", 16_000)?,
            frame_ms: u32_option(
                &options,
                "frameMs",
                crate::realtime::framing::DEFAULT_FRAME_MS,
            )?,
            buffer_ms: u32_option(
                &options,
                "bufferMs",
                crate::realtime::reconnect_buffer::DEFAULT_BUFFER_MS,
            )?,
            downmix: true,
        };
        let pipeline = Pipeline::new(config).map_err(|e| host::realtime_error(&e))?;
        let keepalive_ms = u32_option(&options, "keepaliveMs", DEFAULT_KEEPALIVE_MS as u32)?.max(1);
        let attempts = u32_option(&options, "reconnectAttempts", DEFAULT_MAX_ATTEMPTS)?;
        let delay = u32_option(&options, "reconnectDelayMs", DEFAULT_INITIAL_MS as u32)?;
        let backoff = Backoff::new(u64::from(delay), DEFAULT_MAX_MS.max(u64::from(delay)));
        let events_ctor = host::global("EventTarget");
        let events = host::construct(&events_ctor, &Array::new())
            .map_err(|_| invalid_options("this runtime has no EventTarget"))?
            .unchecked_into();
        let settings = Settings {
            pipeline,
            policy: ReconnectPolicy::new(backoff, attempts),
            keepalive_ms,
            stop_timeout_ms: positive_option(&options, "stopTimeoutMs", DEFAULT_STOP_TIMEOUT_MS)?,
            first_url,
            get_url,
            socket_ctor,
        };
        Ok(Self {
            inner: Rc::new(Inner {
                events,
                state: RefCell::new(State::new(settings)),
            }),
        })
    }

    /// Starts capturing (the microphone, `options.stream`, or nothing with `{ microphone: false }`) and opens the
    /// socket; resolves when the service sent `open`.
    ///
    /// # Errors
    /// Rejects with `microphone_denied`, `no_audio_device`, `ticket_used` / `ticket_invalid` / `ticket_expired`,
    /// `socket_closed`, `unsupported_audio_format`, `reconnect_failed`, or `invalid_state` when already started.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn start(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RealtimeStartOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let inner = self.inner.clone();
        future_to_promise(async move { inner.start(options).await.map(|()| JsValue::UNDEFINED) })
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
        #[wasm_bindgen(js_name = sampleRate)] sample_rate: f64,
    ) -> Result<(), JsValue> {
        if !(sample_rate.is_finite() && sample_rate.fract() == 0.0 && sample_rate > 0.0) {
            return Err(host::realtime_error(
                &RealtimeError::UnsupportedAudioFormat {
                    detail: "the sample rate must be a positive integer".into(),
                },
            ));
        }
        let tag = Reflect::get(&samples, &js_sys::Symbol::to_string_tag())
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default();
        let audio = match tag.as_str() {
            "Float32Array" => Audio::F32(samples.unchecked_ref::<Float32Array>().to_vec()),
            "Int16Array" => Audio::I16(samples.unchecked_ref::<Int16Array>().to_vec()),
            _ => {
                return Err(host::realtime_error(
                    &RealtimeError::UnsupportedAudioFormat {
                        detail: "samples must be a Float32Array or an Int16Array (mono)".into(),
                    },
                ))
            }
        };
        self.inner.push(&audio, sample_rate as u32, true)
    }

    /// Flushes the audio, sends `stop`, waits for the service's last `final`, `usage` and close (at most
    /// `stopTimeoutMs`), and releases everything: tracks, AudioContext, worklet, socket, timers. Never rejects.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            inner.stop().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Usage so far: the service's last `usage` message, else the client's estimate by the spec's pricing
    /// (5 credits on the first join, 2 per started minute of audio sent).
    #[wasm_bindgen(getter, unchecked_return_type = "RealtimeUsage")]
    pub fn usage(&self) -> JsValue {
        let usage = self
            .inner
            .with(|s| s.server_usage.unwrap_or_else(|| s.pipeline.usage()))
            .unwrap_or_default();
        usage_detail(usage)
    }

    /// `"idle"`, `"connecting"`, `"open"`, `"reconnecting"` or `"closed"`.
    #[wasm_bindgen(getter, unchecked_return_type = "RealtimeState")]
    pub fn state(&self) -> String {
        self.inner
            .with(|s| s.phase.name())
            .unwrap_or("closed")
            .to_owned()
    }

    /// Milliseconds of audio waiting in the reconnect buffer.
    #[wasm_bindgen(getter, js_name = bufferedMs)]
    pub fn buffered_ms(&self) -> f64 {
        self.inner
            .with(|s| s.pipeline.buffered_ms() as f64)
            .unwrap_or(0.0)
    }

    /// `EventTarget.addEventListener` (events: `open`, `partial`, `final`, `usage`, `error`, `close`,
    /// `reconnecting`). Typed per event in `realtime_types.d.ts` (`RealtimeEventMap`).
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
        self.inner
            .events
            .add_event_listener(&kind, &listener, &options)
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
        self.inner
            .events
            .remove_event_listener(&kind, &listener, &options)
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
        self.inner
            .events
            .dispatch_event(&event)
            .map(|r| r.is_truthy())
    }
}
