//! `verifier.handle(input, handler)`: drives the core's [`Handling`] (which decides when to claim, renew, mark or
//! release, and what to answer) with the store's commands, the handler's promise and the timers, and writes the
//! answer as a `Response`.

use std::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::body_limit::Body;
use super::dedupe::new_token;
use super::{invalid_options, promise, VerifierState};
use crate::wasm::interop;
use crate::wasm::platform::{self, AbortControllerLike};
use crate::wasm::telemetry::{self, delivery};
use crate::webhook::dedupe::Claim;
use crate::webhook::handle::{refused_status, Handling, Outcome, Record, Step};
use crate::webhook::{ErrorCode, EventIds};

/// A step of the store.
#[derive(Clone, Copy)]
enum Op {
    Claim,
    Renew,
    Mark,
    Release,
}

/// What failed, for `onError(error, { event, stage })`.
#[derive(Clone, Copy)]
enum Stage {
    Claim,
    Handler,
    Renew,
    Mark,
    Release,
}

impl Stage {
    fn as_str(self) -> &'static str {
        match self {
            Stage::Claim => "claim",
            Stage::Handler => "handler",
            Stage::Renew => "renew",
            Stage::Mark => "mark",
            Stage::Release => "release",
        }
    }
}

impl VerifierState {
    pub(super) async fn handle(
        self: Rc<Self>,
        input: JsValue,
        handler: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let handler = interop::function_option(&handler).ok_or_else(|| {
            interop::webhook_failure(
                ErrorCode::InvalidInput,
                "handle takes a handler function: handle(input, async (event) => { ... })",
            )
        })?;
        let on_error = match interop::try_option(&options, "onError") {
            Ok(v) if v.is_undefined() => None,
            Ok(v) => Some(
                interop::function_option(&v)
                    .ok_or_else(|| invalid_options("onError must be a function"))?,
            ),
            Err(()) => {
                return Err(invalid_options(
                    "reading an option threw (a getter or a Proxy)",
                ))
            }
        };
        let observation = telemetry::observe_delivery(&self.telemetry, "handle");
        let observed = observation.is_some();
        let observation = observation.unwrap_or(JsValue::UNDEFINED);
        let verified = match self.read_input(&input).await {
            Ok((body, header)) => self.verified(body, header).await,
            Err(e) => Err(e),
        };
        let (ids, event) = match verified {
            Ok(verified) => verified,
            Err(e) => {
                if observed {
                    telemetry::observed(&observation, delivery::REFUSED, &e);
                }
                return refusal(e);
            }
        };
        if observed {
            telemetry::observed(&observation, delivery::EVENT, &event);
        }
        let report = |error: &JsValue, stage: Stage| {
            report(on_error.as_ref(), error, &event, &ids, stage);
        };
        let id = ids.event_id.as_str();
        let token = new_token();
        let mut h = Handling::new(self.claim_ttl, self.dedupe.kind());
        if observed {
            h.observe();
        }
        let controller = AbortControllerLike::new_abort_controller().ok();
        let mut settled = Promise::resolve(&JsValue::UNDEFINED);
        let mut last_renew_error = JsValue::UNDEFINED;
        let mut last_mark_error = JsValue::UNDEFINED;
        // Each step is a promise, awaited at one place: `[true, value]` or `[false, error]`.
        loop {
            let now = platform::now_seconds();
            let step = h.next(now);
            if observed {
                observe_record(&observation, &mut h);
            }
            let mut sleep = None;
            let waited = match step {
                Step::Claim => self.store_step(Op::Claim, id, &token),
                Step::Renew => self.store_step(Op::Renew, id, &token),
                Step::Mark => self.store_step(Op::Mark, id, &token),
                Step::Release => self.store_step(Op::Release, id, &token),
                Step::Run => {
                    let signal = controller
                        .as_ref()
                        .map_or(JsValue::UNDEFINED, AbortControllerLike::signal);
                    let context = platform::object(&[("signal", signal)]);
                    let started = if observed {
                        telemetry::run_handler(&observation, &handler, &event, &context)
                    } else {
                        handler
                            .call2(&JsValue::UNDEFINED, &event, &context)
                            .unwrap_or_else(|e| Promise::reject(&e).into())
                    };
                    // A promise of the handler's `[true, value]` or `[false, error]`: a timer's `undefined` is not one.
                    settled = interop::outcome(&started);
                    continue;
                }
                Step::Abort => {
                    if !last_renew_error.is_undefined() {
                        report(&last_renew_error, Stage::Renew);
                    }
                    if let Some(controller) = &controller {
                        let _ = controller.abort();
                    }
                    continue;
                }
                Step::Wait { until: None } => settled.clone(),
                Step::Wait { until: Some(t) } | Step::Sleep { until: t } => {
                    let timer = platform::Sleep::start((t - now) * 1000.0);
                    let waited = match step {
                        Step::Wait { .. } => Promise::race(&Array::of2(&settled, timer.promise())),
                        _ => timer.promise().clone(),
                    };
                    sleep = Some(timer);
                    waited
                }
                Step::Respond(outcome) => {
                    if h.mark_failed() && !last_mark_error.is_undefined() {
                        report(&last_mark_error, Stage::Mark);
                    }
                    if observed {
                        telemetry::observed(
                            &observation,
                            delivery::ANSWERED + outcome as u8,
                            &outcome.status().into(),
                        );
                    }
                    return answer(outcome, id);
                }
            };
            let pair: Array = JsFuture::from(interop::outcome(&waited))
                .await
                .unwrap_or_default()
                .unchecked_into();
            drop(sleep);
            let (ok, value) = (pair.get(0).is_truthy(), pair.get(1));
            let after = platform::now_seconds();
            match step {
                Step::Claim => {
                    if !ok {
                        report(&value, Stage::Claim);
                    }
                    let claim = ok.then(|| {
                        Claim::from_store_answer(value.as_string().as_deref(), value.is_truthy())
                    });
                    h.on_claim(claim, now);
                }
                Step::Renew => {
                    if !ok {
                        last_renew_error = value.clone();
                    }
                    h.on_renew(ok.then(|| value.is_truthy()), now);
                }
                Step::Mark => {
                    if !ok {
                        last_mark_error = value;
                    }
                    h.on_mark(ok, after);
                }
                Step::Release => {
                    if !ok {
                        report(&value, Stage::Release);
                    }
                    h.on_release(ok);
                }
                Step::Wait { .. } => {
                    if let Some(handled) = value.dyn_ref::<Array>() {
                        let ok = handled.get(0).is_truthy();
                        if !ok {
                            report(&handled.get(1), Stage::Handler);
                        }
                        h.on_handler(ok, after);
                    }
                }
                _ => {}
            }
            if observed {
                observe_record(&observation, &mut h);
            }
        }
    }

