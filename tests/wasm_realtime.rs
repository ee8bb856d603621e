//! The JS API of `RealtimeTranscriber` against a fake WebSocket made in JS, run as wasm in Node and in headless
//! Chromium (wasm-bindgen-test): events from server messages, usage, error codes, framing, reconnect, stop.
#![cfg(all(target_arch = "wasm32", feature = "realtime"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use docauto::wasm::RealtimeTranscriber;
use js_sys::{Array, Float32Array, Int16Array, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
export class FakeSocket {
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closedWith = null;
    this.binaryType = "blob";
    FakeSocket.all.push(this);
  }
  send(data) {
    if (typeof data === "string") this.sent.push(data);
    else this.sent.push(new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)));
  }
  close(code, reason) {
    if (!this.closedWith) this.closedWith = { code, reason };
  }
  serverSend(value) {
    if (this.onmessage) this.onmessage({ data: typeof value === "string" ? value : JSON.stringify(value) });
  }
  serverClose(code, reason) {
    if (this.onclose) this.onclose({ code, reason, wasClean: code !== 1006 });
  }
}
FakeSocket.all = [];
export function fakeClass() { FakeSocket.all = []; return FakeSocket; }
export function sockets() { return FakeSocket.all; }
export function recorder() {
  const log = [];
  return { log, listener: (e) => log.push({ type: e.type, detail: e.detail }) };
}
export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
export function texts(socket) { return socket.sent.filter((m) => typeof m === "string"); }
export function binaries(socket) { return socket.sent.filter((m) => typeof m !== "string"); }
export function reenter(t, log) {
  // A listener that calls back into the transcriber while its event is being dispatched.
  t.addEventListener("final", () => {
    try {
      t.sendAudio(new Int16Array(320), 16000);
      log.push({ type: "reentered", detail: { usage: t.usage, state: t.state } });
      log.push({ type: "stopping", detail: t.stop() });
    } catch (e) {
      log.push({ type: "threw", detail: e });
    }
  });
}
export function settle(p) { return p.then((v) => ({ ok: true, value: v }), (e) => ({ ok: false, error: e })); }
export function within(p, ms) {
  return Promise.race([settle(p), new Promise((r) => setTimeout(() => r({ pending: true }), ms))]);
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = fakeClass)]
    fn fake_class() -> JsValue;
    fn sockets() -> Array;
    fn recorder() -> JsValue;
    fn sleep(ms: f64) -> Promise;
    fn texts(socket: &JsValue) -> Array;
    fn binaries(socket: &JsValue) -> Array;
    fn settle(p: &Promise) -> Promise;
    fn within(p: &Promise, ms: f64) -> Promise;
    fn reenter(t: &JsValue, log: &JsValue);
}

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &k.into()).unwrap()
}

fn call(v: &JsValue, method: &str, args: &[JsValue]) -> JsValue {
    let f: js_sys::Function = get(v, method).into();
    f.apply(v, &args.iter().collect::<Array>()).unwrap()
}

async fn wait(ms: f64) {
    JsFuture::from(sleep(ms)).await.unwrap();
}

/// Options with the fake socket and `extra` (JSON).
fn options(extra: serde_json::Value) -> JsValue {
    let o = js_sys::JSON::parse(&extra.to_string()).unwrap();
    Reflect::set(&o, &"WebSocket".into(), &fake_class()).unwrap();
    o
}

/// A transcriber and its event log (every event kind).
fn transcriber(extra: serde_json::Value) -> (RealtimeTranscriber, JsValue) {
    let t = RealtimeTranscriber::new(options(extra)).unwrap();
    let rec = recorder();
    for kind in [
        "open",
        "partial",
        "final",
        "usage",
        "error",
        "close",
        "reconnecting",
    ] {
        t.add_event_listener(kind.into(), get(&rec, "listener"), None)
            .unwrap();
    }
    (t, get(&rec, "log"))
}

