//! Realtime transcription: session creation, the WebSocket protocol, voice-activity detection, credits.
//!
//! No speech model exists in the emulator: every `partial` and `final` text is a placeholder describing the
//! segment, like `[speech 2.4 s, -23 dBFS]`. Segments are found by an energy detector on the real samples:
//! 20 ms frames, a frame is speech above -45 dBFS; a segment ends after 1.5 s of audio without speech.
//! All timing is audio time (decoded samples), so results do not depend on how fast frames are sent.

use crate::app::Shared;
use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ApiResult};
use crate::host::{self, Frame, Socket};
use crate::state::RtSession;
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::time::Duration;

/// Ticket validity (emulator clock).
pub const TICKET_VALIDITY_MS: i64 = 5 * 60 * 1000;
/// Idle limit without any frame (scaled by `--time-scale`).
pub const IDLE_MS: f64 = 30_000.0;
/// Speech threshold per 20 ms frame.
pub const SPEECH_DBFS: f64 = -45.0;
/// Silence that closes a segment (audio seconds).
pub const END_SILENCE_S: f64 = 1.5;
/// Partial cadence while speech goes on (audio seconds).
pub const PARTIAL_EVERY_S: f64 = 2.0;
/// Credits when the first decoder joins (or an unconnected session expires).
pub const JOIN_CREDITS: u64 = 5;
/// Credits per started minute of decoded audio.
pub const MINUTE_CREDITS: u64 = 2;

/// The socket origin of the emulator's origin: `https://` gives `wss://` (the in-process default,
/// `https://emulator.test`), `http://` gives `ws://`.
fn socket_origin(base_url: &str) -> String {
    if let Some(rest) = base_url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base_url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base_url.to_owned()
    }
}

fn session_json(app: &Shared, s: &RtSession) -> Value {
    json!({
        "object": "realtime_session", "id": s.id,
        "url": format!("{}/v1/realtime/socket?ticket={}", socket_origin(&app.base_url), s.ticket.0),
        "sampleRate": s.sample_rate, "encoding": "pcm16le", "finalPass": s.final_pass,
        "expiresAt": iso(s.expires_ms), "createdAt": iso(s.created_ms),
    })
}

/// `POST /v1/realtime/transcriptions` `{sampleRate?, finalPass?, encoding?}`.
pub async fn create(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    app.check_credits(&c.org)?;
    let b = body::object(&raw)?;
    let sample_rate = match b.get("sampleRate") {
        None | Some(Value::Null) => 16_000,
        Some(v) => v
            .as_u64()
            .filter(|r| (8_000..=48_000).contains(r))
            .ok_or_else(|| ApiError::field("sampleRate", "must be an integer from 8000 to 48000"))?
            as u32,
    };
    let final_pass = match b.get("finalPass") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(f)) => *f,
        Some(_) => return Err(ApiError::field("finalPass", "must be a boolean")),
    };
    if let Some(e) = body::opt_str(&b, "encoding")? {
        if e != "pcm16le" {
            return Err(ApiError::field("encoding", "must be pcm16le"));
        }
    }
    let now = app.now_ms();
    let s = RtSession {
        id: new_id("rts_"),
        org: c.org,
        ticket: crate::util::Secret(new_id("tkt_")),
        ticket_used: false,
        sample_rate,
        final_pass,
        created_ms: now,
        expires_ms: now + TICKET_VALIDITY_MS,
        status: "created".into(),
        credits: 0,
        audio_ms: 0,
        transcript: Vec::new(),
    };
    let out = session_json(&app, &s);
    lock(&app.state).realtime.insert(s.id.clone(), s);
    Ok(Json(out))
}

fn settle_expiry(s: &mut RtSession, now: i64) {
    if s.status == "created" && now >= s.expires_ms {
        s.status = "expired".into();
        s.credits += JOIN_CREDITS;
    }
}

