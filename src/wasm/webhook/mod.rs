//! `WebhookVerifier` for JS: decode the inputs, run the core's checks with the signature answered by the runtime's
//! host crypto (`node:crypto`, WebCrypto or p256 in wasm: see [`super::host_crypto`]), encode the event.
//!
//! Files by role, named as the core's (`crate::webhook`): `body_limit.rs` (bodies handed as data, and request and
//! key-set streams read under their cap and deadline), `key_fetch.rs` (the key-set fetch the core's `KeySearch`
//! asks for), `dedupe.rs` (the stores), `claims.rs` (the event envelope, parsed by `JSON.parse`).

mod body_limit;
mod claims;
mod dedupe;
mod handle;
mod key_fetch;

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use self::body_limit::{bounded_body, read_capped, Body};
use self::claims::envelope;
use self::dedupe::{event_id_of, set_claim, Dedupe};
use super::host_crypto::{self, Call, HostCrypto, PendingAnswer};
use super::interop::{self, RawBody};
use super::platform::{self, MessageLike};
use super::telemetry::{self, delivery};
use crate::json::Json;
use crate::webhook::body_limit::check_declared;
use crate::webhook::claims::{precheck, sha256, Prechecked};
use crate::webhook::dedupe::{store_kind, HeldClaims, MemoryDedupe};
use crate::webhook::jwk::PublicKey;
use crate::webhook::jws::CompactJws;
use crate::webhook::key_cache::{KeyCache, Lookup};
use crate::webhook::key_fetch::{FetchGate, FlightId};
use crate::webhook::options::{self, VerifierOptions};
use crate::webhook::{jws, ErrorCode, EventIds, TimeWindow, SIGNATURE_HEADER, UNKNOWN_KEY};

enum Clock {
    System,
    Fixed(f64),
    Function(Function),
}

struct VerifierState {
    cache: RefCell<KeyCache>,
    hosts: HostCrypto,
    gate: RefCell<FetchGate>,
    /// The fetch in flight and the promise it resolves when it reports.
    flight: RefCell<Option<(FlightId, Promise)>>,
    jwks_url: Option<String>,
    fetch: Option<Function>,
    timeout_ms: f64,
    max_body: u64,
    body_timeout_ms: f64,
    tolerance: f64,
    clock: Clock,
    dedupe: Dedupe,
    /// Lease of a claim, in seconds (`claimTtlSeconds`).
    claim_ttl: f64,
    /// The claims `verify` took and holds (their tokens fence `markProcessed`, `renewClaim`, `releaseClaim`).
    held: RefCell<HeldClaims>,
    /// The `tracerProvider` and `meterProvider` options (`undefined` when neither is given: the registered ones).
    telemetry: JsValue,
}

/// Verifies the API's signed webhooks (ES256 JWS in `x-svc-signature`) against its JWKS.
#[wasm_bindgen]
pub struct WebhookVerifier {
    inner: Rc<VerifierState>,
}

/// A rejected Promise of `error`. Its own function, never inlined, as are the other cold paths of the first
/// `verify` and of the constructor: V8 compiles a function whole on its first call, so a branch that a good delivery
/// never takes costs a cold start nothing only outside the function that runs.
#[cold]
#[inline(never)]
fn rejected(error: JsValue) -> Promise {
    Promise::reject(&error)
}

/// The `fetch` option, given: a function, else `invalid_options`.
#[inline(never)]
fn fetch_option(fetch: &JsValue) -> Result<Function, JsValue> {
    interop::function_option(fetch).ok_or_else(|| invalid_options("fetch must be a function"))
}

/// The `dedupe` option, given and not `false`: `true` (in memory) or a store, whose kind its functions decide.
#[inline(never)]
fn dedupe_option(dedupe: JsValue) -> Result<Dedupe, JsValue> {
    if dedupe.as_bool() == Some(true) {
        return Ok(Dedupe::Memory(RefCell::new(MemoryDedupe::default())));
    }
    let has = |name: &str| interop::function_option(&interop::option(&dedupe, name)).is_some();
    let kind = store_kind(has).map_err(interop::webhook_error)?;
    Ok(Dedupe::Store(kind, dedupe))
}

