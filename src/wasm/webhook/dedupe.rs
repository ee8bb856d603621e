//! Dedupe stores: the in-memory one of the core ([`MemoryDedupe`]), or one handed over (`claim` / `renew` /
//! `release` / `add`, the unfenced `claim` / `release` / `add`, or `has` / `add`), used as the core's
//! [`store_kind`](crate::webhook::dedupe::store_kind) says, its answers read by [`Claim`]. Each call here is one
//! command of the core's rules; what to do with the answers is decided by the core (`verify`'s flags, or
//! [`crate::webhook::handle::Handling`]).

use std::cell::RefCell;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::claims::ENVELOPE_KEYS;
use super::{invalid_options, promise, VerifierState};
use crate::wasm::{interop, platform};
use crate::webhook::dedupe::{
    store_timeout, Claim, MemoryDedupe, StoreKind, DEFAULT_TTL, SYNC_STORE_NEEDED,
};
use crate::webhook::ErrorCode;

/// Where claimed and processed event ids are kept.
pub(super) enum Dedupe {
    Off,
    /// The core's in-memory store (`dedupe: true`).
    Memory(RefCell<MemoryDedupe>),
    /// A store handed over by the caller, used as its methods say ([`store_kind`](crate::webhook::dedupe::store_kind)).
    Store(StoreKind, JsValue),
}

impl Dedupe {
    /// The kind of store, as the core's handling sees it (`None`: no dedupe).
    pub(super) fn kind(&self) -> Option<StoreKind> {
        match self {
            Dedupe::Off => None,
            Dedupe::Memory(_) => Some(StoreKind::Fenced),
            Dedupe::Store(kind, _) => Some(*kind),
        }
    }
}

/// A method of a dedupe store (checked present when the verifier was created).
pub(super) fn store_method(store: &JsValue, name: &'static str) -> Result<Function, JsValue> {
    interop::function_option(&interop::option(store, name))
        .ok_or_else(|| invalid_options("the dedupe store lost one of its methods"))
}

/// The `eventId` of an event, or the id itself.
pub(super) fn event_id_of(event_or_id: &JsValue, detail: &'static str) -> Result<String, JsValue> {
    event_or_id
        .as_string()
        .or_else(|| interop::option(event_or_id, "eventId").as_string())
        .ok_or_else(|| interop::webhook_failure(ErrorCode::InvalidInput, detail))
}

/// A new fencing token (a random UUID).
pub(super) fn new_token() -> String {
    interop::token().as_string().unwrap_or_default()
}

/// Calls store method `name` with `args` and settles its answer (a plain value or a promise) within `ttl`'s
/// [`store_timeout`]: a store's own failure is passed on as it is; a store that does not answer in time is
/// `dedupe_unavailable`.
async fn call_store(
    store: &JsValue,
    name: &'static str,
    args: &[JsValue],
    ttl: f64,
) -> Result<JsValue, JsValue> {
    let method = store_method(store, name)?;
    let array: js_sys::Array = args.iter().collect();
    let answer = interop::own_promise(&method.apply(store, &array)?);
    let deadline = platform::Deadline::start(store_timeout(ttl) * 1000.0);
    // The deadline rejects with the string "timeout" (a timer can fire a little before `Date.now()` says it is due,
    // so its reason is what tells, not the clock).
    match wasm_bindgen_futures::JsFuture::from(deadline.race(&answer)).await {
        Err(e) if e.as_string().as_deref() == Some("timeout") => Err(interop::webhook_failure(
            ErrorCode::DedupeUnavailable,
            "the dedupe store did not answer in time (a third of claimTtlSeconds)",
        )),
        answer => answer,
    }
}

