//! Microphone (or any `MediaStream`) capture: `getUserMedia`, an `AudioContext` at whatever rate the browser
//! picks, and the AudioWorklet processor of `worklet.js` (loaded from a Blob URL, so no bundler plugin is needed).
//! The worklet posts mono `Float32Array` blocks of about 20 ms; the caller resamples them in wasm.

use js_sys::{Array, Float32Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::host::{self, Timer};
use crate::realtime::options::MicrophoneConstraints;
use crate::realtime::RealtimeError;

/// The processor's source, shipped inside the wasm module.
const WORKLET_SOURCE: &str = include_str!("../worklet.js");
/// Name the processor registers.
const PROCESSOR: &str = "docauto-capture";
/// How long `stop` waits for the worklet's last block.
const FLUSH_WAIT_MS: f64 = 250.0;
/// Length of the worklet's blocks, in ms (`BLOCK_MS` in `worklet.js`).
const WORKLET_BLOCK_MS: u32 = 20;
/// Messages to the worklet's port (`worklet.js` answers both with [`FLUSHED`]).
const STOP: &str = "stop";
/// The worklet's answer once its last block was posted.
const FLUSHED: &str = "flushed";

#[wasm_bindgen]
extern "C" {
    type MediaDevicesLike;
    #[wasm_bindgen(catch, method, js_name = getUserMedia)]
    fn get_user_media(this: &MediaDevicesLike, constraints: &JsValue) -> Result<Promise, JsValue>;

    type StreamLike;
    #[wasm_bindgen(catch, method, js_name = getTracks)]
    fn get_tracks(this: &StreamLike) -> Result<Array, JsValue>;
    #[wasm_bindgen(catch, method, js_name = getAudioTracks)]
    fn get_audio_tracks(this: &StreamLike) -> Result<Array, JsValue>;

    type TrackLike;
    #[wasm_bindgen(catch, method, js_name = stop)]
    fn stop(this: &TrackLike) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = addEventListener)]
    fn add_track_listener(this: &TrackLike, kind: &str, listener: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = removeEventListener)]
    fn remove_track_listener(
        this: &TrackLike,
        kind: &str,
        listener: &JsValue,
    ) -> Result<(), JsValue>;

    type ContextLike;
    #[wasm_bindgen(catch, method, getter, structural, js_name = sampleRate)]
    fn sample_rate(this: &ContextLike) -> Result<f64, JsValue>;
    #[wasm_bindgen(catch, method, getter, structural, js_name = audioWorklet)]
    fn audio_worklet(this: &ContextLike) -> Result<WorkletLike, JsValue>;
    #[wasm_bindgen(catch, method, js_name = createMediaStreamSource)]
    fn create_media_stream_source(
        this: &ContextLike,
        stream: &JsValue,
    ) -> Result<NodeLike, JsValue>;
    #[wasm_bindgen(catch, method, js_name = resume)]
    fn resume(this: &ContextLike) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, method, js_name = close)]
    fn close(this: &ContextLike) -> Result<Promise, JsValue>;

    type WorkletLike;
    #[wasm_bindgen(catch, method, js_name = addModule)]
    fn add_module(this: &WorkletLike, url: &str) -> Result<Promise, JsValue>;

    type NodeLike;
    #[wasm_bindgen(catch, method, js_name = connect)]
    fn connect(this: &NodeLike, to: &NodeLike) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, js_name = disconnect)]
    fn disconnect(this: &NodeLike) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, getter, structural, js_name = port)]
    fn port(this: &NodeLike) -> Result<PortLike, JsValue>;

    /// The worklet's `MessagePort`.
    pub type PortLike;
    #[wasm_bindgen(catch, method, setter, structural, js_name = onmessage)]
    fn set_onmessage(this: &PortLike, handler: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = postMessage)]
    fn post_message(this: &PortLike, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = close)]
    fn close_port(this: &PortLike) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = addEventListener)]
    fn add_event_listener(this: &PortLike, kind: &str, listener: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, method, js_name = removeEventListener)]
    fn remove_event_listener(
        this: &PortLike,
        kind: &str,
        listener: &JsValue,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(catch, js_namespace = URL, js_name = createObjectURL)]
    fn create_object_url(blob: &JsValue) -> Result<String, JsValue>;
    #[wasm_bindgen(catch, js_namespace = URL, js_name = revokeObjectURL)]
    fn revoke_object_url(url: &str) -> Result<(), JsValue>;
}