impl WebhookVerifier {
    /// `verify` without its observation: the promise of the event.
    fn verify_delivery(&self, raw_body: JsValue, signature_header: JsValue) -> Promise {
        let header = match signature_text(&signature_header) {
            Ok(header) => header,
            Err(e) => return rejected(e),
        };
        let token = match jws::parse_compact(&header) {
            Ok(token) => token,
            Err(e) => return rejected(interop::webhook_error(e)),
        };
        let body = match self.inner.bounded_body(&raw_body) {
            Ok(body) => body,
            Err(e) => return rejected(e),
        };
        // WebCrypto answering for a key the verifier holds (its import started at its first use, so the first
        // delivery takes this path too): asked first, so that it checks the signature (on another thread in a
        // browser) while the claims are read and the body hashed here (by WebCrypto beside the check, on the
        // delivery that starts the key's import); its Promise is then continued with the core's checks, without a
        // Rust future. The verdicts are still taken in the core's order.
        if let Some((key, pending)) = self.inner.pending_answer(&token, &body) {
            let early = self.inner.early(&token, &body, !pending.digests());
            let token = token.into_owned();
            let inner = self.inner.clone();
            let finish = Closure::once_into_js(move |answer: JsValue| {
                let (verdict, digest) = host_crypto::settled(&answer);
                inner.finish(&key, &token, verdict, digest, &body, early)
            });
            return pending
                .into_promise()
                .unchecked_into::<platform::PromiseLike>()
                .then_both(&finish, &finish);
        }
        self.verify_otherwise(&token, body, &header)
    }

    /// `verifySync` without its observation.
    fn verify_now_sync(
        &self,
        raw_body: JsValue,
        signature_header: JsValue,
    ) -> Result<JsValue, JsValue> {
        let header = signature_text(&signature_header)?;
        // Shape first, before the body is sized or copied; the core decides the rest.
        let token = jws::parse_compact(&header).map_err(interop::webhook_error)?;
        let body = self.inner.bounded_body(&raw_body)?;
        let window = self.inner.window()?;
        let (ids, event) = {
            let cache = self.inner.cache.borrow();
            let keys = cache.keys().ok_or_else(|| {
                interop::webhook_failure(
                    ErrorCode::KeysNotLoaded,
                    "no key set is held yet: use verify(), or refreshKeys() first",
                )
            })?;
            let key = keys
                .get(token.kid())
                .ok_or_else(|| interop::webhook_error(UNKNOWN_KEY))?;
            let answer = self.inner.hosts.answer_now(Call::Sync, key, &token);
            self.inner.check(key, &token, answer, &body, window)?
        };
        self.inner.flag_duplicate_sync(event, &ids, window.now)
    }

    /// `verify` where WebCrypto is not the host waited for: a host that answers at once (settled here, without a
    /// Rust future), or the asynchronous path (a key set to fetch, a store's claim, WebCrypto for a key not held).
    #[inline(never)]
    fn verify_otherwise(&self, token: &CompactJws<'_>, body: Body, header: &str) -> Promise {
        if let Some(result) = self.inner.verify_now(token, &body) {
            return match result {
                Ok(event) => Promise::resolve(&event),
                Err(e) => Promise::reject(&e),
            };
        }
        let inner = self.inner.clone();
        let header = header.to_owned();
        promise(async move { inner.verify(body, header).await })
    }
}

/// The promise of a verification's result, which first ends the delivery's span when someone observes it.
fn observe_settling(observation: Option<JsValue>, verified: Promise) -> Promise {
    match observation {
        None => verified,
        Some(observation) => telemetry::settling(&observation, &verified),
    }
}

#[cold]
#[inline(never)]
fn invalid_options(detail: &'static str) -> JsValue {
    interop::webhook_failure(ErrorCode::InvalidOptions, detail)
}

