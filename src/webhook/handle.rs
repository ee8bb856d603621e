//! `handle`: one delivery from verification to the answer, as a sans-IO state machine. It decides when to claim,
//! when to renew the lease while the handler runs, what a lost lease means, how long a failed mark is retried, and
//! which status to answer; the host only runs the store's commands, the handler and the timers.
//!
//! ```text
//! let mut h = Handling::new(ttl, store_kind);            // after the delivery verified
//! loop {
//!     match h.next(now()) {
//!         Step::Claim => h.on_claim(store.claim(id, ttl, token), sent_at),
//!         Step::Run => start(handler(event, { signal })),
//!         Step::Wait { until } => match race(handler, timer(until)) {
//!             Settled(ok) => h.on_handler(ok),
//!             Timer => {}
//!         },
//!         Step::Renew => h.on_renew(store.renew(id, ttl, token), sent_at),
//!         Step::Abort => signal.abort(),                    // the lease was lost: tell the handler
//!         Step::Mark => h.on_mark(store.add(id, week).is_ok(), now()),
//!         Step::Sleep { until } => sleep(until),            // before a mark is tried again
//!         Step::Release => { store.release(id, token); h.on_release() }
//!         Step::Respond(outcome) => return response(outcome),
//!     }
//! }
//! ```
//! Times are seconds on the host's real clock (not a verifier's fixed `now`). A store call that fails or does not
//! answer within [`store_timeout`](super::dedupe::store_timeout) counts as failed.
//!
//! An observed handling ([`Handling::observe`]) also keeps a [`Record`] of what each report or step decided (the
//! dedupe decision, each renewal, a lapsed lease, a failed mark, the release), which the host takes after each
//! ([`Handling::take_record`]) for its tracing; an unobserved one keeps none.

use super::dedupe::{Claim, StoreKind};
use super::ErrorCode;

/// What one delivery ended as; each is one status of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The handler ran and succeeded now (the mark may have failed: see [`Handling::mark_failed`]). 200.
    Handled,
    /// The event was processed before: nothing ran. 200.
    AlreadyProcessed,
    /// Another instance's claim is live: the service delivers again later. 409.
    InProgress,
    /// The handler threw; its claim was released, so the redelivery is handled. 500.
    HandlerFailed,
    /// The store could not be asked to claim (it failed or did not answer): nothing ran. 503.
    StoreUnavailable,
}

impl Outcome {
    /// The HTTP status answered.
    pub fn status(self) -> u16 {
        match self {
            Outcome::Handled | Outcome::AlreadyProcessed => 200,
            Outcome::InProgress => 409,
            Outcome::HandlerFailed => 500,
            Outcome::StoreUnavailable => 503,
        }
    }

    /// The `error` of the answer's body, for a non-2xx outcome.
    pub fn error_code(self) -> Option<&'static str> {
        match self {
            Outcome::Handled | Outcome::AlreadyProcessed => None,
            Outcome::InProgress => Some("in_progress"),
            Outcome::HandlerFailed => Some("handler_failed"),
            Outcome::StoreUnavailable => Some("dedupe_unavailable"),
        }
    }
}

/// The dedupe decision of a delivery: the claim's answer as the handling read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dedupe {
    /// This delivery claimed the event: its handler runs.
    Won,
    /// Another instance holds a live claim on the event (409).
    ClaimedElsewhere,
    /// The event was processed before (200, nothing runs).
    AlreadyProcessed,
    /// The store failed or did not answer (503, nothing runs).
    StoreUnavailable,
}

impl Dedupe {
    /// `won`, `claimed_elsewhere`, `already_processed`, `store_unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dedupe::Won => "won",
            Dedupe::ClaimedElsewhere => "claimed_elsewhere",
            Dedupe::AlreadyProcessed => "already_processed",
            Dedupe::StoreUnavailable => "store_unavailable",
        }
    }
}

/// What one report or step of an observed handling decided (in this order in the host's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// The claim was answered.
    Dedupe(Dedupe),
    /// A renewal extended the lease.
    Renewed,
    /// A renewal failed (the store failed or did not answer): tried again while the lease lasts.
    RenewalFailed,
    /// The lease was lost: a renewal answered that another holds the event, or no renewal succeeded before the
    /// lease lapsed. The handler's signal aborts.
    LeaseLost,
    /// A mark failed and is tried again after a pause.
    MarkRetried,
    /// Every try of the mark failed: the answer is still 200, and later copies may be handled again.
    MarkFailed,
    /// The claim of a failed handler was released (`false`: the release failed; the claim lapses after its ttl).
    Released(bool),
}

