//! The session's rules, driven input by input; the oracle for the service side is the protocol text in
//! `protocol.rs` and the spec's "Realtime transcription" section, not the emulator.
use super::*;
use crate::realtime::options::TranscriberOptions;

const OPEN: &str = r#"{"type":"open","sessionId":"rts_1","sampleRate":16000}"#;

fn session(options: serde_json::Value, get_url: bool) -> Session {
    let config = TranscriberOptions::from_json(&options.to_string())
        .unwrap()
        .validate(get_url)
        .unwrap();
    Session::new(config, 7).unwrap()
}

fn drain(s: &mut Session) -> Vec<Effect> {
    std::iter::from_fn(|| s.next_effect()).collect()
}

fn events(effects: &[Effect]) -> Vec<&Event> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(ev) if !matches!(ev, Event::Level(_)) => Some(ev),
            _ => None,
        })
        .collect()
}

fn binaries(effects: &[Effect]) -> Vec<&Vec<u8>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendBinary(b) => Some(b),
            _ => None,
        })
        .collect()
}

fn texts(effects: &[Effect]) -> Vec<&'static str> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendText(t) => Some(*t),
            _ => None,
        })
        .collect()
}

fn timer_set(effects: &[Effect], kind: TimerKind) -> Option<u32> {
    effects.iter().rev().find_map(|e| match e {
        Effect::SetTimer { timer, ms } if *timer == kind => Some(*ms),
        _ => None,
    })
}

fn connect_of(effects: &[Effect]) -> Option<(u32, String)> {
    effects.iter().find_map(|e| match e {
        Effect::Connect { socket, url } => Some((*socket, url.0.clone())),
        _ => None,
    })
}

fn start_result(effects: &[Effect]) -> Option<Result<(), RealtimeError>> {
    effects.iter().find_map(|e| match e {
        Effect::SettleStart(r) => Some(r.clone()),
        _ => None,
    })
}

fn close_of(effects: &[Effect]) -> Option<(u16, String, Option<RealtimeError>)> {
    effects.iter().find_map(|e| match e {
        Effect::Emit(Event::Close {
            code,
            reason,
            error,
        }) => Some((*code, reason.clone(), error.clone())),
        _ => None,
    })
}

/// Started without capture and opened by the service; returns the socket id.
fn opened(s: &mut Session) -> u32 {
    s.start(CaptureSource::None).unwrap();
    let (socket, _) = connect_of(&drain(s)).unwrap();
    s.text_received(socket, OPEN);
    let fx = drain(s);
    assert_eq!(start_result(&fx), Some(Ok(())));
    socket
}

fn transcript(kind: &str, start: f64, end: f64) -> String {
    format!(r#"{{"type":"{kind}","text":"t","start":{start},"end":{end}}}"#)
}

#[test]
fn start_connects_to_the_url_and_settles_on_the_services_open() {
    let mut s = session(
        serde_json::json!({"url": "wss://svc.test/rt?ticket=a"}),
        false,
    );
    s.start(CaptureSource::None).unwrap();
    let fx = drain(&mut s);
    assert_eq!(
        connect_of(&fx),
        Some((1, "wss://svc.test/rt?ticket=a".into()))
    );
    assert_eq!(start_result(&fx), None, "not before open");
    assert_eq!(s.phase(), Phase::Connecting);
    s.text_received(1, OPEN);
    let fx = drain(&mut s);
    assert_eq!(s.phase(), Phase::Open);
    assert!(matches!(
        events(&fx)[0],
        Event::Open {
            reconnected: false,
            sample_rate: 16_000,
            ..
        }
    ));
    assert_eq!(start_result(&fx), Some(Ok(())));
    assert_eq!(timer_set(&fx, TimerKind::Keepalive), Some(5_000));
}

#[test]
fn audio_the_browser_does_not_let_run_ends_start_with_audio_not_allowed_and_spends_no_ticket() {
    let mut s = session(
        serde_json::json!({"url": "wss://x/rt?ticket=a", "openTimeoutMs": 3000}),
        false,
    );
    assert_eq!(s.audio_start_limit_ms(), 3000);
    s.start(CaptureSource::Stream).unwrap();
    let fx = drain(&mut s);
    assert!(matches!(&fx[..], [Effect::Retain, Effect::OpenStream]));
    s.capture_failed(RealtimeError::AudioNotAllowed);
    let fx = drain(&mut s);
    assert_eq!(connect_of(&fx), None);
    assert_eq!(start_result(&fx), Some(Err(RealtimeError::AudioNotAllowed)));
    assert_eq!(s.phase(), Phase::Closed);
    let unlimited = session(
        serde_json::json!({"url": "wss://x/rt?ticket=a", "openTimeoutMs": 0}),
        false,
    );
    assert_eq!(unlimited.audio_start_limit_ms(), 0);
}

#[test]
fn the_microphone_opens_before_the_socket_so_a_refusal_spends_no_ticket() {
    let mut s = session(
        serde_json::json!({"url": "wss://x/rt?ticket=a", "deviceId": "mic-2"}),
        false,
    );
    s.start(CaptureSource::Microphone).unwrap();
    let fx = drain(&mut s);
    assert!(
        matches!(&fx[..], [Effect::Retain, Effect::OpenMicrophone(c)] if c.device_id.as_deref() == Some("mic-2")
        && c.echo_cancellation && c.noise_suppression && c.auto_gain_control)
    );
    s.capture_failed(RealtimeError::MicrophoneDenied);
    let fx = drain(&mut s);
    assert_eq!(connect_of(&fx), None);
    assert_eq!(
        start_result(&fx),
        Some(Err(RealtimeError::MicrophoneDenied))
    );
    assert_eq!(
        close_of(&fx).unwrap().2,
        Some(RealtimeError::MicrophoneDenied)
    );
    assert_eq!(s.phase(), Phase::Closed);
}

#[test]
fn a_second_start_is_invalid_state() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    opened(&mut s);
    assert_eq!(
        s.start(CaptureSource::None).unwrap_err().code(),
        "invalid_state"
    );
}

