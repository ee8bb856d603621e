//! Shared application state: configuration, clock, store, signer, limiter and injected faults. The bottom of the
//! emulator: the routes (`agents`, `files`, `runs`, `webhooks`, ...) hold it and call it; it calls none of them.

use crate::agent_definitions::Agent;
use crate::config::Config;
use crate::host::{Host, Store};
use crate::signing::Signer;
use crate::state::State;
use crate::util::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// A fault injected through the control API.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// 429 `rate_limited` with this `Retry-After`.
    RateLimited(u64),
    /// 503 `auth_unavailable`.
    AuthUnavailable,
    /// 500 `internal_error`.
    Internal,
    /// Work is done and committed, then the connection is dropped without an answer.
    DropAfterCommit,
    /// The answer is held this many milliseconds.
    Slow(u64),
    /// 422 `ambiguous_capability` (what the service answers when a saved redact action lacks a target).
    AmbiguousCapability,
    /// `upstream_error` with this status (4xx or 5xx), `retryable: false`.
    Upstream(u16),
}

/// Webhook delivery attempts sent at once; the others wait for a slot. Without a bound, a sweep that purges
/// thousands of runs opens one connection per `processing.expired` at the same instant (and the client pool then
/// keeps them all idle with their buffers): under the load check that was the peak of the process's memory.
pub const DELIVERY_CONCURRENCY: usize = 32;

/// The running emulator.
pub struct App {
    /// Configuration.
    pub config: Config,
    /// `http://ADDR` of the bound socket.
    pub base_url: String,
    clock_offset_ms: AtomicI64,
    /// Agents that can run.
    pub agents: Vec<Agent>,
    /// Delivery signer.
    pub signer: Signer,
    /// The store.
    pub state: Mutex<State>,
    limiter: Mutex<HashMap<String, (i64, u32)>>,
    faults: Mutex<Vec<(FaultKind, u32)>>,
    exhausted: Mutex<std::collections::HashSet<String>>,
    /// The host: outgoing HTTP and background work (see [`crate::host`]).
    pub host: Host,
    /// Webhook attempts in flight at once (see [`DELIVERY_CONCURRENCY`]).
    pub delivery_slots: tokio::sync::Semaphore,
    store: Store,
}

/// Shared handle.
pub type Shared = Arc<App>;

impl App {
    /// Builds the app around a loaded state.
    pub fn new(
        config: Config,
        base_url: String,
        agents: Vec<Agent>,
        mut state: State,
        host: Host,
    ) -> App {
        let signer = Signer::from_secret(&state.signing_secret).unwrap_or_else(Signer::generate);
        state.signing_secret = signer.secret();
        App {
            config,
            base_url,
            clock_offset_ms: AtomicI64::new(0),
            agents,
            signer,
            state: Mutex::new(state),
            limiter: Mutex::new(HashMap::new()),
            faults: Mutex::new(Vec::new()),
            exhausted: Mutex::new(std::collections::HashSet::new()),
            host,
            delivery_slots: tokio::sync::Semaphore::new(DELIVERY_CONCURRENCY),
            store: Store::default(),
        }
    }

    /// Emulator clock in unix milliseconds (wall clock plus the control offset).
    pub fn now_ms(&self) -> i64 {
        crate::host::now_ms() + self.clock_offset_ms.load(Ordering::SeqCst)
    }

    /// Moves the emulator clock forward.
    pub fn advance_clock(&self, ms: i64) {
        self.clock_offset_ms.fetch_add(ms.max(0), Ordering::SeqCst);
    }

    /// Current clock offset.
    pub fn clock_offset(&self) -> i64 {
        self.clock_offset_ms.load(Ordering::SeqCst)
    }

    /// A scaled service delay in ms.
    pub fn delay_ms(&self, ms: f64) -> i64 {
        self.config.scaled_ms(ms) as i64
    }

    /// Looks up an agent.
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// Takes one token of the organization's per-minute budget; `false` when it is spent.
    pub fn take_token(&self, org: &str) -> bool {
        let now = self.now_ms();
        let mut lim = lock(&self.limiter);
        let entry = lim.entry(org.to_string()).or_insert((now, 0));
        if now - entry.0 >= 60_000 {
            *entry = (now, 0);
        }
        if entry.1 >= self.config.rate_limit {
            return false;
        }
        entry.1 += 1;
        true
    }

    /// Queues a fault for the next `count` requests.
    pub fn push_fault(&self, kind: FaultKind, count: u32) {
        lock(&self.faults).push((kind, count));
    }

    /// Removes every queued fault.
    pub fn clear_faults(&self) {
        lock(&self.faults).clear();
    }

    /// Takes the fault for this request, if any.
    pub fn next_fault(&self) -> Option<FaultKind> {
        let mut f = lock(&self.faults);
        let first = f.first_mut()?;
        let kind = first.0.clone();
        first.1 = first.1.saturating_sub(1);
        if first.1 == 0 {
            f.remove(0);
        }
        Some(kind)
    }

    /// Marks an organization out of credits (or back in).
    pub fn set_exhausted(&self, org: &str, exhausted: bool) {
        let mut e = lock(&self.exhausted);
        if exhausted {
            e.insert(org.to_string());
        } else {
            e.remove(org);
        }
    }

    /// 422 `run_too_large` when the run's input files together exceed the dispatch budget (`--dispatch-budget`).
    ///
    /// # Errors
    /// The 422 error.
    pub fn check_dispatch_budget(&self, total_bytes: u64) -> Result<(), crate::error::ApiError> {
        if total_bytes > self.config.dispatch_budget {
            return Err(crate::error::ApiError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "run_too_large",
                format!(
                    "files: the run's input ({total_bytes} bytes) exceeds the dispatch budget of {} bytes",
                    self.config.dispatch_budget
                ),
            ));
        }
        Ok(())
    }

    /// 402 `credits_exhausted` when the organization is out of credits (checked before anything starts).
    ///
    /// # Errors
    /// The 402 error.
    pub fn check_credits(&self, org: &str) -> Result<(), crate::error::ApiError> {
        if lock(&self.exhausted).contains(org) {
            return Err(crate::error::ApiError::new(
                axum::http::StatusCode::PAYMENT_REQUIRED,
                "credits_exhausted",
                "the organization is out of credits; nothing was started or charged",
            ));
        }
        Ok(())
    }

    /// The next [`App::persist`] writes a whole snapshot and empties the journal (a clean stop).
    pub fn request_snapshot(&self) {
        self.store.request_snapshot();
    }

    /// Opens the `--state` store: writes a snapshot of the loaded state (with the signing key) and an empty journal.
    ///
    /// # Errors
    /// The I/O error text.
    pub fn open_store(&self) -> Result<(), String> {
        match &self.config.state {
            Some(path) => self.store.open(path, &self.state),
            None => Ok(()),
        }
    }

    /// Makes every change so far durable (`--state`; see [`crate::store`]); without it, only forgets the change
    /// marks. Concurrent callers queue; each returns once its changes are on disk.
    ///
    /// # Errors
    /// The I/O error text.
    pub async fn persist(&self) -> Result<(), String> {
        self.store
            .persist(self.config.state.as_deref(), &self.state)
            .await
    }
}