/// `GET /v1/realtime/transcriptions/:id`: status, credits, and the transcript when `finalPass` was set.
pub async fn get(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let now = app.now_ms();
    let mut st = lock(&app.state);
    let s = st
        .realtime
        .get_mut(&id)
        .filter(|s| s.org == c.org)
        .ok_or_else(|| ApiError::not_found("realtime session"))?;
    settle_expiry(s, now);
    let mut v = json!({
        "object": "realtime_session", "id": s.id, "status": s.status, "sampleRate": s.sample_rate, "encoding": "pcm16le",
        "finalPass": s.final_pass, "credits": s.credits, "audioSeconds": s.audio_ms as f64 / 1000.0,
        "createdAt": iso(s.created_ms), "expiresAt": iso(s.expires_ms),
    });
    if s.final_pass {
        if let Some(o) = v.as_object_mut() {
            o.insert("transcript".into(), Value::Array(s.transcript.clone()));
        }
    }
    Ok(Json(v))
}

/// The ticket of a socket request's query (`?ticket=...`; empty when missing).
pub fn ticket_of(query: Option<&str>) -> String {
    let q = body::query_pairs(query);
    body::q_get(&q, "ticket").unwrap_or_default()
}

async fn send_json(ws: &mut impl Socket, v: Value) -> bool {
    ws.send_text(v.to_string()).await
}

async fn fail(ws: &mut impl Socket, code: &str, message: &str, close: u16) {
    let _ = send_json(
        ws,
        json!({"type": "error", "code": code, "message": message}),
    )
    .await;
    ws.close(close, code).await;
}

/// Energy-based segmenter over PCM16 samples.
struct Vad {
    rate: f64,
    frame: usize,
    pending: Vec<i16>,
    t: f64,
    seg_start: Option<f64>,
    last_speech: f64,
    last_partial: f64,
    energy: f64,
    frames: u64,
}

impl Vad {
    fn new(rate: u32) -> Vad {
        Vad {
            rate: f64::from(rate),
            frame: (rate / 50).max(1) as usize,
            pending: Vec::new(),
            t: 0.0,
            seg_start: None,
            last_speech: 0.0,
            last_partial: 0.0,
            energy: 0.0,
            frames: 0,
        }
    }

    fn label(&self, start: f64, end: f64) -> String {
        let mean = if self.frames > 0 {
            self.energy / self.frames as f64
        } else {
            0.0
        };
        let db = if mean > 0.0 {
            10.0 * mean.log10()
        } else {
            -96.0
        };
        format!("[speech {:.1} s, {:.0} dBFS]", (end - start).max(0.0), db)
    }

    /// Feeds samples; returns messages to send.
    fn feed(&mut self, samples: &[i16]) -> Vec<Value> {
        let mut out = Vec::new();
        self.pending.extend_from_slice(samples);
        while self.pending.len() >= self.frame {
            let frame: Vec<i16> = self.pending.drain(..self.frame).collect();
            let ms: f64 = frame
                .iter()
                .map(|s| (f64::from(*s) / 32768.0).powi(2))
                .sum::<f64>()
                / frame.len() as f64;
            let db = if ms > 0.0 { 10.0 * ms.log10() } else { -96.0 };
            let dur = frame.len() as f64 / self.rate;
            let start = self.t;
            self.t += dur;
            let speech = db > SPEECH_DBFS;
            if speech {
                if self.seg_start.is_none() {
                    self.seg_start = Some(start);
                    self.last_partial = start;
                    self.energy = 0.0;
                    self.frames = 0;
                }
                self.last_speech = self.t;
                self.energy += ms;
                self.frames += 1;
            }
            if let Some(s) = self.seg_start {
                if self.t - self.last_speech >= END_SILENCE_S {
                    out.push(json!({"type": "final", "text": self.label(s, self.last_speech), "start": round2(s), "end": round2(self.last_speech)}));
                    self.seg_start = None;
                } else if speech && self.t - self.last_partial >= PARTIAL_EVERY_S {
                    self.last_partial = self.t;
                    out.push(json!({"type": "partial", "text": self.label(s, self.last_speech), "start": round2(s), "end": round2(self.last_speech)}));
                }
            }
        }
        out
    }