#[test]
fn server_messages_become_events_and_usage_replaces_the_estimate() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.push_i16(&[0; 16_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    assert_eq!(s.usage().credits, 7, "estimate: join + one started minute");
    s.text_received(id, &transcript("partial", 0.0, 2.04));
    s.text_received(id, &transcript("final", 0.0, 3.5));
    s.text_received(id, r#"{"type":"speaker_change"}"#);
    s.text_received(id, r#"{"type":"usage","startedMinutes":3,"credits":11}"#);
    s.text_received(id, "not json");
    let fx = drain(&mut s);
    let ev = events(&fx);
    assert!(matches!(ev[0], Event::Partial(t) if t.end == 2.04));
    assert!(matches!(ev[1], Event::Final(t) if t.end == 3.5));
    assert!(matches!(ev[2], Event::Usage(u) if u.credits == 11));
    assert!(matches!(ev[3], Event::Error(e) if e.code() == "invalid_message"));
    assert_eq!(ev.len(), 4, "an unknown type is no event");
    assert_eq!(s.usage().credits, 11);
}

#[test]
fn an_infinite_time_from_the_service_is_an_error_event_and_the_session_goes_on() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.text_received(id, r#"{"type":"final","text":"t","start":1e400,"end":1}"#);
    s.text_received(
        id,
        r#"{"type":"partial","text":"t","start":0,"end":-1e400}"#,
    );
    s.text_received(id, &transcript("final", 0.0, 3.5));
    let fx = drain(&mut s);
    let ev = events(&fx);
    for e in &ev[0..2] {
        assert!(
            matches!(e, Event::Error(e) if e.code() == "invalid_message"),
            "{e:?}"
        );
    }
    assert!(matches!(ev[2], Event::Final(t) if t.end == 3.5));
    assert_eq!(ev.len(), 3);
    assert_eq!(s.phase(), Phase::Open);
}

#[test]
fn a_message_over_the_size_limit_is_not_read_and_the_session_goes_on() {
    use crate::realtime::protocol::MAX_MESSAGE_BYTES;
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    // A valid partial of exactly the limit is read; one byte more is refused unread, as is one the host measured.
    let at_limit = |extra: usize| {
        let partial =
            |text: &str| format!(r#"{{"type":"partial","text":"{text}","start":0,"end":1}}"#);
        let text = "a".repeat(MAX_MESSAGE_BYTES - partial("").len() + extra);
        let message = partial(&text);
        assert_eq!(message.len(), MAX_MESSAGE_BYTES + extra);
        message
    };
    s.text_received(id, &at_limit(0));
    s.text_received(id, &at_limit(1));
    s.oversized_text_received(id);
    s.text_received(id, &transcript("final", 0.0, 3.5));
    let fx = drain(&mut s);
    let ev = events(&fx);
    assert!(matches!(ev[0], Event::Partial(t) if t.text.len() > 200_000));
    for e in &ev[1..3] {
        assert!(
            matches!(e, Event::Error(e) if e.code() == "invalid_message" && e.to_string().contains("256 KiB")),
            "{e:?}"
        );
    }
    assert!(matches!(ev[3], Event::Final(t) if t.end == 3.5));
    assert_eq!(s.phase(), Phase::Open);
}

#[test]
fn events_of_an_abandoned_socket_are_ignored() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 1}),
        true,
    );
    let old = opened(&mut s);
    s.socket_closed(old, 1006, "");
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://fresh".into()));
    drain(&mut s);
    s.text_received(old, &transcript("final", 0.0, 1.0));
    s.socket_closed(old, 1000, "");
    assert!(drain(&mut s).is_empty());
    assert_eq!(s.phase(), Phase::Connecting);
}