fn events(log: &JsValue, kind: &str) -> Vec<JsValue> {
    Array::from(log)
        .iter()
        .filter(|e| get(e, "type").as_string().as_deref() == Some(kind))
        .map(|e| get(&e, "detail"))
        .collect()
}

fn socket(i: u32) -> JsValue {
    sockets().get(i)
}

fn open_message(rate: u32) -> JsValue {
    JsValue::from_str(&format!(
        r#"{{"type":"open","sessionId":"rts_1","sampleRate":{rate}}}"#
    ))
}

/// `start({ microphone: false })`, after which the socket exists (the start runs in a microtask).
async fn begin(t: &RealtimeTranscriber) -> Promise {
    let p = t.start(Some(
        js_sys::JSON::parse(r#"{"microphone":false}"#).unwrap(),
    ));
    wait(0.0).await;
    p
}

/// Starts without a microphone and lets the fake service answer `open`.
async fn started(t: &RealtimeTranscriber) {
    let p = begin(t).await;
    call(&socket(0), "serverSend", &[open_message(16_000)]);
    JsFuture::from(p).await.unwrap();
}

fn code_of(result: &JsValue) -> String {
    get(&get(result, "error"), "code").as_string().unwrap()
}

#[wasm_bindgen_test]
async fn server_messages_become_events_with_their_detail() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=tkt_1"}));
    started(&t).await;
    assert_eq!(get(&socket(0), "url"), "ws://svc.test/rt?ticket=tkt_1");
    assert_eq!(get(&socket(0), "binaryType"), "arraybuffer");
    assert_eq!(t.state(), "open");
    let open = &events(&log, "open")[0];
    assert_eq!(get(open, "sessionId"), "rts_1");
    assert_eq!(get(open, "sampleRate"), 16_000);
    assert_eq!(get(open, "reconnected"), false);
    let s = socket(0);
    call(
        &s,
        "serverSend",
        &[r#"{"type":"partial","text":"hello wor","start":0,"end":2.04}"#.into()],
    );
    call(
        &s,
        "serverSend",
        &[r#"{"type":"final","text":"hello world.","start":0,"end":3.5}"#.into()],
    );
    call(
        &s,
        "serverSend",
        &[r#"{"type":"speaker_change","speaker":2}"#.into()],
    );
    call(
        &s,
        "serverSend",
        &[r#"{"type":"usage","startedMinutes":1,"credits":7}"#.into()],
    );
    let partial = &events(&log, "partial")[0];
    assert_eq!(get(partial, "text"), "hello wor");
    assert_eq!(get(partial, "end"), 2.04);
    let fin = &events(&log, "final")[0];
    assert_eq!(get(fin, "text"), "hello world.");
    assert_eq!(get(fin, "start"), 0.0);
    assert_eq!(get(&events(&log, "usage")[0], "credits"), 7);
    assert_eq!(get(&t.usage(), "startedMinutes"), 1);
    assert_eq!(get(&t.usage(), "credits"), 7);
    assert!(
        events(&log, "error").is_empty(),
        "an unknown type is not an error"
    );
}

#[wasm_bindgen_test]
async fn a_malformed_server_message_is_an_invalid_message_error_event() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    started(&t).await;
    call(&socket(0), "serverSend", &["not json".into()]);
    let error = &events(&log, "error")[0];
    assert_eq!(get(error, "code"), "invalid_message");
    assert_eq!(get(error, "name"), "RealtimeError");
    assert_eq!(t.state(), "open", "a bad message does not end the session");
}

#[wasm_bindgen_test]
async fn usage_is_estimated_from_sent_audio_until_the_service_reports_it() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    assert_eq!(get(&t.usage(), "credits"), 0, "no join, no charge");
    started(&t).await;
    assert_eq!(get(&t.usage(), "credits"), 5);
    t.send_audio(
        Int16Array::new_with_length(16_000 * 61).into(),
        16_000.0.into(),
    )
    .unwrap();
    assert_eq!(get(&t.usage(), "startedMinutes"), 2);
    assert_eq!(get(&t.usage(), "credits"), 9);
}

#[wasm_bindgen_test]
async fn int16_audio_at_the_session_rate_is_framed_bit_exact() {
    let (t, _log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20}));
    started(&t).await;
    let samples: Vec<i16> = (0..16_000)
        .map(|i| ((i * 37) % 65_536 - 32_768) as i16)
        .collect();
    t.send_audio(Int16Array::from(samples.as_slice()).into(), 16_000.0.into())
        .unwrap();
    let frames = binaries(&socket(0));
    assert_eq!(frames.length(), 50, "1 s in 20 ms frames");
    let mut bytes = Vec::new();
    for f in frames.iter() {
        let f = Uint8Array::from(f).to_vec();
        assert_eq!(f.len(), 640);
        bytes.extend(f);
    }
    let expected: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    assert_eq!(bytes, expected);
}

