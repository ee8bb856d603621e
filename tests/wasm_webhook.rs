//! The JS API of `WebhookVerifier`, run as wasm in Node and in headless Chromium (wasm-bindgen-test).
#![cfg(all(target_arch = "wasm32", feature = "webhooks"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use docauto::wasm::WebhookVerifier;
use js_sys::{Function, Promise, Reflect};
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::json;
use sha2::{Digest, Sha256};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use docauto::webhook::base64url::encode;

const NOW: f64 = 1_800_000_000.0;

fn key() -> SigningKey {
    SigningKey::from_slice(&[7; 32]).unwrap()
}

fn jwks() -> serde_json::Value {
    let point = key().verifying_key().to_encoded_point(false);
    json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
        "x": encode(point.x().unwrap()), "y": encode(point.y().unwrap())}]})
}

fn body() -> String {
    json!({"eventId": "evt_1", "type": "agent_run.task_ready", "processingId": "agr_1", "occurredAt": "2027-01-15T08:00:00.000Z",
        "data": {"object": "agent_run", "id": "agr_1", "status": "waiting",
                 "task": {"id": "t1", "title": "Review", "executor": "human", "status": "ready"}}})
    .to_string()
}

fn token_for(body: &str, kid: &str) -> String {
    let header = json!({"alg": "ES256", "kid": kid});
    let claims = json!({"iss": "svc-process", "processingId": "agr_1", "eventId": "evt_1", "type": "agent_run.task_ready",
        "bodySha256": encode(&Sha256::digest(body.as_bytes())), "iat": NOW - 1.0, "exp": NOW + 299.0});
    let input = format!(
        "{}.{}",
        encode(header.to_string().as_bytes()),
        encode(claims.to_string().as_bytes())
    );
    let sig: Signature = key().sign(input.as_bytes());
    format!("{input}.{}", encode(&sig.to_bytes()))
}

fn js(value: &serde_json::Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap()
}

fn options(extra: serde_json::Value) -> JsValue {
    let mut o = json!({"now": NOW});
    o.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    js(&o)
}

fn get(value: &JsValue, name: &str) -> JsValue {
    Reflect::get(value, &name.into()).unwrap()
}

async fn rejection(promise: Promise) -> String {
    let error = JsFuture::from(promise).await.expect_err("must reject");
    assert_eq!(
        get(&error, "name").as_string().unwrap(),
        "WebhookVerificationError"
    );
    get(&error, "code").as_string().unwrap()
}

#[wasm_bindgen_test]
async fn verify_resolves_to_the_parsed_envelope() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    let event = JsFuture::from(v.verify(body().into(), token_for(&body(), "k1").into()))
        .await
        .unwrap();
    assert_eq!(
        get(&event, "type").as_string().unwrap(),
        "agent_run.task_ready"
    );
    assert_eq!(
        get(&get(&get(&event, "data"), "task"), "id")
            .as_string()
            .unwrap(),
        "t1"
    );
}

#[wasm_bindgen_test]
async fn verify_accepts_bytes_and_array_buffers() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    let bytes = js_sys::Uint8Array::from(body().as_bytes());
    let token = token_for(&body(), "k1");
    assert!(
        JsFuture::from(v.verify(bytes.clone().into(), token.clone().into()))
            .await
            .is_ok()
    );
    assert!(
        JsFuture::from(v.verify(bytes.buffer().into(), token.into()))
            .await
            .is_ok()
    );
}

#[wasm_bindgen_test]
async fn tampered_body_rejects_with_body_mismatch() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    let tampered = body().replace("Review", "Revieu");
    assert_eq!(
        rejection(v.verify(tampered.into(), token_for(&body(), "k1").into())).await,
        "body_mismatch"
    );
}

#[wasm_bindgen_test]
async fn forged_signature_rejects_with_invalid_signature() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    let token = token_for(&body(), "k1");
    let (input, _) = token.rsplit_once('.').unwrap();
    let other: Signature = SigningKey::from_slice(&[9; 32])
        .unwrap()
        .sign(input.as_bytes());
    let forged = format!("{input}.{}", encode(&other.to_bytes()));
    assert_eq!(
        rejection(v.verify(body().into(), forged.into())).await,
        "invalid_signature"
    );
}

