//! Deduplication of deliveries across instances: fenced claims with a lease, the rules every store keeps, and the
//! in-memory store that keeps them in one process.
//!
//! Webhooks are delivered at least once, and two copies of one event can arrive at the same moment, at two
//! instances. A receiver handles an `eventId` once by **claiming** it before it acts:
//! 1. [`rules::claim`]: the first caller of an id wins ([`Claim::Won`]) and its claim holds a **token** (a random
//!    value of the claimer's) for a lease of `ttl` seconds; every later caller sees a duplicate,
//!    [`Claim::InProgress`] while a claim is live (answer non-2xx: the service delivers again later) or
//!    [`Claim::Processed`] once marked (answer 2xx).
//! 2. [`rules::renew`]: the holder extends its lease while its handler runs. Only the token's holder can, and only
//!    while the lease is live: an instance whose lease lapsed learns it lost the event, and cannot revive it.
//! 3. [`rules::mark`] (the verifier's `markProcessed`): the handler acted; the id is a duplicate for a week
//!    ([`DEFAULT_TTL`]), whoever holds a claim.
//! 4. [`rules::release`]: the handler failed; the claim is dropped so the service's retry is handled. Only the
//!    token's holder can release, so a stale instance never deletes a claim that is now another's; a processed mark
//!    is never released.
//!
//! A crashed holder stops renewing and its lease lapses after `ttl` ([`DEFAULT_CLAIM_TTL`]): the next delivery wins.
//! The rules are the same in every store: [`MemoryDedupe`] applies these functions to the records it holds; the
//! stores of `docauto/webhooks` (`src/wasm/webhook/stores.js`: Redis scripts, PostgreSQL and D1 statements, the
//! Durable Object) encode them in their engine's own language, so that each step is one atomic command.

use std::collections::{HashMap, VecDeque};

use super::error::{err, ErrorCode, Result, WebhookError};

/// How a dedupe store handed over by the host is used, decided from the methods it has ([`store_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// Fenced claims with a lease: `claim(id, ttlSeconds, token)`, `renew(id, ttlSeconds, token)`,
    /// `release(id, token)`, `add(id, ttlSeconds)`. The contract of every store the package ships.
    Fenced,
    /// Claims without a lease (no `renew`): `claim(id, ttlSeconds)`, `release(id)`, `add(id, ttlSeconds)`, the
    /// interface before fencing. Still works; a handler slower than the claim's ttl can be handled twice, and a
    /// `release` that ignores the token can delete another instance's claim.
    Unfenced,
    /// Check-then-add (`has(id)`, `add(id)`): racy (two concurrent deliveries both pass `has`), kept so existing
    /// stores keep working.
    CheckThenAdd,
}

impl StoreKind {
    /// Whether the store takes claims (and so can answer [`Claim::InProgress`] and be released).
    pub fn claims(self) -> bool {
        self != StoreKind::CheckThenAdd
    }

    /// Whether a claim's lease can be extended.
    pub fn renews(self) -> bool {
        self == StoreKind::Fenced
    }
}

/// The kind of a store from the methods it has (`has_method(name)`: the member is a function); a store with
/// `claim` must have `release` and `add`, and is fenced when it also has `renew`.
///
/// # Errors
/// `invalid_options` for a store that is neither kind.
pub fn store_kind(has_method: impl Fn(&str) -> bool) -> Result<StoreKind> {
    let all = |names: &[&str]| names.iter().all(|n| has_method(n));
    if has_method("claim") {
        match (all(&["release", "add"]), has_method("renew")) {
            (true, true) => Ok(StoreKind::Fenced),
            (true, false) => Ok(StoreKind::Unfenced),
            (false, _) => Err(err(
                ErrorCode::InvalidOptions,
                "a dedupe store with claim() also needs release() and add()",
            )),
        }
    } else if all(&["has", "add"]) {
        Ok(StoreKind::CheckThenAdd)
    } else {
        Err(err(
            ErrorCode::InvalidOptions,
            "dedupe must be true or a store with claim(id, ttlSeconds, token), renew(id, ttlSeconds, token), \
             release(id, token) and add(id, ttlSeconds)",
        ))
    }
}

