//! The default in-memory deduplication store: bounded by count and by age.
//!
//! Webhooks are delivered at least once; a handler marks an `eventId` processed after it acted on it, and a later
//! delivery of the same id is reported as a duplicate. This store lives in one process (or isolate): for several
//! instances plug a shared store (KV, Redis) into the JS verifier instead.

use std::collections::{HashMap, VecDeque};

/// Default number of ids remembered.
pub const DEFAULT_CAPACITY: usize = 10_000;
/// Default time an id is remembered, in seconds (agent-run events can be re-sent days later).
pub const DEFAULT_TTL: f64 = 7.0 * 24.0 * 3600.0;

/// A bounded set of processed event ids, oldest evicted first.
#[derive(Debug)]
pub struct MemoryDedupe {
    capacity: usize,
    ttl: f64,
    seen: HashMap<String, f64>,
    order: VecDeque<(String, f64)>,
}

impl Default for MemoryDedupe {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY, DEFAULT_TTL)
    }
}

impl MemoryDedupe {
    /// A store keeping at most `capacity` ids (at least one), each for `ttl` seconds.
    pub fn new(capacity: usize, ttl: f64) -> Self {
        Self {
            capacity: capacity.max(1),
            ttl,
            seen: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    /// Whether `event_id` was marked processed and has not aged out.
    pub fn has(&self, event_id: &str, now: f64) -> bool {
        self.seen
            .get(event_id)
            .is_some_and(|at| now - at < self.ttl)
    }

    /// Marks `event_id` processed at `now`.
    pub fn add(&mut self, event_id: &str, now: f64) {
        self.seen.insert(event_id.to_owned(), now);
        self.order.push_back((event_id.to_owned(), now));
        while self.order.len() > self.capacity
            || self
                .order
                .front()
                .is_some_and(|(_, at)| now - at >= self.ttl)
        {
            let Some((id, at)) = self.order.pop_front() else {
                break;
            };
            // Remove only if this entry is the latest mark of the id.
            if self.seen.get(&id) == Some(&at) {
                self.seen.remove(&id);
            }
        }
    }

    /// Number of ids remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
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
}