#[wasm_bindgen_test]
async fn wrong_input_types_reject_with_invalid_input() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    // The header is checked before the body, so a well-formed token isolates the body's type.
    let token = token_for(&body(), "k1");
    assert_eq!(
        rejection(v.verify(JsValue::from(42), token.into())).await,
        "invalid_input"
    );
    assert_eq!(
        rejection(v.verify(body().into(), JsValue::from(7))).await,
        "invalid_input"
    );
    // A missing header (null or undefined, as `Headers.get` and Node's `req.headers` give it) is the sender's.
    assert_eq!(
        rejection(v.verify(body().into(), JsValue::NULL)).await,
        "missing_signature"
    );
    assert_eq!(
        rejection(v.verify(body().into(), JsValue::UNDEFINED)).await,
        "missing_signature"
    );
}

/// Hands the verifier a loader of the P-256 check, as the package's entries hand over their second module: here the
/// check is this test binary's own `verify_p256` (feature `webhooks-p256`).
#[cfg(feature = "webhooks-p256")]
fn hand_over_p256() {
    use wasm_bindgen::closure::Closure;
    let verify = Closure::<dyn Fn(js_sys::Uint8Array) -> bool>::new(|input: js_sys::Uint8Array| {
        docauto::wasm::verify_p256(&input.to_vec())
    })
    .into_js_value();
    let load = Closure::<dyn Fn() -> JsValue>::new(move || verify.clone()).into_js_value();
    docauto::wasm::use_p256(load);
}

#[cfg(not(feature = "webhooks-p256"))]
fn hand_over_p256() {
    panic!("verifySync's P-256 check is the module of the feature webhooks-p256: run with --features talc-allocator,webhooks-p256 (cargo xtask test does)");
}

#[wasm_bindgen_test]
fn verify_sync_uses_static_keys() {
    hand_over_p256();
    let v = WebhookVerifier::new(options(json!({"jwks": jwks()}))).unwrap();
    let event = v
        .verify_sync(body().into(), token_for(&body(), "k1").into())
        .unwrap();
    assert_eq!(get(&event, "eventId").as_string().unwrap(), "evt_1");
    let error = v
        .verify_sync(body().into(), token_for(&body(), "k2").into())
        .unwrap_err();
    assert_eq!(get(&error, "code").as_string().unwrap(), "unknown_key");
}

#[wasm_bindgen_test]
fn bad_options_throw_invalid_options() {
    for bad in [
        json!({}),
        json!({"jwksUrl": "http://example.com/jwks"}),
        json!({"jwksURL": "https://x"}),
        json!({"jwksUrl": "https://a", "baseUrl": "https://b"}),
        json!({"jwks": jwks(), "timeoutMs": -1}),
    ] {
        let error = WebhookVerifier::new(js(&bad)).err().expect("must throw");
        assert_eq!(
            get(&error, "code").as_string().unwrap(),
            "invalid_options",
            "{bad}"
        );
    }
    let error = WebhookVerifier::new(js(&json!({"jwks": {"keys": []}})))
        .err()
        .unwrap();
    assert_eq!(get(&error, "code").as_string().unwrap(), "invalid_jwks");
}

#[wasm_bindgen_test]
fn verify_sync_before_any_fetch_is_keys_not_loaded() {
    let v = WebhookVerifier::new(js(
        &json!({"jwksUrl": "https://api.example/v1/webhooks/jwks.json"}),
    ))
    .unwrap();
    let error = v
        .verify_sync(body().into(), token_for(&body(), "k1").into())
        .unwrap_err();
    assert_eq!(get(&error, "code").as_string().unwrap(), "keys_not_loaded");
}

/// A fake `fetch` (the options accept one) answering with the key set and counting its calls.
fn counting_fetch(jwks: &serde_json::Value, status: u16) -> (JsValue, JsValue) {
    let counter = js(&json!({"n": 0}));
    let make = Function::new_with_args(
        "doc, status, counter",
        "return async (url, init) => { counter.n++; await new Promise(r => setTimeout(r, 5));\
         return new Response(doc, { status, headers: { 'cache-control': 'max-age=600' } }); }",
    );
    let fetch = make
        .call3(
            &JsValue::NULL,
            &jwks.to_string().into(),
            &status.into(),
            &counter,
        )
        .unwrap();
    (fetch, counter)
}