    fn flush(&mut self) -> Option<Value> {
        let s = self.seg_start.take()?;
        Some(
            json!({"type": "final", "text": self.label(s, self.last_speech), "start": round2(s), "end": round2(self.last_speech)}),
        )
    }
}

fn round2(f: f64) -> f64 {
    (f * 100.0).round() / 100.0
}

fn started_minutes(audio_ms: u64) -> u64 {
    audio_ms.div_ceil(60_000)
}

fn usage(app: &Shared, id: &str) -> Value {
    let st = lock(&app.state);
    let (m, c) = st
        .realtime
        .get(id)
        .map(|s| (started_minutes(s.audio_ms), s.credits))
        .unwrap_or((0, 0));
    json!({"type": "usage", "startedMinutes": m, "credits": c})
}

fn record(app: &Shared, id: &str, samples: usize, finals: &[Value]) {
    let mut st = lock(&app.state);
    if let Some(s) = st.realtime.get_mut(id) {
        let rate = u64::from(s.sample_rate.max(1));
        let before = started_minutes(s.audio_ms);
        // audio time is kept in exact samples to avoid drift
        let total_samples = s.audio_ms * rate / 1000 + samples as u64;
        s.audio_ms = total_samples * 1000 / rate;
        let after = started_minutes(s.audio_ms);
        s.credits += (after - before) * MINUTE_CREDITS;
        if s.final_pass {
            s.transcript.extend(
                finals
                    .iter()
                    .filter(|f| f["type"] == "final")
                    .map(|f| json!({"text": f["text"], "start": f["start"], "end": f["end"]})),
            );
        }
    }
}

fn close_session(app: &Shared, id: &str) {
    if let Some(s) = lock(&app.state).realtime.get_mut(id) {
        s.status = "closed".into();
    }
}

