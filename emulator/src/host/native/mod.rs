//! The native host: tokio's clock, timers, tasks and threads; the listener (`serve`) and its WebSocket (`socket`);
//! the outgoing client on hyper with rustls (`http`); the `--state` and `--agents` files (`files`).

mod files;
mod http;
mod serve;
mod socket;

pub use files::{load_state, read_agents, write_snapshot, Journal, Store};
pub use http::HttpClient;
pub use serve::{serve, Handle};
pub use socket::socket;
pub use std::time::Instant;

use super::{Elapsed, FetchError, Fetched};
use axum::http::Method;
use bytes::Bytes;
use std::future::Future;
use std::time::Duration;

/// Wall clock in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Waits `d`.
pub fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
    tokio::time::sleep(d)
}

/// Runs `f` for at most `d`.
///
/// # Errors
/// [`Elapsed`] when `d` passed first (`f` is dropped).
pub async fn timeout<F: Future>(d: Duration, f: F) -> Result<F::Output, Elapsed> {
    tokio::time::timeout(d, f).await.map_err(|_| Elapsed)
}

/// Runs CPU-bound work (document processing) off the async threads.
///
/// # Errors
/// The work panicked.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| e.to_string())
}

/// What the emulator holds of its host: the outgoing client, and the runtime its background work is spawned on.
pub struct Host {
    http: HttpClient,
}

impl Host {
    /// A host whose outgoing client also trusts the PEM certificates of `ca_file` (`--ca-file`).
    ///
    /// # Errors
    /// The file cannot be read or holds no PEM certificate.
    pub fn new(ca_file: Option<&std::path::Path>) -> Result<Host, String> {
        Ok(Host {
            http: HttpClient::new(ca_file)?,
        })
    }

    /// Runs `work` in the background (webhook ladders, the ttl sweeper, a capability run's wake-up).
    pub fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        tokio::spawn(work);
    }

    /// Sends one outgoing request (a document fetch, a webhook delivery).
    ///
    /// # Errors
    /// [`FetchError`] when the URL is unusable, the peer unreachable, or the answer too large.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Fetched, FetchError> {
        self.http.send(method, url, headers, body, timeout).await
    }

    /// Sends one webhook delivery (a `POST` of the signed envelope to the endpoint's URL): natively, over the network
    /// as [`Host::send`].
    ///
    /// # Errors
    /// [`FetchError`] when the URL is unusable, the peer unreachable, or the answer too large.
    pub async fn deliver(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Fetched, FetchError> {
        self.send(Method::POST, url, headers, body, timeout).await
    }
}