/// The status answered for a delivery that failed verification: [`ErrorCode::http_status`].
pub fn refused_status(code: ErrorCode) -> u16 {
    code.http_status()
}

/// What the host does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Claim the event id for this delivery's token and the ttl; report with [`Handling::on_claim`].
    Claim,
    /// Start the handler (once), with an abort signal; then ask again.
    Run,
    /// Wait until the handler settles ([`Handling::on_handler`]) or `until` passes (a renewal is due, or the lease
    /// lapses), whichever is first; `None`: only for the handler.
    Wait {
        /// Epoch seconds.
        until: Option<f64>,
    },
    /// Extend the lease; report with [`Handling::on_renew`].
    Renew,
    /// The lease was lost (another instance may be handling the event now): abort the handler's signal, then ask
    /// again. Given once.
    Abort,
    /// Mark the event processed; report with [`Handling::on_mark`].
    Mark,
    /// Wait until `until` (epoch seconds) before the next step: the handler has settled.
    Sleep {
        /// Epoch seconds.
        until: f64,
    },
    /// Release the claim (fenced by the token); report with [`Handling::on_release`].
    Release,
    /// Answer.
    Respond(Outcome),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Before the claim (or before the handler, without a store).
    Start,
    Claiming,
    /// Claimed: the handler starts at the next step.
    Claimed,
    Running,
    Renewing,
    Marking,
    Releasing,
    Done(Outcome),
}

/// First wait before a failed mark is tried again, in seconds; doubled each time up to [`MARK_RETRY_MAX`].
const MARK_RETRY_FIRST: f64 = 0.1;
/// Longest wait between two tries of a mark, in seconds.
const MARK_RETRY_MAX: f64 = 2.0;

/// One delivery's handling after it verified: the claim, its lease, the handler's settling, the mark or release.
#[derive(Clone, Debug)]
pub struct Handling {
    ttl: f64,
    store: Option<StoreKind>,
    phase: Phase,
    /// When the lease lapses, by this instance's count (from the moment the claim or renewal was sent).
    lease_until: f64,
    /// When the next renewal is due.
    renew_at: f64,
    lost: bool,
    abort_told: bool,
    started: bool,
    /// The handler's settling: `Some(true)` succeeded.
    settled: Option<bool>,
    /// The next try of a failed mark, and the wait after it.
    retry_at: Option<f64>,
    retry_wait: f64,
    /// Marks are tried until then.
    mark_until: f64,
    mark_failed: bool,
    release_failed: bool,
    /// Whether [`Record`]s are kept, and the one not taken yet.
    observe: bool,
    record: Option<Record>,
}

impl Handling {
    /// The handling of a verified delivery with a claim lease of `ttl` seconds, and a store of `store`'s kind
    /// (`None`: no dedupe, the handler just runs).
    pub fn new(ttl: f64, store: Option<StoreKind>) -> Self {
        Self {
            ttl,
            store,
            phase: Phase::Start,
            lease_until: f64::INFINITY,
            renew_at: f64::INFINITY,
            lost: false,
            abort_told: false,
            started: false,
            settled: None,
            retry_at: None,
            retry_wait: MARK_RETRY_FIRST,
            mark_until: 0.0,
            mark_failed: false,
            release_failed: false,
            observe: false,
            record: None,
        }
    }

    /// From now on, keeps a [`Record`] of what each report or step decides, for [`Handling::take_record`].
    pub fn observe(&mut self) {
        self.observe = true;
    }

    /// Takes the record of the last report or step, once (take it after each: a later one replaces it).
    pub fn take_record(&mut self) -> Option<Record> {
        self.record.take()
    }

    fn keep(&mut self, record: Record) {
        if self.observe {
            self.record = Some(record);
        }
    }

    /// Whether the lease was lost: a renewal answered that another holds the event (or it was marked), or no
    /// renewal succeeded before the lease lapsed by this instance's count.
    pub fn lease_lost(&self) -> bool {
        self.lost
    }

