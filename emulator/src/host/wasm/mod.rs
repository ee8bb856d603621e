//! The wasm host: the JS runtime's clock (`Date.now`) and timers (`setTimeout`, `timer`), `spawn_local` with every
//! task abortable by `close()`, the runtime's `fetch` handed in by the JS glue (`http`), and the exported `Emulator`
//! the JS side serves requests and sockets through (`serve`). No files: the state comes in and goes out as a snapshot.
//!
//! The handlers' futures must be `Send` (axum requires it), and a JS value is not: every future here holds keys and
//! channels, and the JS values stay in this thread's tables.

mod http;
mod serve;
mod socket;
mod timer;

pub use http::Purpose;
pub use serve::{parse_args, usage, Emulator};
pub use socket::socket;
pub use timer::{sleep, Sleep};

use super::{Elapsed, FetchError, Fetched};
use crate::state::State;
use crate::util::lock;
use axum::http::Method;
use bytes::Bytes;
use futures_util::future::{AbortHandle, Abortable, Either};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Wall clock in unix milliseconds (`Date.now()`).
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// A point in time for deadlines (`Date.now()`; `std::time::Instant` panics on wasm32-unknown-unknown).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Instant(f64);

impl Instant {
    /// Now.
    pub fn now() -> Instant {
        Instant(js_sys::Date::now())
    }

    /// The time from `earlier` to `self`, zero when `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        Duration::from_secs_f64(((self.0 - earlier.0) / 1000.0).max(0.0))
    }
}

impl std::ops::Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d.as_secs_f64() * 1000.0)
    }
}

/// Runs `f` for at most `d`.
///
/// # Errors
/// [`Elapsed`] when `d` passed first (`f` is dropped).
pub async fn timeout<F: Future>(d: Duration, f: F) -> Result<F::Output, Elapsed> {
    let f = std::pin::pin!(f);
    let s = std::pin::pin!(sleep(d));
    match futures_util::future::select(f, s).await {
        Either::Left((v, _)) => Ok(v),
        Either::Right(_) => Err(Elapsed),
    }
}

/// Runs CPU-bound work: inline, the host has one thread.
///
/// # Errors
/// Never (the same signature as natively, where the work runs on a thread that can fail).
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    Ok(f())
}

#[derive(Default)]
struct Tasks {
    next: u64,
    live: HashMap<u64, AbortHandle>,
    closed: bool,
}

/// What the emulator holds of its host: the JS `fetch` it sends through, and every task it started (spawned work
/// and requests in flight), which `close()` aborts.
pub struct Host {
    tasks: Arc<Mutex<Tasks>>,
    fetcher: http::Fetcher,
}

impl Host {
    /// A host sending through `fetch` (the JS glue's `(method, url, headers, body, timeoutMs, maxBytes)` function).
    pub fn new(fetch: js_sys::Function) -> Host {
        Host {
            tasks: Arc::default(),
            fetcher: http::Fetcher::new(fetch),
        }
    }

    /// Runs `work` in the background (webhook ladders, the ttl sweeper, a capability run's wake-up) until it ends or
    /// the emulator closes.
    pub fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.spawn_local(work);
    }

    /// [`Host::spawn`] for work that holds JS values.
    pub(crate) fn spawn_local(&self, work: impl Future<Output = ()> + 'static) {
        let work = self.guard(work);
        wasm_bindgen_futures::spawn_local(async move {
            let _ = work.await;
        });
    }

    /// `f`, aborted (`None`) when the emulator closes; already closed, it never starts.
    pub(crate) fn guard<F: Future>(&self, f: F) -> impl Future<Output = Option<F::Output>> {
        let (handle, registration) = AbortHandle::new_pair();
        let id = {
            let mut t = lock(&self.tasks);
            if t.closed {
                None
            } else {
                t.next += 1;
                let id = t.next;
                t.live.insert(id, handle.clone());
                Some(id)
            }
        };
        if id.is_none() {
            handle.abort();
        }
        let tasks = self.tasks.clone();
        async move {
            let out = Abortable::new(f, registration).await.ok();
            if let Some(id) = id {
                lock(&tasks).live.remove(&id);
            }
            out
        }
    }

    /// Aborts every task (timers are cleared as their futures drop) and refuses new ones.
    pub fn close(&self) {
        let handles: Vec<AbortHandle> = {
            let mut t = lock(&self.tasks);
            t.closed = true;
            t.live.drain().map(|(_, h)| h).collect()
        };
        for h in handles {
            h.abort();
        }
    }

    /// Whether [`Host::close`] was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.tasks).closed
    }

    /// Sends one outgoing request (a document fetch) through the JS host's `fetch`.
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
        self.request(Purpose::Fetch, method, url, headers, body, timeout)
            .await
    }

    /// Sends one webhook delivery (a `POST` of the signed envelope): through the JS host's `fetch`, or to the
    /// `deliver` handler of `createEmulator` when it has one (the glue decides, by the purpose).
    ///
    /// # Errors
    /// [`FetchError`] when the URL is unusable, the peer unreachable (the handler threw), or the answer too large.
    pub async fn deliver(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Fetched, FetchError> {
        self.request(Purpose::Deliver, Method::POST, url, headers, body, timeout)
            .await
    }

    async fn request(
        &self,
        purpose: Purpose,
        method: Method,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Fetched, FetchError> {
        crate::host::outgoing_uri(url)?;
        let call = self
            .fetcher
            .call(purpose, method, url, headers, body, timeout);
        // the JS promise is awaited in a local task; its answer comes back over a channel, so this future stays Send
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.spawn_local(async move {
            let _ = tx.send(call.await);
        });
        rx.await
            .unwrap_or_else(|_| Err(FetchError::Unreachable("the emulator was closed".into())))
    }
}

/// The store: the wasm build keeps no files; `snapshot()` hands the whole state out instead.
#[derive(Default)]
pub struct Store {}

impl Store {
    /// Nothing to do: there is no journal to compact.
    pub fn request_snapshot(&self) {}

    /// Never called: the wasm build has no `--state` path.
    ///
    /// # Errors
    /// Never.
    pub fn open(&self, _path: &std::path::Path, _state: &Mutex<State>) -> Result<(), String> {
        Ok(())
    }

    /// Forgets the change marks (they feed the native journal only).
    ///
    /// # Errors
    /// Never.
    pub async fn persist(
        &self,
        _path: Option<&std::path::Path>,
        state: &Mutex<State>,
    ) -> Result<(), String> {
        crate::store::clear_changes(&mut lock(state));
        Ok(())
    }
}