/// The refusal of `verifySync` with a store whose `claim()` (or `has()`) answered a promise: it cannot wait.
pub const SYNC_STORE_NEEDED: WebhookError = err(
    ErrorCode::InvalidOptions,
    "verifySync needs a dedupe store whose claim() (or has()) answers at once, not a promise",
);

/// Default number of ids the in-memory store remembers.
pub const DEFAULT_CAPACITY: usize = 10_000;
/// Time a processed id is remembered, in seconds: a week (agent-run events can be re-sent days later, when the run
/// is next observed).
pub const DEFAULT_TTL: f64 = 7.0 * 24.0 * 3600.0;
/// Default lease of a claim, in seconds (`claimTtlSeconds`): renewed at a third of it while the handler runs, so a
/// crashed holder blocks the event for at most this long. Shorter than the service's retry ladder (attempts about
/// 10, 20, 40 and 80 s apart), so the later attempts of an event whose holder crashed are handled.
pub const DEFAULT_CLAIM_TTL: f64 = 60.0;
/// Shortest accepted `claimTtlSeconds`: a renewal is sent every third of it, and must have time to arrive.
pub const MIN_CLAIM_TTL: f64 = 1.0;

/// Checks `claimTtlSeconds` (default [`DEFAULT_CLAIM_TTL`]).
///
/// # Errors
/// `invalid_options` for a value that is not finite, below [`MIN_CLAIM_TTL`], or above the processed mark's
/// [`DEFAULT_TTL`].
pub fn claim_ttl(option: Option<f64>) -> Result<f64> {
    match option {
        None => Ok(DEFAULT_CLAIM_TTL),
        Some(s) if s.is_finite() && (MIN_CLAIM_TTL..=DEFAULT_TTL).contains(&s) => Ok(s),
        Some(_) => Err(err(
            ErrorCode::InvalidOptions,
            "claimTtlSeconds must be a number of seconds from 1 to 604800",
        )),
    }
}

/// How long one store call may take before it counts as failed, in seconds: a third of the claim's ttl, so that a
/// renewal that hangs is given up while the lease still runs (and a claim that hangs does not hold a delivery).
pub fn store_timeout(claim_ttl: f64) -> f64 {
    claim_ttl / 3.0
}

