//! Deduplication of deliveries: the claim rules, and the default in-memory store that implements them.
//!
//! Webhooks are delivered at least once, and two copies of one event can arrive at the same moment. A receiver
//! handles an `eventId` once by **claiming** it before it acts:
//! 1. [`MemoryDedupe::claim`]: the first caller of an id wins ([`Claim::Won`]); every later caller sees a duplicate,
//!    [`Claim::InProgress`] while the claim is live (answer non-2xx: the service delivers again later) or
//!    [`Claim::Processed`] once confirmed (answer 2xx). A claim lives [`DEFAULT_CLAIM_TTL`] seconds, so a receiver
//!    that crashed between claim and confirm does not block the event: a delivery after that is processed again.
//! 2. [`MemoryDedupe::confirm`] (the verifier's `markProcessed`): the handler acted; the id stays a duplicate for the
//!    store's ttl (default [`DEFAULT_TTL`], a week).
//! 3. [`MemoryDedupe::release`]: the handler failed; the claim is dropped so the service's retry is processed. A
//!    confirmed id is not released.
//!
//! Claim-then-confirm is atomic only where the claim is: this store is, within one process (or isolate). For
//! several instances plug a shared store with an atomic claim (Redis `SET NX`, a Durable Object, a D1 insert) into
//! the JS verifier instead.

use std::collections::{HashMap, VecDeque};

use super::error::{err, ErrorCode, Result, WebhookError};

/// How a dedupe store handed over by the host is used, decided from the methods it has ([`store_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// An atomic claim: `claim(id, ttlSeconds)`, `release(id)`, `add(id, ttlSeconds)`.
    Claims,
    /// Check-then-add (`has(id)`, `add(id)`): racy (two concurrent deliveries both pass `has`), kept so existing
    /// stores keep working.
    CheckThenAdd,
}

/// The kind of a store from the methods it has (`has_method(name)`: the member is a function); a store with
/// `claim` must have all three claim methods.
///
/// # Errors
/// `invalid_options` for a store that is neither kind.
pub fn store_kind(has_method: impl Fn(&str) -> bool) -> Result<StoreKind> {
    let all = |names: &[&str]| names.iter().all(|n| has_method(n));
    if has_method("claim") {
        if all(&["release", "add"]) {
            Ok(StoreKind::Claims)
        } else {
            Err(err(
                ErrorCode::InvalidOptions,
                "a dedupe store with claim() also needs release(id) and add(id)",
            ))
        }
    } else if all(&["has", "add"]) {
        Ok(StoreKind::CheckThenAdd)
    } else {
        Err(err(
            ErrorCode::InvalidOptions,
            "dedupe must be true or a store with claim(id, ttlSeconds), release(id) and add(id)",
        ))
    }
}

/// The refusal of `verifySync` with a store whose `claim()` (or `has()`) answered a promise: it cannot wait.
pub const SYNC_STORE_NEEDED: WebhookError = err(
    ErrorCode::InvalidOptions,
    "verifySync needs a dedupe store whose claim() (or has()) answers at once, not a promise",
);

/// Default number of ids remembered.
pub const DEFAULT_CAPACITY: usize = 10_000;
/// Default time a processed id is remembered, in seconds (agent-run events can be re-sent days later).
pub const DEFAULT_TTL: f64 = 7.0 * 24.0 * 3600.0;
/// Default life of a claim that is neither confirmed nor released, in seconds: a handler has this long to finish.
/// Shorter than the service's retry ladder (attempts about 10, 20, 40 and 80 s apart), so when a handler crashed
/// without releasing its claim, the later attempts of the event are still processed.
pub const DEFAULT_CLAIM_TTL: f64 = 60.0;

/// The outcome of a claim, as a delivery sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This caller won: handle the event, then confirm or release.
    Won,
    /// Another caller holds a live claim: its handler is running (or crashed; the claim lapses). Answer with a
    /// non-2xx status so the service delivers again later, when the outcome is known.
    InProgress,
    /// The event was processed: answer 2xx and do nothing.
    Processed,
}

impl Claim {
    /// Whether the delivery is a duplicate (not the winner).
    pub fn is_duplicate(self) -> bool {
        self != Claim::Won
    }

    /// Reads a claim store's answer: `true` won, the string `"processed"` processed, anything else (`false`) a live
    /// claim of another caller. A store that cannot tell processed from claimed answers `false`: its duplicates are
    /// then retried by the service until they see the mark, which is safe.
    pub fn from_store_answer(text: Option<&str>, truthy: bool) -> Self {
        match text {
            Some("processed") => Claim::Processed,
            _ if truthy => Claim::Won,
            _ => Claim::InProgress,
        }
    }

