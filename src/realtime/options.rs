//! `TranscriberOptions`: the options of `new RealtimeTranscriber(options)` that are plain data, read from their JSON
//! text (the core's small reader, [`Json`]) by one table of names, kinds and slots ([`TranscriberOptions::from_json`]:
//! unknown names refused; no serde derive, which cost about 9.6 KB of wasm) and checked by
//! [`TranscriberOptions::validate`], which names the option at fault. The JS handles (`getUrl`, `WebSocket`) are
//! taken out by the wasm layer before decoding.

use super::backoff::{
    Backoff, ReconnectPolicy, DEFAULT_INITIAL_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_MS,
};
use super::error::RealtimeError;
use super::framing::DEFAULT_FRAME_MS;
use super::keepalive::DEFAULT_KEEPALIVE_MS;
use super::pipeline::PipelineConfig;
use super::reconnect_buffer::DEFAULT_BUFFER_MS;
use crate::json::Json;

/// Default session rate, in Hz.
pub const DEFAULT_SAMPLE_RATE: u32 = 16_000;
/// Default wait for the service's last `final` and close after `stop()`, in ms.
pub const DEFAULT_STOP_TIMEOUT_MS: u32 = 10_000;
/// Default wait for the service's `open` after the socket was created, in ms.
pub const DEFAULT_OPEN_TIMEOUT_MS: u32 = 10_000;
/// Default silence after which a connection counts as dead: 0, off (see [`TranscriberOptions::silence_timeout_ms`]).
pub const DEFAULT_SILENCE_TIMEOUT_MS: u32 = 0;
/// Largest accepted time option, in ms (a day; larger values would overflow the hosts' timers).
pub const MAX_TIME_MS: f64 = 86_400_000.0;
/// [`MAX_TIME_MS`] as an integer, for the range checks (printed in their messages without float formatting).
const MAX_TIME: u32 = 86_400_000;

/// What to do when the microphone in use goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(rename = "RealtimeDeviceLostPolicy", rename_all = "camelCase")
)]
pub enum DeviceLostPolicy {
    /// Open the default microphone instead and go on (a `devicechange` event says so); `device_lost` if none.
    #[default]
    Switch,
    /// Report `device_lost` and stop the session (the audio so far is flushed and transcribed).
    Error,
}

/// The data options of `new RealtimeTranscriber(options)`. Decoded as JS gives them (camelCase; numbers are JS
/// numbers); the handles (`getUrl`, `WebSocket`) are added by `RealtimeTranscriberOptions`.
#[derive(Clone, Default)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(
        optional_fields,
        rename = "RealtimeTranscriberDataOptions",
        rename_all = "camelCase"
    )
)]
pub struct TranscriberOptions {
    /// The session's single-use `ws://` / `wss://` ticket URL (from `client.realtime.createSession` on your
    /// server); secret, never printed.
    pub url: Option<String>,
    /// The session's `sampleRate` in Hz (8000 to 48000); default 16000.
    pub sample_rate: Option<f64>,
    /// Audio frame length in ms (20 to 100); default 40.
    pub frame_ms: Option<f64>,
    /// Audio kept while reconnecting, in ms (oldest dropped first); default 10000.
    pub buffer_ms: Option<f64>,
    /// Interval of `{"type":"keepalive"}` messages in ms (at least 1); default 5000.
    pub keepalive_ms: Option<f64>,
    /// How long `stop()` waits for the service's last `final` and close, in ms; default 10000.
    pub stop_timeout_ms: Option<f64>,
    /// How long `start()` (and each reconnect) waits for the service's `open`, in ms; 0 waits forever; default
    /// 10000. Before the first `open` the session then ends with `open_timeout`; on a reconnect it counts as a
    /// failed attempt.
    pub open_timeout_ms: Option<f64>,
    /// Audio sent and no message from the service for this long (ms) counts as a dead connection: it reconnects
    /// through `getUrl` (error `connection_silent`). 0 (default) turns the check off: the service may stay quiet
    /// during silence (the API documents no message then; the emulator sends none), and each reconnect spends a
    /// fresh ticket.
    pub silence_timeout_ms: Option<f64>,
    /// Reconnect attempts per outage before `reconnect_failed` (0: never reconnect); default 6.
    pub reconnect_attempts: Option<f64>,
    /// First reconnect delay in ms (doubles up to 8 s, with jitter); default 500.
    pub reconnect_delay_ms: Option<f64>,
    /// The microphone to open (a `MediaDeviceInfo.deviceId` from `navigator.mediaDevices.enumerateDevices()`);
    /// default the browser's choice.
    pub device_id: Option<String>,
    /// Browser echo cancellation on the microphone; default true.
    pub echo_cancellation: Option<bool>,
    /// Browser noise suppression on the microphone; default true.
    pub noise_suppression: Option<bool>,
    /// Browser automatic gain control on the microphone; default true.
    pub auto_gain_control: Option<bool>,
    /// When the microphone in use goes away: `"switch"` (default) opens the default microphone (a `devicechange`
    /// event says so; `device_lost` if there is none); `"error"` reports `device_lost` and stops the session.
    pub on_device_lost: Option<DeviceLostPolicy>,
}