/// The outcome of a claim, as a delivery sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This caller won: handle the event, then mark or release.
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

    /// The answer a store gives for this outcome: `"won"`, `"claimed"` (another's live claim) or `"processed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Claim::Won => "won",
            Claim::InProgress => "claimed",
            Claim::Processed => "processed",
        }
    }

    /// Reads a claim store's answer: `"won"` (or `true`) won, `"processed"` processed, `"claimed"` (or `false`, or
    /// anything falsy) another caller's live claim. Any other truthy answer is a win, as it was before the answers
    /// had names (a store answering `true`). A store that cannot tell processed from claimed answers `"claimed"`:
    /// its duplicates are then retried by the service until they see the mark, which is safe.
    pub fn from_store_answer(text: Option<&str>, truthy: bool) -> Self {
        match text {
            Some("processed") => Claim::Processed,
            Some("claimed") => Claim::InProgress,
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

/// What a store holds for an event id.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A claim held by `token` until `until` (seconds on the store's clock).
    Claimed {
        /// The holder's fencing token.
        token: String,
        /// When the lease lapses.
        until: f64,
    },
    /// Processed: a duplicate until `until`.
    Processed {
        /// When the mark is forgotten.
        until: f64,
    },
}

impl Record {
    /// When the record stops counting.
    pub fn until(&self) -> f64 {
        match self {
            Record::Claimed { until, .. } | Record::Processed { until } => *until,
        }
    }

    /// Whether the record counts at `now`.
    pub fn is_live(&self, now: f64) -> bool {
        now < self.until()
    }

    fn held_by(&self, token: &str, now: f64) -> bool {
        matches!(self, Record::Claimed { token: t, .. } if t == token) && self.is_live(now)
    }
}

/// The rules of fenced claims, over the record a store holds for one id (`None`: nothing). Each function says what
/// to answer and what to write; a store that applies them to a record it reads and writes one step at a time (the
/// in-memory store, a Durable Object) is correct by construction.
pub mod rules {
    use super::{Claim, Record};

    /// A claim by `token` at `now` for `ttl` seconds: the answer, and the record to write when it won.
    pub fn claim(
        current: Option<&Record>,
        now: f64,
        token: &str,
        ttl: f64,
    ) -> (Claim, Option<Record>) {
        match current.filter(|r| r.is_live(now)) {
            Some(Record::Processed { .. }) => (Claim::Processed, None),
            Some(Record::Claimed { .. }) => (Claim::InProgress, None),
            None => (
                Claim::Won,
                Some(Record::Claimed {
                    token: token.to_owned(),
                    until: now + ttl,
                }),
            ),
        }
    }

    /// A renewal by `token`: the extended record when `token` holds a live claim, else `None` (the lease was lost:
    /// it lapsed, was taken by another, or the event was marked processed).
    pub fn renew(current: Option<&Record>, now: f64, token: &str, ttl: f64) -> Option<Record> {
        current
            .filter(|r| r.held_by(token, now))
            .map(|_| Record::Claimed {
                token: token.to_owned(),
                until: now + ttl,
            })
    }

    /// Whether a release by `token` deletes the record: only a claim of that token (lapsed or not: nobody else
    /// holds it until it is claimed anew, which replaces the token).
    pub fn release(current: Option<&Record>, token: &str) -> bool {
        matches!(current, Some(Record::Claimed { token: t, .. }) if t == token)
    }

    /// The record a mark writes at `now`: processed for `ttl` seconds, whoever held a claim.
    pub fn mark(now: f64, ttl: f64) -> Record {
        Record::Processed { until: now + ttl }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    record: Record,
    generation: u64,
}

/// A bounded map of claimed and processed event ids kept in one process or isolate (`dedupe: true`), oldest
/// evicted first, under [`rules`].
#[derive(Debug)]
pub struct MemoryDedupe {
    capacity: usize,
    ttl: f64,
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
    /// A store keeping at most `capacity` ids (at least one), each processed id for `ttl` seconds.
    pub fn new(capacity: usize, ttl: f64) -> Self {
        Self {
            capacity: capacity.max(1),
            ttl,
            entries: HashMap::new(),
            order: VecDeque::new(),
            generation: 0,
        }
    }

    fn record(&self, event_id: &str) -> Option<&Record> {
        self.entries.get(event_id).map(|e| &e.record)
    }

    /// Whether `event_id` is claimed or processed at `now` (a delivery of it now would be a duplicate).
    pub fn has(&self, event_id: &str, now: f64) -> bool {
        self.record(event_id).is_some_and(|r| r.is_live(now))
    }

    /// Claims `event_id` for `token` at `now`, for `ttl` seconds (at most the store's ttl) ([`rules::claim`]).
    pub fn claim(&mut self, event_id: &str, now: f64, token: &str, ttl: f64) -> Claim {
        let (answer, write) = rules::claim(self.record(event_id), now, token, ttl.min(self.ttl));
        if let Some(record) = write {
            self.put(event_id, record, now);
        }
        answer
    }

    /// Extends `token`'s claim on `event_id` by `ttl` seconds from `now`; `false` when the lease was lost
    /// ([`rules::renew`]).
    pub fn renew(&mut self, event_id: &str, now: f64, token: &str, ttl: f64) -> bool {
        match rules::renew(self.record(event_id), now, token, ttl.min(self.ttl)) {
            Some(record) => {
                self.put(event_id, record, now);
                true
            }
            None => false,
        }
    }

    /// Marks `event_id` processed at `now` (claimed or not, by anyone): a duplicate for the store's ttl.
    pub fn confirm(&mut self, event_id: &str, now: f64) {
        self.put(event_id, rules::mark(now, self.ttl), now);
    }

    /// Drops `token`'s claim on `event_id`, so the next delivery is handled. Another's claim and a processed id
    /// stay ([`rules::release`]).
    pub fn release(&mut self, event_id: &str, token: &str) {
        if rules::release(self.record(event_id), token) {
            self.entries.remove(event_id);
        }
    }

    fn put(&mut self, event_id: &str, record: Record, now: f64) {
        self.generation += 1;
        let generation = self.generation;
        let until = record.until();
        self.entries
            .insert(event_id.to_owned(), Entry { record, generation });
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
            // Remove only if this entry is the latest write of the id.
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

/// The claims this instance took through `verify` and has not yet marked or released: the token that fences
/// `markProcessed`, `renewClaim` and `releaseClaim`, and when the lease lapses by this instance's count (as
/// [`Record::Claimed`]). At most [`DEFAULT_CAPACITY`] live claims are held; a claim not held (lapsed, or taken while
/// full) is treated as lapsed, which is safe: it is not released (its holder may be another now), and it lapses in
/// the store by itself.
#[derive(Debug, Default)]
pub struct HeldClaims {
    held: HashMap<String, Entry>,
}

impl HeldClaims {
    /// Records at `now` that `token` claimed `event_id`, its lease lapsing at `until`.
    pub fn hold(&mut self, event_id: &str, token: String, until: f64, now: f64) {
        if self.held.len() >= DEFAULT_CAPACITY {
            self.held.retain(|_, e| e.record.is_live(now));
        }
        if self.held.len() < DEFAULT_CAPACITY || self.held.contains_key(event_id) {
            let record = Record::Claimed { token, until };
            self.held.insert(
                event_id.to_owned(),
                Entry {
                    record,
                    generation: 0,
                },
            );
        }
    }

    /// The token of this instance's live claim on `event_id` at `now`; `None` once lapsed or never held.
    pub fn token(&self, event_id: &str, now: f64) -> Option<&str> {
        match self.held.get(event_id).map(|e| &e.record) {
            Some(Record::Claimed { token, until }) if now < *until => Some(token),
            _ => None,
        }
    }

    /// The lease of `event_id` was extended to `until`.
    pub fn renewed(&mut self, event_id: &str, until: f64) {
        if let Some(Record::Claimed { until: held, .. }) =
            self.held.get_mut(event_id).map(|e| &mut e.record)
        {
            *held = until;
        }
    }

    /// Forgets `event_id`'s claim (marked, released, or lost).
    pub fn forget(&mut self, event_id: &str) {
        self.held.remove(event_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_used_by_the_methods_it_has() {
        let with = |names: &'static [&'static str]| store_kind(move |n| names.contains(&n));
        assert_eq!(
            with(&["claim", "renew", "release", "add"]),
            Ok(StoreKind::Fenced)
        );
        assert_eq!(with(&["claim", "release", "add"]), Ok(StoreKind::Unfenced));
        assert_eq!(
            with(&["claim", "release", "add", "has"]),
            Ok(StoreKind::Unfenced)
        );
        assert_eq!(with(&["has", "add"]), Ok(StoreKind::CheckThenAdd));
        for names in [
            &["claim", "add"][..],
            &["claim", "renew", "add"],
            &["has"],
            &[],
            &["add", "release"],
        ] {
            assert_eq!(
                with(names).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{names:?}"
            );
        }
        assert!(StoreKind::Fenced.renews() && StoreKind::Fenced.claims());
        assert!(!StoreKind::Unfenced.renews() && StoreKind::Unfenced.claims());
        assert!(!StoreKind::CheckThenAdd.claims());
    }

    #[test]
    fn claim_ttl_defaults_to_60_and_is_bounded() {
        assert_eq!(claim_ttl(None), Ok(60.0));
        assert_eq!(claim_ttl(Some(1.0)), Ok(1.0));
        assert_eq!(claim_ttl(Some(2.5)), Ok(2.5));
        assert_eq!(claim_ttl(Some(DEFAULT_TTL)), Ok(DEFAULT_TTL));
        for bad in [0.0, 0.5, -1.0, f64::NAN, f64::INFINITY, DEFAULT_TTL + 1.0] {
            assert_eq!(
                claim_ttl(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_first_claim_wins_and_later_claims_are_duplicates() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 60.0), Claim::Won);
        assert_eq!(
            d.claim("evt_1", 0.0, "b", 60.0),
            Claim::InProgress,
            "a second claim at the same moment"
        );
        assert_eq!(
            d.claim("evt_1", 10.0, "a", 60.0),
            Claim::InProgress,
            "even by the holder"
        );
        assert_eq!(
            d.claim("evt_2", 10.0, "b", 60.0),
            Claim::Won,
            "claims are per id"
        );
    }

    #[test]
    fn an_unrenewed_claim_lapses_after_its_ttl() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 60.0), Claim::Won);
        assert_eq!(d.claim("evt_1", 59.9, "b", 60.0), Claim::InProgress);
        assert_eq!(
            d.claim("evt_1", 60.0, "b", 60.0),
            Claim::Won,
            "a crashed holder blocks the event only for the claim ttl"
        );
    }

    #[test]
    fn a_renewed_claim_outlives_its_first_ttl() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 3.0), Claim::Won);
        for t in [1.0, 2.0, 3.0, 4.0, 5.0] {
            assert!(d.renew("evt_1", t, "a", 3.0), "renewal at {t}");
        }
        assert_eq!(d.claim("evt_1", 7.9, "b", 3.0), Claim::InProgress);
        assert_eq!(
            d.claim("evt_1", 8.0, "b", 3.0),
            Claim::Won,
            "lapsed 3 s after the last renewal"
        );
    }

    #[test]
    fn a_lapsed_lease_cannot_be_renewed_even_when_nobody_took_it() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 3.0), Claim::Won);
        assert!(
            !d.renew("evt_1", 3.0, "a", 3.0),
            "the holder learns it lost the event"
        );
        assert_eq!(d.claim("evt_1", 3.0, "b", 3.0), Claim::Won);
    }

    #[test]
    fn only_the_token_holder_renews_or_releases() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 3.0), Claim::Won);
        assert_eq!(
            d.claim("evt_1", 4.0, "b", 3.0),
            Claim::Won,
            "a's lease lapsed; b wins"
        );
        assert!(
            !d.renew("evt_1", 4.5, "a", 3.0),
            "a stale holder cannot extend b's claim"
        );
        d.release("evt_1", "a");
        assert_eq!(
            d.claim("evt_1", 5.0, "c", 3.0),
            Claim::InProgress,
            "a stale release did not delete b's claim"
        );
        assert!(d.renew("evt_1", 5.0, "b", 3.0));
        d.release("evt_1", "b");
        assert_eq!(
            d.claim("evt_1", 5.0, "c", 3.0),
            Claim::Won,
            "b's own release"
        );
    }

    #[test]
    fn a_mark_is_a_duplicate_for_the_store_ttl_and_ends_every_lease() {
        let mut d = MemoryDedupe::new(10, 1000.0);
        assert_eq!(d.claim("evt_1", 0.0, "a", 10.0), Claim::Won);
        d.confirm("evt_1", 5.0);
        assert!(!d.renew("evt_1", 6.0, "a", 10.0), "a mark ends the lease");
        d.release("evt_1", "a");
        assert_eq!(
            d.claim("evt_1", 500.0, "b", 10.0),
            Claim::Processed,
            "confirmed outlives the claim ttl, and a release leaves it"
        );
        assert_eq!(
            d.claim("evt_1", 1005.0, "b", 10.0),
            Claim::Won,
            "and ages out with the store ttl"
        );
    }

    #[test]
    fn a_mark_over_anothers_claim_stands() {
        let mut d = MemoryDedupe::default();
        assert_eq!(d.claim("evt_1", 0.0, "a", 3.0), Claim::Won);
        assert_eq!(d.claim("evt_1", 4.0, "b", 3.0), Claim::Won);
        d.confirm("evt_1", 4.5); // a's slow handler finished: the event was handled
        d.release("evt_1", "b"); // b's handler failed: nothing to release
        assert_eq!(d.claim("evt_1", 5.0, "c", 3.0), Claim::Processed);
    }

    #[test]
    fn the_memory_store_bounds_its_claims_and_marks() {
        let mut d = MemoryDedupe::new(3, 1e9);
        for i in 0..10 {
            d.confirm(&format!("evt_{i}"), f64::from(i));
        }
        assert_eq!(d.len(), 3);
        assert!(!d.has("evt_6", 10.0));
        assert!(d.has("evt_9", 10.0));
        let mut d = MemoryDedupe::new(2, 1e9);
        assert_eq!(d.claim("a", 0.0, "t", 60.0), Claim::Won);
        assert_eq!(d.claim("b", 0.0, "t", 60.0), Claim::Won);
        assert_eq!(d.claim("c", 0.0, "t", 60.0), Claim::Won);
        assert_eq!(d.len(), 2);
        assert_eq!(
            d.claim("a", 0.0, "u", 60.0),
            Claim::Won,
            "the oldest claim was evicted"
        );
    }

    #[test]
    fn re_marking_an_id_keeps_it() {
        let mut d = MemoryDedupe::new(2, 1e9);
        d.confirm("a", 0.0);
        d.confirm("b", 1.0);
        d.confirm("a", 2.0);
        d.confirm("c", 3.0);
        assert!(d.has("a", 4.0), "a was re-marked after b");
        assert!(d.has("c", 4.0));
    }

    #[test]
    fn a_claim_ttl_is_at_most_the_store_ttl() {
        let mut d = MemoryDedupe::new(10, 30.0);
        assert_eq!(d.claim("a", 0.0, "t", 60.0), Claim::Won);
        assert_eq!(d.claim("a", 30.0, "u", 60.0), Claim::Won);
    }

    #[test]
    fn store_answers_map_to_claims() {
        assert_eq!(Claim::from_store_answer(Some("won"), true), Claim::Won);
        assert_eq!(
            Claim::from_store_answer(None, true),
            Claim::Won,
            "true (the unfenced interface)"
        );
        assert_eq!(
            Claim::from_store_answer(Some("OK"), true),
            Claim::Won,
            "a truthy answer wins, as before"
        );
        assert_eq!(
            Claim::from_store_answer(Some("claimed"), true),
            Claim::InProgress
        );
        assert_eq!(Claim::from_store_answer(None, false), Claim::InProgress);
        assert_eq!(Claim::from_store_answer(Some(""), false), Claim::InProgress);
        assert_eq!(
            Claim::from_store_answer(Some("processed"), true),
            Claim::Processed
        );
        for c in [Claim::Won, Claim::InProgress, Claim::Processed] {
            assert_eq!(
                Claim::from_store_answer(Some(c.as_str()), true),
                c,
                "as_str reads back"
            );
        }
        assert_eq!(Claim::from_has(true), Claim::Processed);
        assert_eq!(Claim::from_has(false), Claim::Won);
        assert!(!Claim::Won.is_duplicate());
        assert!(Claim::InProgress.is_duplicate() && Claim::Processed.is_duplicate());
    }

    #[test]
    fn held_claims_lapse_by_their_lease_and_are_bounded() {
        let mut h = HeldClaims::default();
        h.hold("evt_1", "a".into(), 10.0, 0.0);
        assert_eq!(h.token("evt_1", 9.9), Some("a"));
        assert_eq!(h.token("evt_1", 10.0), None, "lapsed");
        h.renewed("evt_1", 20.0);
        assert_eq!(h.token("evt_1", 15.0), Some("a"));
        h.forget("evt_1");
        assert_eq!(h.token("evt_1", 0.0), None);
        for i in 0..DEFAULT_CAPACITY {
            h.hold(&format!("e{i}"), "t".into(), 100.0, 0.0);
        }
        h.hold("late", "t".into(), 100.0, 1.0);
        assert_eq!(
            h.token("late", 1.0),
            None,
            "full of live claims: not held, so never released"
        );
        assert_eq!(h.held.len(), DEFAULT_CAPACITY);
        h.hold("later", "t".into(), 300.0, 200.0);
        assert_eq!(
            h.token("later", 200.0),
            Some("t"),
            "lapsed claims make room"
        );
        assert_eq!(h.held.len(), 1);
    }
}