#[test]
fn audio_before_open_is_buffered_and_sent_first_after_open() {
    let mut s = session(serde_json::json!({"url": "ws://x", "frameMs": 20}), false);
    s.push_i16(&[5; 320], 16_000, AudioOrigin::Caller).unwrap();
    let fx = drain(&mut s);
    assert!(connect_of(&fx).is_some(), "sendAudio connects by itself");
    assert!(binaries(&fx).is_empty());
    assert_eq!(s.buffered_ms(), 20);
    s.text_received(1, OPEN);
    let fx = drain(&mut s);
    assert_eq!(binaries(&fx).len(), 1);
    assert_eq!(binaries(&fx)[0][..2], [5, 0]);
}

#[test]
fn the_reconnect_buffer_is_bounded_and_reports_what_it_dropped() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "bufferMs": 40, "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    for i in 0..5 {
        s.push_i16(&[i; 320], 16_000, AudioOrigin::Caller).unwrap();
    }
    assert_eq!(s.buffered_ms(), 40);
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://fresh".into()));
    s.text_received(2, OPEN);
    let fx = drain(&mut s);
    let frames = binaries(&fx);
    assert_eq!(frames.len(), 2, "only the newest 40 ms");
    assert_eq!(frames[0][..2], [3, 0]);
    assert!(events(&fx).iter().any(|e| matches!(
        e,
        Event::Open {
            reconnected: true,
            dropped_ms: 60,
            ..
        }
    )));
}

#[test]
fn a_drop_reconnects_through_get_url_with_doubling_backoff_and_gives_up() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 100, "reconnectAttempts": 3}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1011, "restart");
    let fx = drain(&mut s);
    assert_eq!(s.phase(), Phase::Reconnecting);
    let delay = timer_set(&fx, TimerKind::Reconnect).unwrap();
    assert!((50..=100).contains(&delay), "{delay}");
    assert!(matches!(
        events(&fx)[0],
        Event::Reconnecting {
            attempt: 1,
            error: RealtimeError::SocketClosed { code: 1011, .. },
            ..
        }
    ));
    let mut ceilings = vec![];
    for _ in 0..2 {
        s.timer_fired(TimerKind::Reconnect);
        assert_eq!(drain(&mut s), vec![Effect::FetchUrl]);
        s.url_fetched(None);
        let fx = drain(&mut s);
        ceilings.push(timer_set(&fx, TimerKind::Reconnect).unwrap());
    }
    assert!(
        (100..=200).contains(&ceilings[0]) && (200..=400).contains(&ceilings[1]),
        "{ceilings:?}"
    );
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("https://not-a-socket".into()));
    let fx = drain(&mut s);
    assert_eq!(
        close_of(&fx).unwrap().2,
        Some(RealtimeError::ReconnectFailed { attempts: 3 })
    );
    assert_eq!(s.phase(), Phase::Closed);
}

#[test]
fn an_open_resets_the_attempts_of_the_next_outage() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 100, "reconnectAttempts": 1}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://b".into()));
    s.text_received(2, OPEN);
    s.socket_closed(2, 1006, "");
    let fx = drain(&mut s);
    assert!(events(&fx)
        .iter()
        .any(|e| matches!(e, Event::Reconnecting { attempt: 1, .. })));
}

#[test]
fn a_drop_without_get_url_ends_with_socket_closed() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    let fx = drain(&mut s);
    let (code, _, error) = close_of(&fx).unwrap();
    assert_eq!(code, 1006);
    assert_eq!(error.unwrap().code(), "socket_closed");
    assert!(fx.contains(&Effect::SettleStop));
}

#[test]
fn a_used_or_expired_ticket_is_final_even_with_get_url() {
    for (message, close_reason, code) in [
        (Some("ticket_used"), "ticket_used", "ticket_used"),
        (None, "ticket_expired", "ticket_expired"),
        (None, "ticket_invalid", "ticket_invalid"),
        (None, "???", "ticket_invalid"),
    ] {
        let mut s = session(serde_json::json!({"url": "ws://x"}), true);
        s.start(CaptureSource::None).unwrap();
        drain(&mut s);
        if let Some(m) = message {
            s.text_received(
                1,
                &format!(r#"{{"type":"error","code":"{m}","message":"m"}}"#),
            );
        }
        s.socket_closed(1, 4401, close_reason);
        let fx = drain(&mut s);
        assert_eq!(start_result(&fx).unwrap().unwrap_err().code(), code);
        assert!(!fx.contains(&Effect::FetchUrl));
        assert_eq!(
            timer_set(&fx, TimerKind::Reconnect),
            None,
            "{code} must not reconnect"
        );
        let (close_code, _, error) = close_of(&fx).unwrap();
        assert_eq!((close_code, error.unwrap().code()), (4401, code));
    }
}

#[test]
fn server_close_codes_decide_between_end_and_reconnect() {
    // 1000 without an error message: the end. 4408 (idle), 1006, 1011: drops, retried with getUrl.
    let mut s = session(serde_json::json!({"url": "ws://x"}), true);
    let id = opened(&mut s);
    s.socket_closed(id, 1000, "done");
    let fx = drain(&mut s);
    assert_eq!(close_of(&fx), Some((1000, "done".into(), None)));
    for (code, reason, error) in [
        (4408, "idle_timeout", "idle_timeout"),
        (1006, "", "socket_closed"),
        (1011, "x", "socket_closed"),
    ] {
        let mut s = session(serde_json::json!({"url": "ws://x"}), true);
        let id = opened(&mut s);
        s.socket_closed(id, code, reason);
        let fx = drain(&mut s);
        assert!(
            matches!(events(&fx)[0], Event::Reconnecting { error: e, .. } if e.code() == error),
            "{code}"
        );
    }
}

#[test]
fn a_1000_close_after_a_service_error_is_that_error() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.text_received(
        id,
        r#"{"type":"error","code":"decoder_failed","message":"sorry"}"#,
    );
    s.socket_closed(id, 1000, "");
    let fx = drain(&mut s);
    let error = close_of(&fx).unwrap().2.unwrap();
    assert_eq!(error.code(), "decoder_failed");
    assert!(!error.is_retryable());
}

