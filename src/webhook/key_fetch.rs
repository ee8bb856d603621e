//! Who fetches the key set, and what a lookup does meanwhile: the sans-IO steps of finding a key through a remote
//! [`KeyCache`], with one fetch in flight at a time.
//!
//! The I/O layer drives one lookup ([`KeySearch`]) with this loop:
//!
//! ```text
//! loop {
//!     match search.next(&cache, &mut gate, kid, now, now_ms, timeout_ms) {
//!         KeyStep::Use(key) => break verify with key,
//!         KeyStep::Fail(e) => return e,
//!         KeyStep::Fetch(flight) => { fetch (bounded by timeout_ms); cache.on_response(..); gate.finish(flight);
//!                                     report to the waiters; search.on_fetched() }
//!         KeyStep::Wait { until_ms } => { wait for the report, or until until_ms; search.on_waited(reported) }
//!     }
//! }
//! ```
//!
//! Rules:
//! - a lookup that finds a fetch in flight joins it first: the fetch's outcome is what it needs (the cooldown would
//!   otherwise answer "unavailable" to a call that arrives while the first fetch is running);
//! - a waiter waits at most until the flight's deadline (its start plus the fetch timeout, on the real clock). A
//!   fetcher that is alive settles by then (its own timeout fails it); one that never reports belonged to a request
//!   that ended (edge runtimes such as workerd cancel an ended request's I/O, and forbid another request to wait on
//!   it). The waiter then fetches in its own request, past the cooldown (the abandoned attempt never answered);
//!   waiters that gave up on the same flight join that new fetch rather than each starting one;
//! - after a fetch (its own or one it joined) a lookup does not ask to fetch again: the cache answers found,
//!   `unknown_key` or `jwks_unavailable` ([`KeyCache::lookup`] with `after_fetch`).
//!
//! Only plain data is shared between requests (this state and the cache), plus the fetcher's "reported" signal;
//! each request waits on its own timer and does its I/O in its own context.

use super::error::{WebhookError, JWKS_UNAVAILABLE, UNKNOWN_KEY};
use super::jwk::PublicKey;
use super::key_cache::{KeyCache, Lookup};

/// How long past a flight's deadline a waiter still waits for the fetcher's report, in milliseconds (the fetcher's
/// own timeout and the waiter's timer fire at nearly the same moment).
pub const REPORT_GRACE_MS: f64 = 50.0;

/// How many flights a lookup waits out before it fetches whatever is in flight.
pub const MAX_WAITS: u8 = 2;

/// Identifies one fetch of the key set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlightId(u64);

#[derive(Clone, Copy, Debug)]
struct Flight {
    id: FlightId,
    deadline_ms: f64,
}

/// The fetch in flight, if any: shared by every lookup of one verifier.
#[derive(Debug, Default)]
pub struct FetchGate {
    flight: Option<Flight>,
    started: u64,
}

/// What a caller that needs the key set does now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Turn {
    /// Fetch it (this caller owns the flight).
    Fetch(FlightId),
    /// Wait for the fetch in flight to report, at most until `until_ms` (real clock, milliseconds).
    Wait {
        /// When to stop waiting.
        until_ms: f64,
    },
}

impl FetchGate {
    /// The deadline of the fetch in flight, when one is live at `now_ms`.
    pub fn in_flight(&self, now_ms: f64) -> Option<f64> {
        self.flight
            .filter(|f| now_ms < f.deadline_ms)
            .map(|f| f.deadline_ms)
    }

    /// Joins the live fetch, or starts one (replacing a flight past its deadline, which will never report).
    pub fn turn(&mut self, now_ms: f64, timeout_ms: f64) -> Turn {
        match self.in_flight(now_ms) {
            Some(deadline_ms) => Turn::Wait {
                until_ms: deadline_ms + REPORT_GRACE_MS,
            },
            None => Turn::Fetch(self.start(now_ms, timeout_ms)),
        }
    }

