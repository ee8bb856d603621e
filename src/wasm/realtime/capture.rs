//! Microphone (or any `MediaStream`) capture: `getUserMedia`, an `AudioContext` at whatever rate the browser
//! picks, and the AudioWorklet processor of `worklet.js` (loaded from a Blob URL, so no bundler plugin is needed).
//! The worklet posts mono `Float32Array` blocks of about 20 ms; the caller resamples them in wasm.
//!
//! The browser's promises are sequenced by `capture.js` (a wasm-bindgen snippet), which reports each wait through
//! one callback: Rust async functions over hand-declared bindings cost about 19 KB of wasm in `docauto/realtime`
//! (the futures executor, their state machines, one import shim per method). This file keeps the decisions: the
//! constraints asked, and what each failure means ([`capture_error`]).

use js_sys::Float32Array;
use wasm_bindgen::prelude::*;

use super::host;
use crate::realtime::options::MicrophoneConstraints;
use crate::realtime::RealtimeError;

/// `worklet.js` as written: its comment lines document it for readers.
const WORKLET_FILE: &str = include_str!("../worklet.js");

/// `worklet.js` without its comment lines, made at compile time: what the wasm module ships (its comments were
/// about 500 B of the module's gzip).
static WORKLET_CODE: ([u8; WORKLET_FILE.len()], usize) =
    without_comment_lines(WORKLET_FILE.as_bytes());

/// The processor's source, shipped inside the wasm module.
const WORKLET_SOURCE: &str = match core::str::from_utf8(WORKLET_CODE.0.split_at(WORKLET_CODE.1).0) {
    Ok(code) => code,
    Err(_) => WORKLET_FILE,
};

/// `source` without the lines whose first non-blank characters are `//`, and the length kept. Evaluated at compile
/// time only (an index out of range would be a build error, not a runtime panic).
#[allow(clippy::indexing_slicing)]
const fn without_comment_lines<const N: usize>(source: &[u8]) -> ([u8; N], usize) {
    let mut out = [0_u8; N];
    let (mut start, mut kept) = (0, 0);
    while start < source.len() {
        let mut end = start;
        while end < source.len() && source[end] != b'\n' {
            end += 1;
        }
        let mut first = start;
        while first < end && source[first] == b' ' {
            first += 1;
        }
        let comment = first + 1 < end && source[first] == b'/' && source[first + 1] == b'/';
        let mut i = start;
        while !comment && i <= end && i < source.len() && kept < N {
            out[kept] = source[i];
            kept += 1;
            i += 1;
        }
        start = end + 1;
    }
    (out, kept)
}

#[wasm_bindgen(module = "/src/wasm/realtime/capture.js")]
extern "C" {
    #[wasm_bindgen(js_name = openCapture)]
    fn open_capture(
        constraints: &JsValue,
        stream: &JsValue,
        worklet_source: &str,
        audio_start_ms: u32,
        on_block: &JsValue,
        on_ended: &JsValue,
        done: JsValue,
    );
    #[wasm_bindgen(js_name = flushCapture)]
    fn flush_capture(capture: &JsValue, done: JsValue);
    #[wasm_bindgen(js_name = closeCapture)]
    fn close_capture(capture: &JsValue) -> js_sys::Promise;
    /// Calls `getUrl()` and then `done(url | undefined)`.
    #[wasm_bindgen(js_name = fetchUrl)]
    pub fn fetch_url(get_url: &JsValue, done: JsValue);
    /// Calls each of `waiters` once every promise of `pending` settled.
    #[wasm_bindgen(js_name = afterAll)]
    pub fn after_all(pending: &js_sys::Array, waiters: &js_sys::Array);
    /// Calls `done()` in a microtask.
    pub fn later(done: JsValue);
    /// Makes `object` hold `value` (a property only this module names); whether it could.
    pub fn hold(object: &JsValue, value: &JsValue) -> bool;
}

/// A running capture graph: stream -> source -> worklet, blocks delivered to the callback while it lives. Dropped
/// without [`Capture::close`], it tears the graph down all the same, before its callbacks are freed.
pub struct Capture {
    handle: JsValue,
    _on_block: Closure<dyn FnMut(Float32Array, u32)>,
    _on_ended: Closure<dyn FnMut()>,
}

