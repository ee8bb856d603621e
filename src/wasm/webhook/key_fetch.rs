//! The key-set fetch: the core's [`KeySearch`] decides whether to use a key, fetch, or wait for the fetch in
//! flight; this drives it (the fetch, its deadline, the flight's report to waiters).

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::body_limit::read_capped;
use super::VerifierState;
use crate::wasm::interop;
use crate::wasm::platform::{self, MessageLike};
use crate::wasm::telemetry::{self, delivery};
use crate::webhook::body_limit::MAX_JWKS_BYTES;
use crate::webhook::jwk::PublicKey;
use crate::webhook::key_fetch::{FlightId, KeySearch, KeyStep};
use crate::webhook::JWKS_UNAVAILABLE;

impl VerifierState {
    /// Finds the key for `kid`: drives the core's [`KeySearch`] (join the fetch in flight, or fetch in this call).
    pub(super) async fn key_for(self: &Rc<Self>, kid: &str) -> Result<PublicKey, JsValue> {
        let mut search = KeySearch::new();
        let key = loop {
            let now = self.window()?.now;
            let step = match search.next(
                &self.cache.borrow(),
                &mut self.gate.borrow_mut(),
                kid,
                now,
                js_sys::Date::now(),
                self.timeout_ms,
            ) {
                KeyStep::Use(key) => Ok(key.clone()),
                KeyStep::Fail(e) => return Err(interop::webhook_error(e)),
                KeyStep::Fetch(flight) => Err(Ok(flight)),
                KeyStep::Wait { until_ms } => Err(Err(until_ms)),
            };
            match step {
                Ok(key) => break key,
                // A failed fetch still leaves stale keys usable: the next step decides.
                Err(Ok(flight)) => {
                    let _ = self.fetch_flight(flight).await;
                    search.on_fetched();
                }
                Err(Err(until_ms)) => {
                    search.on_waited(self.wait_for_flight(until_ms).await.is_some());
                }
            }
        };
        Ok(key)
    }

    /// A forced refresh: fetches the key set now, or joins the fetch in flight.
    pub(super) async fn refresh(self: &Rc<Self>) -> Result<(), JsValue> {
        let mut search = KeySearch::refresh();
        while !search.fetched() {
            let now = self.window()?.now;
            let step = match search.next(
                &self.cache.borrow(),
                &mut self.gate.borrow_mut(),
                "",
                now,
                js_sys::Date::now(),
                self.timeout_ms,
            ) {
                KeyStep::Fetch(flight) => Ok(flight),
                KeyStep::Wait { until_ms } => Err(until_ms),
                KeyStep::Use(_) | KeyStep::Fail(_) => return Ok(()),
            };
            match step {
                Ok(flight) => {
                    let result = self.fetch_flight(flight).await;
                    search.on_fetched();
                    result?;
                }
                Err(until_ms) => {
                    let report = self.wait_for_flight(until_ms).await;
                    search.on_waited(report.is_some());
                    // A joined fetch that failed fails this refresh too, as the caller's own fetch would.
                    if report == Some(false) {
                        return Err(interop::webhook_error(JWKS_UNAVAILABLE));
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the fetch this call owns, then reports it: the flight ends and its promise resolves (to whether the fetch
    /// succeeded), which wakes every waiter (each looks at the cache again, in its own request).
    async fn fetch_flight(&self, flight: FlightId) -> Result<(), JsValue> {
        // The flight's promise is created and resolved by this call only: waiters race it against their own timer.
        // (A waiter's own promise resolved from here would not do: workerd, before its cross-request promise
        // handling, drops such a resolution and fails the waiting request with "Promise will never complete".)
        let mut report = None;
        let reported = Promise::new(&mut |resolve, _reject| report = Some(resolve));
        *self.flight.borrow_mut() = Some((flight, reported));
        let observation = self
            .jwks_url
            .as_deref()
            .and_then(|url| telemetry::observe_key_fetch(&self.telemetry, url));
        let result = self.fetch_keys().await;
        if let Some(observation) = &observation {
            match &result {
                Ok(status) => {
                    telemetry::observed(observation, delivery::FETCHED, &(*status).into())
                }
                Err(e) => telemetry::observed(observation, delivery::FETCH_FAILED, e),
            }
        }
        let result = result.map(|_| ());
        self.gate.borrow_mut().finish(flight);
        let mut current = self.flight.borrow_mut();
        if current.as_ref().is_some_and(|(id, _)| *id == flight) {
            *current = None;
        }
        drop(current);
        if let Some(report) = report {
            let _ = report.call1(&JsValue::UNDEFINED, &JsValue::from_bool(result.is_ok()));
        }
        result
    }

    /// Waits for the fetch in flight to report, at most until `until_ms`, on this call's own timer: `Some(ok)` with
    /// the fetch's outcome, `None` when the wait ran out (a fetch whose request ended never reports: workerd cancels
    /// its I/O).
    async fn wait_for_flight(&self, until_ms: f64) -> Option<bool> {
        let timer = platform::Sleep::start((until_ms - js_sys::Date::now()).max(0.0));
        let reported = self.flight.borrow().as_ref().map(|(_, p)| p.clone());
        let wait = match reported {
            Some(reported) => Promise::race(&js_sys::Array::of2(&reported, timer.promise())),
            None => timer.promise().clone(),
        };
        JsFuture::from(wait).await.ok().and_then(|v| v.as_bool())
    }

    /// Fetches the key set into the cache: the answer's status.
    async fn fetch_keys(&self) -> Result<u16, JsValue> {
        let unavailable = || interop::webhook_error(JWKS_UNAVAILABLE);
        let url = self.jwks_url.clone().ok_or_else(unavailable)?;
        // The clock first: a `now` function of the caller's may call this verifier again.
        let started = self.window()?.now;
        self.cache.borrow_mut().on_fetch_started(started);
        let deadline = platform::Deadline::start(self.timeout_ms);
        let headers = platform::object(&[("accept", "application/json".into())]);
        let init = platform::object(&[
            ("method", "GET".into()),
            ("headers", headers),
            ("redirect", "manual".into()),
            ("signal", deadline.signal()),
        ]);
        let response: MessageLike = match platform::fetch(self.fetch.as_ref(), &url, &init) {
            Ok(p) => JsFuture::from(deadline.race(&p))
                .await
                .map_err(|_| unavailable())?
                .unchecked_into(),
            Err(_) => return Err(unavailable()),
        };
        let status = response
            .status()
            .ok()
            .and_then(|s| s.as_f64())
            .unwrap_or(0.0);
        let cache_control = platform::header(&response, "cache-control").ok().flatten();
        let bytes = read_capped(&response, MAX_JWKS_BYTES, &deadline)
            .await
            .map_err(|_| unavailable())?;
        drop(deadline);
        let now = self.window()?.now;
        let status = if (0.0..=999.0).contains(&status) {
            status as u16
        } else {
            0
        };
        self.cache
            .borrow_mut()
            .on_response(now, status, cache_control.as_deref(), &bytes)
            .map_err(interop::webhook_error)?;
        self.hosts.clear();
        Ok(status)
    }
}