    /// Starts a fetch whatever is in flight (a caller that gave up waiting).
    pub fn start(&mut self, now_ms: f64, timeout_ms: f64) -> FlightId {
        self.started += 1;
        let id = FlightId(self.started);
        self.flight = Some(Flight {
            id,
            deadline_ms: now_ms + timeout_ms,
        });
        id
    }

    /// The fetch `id` reported (success or failure). A flight that was replaced leaves the current one alone.
    pub fn finish(&mut self, id: FlightId) {
        if self.flight.is_some_and(|f| f.id == id) {
            self.flight = None;
        }
    }
}

/// Answer of [`KeySearch::next`].
#[derive(Debug)]
pub enum KeyStep<'a> {
    /// Verify with this key.
    Use(&'a PublicKey),
    /// Fetch the key set (this lookup owns the flight), then call [`KeySearch::on_fetched`].
    Fetch(FlightId),
    /// Wait for the fetch in flight, then call [`KeySearch::on_waited`].
    Wait {
        /// When to stop waiting (real clock, milliseconds).
        until_ms: f64,
    },
    /// The lookup failed: `unknown_key` or `jwks_unavailable`.
    Fail(WebhookError),
}

/// One lookup of a `kid` in progress.
#[derive(Debug, Default)]
pub struct KeySearch {
    joined_first: bool,
    after_fetch: bool,
    must_fetch: bool,
    waits: u8,
}

impl KeySearch {
    /// A new lookup.
    pub fn new() -> Self {
        Self::default()
    }

    /// A forced refresh (`refreshKeys()`): fetches (or joins the fetch in flight) whatever the cache says.
    pub fn refresh() -> Self {
        Self {
            joined_first: true,
            must_fetch: true,
            ..Self::default()
        }
    }