    /// Whether the handler succeeded but the mark failed on every try: later copies of the event may be handled
    /// again once the claim lapses. The answer is still 200 (the event was handled; a non-2xx would have the service
    /// deliver it again).
    pub fn mark_failed(&self) -> bool {
        self.mark_failed
    }

    /// Whether releasing the claim after a failed handler failed (the claim then lapses after the ttl).
    pub fn release_failed(&self) -> bool {
        self.release_failed
    }

    /// The next step at `now` (epoch seconds, the real clock).
    pub fn next(&mut self, now: f64) -> Step {
        if self.started && !self.lost && now >= self.lease_until {
            self.lost = true;
            self.keep(Record::LeaseLost);
        }
        if self.lost && self.started && !self.abort_told && self.settled.is_none() {
            self.abort_told = true;
            return Step::Abort;
        }
        match self.phase {
            Phase::Start if self.store.is_some() => {
                self.phase = Phase::Claiming;
                Step::Claim
            }
            Phase::Start | Phase::Claimed => {
                self.phase = Phase::Running;
                self.started = true;
                Step::Run
            }
            // A store call is out: the host reports it before asking again.
            Phase::Claiming => Step::Claim,
            Phase::Renewing => Step::Renew,
            Phase::Marking => Step::Mark,
            Phase::Releasing => Step::Release,
            Phase::Running => self.running(now),
            Phase::Done(outcome) => Step::Respond(outcome),
        }
    }

    fn running(&mut self, now: f64) -> Step {
        match self.settled {
            None => {
                if !self.lost && now >= self.renew_at {
                    self.phase = Phase::Renewing;
                    return Step::Renew;
                }
                let until = Some(self.renew_at.min(self.lease_until))
                    .filter(|t| !self.lost && t.is_finite());
                Step::Wait { until }
            }
            Some(true) if self.store.is_none() => self.done(Outcome::Handled),
            Some(true) => match self.retry_at {
                Some(at) if now < at => Step::Sleep { until: at },
                _ => {
                    self.phase = Phase::Marking;
                    Step::Mark
                }
            },
            // A lost claim is not this instance's to release (an unfenced store would delete another's).
            Some(false) if self.store.is_some_and(StoreKind::claims) && !self.lost => {
                self.phase = Phase::Releasing;
                Step::Release
            }
            Some(false) => self.done(Outcome::HandlerFailed),
        }
    }

    fn done(&mut self, outcome: Outcome) -> Step {
        self.phase = Phase::Done(outcome);
        Step::Respond(outcome)
    }

    /// The store's answer to the claim sent at `sent_at` (`None`: it failed or did not answer in time).
    pub fn on_claim(&mut self, answer: Option<Claim>, sent_at: f64) {
        if self.phase != Phase::Claiming {
            return;
        }
        self.keep(Record::Dedupe(match answer {
            None => Dedupe::StoreUnavailable,
            Some(Claim::Processed) => Dedupe::AlreadyProcessed,
            Some(Claim::InProgress) => Dedupe::ClaimedElsewhere,
            Some(Claim::Won) => Dedupe::Won,
        }));
        self.phase = match answer {
            None => Phase::Done(Outcome::StoreUnavailable),
            Some(Claim::Processed) => Phase::Done(Outcome::AlreadyProcessed),
            Some(Claim::InProgress) => Phase::Done(Outcome::InProgress),
            Some(Claim::Won) => {
                if self.store.is_some_and(StoreKind::claims) {
                    // The store set its expiry after this was sent: the lease lasts at least this long.
                    self.lease_until = sent_at + self.ttl;
                }
                if self.store.is_some_and(StoreKind::renews) {
                    self.renew_at = sent_at + self.ttl / 3.0;
                }
                Phase::Claimed
            }
        };
    }

    /// The store's answer to the renewal sent at `sent_at`: `Some(true)` extended, `Some(false)` lost (another holds
    /// the event, or it was marked), `None` failed or did not answer (tried again at a sixth of the ttl, until the
    /// lease lapses).
    pub fn on_renew(&mut self, held: Option<bool>, sent_at: f64) {
        if self.phase != Phase::Renewing {
            return;
        }
        self.phase = Phase::Running;
        match held {
            Some(true) => {
                self.lease_until = self.lease_until.max(sent_at + self.ttl);
                self.renew_at = sent_at + self.ttl / 3.0;
                self.keep(Record::Renewed);
            }
            Some(false) => {
                self.lost = true;
                self.keep(Record::LeaseLost);
            }
            None => {
                self.renew_at = sent_at + self.ttl / 6.0;
                self.keep(Record::RenewalFailed);
            }
        }
    }