#[wasm_bindgen]
impl WebhookVerifier {
    /// Creates a verifier from `{ jwksUrl } | { baseUrl } | { jwks }` and the optional settings.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "WebhookVerifierOptions")] options: JsValue,
    ) -> Result<WebhookVerifier, JsValue> {
        if !options.is_object() {
            return Err(invalid_options(
                "options must be an object: { jwksUrl } | { baseUrl } | { jwks }",
            ));
        }
        // The handles stay here; the data options go to the core, which decides everything else. A getter or a Proxy
        // that throws is caught where it is read (here, and in the copy of the data options).
        let read = |name: &str| {
            interop::try_option(&options, name)
                .map_err(|()| invalid_options("reading an option threw (a getter or a Proxy)"))
        };
        let now = read("now")?;
        let now_fn = interop::function_option(&now);
        let handles: &[&str] = if now_fn.is_some() {
            &["fetch", "dedupe", "tracerProvider", "meterProvider", "now"]
        } else {
            &options::HANDLES
        };
        // A key set given as an object (or as text holding a lone surrogate) is read on its own, as a fetched one is.
        let jwks = read("jwks")?;
        let jwks_apart = jwks.is_object()
            || jwks
                .dyn_ref::<js_sys::JsString>()
                .is_some_and(|s| !s.is_valid_utf16());
        let not_data = || {
            invalid_options(
                "options must be plain data besides fetch, dedupe, now, tracerProvider and meterProvider",
            )
        };
        let mut data = if jwks_apart {
            interop::plain_options_json(&options, &[handles, &["jwks"]].concat())
        } else {
            interop::plain_options_json(&options, handles)
        }
        .map_err(|()| not_data())?;
        if let (true, Json::Object(members)) = (jwks_apart, &mut data) {
            let keys = interop::key_set_json(&jwks).map_err(|()| {
                interop::webhook_failure(
                    ErrorCode::InvalidJwks,
                    "jwks must be a JWKS object or JSON text",
                )
            })?;
            members.push(("jwks".into(), keys));
        }
        let config = VerifierOptions::from_json(data)
            .and_then(|o| o.validate(now_fn.is_some()))
            .map_err(interop::webhook_error)?;
        let clock = match (now_fn, config.fixed_now) {
            (Some(f), _) => Clock::Function(f),
            (None, Some(n)) => Clock::Fixed(n),
            (None, None) => Clock::System,
        };
        let cache = config.key_cache(clock_now(&clock)?);
        let jwks_url = config.jwks_url().map(str::to_owned);

        let fetch = read("fetch")?;
        let fetch = if fetch.is_undefined() {
            None
        } else {
            Some(fetch_option(&fetch)?)
        };
        let dedupe = read("dedupe")?;
        let dedupe = if dedupe.is_undefined() || dedupe.is_null() || dedupe.as_bool() == Some(false)
        {
            Dedupe::Off
        } else {
            dedupe_option(dedupe)?
        };
        let telemetry = telemetry::providers(&options).map_err(|_| {
            invalid_options(
                "tracerProvider and meterProvider must be OpenTelemetry providers (getTracer, getMeter)",
            )
        })?;

        Ok(Self {
            inner: Rc::new(VerifierState {
                cache: RefCell::new(cache),
                hosts: HostCrypto::detect(),
                gate: RefCell::new(FetchGate::default()),
                flight: RefCell::new(None),
                jwks_url,
                fetch,
                timeout_ms: config.timeout_ms,
                max_body: config.max_body,
                body_timeout_ms: config.body_timeout_ms,
                tolerance: config.tolerance,
                clock,
                dedupe,
                claim_ttl: config.claim_ttl,
                held: RefCell::new(HeldClaims::default()),
                telemetry,
            }),
        })
    }

    /// Verifies a delivery: the raw body and the `x-svc-signature` header value. Resolves to the event envelope.
    #[wasm_bindgen(unchecked_return_type = "Promise<VerifiedWebhookEvent>")]
    pub fn verify(
        &self,
        #[wasm_bindgen(js_name = rawBody, unchecked_param_type = "string | Uint8Array | ArrayBuffer")]
        raw_body: JsValue,
        #[wasm_bindgen(js_name = signatureHeader, unchecked_param_type = "string | null | undefined")]
        signature_header: JsValue,
    ) -> Promise {
        let observation = telemetry::observe_delivery(&self.inner.telemetry, "verify");
        let verified = self.verify_delivery(raw_body, signature_header);
        observe_settling(observation, verified)
    }

    /// Verifies a Fetch API `Request`: reads its raw bytes and its `x-svc-signature` header.
    #[wasm_bindgen(js_name = verifyRequest, unchecked_return_type = "Promise<VerifiedWebhookEvent>")]
    pub fn verify_request(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Request")] request: JsValue,
    ) -> Promise {
        let observation = telemetry::observe_delivery(&self.inner.telemetry, "verifyRequest");
        let inner = self.inner.clone();
        let verified = promise(async move {
            let (body, header) = inner.read_request(&request).await?;
            inner.verify(body, header).await
        });
        observe_settling(observation, verified)
    }

    /// Verifies synchronously with keys already held (static keys, or a key set fetched earlier): the signature is
    /// checked by `node:crypto` where the package entry provides it (Node), by p256 in wasm elsewhere (Deno, Bun,
    /// workerd, edge runtimes, browsers).
    #[wasm_bindgen(js_name = verifySync, unchecked_return_type = "VerifiedWebhookEvent")]
    pub fn verify_sync(
        &self,
        #[wasm_bindgen(js_name = rawBody, unchecked_param_type = "string | Uint8Array | ArrayBuffer")]
        raw_body: JsValue,
        #[wasm_bindgen(js_name = signatureHeader, unchecked_param_type = "string | null | undefined")]
        signature_header: JsValue,
    ) -> Result<JsValue, JsValue> {
        let observation = telemetry::observe_delivery(&self.inner.telemetry, "verifySync");
        let verified = self.verify_now_sync(raw_body, signature_header);
        if let Some(observation) = &observation {
            match &verified {
                Ok(event) => telemetry::observed(observation, delivery::VERIFIED, event),
                Err(error) => telemetry::observed(observation, delivery::REFUSED, error),
            }
        }
        verified
    }

    /// The keys held now, as a JWKS document (`{ keys: [] }` before the first fetch).
    #[wasm_bindgen(js_name = exportKeys, unchecked_return_type = "JsonWebKeySet")]
    pub fn export_keys(&self) -> JsValue {
        let cache = self.inner.cache.borrow();
        let mut doc = match cache.export() {
            Some((keys, _)) => keys.to_value(),
            None => crate::webhook::jwk::key_set_value(Vec::new()),
        };
        // The age travels with the keys, so a seeded verifier keeps exactly the freshness that was left.
        if let (Some((_, Some(age))), Json::Object(members)) = (cache.export(), &mut doc) {
            members.push(("fetchedAt".into(), Json::Number(age.fetched_at)));
            members.push(("staleAt".into(), Json::Number(age.stale_at)));
        }
        interop::json_to_js(&doc)
    }

    /// Fetches the key set now (joining a fetch already in progress). No-op for static keys.
    #[wasm_bindgen(js_name = refreshKeys, unchecked_return_type = "Promise<void>")]
    pub fn refresh_keys(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            if inner.cache.borrow().can_refresh() {
                inner.refresh().await?;
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Marks an event (or an `eventId`) processed: whoever holds a claim on it, later deliveries are duplicates
    /// (`duplicate: true`) for a week.
    #[wasm_bindgen(js_name = markProcessed, unchecked_return_type = "Promise<void>")]
    pub fn mark_processed(
        &self,
        #[wasm_bindgen(js_name = eventOrId, unchecked_param_type = "WebhookEvent | string")]
        event_or_id: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let id = event_id_of(&event_or_id, "markProcessed takes an event or its eventId")?;
            // The clock first: a `now` function of the caller's may call this verifier again.
            let now = inner.window()?.now;
            inner.mark(&id, now).await?;
            inner.held.borrow_mut().forget(&id);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Extends the lease of the claim `verify` took on an event (or an `eventId`) by `claimTtlSeconds`, for a handler
    /// that runs longer than that: resolves `true` when extended, `false` when the claim is no longer this verifier's
    /// (it lapsed, another instance took the event, or it was marked). `handle` renews by itself.
    #[wasm_bindgen(js_name = renewClaim, unchecked_return_type = "Promise<boolean>")]
    pub fn renew_claim(
        &self,
        #[wasm_bindgen(js_name = eventOrId, unchecked_param_type = "WebhookEvent | string")]
        event_or_id: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let (id, token) = inner.held_claim(
                &event_or_id,
                "renewClaim takes an event or its eventId",
                "renewClaim needs the dedupe option",
            )?;
            let Some(token) = token else {
                return Ok(JsValue::FALSE);
            };
            let now = inner.window()?.now;
            let sent_at = platform::now_seconds();
            let held = inner.renew(&id, &token, inner.claim_ttl, now).await?;
            if held {
                inner
                    .held
                    .borrow_mut()
                    .renewed(&id, sent_at + inner.claim_ttl);
            } else {
                inner.held.borrow_mut().forget(&id);
            }
            Ok(held.into())
        })
    }

    /// Gives up the claim `verify` took on an event (or an `eventId`), for example when its handler failed: the
    /// service's next delivery of it is handled (`duplicate: false`). Only a claim this verifier still holds is
    /// released (a lapsed one may be another instance's now); a processed mark stays. A no-op with a check-then-add
    /// store (`has`/`add`), which takes no claims.
    #[wasm_bindgen(js_name = releaseClaim, unchecked_return_type = "Promise<void>")]
    pub fn release_claim(
        &self,
        #[wasm_bindgen(js_name = eventOrId, unchecked_param_type = "WebhookEvent | string")]
        event_or_id: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let (id, token) = inner.held_claim(
                &event_or_id,
                "releaseClaim takes an event or its eventId",
                "releaseClaim needs the dedupe option",
            )?;
            if let Some(token) = token {
                inner.held.borrow_mut().forget(&id);
                inner.release(&id, &token).await?;
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Handles one delivery from end to end: verifies it, claims its event, runs `handler(event, { signal })` while
    /// renewing the claim, marks the event processed, and resolves to the `Response` to answer with (200 handled
    /// now or before; 409 another instance's claim is live; 400 or 413 `{ "error": code }` refused; 500 the handler
    /// threw and its claim was released; 503 the store or the key set could not be reached). `input` is a `Request`
    /// or `{ body, signature }` (the raw body, and the `x-svc-signature` value). `signal` aborts when the claim was
    /// lost (another instance may be handling the event). Failures are passed to `options.onError(error, { event,
    /// stage })`, by default `console.error`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Response>")]
    pub fn handle(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "Request | { body: string | Uint8Array | ArrayBuffer; signature: string | null | undefined }"
        )]
        input: JsValue,
        #[wasm_bindgen(
            unchecked_param_type = "(event: VerifiedWebhookEvent, context: { signal: AbortSignal }) => unknown"
        )]
        handler: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WebhookHandleOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let inner = self.inner.clone();
        let options = options.unwrap_or(JsValue::UNDEFINED);
        promise(async move { inner.handle(input, handler, options).await })
    }
}