#[wasm_bindgen_test]
async fn float_audio_at_48k_is_resampled_to_whole_frames_of_the_session_rate() {
    let (t, _log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 40}));
    started(&t).await;
    let tone: Vec<f32> = (0..48_000)
        .map(|i| 0.5 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 48_000.0).sin())
        .collect();
    for chunk in tone.chunks(480) {
        t.send_audio(Float32Array::from(chunk).into(), 48_000.0.into())
            .unwrap();
    }
    let frames = binaries(&socket(0));
    assert!(
        (23..=25).contains(&frames.length()),
        "{} frames",
        frames.length()
    );
    for f in frames.iter() {
        assert_eq!(Uint8Array::from(f).length(), 1280);
    }
}

#[wasm_bindgen_test]
async fn audio_sent_before_open_is_delivered_first_after_open() {
    let (t, _log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20}));
    t.send_audio(Int16Array::from(&[7i16; 640][..]).into(), 16_000.0.into())
        .unwrap();
    assert_eq!(t.state(), "connecting", "sendAudio connects");
    assert_eq!(binaries(&socket(0)).length(), 0);
    call(&socket(0), "serverSend", &[open_message(16_000)]);
    let frames = binaries(&socket(0));
    assert_eq!(frames.length(), 2);
    assert_eq!(Uint8Array::from(frames.get(0)).to_vec()[..2], [7, 0]);
}

#[wasm_bindgen_test]
async fn other_arrays_and_bad_rates_are_unsupported_audio_format() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    for (samples, rate) in [
        (Array::of1(&0.5.into()).into(), 16_000.0),
        (Uint8Array::new_with_length(4).into(), 16_000.0),
        (Float32Array::new_with_length(4).into(), 1_000.0),
        (Float32Array::new_with_length(4).into(), 44_100.5),
    ] {
        let e = t.send_audio(samples, JsValue::from_f64(rate)).unwrap_err();
        assert_eq!(get(&e, "code"), "unsupported_audio_format");
    }
}

#[wasm_bindgen_test]
async fn a_server_rate_other_than_the_session_rate_fails_with_unsupported_audio_format() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    let p = begin(&t).await;
    call(&socket(0), "serverSend", &[open_message(8_000)]);
    let r = JsFuture::from(settle(&p)).await.unwrap();
    assert_eq!(code_of(&r), "unsupported_audio_format");
    assert_eq!(t.state(), "closed");
    assert_eq!(get(&events(&log, "close")[0], "code"), 1000);
}

#[wasm_bindgen_test]
async fn a_used_ticket_rejects_start_with_ticket_used_and_does_not_reconnect() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=used"}));
    let p = begin(&t).await;
    let s = socket(0);
    call(
        &s,
        "serverSend",
        &[
            r#"{"type":"error","code":"ticket_used","message":"the ticket was already used"}"#
                .into(),
        ],
    );
    call(&s, "serverClose", &[4401.into(), "ticket_used".into()]);
    let r = JsFuture::from(settle(&p)).await.unwrap();
    assert_eq!(code_of(&r), "ticket_used");
    assert_eq!(get(&get(&r, "error"), "retryable"), false);
    assert_eq!(sockets().length(), 1);
}