    /// The next step of the lookup. `now` is the verifier's clock (seconds, for the cache), `now_ms` the real clock
    /// (milliseconds, for fetch deadlines). A forced refresh answers `Use` only with its `kid` found, so pass `""`
    /// and treat `Fail` after a fetch as done.
    pub fn next<'c>(
        &mut self,
        cache: &'c KeyCache,
        gate: &mut FetchGate,
        kid: &str,
        now: f64,
        now_ms: f64,
        timeout_ms: f64,
    ) -> KeyStep<'c> {
        if !self.joined_first {
            self.joined_first = true;
            if let Some(deadline_ms) = gate.in_flight(now_ms) {
                self.waits += 1;
                return KeyStep::Wait {
                    until_ms: deadline_ms + REPORT_GRACE_MS,
                };
            }
        }
        if self.must_fetch && cache.can_refresh() {
            return self.fetch_turn(gate, now_ms, timeout_ms);
        }
        match cache.lookup(kid, now, self.after_fetch) {
            Lookup::Found(key) => KeyStep::Use(key),
            Lookup::Unknown => KeyStep::Fail(UNKNOWN_KEY),
            Lookup::Unavailable => KeyStep::Fail(JWKS_UNAVAILABLE),
            Lookup::Fetch => self.fetch_turn(gate, now_ms, timeout_ms),
        }
    }

    fn fetch_turn<'c>(
        &mut self,
        gate: &mut FetchGate,
        now_ms: f64,
        timeout_ms: f64,
    ) -> KeyStep<'c> {
        if self.waits >= MAX_WAITS {
            return KeyStep::Fetch(gate.start(now_ms, timeout_ms));
        }
        match gate.turn(now_ms, timeout_ms) {
            Turn::Fetch(id) => KeyStep::Fetch(id),
            Turn::Wait { until_ms } => {
                self.waits += 1;
                KeyStep::Wait { until_ms }
            }
        }
    }

    /// This lookup's own fetch reported (success or failure; the cache holds the outcome).
    pub fn on_fetched(&mut self) {
        self.after_fetch = true;
        self.must_fetch = false;
    }

    /// The wait is over: `woken` when a fetch reported, `false` when the wait ran out (the fetcher never reported:
    /// its request ended). Then this lookup fetches itself, past the cooldown.
    pub fn on_waited(&mut self, woken: bool) {
        if woken {
            self.after_fetch = true;
            self.must_fetch = false;
        } else {
            self.must_fetch = true;
        }
    }

    /// Whether the lookup has seen a fetch report (for a forced refresh: it is done).
    pub fn fetched(&self) -> bool {
        self.after_fetch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::key_cache::{DEFAULT_COOLDOWN, DEFAULT_TTL};
    use crate::webhook::ErrorCode;

    const JWKS: &str = r#"{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k1"}]}"#;
    const TIMEOUT: f64 = 5000.0;

    fn remote() -> KeyCache {
        KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN)
    }

    fn answer(cache: &mut KeyCache, now: f64) {
        cache.on_response(now, 200, None, JWKS.as_bytes()).unwrap();
    }

    fn fetch_id(step: KeyStep<'_>) -> FlightId {
        match step {
            KeyStep::Fetch(id) => id,
            other => panic!("expected Fetch, got {other:?}"),
        }
    }

    fn wait_until(step: KeyStep<'_>) -> f64 {
        match step {
            KeyStep::Wait { until_ms } => until_ms,
            other => panic!("expected Wait, got {other:?}"),
        }
    }

    #[test]
    fn the_first_lookup_fetches_and_concurrent_ones_wait_for_it() {
        let mut cache = remote();
        let mut gate = FetchGate::default();
        let mut a = KeySearch::new();
        let flight = fetch_id(a.next(&cache, &mut gate, "k1", 0.0, 0.0, TIMEOUT));
        cache.on_fetch_started(0.0);
        let mut b = KeySearch::new();
        let until = wait_until(b.next(&cache, &mut gate, "k1", 0.0, 10.0, TIMEOUT));
        assert_eq!(
            until,
            TIMEOUT + REPORT_GRACE_MS,
            "bounded by the fetch's deadline"
        );
        answer(&mut cache, 0.0);
        gate.finish(flight);
        a.on_fetched();
        b.on_waited(true);
        assert!(matches!(
            a.next(&cache, &mut gate, "k1", 0.0, 20.0, TIMEOUT),
            KeyStep::Use(_)
        ));
        assert!(matches!(
            b.next(&cache, &mut gate, "k1", 0.0, 20.0, TIMEOUT),
            KeyStep::Use(_)
        ));
    }

    #[test]
    fn a_lookup_joins_a_fetch_in_flight_even_with_fresh_keys() {
        let mut cache = remote();
        answer(&mut cache, 0.0);
        let mut gate = FetchGate::default();
        gate.start(0.0, TIMEOUT);
        let mut s = KeySearch::new();
        wait_until(s.next(&cache, &mut gate, "k1", 0.0, 1.0, TIMEOUT));
        s.on_waited(true);
        assert!(matches!(
            s.next(&cache, &mut gate, "k1", 0.0, 2.0, TIMEOUT),
            KeyStep::Use(_)
        ));
    }

    #[test]
    fn a_waiter_whose_fetcher_never_reports_fetches_itself_past_the_cooldown() {
        let mut cache = remote();
        let mut gate = FetchGate::default();
        let mut a = KeySearch::new();
        let abandoned = fetch_id(a.next(&cache, &mut gate, "k1", 0.0, 0.0, TIMEOUT));
        cache.on_fetch_started(0.0);
        // Request A ends: its fetch is cancelled and never reports.
        let mut b = KeySearch::new();
        let until = wait_until(b.next(&cache, &mut gate, "k1", 0.0, 100.0, TIMEOUT));
        b.on_waited(false);
        // The cooldown alone would answer jwks_unavailable here.
        assert!(matches!(cache.lookup("k1", 1.0, true), Lookup::Unavailable));
        let own = fetch_id(b.next(&cache, &mut gate, "k1", 1.0, until, TIMEOUT));
        assert_ne!(own, abandoned);
        cache.on_fetch_started(1.0);
        answer(&mut cache, 1.0);
        gate.finish(abandoned);
        assert!(
            gate.in_flight(until).is_some(),
            "a late report of the old flight leaves the new one"
        );
        gate.finish(own);
        b.on_fetched();
        assert!(matches!(
            b.next(&cache, &mut gate, "k1", 1.0, until + 1.0, TIMEOUT),
            KeyStep::Use(_)
        ));
    }

    #[test]
    fn waiters_that_gave_up_on_one_flight_share_the_next() {
        let cache = remote();
        let mut gate = FetchGate::default();
        gate.start(0.0, TIMEOUT);
        let (mut b, mut c) = (KeySearch::new(), KeySearch::new());
        let until = wait_until(b.next(&cache, &mut gate, "k1", 0.0, 1.0, TIMEOUT));
        wait_until(c.next(&cache, &mut gate, "k1", 0.0, 1.0, TIMEOUT));
        b.on_waited(false);
        c.on_waited(false);
        fetch_id(b.next(&cache, &mut gate, "k1", 0.0, until, TIMEOUT));
        let second = wait_until(c.next(&cache, &mut gate, "k1", 0.0, until, TIMEOUT));
        c.on_waited(false);
        assert!(
            matches!(
                c.next(&cache, &mut gate, "k1", 0.0, second, TIMEOUT),
                KeyStep::Fetch(_)
            ),
            "after MAX_WAITS flights that never reported, a lookup fetches itself"
        );
    }

    #[test]
    fn after_a_joined_fetch_an_unknown_kid_is_unknown_key() {
        let mut cache = remote();
        let mut gate = FetchGate::default();
        let flight = gate.start(0.0, TIMEOUT);
        cache.on_fetch_started(0.0);
        let mut s = KeySearch::new();
        wait_until(s.next(&cache, &mut gate, "nope", 0.0, 1.0, TIMEOUT));
        answer(&mut cache, 0.0);
        gate.finish(flight);
        s.on_waited(true);
        match s.next(&cache, &mut gate, "nope", 0.0, 2.0, TIMEOUT) {
            KeyStep::Fail(e) => assert_eq!(e.code(), ErrorCode::UnknownKey),
            other => panic!("expected unknown_key, got {other:?}"),
        }
    }

    #[test]
    fn a_failed_fetch_without_keys_is_jwks_unavailable() {
        let mut cache = remote();
        let mut gate = FetchGate::default();
        let mut s = KeySearch::new();
        let flight = fetch_id(s.next(&cache, &mut gate, "k1", 0.0, 0.0, TIMEOUT));
        cache.on_fetch_started(0.0);
        assert!(cache.on_response(0.0, 503, None, b"").is_err());
        gate.finish(flight);
        s.on_fetched();
        match s.next(&cache, &mut gate, "k1", 0.0, 1.0, TIMEOUT) {
            KeyStep::Fail(e) => assert_eq!(e.code(), ErrorCode::JwksUnavailable),
            other => panic!("expected jwks_unavailable, got {other:?}"),
        }
    }

    #[test]
    fn a_forced_refresh_fetches_within_the_cooldown_and_joins_a_live_flight() {
        let mut cache = remote();
        answer(&mut cache, 0.0);
        cache.on_fetch_started(0.0);
        let mut gate = FetchGate::default();
        let mut r = KeySearch::refresh();
        let flight = fetch_id(r.next(&cache, &mut gate, "", 1.0, 0.0, TIMEOUT));
        let mut r2 = KeySearch::refresh();
        wait_until(r2.next(&cache, &mut gate, "", 1.0, 1.0, TIMEOUT));
        gate.finish(flight);
        r.on_fetched();
        r2.on_waited(true);
        assert!(r.fetched() && r2.fetched());
    }

    #[test]
    fn static_keys_never_fetch_or_wait() {
        let keys = crate::webhook::jwk::KeySet::from_json(JWKS.as_bytes()).unwrap();
        let cache = KeyCache::fixed(keys);
        let mut gate = FetchGate::default();
        let mut s = KeySearch::new();
        assert!(matches!(
            s.next(&cache, &mut gate, "k1", 0.0, 0.0, TIMEOUT),
            KeyStep::Use(_)
        ));
        let mut s = KeySearch::new();
        assert!(matches!(
            s.next(&cache, &mut gate, "k2", 0.0, 0.0, TIMEOUT),
            KeyStep::Fail(_)
        ));
    }
}
