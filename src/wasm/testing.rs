//! `TestSigner` for JS (the `docauto/testing` entry): signs test events as the service does, so users can unit-test
//! their webhook handlers. Every method reads its inputs (host randomness, the clock, the event's fields and its `data` as
//! JSON text), makes one call to the core signer (`crate::webhook::signing`) and encodes the result.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::interop;
use super::platform;
use crate::webhook::signing::{self, Event, Signer, SigningInput};
use crate::webhook::{ErrorCode, SIGNATURE_HEADER};

const OPTIONS: [&str; 3] = ["kid", "now", "privateJwk"];

#[wasm_bindgen]
extern "C" {
    /// The host's Fetch API `Request`.
    #[wasm_bindgen(js_name = Request)]
    type HostRequest;
    #[wasm_bindgen(catch, constructor, js_class = Request)]
    fn new_request(url: &str, init: &JsValue) -> Result<HostRequest, JsValue>;
}

enum Clock {
    System,
    Fixed(f64),
    Function(Function),
}

/// Signs webhook events with a test key, exactly as the service signs its deliveries (ES256 JWS in
/// `x-svc-signature`), for unit tests of webhook handlers. Not for production: the key lives in memory.
#[wasm_bindgen]
pub struct TestSigner {
    signer: Signer,
    clock: Clock,
}

fn invalid_options(detail: &'static str) -> JsValue {
    interop::webhook_failure(ErrorCode::InvalidOptions, detail)
}

fn invalid_input(detail: &'static str) -> JsValue {
    interop::webhook_failure(ErrorCode::InvalidInput, detail)
}

/// A JSON value of the core as a plain JS object.
fn to_js(value: &serde_json::Value) -> JsValue {
    platform::json_parse(&JsValue::from_str(&value.to_string())).unwrap_or(JsValue::UNDEFINED)
}

fn settled(result: Result<JsValue, JsValue>) -> Promise {
    match result {
        Ok(value) => Promise::resolve(&value),
        Err(error) => Promise::reject(&error),
    }
}

fn read_options(options: &JsValue) -> Result<(Signer, Clock), JsValue> {
    if !(options.is_undefined() || options.is_null() || options.is_object()) {
        return Err(invalid_options("options must be an object"));
    }
    // Read once, from a plain copy: a getter or a Proxy of the caller's runs (and may throw) only here.
    let options = &if options.is_object() {
        interop::plain_copy(options)
            .map_err(|()| invalid_options("reading the options threw (a getter or a Proxy)"))?
    } else {
        JsValue::UNDEFINED
    };
    if interop::option_names(options)
        .iter()
        .any(|name| !OPTIONS.contains(&name.as_str()))
    {
        return Err(invalid_options(
            "unknown option (see TestSignerOptions for the accepted names)",
        ));
    }
    let kid = interop::option(options, "kid");
    let kid = if kid.is_undefined() {
        None
    } else {
        Some(
            kid.as_string()
                .ok_or_else(|| invalid_options("kid must be a string"))?,
        )
    };
    let now = interop::option(options, "now");
    let clock = if now.is_undefined() {
        Clock::System
    } else if let Some(n) = now.as_f64().filter(|n| n.is_finite()) {
        Clock::Fixed(n)
    } else {
        Clock::Function(
            interop::function_option(&now)
                .ok_or_else(|| invalid_options("now must be a number or a function"))?,
        )
    };
    let private_jwk = interop::option(options, "privateJwk");
    let signer = if private_jwk.is_undefined() {
        let secret = platform::secure_random_bytes::<32>().ok_or_else(|| {
            invalid_options("this runtime has no crypto.getRandomValues to make a key")
        })?;
        let kid = match kid {
            Some(kid) => kid,
            None => signing::kid_from(&platform::random_bytes()),
        };
        Signer::from_secret(&secret, &kid).map_err(interop::webhook_error)?
    } else {
        let text = platform::json_stringify(&private_jwk)
            .ok()
            .and_then(|t| t.as_string())
            .ok_or_else(|| invalid_options("privateJwk must be a JWK object"))?;
        let mut jwk: serde_json::Value = serde_json::from_str(&text)
            .map_err(|_| invalid_options("privateJwk must be a JWK object"))?;
        if let (Some(kid), Some(obj)) = (kid, jwk.as_object_mut()) {
            obj.insert("kid".to_owned(), serde_json::Value::String(kid));
        }
        Signer::from_private_jwk(&jwk).map_err(interop::webhook_error)?
    };
    Ok((signer, clock))
}