    /// The answer of a check-then-add store's `has`: such a store only holds processed ids.
    pub fn from_has(seen: bool) -> Self {
        if seen {
            Claim::Processed
        } else {
            Claim::Won
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Claimed,
    Processed,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    state: State,
    until: f64,
    generation: u64,
}

/// A bounded map of claimed and processed event ids, oldest evicted first.
#[derive(Debug)]
pub struct MemoryDedupe {
    capacity: usize,
    ttl: f64,
    claim_ttl: f64,
    entries: HashMap<String, Entry>,
    order: VecDeque<(String, u64, f64)>,
    generation: u64,
}

impl Default for MemoryDedupe {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY, DEFAULT_TTL)
    }
}

impl MemoryDedupe {
    /// A store keeping at most `capacity` ids (at least one), each processed id for `ttl` seconds, each claim for
    /// [`DEFAULT_CLAIM_TTL`] (at most `ttl`).
    pub fn new(capacity: usize, ttl: f64) -> Self {
        Self {
            capacity: capacity.max(1),
            ttl,
            claim_ttl: DEFAULT_CLAIM_TTL.min(ttl),
            entries: HashMap::new(),
            order: VecDeque::new(),
            generation: 0,
        }
    }

    /// Sets how long an unconfirmed claim lives, in seconds (at most the store's ttl).
    pub fn with_claim_ttl(mut self, seconds: f64) -> Self {
        self.claim_ttl = seconds.min(self.ttl);
        self
    }

    /// How long an unconfirmed claim lives, in seconds.
    pub fn claim_ttl(&self) -> f64 {
        self.claim_ttl
    }

    fn live(&self, event_id: &str, now: f64) -> Option<&Entry> {
        self.entries.get(event_id).filter(|e| now < e.until)
    }

    /// Whether `event_id` is claimed or processed at `now` (a delivery of it now would be a duplicate).
    pub fn has(&self, event_id: &str, now: f64) -> bool {
        self.live(event_id, now).is_some()
    }

    /// Claims `event_id` at `now`: [`Claim::Won`] when nothing live held the id, else whether an earlier caller's
    /// claim is live ([`Claim::InProgress`]) or the id was processed ([`Claim::Processed`]).
    pub fn claim(&mut self, event_id: &str, now: f64) -> Claim {
        match self.live(event_id, now).map(|e| e.state) {
            Some(State::Claimed) => Claim::InProgress,
            Some(State::Processed) => Claim::Processed,
            None => {
                self.put(event_id, State::Claimed, now, now + self.claim_ttl);
                Claim::Won
            }
        }
    }

    /// Marks `event_id` processed at `now` (claimed or not): a duplicate for the store's ttl.
    pub fn confirm(&mut self, event_id: &str, now: f64) {
        self.put(event_id, State::Processed, now, now + self.ttl);
    }

    /// Drops a claim on `event_id`, so the next delivery is processed. A processed id stays processed.
    pub fn release(&mut self, event_id: &str) {
        if self
            .entries
            .get(event_id)
            .is_some_and(|e| e.state == State::Claimed)
        {
            self.entries.remove(event_id);
        }
    }

    /// Marks `event_id` processed at `now` (the name of the check-then-add store interface).
    pub fn add(&mut self, event_id: &str, now: f64) {
        self.confirm(event_id, now);
    }

    fn put(&mut self, event_id: &str, state: State, now: f64, until: f64) {
        self.generation += 1;
        let generation = self.generation;
        self.entries.insert(
            event_id.to_owned(),
            Entry {
                state,
                until,
                generation,
            },
        );
        self.order
            .push_back((event_id.to_owned(), generation, until));
        while self.order.len() > self.capacity
            || self
                .order
                .front()
                .is_some_and(|(_, _, until)| now >= *until)
        {
            let Some((id, generation, _)) = self.order.pop_front() else {
                break;
            };
            // Remove only if this entry is the latest mark of the id.
            if self.entries.get(&id).map(|e| e.generation) == Some(generation) {
                self.entries.remove(&id);
            }
        }
    }