impl VerifierState {
    /// Claims `event_id` for `token` for `ttl` seconds (`now`: the verifier's clock, for the in-memory store).
    pub(super) async fn claim(
        &self,
        event_id: &str,
        token: &str,
        ttl: f64,
        now: f64,
    ) -> Result<Claim, JsValue> {
        match &self.dedupe {
            Dedupe::Off => Ok(Claim::Won),
            Dedupe::Memory(store) => Ok(store.borrow_mut().claim(event_id, now, token, ttl)),
            Dedupe::Store(StoreKind::CheckThenAdd, store) => {
                let seen = call_store(store, "has", &[event_id.into()], ttl).await?;
                Ok(Claim::from_has(seen.is_truthy()))
            }
            Dedupe::Store(_, store) => {
                let args: [JsValue; 3] = [event_id.into(), ttl.into(), token.into()];
                let won = call_store(store, "claim", &args, ttl).await?;
                Ok(Claim::from_store_answer(
                    won.as_string().as_deref(),
                    won.is_truthy(),
                ))
            }
        }
    }

    /// Extends `token`'s claim on `event_id` by `ttl` seconds; `false` when the lease was lost. A store without
    /// `renew` cannot extend: `false`.
    pub(super) async fn renew(
        &self,
        event_id: &str,
        token: &str,
        ttl: f64,
        now: f64,
    ) -> Result<bool, JsValue> {
        match &self.dedupe {
            Dedupe::Memory(store) => Ok(store.borrow_mut().renew(event_id, now, token, ttl)),
            Dedupe::Store(StoreKind::Fenced, store) => {
                let args: [JsValue; 3] = [event_id.into(), ttl.into(), token.into()];
                Ok(call_store(store, "renew", &args, ttl).await?.is_truthy())
            }
            _ => Ok(false),
        }
    }