/// Runs an async method: every one is boxed as the same `dyn Future`, so `future_to_promise`'s task machinery is
/// linked once rather than once per method (-0.9 KB gzip of `docauto/webhooks`). A task whose outcome is of no
/// interest (cancelling a stream, giving back a late claim) drops the promise: it always resolves.
fn promise(work: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let work: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(work);
    future_to_promise(work)
}

fn clock_now(clock: &Clock) -> Result<f64, JsValue> {
    match clock {
        Clock::System => Ok(platform::now_seconds()),
        Clock::Fixed(n) => Ok(*n),
        Clock::Function(f) => {
            options::clock_reading(f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()))
                .map_err(interop::webhook_error)
        }
    }
}

impl VerifierState {
    fn window(&self) -> Result<TimeWindow, JsValue> {
        let now = clock_now(&self.clock)?;
        Ok(TimeWindow {
            now,
            tolerance: self.tolerance,
        })
    }

    /// `verify` settled at once: when the host answers without waiting, no fetch is running or due, the key is
    /// held and the dedupe store (if any) is the in-memory one. `None`: take the async path.
    fn verify_now(&self, token: &CompactJws<'_>, body: &Body) -> Option<Result<JsValue, JsValue>> {
        if !self.hosts.answers_now(Call::Async)
            || matches!(self.dedupe, Dedupe::Store(..))
            || self.flight.borrow().is_some()
        {
            return None;
        }
        let window = match self.window() {
            Ok(window) => window,
            Err(e) => return Some(Err(e)),
        };
        let checked = {
            let cache = self.cache.borrow();
            let Lookup::Found(key) = cache.lookup(token.kid(), window.now, false) else {
                return None;
            };
            let answer = self.hosts.answer_now(Call::Async, key, token);
            self.check(key, token, answer, body, window)
        };
        Some(checked.and_then(|(ids, event)| self.flag_duplicate_sync(event, &ids, window.now)))
    }