#[test]
fn a_server_rate_other_than_the_session_rate_fails_start() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::None).unwrap();
    drain(&mut s);
    s.text_received(1, r#"{"type":"open","sessionId":"s","sampleRate":8000}"#);
    let fx = drain(&mut s);
    assert_eq!(
        start_result(&fx).unwrap().unwrap_err().code(),
        "unsupported_audio_format"
    );
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: ""
    }));
}

#[test]
fn keepalives_repeat_while_open_and_during_pause_and_end_with_the_socket() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "keepaliveMs": 10}),
        true,
    );
    let id = opened(&mut s);
    s.pause().unwrap();
    s.timer_fired(TimerKind::Keepalive);
    let fx = drain(&mut s);
    assert_eq!(texts(&fx), vec![r#"{"type":"keepalive"}"#]);
    assert_eq!(timer_set(&fx, TimerKind::Keepalive), Some(10));
    s.socket_closed(id, 1006, "");
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::ClearTimer(TimerKind::Keepalive)));
    s.timer_fired(TimerKind::Keepalive);
    assert!(
        texts(&drain(&mut s)).is_empty(),
        "no keepalive without a socket"
    );
}

#[test]
fn pause_sends_nothing_and_resume_sends_again_without_reconnecting() {
    let mut s = session(serde_json::json!({"url": "ws://x", "frameMs": 20}), true);
    opened(&mut s);
    s.want_levels();
    s.pause().unwrap();
    assert!(s.is_paused());
    s.push_i16(&[1; 640], 16_000, AudioOrigin::Capture).unwrap();
    let fx = drain(&mut s);
    assert!(binaries(&fx).is_empty());
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Emit(Event::Level(_)))),
        "the meter keeps moving"
    );
    assert_eq!(s.buffered_ms(), 0, "paused audio is not buffered either");
    s.resume().unwrap();
    s.push_i16(&[1; 320], 16_000, AudioOrigin::Capture).unwrap();
    let fx = drain(&mut s);
    assert_eq!(binaries(&fx).len(), 1);
    assert!(connect_of(&fx).is_none());
}

#[test]
fn every_block_reports_its_level_in_dbfs_once_a_listener_wants_it() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    opened(&mut s);
    s.push_i16(&[16_384; 320], 16_000, AudioOrigin::Caller)
        .unwrap();
    assert!(
        !drain(&mut s)
            .iter()
            .any(|e| matches!(e, Effect::Emit(Event::Level(_)))),
        "no level without a listener"
    );
    s.want_levels();
    s.push_i16(&[16_384; 320], 16_000, AudioOrigin::Caller)
        .unwrap();
    let fx = drain(&mut s);
    let level = fx
        .iter()
        .find_map(|e| match e {
            Effect::Emit(Event::Level(l)) => Some(*l),
            _ => None,
        })
        .unwrap();
    assert!((level.rms_dbfs + 6.0206).abs() < 1e-3 && (level.peak_dbfs + 6.0206).abs() < 1e-3);
}