    /// Gives up `token`'s claim on `event_id` (a no-op without claims).
    pub(super) async fn release(&self, event_id: &str, token: &str) -> Result<(), JsValue> {
        match &self.dedupe {
            Dedupe::Memory(store) => store.borrow_mut().release(event_id, token),
            Dedupe::Store(kind, store) if kind.claims() => {
                let args: [JsValue; 2] = [event_id.into(), token.into()];
                call_store(store, "release", &args, self.claim_ttl).await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Marks `event_id` processed for a week ([`DEFAULT_TTL`]).
    pub(super) async fn mark(&self, event_id: &str, now: f64) -> Result<(), JsValue> {
        match &self.dedupe {
            Dedupe::Off => Err(invalid_options("markProcessed needs the dedupe option")),
            Dedupe::Memory(store) => {
                store.borrow_mut().confirm(event_id, now);
                Ok(())
            }
            Dedupe::Store(_, store) => {
                let args: [JsValue; 2] = [event_id.into(), DEFAULT_TTL.into()];
                call_store(store, "add", &args, self.claim_ttl).await?;
                Ok(())
            }
        }
    }

    /// Whether this delivery is a duplicate (`None` without dedupe): `verify`'s claim, held in [`HeldClaims`] for
    /// `markProcessed`, `renewClaim` and `releaseClaim` when won.
    pub(super) async fn is_duplicate(
        &self,
        event_id: &str,
        now: f64,
    ) -> Result<Option<Claim>, JsValue> {
        if let Dedupe::Off | Dedupe::Memory(_) = self.dedupe {
            return self.is_duplicate_sync(event_id, now);
        }
        let token = new_token();
        let sent_at = platform::now_seconds();
        let claim = self.claim(event_id, &token, self.claim_ttl, now).await?;
        if claim == Claim::Won {
            self.hold(event_id, token, sent_at);
        }
        Ok(Some(claim))
    }

    fn hold(&self, event_id: &str, token: String, sent_at: f64) {
        if self.dedupe.kind().is_some_and(StoreKind::claims) {
            self.held
                .borrow_mut()
                .hold(event_id, token, sent_at + self.claim_ttl, sent_at);
        }
    }

    pub(super) fn is_duplicate_sync(
        &self,
        event_id: &str,
        now: f64,
    ) -> Result<Option<Claim>, JsValue> {
        if matches!(self.dedupe, Dedupe::Off) {
            return Ok(None);
        }
        self.claim_sync(event_id, now)
    }

    /// The claim of `is_duplicate_sync` with dedupe on: its own function, so that a verifier without dedupe neither
    /// makes a claim token per delivery nor compiles this on its first verification.
    #[inline(never)]
    fn claim_sync(&self, event_id: &str, now: f64) -> Result<Option<Claim>, JsValue> {
        let token = new_token();
        let sent_at = platform::now_seconds();
        let claim = match &self.dedupe {
            Dedupe::Off => return Ok(None),
            Dedupe::Memory(store) => {
                store
                    .borrow_mut()
                    .claim(event_id, now, &token, self.claim_ttl)
            }
            Dedupe::Store(StoreKind::CheckThenAdd, store) => {
                let seen = store_method(store, "has")?.call1(store, &event_id.into())?;
                if is_thenable(&seen) {
                    return Err(interop::webhook_error(SYNC_STORE_NEEDED));
                }
                Claim::from_has(seen.is_truthy())
            }
            Dedupe::Store(_, store) => {
                let args: [JsValue; 3] = [
                    event_id.into(),
                    self.claim_ttl.into(),
                    token.as_str().into(),
                ];
                let array: js_sys::Array = args.iter().collect();
                let won = store_method(store, "claim")?.apply(store, &array)?;
                if is_thenable(&won) {
                    self.give_back_late_claim(won, event_id, &token);
                    return Err(interop::webhook_error(SYNC_STORE_NEEDED));
                }
                Claim::from_store_answer(won.as_string().as_deref(), won.is_truthy())
            }
        };
        if claim == Claim::Won {
            self.hold(event_id, token, sent_at);
        }
        Ok(Some(claim))
    }

    /// `verifySync` cannot wait for a store's promise: a claim it may have won is given back when it settles, so the
    /// event is not blocked.
    fn give_back_late_claim(&self, answer: JsValue, event_id: &str, token: &str) {
        let Dedupe::Store(_, store) = &self.dedupe else {
            return;
        };
        let (store, id, token) = (store.clone(), event_id.to_owned(), token.to_owned());
        let ttl = self.claim_ttl;
        drop(promise(async move {
            let answer = interop::settle(answer).await.ok();
            let answer =
                answer.map(|w| Claim::from_store_answer(w.as_string().as_deref(), w.is_truthy()));
            if answer == Some(Claim::Won) {
                let _ = call_store(&store, "release", &[id.into(), token.into()], ttl).await;
            }
            Ok(JsValue::UNDEFINED)
        }));
    }

    /// For `renewClaim` and `releaseClaim`: the event's id, and the token of this instance's live claim on it taken
    /// by `verify` (`None`: not held, lapsed, or no claims). `not_an_event` and `no_dedupe` are their refusals.
    pub(super) fn held_claim(
        &self,
        event_or_id: &JsValue,
        not_an_event: &'static str,
        no_dedupe: &'static str,
    ) -> Result<(String, Option<String>), JsValue> {
        let id = event_id_of(event_or_id, not_an_event)?;
        if matches!(self.dedupe, Dedupe::Off) {
            return Err(invalid_options(no_dedupe));
        }
        let token = self
            .held
            .borrow()
            .token(&id, platform::now_seconds())
            .map(str::to_owned);
        Ok((id, token))
    }
}

/// Sets `duplicate` (not the delivery that won the claim) and `inProgress` (a duplicate whose first delivery is
/// still being handled) on a verified event.
pub(super) fn set_claim(event: &JsValue, claim: Claim) {
    ENVELOPE_KEYS.with(|keys| {
        let _ = Reflect::set(event, &keys.duplicate, &claim.is_duplicate().into());
        let _ = Reflect::set(
            event,
            &keys.in_progress,
            &(claim == Claim::InProgress).into(),
        );
    });
}

fn is_thenable(value: &JsValue) -> bool {
    value.has_type::<Promise>()
        || interop::function_option(&interop::option(value, "then")).is_some()
}