/// The socket protocol on an upgraded connection (the host does the upgrade: `host::socket` natively, the JS server
/// of `startEmulator` on wasm): claims the ticket, then reads frames until `stop`, a close, an error or the idle limit.
pub async fn run_socket(app: Shared, ticket: String, mut ws: impl Socket) {
    let now = app.now_ms();
    let claimed = {
        let mut st = lock(&app.state);
        let sid = st
            .realtime
            .values()
            .find(|s| !ticket.is_empty() && s.ticket.0 == ticket)
            .map(|s| s.id.clone())
            .unwrap_or_default();
        match st.realtime.get_mut(&sid) {
            None => Err(("ticket_invalid", "the ticket is not known")),
            Some(s) if s.ticket_used => Err((
                "ticket_used",
                "the ticket was already used; create a new session",
            )),
            Some(s) if now >= s.expires_ms => {
                settle_expiry(s, now);
                Err((
                    "ticket_expired",
                    "the ticket has expired; create a new session",
                ))
            }
            Some(s) => {
                s.ticket_used = true;
                s.status = "connected".into();
                s.credits += JOIN_CREDITS;
                Ok((s.id.clone(), s.sample_rate))
            }
        }
    };
    let _ = app.persist().await;
    let (id, rate) = match claimed {
        Ok(x) => x,
        Err((code, msg)) => return fail(&mut ws, code, msg, 4401).await,
    };
    if !send_json(
        &mut ws,
        json!({"type": "open", "sessionId": id, "sampleRate": rate}),
    )
    .await
    {
        return close_session(&app, &id);
    }
    let mut vad = Vad::new(rate);
    // --time-scale 0 would make the idle limit 0: keep the real 30 s then
    let idle_ms = if app.config.time_scale > 0.0 {
        app.config.scaled_ms(IDLE_MS).max(1)
    } else {
        IDLE_MS as u64
    };
    let idle = Duration::from_millis(idle_ms);
    loop {
        let msg = match host::timeout(idle, ws.recv()).await {
            Err(_) => {
                fail(&mut ws, "idle_timeout", "no frame for 30 seconds", 4408).await;
                break;
            }
            Ok(None) => break,
            Ok(Some(m)) => m,
        };
        match msg {
            Frame::Binary(b) => {
                if b.len() % 2 != 0 {
                    fail(
                        &mut ws,
                        "invalid_audio_frame",
                        "audio frames are PCM16 little-endian: an even number of bytes",
                        4400,
                    )
                    .await;
                    break;
                }
                let samples: Vec<i16> = b
                    .chunks_exact(2)
                    .map(|c| {
                        i16::from_le_bytes([
                            c.first().copied().unwrap_or(0),
                            c.get(1).copied().unwrap_or(0),
                        ])
                    })
                    .collect();
                let out = vad.feed(&samples);
                record(&app, &id, samples.len(), &out);
                for m in out {
                    if !send_json(&mut ws, m).await {
                        break;
                    }
                }
            }
            Frame::Text(t) => {
                let kind = serde_json::from_str::<Value>(&t)
                    .ok()
                    .and_then(|v| v.get("type").and_then(Value::as_str).map(String::from));
                match kind.as_deref() {
                    Some("keepalive") => {}
                    Some("stop") => {
                        if let Some(f) = vad.flush() {
                            record(&app, &id, 0, std::slice::from_ref(&f));
                            let _ = send_json(&mut ws, f).await;
                        }
                        let _ = send_json(&mut ws, usage(&app, &id)).await;
                        ws.close(1000, "stop").await;
                        break;
                    }
                    _ => {
                        fail(
                            &mut ws,
                            "invalid_message",
                            "text frames must be {\"type\":\"keepalive\"} or {\"type\":\"stop\"}",
                            4400,
                        )
                        .await;
                        break;
                    }
                }
            }
            Frame::Control => {}
        }
    }
    close_session(&app, &id);
    let _ = app.persist().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(secs: f64, rate: u32, amp: f64) -> Vec<i16> {
        (0..(secs * f64::from(rate)) as usize)
            .map(|i| {
                ((i as f64 * 440.0 * std::f64::consts::TAU / f64::from(rate)).sin() * amp * 32767.0)
                    as i16
            })
            .collect()
    }

    #[test]
    fn speech_then_silence_gives_partial_and_final() {
        let mut v = Vad::new(16_000);
        let mut out = v.feed(&tone(3.0, 16_000, 0.3));
        out.extend(v.feed(&vec![0; 16_000 * 2]));
        let partials = out.iter().filter(|m| m["type"] == "partial").count();
        let finals: Vec<_> = out.iter().filter(|m| m["type"] == "final").collect();
        assert_eq!(partials, 1);
        assert_eq!(finals.len(), 1);
        assert_eq!(finals[0]["start"], 0.0);
        assert_eq!(finals[0]["end"], 3.0);
        assert!(
            finals[0]["text"]
                .as_str()
                .unwrap()
                .starts_with("[speech 3.0 s, -13 dBFS]"),
            "{}",
            finals[0]
        );
    }

    #[test]
    fn socket_urls_follow_the_origin_scheme() {
        assert_eq!(
            socket_origin("https://emulator.test"),
            "wss://emulator.test"
        );
        assert_eq!(
            socket_origin("http://127.0.0.1:8787"),
            "ws://127.0.0.1:8787"
        );
    }

    #[test]
    fn started_minutes_round_up() {
        assert_eq!(started_minutes(0), 0);
        assert_eq!(started_minutes(1), 1);
        assert_eq!(started_minutes(60_000), 1);
        assert_eq!(started_minutes(60_001), 2);
    }
}
