//! The listener: binds and serves the router over HTTP/1.1 (hyper through axum) until stopped; its realtime socket
//! route upgrades (`socket`).

use crate::app::{App, Shared};
use crate::config::Config;
use crate::host::Host;
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
    let agents = crate::agent_definitions::load(super::read_agents(config.agents_dir.as_deref())?)?;
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
    crate::start(&app)?;
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
