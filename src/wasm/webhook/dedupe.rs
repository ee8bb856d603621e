//! Dedupe stores: the in-memory one of the core ([`MemoryDedupe`]), or one handed over (`claim` / `release` / `add`,
//! or `has` / `add`), used as the core's [`store_kind`](crate::webhook::dedupe::store_kind) says, its answers read by [`Claim`].

use std::cell::RefCell;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::claims::ENVELOPE_KEYS;
use super::{invalid_options, promise, VerifierState};
use crate::wasm::interop;
use crate::webhook::dedupe::{
    Claim, MemoryDedupe, StoreKind, DEFAULT_CLAIM_TTL, SYNC_STORE_NEEDED,
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

impl VerifierState {
    /// Whether this delivery is a duplicate (`None` without dedupe). With a claiming store (the in-memory one or a
    /// `claim()` store) it claims the id: the first caller wins, every later one is a duplicate until the claim is
    /// released or lapses.
    pub(super) async fn is_duplicate(
        &self,
        event_id: &str,
        now: f64,
    ) -> Result<Option<Claim>, JsValue> {
        match &self.dedupe {
            Dedupe::Store(StoreKind::Claims, store) => {
                let claim = store_method(store, "claim")?;
                let ttl = JsValue::from_f64(DEFAULT_CLAIM_TTL);
                let won = interop::settle(claim.call2(store, &event_id.into(), &ttl)?).await?;
                Ok(Some(Claim::from_store_answer(
                    won.as_string().as_deref(),
                    won.is_truthy(),
                )))
            }
            Dedupe::Store(StoreKind::CheckThenAdd, store) => {
                let has = store_method(store, "has")?;
                let seen = interop::settle(has.call1(store, &event_id.into())?).await?;
                Ok(Some(Claim::from_has(seen.is_truthy())))
            }
            _ => self.is_duplicate_sync(event_id, now),
        }
    }

    pub(super) fn is_duplicate_sync(
        &self,
        event_id: &str,
        now: f64,
    ) -> Result<Option<Claim>, JsValue> {
        match &self.dedupe {
            Dedupe::Off => Ok(None),
            Dedupe::Memory(store) => Ok(Some(store.borrow_mut().claim(event_id, now))),
            Dedupe::Store(StoreKind::Claims, store) => {
                let claim = store_method(store, "claim")?;
                let ttl = JsValue::from_f64(DEFAULT_CLAIM_TTL);
                let won = claim.call2(store, &event_id.into(), &ttl)?;
                if is_thenable(&won) {
                    // Too late to wait: give a claim this call may have won back, so the event is not blocked.
                    let (store, id) = (store.clone(), event_id.to_owned());
                    drop(promise(async move {
                        let answer = interop::settle(won).await.ok();
                        let answer = answer.map(|w| {
                            Claim::from_store_answer(w.as_string().as_deref(), w.is_truthy())
                        });
                        if answer == Some(Claim::Won) {
                            if let Ok(release) = store_method(&store, "release") {
                                if let Ok(p) = release.call1(&store, &id.into()) {
                                    let _ = interop::settle(p).await;
                                }
                            }
                        }
                        Ok(JsValue::UNDEFINED)
                    }));
                    return Err(interop::webhook_error(SYNC_STORE_NEEDED));
                }
                Ok(Some(Claim::from_store_answer(
                    won.as_string().as_deref(),
                    won.is_truthy(),
                )))
            }
            Dedupe::Store(StoreKind::CheckThenAdd, store) => {
                let has = store_method(store, "has")?;
                let seen = has.call1(store, &event_id.into())?;
                if is_thenable(&seen) {
                    return Err(interop::webhook_error(SYNC_STORE_NEEDED));
                }
                Ok(Some(Claim::from_has(seen.is_truthy())))
            }
        }
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
