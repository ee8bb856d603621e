//! The host pump of a transcriber: it owns the JS handles (socket, timers, capture, promise resolvers) and applies
//! the effects of the core's [`Session`] in one loop, in the style of gloo-net's websocket: socket, timer and
//! capture callbacks only feed an input to the session; whoever is pumping applies what it queued.
//!
//! No re-entrancy: the session is borrowed only for the duration of one core call (which never calls out), and
//! the handles only while no JS runs. A listener that calls `stop()` or `sendAudio()` while its event is being
//! dispatched feeds its input at once (the borrow is free) and the loop already running applies the effects
//! next, in order; nothing is ever skipped.
//!
//! Lifetime: JS callbacks hold the host weakly (socket handlers, timers, the worklet's blocks) or own what they need
//! (a pending `getUrl`, a capture opening); the transcriber's JS object is held only while the session is live
//! (`Effect::Retain` to `Effect::Release`), and the caller's values ([`Kept`]) hang on that object. Freed
//! (`free()`, `[Symbol.dispose]()`), the transcriber feeds the core's `dispose` and this loop applies it before
//! anything is dropped; then a [`Connection`] or a [`Capture`] still here detaches its JS side before its closures
//! are freed, so a late event finds nothing to call.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::capture::{self, Capture};
use super::host::{self, EventTargetLike, SocketLike, Timer};
use crate::realtime::options::{MicrophoneConstraints, TicketUrl};
use crate::realtime::protocol::{CLOSE_ABNORMAL, CLOSE_NORMAL, MAX_MESSAGE_BYTES};
use crate::realtime::session::{CaptureSource, Effect, Event, Record, TimerKind, TIMER_KINDS};
use crate::realtime::{RealtimeError, Session, Usage};
use crate::wasm::telemetry;

/// The JS handles given to the constructor.
pub(super) struct HostHandles {
    /// The event target the transcriber forwards to (its listeners are the caller's).
    pub(super) events: EventTargetLike,
    /// `getUrl`, when given.
    pub(super) get_url: Option<Function>,
    /// The WebSocket constructor.
    pub(super) socket_ctor: JsValue,
    /// The `tracerProvider` and `meterProvider` options (`undefined`: the registered ones).
    pub(super) telemetry: JsValue,
}

/// Where the caller's JS values live (the event target with its listeners, `getUrl`, the WebSocket constructor): one
/// object, `{ events, getUrl, WebSocket }`. Held from wasm, it would be a root of the collector, and a listener that
/// refers to the transcriber (`t.addEventListener("final", () => t.stop())`) would then keep the transcriber from
/// ever being collected; so once the transcriber has its JS object, that object holds them and the host only a weak
/// reference: a cycle through the listeners is one the collector takes. While a session is live, the JS object is
/// retained (`Effect::Retain`), and these with it.
enum Kept {
    /// Not bound to a JS object (made from Rust): held here.
    Here(js_sys::Object),
    /// Held by the transcriber's JS object.
    OnObject(js_sys::WeakRef),
}