impl std::fmt::Debug for TranscriberOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriberOptions")
            .field("url", &self.url.as_ref().map(|_| "<ticket url>"))
            .field("sample_rate", &self.sample_rate)
            .field("frame_ms", &self.frame_ms)
            .finish_non_exhaustive()
    }
}

/// The capture constraints asked of `getUserMedia`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicrophoneConstraints {
    /// A specific device (`exact`), or the browser's choice.
    pub device_id: Option<String>,
    /// `echoCancellation`.
    pub echo_cancellation: bool,
    /// `noiseSuppression`.
    pub noise_suppression: bool,
    /// `autoGainControl`.
    pub auto_gain_control: bool,
}

/// A ticket URL: a secret, so its `Debug` prints nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct TicketUrl(pub String);

impl std::fmt::Debug for TicketUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TicketUrl(..)")
    }
}

/// Validated settings of a session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Audio pipeline settings.
    pub pipeline: PipelineConfig,
    /// The first ticket URL, if given.
    pub url: Option<TicketUrl>,
    /// Whether the host has a `getUrl` to fetch fresh tickets.
    pub has_get_url: bool,
    /// Keep-alive interval, ms (at least 1).
    pub keepalive_ms: u32,
    /// Stop wait, ms.
    pub stop_timeout_ms: u32,
    /// Open wait, ms (0: none).
    pub open_timeout_ms: u32,
    /// Silence limit, ms (0: off).
    pub silence_timeout_ms: u32,
    /// Reconnect policy.
    pub reconnect: ReconnectPolicy,
    /// Microphone constraints.
    pub microphone: MicrophoneConstraints,
    /// Device-lost policy.
    pub on_device_lost: DeviceLostPolicy,
}

/// Whether `url` is a WebSocket URL.
pub fn is_ws_url(url: &str) -> bool {
    url.starts_with("ws://") || url.starts_with("wss://")
}

fn invalid(path: &str, detail: impl Into<String>) -> RealtimeError {
    RealtimeError::InvalidOptions {
        path: path.to_owned(),
        detail: detail.into(),
    }
}

/// A whole number of `min..=max`, or `default` when absent. The bounds are printed as integers: formatting an
/// `f64` would link the float printing code (about 15 KB) into the wasm.
fn whole(
    value: Option<f64>,
    path: &str,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, RealtimeError> {
    let Some(n) = value else { return Ok(default) };
    crate::options::whole_number(n, f64::from(min), f64::from(max))
        .map(|n| n as u32)
        .ok_or_else(|| invalid(path, format!("must be a whole number from {min} to {max}")))
}

/// Stores `value` in `slot`; `false` (the option has the wrong kind) when there is none.
fn set<T>(slot: &mut Option<T>, value: Option<T>) -> bool {
    let read = value.is_some();
    *slot = value;
    read
}

/// What an option of the wrong type should have been.
fn expectation(field: &str) -> &'static str {
    match field {
        "url" | "deviceId" => "must be a string",
        "echoCancellation" | "noiseSuppression" | "autoGainControl" => "must be a boolean",
        "onDeviceLost" => "must be \"switch\" or \"error\"",
        _ => "must be a number",
    }
}

