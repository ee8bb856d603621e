//! The listener: binds, serves the router over HTTP/1.1 (hyper through axum) until stopped, and upgrades the
//! realtime socket route to a WebSocket whose protocol is [`crate::realtime::run_socket`]'s.

use crate::app::{App, Shared};
use crate::config::Config;
use crate::host::{Frame, Host, Socket};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State as AxState};
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::Arc;

/// A running emulator.
pub struct Handle {
    /// The bound address (useful with port 0).
    pub addr: SocketAddr,
    /// Shared state (tests may inspect it).
    pub app: Shared,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Handle {
    /// `http://ADDR`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets requests in flight end, and writes the state file.
    ///
    /// # Errors
    /// The state file could not be written.
    pub async fn shutdown(mut self) -> Result<(), String> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
        self.app.request_snapshot();
        self.app.persist().await
    }
}

/// Binds and serves in the background.
///
/// # Errors
/// A message when the address cannot be bound, an agent file or the state file is invalid.
pub async fn serve(config: Config) -> Result<Handle, String> {
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| format!("--addr {}: cannot bind: {e}", config.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let agents = crate::agents::load(super::read_agents(config.agents_dir.as_deref())?)?;
    let state = match &config.state {
        Some(p) => super::load_state(p)?,
        None => crate::state::State::default(),
    };
    let host = Host::new(config.ca_file.as_deref())?;
    let app = Arc::new(App::new(
        config,
        format!("http://{addr}"),
        agents,
        state,
        host,
    ));
    app.start()?;
    let router = crate::router(app.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    Ok(Handle {
        addr,
        app,
        shutdown: Some(tx),
        task,
    })
}

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