#[test]
fn stop_flushes_the_capture_sends_the_tail_then_stop_and_waits_for_the_last_final() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "stopTimeoutMs": 300}),
        false,
    );
    s.start(CaptureSource::Stream).unwrap();
    assert_eq!(drain(&mut s), vec![Effect::Retain, Effect::OpenStream]);
    s.capture_started();
    let id = connect_of(&drain(&mut s)).unwrap().0;
    s.text_received(id, OPEN);
    drain(&mut s);
    s.push_i16(&[1; 100], 16_000, AudioOrigin::Capture).unwrap();
    assert!(
        binaries(&drain(&mut s)).is_empty(),
        "less than a frame waits"
    );
    s.stop();
    assert_eq!(drain(&mut s), vec![Effect::FlushCapture]);
    // The worklet's last block arrives while flushing: accepted.
    s.push_i16(&[2; 60], 16_000, AudioOrigin::Capture).unwrap();
    assert!(
        s.push_i16(&[2; 60], 16_000, AudioOrigin::Caller).is_err(),
        "sendAudio after stop()"
    );
    s.capture_flushed();
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::CloseCapture));
    assert_eq!(binaries(&fx).len(), 1);
    assert_eq!(
        binaries(&fx)[0].len(),
        320,
        "the short last frame: 160 samples"
    );
    assert_eq!(texts(&fx), vec![r#"{"type":"stop"}"#]);
    assert_eq!(timer_set(&fx, TimerKind::Stop), Some(300));
    assert!(!fx.contains(&Effect::SettleStop), "waits for the service");
    s.text_received(id, &transcript("final", 0.0, 0.01));
    s.socket_closed(id, 1000, "stop");
    let fx = drain(&mut s);
    assert!(matches!(events(&fx)[0], Event::Final(_)));
    assert_eq!(close_of(&fx), Some((1000, "stop".into(), None)));
    assert_eq!(fx.last(), Some(&Effect::SettleStop));
}

#[test]
fn stop_gives_up_after_stop_timeout_and_closes_the_socket() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    opened(&mut s);
    s.stop();
    drain(&mut s);
    s.timer_fired(TimerKind::Stop);
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: ""
    }));
    assert_eq!(close_of(&fx), Some((1000, "stop_timeout".into(), None)));
    assert!(fx.contains(&Effect::SettleStop));
}

#[test]
fn stop_while_reconnecting_sends_the_tail_and_stop_after_the_next_open() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    s.push_i16(&[4; 100], 16_000, AudioOrigin::Caller).unwrap();
    s.stop();
    let fx = drain(&mut s);
    assert!(texts(&fx).is_empty());
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://b".into()));
    s.text_received(2, OPEN);
    let fx = drain(&mut s);
    assert_eq!(binaries(&fx).len(), 1);
    assert_eq!(texts(&fx), vec![r#"{"type":"stop"}"#]);
}

#[test]
fn stop_before_anything_started_closes_at_once_and_twice_is_harmless() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.stop();
    let fx = drain(&mut s);
    assert_eq!(close_of(&fx).unwrap().0, 1000);
    s.stop();
    assert_eq!(drain(&mut s), vec![Effect::SettleStop]);
    assert_eq!(
        s.push_f32(&[0.0], 16_000, AudioOrigin::Caller)
            .unwrap_err()
            .code(),
        "invalid_state"
    );
}

#[test]
fn stop_during_the_microphone_prompt_rejects_start_and_releases_the_late_capture() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.stop();
    let fx = drain(&mut s);
    assert_eq!(
        start_result(&fx).unwrap().unwrap_err().code(),
        "invalid_state"
    );
    s.capture_started();
    assert_eq!(drain(&mut s), vec![Effect::CloseCapture]);
}

#[test]
fn the_open_timeout_fails_start_before_the_first_open() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "openTimeoutMs": 3000}),
        true,
    );
    s.start(CaptureSource::None).unwrap();
    let fx = drain(&mut s);
    assert_eq!(timer_set(&fx, TimerKind::Open), Some(3000));
    s.timer_fired(TimerKind::Open);
    let fx = drain(&mut s);
    assert_eq!(start_result(&fx), Some(Err(RealtimeError::OpenTimeout)));
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: "open_timeout"
    }));
    assert_eq!(s.phase(), Phase::Closed);
}

#[test]
fn an_open_timeout_on_a_reconnect_is_one_failed_attempt() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://b".into()));
    drain(&mut s);
    s.timer_fired(TimerKind::Open);
    let fx = drain(&mut s);
    assert!(matches!(
        events(&fx)[0],
        Event::Reconnecting {
            attempt: 2,
            error: RealtimeError::OpenTimeout,
            ..
        }
    ));
    s.socket_closed(2, 1006, "");
    assert!(
        drain(&mut s).is_empty(),
        "the abandoned socket's close is ignored"
    );
}

#[test]
fn the_open_timer_is_cleared_by_open() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::None).unwrap();
    drain(&mut s);
    s.text_received(1, OPEN);
    assert!(drain(&mut s).contains(&Effect::ClearTimer(TimerKind::Open)));
    s.timer_fired(TimerKind::Open);
    assert!(drain(&mut s).is_empty());
}

