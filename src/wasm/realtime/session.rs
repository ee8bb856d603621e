//! The session state machine behind `RealtimeTranscriber`: socket lifecycle, server messages, reconnects with
//! backoff through `getUrl`, keep-alive, stop and cleanup. Decisions come from the core (`crate::realtime`); this
//! file routes them to the host.
//!
//! Reentrancy: user listeners run while events are dispatched and may call back into the transcriber (`stop()`
//! from a `final` listener), so the state is never borrowed while an event is dispatched, a promise settles or a
//! socket is called; a borrow that still fails is skipped instead of panicking.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::capture::{self, Capture};
use super::host::{self, EventTargetLike, SocketLike, Timer};
use crate::realtime::protocol::{ErrorMessage, OpenMessage, TranscriptMessage};
use crate::realtime::{
    close_error, ClientMessage, Keepalive, Pipeline, RealtimeError, ReconnectPolicy, ServerMessage,
    Usage,
};
use crate::wasm::interop;

/// Whether `url` is a WebSocket URL.
pub(super) fn ws_url(url: &str) -> bool {
    url.starts_with("ws://") || url.starts_with("wss://")
}

/// Where the connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Nothing started yet.
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
    /// The name `state` reports.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Connecting => "connecting",
            Self::Open => "open",
            Self::Reconnecting => "reconnecting",
            Self::Closed => "closed",
        }
    }
}