#[wasm_bindgen_test]
async fn close_codes_without_an_error_message_map_to_ticket_codes() {
    for (reason, code) in [
        ("ticket_expired", "ticket_expired"),
        ("ticket_invalid", "ticket_invalid"),
        ("???", "ticket_invalid"),
    ] {
        let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=x"}));
        let p = begin(&t).await;
        call(&socket(0), "serverClose", &[4401.into(), reason.into()]);
        let r = JsFuture::from(settle(&p)).await.unwrap();
        assert_eq!(code_of(&r), code);
        wait(0.0).await;
        assert_eq!(get(&events(&log, "error")[0], "code"), code);
        let close = &events(&log, "close")[0];
        assert_eq!(get(close, "code"), 4401);
        assert_eq!(get(&get(close, "error"), "code"), code);
    }
}

#[wasm_bindgen_test]
async fn a_drop_without_get_url_ends_with_socket_closed() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    started(&t).await;
    call(&socket(0), "serverClose", &[1006.into(), "".into()]);
    wait(0.0).await;
    assert_eq!(t.state(), "closed");
    assert_eq!(get(&events(&log, "error")[0], "code"), "socket_closed");
    assert_eq!(get(&events(&log, "close")[0], "code"), 1006);
}

#[wasm_bindgen_test]
async fn a_drop_reconnects_through_get_url_and_sends_the_buffered_audio_first() {
    let get_url =
        js_sys::Function::new_no_args("return Promise.resolve('ws://svc.test/rt?ticket=fresh')");
    let extra = serde_json::json!({"url": "ws://svc.test/rt?ticket=first", "frameMs": 20,
        "reconnectDelayMs": 5});
    let o = options(extra);
    Reflect::set(&o, &"getUrl".into(), &get_url).unwrap();
    let t = RealtimeTranscriber::new(o).unwrap();
    let rec = recorder();
    for kind in ["open", "reconnecting", "close", "error"] {
        t.add_event_listener(kind.into(), get(&rec, "listener"), None)
            .unwrap();
    }
    let log = get(&rec, "log");
    started(&t).await;
    call(&socket(0), "serverClose", &[1006.into(), "".into()]);
    assert_eq!(t.state(), "reconnecting");
    let r = &events(&log, "reconnecting")[0];
    assert_eq!(get(r, "attempt"), 1);
    assert_eq!(get(&get(r, "error"), "code"), "socket_closed");
    t.send_audio(Int16Array::from(&[3i16; 320][..]).into(), 16_000.0.into())
        .unwrap();
    assert!(t.buffered_ms() >= 20.0);
    wait(60.0).await;
    assert_eq!(sockets().length(), 2);
    let fresh = socket(1);
    assert_eq!(get(&fresh, "url"), "ws://svc.test/rt?ticket=fresh");
    call(&fresh, "serverSend", &[open_message(16_000)]);
    let frames = binaries(&fresh);
    assert_eq!(frames.length(), 1, "the outage's frame, first");
    assert_eq!(Uint8Array::from(frames.get(0)).to_vec()[..2], [3, 0]);
    assert_eq!(get(&events(&log, "open")[1], "reconnected"), true);
    assert!(events(&log, "close").is_empty());
}

#[wasm_bindgen_test]
async fn reconnecting_gives_up_with_reconnect_failed() {
    let get_url = js_sys::Function::new_no_args("return Promise.reject(new Error('backend down'))");
    let o = options(
        serde_json::json!({"url": "ws://svc.test/rt?ticket=first", "reconnectDelayMs": 1,
        "reconnectAttempts": 2}),
    );
    Reflect::set(&o, &"getUrl".into(), &get_url).unwrap();
    let t = RealtimeTranscriber::new(o).unwrap();
    let rec = recorder();
    t.add_event_listener("close".into(), get(&rec, "listener"), None)
        .unwrap();
    started(&t).await;
    call(&socket(0), "serverClose", &[1011.into(), "restart".into()]);
    wait(100.0).await;
    assert_eq!(t.state(), "closed");
    let close = &events(&get(&rec, "log"), "close")[0];
    assert_eq!(get(&get(close, "error"), "code"), "reconnect_failed");
}