#[test]
fn a_silent_service_while_audio_flows_reconnects_through_get_url() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "silenceTimeoutMs": 4000}),
        true,
    );
    s.start(CaptureSource::None).unwrap();
    drain(&mut s);
    s.text_received(1, OPEN);
    assert_eq!(timer_set(&drain(&mut s), TimerKind::Silence), Some(4000));
    // No audio: silence from the service is fine, the timer is re-armed.
    s.timer_fired(TimerKind::Silence);
    assert_eq!(timer_set(&drain(&mut s), TimerKind::Silence), Some(4000));
    // A message re-arms it too.
    s.push_i16(&[1; 320], 16_000, AudioOrigin::Caller).unwrap();
    s.text_received(1, &transcript("partial", 0.0, 0.02));
    assert_eq!(timer_set(&drain(&mut s), TimerKind::Silence), Some(4000));
    s.timer_fired(TimerKind::Silence);
    assert!(
        texts(&drain(&mut s)).is_empty(),
        "no audio since the last message"
    );
    // Audio, then nothing: a dead connection.
    s.push_i16(&[1; 320], 16_000, AudioOrigin::Caller).unwrap();
    s.timer_fired(TimerKind::Silence);
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: "connection_silent"
    }));
    assert!(matches!(
        events(&fx)[0],
        Event::Reconnecting {
            error: RealtimeError::ConnectionSilent,
            ..
        }
    ));
}

#[test]
fn silence_detection_is_off_by_default() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), true);
    s.start(CaptureSource::None).unwrap();
    drain(&mut s);
    s.text_received(1, OPEN);
    assert_eq!(timer_set(&drain(&mut s), TimerKind::Silence), None);
}

#[test]
fn transcript_times_count_from_the_first_audio_across_reconnects() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    // 1.5 s sent on the first connection.
    s.push_i16(&vec![0; 24_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    s.text_received(id, &transcript("final", 0.25, 1.0));
    s.socket_closed(id, 1006, "");
    // 0.5 s captured during the outage, buffered, sent first on the next connection.
    s.push_i16(&vec![0; 8_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://b".into()));
    s.text_received(2, OPEN);
    s.text_received(2, &transcript("final", 0.0, 0.5));
    let fx = drain(&mut s);
    let finals: Vec<(f64, f64)> = events(&fx)
        .iter()
        .filter_map(|e| match e {
            Event::Final(t) => Some((t.start, t.end)),
            _ => None,
        })
        .collect();
    assert_eq!(finals, vec![(0.25, 1.0), (1.5, 2.0)]);
}

#[test]
fn transcript_times_count_audio_the_outage_dropped() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "bufferMs": 100, "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.push_i16(&vec![0; 16_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    s.socket_closed(id, 1006, "");
    s.push_i16(&vec![0; 16_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("ws://b".into()));
    s.text_received(2, OPEN);
    s.text_received(2, &transcript("partial", 0.0, 0.1));
    let fx = drain(&mut s);
    let t = events(&fx)
        .iter()
        .find_map(|e| match e {
            Event::Partial(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    // 1 s sent, then 0.9 s dropped: the buffered 0.1 s starts at 1.9 s.
    assert!((t.start - 1.9).abs() < 1e-9, "{t:?}");
}

#[test]
fn a_lost_microphone_is_switched_for_the_default_one() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "deviceId": "usb"}),
        false,
    );
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.capture_started();
    let id = connect_of(&drain(&mut s)).unwrap().0;
    s.text_received(id, OPEN);
    drain(&mut s);
    s.device_lost();
    let fx = drain(&mut s);
    assert!(matches!(&fx[..], [Effect::SwitchMicrophone(c)] if c.device_id.is_none()));
    s.capture_started();
    let fx = drain(&mut s);
    assert_eq!(events(&fx), vec![&Event::DeviceChange]);
    assert_eq!(s.phase(), Phase::Open);
}

#[test]
fn a_lost_microphone_without_replacement_is_device_lost_and_stops() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.capture_started();
    s.text_received(1, OPEN);
    drain(&mut s);
    s.device_lost();
    drain(&mut s);
    s.capture_failed(RealtimeError::NoAudioDevice);
    let fx = drain(&mut s);
    assert!(matches!(
        events(&fx)[0],
        Event::Error(RealtimeError::DeviceLost)
    ));
    assert_eq!(
        texts(&fx),
        vec![r#"{"type":"stop"}"#],
        "what was said is still transcribed"
    );
}

#[test]
fn with_on_device_lost_error_a_lost_device_is_reported_and_the_session_stops() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "onDeviceLost": "error"}),
        false,
    );
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.capture_started();
    s.text_received(1, OPEN);
    drain(&mut s);
    s.device_lost();
    let fx = drain(&mut s);
    assert!(matches!(
        events(&fx)[0],
        Event::Error(RealtimeError::DeviceLost)
    ));
    assert!(fx.contains(&Effect::FlushCapture));
}

#[test]
fn effects_never_print_the_ticket() {
    let mut s = session(
        serde_json::json!({"url": "wss://svc/rt?ticket=tkt_secret"}),
        false,
    );
    s.start(CaptureSource::None).unwrap();
    let fx = drain(&mut s);
    assert!(!format!("{fx:?} {s:?}").contains("tkt_secret"));
}

fn count(effects: &[Effect], effect: &Effect) -> usize {
    effects.iter().filter(|e| *e == effect).count()
}