/// One socket with its handlers. Dropped, it detaches its handlers (before they are freed, so a late event of the
/// socket finds nothing to call) and closes the socket with 1000 unless [`Connection::close`] closed it already.
struct Connection {
    socket: SocketLike,
    closed: bool,
    _handlers: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl Connection {
    fn detach(&self) {
        let _ = self.socket.set_onopen(&JsValue::NULL);
        let _ = self.socket.set_onmessage(&JsValue::NULL);
        let _ = self.socket.set_onclose(&JsValue::NULL);
        let _ = self.socket.set_onerror(&JsValue::NULL);
    }

    /// Detaches the handlers and closes the socket with `code` and `reason`.
    fn close(mut self, code: u16, reason: &str) {
        self.detach();
        let _ = self.socket.close_with(code, reason);
        self.closed = true;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.detach();
        if !self.closed {
            let _ = self.socket.close_with(CLOSE_NORMAL, "");
        }
    }
}

/// The JS side of a transcriber: what the effects act on.
#[derive(Default)]
struct Handles {
    socket: Option<Connection>,
    timers: [Option<Timer>; TIMER_KINDS.len()],
    capture: Option<Capture>,
    /// The stream given to `start({ stream })`, until the capture takes it.
    stream: Option<JsValue>,
    /// Capture releases in flight; `stop()` resolves after them.
    releasing: Vec<Promise>,
    start_waiters: Vec<(Function, Function)>,
    stop_waiters: Vec<Function>,
    /// The transcriber's JS object while its session is live (`Effect::Retain` to `Effect::Release`): held here, it
    /// cannot be garbage-collected, so wasm-bindgen's finalizer never frees a live session.
    retained: Option<JsValue>,
    /// The live session's observation (`telemetry.js`), when a tracer or meter provider listens.
    observation: Option<JsValue>,
}

/// A transcriber's session, its JS handles and its event target (callbacks hold it weakly).
pub(super) struct Host {
    kept: RefCell<Kept>,
    /// A `WeakRef` to the transcriber's JS object, handed over by the class's constructor (none when the transcriber
    /// was made from Rust, or the runtime has no `WeakRef`, and then no finalizer either).
    owner: RefCell<Option<js_sys::WeakRef>>,
    session: RefCell<Session>,
    handles: RefCell<Handles>,
    pumping: Cell<bool>,
    /// The `tracerProvider` and `meterProvider` options (providers, not the caller's callbacks: held here).
    telemetry: JsValue,
}

/// The names of the caller's values in [`Kept`].
const KEPT_EVENTS: &str = "events";
const KEPT_GET_URL: &str = "getUrl";
const KEPT_SOCKET: &str = "WebSocket";

fn timer_slot(kind: TimerKind) -> usize {
    TIMER_KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// `{ startedMinutes, credits }`.
pub(super) fn usage_detail(usage: Usage) -> JsValue {
    host::object(&[
        ("startedMinutes", (usage.started_minutes as f64).into()),
        ("credits", (usage.credits as f64).into()),
    ])
}

/// The name and `detail` of the JS event for a core event.
fn event_js(event: &Event) -> (&'static str, JsValue) {
    let transcript = |t: &crate::realtime::session::Transcript| {
        host::object(&[
            ("text", t.text.as_str().into()),
            ("start", t.start.into()),
            ("end", t.end.into()),
        ])
    };
    match event {
        Event::Open {
            session_id,
            sample_rate,
            reconnected,
            dropped_ms,
        } => (
            "open",
            host::object(&[
                ("sessionId", session_id.as_str().into()),
                ("sampleRate", (*sample_rate).into()),
                ("reconnected", (*reconnected).into()),
                ("droppedMs", (*dropped_ms as f64).into()),
            ]),
        ),
        Event::Partial(t) => ("partial", transcript(t)),
        Event::Final(t) => ("final", transcript(t)),
        Event::Usage(u) => ("usage", usage_detail(*u)),
        Event::Error(e) => ("error", host::realtime_error(e)),
        Event::Reconnecting {
            attempt,
            delay_ms,
            error,
        } => (
            "reconnecting",
            host::object(&[
                ("attempt", (*attempt).into()),
                ("delayMs", (*delay_ms as f64).into()),
                ("error", host::realtime_error(error)),
            ]),
        ),
        Event::Level(l) => (
            "level",
            host::object(&[
                ("rmsDbfs", l.rms_dbfs.into()),
                ("peakDbfs", l.peak_dbfs.into()),
            ]),
        ),
        Event::DeviceChange => (
            "devicechange",
            host::object(&[("reason", "device_lost".into())]),
        ),
        Event::Close {
            code,
            reason,
            error,
        } => {
            let mut detail = vec![("code", (*code).into()), ("reason", reason.as_str().into())];
            if let Some(e) = error {
                detail.push(("error", host::realtime_error(e)));
            }
            ("close", host::object(&detail))
        }
    }
}

fn event_field(event: &JsValue, name: &str) -> JsValue {
    Reflect::get(event, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

impl Host {
    pub(super) fn new(session: Session, handles: HostHandles) -> Rc<Self> {
        let get_url = handles.get_url.map_or(JsValue::UNDEFINED, JsValue::from);
        let kept = host::object(&[
            (KEPT_EVENTS, handles.events.into()),
            (KEPT_GET_URL, get_url),
            (KEPT_SOCKET, handles.socket_ctor),
        ]);
        Rc::new(Self {
            kept: RefCell::new(Kept::Here(kept.unchecked_into())),
            owner: RefCell::new(None),
            session: RefCell::new(session),
            handles: RefCell::new(Handles::default()),
            pumping: Cell::new(false),
            telemetry: handles.telemetry,
        })
    }

    /// One of the caller's values ([`Kept`]); `undefined` once the transcriber's JS object was collected.
    fn kept(&self, name: &str) -> JsValue {
        let kept = match self.kept.try_borrow().as_deref() {
            Ok(Kept::Here(object)) => Some(object.clone()),
            Ok(Kept::OnObject(weak)) => weak.deref(),
            Err(_) => None,
        };
        kept.and_then(|k| Reflect::get(&k, &name.into()).ok())
            .unwrap_or(JsValue::UNDEFINED)
    }

    /// The event target the transcriber forwards to (`None` once its JS object was collected).
    pub(super) fn events(&self) -> Option<EventTargetLike> {
        let events = self.kept(KEPT_EVENTS);
        (!events.is_undefined()).then(|| events.unchecked_into())
    }

    /// Binds the transcriber to its JS object: a weak reference to it, which `Effect::Retain` holds strongly while
    /// the session is live, and the caller's values ([`Kept`]) handed over to it. Without `WeakRef` (and then without
    /// a finalizer either) everything stays held here.
    pub(super) fn set_owner(&self, object: &JsValue) {
        let weak_ref = host::global("WeakRef");
        let Ok(weak) = host::construct(&weak_ref, &Array::of1(object)) else {
            return;
        };
        if let Ok(mut owner) = self.owner.try_borrow_mut() {
            *owner = Some(weak.unchecked_into());
        }
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            return;
        };
        if let Kept::Here(values) = &*kept {
            if let Ok(weak) = host::construct(&weak_ref, &Array::of1(values)) {
                if capture::hold(object, values) {
                    *kept = Kept::OnObject(weak.unchecked_into());
                }
            }
        }
    }

    /// Reads the session (getters). `None` only if a core call is running, which cannot call out.
    pub(super) fn read<R>(&self, f: impl FnOnce(&Session) -> R) -> Option<R> {
        self.session.try_borrow().ok().map(|s| f(&s))
    }

    /// Feeds one input to the session, then applies the effects (unless a loop up the stack already does).
    /// `None` only if a core call were running, which cannot happen: core calls never call out.
    pub(super) fn input<R>(self: &Rc<Self>, f: impl FnOnce(&mut Session) -> R) -> Option<R> {
        let result = self.session.try_borrow_mut().ok().map(|mut s| f(&mut s));
        self.pump();
        result
    }

    fn handles<R>(&self, f: impl FnOnce(&mut Handles) -> R) -> Option<R> {
        self.handles.try_borrow_mut().ok().map(|mut h| f(&mut h))
    }

    /// The one loop that applies effects.
    fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        loop {
            let next = self
                .session
                .try_borrow_mut()
                .ok()
                .and_then(|mut s| s.next_effect());
            let Some(effect) = next else { break };
            self.apply(effect);
        }
        self.pumping.set(false);
    }

    /// `start()`: registers the promise, then the input.
    pub(super) fn start(self: &Rc<Self>, source: CaptureSource, stream: JsValue) -> Promise {
        let mut resolver = None;
        let promise = Promise::new(&mut |resolve, reject| resolver = Some((resolve, reject)));
        let started = match self.session.try_borrow_mut() {
            Ok(mut s) => s.start(source),
            Err(_) => Ok(()),
        };
        if let Err(e) = started {
            return Promise::reject(&host::realtime_error(&e));
        }
        self.handles(|h| {
            if source == CaptureSource::Stream {
                h.stream = Some(stream);
            }
            h.start_waiters.extend(resolver);
        });
        self.pump();
        promise
    }

    /// `stop()`: registers the promise, then the input.
    pub(super) fn stop(self: &Rc<Self>) -> Promise {
        let mut resolver = None;
        let promise = Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
        self.handles(|h| h.stop_waiters.extend(resolver));
        self.input(Session::stop);
        promise
    }

    fn apply(self: &Rc<Self>, effect: Effect) {
        match effect {
            Effect::OpenMicrophone(c) => self.open_capture(None, Some(c)),
            Effect::OpenStream => {
                let stream = self.handles(|h| h.stream.take()).flatten();
                self.open_capture(stream, None);
            }
            Effect::SwitchMicrophone(c) => {
                self.release_capture();
                self.open_capture(None, Some(c));
            }
            Effect::FlushCapture => self.flush_capture(),
            Effect::CloseCapture => self.release_capture(),
            Effect::FetchUrl => self.fetch_url(),
            Effect::Connect { socket, url } => self.connect(socket, &url),
            Effect::SendBinary(frame) => {
                if let Some(s) = self.socket() {
                    // A copy, never a view of wasm memory: the `ws` package may queue the buffer.
                    let _ = s.send_bytes(&Uint8Array::from(frame.as_slice()));
                }
            }
            Effect::SendText(text) => {
                if let Some(s) = self.socket() {
                    let _ = s.send_text(text);
                }
            }
            Effect::CloseSocket { code, reason } => {
                if let Some(conn) = self.handles(|h| h.socket.take()).flatten() {
                    conn.close(code, reason);
                }
            }
            Effect::SetTimer { timer, ms } => {
                let weak = Rc::downgrade(self);
                let t = Timer::once(f64::from(ms), move || {
                    if let Some(host) = weak.upgrade() {
                        host.input(|s| s.timer_fired(timer));
                    }
                });
                let old = self.handles(|h| {
                    h.timers
                        .get_mut(timer_slot(timer))
                        .and_then(|slot| slot.replace(t))
                });
                drop(old);
            }
            Effect::ClearTimer(timer) => {
                let old =
                    self.handles(|h| h.timers.get_mut(timer_slot(timer)).and_then(Option::take));
                drop(old);
            }
            Effect::Emit(event) => {
                let (kind, detail) = event_js(&event);
                if let (Some(events), Ok(e)) = (self.events(), host::custom_event(kind, &detail)) {
                    let _ = events.dispatch_event(&e);
                }
            }
            Effect::SettleStart(result) => {
                let waiters = self
                    .handles(|h| std::mem::take(&mut h.start_waiters))
                    .unwrap_or_default();
                for (resolve, reject) in waiters {
                    let _ = match &result {
                        Ok(()) => resolve.call0(&JsValue::UNDEFINED),
                        Err(e) => reject.call1(&JsValue::UNDEFINED, &host::realtime_error(e)),
                    };
                }
            }
            Effect::SettleStop => {
                let (waiters, releasing) = self
                    .handles(|h| {
                        (
                            std::mem::take(&mut h.stop_waiters),
                            std::mem::take(&mut h.releasing),
                        )
                    })
                    .unwrap_or_default();
                capture::after_all(
                    &releasing.into_iter().collect(),
                    &waiters.into_iter().collect(),
                );
            }
            Effect::Retain => {
                let object = self
                    .owner
                    .try_borrow()
                    .ok()
                    .and_then(|o| o.as_ref().and_then(|w| w.deref()));
                // The session begins: observed from now on where a tracer or meter provider listens.
                let observation = telemetry::observe_session(&self.telemetry);
                if observation.is_some() {
                    if let Ok(mut session) = self.session.try_borrow_mut() {
                        session.observe();
                    }
                }
                self.handles(|h| {
                    h.retained = object.map(JsValue::from);
                    h.observation = observation;
                });
            }
            Effect::Release => {
                let (object, observation) = self
                    .handles(|h| (h.retained.take(), h.observation.take()))
                    .unwrap_or_default();
                drop((object, observation));
            }
            Effect::Record(record) => {
                if let Some(observation) = self.handles(|h| h.observation.clone()).flatten() {
                    observe(&observation, &record);
                }
            }
        }
    }

    fn socket(&self) -> Option<SocketLike> {
        self.handles(|h| {
            h.socket
                .as_ref()
                .map(|c| JsValue::clone(&c.socket).unchecked_into())
        })
        .flatten()
    }

    fn connect(self: &Rc<Self>, id: u32, url: &TicketUrl) {
        let old = self.handles(|h| h.socket.take()).flatten();
        if let Some(old) = old {
            old.close(CLOSE_NORMAL, "");
        }
        // The constructor's own exception could quote the URL (the ticket): it is not passed on.
        let Ok(socket) =
            host::construct(&self.kept(KEPT_SOCKET), &Array::of1(&url.0.as_str().into()))
        else {
            self.input(|s| {
                s.socket_closed(id, CLOSE_ABNORMAL, "the WebSocket could not be created")
            });
            return;
        };
        let socket: SocketLike = socket.unchecked_into();
        let _ = socket.set_binary_type("arraybuffer");
        let weak = Rc::downgrade(self);
        let on_message = handler(&weak, move |host, event| {
            let data = event_field(&event, "data");
            // A string of n UTF-16 units is at least n bytes of UTF-8: one longer than the core's limit is refused
            // without being copied into wasm memory.
            let units = data
                .dyn_ref::<js_sys::JsString>()
                .map(js_sys::JsString::length);
            if units.is_some_and(|n| n as usize > MAX_MESSAGE_BYTES) {
                host.input(|s| s.oversized_text_received(id));
            } else if let Some(text) = data.as_string() {
                host.input(|s| s.text_received(id, &text));
            }
        });
        let on_close = handler(&weak, move |host, event| {
            let code = event_field(&event, "code")
                .as_f64()
                .filter(|c| (0.0..=65_535.0).contains(c))
                .map_or(CLOSE_ABNORMAL, |c| c as u16);
            let reason = event_field(&event, "reason")
                .as_string()
                .unwrap_or_default();
            host.input(|s| s.socket_closed(id, code, &reason));
        });
        let on_other = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
        let _ = socket.set_onmessage(on_message.as_ref());
        let _ = socket.set_onclose(on_close.as_ref());
        let _ = socket.set_onerror(on_other.as_ref());
        let _ = socket.set_onopen(on_other.as_ref());
        self.handles(|h| {
            h.socket = Some(Connection {
                socket,
                closed: false,
                _handlers: vec![on_message, on_close, on_other],
            })
        });
    }

    fn fetch_url(self: &Rc<Self>) {
        let get_url = self.kept(KEPT_GET_URL);
        let host = self.clone();
        capture::fetch_url(
            &get_url,
            Closure::once_into_js(move |url: JsValue| {
                host.input(|s| s.url_fetched(url.as_string()));
            }),
        );
    }

    /// Opens the microphone (`constraints`) or captures `stream`, then reports to the session.
    fn open_capture(
        self: &Rc<Self>,
        stream: Option<JsValue>,
        constraints: Option<MicrophoneConstraints>,
    ) {
        let source = match (stream, &constraints) {
            (Some(s), _) => Ok(s),
            (None, Some(c)) => Err(c),
            (None, None) => {
                let host = self.clone();
                capture::later(Closure::once_into_js(move || {
                    host.input(|s| s.capture_failed(crate::realtime::RealtimeError::NoAudioDevice));
                }));
                return;
            }
        };
        let weak = Rc::downgrade(self);
        let on_block = move |samples: &[f32], rate: u32| {
            if let Some(host) = weak.upgrade() {
                host.input(|s| s.capture_block(samples, rate));
            }
        };
        let weak = Rc::downgrade(self);
        let on_ended = move || {
            if let Some(host) = weak.upgrade() {
                host.input(Session::device_lost);
            }
        };
        let limit = self.read(Session::audio_start_limit_ms).unwrap_or(0);
        let host = self.clone();
        Capture::open(
            source,
            limit,
            on_block,
            on_ended,
            move |opened| match opened {
                Ok(c) => {
                    host.handles(|h| h.capture = Some(c));
                    host.input(Session::capture_started);
                }
                Err(e) => {
                    host.input(|s| s.capture_failed(e));
                }
            },
        );
    }

    fn flush_capture(self: &Rc<Self>) {
        let host = self.clone();
        let done = move || {
            host.input(Session::capture_flushed);
        };
        let handles = self.handles.try_borrow();
        let capture = handles.as_ref().ok().and_then(|h| h.capture.as_ref());
        Capture::flush(capture, done);
    }

    fn release_capture(&self) {
        if let Some(c) = self.handles(|h| h.capture.take()).flatten() {
            let released = c.close();
            self.handles(|h| h.releasing.push(released));
        }
    }
}

/// Hands a session's record to its observation: its kind (`telemetry.js` reads the same numbers), two numbers, the
/// error's code and the close reason.
fn observe(observation: &JsValue, record: &Record) {
    let (kind, a, b, error, reason) = match record {
        Record::Opened { reconnected } => (0, f64::from(u8::from(*reconnected)), 0.0, None, ""),
        Record::Reconnecting {
            attempt,
            delay_ms,
            error,
        } => (1, f64::from(*attempt), *delay_ms as f64, Some(error), ""),
        Record::Paused => (2, 0.0, 0.0, None, ""),
        Record::Resumed => (3, 0.0, 0.0, None, ""),
        Record::Closed {
            code,
            reason,
            error,
            sent_ms,
        } => (
            4,
            f64::from(*code),
            *sent_ms as f64,
            error.as_ref(),
            reason.as_str(),
        ),
    };
    let code = error.map_or("", RealtimeError::code);
    telemetry::session_record(observation, kind, a, b, code, reason);
}

/// A socket event handler feeding the host while it lives.
fn handler(
    weak: &Weak<Host>,
    f: impl Fn(&Rc<Host>, JsValue) + 'static,
) -> Closure<dyn FnMut(JsValue)> {
    let weak = weak.clone();
    Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        if let Some(host) = weak.upgrade() {
            f(&host, event);
        }
    })
}
