//! The emulator's one door to the world: the clock, timers, spawned work, outgoing HTTP, randomness, the listener
//! and the realtime socket, and the files of `--state` and `--agents`. Everything else in the crate (handlers, state
//! machines, rules) is the pure emulator, the same source on every target; it reaches the world only through the
//! items here.
//!
//! Two hosts, chosen by target, with the same names (a reader who knows one finds the other):
//! - `native` (every target but wasm32): tokio's clock, timers, tasks and threads; the axum listener and WebSocket on
//!   hyper; the outgoing client on hyper with rustls; the durable state files.
//! - `wasm` (wasm32): the JS runtime's `Date.now` and `setTimeout`, `spawn_local`, the runtime's `fetch` (handed in
//!   by the JS glue, so TLS is the host's; webhook deliveries may go to a JS handler instead), `crypto.getRandomValues`;
//!   no listener (the JS side serves, see `host::wasm::serve`) and no files (the state goes in and out as a snapshot).
//!
//! | item | native | wasm |
//! |---|---|---|
//! | [`now_ms`], `Instant` | `SystemTime`, `std::time::Instant` | `Date.now()` |
//! | [`sleep`], [`timeout`] | tokio timers | `setTimeout`, a `Send` future holding no JS value |
//! | [`blocking`] | `spawn_blocking` | runs inline (one thread) |
//! | `Host::spawn` | `tokio::spawn` | `spawn_local`, aborted by `close()` |
//! | `Host::send` | hyper + rustls | the runtime's `fetch` |
//! | `Host::deliver` | `Host::send` | the runtime's `fetch`, or the `deliver` handler of `createEmulator` |
//! | [`rng`], [`OsRng`] | the OS | `crypto.getRandomValues` (getrandom's JS backends) |
//! | `serve`, `socket` | TCP listener, axum WebSocket | the exported `Emulator` (a fetch-shaped handler), sockets driven by JS |
//! | `Store` | snapshot + `fdatasync`ed journal | none: `snapshot()` hands the state out |
//!
//! The host sits on both sides of the emulator: its primitives (clock, timers, `Host`, `Store`) are below the shared
//! state (`crate::app`), which holds them; its doors (`serve`, `socket`) are above the router, which they serve. No
//! primitive imports the app or a route.

use axum::http::HeaderMap;
use bytes::Bytes;
use std::future::Future;

#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(not(target_arch = "wasm32"))]
pub use native::*;

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(target_arch = "wasm32")]
pub use wasm::*;

/// Largest body read from a remote (25 MiB).
pub const MAX_BODY: usize = 25 * 1024 * 1024;

/// An answer from a remote.
#[derive(Debug)]
pub struct Fetched {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes (at most [`MAX_BODY`]).
    pub body: Bytes,
}

/// Why a request failed before an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The URL is not a usable `http://` URL.
    BadUrl(String),
    /// Connection refused, reset or timed out.
    Unreachable(String),
    /// The body was larger than [`MAX_BODY`].
    TooLarge,
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::BadUrl(m) | FetchError::Unreachable(m) => f.write_str(m),
            FetchError::TooLarge => f.write_str("body larger than 25 MiB"),
        }
    }
}

/// The URL of an outgoing request (a document fetch, a webhook delivery), checked the same way by both hosts.
///
/// # Errors
/// [`FetchError::BadUrl`] when it does not parse or is not `http`/`https`.
pub fn outgoing_uri(url: &str) -> Result<axum::http::Uri, FetchError> {
    let uri: axum::http::Uri = url
        .parse()
        .map_err(|_| FetchError::BadUrl("not a valid URL".into()))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => Ok(uri),
        _ => Err(FetchError::BadUrl("URL must be http or https".into())),
    }
}

/// A [`timeout`] passed before its future finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

/// A frame read from a realtime socket.
#[derive(Debug)]
pub enum Frame {
    /// A text frame.
    Text(String),
    /// A binary frame.
    Binary(Bytes),
    /// A ping or pong: no meaning to the protocol, but it is a frame (it resets the idle limit).
    Control,
}

/// A connected realtime socket, as [`crate::realtime::run_socket`] reads and writes it.
pub trait Socket: Send {
    /// The next frame; `None` when the peer closed the socket or it failed.
    fn recv(&mut self) -> impl Future<Output = Option<Frame>> + Send;
    /// Sends a text frame; `false` when the socket is gone.
    fn send_text(&mut self, text: String) -> impl Future<Output = bool> + Send;
    /// Sends a close frame with a code and a reason.
    fn close(&mut self, code: u16, reason: &str) -> impl Future<Output = ()> + Send;
}

/// Randomness for ids: natively seeded from the OS, on wasm from `crypto.getRandomValues` (getrandom's JS backends,
/// selected in Cargo.toml).
pub fn rng() -> rand::rngs::ThreadRng {
    rand::thread_rng()
}

/// The OS random source (the signing key), `crypto.getRandomValues` on wasm.
pub use rand::rngs::OsRng;
