//! Deduplication of deliveries: the claim rules, and the default in-memory store that implements them.
//!
//! Webhooks are delivered at least once, and two copies of one event can arrive at the same moment. A receiver
//! handles an `eventId` once by **claiming** it before it acts:
//! 1. [`MemoryDedupe::claim`]: the first caller of an id wins (`true`); every later caller sees a duplicate (`false`)
//!    while the claim is live. A claim lives [`DEFAULT_CLAIM_TTL`] seconds, so a receiver that crashed between claim
//!    and confirm does not block the event forever: a delivery after that is processed again.
//! 2. [`MemoryDedupe::confirm`] (the verifier's `markProcessed`): the handler acted; the id stays a duplicate for the
//!    store's ttl (default [`DEFAULT_TTL`], a week).
//! 3. [`MemoryDedupe::release`]: the handler failed; the claim is dropped so the service's retry is processed. A
//!    confirmed id is not released.
//!
//! Claim-then-confirm is atomic only where the claim is: this store is, within one process (or isolate). For
//! several instances plug a shared store with an atomic claim (Redis `SET NX`, a Durable Object, a D1 insert) into
//! the JS verifier instead.

use std::collections::{HashMap, VecDeque};

/// Default number of ids remembered.
pub const DEFAULT_CAPACITY: usize = 10_000;
/// Default time a processed id is remembered, in seconds (agent-run events can be re-sent days later).
pub const DEFAULT_TTL: f64 = 7.0 * 24.0 * 3600.0;
/// Default life of a claim that is neither confirmed nor released, in seconds: a handler has this long to finish.
pub const DEFAULT_CLAIM_TTL: f64 = 300.0;

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

    /// Claims `event_id` at `now`: `true` when this caller won (nothing live held the id), `false` when the id is
    /// claimed by an earlier caller or processed.
    pub fn claim(&mut self, event_id: &str, now: f64) -> bool {
        if self.has(event_id, now) {
            return false;
        }
        self.put(event_id, State::Claimed, now, now + self.claim_ttl);
        true
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
        assert!(d.claim("evt_1", 0.0));
        assert!(!d.claim("evt_1", 0.0), "a second claim at the same moment");
        assert!(!d.claim("evt_1", 10.0));
        assert!(d.claim("evt_2", 10.0), "claims are per id");
    }

    #[test]
    fn an_unconfirmed_claim_expires_after_the_claim_ttl() {
        let mut d = MemoryDedupe::default();
        assert!(d.claim("evt_1", 0.0));
        assert!(!d.claim("evt_1", DEFAULT_CLAIM_TTL - 1.0));
        assert!(
            d.claim("evt_1", DEFAULT_CLAIM_TTL),
            "a crashed handler blocks the event only for the claim ttl"
        );
    }

    #[test]
    fn a_confirmed_claim_is_a_duplicate_for_the_store_ttl() {
        let mut d = MemoryDedupe::new(10, 1000.0).with_claim_ttl(10.0);
        assert!(d.claim("evt_1", 0.0));
        d.confirm("evt_1", 5.0);
        assert!(!d.claim("evt_1", 500.0), "confirmed outlives the claim ttl");
        assert!(d.claim("evt_1", 1005.0), "and ages out with the store ttl");
    }

    #[test]
    fn a_released_claim_lets_the_next_delivery_win() {
        let mut d = MemoryDedupe::default();
        assert!(d.claim("evt_1", 0.0));
        d.release("evt_1");
        assert!(!d.has("evt_1", 1.0));
        assert!(d.claim("evt_1", 1.0));
    }

    #[test]
    fn release_does_not_undo_a_confirmed_id() {
        let mut d = MemoryDedupe::default();
        assert!(d.claim("evt_1", 0.0));
        d.confirm("evt_1", 1.0);
        d.release("evt_1");
        assert!(!d.claim("evt_1", 2.0));
    }

    #[test]
    fn claims_count_against_the_capacity() {
        let mut d = MemoryDedupe::new(2, 1e9);
        assert!(d.claim("a", 0.0));
        assert!(d.claim("b", 0.0));
        assert!(d.claim("c", 0.0));
        assert_eq!(d.len(), 2);
        assert!(d.claim("a", 0.0), "the oldest claim was evicted");
    }

    #[test]
    fn the_claim_ttl_is_at_most_the_store_ttl() {
        let d = MemoryDedupe::new(10, 60.0);
        assert_eq!(d.claim_ttl(), 60.0);
    }
}