    /// One step of the store as a promise of its answer: the claim's (`"won"`, `"claimed"`, `"processed"`), the
    /// renewal's (`true`: held), or `undefined` for a mark or a release.
    fn store_step(self: &Rc<Self>, op: Op, event_id: &str, token: &str) -> Promise {
        let (me, id, token) = (self.clone(), event_id.to_owned(), token.to_owned());
        promise(async move {
            let now = me.window()?.now;
            let ttl = me.claim_ttl;
            Ok(match op {
                Op::Claim => me.claim(&id, &token, ttl, now).await?.as_str().into(),
                Op::Renew => me.renew(&id, &token, ttl, now).await?.into(),
                Op::Mark => {
                    me.mark(&id, now).await?;
                    JsValue::UNDEFINED
                }
                Op::Release => {
                    me.release(&id, &token).await?;
                    JsValue::UNDEFINED
                }
            })
        })
    }

    /// The raw body and signature of `handle`'s input: a `Request` (anything with `headers`), or `{ body,
    /// signature }`, where a missing signature is refused as `verifyRequest` refuses a request without the header.
    async fn read_input(&self, input: &JsValue) -> Result<(Body, String), JsValue> {
        let not_input = || {
            interop::webhook_failure(
                ErrorCode::InvalidInput,
                "handle takes a Fetch API Request or { body, signature }",
            )
        };
        if !input.is_object() {
            return Err(not_input());
        }
        let headers = interop::try_option(input, "headers").map_err(|()| not_input())?;
        if !headers.is_undefined() {
            return self.read_request(input).await;
        }
        let signature = interop::try_option(input, "signature").map_err(|()| not_input())?;
        let header = super::signature_text(&signature)?;
        crate::webhook::jws::parse_compact(&header).map_err(interop::webhook_error)?;
        let body = interop::try_option(input, "body").map_err(|()| not_input())?;
        Ok((self.bounded_body(&body)?, header))
    }
}

/// Hands an observed delivery the record the handling's last step or report left: its place in `telemetry.js`'s
/// table after [`delivery::RECORD`] (the dedupe decisions first, then the others in [`Record`]'s order).
fn observe_record(observation: &JsValue, h: &mut Handling) {
    let Some(record) = h.take_record() else {
        return;
    };
    let (place, released) = match record {
        Record::Dedupe(d) => (d as u8, None),
        Record::Renewed => (4, None),
        Record::RenewalFailed => (5, None),
        Record::LeaseLost => (6, None),
        Record::MarkRetried => (7, None),
        Record::MarkFailed => (8, None),
        Record::Released(ok) => (9, Some(ok)),
    };
    let value = released.map_or(JsValue::UNDEFINED, JsValue::from);
    telemetry::observed(observation, delivery::RECORD + place, &value);
}

/// The answer to a delivery that failed verification: 400, 413 or 503 with `{ "error": code }`. A caller's mistake
/// (an input or option that is not one, `invalid_input` / `invalid_options`) rejects instead.
fn refusal(error: JsValue) -> Result<JsValue, JsValue> {
    let code = interop::option(&error, "code").as_string();
    let known = code.as_deref().and_then(ErrorCode::from_code);
    match known {
        Some(ErrorCode::InvalidInput | ErrorCode::InvalidOptions) | None => Err(error),
        Some(code) => {
            platform::json_response(refused_status(code), &[("error", code.as_str().into())])
        }
    }
}

/// The `Response` of an outcome: `{ "received": eventId }` (and `"duplicate": true`) for a 2xx, else
/// `{ "error": code }`.
fn answer(outcome: Outcome, event_id: &str) -> Result<JsValue, JsValue> {
    let body = match outcome.error_code() {
        Some(code) => vec![("error", code.into())],
        None if outcome == Outcome::AlreadyProcessed => {
            vec![("received", event_id.into()), ("duplicate", JsValue::TRUE)]
        }
        None => vec![("received", event_id.into())],
    };
    platform::json_response(outcome.status(), &body)
}

/// Hands a failure to `onError(error, { event, stage })`, or to `console.error` without one. What `onError` throws
/// or returns is ignored: it cannot change the answer.
fn report(
    on_error: Option<&Function>,
    error: &JsValue,
    event: &JsValue,
    ids: &EventIds,
    stage: Stage,
) {
    match on_error {
        Some(f) => {
            let context =
                platform::object(&[("event", event.clone()), ("stage", stage.as_str().into())]);
            let _ = f.call2(&JsValue::UNDEFINED, error, &context);
        }
        None => {
            let message = format!(
                "docauto: webhook {} ({}): {} failed",
                ids.event_id,
                ids.event_type,
                stage.as_str()
            );
            platform::log_error(&message, error);
        }
    }
}
