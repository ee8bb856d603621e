//! The live transcription session as a sans-IO state machine: the host feeds it what happened (start, audio,
//! socket events, timers, stop, pause, device loss) and applies the [`Effect`]s it queues, in order.
//!
//! The host loop (one per transcriber, see `src/wasm/realtime/session.rs`):
//!
//! ```text
//! input  --> Session::<input>(..)  (returns at once; may queue effects)
//! loop { match session.next_effect() { Some(effect) => apply it (call the socket, a timer, dispatch an
//!        event, settle a promise); None => break } }
//! ```
//!
//! Effects never call back into the session while it is borrowed: a listener that calls `stop()` while its
//! event is dispatched only adds an input, whose effects the same loop applies next.
//!
//! Rules (each pinned in `session_tests.rs`):
//! - capture starts before the socket opens, so a refused microphone never spends the single-use ticket;
//! - the capture's audio must be let run within `openTimeoutMs` ([`Session::audio_start_limit_ms`]): a browser's
//!   autoplay policy can hold an `AudioContext` suspended forever (WebKit without a user gesture and without a
//!   capture running), and the capture then fails with `audio_not_allowed`, before any socket;
//! - `start()` settles when the service sent `open` (or with the error that ended the session);
//! - the service's `open` must come within `openTimeoutMs`: before the first `open` that ends the session with
//!   `open_timeout`; on a reconnect it counts as a failed attempt;
//! - a close with 1000 and no service `error` message ends the session (after our `stop`, or the service ended
//!   it); any other close, a service `error`, an open timeout on a reconnect, or a silent connection is a drop;
//! - a drop reconnects only when its error is retryable and a `getUrl` exists, with backoff (6 attempts per
//!   outage by default), else the session ends with that error (`reconnect_failed` once the attempts are spent);
//!   ticket errors are never retried;
//! - audio captured meanwhile waits in the bounded reconnect buffer and goes first after the next `open`;
//! - keep-alive every `keepaliveMs` while open, paused or not;
//! - `pause()` keeps capture and keep-alive, sends no audio, never reconnects by itself;
//! - silence: with `silenceTimeoutMs`, audio sent and no service message for that long is a drop
//!   (`connection_silent`);
//! - `stop()`: flush the capture, send the resampler's tail and the last partial frame, then `{"type":"stop"}`,
//!   and wait for the service's close (bounded by `stopTimeoutMs`), so the last `final` arrives;
//! - transcript times are shifted by the audio that went before the current connection (sent or dropped), so
//!   they count from the session's first audio and stay continuous across reconnects;
//! - a lost microphone is switched for the default one, or reported as `device_lost` and the session stopped;
//! - a session is live from `start()` (or the first `sendAudio`) until it closes: [`Effect::Retain`] when it begins,
//!   [`Effect::Release`] when it ends, so the host keeps the transcriber from being garbage-collected meanwhile and
//!   lets it go after;
//! - [`Session::dispose`] (the transcriber freed: `free()`, `[Symbol.dispose]()`, the end of a `using` block) ends
//!   the session at once without waiting on the service: timers cleared, socket closed with 1000, capture released,
//!   a pending `start()` rejected with `disposed`, pending `stop()`s resolved, and no event dispatched from then on.
//!
//! An observed session ([`Session::observe`]) also queues [`Effect::Record`]s for the host's tracing: each `open`,
//! each drop that is retried, each `pause()` and `resume()`, and the close with the audio sent. Unlike events,
//! records are queued after `dispose` too (the host's span still ends); an unobserved session queues none.

use std::collections::VecDeque;

use super::backoff::ReconnectPolicy;
use super::error::RealtimeError;
use super::level::Level;
use super::options::{
    is_ws_url, DeviceLostPolicy, MicrophoneConstraints, SessionConfig, TicketUrl,
};
use super::pipeline::Pipeline;
use super::protocol::{
    self, close_error, ClientMessage, ErrorMessage, OpenMessage, ServerMessage, TranscriptMessage,
    CLOSE_ABNORMAL, CLOSE_NORMAL,
};
use super::usage::Usage;

/// Where the connection stands (`state` in JS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing connected yet.
    Idle,
    /// A socket is opening, or open without the service's `open` yet.
    Connecting,
    /// The service sent `open`: frames flow.
    Open,
    /// Waiting out a backoff delay or `getUrl` before the next socket.
    Reconnecting,
    /// Closed for good.
    Closed,
}

