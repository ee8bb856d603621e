//! Realtime sessions over a real WebSocket: open, partial/final from VAD, usage and credits, ticket rules, idle.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn tone(secs: f64, rate: u32) -> Vec<u8> {
    (0..(secs * rate as f64) as usize)
        .flat_map(|i| {
            (((i as f64 * 440.0 * std::f64::consts::TAU / rate as f64).sin() * 0.3 * 32767.0)
                as i16)
                .to_le_bytes()
        })
        .collect()
}

async fn session(h: &Emu, body: Value) -> Value {
    let r = post(h, "/v1/realtime/transcriptions", body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

async fn next_json(ws: &mut Ws) -> Value {
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
            .await
            .expect("message in time")
        {
            Some(Ok(Message::Text(t))) => return serde_json::from_str(t.as_str()).unwrap(),
            Some(Ok(Message::Close(f))) => return json!({"closed": f.map(|f| u16::from(f.code))}),
            Some(Ok(_)) => continue,
            other => return json!({"ended": format!("{other:?}")}),
        }
    }
}

async fn close_code(ws: &mut Ws) -> Option<u16> {
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
            .await
            .expect("close in time")
        {
            Some(Ok(Message::Close(f))) => return f.map(|f| u16::from(f.code)),
            Some(Ok(_)) => continue,
            _ => return None,
        }
    }
}

#[tokio::test]
async fn session_has_the_documented_shape_and_limits() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({})).await;
    assert_eq!(s["object"], "realtime_session");
    assert!(s["id"].as_str().unwrap().starts_with("rts_"));
    assert!(s["url"]
        .as_str()
        .unwrap()
        .starts_with(&format!("ws://{}/v1/realtime/socket?ticket=", h.addr)));
    assert_eq!(s["sampleRate"], 16000);
    assert_eq!(s["encoding"], "pcm16le");
    assert_eq!(s["finalPass"], false);
    assert!(s["expiresAt"].is_string() && s["createdAt"].is_string());
    let r = post(
        &h,
        "/v1/realtime/transcriptions",
        json!({"sampleRate": 7999}),
    )
    .await;
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .starts_with("sampleRate: "));
    let r = post(
        &h,
        "/v1/realtime/transcriptions",
        json!({"sampleRate": 48001}),
    )
    .await;
    assert_eq!(r.code(), "invalid_request");
    assert_eq!(
        session(&h, json!({"sampleRate": 8000})).await["sampleRate"],
        8000
    );
}