#[wasm_bindgen_test]
async fn keepalives_are_sent_while_open_and_stop_after_stop() {
    let (t, _log) = transcriber(
        serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "keepaliveMs": 10,
        "stopTimeoutMs": 50}),
    );
    started(&t).await;
    wait(60.0).await;
    let s = socket(0);
    let keepalives = |s: &JsValue| {
        texts(s)
            .iter()
            .filter(|m| m.as_string().as_deref() == Some(r#"{"type":"keepalive"}"#))
            .count()
    };
    assert!(keepalives(&s) >= 2, "{} keepalives", keepalives(&s));
    let stop = t.stop();
    wait(0.0).await;
    call(&s, "serverClose", &[1000.into(), "stop".into()]);
    JsFuture::from(stop).await.unwrap();
    let after = keepalives(&s);
    wait(50.0).await;
    assert_eq!(keepalives(&s), after, "a timer survived stop()");
}

#[wasm_bindgen_test]
async fn stop_flushes_the_last_partial_frame_then_sends_stop_and_waits_for_the_close() {
    let (t, log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20}));
    started(&t).await;
    t.send_audio(Int16Array::from(&[1i16; 100][..]).into(), 16_000.0.into())
        .unwrap();
    let s = socket(0);
    assert_eq!(binaries(&s).length(), 0, "less than a frame waits");
    let stop = t.stop();
    wait(0.0).await;
    let frames = binaries(&s);
    assert_eq!(frames.length(), 1);
    assert_eq!(
        Uint8Array::from(frames.get(0)).length(),
        200,
        "the short last frame"
    );
    assert_eq!(texts(&s).iter().last().unwrap(), r#"{"type":"stop"}"#);
    call(
        &s,
        "serverSend",
        &[r#"{"type":"final","text":"last words","start":0,"end":0.01}"#.into()],
    );
    call(
        &s,
        "serverSend",
        &[r#"{"type":"usage","startedMinutes":1,"credits":7}"#.into()],
    );
    call(&s, "serverClose", &[1000.into(), "stop".into()]);
    JsFuture::from(stop).await.unwrap();
    assert_eq!(t.state(), "closed");
    assert_eq!(get(&events(&log, "final")[0], "text"), "last words");
    assert_eq!(get(&events(&log, "close")[0], "code"), 1000);
    assert!(events(&log, "error").is_empty());
    let e = t
        .send_audio(Int16Array::new_with_length(10).into(), 16_000.0.into())
        .unwrap_err();
    assert_eq!(get(&e, "code"), "invalid_state");
}

#[wasm_bindgen_test]
async fn stop_gives_up_waiting_after_stop_timeout_and_closes_the_socket() {
    let (t, _log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "stopTimeoutMs": 20}));
    started(&t).await;
    JsFuture::from(t.stop()).await.unwrap();
    assert_eq!(t.state(), "closed");
    assert_eq!(get(&get(&socket(0), "closedWith"), "code"), 1000);
}

#[wasm_bindgen_test]
fn invalid_options_are_rejected_with_invalid_options() {
    for extra in [
        serde_json::json!({}),
        serde_json::json!({"url": "https://svc.test/rt"}),
        serde_json::json!({"url": "ws://x", "getUrl": "not a function"}),
        serde_json::json!({"url": "ws://x", "unknown": 1}),
        serde_json::json!({"url": "ws://x", "keepaliveMs": -1}),
    ] {
        let e = RealtimeTranscriber::new(options(extra.clone()))
            .err()
            .unwrap();
        assert_eq!(get(&e, "code"), "invalid_options", "{extra}");
    }
    let e = RealtimeTranscriber::new(options(serde_json::json!({"url": "ws://x", "frameMs": 5})))
        .err()
        .unwrap();
    assert_eq!(get(&e, "code"), "unsupported_audio_format");
}

