//! Realtime sockets driven by the JS side (`startEmulator`'s server upgrades, then hands every frame in;
//! `emulator.WebSocket` hands its frames in without a network): frames come in over a channel; frames go out through
//! the JS `send(text)` and `close(code, reason)` functions, kept in this thread's table under the socket's key. The
//! route itself ([`socket`]) cannot upgrade an in-process request.

use crate::error::ApiError;
use crate::host::{Frame, Socket};
use axum::http::StatusCode;
use js_sys::Function;
use std::cell::RefCell;
use std::collections::HashMap;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use wasm_bindgen::JsValue;

/// `GET /v1/realtime/socket` through `Emulator::handle`: an in-process request cannot become a WebSocket (the
/// JS server of `startEmulator` upgrades before it reaches here; `emulator.WebSocket` connects without a request).
pub async fn socket() -> ApiError {
    ApiError::new(
        StatusCode::UPGRADE_REQUIRED,
        "websocket_unavailable",
        "createEmulator's fetch cannot upgrade a request to a WebSocket: connect with emulator.WebSocket \
         (in-process), or use a listening emulator (startEmulator() or npx docauto-emulator)",
    )
}

struct Peer {
    frames: Option<UnboundedSender<Frame>>,
    send: Function,
    close: Function,
}

thread_local! {
    static SOCKETS: RefCell<(u32, HashMap<u32, Peer>)> = RefCell::new((0, HashMap::new()));
}

/// The emulator's end of a socket served by JS.
pub struct JsSocket {
    key: u32,
    frames: UnboundedReceiver<Frame>,
}

/// Registers a socket whose frames go out through `send` and `close`; returns its key and the emulator's end.
pub fn open(send: Function, close: Function) -> Option<(u32, JsSocket)> {
    let (tx, rx) = unbounded_channel();
    SOCKETS.with(|t| {
        let mut t = t.try_borrow_mut().ok()?;
        t.0 = t.0.wrapping_add(1);
        let key = t.0;
        t.1.insert(
            key,
            Peer {
                frames: Some(tx),
                send,
                close,
            },
        );
        Some((key, JsSocket { key, frames: rx }))
    })
}

/// Hands a frame from the peer to the socket's reader (ignored once the socket ended).
pub fn frame(key: u32, f: Frame) {
    SOCKETS.with(|t| {
        if let Some(tx) = t
            .try_borrow()
            .ok()
            .and_then(|t| t.1.get(&key).and_then(|p| p.frames.clone()))
        {
            let _ = tx.send(f);
        }
    });
}

/// The peer closed: the reader sees the end of the frames.
pub fn closed(key: u32) {
    SOCKETS.with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            if let Some(p) = t.1.get_mut(&key) {
                p.frames = None;
            }
        }
    });
}

fn call(key: u32, which: impl FnOnce(&Peer) -> Result<JsValue, JsValue>) -> bool {
    SOCKETS.with(|t| {
        // the JS functions are called with the table released: they may call back in (`socketClosed`)
        let peer = t.try_borrow().ok().and_then(|t| {
            t.1.get(&key).map(|p| Peer {
                frames: None,
                send: p.send.clone(),
                close: p.close.clone(),
            })
        });
        peer.is_some_and(|p| which(&p).is_ok())
    })
}

impl Socket for JsSocket {
    async fn recv(&mut self) -> Option<Frame> {
        self.frames.recv().await
    }

    async fn send_text(&mut self, text: String) -> bool {
        call(self.key, |p| {
            p.send.call1(&JsValue::NULL, &JsValue::from_str(&text))
        })
    }

    async fn close(&mut self, code: u16, reason: &str) {
        call(self.key, |p| {
            p.close.call2(
                &JsValue::NULL,
                &JsValue::from(code),
                &JsValue::from_str(reason),
            )
        });
    }
}

impl Drop for JsSocket {
    fn drop(&mut self) {
        SOCKETS.with(|t| {
            if let Ok(mut t) = t.try_borrow_mut() {
                t.1.remove(&self.key);
            }
        });
    }
}