#[test]
fn a_session_is_retained_from_start_until_it_closes_and_released_once() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.want_levels();
    s.start(CaptureSource::Microphone).unwrap();
    let fx = drain(&mut s);
    assert_eq!(
        fx.first(),
        Some(&Effect::Retain),
        "before the microphone opens"
    );
    s.capture_started();
    let id = connect_of(&drain(&mut s)).unwrap().0;
    s.text_received(id, OPEN);
    s.capture_block(&[0.1; 480], 48_000);
    let fx = drain(&mut s);
    assert_eq!(
        count(&fx, &Effect::Retain) + count(&fx, &Effect::Release),
        0
    );
    s.stop();
    s.capture_flushed();
    let fx = drain(&mut s);
    assert_eq!(
        count(&fx, &Effect::Release),
        0,
        "stop() still waits for the service"
    );
    s.socket_closed(id, 1000, "");
    let fx = drain(&mut s);
    assert_eq!(count(&fx, &Effect::Release), 1);
    let release = fx.iter().position(|e| *e == Effect::Release).unwrap();
    let close = fx
        .iter()
        .position(|e| matches!(e, Effect::Emit(Event::Close { .. })))
        .unwrap();
    assert!(release > close, "released after the close event");
    s.stop();
    s.dispose();
    assert_eq!(count(&drain(&mut s), &Effect::Release), 0, "released once");
}

#[test]
fn audio_from_the_caller_retains_the_session_and_a_failed_start_releases_it() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.push_i16(&[0; 320], 16_000, AudioOrigin::Caller).unwrap();
    let fx = drain(&mut s);
    assert_eq!(fx.first(), Some(&Effect::Retain));
    assert!(connect_of(&fx).is_some());
    s.push_i16(&[0; 320], 16_000, AudioOrigin::Caller).unwrap();
    assert_eq!(count(&drain(&mut s), &Effect::Retain), 0, "retained once");

    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.capture_failed(RealtimeError::MicrophoneDenied);
    assert_eq!(count(&drain(&mut s), &Effect::Release), 1);

    // Never started: nothing to retain or release.
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.stop();
    let fx = drain(&mut s);
    assert_eq!(
        count(&fx, &Effect::Retain) + count(&fx, &Effect::Release),
        0
    );
}

#[test]
fn dispose_of_an_open_session_closes_everything_at_once_and_dispatches_nothing() {
    let mut s = session(serde_json::json!({"url": "ws://x", "frameMs": 20}), false);
    s.want_levels();
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.capture_started();
    let id = connect_of(&drain(&mut s)).unwrap().0;
    s.text_received(id, OPEN);
    s.push_i16(&[1; 100], 16_000, AudioOrigin::Capture).unwrap();
    drain(&mut s);
    s.dispose();
    let fx = drain(&mut s);
    for timer in TIMER_KINDS {
        assert!(fx.contains(&Effect::ClearTimer(timer)), "{timer:?}");
    }
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: ""
    }));
    assert!(fx.contains(&Effect::CloseCapture));
    assert!(
        !fx.contains(&Effect::FlushCapture),
        "no flush: nothing waits on the service"
    );
    assert!(texts(&fx).is_empty(), "no stop message");
    assert!(binaries(&fx).is_empty(), "the tail is not sent");
    assert!(events(&fx).is_empty(), "no event: {fx:?}");
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Emit(_))),
        "not even a level"
    );
    assert_eq!(start_result(&fx), None, "start() had settled");
    assert_eq!(count(&fx, &Effect::Release), 1);
    assert_eq!(fx.last(), Some(&Effect::SettleStop));
    assert_eq!(s.phase(), Phase::Closed);
    // What the socket and the capture still deliver finds a closed session, and nothing is reported.
    s.text_received(id, &transcript("final", 0.0, 1.0));
    s.socket_closed(id, 1000, "");
    s.capture_block(&[0.5; 480], 48_000);
    s.timer_fired(TimerKind::Keepalive);
    assert_eq!(drain(&mut s), vec![]);
}

#[test]
fn dispose_drops_the_events_not_yet_dispatched() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.text_received(id, &transcript("partial", 0.0, 1.0));
    s.text_received(id, &transcript("final", 0.0, 1.0));
    // A `partial` listener frees the transcriber while the final is still queued.
    let partial = s.next_effect();
    assert!(matches!(partial, Some(Effect::Emit(Event::Partial(_)))));
    s.dispose();
    let fx = drain(&mut s);
    assert!(!fx.iter().any(|e| matches!(e, Effect::Emit(_))), "{fx:?}");
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: ""
    }));
}

#[test]
fn dispose_during_the_microphone_prompt_rejects_start_with_disposed_and_releases_the_late_capture()
{
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.start(CaptureSource::Microphone).unwrap();
    drain(&mut s);
    s.dispose();
    let fx = drain(&mut s);
    assert_eq!(start_result(&fx), Some(Err(RealtimeError::Disposed)));
    assert_eq!(start_result(&fx).unwrap().unwrap_err().code(), "disposed");
    assert!(connect_of(&fx).is_none());
    assert!(events(&fx).is_empty());
    assert_eq!(count(&fx, &Effect::Release), 1);
    s.capture_started();
    assert_eq!(
        drain(&mut s),
        vec![Effect::CloseCapture],
        "its tracks stop as soon as it opens"
    );
}