/// The error for a failure `capture.js` reports as `{ kind, detail }`.
pub fn capture_error(failure: &JsValue) -> RealtimeError {
    let field = |name: &str| {
        crate::wasm::interop::option(failure, name)
            .as_string()
            .unwrap_or_default()
    };
    let detail = field("detail");
    match field("kind").as_str() {
        "media" => media_error(&detail),
        "not_a_stream" => RealtimeError::InvalidOptions {
            path: "stream".into(),
            detail: "must be a MediaStream".into(),
        },
        "graph" => RealtimeError::UnsupportedAudioFormat {
            detail: format!("cannot capture audio in this runtime: {detail}"),
        },
        // The AudioContext was still not running when the session's limit passed (an autoplay policy).
        "suspended" => RealtimeError::AudioNotAllowed,
        _ => RealtimeError::NoAudioDevice,
    }
}

/// The `microphone_denied` / `no_audio_device` error for a `getUserMedia` rejection, by the DOMException's name.
fn media_error(name: &str) -> RealtimeError {
    match name {
        "NotFoundError"
        | "DevicesNotFoundError"
        | "OverconstrainedError"
        | "NotReadableError"
        | "TrackStartError"
        | "AbortError" => RealtimeError::NoAudioDevice,
        _ => RealtimeError::MicrophoneDenied,
    }
}

/// The `audio` constraints asked of `getUserMedia`: mono, with the constraints the session chose (a device, echo
/// cancellation, noise suppression, automatic gain).
fn audio_constraints(c: &MicrophoneConstraints) -> JsValue {
    let mut audio = vec![
        ("channelCount", 1.into()),
        ("echoCancellation", c.echo_cancellation.into()),
        ("noiseSuppression", c.noise_suppression.into()),
        ("autoGainControl", c.auto_gain_control.into()),
    ];
    if let Some(id) = &c.device_id {
        audio.push(("deviceId", host::object(&[("exact", id.as_str().into())])));
    }
    host::object(&audio)
}

impl Capture {
    /// Opens the microphone with `constraints`, or captures `stream` (which stays the caller's), and calls
    /// `done(Ok(capture))` or `done(Err(error))` once: `microphone_denied`, `no_audio_device`,
    /// `unsupported_audio_format` (no `AudioContext` or `AudioWorklet` in this runtime), `invalid_options` (`stream` is
    /// not a `MediaStream`), `audio_not_allowed` (the `AudioContext` did not start within `audio_start_ms`; 0 waits
    /// forever). `on_block(samples, rate)` gets each mono block; `on_ended()` is called when an audio track ends by
    /// itself (device unplugged or revoked).
    pub fn open(
        source: Result<JsValue, &MicrophoneConstraints>,
        audio_start_ms: u32,
        mut on_block: impl FnMut(&[f32], u32) + 'static,
        on_ended: impl FnMut() + 'static,
        done: impl FnOnce(Result<Capture, RealtimeError>) + 'static,
    ) {
        let on_block =
            Closure::<dyn FnMut(Float32Array, u32)>::new(move |block: Float32Array, rate| {
                on_block(&block.to_vec(), rate);
            });
        let on_ended = Closure::<dyn FnMut()>::new(on_ended);
        let (constraints, stream) = match &source {
            Ok(stream) => (JsValue::UNDEFINED, stream.clone()),
            Err(c) => (audio_constraints(c), JsValue::UNDEFINED),
        };
        let (block_fn, ended_fn) = (on_block.as_ref().clone(), on_ended.as_ref().clone());
        let done = Closure::once_into_js(move |handle: JsValue, failure: JsValue| {
            done(if failure.is_undefined() {
                Ok(Capture {
                    handle,
                    _on_block: on_block,
                    _on_ended: on_ended,
                })
            } else {
                Err(capture_error(&failure))
            });
        });
        open_capture(
            &constraints,
            &stream,
            WORKLET_SOURCE,
            audio_start_ms,
            &block_fn,
            &ended_fn,
            done,
        );
    }

    /// Asks the worklet for its partial block and calls `done()` once it arrived (at most 250 ms later); the
    /// worklet then stops processing. Without a capture, `done()` is called in a microtask.
    pub fn flush(capture: Option<&Capture>, done: impl FnOnce() + 'static) {
        let handle = capture.map_or(JsValue::UNDEFINED, |c| c.handle.clone());
        flush_capture(&handle, Closure::once_into_js(done));
    }

    /// Tears the graph down: worklet disconnected, port closed, tracks stopped (when owned); the promise resolves
    /// when the context closed. The callbacks are released at once (the graph no longer calls them).
    pub fn close(mut self) -> js_sys::Promise {
        close_capture(&std::mem::take(&mut self.handle))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // `closeCapture` detaches the port's handler and the tracks' `ended` listeners before it returns (its first
        // await comes after), so the callbacks freed next are never called again.
        if !self.handle.is_undefined() {
            let _ = close_capture(&self.handle);
        }
    }
}