    /// The key and WebCrypto's pending answer for `verify`, when nothing else needs waiting for: no fetch running or
    /// due, the key held (its `CryptoKey` imported or importing), dedupe not an async store. `None`: take the async
    /// path.
    fn pending_answer(
        &self,
        token: &CompactJws<'_>,
        body: &Body,
    ) -> Option<(PublicKey, PendingAnswer)> {
        if matches!(self.dedupe, Dedupe::Store(..)) || self.flight.borrow().is_some() {
            return None;
        }
        let now = self.window().ok()?.now;
        let cache = self.cache.borrow();
        let Lookup::Found(key) = cache.lookup(token.kid(), now, false) else {
            return None;
        };
        let copied = match body {
            Body::Copied(raw) => Some(&raw.bytes[..]),
            Body::Kept(_) => None,
        };
        let pending = self.hosts.pending_answer(Call::Async, key, token, copied)?;
        Some((key.clone(), pending))
    }

    /// What a `verify` does while WebCrypto checks the signature: the clock read, the claims checked against it
    /// ([`precheck`]), and the body hashed when they passed, it is in wasm memory and WebCrypto is not hashing it
    /// (`hash`).
    fn early(&self, token: &CompactJws<'_>, body: &Body, hash: bool) -> Result<Early, JsValue> {
        let window = self.window()?;
        let prechecked = precheck(token.payload(), window);
        let digest = match (&prechecked, body) {
            (Ok(_), Body::Copied(raw)) if hash => Some(self.digest_copied(raw)),
            _ => None,
        };
        Ok(Early {
            window,
            prechecked,
            digest,
        })
    }