    /// The handler settled: `ok` it resolved, else it threw or rejected.
    pub fn on_handler(&mut self, ok: bool, now: f64) {
        if self.settled.is_some() {
            return;
        }
        self.settled = Some(ok);
        // A failed mark is tried again while the lease lasts, and never longer than a ttl after the handler.
        self.mark_until = (now + self.ttl).min(self.lease_until);
    }

    /// The mark's result at `now`: a failure is tried again after a doubling wait while there is time, never turned
    /// into a release; after the last try the answer is still 200.
    pub fn on_mark(&mut self, ok: bool, now: f64) {
        if self.phase != Phase::Marking {
            return;
        }
        if ok {
            self.phase = Phase::Done(Outcome::Handled);
            return;
        }
        let at = now + self.retry_wait;
        if at < self.mark_until {
            self.retry_at = Some(at);
            self.retry_wait = (self.retry_wait * 2.0).min(MARK_RETRY_MAX);
            self.phase = Phase::Running;
            self.keep(Record::MarkRetried);
        } else {
            self.mark_failed = true;
            self.phase = Phase::Done(Outcome::Handled);
            self.keep(Record::MarkFailed);
        }
    }

    /// The release was sent (`ok`: the store answered); the answer is 500 either way.
    pub fn on_release(&mut self, ok: bool) {
        if self.phase != Phase::Releasing {
            return;
        }
        self.release_failed = !ok;
        self.phase = Phase::Done(Outcome::HandlerFailed);
        self.keep(Record::Released(ok));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: f64 = 3.0;

    /// A delivery claimed at 0.0 by a fenced store, its handler started.
    fn running() -> Handling {
        let mut h = Handling::new(TTL, Some(StoreKind::Fenced));
        assert_eq!(h.next(0.0), Step::Claim);
        h.on_claim(Some(Claim::Won), 0.0);
        assert_eq!(h.next(0.01), Step::Run);
        h
    }

    #[test]
    fn statuses_of_each_outcome_and_refusal() {
        let table = [
            (Outcome::Handled, 200, None),
            (Outcome::AlreadyProcessed, 200, None),
            (Outcome::InProgress, 409, Some("in_progress")),
            (Outcome::HandlerFailed, 500, Some("handler_failed")),
            (Outcome::StoreUnavailable, 503, Some("dedupe_unavailable")),
        ];
        for (outcome, status, code) in table {
            assert_eq!(
                (outcome.status(), outcome.error_code()),
                (status, code),
                "{outcome:?}"
            );
        }
        assert_eq!(refused_status(ErrorCode::BodyTooLarge), 413);
        assert_eq!(refused_status(ErrorCode::BodyTimeout), 408);
        assert_eq!(refused_status(ErrorCode::JwksUnavailable), 503);
        assert_eq!(refused_status(ErrorCode::DedupeUnavailable), 503);
        for code in [
            ErrorCode::InvalidSignature,
            ErrorCode::BodyMismatch,
            ErrorCode::Expired,
            ErrorCode::MissingSignature,
        ] {
            assert_eq!(refused_status(code), 400, "{code}");
        }
        for code in [
            ErrorCode::InvalidOptions,
            ErrorCode::InvalidJwks,
            ErrorCode::KeysNotLoaded,
            ErrorCode::InvalidInput,
        ] {
            assert_eq!(refused_status(code), 500, "{code}");
        }
        // Every code has a status a sender can read as an error.
        for code in ErrorCode::all() {
            assert!((400..600).contains(&refused_status(code)), "{code}");
        }
    }

    #[test]
    fn without_a_store_the_handler_just_runs() {
        let mut h = Handling::new(TTL, None);
        assert_eq!(h.next(0.0), Step::Run);
        assert_eq!(
            h.next(0.0),
            Step::Wait { until: None },
            "no lease: nothing to renew"
        );
        h.on_handler(true, 100.0);
        assert_eq!(h.next(100.0), Step::Respond(Outcome::Handled));
        let mut h = Handling::new(TTL, None);
        assert_eq!(h.next(0.0), Step::Run);
        h.on_handler(false, 1.0);
        assert_eq!(h.next(1.0), Step::Respond(Outcome::HandlerFailed));
    }

    #[test]
    fn a_duplicate_is_answered_without_running_the_handler() {
        for (answer, outcome) in [
            (Some(Claim::Processed), Outcome::AlreadyProcessed),
            (Some(Claim::InProgress), Outcome::InProgress),
            (None, Outcome::StoreUnavailable),
        ] {
            let mut h = Handling::new(TTL, Some(StoreKind::Fenced));
            assert_eq!(h.next(0.0), Step::Claim);
            assert_eq!(
                h.next(0.0),
                Step::Claim,
                "asked again before the answer: still the claim"
            );
            h.on_claim(answer, 0.0);
            assert_eq!(h.next(0.1), Step::Respond(outcome));
        }
    }

    #[test]
    fn the_lease_is_renewed_every_third_of_the_ttl_while_the_handler_runs() {
        let mut h = running();
        assert_eq!(h.next(0.5), Step::Wait { until: Some(1.0) });
        let mut renewals = Vec::new();
        let mut t = 1.0;
        while t < 10.0 {
            assert_eq!(h.next(t), Step::Renew, "at {t}");
            renewals.push(t);
            h.on_renew(Some(true), t);
            assert_eq!(
                h.next(t + 0.01),
                Step::Wait {
                    until: Some(t + 1.0)
                }
            );
            t += 1.0;
        }
        assert_eq!(
            renewals.len(),
            9,
            "a handler three times slower than the ttl kept its lease"
        );
        assert!(!h.lease_lost());
        h.on_handler(true, 10.2);
        assert_eq!(h.next(10.2), Step::Mark);
        h.on_mark(true, 10.3);
        assert_eq!(h.next(10.3), Step::Respond(Outcome::Handled));
        assert!(!h.mark_failed());
    }

    #[test]
    fn a_renewal_answered_lost_aborts_the_handler_once_and_nothing_is_released() {
        let mut h = running();
        assert_eq!(h.next(1.0), Step::Renew);
        h.on_renew(Some(false), 1.0);
        assert!(h.lease_lost());
        assert_eq!(h.next(1.1), Step::Abort);
        assert_eq!(
            h.next(1.1),
            Step::Wait { until: None },
            "no more renewals, one abort"
        );
        h.on_handler(false, 2.0);
        assert_eq!(
            h.next(2.0),
            Step::Respond(Outcome::HandlerFailed),
            "the claim is another's now: no release"
        );
    }

    #[test]
    fn a_lost_lease_with_a_handler_that_still_succeeds_is_marked() {
        let mut h = running();
        assert_eq!(h.next(1.0), Step::Renew);
        h.on_renew(Some(false), 1.0);
        assert_eq!(h.next(1.0), Step::Abort);
        h.on_handler(true, 1.5);
        assert_eq!(
            h.next(1.5),
            Step::Mark,
            "the event was handled: later copies must see it"
        );
        h.on_mark(true, 1.6);
        assert_eq!(h.next(1.6), Step::Respond(Outcome::Handled));
    }

    #[test]
    fn failed_renewals_are_retried_until_the_lease_lapses_then_it_is_lost() {
        let mut h = running();
        assert_eq!(h.next(1.0), Step::Renew);
        h.on_renew(None, 1.0);
        assert_eq!(
            h.next(1.0),
            Step::Wait { until: Some(1.5) },
            "tried again at a sixth of the ttl"
        );
        assert_eq!(h.next(1.5), Step::Renew);
        h.on_renew(None, 1.5);
        assert_eq!(h.next(2.0), Step::Renew);
        h.on_renew(None, 2.0);
        assert_eq!(h.next(2.5), Step::Renew);
        h.on_renew(None, 2.5);
        assert_eq!(
            h.next(2.9),
            Step::Wait { until: Some(3.0) },
            "the lapse is the next deadline"
        );
        assert!(!h.lease_lost());
        assert_eq!(
            h.next(3.0),
            Step::Abort,
            "no renewal succeeded within the ttl"
        );
        assert!(h.lease_lost());
        h.on_handler(false, 4.0);
        assert_eq!(h.next(4.0), Step::Respond(Outcome::HandlerFailed));
    }

    #[test]
    fn a_renewal_that_succeeds_after_failures_restores_the_lease() {
        let mut h = running();
        assert_eq!(h.next(1.0), Step::Renew);
        h.on_renew(None, 1.0);
        assert_eq!(h.next(1.5), Step::Renew);
        h.on_renew(Some(true), 1.5);
        assert_eq!(h.next(2.0), Step::Wait { until: Some(2.5) });
        assert_eq!(h.next(4.4), Step::Renew, "lease now runs to 4.5");
        assert!(!h.lease_lost());
    }

    #[test]
    fn a_failed_handler_releases_its_claim_and_answers_500() {
        let mut h = running();
        h.on_handler(false, 0.5);
        assert_eq!(h.next(0.5), Step::Release);
        h.on_release(true);
        assert_eq!(h.next(0.6), Step::Respond(Outcome::HandlerFailed));
        assert!(!h.release_failed());
        let mut h = running();
        h.on_handler(false, 0.5);
        assert_eq!(h.next(0.5), Step::Release);
        h.on_release(false);
        assert_eq!(h.next(0.6), Step::Respond(Outcome::HandlerFailed));
        assert!(h.release_failed());
    }

    #[test]
    fn a_failed_mark_is_retried_with_a_doubling_wait_never_released() {
        let mut h = running();
        h.on_handler(true, 0.2);
        let mut now = 0.2;
        let mut tries = Vec::new();
        loop {
            match h.next(now) {
                Step::Mark => {
                    tries.push(now);
                    h.on_mark(false, now);
                }
                Step::Sleep { until } => now = until,
                Step::Respond(outcome) => {
                    assert_eq!(outcome, Outcome::Handled, "200: the handler did its work");
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(h.mark_failed());
        // The lease ran to 3.0: tries at 0.2, 0.3, 0.5, 0.9, 1.7 (the next wait, 1.6 s, would end after it).
        let expected = [0.2, 0.3, 0.5, 0.9, 1.7];
        assert_eq!(tries.len(), expected.len(), "{tries:?}");
        for (t, e) in tries.iter().zip(expected) {
            assert!((t - e).abs() < 1e-9, "{tries:?}");
        }
    }

    #[test]
    fn a_mark_that_succeeds_on_a_later_try_answers_200_marked() {
        let mut h = running();
        h.on_handler(true, 0.2);
        assert_eq!(h.next(0.2), Step::Mark);
        h.on_mark(false, 0.2);
        assert_eq!(
            h.next(0.25),
            Step::Sleep {
                until: 0.30000000000000004
            }
        );
        assert_eq!(h.next(0.31), Step::Mark);
        h.on_mark(true, 0.31);
        assert_eq!(h.next(0.31), Step::Respond(Outcome::Handled));
        assert!(!h.mark_failed());
    }

    #[test]
    fn an_unfenced_store_is_not_renewed_and_not_released_after_its_ttl() {
        let mut h = Handling::new(TTL, Some(StoreKind::Unfenced));
        assert_eq!(h.next(0.0), Step::Claim);
        h.on_claim(Some(Claim::Won), 0.0);
        assert_eq!(h.next(0.0), Step::Run);
        assert_eq!(
            h.next(0.1),
            Step::Wait { until: Some(3.0) },
            "no renewal, only the lapse"
        );
        assert_eq!(h.next(3.0), Step::Abort);
        h.on_handler(false, 5.0);
        assert_eq!(
            h.next(5.0),
            Step::Respond(Outcome::HandlerFailed),
            "releasing now could delete the claim of whoever took the event"
        );
        let mut h = Handling::new(TTL, Some(StoreKind::Unfenced));
        h.next(0.0);
        h.on_claim(Some(Claim::Won), 0.0);
        h.next(0.0);
        h.on_handler(false, 1.0);
        assert_eq!(h.next(1.0), Step::Release, "within its ttl it is released");
    }

    #[test]
    fn a_check_then_add_store_marks_but_neither_renews_nor_releases() {
        let mut h = Handling::new(TTL, Some(StoreKind::CheckThenAdd));
        assert_eq!(h.next(0.0), Step::Claim);
        h.on_claim(Some(Claim::Won), 0.0);
        assert_eq!(h.next(0.0), Step::Run);
        assert_eq!(h.next(100.0), Step::Wait { until: None });
        h.on_handler(false, 100.0);
        assert_eq!(h.next(100.0), Step::Respond(Outcome::HandlerFailed));
        let mut h = Handling::new(TTL, Some(StoreKind::CheckThenAdd));
        h.next(0.0);
        h.on_claim(Some(Claim::Won), 0.0);
        h.next(0.0);
        h.on_handler(true, 1.0);
        assert_eq!(h.next(1.0), Step::Mark);
    }

    #[test]
    fn reports_out_of_turn_are_ignored() {
        let mut h = running();
        h.on_claim(Some(Claim::InProgress), 0.5);
        h.on_renew(Some(false), 0.5);
        h.on_mark(true, 0.5);
        h.on_release(true);
        assert!(!h.lease_lost());
        assert_eq!(h.next(0.5), Step::Wait { until: Some(1.0) });
        h.on_handler(true, 0.6);
        h.on_handler(false, 0.7);
        assert_eq!(h.next(0.7), Step::Mark, "the first settling counts");
    }

    /// Drives `h` through `steps` (the report to make after each step, `None` to only step at that time), taking
    /// the record each leaves.
    fn records(mut h: Handling, script: &[(f64, Option<Report>)]) -> Vec<Record> {
        h.observe();
        let mut out = Vec::new();
        for (now, report) in script {
            let step = h.next(*now);
            out.extend(h.take_record());
            match (step, report) {
                (_, None) => {}
                (Step::Claim, Some(Report::Claim(answer))) => h.on_claim(*answer, *now),
                (Step::Renew, Some(Report::Renew(held))) => h.on_renew(*held, *now),
                (Step::Wait { .. }, Some(Report::Handler(ok))) => h.on_handler(*ok, *now),
                (Step::Mark, Some(Report::Mark(ok))) => h.on_mark(*ok, *now),
                (Step::Release, Some(Report::Release(ok))) => h.on_release(*ok),
                (step, report) => panic!("at {now}: {step:?} with {report:?}"),
            }
            out.extend(h.take_record());
        }
        out
    }

    #[derive(Debug)]
    enum Report {
        Claim(Option<Claim>),
        Renew(Option<bool>),
        Handler(bool),
        Mark(bool),
        Release(bool),
    }

    #[test]
    fn an_unobserved_handling_keeps_no_record() {
        let mut h = Handling::new(TTL, Some(StoreKind::Fenced));
        h.next(0.0);
        h.on_claim(Some(Claim::InProgress), 0.0);
        assert_eq!(h.take_record(), None);
    }

    #[test]
    fn the_dedupe_decision_is_recorded_for_each_claim_answer() {
        for (answer, dedupe, outcome) in [
            (Some(Claim::Won), Dedupe::Won, None),
            (
                Some(Claim::InProgress),
                Dedupe::ClaimedElsewhere,
                Some(Outcome::InProgress),
            ),
            (
                Some(Claim::Processed),
                Dedupe::AlreadyProcessed,
                Some(Outcome::AlreadyProcessed),
            ),
            (
                None,
                Dedupe::StoreUnavailable,
                Some(Outcome::StoreUnavailable),
            ),
        ] {
            let mut h = Handling::new(TTL, Some(StoreKind::Fenced));
            h.observe();
            assert_eq!(h.next(0.0), Step::Claim);
            h.on_claim(answer, 0.0);
            assert_eq!(h.take_record(), Some(Record::Dedupe(dedupe)));
            assert_eq!(h.take_record(), None, "taken once");
            if let Some(outcome) = outcome {
                assert_eq!(h.next(0.1), Step::Respond(outcome));
            }
        }
        assert_eq!(Dedupe::ClaimedElsewhere.as_str(), "claimed_elsewhere");
    }

    #[test]
    fn renewals_and_a_lost_lease_are_recorded_as_they_happen() {
        let h = Handling::new(TTL, Some(StoreKind::Fenced));
        let got = records(
            h,
            &[
                (0.0, Some(Report::Claim(Some(Claim::Won)))),
                (0.01, None),
                (1.0, Some(Report::Renew(Some(true)))),
                (2.0, Some(Report::Renew(None))),
                (2.5, Some(Report::Renew(Some(false)))),
                (2.6, None),
                (3.0, Some(Report::Handler(false))),
                (3.0, None),
            ],
        );
        assert_eq!(
            got,
            [
                Record::Dedupe(Dedupe::Won),
                Record::Renewed,
                Record::RenewalFailed,
                Record::LeaseLost,
            ],
            "a lost lease is not released"
        );
    }

    #[test]
    fn a_lease_that_lapses_without_a_renewal_is_recorded_lost() {
        let h = Handling::new(TTL, Some(StoreKind::Unfenced));
        let got = records(
            h,
            &[
                (0.0, Some(Report::Claim(Some(Claim::Won)))),
                (0.0, None),
                (3.0, None),
            ],
        );
        assert_eq!(got, [Record::Dedupe(Dedupe::Won), Record::LeaseLost]);
    }

    #[test]
    fn failed_marks_and_a_release_are_recorded() {
        let h = Handling::new(TTL, Some(StoreKind::Fenced));
        let got = records(
            h,
            &[
                (0.0, Some(Report::Claim(Some(Claim::Won)))),
                (0.0, None),
                (0.1, Some(Report::Handler(true))),
                (0.1, Some(Report::Mark(false))),
                (0.2, Some(Report::Mark(true))),
            ],
        );
        assert_eq!(got, [Record::Dedupe(Dedupe::Won), Record::MarkRetried]);
        let h = Handling::new(0.2, Some(StoreKind::Fenced));
        let got = records(
            h,
            &[
                (0.0, Some(Report::Claim(Some(Claim::Won)))),
                (0.0, None),
                (0.01, Some(Report::Handler(true))),
                (0.01, Some(Report::Mark(false))),
                (0.11, Some(Report::Mark(false))),
            ],
        );
        assert_eq!(
            got,
            [
                Record::Dedupe(Dedupe::Won),
                Record::MarkRetried,
                Record::MarkFailed
            ]
        );
        let h = Handling::new(TTL, Some(StoreKind::Fenced));
        let got = records(
            h,
            &[
                (0.0, Some(Report::Claim(Some(Claim::Won)))),
                (0.0, None),
                (0.1, Some(Report::Handler(false))),
                (0.1, Some(Report::Release(false))),
            ],
        );
        assert_eq!(got, [Record::Dedupe(Dedupe::Won), Record::Released(false)]);
    }

    /// The strings of the array `name` of `telemetry.js`, which names the records by their numbers.
    fn js_table(name: &str) -> Vec<&'static str> {
        let js = include_str!("../wasm/telemetry.js");
        let start = js.find(&format!("const {name} = [")).unwrap();
        let end = start + js[start..].find("];").unwrap();
        js[start..end].split('"').skip(1).step_by(2).collect()
    }

    #[test]
    fn the_hosts_tables_name_each_dedupe_decision_and_outcome_by_its_number() {
        let dedupes = [
            Dedupe::Won,
            Dedupe::ClaimedElsewhere,
            Dedupe::AlreadyProcessed,
            Dedupe::StoreUnavailable,
        ];
        for (place, d) in dedupes.iter().enumerate() {
            assert_eq!(*d as usize, place, "{d:?} is numbered by its place");
        }
        assert_eq!(js_table("DEDUPES"), dedupes.map(Dedupe::as_str));
        let outcomes = [
            (Outcome::Handled, "handled"),
            (Outcome::AlreadyProcessed, "duplicate"),
            (Outcome::InProgress, "in_progress"),
            (Outcome::HandlerFailed, "handler_failed"),
            (Outcome::StoreUnavailable, "dedupe_unavailable"),
        ];
        for (place, (o, _)) in outcomes.iter().enumerate() {
            assert_eq!(*o as usize, place, "{o:?} is numbered by its place");
        }
        assert_eq!(js_table("OUTCOMES"), outcomes.map(|(_, name)| name));
        assert_eq!(
            js_table("HANDLING_EVENTS").len(),
            6,
            "one event per record after the dedupe decisions"
        );
    }

    #[test]
    fn the_store_timeout_is_a_third_of_the_ttl() {
        assert_eq!(crate::webhook::dedupe::store_timeout(60.0), 20.0);
    }
}
