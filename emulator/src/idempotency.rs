//! `idempotency-key` on run-creating routes, safe under concurrency.
//!
//! A key is *reserved* (under the state lock, before the handler's first await) and *committed* with the run it
//! created (under the same lock, with the run). A second request with the same key that arrives while the first
//! still works (fetching a file, computing) waits for the reservation to end: it then replays the committed run,
//! or, when the first request failed before creating anything, takes the reservation itself. So one key gives one
//! run however the requests interleave.

use crate::app::Shared;
use crate::util::lock;
use tokio::sync::watch;

/// What a request with a key gets.
pub enum Claim {
    /// The key already names this run: answer with it (`idempotent-replay: true`).
    Replay(String),
    /// The key is now this request's; commit it with the run (see [`commit`]) or drop it to release.
    Reserved(Reservation),
}

/// A held reservation; dropping it releases the key (waiters wake up and look again).
pub struct Reservation {
    app: Shared,
    key: String,
    _tx: watch::Sender<()>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        lock(&self.app.state).idem_inflight.remove(&self.key);
    }
}

/// Reserves `key` or finds the run it already names; waits while another request holds it.
pub async fn claim(app: &Shared, key: &str) -> Claim {
    loop {
        let mut rx = {
            let mut st = lock(&app.state);
            if let Some(id) = st.idempotency.get(key) {
                return Claim::Replay(id.clone());
            }
            match st.idem_inflight.get(key) {
                Some(rx) => rx.clone(),
                None => {
                    let (tx, rx) = watch::channel(());
                    st.idem_inflight.insert(key.to_string(), rx);
                    return Claim::Reserved(Reservation {
                        app: app.clone(),
                        key: key.to_string(),
                        _tx: tx,
                    });
                }
            }
        };
        // resolves (with an error) when the holder drops its sender
        while rx.changed().await.is_ok() {}
    }
}

/// Records `key -> run_id` (call with the state lock held, in the same critical section that inserts the run).
pub fn commit(st: &mut crate::state::State, key: Option<String>, run_id: &str) {
    if let Some(k) = key {
        st.idempotency.insert(k, run_id.to_string());
    }
}
