//! The realtime socket route of the listener: `GET /v1/realtime/socket` upgraded to an axum WebSocket, whose
//! protocol is [`crate::realtime::run_socket`]'s.

use crate::app::Shared;
use crate::host::{Frame, Socket};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State as AxState};
use axum::response::Response;

/// `GET /v1/realtime/socket?ticket=...`: always upgrades; ticket problems are reported in the socket.
pub async fn socket(
    AxState(app): AxState<Shared>,
    RawQuery(q): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    let ticket = crate::realtime::ticket_of(q.as_deref());
    ws.on_upgrade(move |socket| crate::realtime::run_socket(app, ticket, Upgraded(socket)))
}

/// An upgraded axum WebSocket.
struct Upgraded(WebSocket);

impl Socket for Upgraded {
    async fn recv(&mut self) -> Option<Frame> {
        match self.0.recv().await? {
            Ok(Message::Text(t)) => Some(Frame::Text(t.as_str().to_owned())),
            Ok(Message::Binary(b)) => Some(Frame::Binary(b)),
            Ok(Message::Ping(_) | Message::Pong(_)) => Some(Frame::Control),
            Ok(Message::Close(_)) | Err(_) => None,
        }
    }

    async fn send_text(&mut self, text: String) -> bool {
        self.0.send(Message::Text(text.into())).await.is_ok()
    }

    async fn close(&mut self, code: u16, reason: &str) {
        let _ = self
            .0
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: reason.to_owned().into(),
            })))
            .await;
    }
}
