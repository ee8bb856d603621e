//! Shared application state: configuration, clock, store, signer, limiter and injected faults.

use crate::agents::Agent;
use crate::config::Config;
use crate::http_client::HttpClient;
use crate::signing::Signer;
use crate::state::State;
use crate::util::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
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
}

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
    /// Outgoing client.
    pub http: HttpClient,
    dirty: AtomicBool,
    persist_lock: tokio::sync::Mutex<()>,
}

/// Shared handle.
pub type Shared = Arc<App>;

impl App {
    /// Builds the app around a loaded state.
    pub fn new(config: Config, base_url: String, agents: Vec<Agent>, mut state: State) -> App {
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
            http: HttpClient::default(),
            dirty: AtomicBool::new(true),
            persist_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// Emulator clock in unix milliseconds (wall clock plus the control offset).
    pub fn now_ms(&self) -> i64 {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        wall + self.clock_offset_ms.load(Ordering::SeqCst)
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

    /// Marks the state as changed (it is written before the answer leaves).
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Writes the state file if `--state` is set and something changed.
    ///
    /// # Errors
    /// The I/O error text.
    pub async fn persist(&self) -> Result<(), String> {
        let Some(path) = self.config.state.clone() else {
            return Ok(());
        };
        let _guard = self.persist_lock.lock().await;
        if !self.dirty.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let bytes = {
            let st = lock(&self.state);
            serde_json::to_vec(&*st).map_err(|e| e.to_string())?
        };
        let tmp = path.with_extension("tmp");
        let res = async {
            tokio::fs::write(&tmp, &bytes).await?;
            tokio::fs::rename(&tmp, &path).await
        }
        .await;
        if let Err(e) = res {
            self.dirty.store(true, Ordering::SeqCst);
            return Err(format!("cannot write state file: {e}"));
        }
        Ok(())
    }
}

/// Reads a state file (missing file: empty state).
///
/// # Errors
/// The file exists but is not a state file.
pub fn load_state(path: &std::path::Path) -> Result<State, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "--state: {} is not an emulator state file: {e}",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(format!("--state: cannot read {}: {e}", path.display())),
    }
}