impl TranscriberOptions {
    /// Decodes the options from their JSON text (the wasm layer converts the JS object without its handles).
    /// `null` counts as not given.
    ///
    /// # Errors
    /// `invalid_options` naming the option: unknown, or of the wrong type (the first in the object's order); text
    /// that is not a JSON object.
    pub fn from_json(text: &str) -> Result<Self, RealtimeError> {
        let Some(Json::Object(members)) = Json::parse(text) else {
            return Err(invalid(
                "",
                "options must be an object with url and/or getUrl",
            ));
        };
        let mut o = Self::default();
        for (name, value) in members {
            let number = value.as_f64();
            let flag = value.as_bool();
            // One arm per option: its name, its kind and its slot; `false`: the value has the wrong kind.
            let read = match (name.as_str(), value) {
                (_, Json::Null) => true,
                ("url", Json::String(s)) => set(&mut o.url, Some(s)),
                ("deviceId", Json::String(s)) => set(&mut o.device_id, Some(s)),
                ("onDeviceLost", Json::String(s)) => set(
                    &mut o.on_device_lost,
                    match s.as_str() {
                        "switch" => Some(DeviceLostPolicy::Switch),
                        "error" => Some(DeviceLostPolicy::Error),
                        _ => None,
                    },
                ),
                ("sampleRate", _) => set(&mut o.sample_rate, number),
                ("frameMs", _) => set(&mut o.frame_ms, number),
                ("bufferMs", _) => set(&mut o.buffer_ms, number),
                ("keepaliveMs", _) => set(&mut o.keepalive_ms, number),
                ("stopTimeoutMs", _) => set(&mut o.stop_timeout_ms, number),
                ("openTimeoutMs", _) => set(&mut o.open_timeout_ms, number),
                ("silenceTimeoutMs", _) => set(&mut o.silence_timeout_ms, number),
                ("reconnectAttempts", _) => set(&mut o.reconnect_attempts, number),
                ("reconnectDelayMs", _) => set(&mut o.reconnect_delay_ms, number),
                ("echoCancellation", _) => set(&mut o.echo_cancellation, flag),
                ("noiseSuppression", _) => set(&mut o.noise_suppression, flag),
                ("autoGainControl", _) => set(&mut o.auto_gain_control, flag),
                ("url" | "deviceId" | "onDeviceLost", _) => false,
                _ => return Err(invalid(&name, "is not an option of RealtimeTranscriber")),
            };
            if !read {
                return Err(invalid(&name, expectation(&name)));
            }
        }
        Ok(o)
    }