    /// The rest of a `verify` after WebCrypto answered (`None`: it failed, and p256 checks instead), with the
    /// body's `digest` when WebCrypto computed it.
    fn finish(
        &self,
        key: &PublicKey,
        token: &CompactJws<'_>,
        answer: Option<bool>,
        digest: Option<[u8; 32]>,
        body: &Body,
        early: Result<Early, JsValue>,
    ) -> Result<JsValue, JsValue> {
        let early = early?;
        let digest = early.digest.or(digest);
        let (ids, event) = self.checked(key, token, answer, body, early.prechecked, digest)?;
        self.flag_duplicate_sync(event, &ids, early.window.now)
    }

    /// A body handed as data, bounded by `maxBodyBytes`; kept in JS where the host hashes it.
    fn bounded_body(&self, value: &JsValue) -> Result<Body, JsValue> {
        bounded_body(value, self.max_body, self.hosts.keeps_bodies())
    }

    /// The core's checks after the key lookup, given the host's `answer` about the signature: the claims, the
    /// body's digest (by the host where it hashes, else in wasm) and the envelope. Returns the ids and the event.
    fn check(
        &self,
        key: &PublicKey,
        token: &CompactJws<'_>,
        answer: Option<bool>,
        body: &Body,
        window: TimeWindow,
    ) -> Result<(EventIds, JsValue), JsValue> {
        let prechecked = precheck(token.payload(), window);
        self.checked(key, token, answer, body, prechecked, None)
    }

    /// The core's verdicts in its order (signature, claims and clock, body) for claims already read: the body's
    /// digest is `digest` when it was computed already, else computed here once the claims passed. Returns the ids
    /// and the event the envelope reader parsed. A host that gave no `answer` is followed by p256, in its own module
    /// ([`HostCrypto::p256_answer`]).
    fn checked(
        &self,
        key: &PublicKey,
        token: &CompactJws<'_>,
        answer: Option<bool>,
        body: &Body,
        prechecked: crate::webhook::Result<Prechecked>,
        digest: Option<[u8; 32]>,
    ) -> Result<(EventIds, JsValue), JsValue> {
        let mut event = JsValue::UNDEFINED;
        let answer = answer.or_else(|| self.hosts.p256_answer(key, token));
        let ids = crate::webhook::check_token_prechecked(
            key,
            answer,
            prechecked,
            || digest.unwrap_or_else(|| self.digest(body)),
            || {
                envelope(body).map(|(e, ids)| {
                    event = e;
                    ids
                })
            },
        )
        .map_err(interop::webhook_error)?;
        Ok((ids, event))
    }

    /// SHA-256 of a body: by the host where it hashes and the body is, else copied (if kept) and hashed by sha2.
    #[inline(never)]
    fn digest(&self, body: &Body) -> [u8; 32] {
        match body {
            Body::Kept(value) => self.hosts.digest_kept(value).unwrap_or_else(|| {
                let bytes = interop::raw_body(value).map(|b| b.bytes);
                sha256(&bytes.unwrap_or_default())
            }),
            Body::Copied(raw) => self.digest_copied(raw),
        }
    }