impl TestSigner {
    fn now(&self) -> Result<f64, JsValue> {
        match &self.clock {
            Clock::System => Ok(platform::now_seconds()),
            Clock::Fixed(n) => Ok(*n),
            // A clock that throws or answers anything but finite seconds is the same refusal, with its code.
            Clock::Function(f) => crate::webhook::options::clock_reading(
                f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()),
            )
            .map_err(interop::webhook_error),
        }
    }

    fn signed(&self, event: &JsValue) -> Result<signing::SignedEvent, JsValue> {
        if !event.is_object() {
            return Err(invalid_input("the event must be an object"));
        }
        // Read once, from a plain copy: a getter or a Proxy of the caller's runs (and may throw) only here.
        let event = &interop::plain_copy(event)
            .map_err(|()| invalid_input("reading the event threw (a getter or a Proxy)"))?;
        signing::check_event_fields(interop::option_names(event).iter().map(String::as_str))
            .map_err(interop::webhook_error)?;
        let text = |name: &str| -> Result<Option<String>, JsValue> {
            let value = interop::option(event, name);
            if value.is_undefined() {
                return Ok(None);
            }
            value.as_string().map(Some).ok_or_else(|| {
                invalid_input("type, processingId, eventId and occurredAt must be strings")
            })
        };
        let (event_type, processing_id) = match (text("type")?, text("processingId")?) {
            (Some(t), Some(p)) => (t, p),
            _ => return Err(invalid_input("the event needs type and processingId")),
        };
        let (event_id, occurred_at) = (text("eventId")?, text("occurredAt")?);
        let data = interop::option(event, "data");
        let data = if data.is_undefined() {
            None
        } else {
            Some(
                platform::json_stringify(&data)
                    .ok()
                    .and_then(|t| t.as_string())
                    .ok_or_else(|| invalid_input("event data must be an object"))?,
            )
        };
        let input = SigningInput {
            now: self.now()?,
            random: platform::random_bytes(),
        };
        let event = Event {
            event_type: &event_type,
            processing_id: &processing_id,
            event_id: event_id.as_deref(),
            occurred_at: occurred_at.as_deref(),
            data: data.as_deref(),
        };
        self.signer
            .sign(event, input)
            .map_err(interop::webhook_error)
    }
}

#[wasm_bindgen]
impl TestSigner {
    /// A signer with a new P-256 key and a random `kid` (or the options' `kid`, clock or saved `privateJwk`).
    #[wasm_bindgen(unchecked_return_type = "Promise<TestSigner>")]
    pub fn generate(
        #[wasm_bindgen(unchecked_optional_param_type = "TestSignerOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        settled(read_options(&options).map(|(signer, clock)| TestSigner { signer, clock }.into()))
    }

    /// The key id of the signer's key (the JOSE header's `kid`).
    #[wasm_bindgen(getter)]
    pub fn kid(&self) -> String {
        self.signer.kid().to_owned()
    }

    /// The public key set to trust: `new WebhookVerifier({ jwks: signer.jwks })`.
    #[wasm_bindgen(getter, unchecked_return_type = "JsonWebKeySet")]
    pub fn jwks(&self) -> JsValue {
        to_js(&self.signer.jwks())
    }

    /// The private key as a JWK, to save a fixture and restore it with `generate({ privateJwk })`. Secret.
    #[wasm_bindgen(getter, js_name = privateJwk, unchecked_return_type = "JsonWebKey")]
    pub fn private_jwk(&self) -> JsValue {
        to_js(&self.signer.private_jwk())
    }

    /// Signs an event as the service would deliver it: resolves to the exact body text and the `x-svc-signature`
    /// value. `eventId` and `occurredAt` are filled in when not given; `data` defaults to `{}`.
    #[wasm_bindgen(unchecked_return_type = "Promise<SignedTestEvent>")]
    pub fn sign(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TestEvent")] event: JsValue,
    ) -> Promise {
        settled(self.signed(&event).map(|signed| {
            platform::object(&[
                ("body", signed.body.into()),
                ("signature", signed.signature.into()),
            ])
        }))
    }

    /// Signs an event and resolves to a `POST` `Request` to `url` with the body, `content-type: application/json`
    /// and `x-svc-signature`, as the service would send it.
    #[wasm_bindgen(unchecked_return_type = "Promise<Request>")]
    pub fn request(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] url: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TestEvent")] event: JsValue,
    ) -> Promise {
        let Some(url) = url.as_string() else {
            return settled(Err(invalid_input("the url must be a string")));
        };
        settled(self.signed(&event).and_then(|signed| {
            let headers = platform::object(&[
                ("content-type", "application/json".into()),
                (SIGNATURE_HEADER, signed.signature.into()),
            ]);
            let init = platform::object(&[
                ("method", "POST".into()),
                ("headers", headers),
                ("body", signed.body.into()),
            ]);
            HostRequest::new_request(&url, &init)
                .map(JsValue::from)
                .map_err(|_| {
                    invalid_input("url must be an absolute URL (new Request(url) refused it)")
                })
        }))
    }
}