#[tokio::test]
async fn speech_gives_partials_then_a_final_after_silence_and_stop_sends_usage() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({"finalPass": true})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    let open = next_json(&mut ws).await;
    assert_eq!(
        open,
        json!({"type": "open", "sessionId": s["id"], "sampleRate": 16000})
    );
    let mut audio = tone(4.5, 16000);
    audio.extend(vec![0u8; 16000 * 2 * 2]); // 2 s of silence
    for chunk in audio.chunks(3200) {
        ws.send(Message::Binary(chunk.to_vec().into()))
            .await
            .unwrap();
    }
    let mut got = Vec::new();
    while !got.iter().any(|m: &Value| m["type"] == "final") {
        got.push(next_json(&mut ws).await);
    }
    let partials: Vec<_> = got.iter().filter(|m| m["type"] == "partial").collect();
    assert_eq!(partials.len(), 2, "{got:?}"); // at 2 s and 4 s of speech
    let fin = got.last().unwrap();
    assert_eq!(fin["start"], 0.0);
    assert_eq!(fin["end"], 4.5);
    assert!(
        fin["text"].as_str().unwrap().starts_with("[speech 4.5 s, "),
        "{fin}"
    );
    ws.send(Message::Text(r#"{"type":"keepalive"}"#.into()))
        .await
        .unwrap();
    ws.send(Message::Text(r#"{"type":"stop"}"#.into()))
        .await
        .unwrap();
    let usage = next_json(&mut ws).await;
    assert_eq!(
        usage,
        json!({"type": "usage", "startedMinutes": 1, "credits": 7})
    );
    assert_eq!(close_code(&mut ws).await, Some(1000));
    let g = get(
        &h,
        &format!("/v1/realtime/transcriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(g.body["credits"], 7);
    assert_eq!(g.body["transcript"][0]["end"], 4.5);
}

#[tokio::test]
async fn stop_flushes_pending_speech_as_a_final() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    next_json(&mut ws).await;
    ws.send(Message::Binary(tone(1.0, 16000).into()))
        .await
        .unwrap();
    ws.send(Message::Text(r#"{"type":"stop"}"#.into()))
        .await
        .unwrap();
    let fin = next_json(&mut ws).await;
    assert_eq!(fin["type"], "final");
    assert_eq!(fin["end"], 1.0);
    assert_eq!(next_json(&mut ws).await["type"], "usage");
    let g = get(
        &h,
        &format!("/v1/realtime/transcriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert!(
        g.body.get("transcript").is_none(),
        "no transcript without finalPass"
    );
}

#[tokio::test]
async fn second_connect_with_the_same_ticket_is_ticket_used_4401() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({})).await;
    let url = s["url"].as_str().unwrap();
    let (mut first, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    assert_eq!(next_json(&mut first).await["type"], "open");
    let (mut second, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("accepted at the WebSocket level");
    let e = next_json(&mut second).await;
    assert_eq!(e["type"], "error");
    assert_eq!(e["code"], "ticket_used");
    assert_eq!(close_code(&mut second).await, Some(4401));
}

#[tokio::test]
async fn unknown_ticket_is_ticket_invalid_and_expired_ticket_is_ticket_expired() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let (mut ws, _) = tokio_tungstenite::connect_async(format!(
        "ws://{}/v1/realtime/socket?ticket=tkt_nope",
        h.addr
    ))
    .await
    .unwrap();
    assert_eq!(next_json(&mut ws).await["code"], "ticket_invalid");
    assert_eq!(close_code(&mut ws).await, Some(4401));
    let s = session(&h, json!({})).await;
    post(&h, "/__emulator/clock/advance", json!({"seconds": 301})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(next_json(&mut ws).await["code"], "ticket_expired");
    assert_eq!(close_code(&mut ws).await, Some(4401));
    let g = get(
        &h,
        &format!("/v1/realtime/transcriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(
        g.body["credits"], 5,
        "an unconnected session that expires costs 5"
    );
}

#[tokio::test]
async fn odd_byte_frame_is_invalid_audio_frame() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    next_json(&mut ws).await;
    ws.send(Message::Binary(vec![1u8, 2, 3].into()))
        .await
        .unwrap();
    let e = next_json(&mut ws).await;
    assert_eq!(e["code"], "invalid_audio_frame");
}

#[tokio::test]
async fn idle_socket_closes_4408_idle_timeout() {
    let h = start(&["--time-scale", "0.01"]).await; // 30 s x 0.01 = 300 ms
    let s = session(&h, json!({})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    next_json(&mut ws).await;
    let e = next_json(&mut ws).await;
    assert_eq!(e["code"], "idle_timeout");
    assert_eq!(close_code(&mut ws).await, Some(4408));
}

#[tokio::test]
async fn joining_costs_5_credits_and_each_started_minute_2() {
    let h = start(&["--control", "--time-scale", "0.1"]).await; // idle limit 3 s
    let s = session(&h, json!({"sampleRate": 8000})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(s["url"].as_str().unwrap())
        .await
        .unwrap();
    next_json(&mut ws).await;
    let silence = vec![0u8; 8000 * 2 * 61]; // 61 s of audio: 2 started minutes
    for c in silence.chunks(16000) {
        ws.send(Message::Binary(c.to_vec().into())).await.unwrap();
    }
    ws.send(Message::Text(r#"{"type":"stop"}"#.into()))
        .await
        .unwrap();
    let u = next_json(&mut ws).await;
    assert_eq!(
        u,
        json!({"type": "usage", "startedMinutes": 2, "credits": 9})
    );
}