/// One socket with its handlers; detaching and closing on drop.
struct Connection {
    socket: SocketLike,
    _handlers: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl Connection {
    fn handle(&self) -> SocketLike {
        JsValue::clone(&self.socket).unchecked_into()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let _ = self.socket.set_onopen(&JsValue::NULL);
        let _ = self.socket.set_onmessage(&JsValue::NULL);
        let _ = self.socket.set_onclose(&JsValue::NULL);
        let _ = self.socket.set_onerror(&JsValue::NULL);
        let _ = self.socket.close_with(1000, "");
    }
}

/// What the constructor decided from the options.
pub(super) struct Settings {
    pub(super) pipeline: Pipeline,
    pub(super) policy: ReconnectPolicy,
    pub(super) keepalive_ms: u32,
    pub(super) stop_timeout_ms: f64,
    /// The first ticket URL (secret: never printed).
    pub(super) first_url: Option<String>,
    pub(super) get_url: Option<Function>,
    pub(super) socket_ctor: JsValue,
}

/// Everything mutable of one transcriber.
pub(super) struct State {
    pub(super) pipeline: Pipeline,
    policy: ReconnectPolicy,
    keepalive: Keepalive,
    keepalive_ms: u32,
    stop_timeout_ms: f64,
    /// The first ticket URL (secret: never printed); taken by the first connect.
    first_url: Option<String>,
    get_url: Option<Function>,
    socket_ctor: JsValue,
    pub(super) phase: Phase,
    generation: u32,
    stopping: bool,
    /// `start()` was called (once only).
    start_called: bool,
    ever_opened: bool,
    conn: Option<Connection>,
    server_error: Option<ErrorMessage>,
    pub(super) server_usage: Option<Usage>,
    keepalive_timer: Option<Timer>,
    reconnect_timer: Option<Timer>,
    stop_timer: Option<Timer>,
    capture: Option<Capture>,
    start_waiters: Vec<(Function, Function)>,
    stop_waiters: Vec<Function>,
}

impl State {
    /// The state of a transcriber that has not started.
    pub(super) fn new(settings: Settings) -> Self {
        Self {
            pipeline: settings.pipeline,
            policy: settings.policy,
            keepalive: Keepalive::new(u64::from(settings.keepalive_ms)),
            keepalive_ms: settings.keepalive_ms,
            stop_timeout_ms: settings.stop_timeout_ms,
            first_url: settings.first_url,
            get_url: settings.get_url,
            socket_ctor: settings.socket_ctor,
            phase: Phase::Idle,
            generation: 0,
            stopping: false,
            start_called: false,
            ever_opened: false,
            conn: None,
            server_error: None,
            server_usage: None,
            keepalive_timer: None,
            reconnect_timer: None,
            stop_timer: None,
            capture: None,
            start_waiters: Vec::new(),
            stop_waiters: Vec::new(),
        }
    }
}

/// The shared core of a transcriber: its event target and state (socket handlers and timers hold it weakly).
pub(super) struct Inner {
    pub(super) events: EventTargetLike,
    pub(super) state: RefCell<State>,
}

/// Samples given to `sendAudio` or posted by the worklet.
pub(super) enum Audio {
    /// Float samples, nominally in [-1, 1].
    F32(Vec<f32>),
    /// PCM16 samples.
    I16(Vec<i16>),
}

/// `{ startedMinutes, credits }`.
pub(super) fn usage_detail(usage: Usage) -> JsValue {
    host::object(&[
        ("startedMinutes", (usage.started_minutes as f64).into()),
        ("credits", (usage.credits as f64).into()),
    ])
}

fn transcript_detail(m: &TranscriptMessage) -> JsValue {
    host::object(&[
        ("text", m.text.as_str().into()),
        ("start", m.start.into()),
        ("end", m.end.into()),
    ])
}

/// The error of a service `error` message: the known codes map to the core's errors, others keep their code.
fn server_error(e: &ErrorMessage) -> (JsValue, bool) {
    let known = match e.code.as_str() {
        "ticket_used" => Some(RealtimeError::TicketUsed),
        "ticket_invalid" => Some(RealtimeError::TicketInvalid),
        "ticket_expired" => Some(RealtimeError::TicketExpired),
        "idle_timeout" => Some(RealtimeError::IdleTimeout),
        _ => None,
    };
    match known {
        Some(k) => (host::realtime_error(&k), k.is_retryable()),
        None => (host::coded(&e.code, &e.message), false),
    }
}

fn send_frames(socket: &SocketLike, frames: &[Vec<u8>]) {
    for frame in frames {
        // A copy, never a view of wasm memory: the `ws` package may queue the buffer.
        let _ = socket.send_bytes(&Uint8Array::from(frame.as_slice()));
    }
}

fn event_field(event: &JsValue, name: &str) -> JsValue {
    Reflect::get(event, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

impl Inner {
    /// Runs `f` on the state unless it is already borrowed (a reentrant call), then `None`.
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> Option<R> {
        self.state.try_borrow_mut().ok().map(|mut s| f(&mut s))
    }

    fn emit(&self, kind: &str, detail: JsValue) {
        if let Ok(event) = host::custom_event(kind, &detail) {
            let _ = self.events.dispatch_event(&event);
        }
    }

    fn socket(&self) -> Option<SocketLike> {
        self.with(|s| {
            s.conn
                .as_ref()
                .filter(|_| s.phase == Phase::Open)
                .map(|c| c.handle())
        })
        .flatten()
    }

    /// Samples into the pipeline; frames out to the socket when open. `connect`: start connecting when idle.
    pub(super) fn push(
        self: &Rc<Self>,
        audio: &Audio,
        rate: u32,
        connect: bool,
    ) -> Result<(), JsValue> {
        let pushed = self.with(|s| {
            if s.stopping || s.phase == Phase::Closed {
                return Err(host::coded(
                    "invalid_state",
                    "the transcriber is stopped: create a new one for a new session",
                ));
            }
            let frames = match audio {
                Audio::F32(v) => s.pipeline.push_f32(v, rate),
                Audio::I16(v) => s.pipeline.push_i16(v, rate),
            }
            .map_err(|e| host::realtime_error(&e))?;
            Ok((frames, connect && s.phase == Phase::Idle))
        });
        let (frames, begin) = pushed.unwrap_or_else(|| Ok((Vec::new(), false)))?;
        if begin {
            self.begin_connect();
        }
        if !frames.is_empty() {
            if let Some(socket) = self.socket() {
                send_frames(&socket, &frames);
            }
        }
        Ok(())
    }

    /// `start()`: capture (microphone, a given stream, or none), then connect; resolves on `open`.
    pub(super) async fn start(self: &Rc<Self>, options: JsValue) -> Result<(), JsValue> {
        let ok = self
            .with(|s| {
                let fresh = !s.start_called && !s.stopping && s.phase != Phase::Closed;
                s.start_called = true;
                fresh
            })
            .unwrap_or(false);
        if !ok {
            return Err(host::coded(
                "invalid_state",
                "start() was already called on this transcriber, or it is stopped",
            ));
        }
        let stream = interop::option(&options, "stream");
        let microphone = interop::option(&options, "microphone");
        let wanted = if stream.is_object() {
            Some((stream, false))
        } else if microphone.as_bool() == Some(false) {
            None
        } else {
            match capture::microphone().await {
                Ok(s) => Some((s, true)),
                Err(e) => {
                    self.finish(1000, "", Some(e.clone()));
                    return Err(e);
                }
            }
        };
        if let Some((stream, owned)) = wanted {
            let weak = Rc::downgrade(self);
            let on_block = move |samples: &[f32], rate: u32| {
                if let Some(inner) = weak.upgrade() {
                    if let Err(e) = inner.push(&Audio::F32(samples.to_vec()), rate, false) {
                        inner.emit("error", e);
                    }
                }
            };
            match Capture::start(stream.clone(), owned, on_block).await {
                Ok(c) => {
                    let late = self
                        .with(|s| {
                            if s.stopping || s.phase == Phase::Closed {
                                Some(c)
                            } else {
                                s.capture = Some(c);
                                None
                            }
                        })
                        .flatten();
                    if let Some(c) = late {
                        c.close().await;
                        return Err(host::coded(
                            "invalid_state",
                            "stop() was called during start()",
                        ));
                    }
                }
                Err(e) => {
                    if owned {
                        capture::stop_tracks(&stream);
                    }
                    self.finish(1000, "", Some(e.clone()));
                    return Err(e);
                }
            }
        }
        let mut resolver = None;
        let opened = Promise::new(&mut |resolve, reject| resolver = Some((resolve, reject)));
        let phase = self.with(|s| {
            // Already open (sendAudio connected first): nothing to wait for.
            if s.phase != Phase::Open {
                if let Some(r) = resolver.take() {
                    s.start_waiters.push(r);
                }
            }
            s.phase
        });
        match phase {
            Some(Phase::Open) => return Ok(()),
            Some(Phase::Idle) => self.begin_connect(),
            _ => {}
        }
        JsFuture::from(opened).await.map(|_| ())
    }

    /// Opens the first socket: the `url` option, else a URL from `getUrl`.
    fn begin_connect(self: &Rc<Self>) {
        let url = self
            .with(|s| {
                s.phase = Phase::Connecting;
                s.first_url.take()
            })
            .flatten();
        match url {
            Some(url) => self.connect(&url),
            None => self.fetch_url_then_connect(),
        }
    }

    fn fetch_url_then_connect(self: &Rc<Self>) {
        let get_url = self.with(|s| s.get_url.clone()).flatten();
        let Some(get_url) = get_url else {
            return self.on_dropped(None, 1006, "");
        };
        let inner = self.clone();
        spawn_local(async move {
            let fetched = match get_url.call0(&JsValue::UNDEFINED) {
                Ok(value) => interop::settle(value).await,
                Err(e) => Err(e),
            };
            let still_wanted = inner
                .with(|s| s.phase == Phase::Connecting || s.phase == Phase::Reconnecting)
                .unwrap_or(false);
            if !still_wanted {
                return;
            }
            match fetched
                .ok()
                .and_then(|v| v.as_string())
                .filter(|u| ws_url(u))
            {
                Some(url) => inner.connect(&url),
                None => inner.on_dropped(
                    Some((
                        host::realtime_error(&RealtimeError::SocketClosed {
                            code: 1006,
                            reason: "getUrl did not give a ws:// or wss:// URL".into(),
                        }),
                        true,
                    )),
                    1006,
                    "",
                ),
            }
        });
    }

    fn connect(self: &Rc<Self>, url: &str) {
        let setup = self.with(|s| {
            s.generation = s.generation.wrapping_add(1);
            s.phase = Phase::Connecting;
            s.server_error = None;
            (s.generation, s.socket_ctor.clone())
        });
        let Some((generation, ctor)) = setup else {
            return;
        };
        // The constructor's own exception could quote the URL (the ticket): it is not passed on.
        let Ok(socket) = host::construct(&ctor, &Array::of1(&url.into())) else {
            return self.on_dropped(None, 1006, "the WebSocket could not be created");
        };
        let socket: SocketLike = socket.unchecked_into();
        let _ = socket.set_binary_type("arraybuffer");
        let weak = Rc::downgrade(self);
        let on_message = handler(&weak, generation, |inner, event| {
            if let Some(text) = event_field(&event, "data").as_string() {
                inner.on_text(&text);
            }
        });
        let on_close = handler(&weak, generation, |inner, event| {
            let code = event_field(&event, "code").as_f64().unwrap_or(1006.0);
            let reason = event_field(&event, "reason")
                .as_string()
                .unwrap_or_default();
            let code = if (0.0..=65535.0).contains(&code) {
                code as u16
            } else {
                1006
            };
            inner.on_close(code, &reason);
        });
        let on_other = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
        let _ = socket.set_onmessage(on_message.as_ref());
        let _ = socket.set_onclose(on_close.as_ref());
        let _ = socket.set_onerror(on_other.as_ref());
        let _ = socket.set_onopen(on_other.as_ref());
        let stale = self.with(|s| {
            s.conn.replace(Connection {
                socket,
                _handlers: vec![on_message, on_close, on_other],
            })
        });
        drop(stale);
    }

    fn on_text(self: &Rc<Self>, text: &str) {
        match ServerMessage::from_json(text) {
            Ok(ServerMessage::Open(m)) => self.on_open(&m),
            Ok(ServerMessage::Partial(m)) => self.emit("partial", transcript_detail(&m)),
            Ok(ServerMessage::Final(m)) => self.emit("final", transcript_detail(&m)),
            Ok(ServerMessage::Usage(m)) => {
                let usage = Usage {
                    started_minutes: m.started_minutes,
                    credits: m.credits,
                };
                self.with(|s| s.server_usage = Some(usage));
                self.emit("usage", usage_detail(usage));
            }
            Ok(ServerMessage::Error(e)) => {
                self.with(|s| s.server_error = Some(e));
            }
            Ok(ServerMessage::Unknown { .. }) => {}
            Err(e) => self.emit("error", host::realtime_error(&e)),
        }
    }

    fn on_open(self: &Rc<Self>, m: &OpenMessage) {
        let weak = Rc::downgrade(self);
        let opened = self.with(|s| {
            let drained = s.pipeline.on_connected(m.sample_rate)?;
            s.policy.on_connected();
            s.phase = Phase::Open;
            let reconnected = s.ever_opened;
            s.ever_opened = true;
            s.keepalive.on_open(host::now_ms());
            let tick = weak.clone();
            s.keepalive_timer = Some(Timer::every(f64::from(s.keepalive_ms), move || {
                if let Some(inner) = tick.upgrade() {
                    inner.keepalive_tick();
                }
            }));
            let socket = s.conn.as_ref().map(|c| c.handle());
            Ok((
                drained,
                reconnected,
                s.stopping,
                std::mem::take(&mut s.start_waiters),
                socket,
            ))
        });
        match opened {
            Some(Ok((drained, reconnected, stopping, waiters, socket))) => {
                if let Some(socket) = &socket {
                    send_frames(socket, &drained.frames);
                    if stopping {
                        let _ = socket.send_text(ClientMessage::Stop.to_json());
                    }
                }
                self.emit(
                    "open",
                    host::object(&[
                        ("sessionId", m.session_id.as_str().into()),
                        ("sampleRate", m.sample_rate.into()),
                        ("reconnected", reconnected.into()),
                        ("droppedMs", (drained.dropped_ms as f64).into()),
                    ]),
                );
                for (resolve, _) in waiters {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
            Some(Err(e)) => self.finish(1000, "", Some(host::realtime_error(&e))),
            None => {}
        }
    }

    fn keepalive_tick(&self) {
        let due = self
            .with(|s| {
                if s.phase != Phase::Open {
                    return None;
                }
                let message = s.keepalive.poll(host::now_ms())?;
                s.conn.as_ref().map(|c| (c.handle(), message))
            })
            .flatten();
        if let Some((socket, message)) = due {
            let _ = socket.send_text(message.to_json());
        }
    }

    fn on_close(self: &Rc<Self>, code: u16, reason: &str) {
        let closed = self.with(|s| {
            let conn = s.conn.take();
            s.keepalive_timer = None;
            s.keepalive.on_close();
            s.pipeline.on_disconnected();
            (conn, s.server_error.take())
        });
        let Some((conn, server)) = closed else {
            return;
        };
        drop(conn);
        if code == 1000 && server.is_none() {
            // After our stop, or the service ended the session: either way it is over.
            return self.finish(code, reason, None);
        }
        let error = server.as_ref().map(server_error);
        self.on_dropped(error, code, reason);
    }

    /// A socket closed or could not open: reconnect through `getUrl` with backoff when the error allows it.
    fn on_dropped(self: &Rc<Self>, error: Option<(JsValue, bool)>, code: u16, reason: &str) {
        let (error, retryable) = error.unwrap_or_else(|| {
            let e = close_error(code, reason).unwrap_or(RealtimeError::SocketClosed {
                code,
                reason: reason.to_owned(),
            });
            (host::realtime_error(&e), e.is_retryable())
        });
        let weak = Rc::downgrade(self);
        let plan = self.with(|s| {
            if s.phase == Phase::Closed {
                return None;
            }
            s.phase = Phase::Reconnecting;
            if !retryable || s.get_url.is_none() {
                return Some(Err(None));
            }
            match s.policy.next_delay_ms(js_sys::Math::random()) {
                Ok(delay) => {
                    let fire = weak.clone();
                    s.reconnect_timer = Some(Timer::once(delay as f64, move || {
                        if let Some(inner) = fire.upgrade() {
                            inner.with(|s| s.reconnect_timer = None);
                            inner.fetch_url_then_connect();
                        }
                    }));
                    Some(Ok((s.policy.attempts(), delay)))
                }
                Err(e) => Some(Err(Some(e))),
            }
        });
        match plan.flatten() {
            Some(Ok((attempt, delay))) => self.emit(
                "reconnecting",
                host::object(&[
                    ("attempt", attempt.into()),
                    ("delayMs", (delay as f64).into()),
                    ("error", error),
                ]),
            ),
            Some(Err(gave_up)) => {
                let error = gave_up.map_or(error, |e| host::realtime_error(&e));
                self.finish(code, reason, Some(error));
            }
            None => {}
        }
    }

    /// `stop()`: flush, `stop` message, wait for the close (bounded), release everything.
    pub(super) async fn stop(self: &Rc<Self>) {
        let mut resolver = None;
        let stopped = Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
        let begun = self.with(|s| {
            if s.phase == Phase::Closed {
                return None;
            }
            if let Some(r) = resolver.take() {
                s.stop_waiters.push(r);
            }
            let first = !s.stopping;
            s.stopping = true;
            Some((first, s.capture.take()))
        });
        let Some((first, capture)) = begun.flatten() else {
            return;
        };
        if first {
            if let Some(c) = capture {
                c.flush().await;
                c.close().await;
            }
            let weak = Rc::downgrade(self);
            let plan = self.with(|s| {
                let frames = s.pipeline.stop();
                s.stop_timer = Some(Timer::once(s.stop_timeout_ms, move || {
                    if let Some(inner) = weak.upgrade() {
                        inner.finish(1000, "stop_timeout", None);
                    }
                }));
                let socket = s
                    .conn
                    .as_ref()
                    .filter(|_| s.phase == Phase::Open)
                    .map(|c| c.handle());
                (frames, socket, s.phase)
            });
            match plan {
                Some((frames, Some(socket), _)) => {
                    send_frames(&socket, &frames);
                    let _ = socket.send_text(ClientMessage::Stop.to_json());
                }
                Some((_, None, Phase::Idle)) => self.finish(1000, "", None),
                // Connecting or reconnecting: the frames wait in the buffer; `on_open` sends them and `stop`.
                _ => {}
            }
        }
        let _ = JsFuture::from(stopped).await;
    }

    /// Closed for good: timers cleared, socket and capture released, `error` (if any) and `close` emitted,
    /// waiters settled.
    fn finish(self: &Rc<Self>, code: u16, reason: &str, error: Option<JsValue>) {
        let taken = self
            .with(|s| {
                if s.phase == Phase::Closed {
                    return None;
                }
                s.phase = Phase::Closed;
                s.stopping = true;
                s.keepalive_timer = None;
                s.reconnect_timer = None;
                s.stop_timer = None;
                s.keepalive.on_close();
                s.pipeline.on_disconnected();
                Some((
                    s.conn.take(),
                    s.capture.take(),
                    std::mem::take(&mut s.start_waiters),
                    std::mem::take(&mut s.stop_waiters),
                ))
            })
            .flatten();
        let Some((conn, capture, start_waiters, stop_waiters)) = taken else {
            return;
        };
        drop(conn);
        let inner = self.clone();
        let reason = reason.to_owned();
        spawn_local(async move {
            if let Some(c) = capture {
                c.close().await;
            }
            if let Some(e) = &error {
                inner.emit("error", e.clone());
            }
            let rejection = error.clone().unwrap_or_else(|| {
                host::realtime_error(&RealtimeError::SocketClosed {
                    code,
                    reason: reason.clone(),
                })
            });
            for (_, reject) in start_waiters {
                let _ = reject.call1(&JsValue::UNDEFINED, &rejection);
            }
            let mut detail = vec![("code", code.into()), ("reason", reason.as_str().into())];
            if let Some(e) = error {
                detail.push(("error", e));
            }
            inner.emit("close", host::object(&detail));
            for resolve in stop_waiters {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
    }
}

/// A socket event handler that ignores events of an older socket (`generation`) or a dropped transcriber.
fn handler(
    weak: &Weak<Inner>,
    generation: u32,
    f: impl Fn(&Rc<Inner>, JsValue) + 'static,
) -> Closure<dyn FnMut(JsValue)> {
    let weak = weak.clone();
    Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let Some(inner) = weak.upgrade() else { return };
        if inner.with(|s| s.generation) == Some(generation) {
            f(&inner, event);
        }
    })
}