/// A running capture graph: stream -> source -> worklet, blocks delivered to the callback.
pub struct Capture {
    stream: StreamLike,
    owns_stream: bool,
    context: ContextLike,
    source: NodeLike,
    node: NodeLike,
    port: PortLike,
    _on_block: Closure<dyn FnMut(JsValue)>,
    tracks: Array,
    on_ended: Closure<dyn FnMut()>,
}

/// The `microphone_denied` / `no_audio_device` error for a `getUserMedia` rejection (by the DOMException name).
pub fn media_error(e: &JsValue) -> RealtimeError {
    let name = Reflect::get(e, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default();
    match name.as_str() {
        "NotFoundError"
        | "DevicesNotFoundError"
        | "OverconstrainedError"
        | "NotReadableError"
        | "TrackStartError"
        | "AbortError" => RealtimeError::NoAudioDevice,
        _ => RealtimeError::MicrophoneDenied,
    }
}

/// Asks for the microphone: mono, with the constraints the session chose (a device, echo cancellation, noise
/// suppression, automatic gain).
///
/// # Errors
/// `microphone_denied` when refused, `no_audio_device` when there is none or `navigator.mediaDevices` is missing.
pub async fn microphone(c: &MicrophoneConstraints) -> Result<JsValue, RealtimeError> {
    let devices = Reflect::get(&host::global("navigator"), &"mediaDevices".into())
        .unwrap_or(JsValue::UNDEFINED);
    if !devices.is_object() {
        return Err(RealtimeError::NoAudioDevice);
    }
    let mut audio = vec![
        ("channelCount", 1.into()),
        ("echoCancellation", c.echo_cancellation.into()),
        ("noiseSuppression", c.noise_suppression.into()),
        ("autoGainControl", c.auto_gain_control.into()),
    ];
    if let Some(id) = &c.device_id {
        audio.push(("deviceId", host::object(&[("exact", id.as_str().into())])));
    }
    let constraints = host::object(&[("audio", host::object(&audio))]);
    let asked = devices
        .unchecked_into::<MediaDevicesLike>()
        .get_user_media(&constraints)
        .map_err(|e| media_error(&e))?;
    JsFuture::from(asked).await.map_err(|e| media_error(&e))
}

fn graph_error(what: &str) -> RealtimeError {
    RealtimeError::UnsupportedAudioFormat {
        detail: format!("cannot capture audio in this runtime: {what}"),
    }
}

impl Capture {
    /// Builds the graph for `stream`; `on_block(samples, rate)` gets each mono block, `on_ended()` is called when
    /// an audio track ends by itself (device unplugged or revoked). `owns_stream`: whether [`Capture::close`] stops
    /// the stream's tracks (true for the microphone opened by the transcriber).
    ///
    /// # Errors
    /// `no_audio_device` when the stream has no audio track; `unsupported_audio_format` when the runtime has no
    /// `AudioContext` or `AudioWorklet`; `invalid_options` when `stream` is not a `MediaStream`.
    pub async fn start(
        stream: JsValue,
        owns_stream: bool,
        on_block: impl FnMut(&[f32], u32) + 'static,
        on_ended: impl FnMut() + 'static,
    ) -> Result<Self, RealtimeError> {
        let stream_like: StreamLike = stream.clone().unchecked_into();
        let audio_tracks =
            stream_like
                .get_audio_tracks()
                .map_err(|_| RealtimeError::InvalidOptions {
                    path: "stream".into(),
                    detail: "must be a MediaStream".into(),
                })?;
        if audio_tracks.length() == 0 {
            return Err(RealtimeError::NoAudioDevice);
        }
        let mut ctor = host::global("AudioContext");
        if !ctor.is_function() {
            ctor = host::global("webkitAudioContext");
        }
        let context: ContextLike = host::construct(&ctor, &Array::new())
            .map_err(|_| graph_error("no AudioContext"))?
            .unchecked_into();
        match Self::build(&context, &stream, on_block).await {
            Ok((source, node, port, closure)) => {
                let on_ended = Closure::<dyn FnMut()>::new(on_ended);
                for track in audio_tracks.iter() {
                    let _ = track
                        .unchecked_ref::<TrackLike>()
                        .add_track_listener("ended", on_ended.as_ref());
                }
                Ok(Self {
                    stream: stream_like,
                    owns_stream,
                    context,
                    source,
                    node,
                    port,
                    _on_block: closure,
                    tracks: audio_tracks,
                    on_ended,
                })
            }
            Err(e) => {
                if let Ok(p) = context.close() {
                    let _ = JsFuture::from(p).await;
                }
                Err(e)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    async fn build(
        context: &ContextLike,
        stream: &JsValue,
        mut on_block: impl FnMut(&[f32], u32) + 'static,
    ) -> Result<(NodeLike, NodeLike, PortLike, Closure<dyn FnMut(JsValue)>), RealtimeError> {
        let rate = context
            .sample_rate()
            .ok()
            .filter(|r| r.is_finite() && *r > 0.0)
            .ok_or_else(|| graph_error("the AudioContext has no sample rate"))?
            as u32;
        if let Ok(p) = context.resume() {
            let _ = JsFuture::from(p).await;
        }
        let worklet = context
            .audio_worklet()
            .ok()
            .filter(|w| w.is_object())
            .ok_or_else(|| graph_error("no AudioWorklet (a secure context is required)"))?;
        let blob = host::construct(
            &host::global("Blob"),
            &Array::of2(
                &Array::of1(&WORKLET_SOURCE.into()),
                &host::object(&[("type", "text/javascript".into())]),
            ),
        )
        .map_err(|_| graph_error("no Blob"))?;
        let url = create_object_url(&blob).map_err(|_| graph_error("no URL.createObjectURL"))?;
        let added = match worklet.add_module(&url) {
            Ok(p) => JsFuture::from(p).await,
            Err(e) => Err(e),
        };
        let _ = revoke_object_url(&url);
        added.map_err(|_| graph_error("the AudioWorklet module did not load"))?;
        let source = context
            .create_media_stream_source(stream)
            .map_err(|_| graph_error("createMediaStreamSource failed"))?;
        let options = host::object(&[
            ("numberOfInputs", 1.into()),
            ("numberOfOutputs", 0.into()),
            (
                "processorOptions",
                host::object(&[("blockSamples", (rate * WORKLET_BLOCK_MS / 1_000).into())]),
            ),
        ]);
        let node: NodeLike = host::construct(
            &host::global("AudioWorkletNode"),
            &Array::of3(context, &PROCESSOR.into(), &options),
        )
        .map_err(|_| graph_error("no AudioWorkletNode"))?
        .unchecked_into();
        let port = node.port().map_err(|_| graph_error("no worklet port"))?;
        let closure = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
            let data = Reflect::get(&event, &"data".into()).unwrap_or(JsValue::UNDEFINED);
            if let Some(block) = data.dyn_ref::<Float32Array>() {
                on_block(&block.to_vec(), rate);
            }
        });
        port.set_onmessage(closure.as_ref())
            .map_err(|_| graph_error("cannot listen to the worklet port"))?;
        source
            .connect(&node)
            .map_err(|_| graph_error("cannot connect the stream to the worklet"))?;
        Ok((source, node, port, closure))
    }

    /// The worklet's port (for [`flush`]).
    pub fn port(&self) -> PortLike {
        JsValue::clone(&self.port).unchecked_into()
    }

    /// Tears the graph down: worklet disconnected, port closed, tracks stopped (when owned), context closed.
    pub async fn close(self) {
        for track in self.tracks.iter() {
            let _ = track
                .unchecked_ref::<TrackLike>()
                .remove_track_listener("ended", self.on_ended.as_ref());
        }
        let _ = self.port.set_onmessage(&JsValue::NULL);
        let _ = self.port.close_port();
        let _ = self.source.disconnect();
        let _ = self.node.disconnect();
        if self.owns_stream {
            stop_tracks(&self.stream);
        }
        if let Ok(p) = self.context.close() {
            let _ = JsFuture::from(p).await;
        }
    }
}

/// Asks the worklet of `port` for its partial block and waits (at most 250 ms) until it arrived; the worklet then
/// stops processing.
pub async fn flush(port: &PortLike) {
    let mut resolver = None;
    let waited = Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    let Some(resolve) = resolver else { return };
    let done = resolve.clone();
    let listener = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let data = Reflect::get(&event, &"data".into()).unwrap_or(JsValue::UNDEFINED);
        if data.as_string().as_deref() == Some(FLUSHED) {
            let _ = done.call0(&JsValue::UNDEFINED);
        }
    });
    let timer = Timer::once(FLUSH_WAIT_MS, move || {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    });
    if port
        .add_event_listener("message", listener.as_ref())
        .is_ok()
        && port.post_message(&STOP.into()).is_ok()
    {
        let _ = JsFuture::from(waited).await;
    }
    let _ = port.remove_event_listener("message", listener.as_ref());
    drop(timer);
    drop(listener);
}

/// Stops every track of `stream` (a microphone stream the transcriber opened but could not use).
pub fn stop_tracks(stream: &JsValue) {
    if let Ok(tracks) = stream.unchecked_ref::<StreamLike>().get_tracks() {
        for track in tracks.iter() {
            let _ = track.unchecked_into::<TrackLike>().stop();
        }
    }
}