#[wasm_bindgen_test]
fn the_ticket_url_never_appears_in_errors() {
    let e = RealtimeTranscriber::new(options(
        serde_json::json!({"url": "http://svc.test/rt?ticket=tkt_secret"}),
    ))
    .err()
    .unwrap();
    let text = format!("{:?} {:?}", get(&e, "message"), get(&e, "code"));
    assert!(!text.contains("tkt_secret"));
}

#[wasm_bindgen_test]
async fn a_second_start_is_invalid_state() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    started(&t).await;
    let r = JsFuture::from(settle(&t.start(None))).await.unwrap();
    assert_eq!(code_of(&r), "invalid_state");
}

#[wasm_bindgen_test]
fn without_the_websocket_option_the_global_one_is_used_or_the_error_says_to_pass_one() {
    let global = Reflect::get(&js_sys::global(), &"WebSocket".into())
        .unwrap()
        .is_function();
    let o = js_sys::JSON::parse(r#"{"url":"ws://svc.test/rt?ticket=a"}"#).unwrap();
    match RealtimeTranscriber::new(o) {
        Ok(t) => {
            assert!(global, "constructed without any WebSocket");
            assert_eq!(t.state(), "idle");
        }
        Err(e) => {
            assert!(!global, "the global WebSocket was not used");
            assert_eq!(get(&e, "code"), "invalid_options");
            assert!(get(&e, "message")
                .as_string()
                .unwrap()
                .contains("WebSocket option"));
        }
    }
}

#[wasm_bindgen_test]
async fn start_after_send_audio_connected_resolves_on_the_same_socket() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    t.send_audio(Int16Array::new_with_length(320).into(), 16_000.0.into())
        .unwrap();
    call(&socket(0), "serverSend", &[open_message(16_000)]);
    let p = t.start(Some(
        js_sys::JSON::parse(r#"{"microphone":false}"#).unwrap(),
    ));
    JsFuture::from(p).await.unwrap();
    assert_eq!(sockets().length(), 1);
    assert_eq!(t.state(), "open");
}

#[wasm_bindgen_test]
async fn a_listener_may_call_send_audio_and_stop_while_its_event_is_dispatched() {
    let (t, log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20}));
    started(&t).await;
    let t: JsValue = t.into();
    reenter(&t, &log);
    let s = socket(0);
    call(
        &s,
        "serverSend",
        &[r#"{"type":"final","text":"x","start":0,"end":1}"#.into()],
    );
    assert!(events(&log, "threw").is_empty(), "a reentrant call threw");
    assert_eq!(get(&events(&log, "reentered")[0], "state"), "open");
    assert_eq!(binaries(&s).length(), 1, "the listener's audio was sent");
    let stopping: Promise = events(&log, "stopping")[0].clone().into();
    wait(0.0).await;
    assert_eq!(texts(&s).iter().last().unwrap(), r#"{"type":"stop"}"#);
    call(&s, "serverClose", &[1000.into(), "stop".into()]);
    JsFuture::from(stopping).await.unwrap();
    assert_eq!(get(&t, "state"), "closed");
}

#[wasm_bindgen_test]
async fn an_idle_timeout_reconnects_with_get_url_and_is_final_without() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    started(&t).await;
    call(
        &socket(0),
        "serverSend",
        &[r#"{"type":"error","code":"idle_timeout","message":"no frame for 30 seconds"}"#.into()],
    );
    call(
        &socket(0),
        "serverClose",
        &[4408.into(), "idle_timeout".into()],
    );
    wait(0.0).await;
    assert_eq!(get(&events(&log, "error")[0], "code"), "idle_timeout");
    assert_eq!(t.state(), "closed");

    let get_url = js_sys::Function::new_no_args("return 'ws://svc.test/rt?ticket=b'");
    let o = options(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "reconnectDelayMs": 1}));
    Reflect::set(&o, &"getUrl".into(), &get_url).unwrap();
    let t = RealtimeTranscriber::new(o).unwrap();
    started(&t).await;
    call(
        &socket(0),
        "serverClose",
        &[4408.into(), "idle_timeout".into()],
    );
    assert_eq!(t.state(), "reconnecting");
    wait(30.0).await;
    assert_eq!(get(&socket(1), "url"), "ws://svc.test/rt?ticket=b");
}