impl Phase {
    /// The name JS sees.
    pub fn name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Connecting => "connecting",
            Self::Open => "open",
            Self::Reconnecting => "reconnecting",
            Self::Closed => "closed",
        }
    }
}

/// The timers a session uses; setting one replaces the pending one of the same kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// The service's `open` is due.
    Open,
    /// The next keep-alive.
    Keepalive,
    /// The service's silence limit.
    Silence,
    /// The next reconnect attempt.
    Reconnect,
    /// The end of the wait after `stop()`.
    Stop,
}

/// Every timer kind (a host that clears all of them iterates this).
pub const TIMER_KINDS: [TimerKind; 5] = [
    TimerKind::Open,
    TimerKind::Keepalive,
    TimerKind::Silence,
    TimerKind::Reconnect,
    TimerKind::Stop,
];

/// What `start()` captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureSource {
    /// The microphone, opened (and released) by the transcriber.
    Microphone,
    /// A stream the caller gave (its tracks stay the caller's).
    Stream,
    /// Nothing: audio comes through `sendAudio`.
    None,
}

/// Where a block of audio comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioOrigin {
    /// The capture (worklet); accepted while the capture is being flushed by `stop()`.
    Capture,
    /// `sendAudio`: connects when idle; refused after `stop()`.
    Caller,
}

/// A transcript with its times counted from the session's first audio, in seconds. In JS the `detail` of `partial`
/// and `final`: text and its place in the session's audio, in seconds counted from the first audio sent and
/// continuous across reconnects (paused audio is not sent, so it is not counted).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "RealtimeTranscript"))]
pub struct Transcript {
    /// The text.
    pub text: String,
    /// Start, in seconds of session audio.
    pub start: f64,
    /// End, in seconds of session audio.
    pub end: f64,
}

/// An event for the transcriber's listeners.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The service sent `open`.
    Open {
        /// The service's session id.
        session_id: String,
        /// The session rate.
        sample_rate: u32,
        /// Whether this is a reconnect.
        reconnected: bool,
        /// Audio the outage dropped from the buffer, ms.
        dropped_ms: u64,
    },
    /// Provisional text.
    Partial(Transcript),
    /// Settled text.
    Final(Transcript),
    /// The service's usage.
    Usage(Usage),
    /// An error (the session may go on, see `close`).
    Error(RealtimeError),
    /// A drop; the next attempt comes after `delay_ms`.
    Reconnecting {
        /// The attempt number in this outage, from 1.
        attempt: u32,
        /// The backoff delay, ms.
        delay_ms: u64,
        /// Why the connection dropped.
        error: RealtimeError,
    },
    /// The level of a block of audio.
    Level(Level),
    /// The lost microphone was replaced by the default one.
    DeviceChange,
    /// The session ended.
    Close {
        /// The close code.
        code: u16,
        /// The close reason.
        reason: String,
        /// Why, when it did not end normally.
        error: Option<RealtimeError>,
    },
}

/// What the host must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Open the microphone with these constraints, then report `capture_started` or `capture_failed`.
    OpenMicrophone(MicrophoneConstraints),
    /// Capture the stream given to `start()`, then report `capture_started` or `capture_failed`.
    OpenStream,
    /// Release the current capture, then open the microphone with these constraints (a lost device).
    SwitchMicrophone(MicrophoneConstraints),
    /// Ask the capture for its last partial block, then report `capture_flushed` (soon, even if it never comes).
    FlushCapture,
    /// Release the capture (tracks it owns, audio context, worklet).
    CloseCapture,
    /// Call `getUrl` and report `url_fetched`.
    FetchUrl,
    /// Open socket `socket` to `url` (replacing any previous one, whose events are ignored from now on).
    Connect {
        /// The id the host reports this socket's events with.
        socket: u32,
        /// The ticket URL (secret).
        url: TicketUrl,
    },
    /// Send a binary frame on the current socket.
    SendBinary(Vec<u8>),
    /// Send a text message on the current socket.
    SendText(&'static str),
    /// Close the current socket and drop its handlers.
    CloseSocket {
        /// Close code.
        code: u16,
        /// Close reason.
        reason: &'static str,
    },
    /// Arm (or re-arm) a timer; report `timer_fired` when it fires.
    SetTimer {
        /// Which.
        timer: TimerKind,
        /// After how long, ms.
        ms: u32,
    },
    /// Disarm a timer.
    ClearTimer(TimerKind),
    /// Dispatch an event.
    Emit(Event),
    /// Settle every pending `start()` promise.
    SettleStart(Result<(), RealtimeError>),
    /// Resolve every pending `stop()` promise (after any capture release in flight completed).
    SettleStop,
    /// The session became live: keep the transcriber reachable (never garbage-collected) until `Release`, whatever
    /// references the page keeps.
    Retain,
    /// The session is over: let the transcriber go (nothing the session still runs needs it).
    Release,
    /// What an observed session did, for the host's tracing ([`Session::observe`]).
    Record(Record),
}