    fn digest_copied(&self, raw: &RawBody) -> [u8; 32] {
        self.hosts
            .digest_copied(&raw.bytes)
            .unwrap_or_else(|| sha256(&raw.bytes))
    }

    /// The event handed to the caller, its claim taken (synchronously: the in-memory store, or a store whose
    /// `claim()` answers at once) and flagged `duplicate` / `inProgress` ([`set_claim`]).
    fn flag_duplicate_sync(
        &self,
        event: JsValue,
        ids: &EventIds,
        now: f64,
    ) -> Result<JsValue, JsValue> {
        if let Some(claim) = self.is_duplicate_sync(&ids.event_id, now)? {
            set_claim(&event, claim);
        }
        Ok(event)
    }

    /// The checks of one delivery, without its claim: the ids and the event.
    async fn verified(
        self: &Rc<Self>,
        body: Body,
        header: String,
    ) -> Result<(EventIds, JsValue), JsValue> {
        let token = jws::parse_compact(&header).map_err(interop::webhook_error)?;
        let key = self.key_for(token.kid()).await?;
        let answer = self.hosts.answer(Call::Async, &key, &token).await;
        let window = self.window()?;
        self.check(&key, &token, answer, &body, window)
    }

    async fn verify(self: Rc<Self>, body: Body, header: String) -> Result<JsValue, JsValue> {
        let (ids, event) = self.verified(body, header).await?;
        let now = self.window()?.now;
        if let Some(claim) = self.is_duplicate(&ids.event_id, now).await? {
            set_claim(&event, claim);
        }
        Ok(event)
    }

    /// A Fetch API `Request`'s body (read under its cap and deadline) and `x-svc-signature` header.
    async fn read_request(&self, request: &JsValue) -> Result<(Body, String), JsValue> {
        if !request.is_object() {
            return Err(interop::webhook_failure(
                ErrorCode::InvalidInput,
                "verifyRequest takes a Fetch API Request",
            ));
        }
        let message: &MessageLike = request.unchecked_ref();
        let header = platform::header(message, SIGNATURE_HEADER)
            .map_err(|_| {
                interop::webhook_failure(
                    ErrorCode::InvalidInput,
                    "verifyRequest takes a Fetch API Request",
                )
            })?
            .ok_or_else(|| {
                interop::webhook_failure(
                    ErrorCode::MissingSignature,
                    "the request has no x-svc-signature header",
                )
            })?;
        // The token's shape and the declared length are checked before any body byte is read.
        jws::parse_compact(&header).map_err(interop::webhook_error)?;
        let declared = platform::header(message, "content-length").ok().flatten();
        check_declared(declared.as_deref(), self.max_body).map_err(interop::webhook_error)?;
        // A stalled stream ends at the read deadline (`bodyTimeoutMs`), cancelled.
        let deadline = platform::Deadline::start(self.body_timeout_ms);
        let bytes = read_capped(message, self.max_body, &deadline)
            .await
            .map_err(|e| interop::webhook_error(e.error()))?;
        drop(deadline);
        Ok((Body::Copied(RawBody { bytes, text: None }), header))
    }
}

/// The part of a `verify` done while WebCrypto checks the signature ([`VerifierState::early`]).
struct Early {
    window: TimeWindow,
    prechecked: crate::webhook::Result<Prechecked>,
    /// The body's SHA-256, when the claims passed and the body is in wasm memory.
    digest: Option<[u8; 32]>,
}

/// The `x-svc-signature` value a caller passed: absent (`undefined` or `null`, as `req.headers[...]` or
/// `headers.get(...)` give a missing header) is `missing_signature`, as in `verifyRequest` and `handle`; anything
/// but a string is `invalid_input`. (`as_string` reads the value's type only: no getter or trap of it runs.)
pub(crate) fn signature_text(value: &JsValue) -> Result<String, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Err(interop::webhook_failure(
            ErrorCode::MissingSignature,
            "the delivery has no x-svc-signature header",
        ));
    }
    value.as_string().ok_or_else(|| {
        interop::webhook_failure(ErrorCode::InvalidInput, "signature header must be a string")
    })
}