    /// Number of ids remembered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_used_by_the_methods_it_has() {
        let with = |names: &'static [&'static str]| store_kind(move |n| names.contains(&n));
        assert_eq!(with(&["claim", "release", "add"]), Ok(StoreKind::Claims));
        assert_eq!(
            with(&["claim", "release", "add", "has"]),
            Ok(StoreKind::Claims)
        );
        assert_eq!(with(&["has", "add"]), Ok(StoreKind::CheckThenAdd));
        for names in [&["claim", "add"][..], &["has"], &[], &["add", "release"]] {
            assert_eq!(
                with(names).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{names:?}"
            );
        }
    }

    #[test]
    fn marked_ids_are_duplicates_until_they_age_out() {
        let mut d = MemoryDedupe::new(10, 100.0);
        assert!(!d.has("evt_1", 0.0));
        d.add("evt_1", 0.0);
        assert!(d.has("evt_1", 99.0));
        assert!(!d.has("evt_1", 100.0));
    }

    #[test]
    fn capacity_bounds_memory_evicting_oldest() {
        let mut d = MemoryDedupe::new(3, 1e9);
        for i in 0..10 {
            d.add(&format!("evt_{i}"), f64::from(i));
        }
        assert_eq!(d.len(), 3);
        assert!(!d.has("evt_6", 10.0));
        assert!(d.has("evt_9", 10.0));
    }

    #[test]
    fn re_marking_an_id_keeps_it() {
        let mut d = MemoryDedupe::new(2, 1e9);
        d.add("a", 0.0);
        d.add("b", 1.0);
        d.add("a", 2.0);
        d.add("c", 3.0);
        assert!(d.has("a", 4.0), "a was re-marked after b");
        assert!(d.has("c", 4.0));
    }

    #[test]
    fn the_first_claim_wins_and_later_claims_are_duplicates() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0), Claim::Won);
        assert_eq!(
            d.claim("evt_1", 0.0),
            Claim::InProgress,
            "a second claim at the same moment"
        );
        assert_eq!(d.claim("evt_1", 10.0), Claim::InProgress);
        assert_eq!(d.claim("evt_2", 10.0), Claim::Won, "claims are per id");
    }

    #[test]
    fn an_unconfirmed_claim_expires_after_the_claim_ttl() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0), Claim::Won);
        assert_eq!(d.claim("evt_1", DEFAULT_CLAIM_TTL - 1.0), Claim::InProgress);
        assert_eq!(
            d.claim("evt_1", DEFAULT_CLAIM_TTL),
            Claim::Won,
            "a crashed handler blocks the event only for the claim ttl"
        );
    }

    #[test]
    fn a_confirmed_claim_is_a_duplicate_for_the_store_ttl() {
        let mut d = MemoryDedupe::new(10, 1000.0).with_claim_ttl(10.0);
        assert_eq!(d.claim("evt_1", 0.0), Claim::Won);
        d.confirm("evt_1", 5.0);
        assert_eq!(
            d.claim("evt_1", 500.0),
            Claim::Processed,
            "confirmed outlives the claim ttl"
        );
        assert_eq!(
            d.claim("evt_1", 1005.0),
            Claim::Won,
            "and ages out with the store ttl"
        );
    }

    #[test]
    fn a_released_claim_lets_the_next_delivery_win() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0), Claim::Won);
        d.release("evt_1");
        assert!(!d.has("evt_1", 1.0));
        assert_eq!(d.claim("evt_1", 1.0), Claim::Won);
    }

    #[test]
    fn release_does_not_undo_a_confirmed_id() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0), Claim::Won);
        d.confirm("evt_1", 1.0);
        d.release("evt_1");
        assert_eq!(d.claim("evt_1", 2.0), Claim::Processed);
    }

    #[test]
    fn claims_count_against_the_capacity() {
        let mut d = MemoryDedupe::new(2, 1e9);
        assert_eq!(d.claim("a", 0.0), Claim::Won);
        assert_eq!(d.claim("b", 0.0), Claim::Won);
        assert_eq!(d.claim("c", 0.0), Claim::Won);
        assert_eq!(d.len(), 2);
        assert_eq!(
            d.claim("a", 0.0),
            Claim::Won,
            "the oldest claim was evicted"
        );
    }

    #[test]
    fn the_claim_ttl_is_at_most_the_store_ttl() {
        let d = MemoryDedupe::new(10, 30.0);
        assert_eq!(d.claim_ttl(), 30.0);
    }

    #[test]
    fn store_answers_map_to_claims() {
        assert_eq!(Claim::from_store_answer(None, true), Claim::Won);
        assert_eq!(Claim::from_store_answer(None, false), Claim::InProgress);
        assert_eq!(
            Claim::from_store_answer(Some("processed"), true),
            Claim::Processed
        );
        assert_eq!(Claim::from_has(true), Claim::Processed);
        assert_eq!(Claim::from_has(false), Claim::Won);
        assert!(!Claim::Won.is_duplicate());
        assert!(Claim::InProgress.is_duplicate() && Claim::Processed.is_duplicate());
    }
}