/// What an observed session did (see [`Effect::Record`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// The service's `open`: the session's first, or one after a drop (`reconnected`).
    Opened {
        /// Whether a connection was open before.
        reconnected: bool,
    },
    /// A drop that is retried: the attempt number in this outage, the pause before it, and why it dropped.
    Reconnecting {
        /// The attempt number in this outage, from 1.
        attempt: u32,
        /// The pause before the attempt, ms.
        delay_ms: u64,
        /// The drop's error.
        error: RealtimeError,
    },
    /// `pause()` took effect: no audio is sent.
    Paused,
    /// `resume()` took effect.
    Resumed,
    /// Closed for good.
    Closed {
        /// The close code.
        code: u16,
        /// The close reason.
        reason: String,
        /// Why, when it did not end normally.
        error: Option<RealtimeError>,
        /// Audio sent to the service over the session, in milliseconds of session audio.
        sent_ms: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaptureState {
    None,
    Opening,
    Switching,
    Running,
    Flushing,
}

/// Reconnect jitter: SplitMix64 seeded by the host.
#[derive(Debug, Clone)]
struct Jitter(u64);

impl Jitter {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One live transcription session; see the module documentation.
#[derive(Debug)]
pub struct Session {
    pipeline: Pipeline,
    policy: ReconnectPolicy,
    first_url: Option<TicketUrl>,
    has_get_url: bool,
    keepalive_ms: u32,
    stop_timeout_ms: u32,
    open_timeout_ms: u32,
    silence_timeout_ms: u32,
    microphone: MicrophoneConstraints,
    on_device_lost: DeviceLostPolicy,
    phase: Phase,
    socket: Option<u32>,
    sockets_made: u32,
    fetching_url: bool,
    start_called: bool,
    start_pending: bool,
    capture: CaptureState,
    capture_source: CaptureSource,
    stopping: bool,
    audio_done: bool,
    paused: bool,
    levels: bool,
    ever_opened: bool,
    server_error: Option<ErrorMessage>,
    server_usage: Option<Usage>,
    offset_s: f64,
    audio_since_message: bool,
    live: bool,
    disposed: bool,
    observe: bool,
    jitter: Jitter,
    effects: VecDeque<Effect>,
}

fn invalid_state(detail: &'static str) -> RealtimeError {
    RealtimeError::InvalidState { detail }
}

/// The error of a service `error` message: the known codes map to the core's errors, others keep their code.
pub fn service_error(e: &ErrorMessage) -> RealtimeError {
    match e.code.as_str() {
        "ticket_used" => RealtimeError::TicketUsed,
        "ticket_invalid" => RealtimeError::TicketInvalid,
        "ticket_expired" => RealtimeError::TicketExpired,
        "idle_timeout" => RealtimeError::IdleTimeout,
        _ => RealtimeError::Service {
            code: e.code.clone(),
            message: e.message.clone(),
        },
    }
}

impl Session {
    /// A session that has not started; `seed` seeds the reconnect jitter (e.g. from `Math.random()`).
    ///
    /// # Errors
    /// `unsupported_audio_format` when the pipeline refuses the rate or frame length.
    pub fn new(config: SessionConfig, seed: u64) -> Result<Self, RealtimeError> {
        Ok(Self {
            pipeline: Pipeline::new(config.pipeline)?,
            policy: config.reconnect,
            first_url: config.url,
            has_get_url: config.has_get_url,
            keepalive_ms: config.keepalive_ms.max(1),
            stop_timeout_ms: config.stop_timeout_ms,
            open_timeout_ms: config.open_timeout_ms,
            silence_timeout_ms: config.silence_timeout_ms,
            microphone: config.microphone,
            on_device_lost: config.on_device_lost,
            phase: Phase::Idle,
            socket: None,
            sockets_made: 0,
            fetching_url: false,
            start_called: false,
            start_pending: false,
            capture: CaptureState::None,
            capture_source: CaptureSource::None,
            stopping: false,
            audio_done: false,
            paused: false,
            levels: false,
            ever_opened: false,
            server_error: None,
            server_usage: None,
            offset_s: 0.0,
            audio_since_message: false,
            live: false,
            disposed: false,
            observe: false,
            jitter: Jitter(seed),
            effects: VecDeque::new(),
        })
    }

    /// The next effect to apply, oldest first.
    pub fn next_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// Where the connection stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether `pause()` is in effect.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// The service's last `usage`, else the client's estimate from the audio sent.
    pub fn usage(&self) -> Usage {
        self.server_usage.unwrap_or_else(|| self.pipeline.usage())
    }

    /// Audio waiting in the reconnect buffer, ms.
    pub fn buffered_ms(&self) -> u64 {
        self.pipeline.buffered_ms()
    }

    // Called from 18 places: inlined, it was 18 copies (measured in the full wasm module).
    #[inline(never)]
    fn push(&mut self, effect: Effect) {
        self.effects.push_back(effect);
    }

    /// From now on, queues an [`Effect::Record`] of each open, retried drop, pause, resume and the close.
    pub fn observe(&mut self) {
        self.observe = true;
    }

    fn record(&mut self, record: Record) {
        if self.observe {
            self.push(Effect::Record(record));
        }
    }

    /// Queues an event, unless the transcriber was disposed (its listeners are not called any more).
    fn emit(&mut self, event: Event) {
        if !self.disposed {
            self.push(Effect::Emit(event));
        }
    }

    /// The session begins (`start()`, or audio from the caller connecting): the host keeps the transcriber alive.
    fn go_live(&mut self) {
        if !self.live && self.phase != Phase::Closed {
            self.live = true;
            self.push(Effect::Retain);
        }
    }

    // ---- inputs from the caller ----

    /// `start()`: capture first (when asked), then connect; `SettleStart` follows.
    ///
    /// # Errors
    /// `invalid_state` when `start()` was already called or the session is stopped.
    pub fn start(&mut self, source: CaptureSource) -> Result<(), RealtimeError> {
        if self.start_called || self.stopping || self.phase == Phase::Closed {
            return Err(invalid_state(
                "start() was already called on this transcriber, or it is stopped",
            ));
        }
        self.start_called = true;
        self.start_pending = true;
        self.capture_source = source;
        self.go_live();
        match source {
            CaptureSource::Microphone => {
                self.capture = CaptureState::Opening;
                let constraints = self.microphone.clone();
                self.push(Effect::OpenMicrophone(constraints));
            }
            CaptureSource::Stream => {
                self.capture = CaptureState::Opening;
                self.push(Effect::OpenStream);
            }
            CaptureSource::None => self.after_capture(),
        }
        Ok(())
    }

    /// Mono `f32` samples at `rate` Hz.
    ///
    /// # Errors
    /// `invalid_state` after `stop()` (audio from the caller); `unsupported_audio_format` for a rate out of range.
    pub fn push_f32(
        &mut self,
        samples: &[f32],
        rate: u32,
        origin: AudioOrigin,
    ) -> Result<(), RealtimeError> {
        self.accept_audio(origin)?;
        if self.levels {
            self.emit(Event::Level(Level::of_f32(samples)));
        }
        if self.paused {
            return Ok(());
        }
        let frames = self.pipeline.push_f32(samples, rate)?;
        self.after_audio(frames, origin);
        Ok(())
    }

    /// Mono PCM16 samples at `rate` Hz.
    ///
    /// # Errors
    /// As [`push_f32`](Self::push_f32).
    pub fn push_i16(
        &mut self,
        samples: &[i16],
        rate: u32,
        origin: AudioOrigin,
    ) -> Result<(), RealtimeError> {
        self.accept_audio(origin)?;
        if self.levels {
            self.emit(Event::Level(Level::of_i16(samples)));
        }
        if self.paused {
            return Ok(());
        }
        let frames = self.pipeline.push_i16(samples, rate)?;
        self.after_audio(frames, origin);
        Ok(())
    }

    /// A block of the capture (the worklet's mono `f32` samples at the context's `rate`): an error it causes is an
    /// `error` event, since no caller waits on it (none once disposed).
    pub fn capture_block(&mut self, samples: &[f32], rate: u32) {
        if let Err(e) = self.push_f32(samples, rate, AudioOrigin::Capture) {
            self.emit(Event::Error(e));
        }
    }

    fn accept_audio(&self, origin: AudioOrigin) -> Result<(), RealtimeError> {
        if self.disposed {
            return Err(RealtimeError::Disposed);
        }
        let flushing = origin == AudioOrigin::Capture && self.capture == CaptureState::Flushing;
        if self.phase == Phase::Closed || (self.stopping && !flushing) {
            return Err(invalid_state(
                "the transcriber is stopped: create a new one for a new session",
            ));
        }
        Ok(())
    }

    fn after_audio(&mut self, frames: Vec<Vec<u8>>, origin: AudioOrigin) {
        if origin == AudioOrigin::Caller && self.phase == Phase::Idle {
            self.begin_connect();
        }
        self.send_frames(frames);
    }

    fn send_frames(&mut self, frames: Vec<Vec<u8>>) {
        if frames.is_empty() || self.phase != Phase::Open {
            return;
        }
        self.audio_since_message = true;
        for frame in frames {
            self.push(Effect::SendBinary(frame));
        }
    }

    /// A `level` listener was added: from now on every block's level is computed and emitted (nobody pays for a
    /// meter nobody draws).
    pub fn want_levels(&mut self) {
        self.levels = true;
    }

    /// `pause()`: capture and keep-alive go on, no audio is sent (nor buffered) until `resume()`.
    ///
    /// # Errors
    /// `invalid_state` after `stop()`.
    pub fn pause(&mut self) -> Result<(), RealtimeError> {
        if self.stopping || self.phase == Phase::Closed {
            return Err(invalid_state("pause() after stop()"));
        }
        if !self.paused {
            self.record(Record::Paused);
        }
        self.paused = true;
        Ok(())
    }

    /// `resume()`: audio is sent again from now on.
    ///
    /// # Errors
    /// `invalid_state` after `stop()`.
    pub fn resume(&mut self) -> Result<(), RealtimeError> {
        if self.stopping || self.phase == Phase::Closed {
            return Err(invalid_state("resume() after stop()"));
        }
        if self.paused {
            self.record(Record::Resumed);
        }
        self.paused = false;
        Ok(())
    }

    /// `stop()`: flush, `stop`, wait for the close (bounded); `SettleStop` follows.
    #[inline(never)]
    pub fn stop(&mut self) {
        if self.phase == Phase::Closed {
            self.push(Effect::SettleStop);
            return;
        }
        if self.stopping {
            return;
        }
        self.stopping = true;
        self.paused = false;
        if self.phase == Phase::Idle {
            return self.finish(CLOSE_NORMAL, "", None);
        }
        if self.capture == CaptureState::Running {
            self.capture = CaptureState::Flushing;
            self.push(Effect::FlushCapture);
        } else {
            self.end_audio();
        }
    }

    // ---- inputs from the capture ----

    /// The capture asked for by `OpenMicrophone`, `OpenStream` or `SwitchMicrophone` runs.
    pub fn capture_started(&mut self) {
        let switching = self.capture == CaptureState::Switching;
        if !matches!(
            self.capture,
            CaptureState::Opening | CaptureState::Switching
        ) {
            return;
        }
        if self.phase == Phase::Closed || self.stopping {
            self.capture = CaptureState::None;
            self.push(Effect::CloseCapture);
            return;
        }
        self.capture = CaptureState::Running;
        if switching {
            self.emit(Event::DeviceChange);
        } else {
            self.after_capture();
        }
    }

    /// How long the host waits for the browser to let a capture's audio run (its `AudioContext` started) before it
    /// reports `capture_failed(AudioNotAllowed)`: `openTimeoutMs`, the limit the caller set on waiting for the
    /// session to open (0 waits forever). The wait for the user to answer a permission prompt is not bounded.
    pub fn audio_start_limit_ms(&self) -> u32 {
        self.open_timeout_ms
    }

    /// The capture could not start (`microphone_denied`, `no_audio_device`, `unsupported_audio_format`,
    /// `audio_not_allowed`).
    pub fn capture_failed(&mut self, error: RealtimeError) {
        let switching = self.capture == CaptureState::Switching;
        if !matches!(
            self.capture,
            CaptureState::Opening | CaptureState::Switching
        ) {
            return;
        }
        self.capture = CaptureState::None;
        if switching {
            self.emit(Event::Error(RealtimeError::DeviceLost));
            self.stop();
        } else {
            self.finish(CLOSE_NORMAL, "", Some(error));
        }
    }

    /// The capture delivered its last block (or gave up waiting for it).
    pub fn capture_flushed(&mut self) {
        if self.capture == CaptureState::Flushing {
            self.end_audio();
        }
    }

    /// The microphone (or the given stream's track) ended: unplugged, disabled, revoked.
    pub fn device_lost(&mut self) {
        if self.capture != CaptureState::Running || self.stopping {
            return;
        }
        if self.on_device_lost == DeviceLostPolicy::Switch
            && self.capture_source == CaptureSource::Microphone
        {
            self.capture = CaptureState::Switching;
            let constraints = MicrophoneConstraints {
                device_id: None,
                ..self.microphone.clone()
            };
            self.push(Effect::SwitchMicrophone(constraints));
        } else {
            self.emit(Event::Error(RealtimeError::DeviceLost));
            self.stop();
        }
    }

    fn after_capture(&mut self) {
        match self.phase {
            Phase::Open => self.settle_start_ok(),
            Phase::Idle => self.begin_connect(),
            _ => {}
        }
    }

    fn settle_start_ok(&mut self) {
        if self.start_pending {
            self.start_pending = false;
            self.push(Effect::SettleStart(Ok(())));
        }
    }

    // ---- connection ----

    fn begin_connect(&mut self) {
        self.go_live();
        self.phase = Phase::Connecting;
        match self.first_url.take() {
            Some(url) => self.connect(url),
            None => self.fetch_url(),
        }
    }

    fn fetch_url(&mut self) {
        self.fetching_url = true;
        self.push(Effect::FetchUrl);
    }

    fn connect(&mut self, url: TicketUrl) {
        self.sockets_made = self.sockets_made.wrapping_add(1);
        self.socket = Some(self.sockets_made);
        self.phase = Phase::Connecting;
        self.server_error = None;
        self.push(Effect::Connect {
            socket: self.sockets_made,
            url,
        });
        if self.open_timeout_ms > 0 {
            self.push(Effect::SetTimer {
                timer: TimerKind::Open,
                ms: self.open_timeout_ms,
            });
        }
    }

    /// `getUrl` gave `url` (`None`: it threw, rejected or gave no string).
    pub fn url_fetched(&mut self, url: Option<String>) {
        if !self.fetching_url || self.phase == Phase::Closed {
            return;
        }
        self.fetching_url = false;
        match url.filter(|u| is_ws_url(u)) {
            Some(url) => self.connect(TicketUrl(url)),
            None => self.dropped(
                RealtimeError::SocketClosed {
                    code: CLOSE_ABNORMAL,
                    reason: "getUrl did not give a ws:// or wss:// URL".into(),
                },
                CLOSE_ABNORMAL,
                "",
            ),
        }
    }

    fn current(&self, socket: u32) -> bool {
        self.socket == Some(socket)
    }

    /// A text message arrived on `socket`.
    pub fn text_received(&mut self, socket: u32, text: &str) {
        self.message_received(socket, || ServerMessage::from_json(text));
    }

    /// A text message longer than [`protocol::MAX_MESSAGE_BYTES`] arrived on `socket`, and the host did not read
    /// it (a JS string of more UTF-16 units than that is at least as many bytes): reported as for
    /// [`Session::text_received`].
    pub fn oversized_text_received(&mut self, socket: u32) {
        self.message_received(socket, || Err(protocol::message_too_large()));
    }

    fn message_received(
        &mut self,
        socket: u32,
        decode: impl FnOnce() -> Result<ServerMessage, RealtimeError>,
    ) {
        if !self.current(socket) {
            return;
        }
        if self.phase == Phase::Open {
            self.audio_since_message = false;
            self.arm_silence();
        }
        match decode() {
            Ok(ServerMessage::Open(m)) => self.on_open(&m),
            Ok(ServerMessage::Partial(m)) => {
                let t = self.transcript(m);
                self.emit(Event::Partial(t));
            }
            Ok(ServerMessage::Final(m)) => {
                let t = self.transcript(m);
                self.emit(Event::Final(t));
            }
            Ok(ServerMessage::Usage(m)) => {
                let usage = Usage {
                    started_minutes: m.started_minutes,
                    credits: m.credits,
                };
                self.server_usage = Some(usage);
                self.emit(Event::Usage(usage));
            }
            Ok(ServerMessage::Error(e)) => self.server_error = Some(e),
            Ok(ServerMessage::Unknown { .. }) => {}
            Err(e) => self.emit(Event::Error(e)),
        }
    }

    fn transcript(&self, m: TranscriptMessage) -> Transcript {
        Transcript {
            text: m.text,
            start: m.start + self.offset_s,
            end: m.end + self.offset_s,
        }
    }

    fn arm_silence(&mut self) {
        if self.silence_timeout_ms > 0 {
            self.push(Effect::SetTimer {
                timer: TimerKind::Silence,
                ms: self.silence_timeout_ms,
            });
        }
    }

    fn on_open(&mut self, m: &OpenMessage) {
        if self.phase != Phase::Connecting {
            return;
        }
        self.push(Effect::ClearTimer(TimerKind::Open));
        let sent_before = self.pipeline.sent_samples();
        let drained = match self.pipeline.on_connected(m.sample_rate) {
            Ok(d) => d,
            Err(e) => return self.finish(CLOSE_NORMAL, "", Some(e)),
        };
        let rate = f64::from(self.pipeline.config().session_rate);
        self.offset_s = (sent_before + self.pipeline.dropped_samples_total()) as f64 / rate;
        self.policy.on_connected();
        self.phase = Phase::Open;
        let reconnected = self.ever_opened;
        self.ever_opened = true;
        self.push(Effect::SetTimer {
            timer: TimerKind::Keepalive,
            ms: self.keepalive_ms,
        });
        self.audio_since_message = false;
        self.arm_silence();
        self.send_frames(drained.frames);
        if self.stopping && self.audio_done {
            self.push(Effect::SendText(ClientMessage::Stop.to_json()));
        }
        self.record(Record::Opened { reconnected });
        self.emit(Event::Open {
            session_id: m.session_id.clone(),
            sample_rate: m.sample_rate,
            reconnected,
            dropped_ms: drained.dropped_ms,
        });
        self.settle_start_ok();
    }

    /// `socket` closed with `code` and `reason` (a host without a code reports [`CLOSE_ABNORMAL`]).
    pub fn socket_closed(&mut self, socket: u32, code: u16, reason: &str) {
        if !self.current(socket) {
            return;
        }
        self.socket = None;
        self.disconnected();
        let server = self.server_error.take();
        if code == CLOSE_NORMAL && server.is_none() {
            // After our stop, or the service ended the session: either way it is over.
            return self.finish(code, reason, None);
        }
        let error = server.as_ref().map(service_error).unwrap_or_else(|| {
            close_error(code, reason).unwrap_or(RealtimeError::SocketClosed {
                code,
                reason: reason.to_owned(),
            })
        });
        self.dropped(error, code, reason);
    }

    /// Socket gone: its timers cleared, audio buffered from now on.
    fn disconnected(&mut self) {
        for timer in [TimerKind::Open, TimerKind::Keepalive, TimerKind::Silence] {
            self.push(Effect::ClearTimer(timer));
        }
        self.pipeline.on_disconnected();
    }

    /// The client gives up on the current socket (timeouts): closed, its later events ignored.
    fn abandon_socket(&mut self, reason: &'static str) {
        if self.socket.take().is_some() {
            self.push(Effect::CloseSocket {
                code: CLOSE_NORMAL,
                reason,
            });
        }
        self.disconnected();
    }

    /// A drop: reconnect through `getUrl` with backoff when the error allows it, else the end.
    fn dropped(&mut self, error: RealtimeError, code: u16, reason: &str) {
        if self.phase == Phase::Closed {
            return;
        }
        self.phase = Phase::Reconnecting;
        if !error.is_retryable() || !self.has_get_url {
            return self.finish(code, reason, Some(error));
        }
        match self.policy.next_delay_ms(self.jitter.next()) {
            Ok(delay) => {
                self.push(Effect::SetTimer {
                    timer: TimerKind::Reconnect,
                    ms: u32::try_from(delay).unwrap_or(u32::MAX),
                });
                if self.observe {
                    self.record(Record::Reconnecting {
                        attempt: self.policy.attempts(),
                        delay_ms: delay,
                        error: error.clone(),
                    });
                }
                self.emit(Event::Reconnecting {
                    attempt: self.policy.attempts(),
                    delay_ms: delay,
                    error,
                });
            }
            Err(gave_up) => self.finish(code, reason, Some(gave_up)),
        }
    }

    /// A timer armed by `SetTimer` fired.
    pub fn timer_fired(&mut self, timer: TimerKind) {
        match timer {
            TimerKind::Keepalive if self.phase == Phase::Open => {
                self.push(Effect::SendText(ClientMessage::Keepalive.to_json()));
                self.push(Effect::SetTimer {
                    timer: TimerKind::Keepalive,
                    ms: self.keepalive_ms,
                });
            }
            TimerKind::Reconnect if self.phase == Phase::Reconnecting => self.fetch_url(),
            TimerKind::Stop if self.phase != Phase::Closed => {
                self.finish(CLOSE_NORMAL, "stop_timeout", None)
            }
            TimerKind::Open if self.phase == Phase::Connecting && self.socket.is_some() => {
                self.abandon_socket("open_timeout");
                if self.ever_opened {
                    self.dropped(RealtimeError::OpenTimeout, CLOSE_ABNORMAL, "open_timeout");
                } else {
                    self.finish(
                        CLOSE_ABNORMAL,
                        "open_timeout",
                        Some(RealtimeError::OpenTimeout),
                    );
                }
            }
            TimerKind::Silence if self.phase == Phase::Open => {
                if self.audio_since_message {
                    self.abandon_socket("connection_silent");
                    self.dropped(
                        RealtimeError::ConnectionSilent,
                        CLOSE_ABNORMAL,
                        "connection_silent",
                    );
                } else {
                    self.arm_silence();
                }
            }
            _ => {}
        }
    }

    // ---- the end ----

    /// No more audio: the capture is released, the pipeline's tail framed, `stop` sent when open (else after the
    /// next `open`), and the wait for the service's close bounded.
    fn end_audio(&mut self) {
        self.audio_done = true;
        if self.capture != CaptureState::None {
            self.capture = CaptureState::None;
            self.push(Effect::CloseCapture);
        }
        let frames = self.pipeline.stop();
        self.push(Effect::SetTimer {
            timer: TimerKind::Stop,
            ms: self.stop_timeout_ms,
        });
        if self.phase == Phase::Open {
            self.send_frames(frames);
            self.push(Effect::SendText(ClientMessage::Stop.to_json()));
        }
    }

    /// Closed for good: timers cleared, socket and capture released, `error` (if any) and `close` emitted,
    /// `start()` and `stop()` settled.
    fn finish(&mut self, code: u16, reason: &str, error: Option<RealtimeError>) {
        if self.phase == Phase::Closed {
            return;
        }
        let stopped_early = self.stopping && error.is_none() && self.start_pending;
        self.phase = Phase::Closed;
        self.stopping = true;
        self.fetching_url = false;
        for timer in TIMER_KINDS {
            self.push(Effect::ClearTimer(timer));
        }
        if self.socket.take().is_some() {
            self.push(Effect::CloseSocket {
                code: CLOSE_NORMAL,
                reason: "",
            });
        }
        if matches!(self.capture, CaptureState::Running | CaptureState::Flushing) {
            self.push(Effect::CloseCapture);
        }
        if self.capture != CaptureState::Opening && self.capture != CaptureState::Switching {
            self.capture = CaptureState::None;
        }
        self.pipeline.on_disconnected();
        if let Some(e) = &error {
            self.emit(Event::Error(e.clone()));
        }
        if self.start_pending {
            self.start_pending = false;
            let rejection = match &error {
                Some(e) => e.clone(),
                None if self.disposed => RealtimeError::Disposed,
                None if stopped_early => {
                    invalid_state("stop() was called before the session opened")
                }
                None => RealtimeError::SocketClosed {
                    code,
                    reason: reason.to_owned(),
                },
            };
            self.push(Effect::SettleStart(Err(rejection)));
        }
        if self.observe {
            let rate = u64::from(self.pipeline.config().session_rate).max(1);
            self.record(Record::Closed {
                code,
                reason: reason.to_owned(),
                error: error.clone(),
                sent_ms: self.pipeline.sent_samples().saturating_mul(1000) / rate,
            });
        }
        self.emit(Event::Close {
            code,
            reason: reason.to_owned(),
            error,
        });
        if self.live {
            self.live = false;
            self.push(Effect::Release);
        }
        self.push(Effect::SettleStop);
    }

    /// The transcriber is going away (`free()`, `[Symbol.dispose]()`, the end of a `using` block, or the collector
    /// freeing one that is not live): a live session ends now, as [`stop`](Self::stop) would but without waiting on
    /// the service (no flush, no `stop` message): timers cleared, the socket closed with 1000, the capture released
    /// (a capture still opening is released when it opens), a pending `start()` rejected with `disposed`, pending
    /// `stop()`s resolved. No event is dispatched from now on, not even those already queued: the listeners belong
    /// to an object that is gone. Later inputs find a closed session; a late capture block is dropped unreported.
    pub fn dispose(&mut self) {
        self.disposed = true;
        self.effects.retain(|e| !matches!(e, Effect::Emit(_)));
        self.finish(CLOSE_NORMAL, "", None);
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