#[wasm_bindgen_test]
async fn pause_sends_no_audio_and_resume_sends_again_while_keepalives_go_on() {
    let (t, _log) = transcriber(
        serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20, "keepaliveMs": 10}),
    );
    started(&t).await;
    let s = socket(0);
    t.pause().unwrap();
    assert!(t.paused());
    t.send_audio(Int16Array::from(&[1i16; 640][..]).into(), 16_000.0.into())
        .unwrap();
    wait(40.0).await;
    assert_eq!(binaries(&s).length(), 0, "audio sent while paused");
    assert!(texts(&s)
        .iter()
        .any(|m| m.as_string().as_deref() == Some(r#"{"type":"keepalive"}"#)));
    t.resume().unwrap();
    t.send_audio(Int16Array::from(&[1i16; 320][..]).into(), 16_000.0.into())
        .unwrap();
    assert_eq!(binaries(&s).length(), 1);
    assert_eq!(sockets().length(), 1, "no reconnect");
}

#[wasm_bindgen_test]
async fn every_block_fires_a_level_event_in_dbfs() {
    let (t, _log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a"}));
    let rec = recorder();
    t.add_event_listener("level".into(), get(&rec, "listener"), None)
        .unwrap();
    started(&t).await;
    t.send_audio(
        Float32Array::from(&[0.5f32; 320][..]).into(),
        16_000.0.into(),
    )
    .unwrap();
    let level = &events(&get(&rec, "log"), "level")[0];
    let rms = get(level, "rmsDbfs").as_f64().unwrap();
    let peak = get(level, "peakDbfs").as_f64().unwrap();
    assert!(
        (rms + 6.0206).abs() < 1e-3 && (peak + 6.0206).abs() < 1e-3,
        "{rms} {peak}"
    );
}

#[wasm_bindgen_test]
async fn start_rejects_with_open_timeout_when_the_service_never_opens() {
    let (t, log) =
        transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "openTimeoutMs": 20}));
    let p = begin(&t).await;
    let r = JsFuture::from(settle(&p)).await.unwrap();
    assert_eq!(code_of(&r), "open_timeout");
    assert_eq!(get(&get(&r, "error"), "name"), "RealtimeError");
    assert_eq!(t.state(), "closed");
    assert_eq!(
        get(&get(&socket(0), "closedWith"), "reason"),
        "open_timeout"
    );
    assert_eq!(events(&log, "close").len(), 1);
}