    /// Checks every rule and applies the defaults; `has_get_url`: whether the host was given `getUrl`.
    ///
    /// # Errors
    /// `invalid_options` with the option's path: a `url` that is not `ws://`/`wss://`, neither `url` nor `getUrl`,
    /// a number that is not whole or out of range; `unsupported_audio_format` for a `sampleRate` or `frameMs` the
    /// pipeline refuses.
    pub fn validate(&self, has_get_url: bool) -> Result<SessionConfig, RealtimeError> {
        let url = match &self.url {
            Some(u) if is_ws_url(u) => Some(TicketUrl(u.clone())),
            Some(_) => return Err(invalid("url", "must be a ws:// or wss:// URL")),
            None => None,
        };
        if url.is_none() && !has_get_url {
            return Err(invalid("url", "url or getUrl is required"));
        }
        let pipeline = PipelineConfig {
            session_rate: whole(
                self.sample_rate,
                "sampleRate",
                DEFAULT_SAMPLE_RATE,
                0,
                u32::MAX,
            )?,
            frame_ms: whole(self.frame_ms, "frameMs", DEFAULT_FRAME_MS, 0, u32::MAX)?,
            buffer_ms: whole(self.buffer_ms, "bufferMs", DEFAULT_BUFFER_MS, 0, MAX_TIME)?,
            downmix: true,
        };
        let delay = whole(
            self.reconnect_delay_ms,
            "reconnectDelayMs",
            DEFAULT_INITIAL_MS as u32,
            0,
            MAX_TIME,
        )?;
        let attempts = whole(
            self.reconnect_attempts,
            "reconnectAttempts",
            DEFAULT_MAX_ATTEMPTS,
            0,
            1_000,
        )?;
        Ok(SessionConfig {
            pipeline,
            url,
            has_get_url,
            keepalive_ms: whole(
                self.keepalive_ms,
                "keepaliveMs",
                DEFAULT_KEEPALIVE_MS as u32,
                0,
                MAX_TIME,
            )?
            .max(1),
            stop_timeout_ms: whole(
                self.stop_timeout_ms,
                "stopTimeoutMs",
                DEFAULT_STOP_TIMEOUT_MS,
                0,
                MAX_TIME,
            )?,
            open_timeout_ms: whole(
                self.open_timeout_ms,
                "openTimeoutMs",
                DEFAULT_OPEN_TIMEOUT_MS,
                0,
                MAX_TIME,
            )?,
            silence_timeout_ms: whole(
                self.silence_timeout_ms,
                "silenceTimeoutMs",
                DEFAULT_SILENCE_TIMEOUT_MS,
                0,
                MAX_TIME,
            )?,
            reconnect: ReconnectPolicy::new(
                Backoff::new(u64::from(delay), DEFAULT_MAX_MS.max(u64::from(delay))),
                attempts,
            ),
            microphone: MicrophoneConstraints {
                device_id: self.device_id.clone(),
                echo_cancellation: self.echo_cancellation.unwrap_or(true),
                noise_suppression: self.noise_suppression.unwrap_or(true),
                auto_gain_control: self.auto_gain_control.unwrap_or(true),
            },
            on_device_lost: self.on_device_lost.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> Result<SessionConfig, RealtimeError> {
        TranscriberOptions::from_json(&v.to_string())?.validate(false)
    }

    fn path_of(e: RealtimeError) -> String {
        match e {
            RealtimeError::InvalidOptions { path, .. } => path,
            other => panic!("not invalid_options: {other:?}"),
        }
    }

    #[test]
    fn defaults_apply_when_only_a_url_is_given() {
        let c = config(json!({"url": "wss://svc.test/rt?ticket=t"})).unwrap();
        assert_eq!(c.pipeline, PipelineConfig::default());
        assert_eq!(c.keepalive_ms, 5_000);
        assert_eq!(c.stop_timeout_ms, 10_000);
        assert_eq!(c.open_timeout_ms, 10_000);
        assert_eq!(c.silence_timeout_ms, 0);
        assert_eq!(c.reconnect, ReconnectPolicy::default());
        assert_eq!(
            c.microphone,
            MicrophoneConstraints {
                device_id: None,
                echo_cancellation: true,
                noise_suppression: true,
                auto_gain_control: true
            }
        );
        assert_eq!(c.on_device_lost, DeviceLostPolicy::Switch);
    }

    #[test]
    fn an_unknown_option_is_refused_by_name() {
        let e = config(json!({"url": "ws://x", "keepAliveMs": 5})).unwrap_err();
        assert_eq!(e.code(), "invalid_options");
        assert_eq!(path_of(e), "keepAliveMs");
    }

    #[test]
    fn a_wrong_type_names_the_option_without_echoing_the_value() {
        let e = config(json!({"url": "ws://x", "sampleRate": "wss://svc/rt?ticket=tkt_secret"}))
            .unwrap_err();
        assert!(!e.to_string().contains("tkt_secret"), "{e}");
        assert_eq!(path_of(e), "sampleRate");
        let e = config(json!({"url": 5})).unwrap_err();
        assert_eq!(path_of(e), "url");
        let e = config(json!({"url": "ws://x", "onDeviceLost": "ignore"})).unwrap_err();
        assert_eq!(path_of(e), "onDeviceLost");
    }

    #[test]
    fn numbers_must_be_whole_and_in_range() {
        for (name, value) in [
            ("keepaliveMs", json!(-1)),
            ("frameMs", json!(20.5)),
            ("stopTimeoutMs", json!(1e12)),
            ("reconnectAttempts", json!(5_000)),
            ("openTimeoutMs", json!(-3)),
            ("silenceTimeoutMs", json!(0.5)),
        ] {
            let mut o = json!({"url": "ws://x"});
            o[name] = value;
            let e = config(o).unwrap_err();
            assert_eq!(path_of(e), name);
        }
    }

    #[test]
    fn a_range_error_prints_its_bounds_as_integers() {
        let e = config(json!({"url": "ws://x", "bufferMs": 1.5})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bufferMs: must be a whole number from 0 to 86400000"
        );
        let e = config(json!({"url": "ws://x", "reconnectAttempts": 1001})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reconnectAttempts: must be a whole number from 0 to 1000"
        );
    }

    #[test]
    fn the_first_bad_option_in_the_object_is_named() {
        // Raw text: `json!` sorts the keys.
        let first = |text: &str| path_of(TranscriberOptions::from_json(text).err().unwrap());
        assert_eq!(
            first(r#"{"sampleRate": "16000", "bogus": 1}"#),
            "sampleRate"
        );
        assert_eq!(first(r#"{"bogus": 1, "sampleRate": "16000"}"#), "bogus");
        let e = config(json!({"url": "ws://x", "echoCancellation": 1})).unwrap_err();
        assert_eq!(e.to_string(), "echoCancellation: must be a boolean");
    }

    #[test]
    fn null_options_count_as_not_given() {
        let c =
            config(json!({"url": "ws://x", "frameMs": null, "onDeviceLost": null, "later": null}))
                .unwrap();
        assert_eq!(c.pipeline.frame_ms, PipelineConfig::default().frame_ms);
        assert_eq!(c.on_device_lost, DeviceLostPolicy::Switch);
    }

    #[test]
    fn the_url_must_be_a_websocket_url_and_is_never_printed() {
        let e = config(json!({"url": "https://svc.test/rt?ticket=tkt_secret"})).unwrap_err();
        assert!(!e.to_string().contains("tkt_secret"));
        assert_eq!(path_of(e), "url");
        let c = config(json!({"url": "wss://svc.test/rt?ticket=tkt_secret"})).unwrap();
        assert!(!format!("{c:?}").contains("tkt_secret"));
        let o = TranscriberOptions::from_json(r#"{"url": "wss://svc.test/rt?ticket=tkt_secret"}"#)
            .unwrap();
        assert!(!format!("{o:?}").contains("tkt_secret"));
    }

    #[test]
    fn url_or_get_url_is_required() {
        let e = config(json!({})).unwrap_err();
        assert_eq!(path_of(e), "url");
        let c = TranscriberOptions::from_json("{}")
            .unwrap()
            .validate(true)
            .unwrap();
        assert!(c.url.is_none() && c.has_get_url);
    }

    #[test]
    fn capture_constraints_can_each_be_turned_off_and_a_device_chosen() {
        let c = config(
            json!({"url": "ws://x", "deviceId": "mic-2", "echoCancellation": false,
            "noiseSuppression": false, "autoGainControl": false, "onDeviceLost": "error"}),
        )
        .unwrap();
        assert_eq!(c.microphone.device_id.as_deref(), Some("mic-2"));
        assert!(!c.microphone.echo_cancellation);
        assert!(!c.microphone.noise_suppression);
        assert!(!c.microphone.auto_gain_control);
        assert_eq!(c.on_device_lost, DeviceLostPolicy::Error);
    }

    #[test]
    fn a_non_object_is_refused() {
        assert_eq!(
            config(json!("ws://x")).unwrap_err().code(),
            "invalid_options"
        );
    }
}