#[wasm_bindgen_test]
async fn concurrent_verifies_share_one_fetch_and_unknown_kids_are_throttled() {
    let (fetch, counter) = counting_fetch(&jwks(), 200);
    let opts = options(json!({"baseUrl": "https://api.example"}));
    Reflect::set(&opts, &"fetch".into(), &fetch).unwrap();
    let v = WebhookVerifier::new(opts).unwrap();
    let token = token_for(&body(), "k1");
    let all: Vec<Promise> = (0..10)
        .map(|_| v.verify(body().into(), token.clone().into()))
        .collect();
    let joined = JsFuture::from(Promise::all(&all.iter().collect::<js_sys::Array>()))
        .await
        .unwrap();
    assert_eq!(joined.unchecked_into::<js_sys::Array>().length(), 10);
    assert_eq!(get(&counter, "n").as_f64(), Some(1.0));
    for kid in ["r1", "r2", "r3", "r4"] {
        assert_eq!(
            rejection(v.verify(body().into(), token_for(&body(), kid).into())).await,
            "unknown_key"
        );
    }
    assert_eq!(
        get(&counter, "n").as_f64(),
        Some(1.0),
        "cooldown holds back refetches"
    );
    let exported = v.export_keys();
    assert_eq!(
        get(&get(&get(&exported, "keys"), "0"), "kid")
            .as_string()
            .unwrap(),
        "k1"
    );
}

#[wasm_bindgen_test]
async fn failing_key_endpoint_rejects_with_jwks_unavailable() {
    let (fetch, counter) = counting_fetch(&jwks(), 503);
    let opts = options(json!({"jwksUrl": "https://api.example/v1/webhooks/jwks.json"}));
    Reflect::set(&opts, &"fetch".into(), &fetch).unwrap();
    let v = WebhookVerifier::new(opts).unwrap();
    assert_eq!(
        rejection(v.verify(body().into(), token_for(&body(), "k1").into())).await,
        "jwks_unavailable"
    );
    assert_eq!(get(&counter, "n").as_f64(), Some(1.0));
}

#[wasm_bindgen_test]
async fn dedupe_reports_duplicates_after_mark_processed() {
    let v = WebhookVerifier::new(options(json!({"jwks": jwks(), "dedupe": true}))).unwrap();
    let token = token_for(&body(), "k1");
    let first = JsFuture::from(v.verify(body().into(), token.clone().into()))
        .await
        .unwrap();
    assert_eq!(get(&first, "duplicate").as_bool(), Some(false));
    JsFuture::from(v.mark_processed(first)).await.unwrap();
    let again = JsFuture::from(v.verify(body().into(), token.into()))
        .await
        .unwrap();
    assert_eq!(get(&again, "duplicate").as_bool(), Some(true));
}

#[wasm_bindgen_test]
async fn a_verify_arriving_during_the_first_fetch_joins_it() {
    let (fetch, counter) = counting_fetch(&jwks(), 200);
    let opts = options(json!({"baseUrl": "https://api.example"}));
    Reflect::set(&opts, &"fetch".into(), &fetch).unwrap();
    let v = WebhookVerifier::new(opts).unwrap();
    let token = token_for(&body(), "k1");
    let first = v.verify(body().into(), token.clone().into());
    // Let the first verify start its fetch (the fake fetch answers after 5 ms), then send a second one.
    let tick = Promise::new(&mut |resolve, _| {
        let set_timeout = Reflect::get(&js_sys::global(), &"setTimeout".into()).unwrap();
        set_timeout
            .unchecked_into::<Function>()
            .call2(&JsValue::NULL, &resolve, &1.into())
            .unwrap();
    });
    JsFuture::from(tick).await.unwrap();
    assert_eq!(
        get(&counter, "n").as_f64(),
        Some(1.0),
        "the first fetch is under way"
    );
    let second = v.verify(body().into(), token.into());
    assert!(
        JsFuture::from(second).await.is_ok(),
        "the second verify waits for the fetch in flight"
    );
    assert!(JsFuture::from(first).await.is_ok());
    assert_eq!(get(&counter, "n").as_f64(), Some(1.0));
}