#[test]
fn dispose_while_stopping_resolves_stop_without_waiting_for_the_service() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "stopTimeoutMs": 5000}),
        false,
    );
    let id = opened(&mut s);
    s.stop();
    let fx = drain(&mut s);
    assert_eq!(texts(&fx), vec![r#"{"type":"stop"}"#]);
    assert!(!fx.contains(&Effect::SettleStop));
    s.dispose();
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::CloseSocket {
        code: 1000,
        reason: ""
    }));
    assert!(fx.contains(&Effect::ClearTimer(TimerKind::Stop)));
    assert_eq!(fx.last(), Some(&Effect::SettleStop));
    s.text_received(id, &transcript("final", 0.0, 1.0));
    assert_eq!(drain(&mut s), vec![]);
}

#[test]
fn dispose_while_reconnecting_ignores_the_url_get_url_gives_later() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.socket_closed(id, 1006, "");
    s.timer_fired(TimerKind::Reconnect);
    assert!(drain(&mut s).contains(&Effect::FetchUrl));
    s.dispose();
    let fx = drain(&mut s);
    assert!(fx.contains(&Effect::ClearTimer(TimerKind::Reconnect)));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::CloseSocket { .. })),
        "no socket was open"
    );
    s.url_fetched(Some("ws://b".into()));
    assert_eq!(drain(&mut s), vec![], "no socket after disposal");
}

#[test]
fn dispose_of_a_session_never_started_or_already_closed_does_nothing_visible() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.dispose();
    let fx = drain(&mut s);
    assert!(
        !fx.iter().any(|e| matches!(
            e,
            Effect::Emit(_)
                | Effect::CloseSocket { .. }
                | Effect::CloseCapture
                | Effect::Release
                | Effect::Retain
        )),
        "{fx:?}"
    );
    assert_eq!(s.phase(), Phase::Closed);

    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    let id = opened(&mut s);
    s.socket_closed(id, 1000, "");
    drain(&mut s);
    s.dispose();
    assert_eq!(drain(&mut s), vec![]);
}

fn records(effects: &[Effect]) -> Vec<&Record> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Record(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn an_unobserved_session_queues_no_record() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "reconnectDelayMs": 1}),
        true,
    );
    let id = opened(&mut s);
    s.pause().unwrap();
    s.socket_closed(id, 1011, "restart");
    s.dispose();
    assert!(records(&drain(&mut s)).is_empty());
}

#[test]
fn an_observed_session_records_its_opens_reconnects_pauses_and_close_with_the_audio_sent() {
    let mut s = session(
        serde_json::json!({"url": "ws://x", "frameMs": 20, "reconnectDelayMs": 100}),
        true,
    );
    s.observe();
    let id = opened(&mut s);
    s.push_i16(&[1; 16_000], 16_000, AudioOrigin::Caller)
        .unwrap();
    s.pause().unwrap();
    s.pause().unwrap();
    s.resume().unwrap();
    let fx = drain(&mut s);
    assert_eq!(
        records(&fx),
        [&Record::Paused, &Record::Resumed],
        "one record per change"
    );
    s.socket_closed(id, 1011, "restart");
    let fx = drain(&mut s);
    let [Record::Reconnecting {
        attempt: 1,
        delay_ms,
        error: RealtimeError::SocketClosed { code: 1011, .. },
    }] = records(&fx)[..]
    else {
        panic!("{:?}", records(&fx));
    };
    assert_eq!(
        u64::from(timer_set(&fx, TimerKind::Reconnect).unwrap()),
        *delay_ms
    );
    s.timer_fired(TimerKind::Reconnect);
    s.url_fetched(Some("wss://x/rt?ticket=b".into()));
    let (id, _) = connect_of(&drain(&mut s)).unwrap();
    s.text_received(id, OPEN);
    assert_eq!(
        records(&drain(&mut s)),
        [&Record::Opened { reconnected: true }]
    );
    s.socket_closed(id, 1000, "done");
    let fx = drain(&mut s);
    assert_eq!(
        records(&fx),
        [&Record::Closed {
            code: 1000,
            reason: "done".into(),
            error: None,
            sent_ms: 1000,
        }],
        "a second of audio sent"
    );
}

#[test]
fn a_disposed_session_still_records_its_close() {
    let mut s = session(serde_json::json!({"url": "ws://x"}), false);
    s.observe();
    opened(&mut s);
    s.dispose();
    let fx = drain(&mut s);
    assert!(events(&fx).is_empty(), "no event after dispose");
    assert!(matches!(
        records(&fx)[..],
        [Record::Closed {
            code: 1000,
            error: None,
            ..
        }]
    ));
}