#[wasm_bindgen_test]
async fn transcript_times_continue_across_a_reconnect() {
    let get_url = js_sys::Function::new_no_args("return 'ws://svc.test/rt?ticket=b'");
    let o = options(
        serde_json::json!({"url": "ws://svc.test/rt?ticket=a", "frameMs": 20, "reconnectDelayMs": 1}),
    );
    Reflect::set(&o, &"getUrl".into(), &get_url).unwrap();
    let t = RealtimeTranscriber::new(o).unwrap();
    let rec = recorder();
    t.add_event_listener("final".into(), get(&rec, "listener"), None)
        .unwrap();
    started(&t).await;
    // 2 s of audio on the first connection.
    t.send_audio(Int16Array::new_with_length(32_000).into(), 16_000.0.into())
        .unwrap();
    call(&socket(0), "serverClose", &[1006.into(), "".into()]);
    wait(30.0).await;
    call(&socket(1), "serverSend", &[open_message(16_000)]);
    call(
        &socket(1),
        "serverSend",
        &[r#"{"type":"final","text":"after","start":0.5,"end":1.25}"#.into()],
    );
    let fin = &events(&get(&rec, "log"), "final")[0];
    assert_eq!(get(fin, "start"), 2.5);
    assert_eq!(get(fin, "end"), 3.25);
}

#[wasm_bindgen_test]
fn an_invalid_option_error_names_the_option() {
    let e = RealtimeTranscriber::new(options(
        serde_json::json!({"url": "ws://x", "keepAliveMs": 5}),
    ))
    .err()
    .unwrap();
    assert_eq!(get(&e, "code"), "invalid_options");
    assert!(get(&e, "message")
        .as_string()
        .unwrap()
        .starts_with("keepAliveMs:"));
    let e = RealtimeTranscriber::new(options(
        serde_json::json!({"url": "ws://x", "openTimeoutMs": -5}),
    ))
    .err()
    .unwrap();
    assert!(get(&e, "message")
        .as_string()
        .unwrap()
        .starts_with("openTimeoutMs:"));
}

#[wasm_bindgen_test]
async fn dropping_a_live_transcriber_detaches_and_closes_its_socket_and_dispatches_nothing() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=tkt_1"}));
    started(&t).await;
    let s = socket(0);
    call(
        &s,
        "serverSend",
        &[r#"{"type":"partial","text":"a","start":0,"end":1}"#.into()],
    );
    let before = Array::from(&log).length();
    drop(t); // what free(), [Symbol.dispose]() and the end of a `using` block do
    let closed = get(&s, "closedWith");
    assert!(!closed.is_null(), "the socket is still open");
    assert_eq!(get(&closed, "code"), 1000);
    for handler in ["onmessage", "onclose", "onerror", "onopen"] {
        assert!(get(&s, handler).is_null(), "{handler} still attached");
    }
    wait(20.0).await;
    assert_eq!(
        Array::from(&log).length(),
        before,
        "an event after the drop"
    );
}

#[wasm_bindgen_test]
async fn dropping_a_transcriber_whose_start_is_pending_rejects_it_with_disposed() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=tkt_1"}));
    let p = begin(&t).await;
    drop(t);
    let result = JsFuture::from(within(&p, 1000.0)).await.unwrap();
    assert!(
        get(&result, "pending").is_undefined(),
        "start() never settled"
    );
    assert_eq!(code_of(&result), "disposed");
    assert_eq!(get(&get(&socket(0), "closedWith"), "code"), 1000);
    assert_eq!(Array::from(&log).length(), 0, "no event");
}

#[wasm_bindgen_test]
async fn a_listener_that_drops_its_transcriber_while_its_event_is_dispatched_ends_the_session() {
    let (t, log) = transcriber(serde_json::json!({"url": "ws://svc.test/rt?ticket=tkt_1"}));
    started(&t).await;
    // What `t.free()` in a `partial` listener does: the transcriber goes away inside the pump applying that event.
    let slot = std::rc::Rc::new(std::cell::RefCell::new(Some(t)));
    let held = slot.clone();
    let drop_it =
        Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| drop(held.borrow_mut().take()));
    if let Some(t) = slot.borrow().as_ref() {
        t.add_event_listener("partial".into(), drop_it.as_ref().clone(), None)
            .unwrap();
    }
    let s = socket(0);
    call(
        &s,
        "serverSend",
        &[r#"{"type":"partial","text":"a","start":0,"end":1}"#.into()],
    );
    assert!(slot.borrow().is_none(), "the listener ran");
    let closed = get(&s, "closedWith");
    assert!(!closed.is_null(), "the socket is still open");
    assert_eq!(get(&closed, "code"), 1000);
    assert!(
        get(&s, "onmessage").is_null(),
        "its handler is still attached"
    );
    let before = Array::from(&log).length();
    wait(20.0).await;
    assert_eq!(
        Array::from(&log).length(),
        before,
        "an event after the drop"
    );
}
