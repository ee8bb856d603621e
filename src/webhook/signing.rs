//! Signing of webhook deliveries exactly as the service does it: the core of the `docauto/testing` entry's
//! `TestSigner`, so users can unit-test their webhook handlers without the service.
//!
//! The spec's Signature section, to the letter: the header `x-svc-signature` holds a compact ES256 JWS whose JOSE
//! header is `{"alg":"ES256","kid":..}` and whose claims are `iss` (`svc-process`), `processingId`, `eventId`,
//! `type`, `bodySha256` (base64url SHA-256 of the exact body bytes), `iat` and `exp` (= `iat` + 300). The body is the
//! five-field envelope `{eventId, type, processingId, occurredAt, data}`.
//!
//! Sans-IO and deterministic: the host passes the secret scalar, the random bytes of event ids and the clock;
//! signatures use RFC 6979 deterministic nonces (p256's `SigningKey`), so the same inputs give the same token.
//!
//! ```
//! use docauto::webhook::signing::{Event, Signer, SigningInput};
//! use docauto::json::Json;
//! use docauto::webhook::{jwk::KeySet, Verifier};
//!
//! let signer = Signer::from_secret(&[7u8; 32], "test-key")?;
//! let event = Event {
//!     event_type: "agent_run.completed",
//!     processing_id: "agr_1",
//!     data: Some(r#"{"object":"agent_run"}"#),
//!     ..Event::default()
//! };
//! let signed = signer.sign(event, SigningInput { now: 1_800_000_000.0, random: [1u8; 16] })?;
//! let verifier = Verifier::new(KeySet::from_value(&Json::from(&signer.jwks()))?);
//! let ids = verifier.verify(signed.body.as_bytes(), &signed.signature, 1_800_000_000.0)?;
//! assert_eq!(ids.processing_id, "agr_1");
//! # Ok::<(), docauto::webhook::WebhookError>(())
//! ```

use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde::de::IgnoredAny;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::base64url;
use super::claims::ISSUER;
use super::error::{err, ErrorCode, Result};
use super::jws::ALGORITHM;

/// Lifetime of a delivery token: `exp` = `iat` + this many seconds.
pub const TOKEN_LIFETIME_SECS: i64 = 300;

/// Prefix of the event ids the signer makes (the spec's ids are a prefix and an opaque random part).
pub const EVENT_ID_PREFIX: &str = "evt_";

/// Latest clock accepted, in epoch seconds (9999-12-31T23:59:59Z): a timestamp must keep four year digits.
const MAX_NOW: f64 = 253_402_300_799.0;

/// A P-256 signing key and its key id: signs events as the service does.
#[derive(Clone)]
pub struct Signer {
    key: SigningKey,
    kid: String,
}

impl core::fmt::Debug for Signer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never the secret scalar.
        f.debug_struct("Signer")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// What one signature needs from the host besides the event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SigningInput {
    /// Current time, seconds since the Unix epoch: `iat` is its whole seconds, `occurredAt` (when not given) its
    /// milliseconds.
    pub now: f64,
    /// Random bytes for the `eventId`, used only when the event has none.
    pub random: [u8; 16],
}

/// A signed delivery: the exact body text and the `x-svc-signature` value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "SignedTestEvent"))]
pub struct SignedEvent {
    /// The envelope as sent (UTF-8 JSON text); `bodySha256` is the hash of these bytes.
    pub body: String,
    /// The compact JWS for the `x-svc-signature` header.
    pub signature: String,
    /// The event id of the envelope (given, or made from the random bytes).
    #[cfg_attr(test, ts(skip))]
    pub event_id: String,
}

/// The event as the caller gives it: the envelope's fields, `eventId` and `occurredAt` optional, `data` as JSON text
/// (the caller's own serialization, kept byte for byte in the body). In JS, `TestEvent`: `data` is an object (its
/// `JSON.stringify` is signed), and the five names are the only ones accepted ([`EVENT_FIELDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(rename = "TestEvent", rename_all = "camelCase", optional_fields)
)]
pub struct Event<'a> {
    /// `type`, such as `agent_run.completed`.
    #[cfg_attr(
        test,
        ts(rename = "type", type = "WebhookEvent[\"type\"] | (string & {})")
    )]
    pub event_type: &'a str,
    /// `processingId`, the run (or space) the event is about.
    pub processing_id: &'a str,
    /// `eventId`; default: `evt_` and 24 random letters and digits.
    pub event_id: Option<&'a str>,
    /// `occurredAt`, an RFC 3339 timestamp; default: the signer's clock, in UTC with milliseconds.
    pub occurred_at: Option<&'a str>,
    /// `data`, an object; `{}` when absent.
    #[cfg_attr(test, ts(type = "Record<string, unknown>", optional))]
    pub data: Option<&'a str>,
}

/// The field names an event may have: the envelope's five, nothing else.
pub const EVENT_FIELDS: [&str; 5] = ["eventId", "type", "processingId", "occurredAt", "data"];

/// Checks the field names of a caller's event object.
///
/// # Errors
/// `invalid_input` when a name is not one of [`EVENT_FIELDS`] (the envelope carries five fields only).
pub fn check_event_fields<'n>(names: impl IntoIterator<Item = &'n str>) -> Result<()> {
    if names.into_iter().all(|name| EVENT_FIELDS.contains(&name)) {
        Ok(())
    } else {
        Err(err(
            ErrorCode::InvalidInput,
            "the event has a field the envelope does not carry (eventId, type, processingId, occurredAt, data)",
        ))
    }
}

impl Signer {
    /// A signer from a 32-byte secret scalar (big-endian) and a key id.
    ///
    /// # Errors
    /// `invalid_input` when the bytes are not a scalar in `1..n` or the key id is empty.
    pub fn from_secret(secret: &[u8], kid: &str) -> Result<Self> {
        if kid.is_empty() {
            return Err(err(ErrorCode::InvalidInput, "the key id must not be empty"));
        }
        let secret: &[u8; 32] = secret.try_into().map_err(|_| {
            err(
                ErrorCode::InvalidInput,
                "the secret is not a P-256 scalar (32 bytes, not zero, below the group order)",
            )
        })?;
        let key = SigningKey::from_bytes(secret.into()).map_err(|_| {
            err(
                ErrorCode::InvalidInput,
                "the secret is not a P-256 scalar (32 bytes, not zero, below the group order)",
            )
        })?;
        Ok(Self {
            key,
            kid: kid.to_owned(),
        })
    }

    /// A signer from a private JWK (`kty` EC, `crv` P-256, `d`, and `kid`), such as [`Signer::private_jwk`] gives.
    ///
    /// # Errors
    /// `invalid_input` when a member is missing, `d` is not a valid scalar, or `x`/`y` (when present) are not the
    /// public point of `d`.
    pub fn from_private_jwk(jwk: &Value) -> Result<Self> {
        let text = |name: &str| jwk.get(name).and_then(Value::as_str);
        if text("kty") != Some("EC") || text("crv") != Some("P-256") {
            return Err(err(
                ErrorCode::InvalidInput,
                "the private key must be a JWK with kty EC and crv P-256",
            ));
        }
        let d = text("d").and_then(base64url::decode).ok_or(err(
            ErrorCode::InvalidInput,
            "the private JWK has no base64url d member",
        ))?;
        let kid = text("kid").unwrap_or_default();
        let signer = Self::from_secret(&d, kid)?;
        let public = signer.public_jwk();
        for member in ["x", "y"] {
            if text(member)
                .is_some_and(|given| public.get(member).and_then(Value::as_str) != Some(given))
            {
                return Err(err(
                    ErrorCode::InvalidInput,
                    "the private JWK's x and y are not the public point of its d",
                ));
            }
        }
        Ok(signer)
    }

    /// The key id (the JOSE header's `kid`).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as a JWK, with every member the spec's key set has (`kty`, `crv`, `x`, `y`, `use`, `alg`,
    /// `kid`).
    pub fn public_jwk(&self) -> Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate =
            |c: Option<&p256::FieldBytes>| c.map(|c| base64url::encode(c)).unwrap_or_default();
        json!({
            "kty": "EC", "crv": "P-256", "x": coordinate(point.x()), "y": coordinate(point.y()),
            "use": "sig", "alg": ALGORITHM, "kid": self.kid,
        })
    }

    /// The key set a verifier trusts for this signer: `{"keys": [public JWK]}`.
    pub fn jwks(&self) -> Value {
        json!({ "keys": [self.public_jwk()] })
    }

    /// The private key as a JWK (the public members plus `d`). Secret: for test fixtures only.
    pub fn private_jwk(&self) -> Value {
        let mut jwk = self.public_jwk();
        if let Some(obj) = jwk.as_object_mut() {
            obj.insert(
                "d".to_owned(),
                Value::String(base64url::encode(&self.key.to_bytes())),
            );
        }
        jwk
    }

    /// Signs one delivery of `event`: builds the envelope (an `eventId` from `input.random` and an `occurredAt` from
    /// `input.now` when not given; `data` as given, key order included, or `{}`), then the token over its exact bytes.
    ///
    /// # Errors
    /// `invalid_input` when `data` is not the JSON text of an object, or `now` is not a time between 1970 and 9999.
    pub fn sign(&self, event: Event<'_>, input: SigningInput) -> Result<SignedEvent> {
        let now = input.now;
        if !(0.0..=MAX_NOW).contains(&now) {
            return Err(err(
                ErrorCode::InvalidInput,
                "the clock must give epoch seconds between 1970 and 9999",
            ));
        }
        let data = event.data.map_or("{}", str::trim);
        if !data.starts_with('{') || serde_json::from_str::<IgnoredAny>(data).is_err() {
            return Err(err(ErrorCode::InvalidInput, "event data must be an object"));
        }
        let event_id = event
            .event_id
            .map_or_else(|| event_id_from(&input.random), str::to_owned);
        let occurred_at = event.occurred_at.map_or_else(
            || rfc3339_millis((now * 1000.0).floor() as i64),
            str::to_owned,
        );
        let body = format!(
            "{{\"eventId\":{},\"type\":{},\"processingId\":{},\"occurredAt\":{},\"data\":{data}}}",
            json_string(&event_id),
            json_string(event.event_type),
            json_string(event.processing_id),
            json_string(&occurred_at),
        );
        let iat = now.floor() as i64;
        let claims = format!(
            "{{\"iss\":{},\"processingId\":{},\"eventId\":{},\"type\":{},\"bodySha256\":\"{}\",\"iat\":{iat},\"exp\":{}}}",
            json_string(ISSUER),
            json_string(event.processing_id),
            json_string(&event_id),
            json_string(event.event_type),
            base64url::encode(&Sha256::digest(body.as_bytes())),
            iat + TOKEN_LIFETIME_SECS,
        );
        let header = format!(
            "{{\"alg\":\"{ALGORITHM}\",\"kid\":{}}}",
            json_string(&self.kid)
        );
        let signing_input = format!(
            "{}.{}",
            base64url::encode(header.as_bytes()),
            base64url::encode(claims.as_bytes())
        );
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        let signature = format!(
            "{signing_input}.{}",
            base64url::encode(&signature.to_bytes())
        );
        Ok(SignedEvent {
            body,
            signature,
            event_id,
        })
    }
}

/// An event id of the spec's shape: `evt_` and 24 lowercase letters and digits, from 16 random bytes.
pub fn event_id_from(random: &[u8; 16]) -> String {
    format!("{EVENT_ID_PREFIX}{}", base36(random, 24))
}

/// A key id for a generated key: `test-` and 16 lowercase letters and digits, from 16 random bytes.
pub fn kid_from(random: &[u8; 16]) -> String {
    format!("test-{}", base36(random, 16))
}

/// The last `len` base-36 digits (`0-9a-z`) of the bytes read as a big-endian number.
fn base36(random: &[u8; 16], len: usize) -> String {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = u128::from_be_bytes(*random);
    let mut out = vec![b'0'; len];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET.get((n % 36) as usize).copied().unwrap_or(b'0');
        n /= 36;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.678Z`) of epoch milliseconds (proleptic Gregorian).
pub fn rfc3339_millis(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Days to civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", civil_from_days).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
}

fn json_string(s: &str) -> String {
    Value::from(s).to_string()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::super::jwk::KeySet;
    use super::super::Verifier;
    use super::*;
    use crate::json::Json;

    // RFC 7515 appendix A.3.1: the ES256 example key (d, and the x and y it must derive).
    const RFC_D: &str = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI";
    const RFC_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const RFC_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";

    const NOW: f64 = 1_800_000_000.25;
    const EVENT: Event<'static> = Event {
        event_type: "agent_run.completed",
        processing_id: "agr_1",
        event_id: None,
        occurred_at: None,
        data: Some(r#"{"object":"agent_run","id":"agr_1","status":"completed"}"#),
    };

    fn signer() -> Signer {
        Signer::from_secret(&base64url::decode(RFC_D).unwrap(), "rfc-key").unwrap()
    }

    fn input() -> SigningInput {
        SigningInput {
            now: NOW,
            random: [0xA5; 16],
        }
    }

    fn verifier(signer: &Signer) -> Verifier {
        Verifier::new(KeySet::from_value(&Json::from(&signer.jwks())).unwrap())
    }

    fn part(token: &str, i: usize) -> Value {
        let seg = token.split('.').nth(i).unwrap();
        serde_json::from_slice(&base64url::decode(seg).unwrap()).unwrap()
    }

    fn code(r: Result<impl core::fmt::Debug>) -> &'static str {
        r.unwrap_err().code().as_str()
    }

    #[test]
    fn rfc7515_secret_derives_the_rfc_public_point() {
        let jwk = signer().public_jwk();
        assert_eq!(jwk["x"], RFC_X);
        assert_eq!(jwk["y"], RFC_Y);
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["use"], "sig");
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["kid"], "rfc-key");
        assert!(jwk.get("d").is_none(), "public JWK carries d");
    }

    #[test]
    fn what_the_signer_makes_the_core_verifier_accepts() {
        let s = signer();
        let signed = s.sign(EVENT, input()).unwrap();
        let ids = verifier(&s)
            .verify(signed.body.as_bytes(), &signed.signature, NOW)
            .unwrap();
        assert_eq!(ids.event_id, signed.event_id);
        assert_eq!(ids.event_type, "agent_run.completed");
        assert_eq!(ids.processing_id, "agr_1");
    }

    #[test]
    fn header_and_claims_are_the_spec_s() {
        let signed = signer().sign(EVENT, input()).unwrap();
        let header = part(&signed.signature, 0);
        assert_eq!(header, json!({"alg": "ES256", "kid": "rfc-key"}));
        let claims = part(&signed.signature, 1);
        let body_hash = base64url::encode(&Sha256::digest(signed.body.as_bytes()));
        assert_eq!(
            claims,
            json!({
                "iss": "svc-process", "processingId": "agr_1", "eventId": signed.event_id,
                "type": "agent_run.completed", "bodySha256": body_hash, "iat": 1_800_000_000, "exp": 1_800_000_300,
            })
        );
    }

    #[test]
    fn envelope_gets_event_id_and_occurred_at_when_not_given() {
        let signed = signer().sign(EVENT, input()).unwrap();
        assert_eq!(
            signed.body,
            format!(
                r#"{{"eventId":"{}","type":"agent_run.completed","processingId":"agr_1","occurredAt":"2027-01-15T08:00:00.250Z","data":{{"object":"agent_run","id":"agr_1","status":"completed"}}}}"#,
                signed.event_id
            )
        );
        let id = signed.event_id.strip_prefix("evt_").unwrap();
        assert_eq!(id.len(), 24);
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()));
        let other = signer()
            .sign(
                EVENT,
                SigningInput {
                    random: [0x5A; 16],
                    ..input()
                },
            )
            .unwrap();
        assert_ne!(other.event_id, signed.event_id);
    }

    #[test]
    fn given_event_id_and_occurred_at_are_kept_and_data_keeps_its_key_order() {
        let event = Event {
            event_type: "t",
            processing_id: "p",
            event_id: Some("evt_given"),
            occurred_at: Some("2020-01-01T00:00:00.000Z"),
            data: Some(r#"{"z":1,"a":[true,null]}"#),
        };
        let signed = signer().sign(event, input()).unwrap();
        assert_eq!(signed.event_id, "evt_given");
        assert_eq!(
            signed.body,
            r#"{"eventId":"evt_given","type":"t","processingId":"p","occurredAt":"2020-01-01T00:00:00.000Z","data":{"z":1,"a":[true,null]}}"#
        );
        assert_eq!(part(&signed.signature, 1)["eventId"], "evt_given");
    }

    #[test]
    fn missing_data_is_an_empty_object() {
        let signed = signer()
            .sign(
                Event {
                    event_type: "t",
                    processing_id: "p",
                    ..Event::default()
                },
                input(),
            )
            .unwrap();
        assert!(signed.body.ends_with(r#","data":{}}"#), "{}", signed.body);
        verifier(&signer())
            .verify(signed.body.as_bytes(), &signed.signature, NOW)
            .unwrap();
    }

    #[test]
    fn same_inputs_give_the_same_token() {
        assert_eq!(
            signer().sign(EVENT, input()).unwrap(),
            signer().sign(EVENT, input()).unwrap()
        );
    }

    #[test]
    fn tampered_body_fails_with_body_mismatch() {
        let s = signer();
        let signed = s.sign(EVENT, input()).unwrap();
        let tampered = signed.body.replace("completed\"}", "failed\"}");
        assert_ne!(tampered, signed.body);
        assert_eq!(
            code(verifier(&s).verify(tampered.as_bytes(), &signed.signature, NOW)),
            "body_mismatch"
        );
    }

    #[test]
    fn tampered_claims_or_signature_fail_with_invalid_signature() {
        let s = signer();
        let signed = s.sign(EVENT, input()).unwrap();
        let parts: Vec<&str> = signed.signature.split('.').collect();
        let mut claims = part(&signed.signature, 1);
        claims["exp"] = json!(1_900_000_000);
        let forged_claims = format!(
            "{}.{}.{}",
            parts[0],
            base64url::encode(claims.to_string().as_bytes()),
            parts[2]
        );
        let mut sig = base64url::decode(parts[2]).unwrap();
        sig[40] ^= 1;
        let forged_sig = format!("{}.{}.{}", parts[0], parts[1], base64url::encode(&sig));
        for token in [forged_claims, forged_sig] {
            assert_eq!(
                code(verifier(&s).verify(signed.body.as_bytes(), &token, NOW)),
                "invalid_signature"
            );
        }
    }

    #[test]
    fn another_key_with_the_same_kid_fails_with_invalid_signature() {
        let other = Signer::from_secret(&[9u8; 32], "rfc-key").unwrap();
        let signed = other.sign(EVENT, input()).unwrap();
        assert_eq!(
            code(verifier(&signer()).verify(signed.body.as_bytes(), &signed.signature, NOW)),
            "invalid_signature"
        );
    }

    #[test]
    fn token_expires_300_seconds_after_iat() {
        let s = signer();
        let signed = s.sign(EVENT, input()).unwrap();
        let v = verifier(&s).with_clock_tolerance(0.0);
        v.verify(signed.body.as_bytes(), &signed.signature, 1_800_000_300.0)
            .unwrap();
        assert_eq!(
            code(v.verify(signed.body.as_bytes(), &signed.signature, 1_800_000_300.5)),
            "expired"
        );
    }

    #[test]
    fn event_fields_are_the_envelope_s_five() {
        check_event_fields(["type", "processingId", "data", "eventId", "occurredAt"]).unwrap();
        assert_eq!(
            code(check_event_fields(["type", "processingId", "metadata"])),
            "invalid_input"
        );
    }

    #[test]
    fn bad_data_and_clocks_are_invalid_input() {
        let s = signer();
        for data in ["not json", "[]", "\"x\"", "1", "{", "{} {}"] {
            let event = Event {
                data: Some(data),
                ..EVENT
            };
            assert_eq!(code(s.sign(event, input())), "invalid_input", "{data}");
        }
        for now in [f64::NAN, -1.0, f64::INFINITY, 1e12] {
            assert_eq!(
                code(s.sign(EVENT, SigningInput { now, ..input() })),
                "invalid_input",
                "{now}"
            );
        }
    }

    #[test]
    fn bad_secrets_and_kids_are_invalid_input() {
        // Zero, the group order n (FIPS 186-4 D.1.2.3), a short slice, an empty kid.
        let order: Vec<u8> = (0..32)
            .map(|i| {
                let hex = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
                u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()
            })
            .collect();
        for (secret, kid) in [
            (vec![0u8; 32], "k"),
            (order, "k"),
            (vec![1u8; 31], "k"),
            (vec![1u8; 32], ""),
        ] {
            assert_eq!(code(Signer::from_secret(&secret, kid)), "invalid_input");
        }
    }

    #[test]
    fn private_jwk_round_trips_and_a_mismatched_point_is_refused() {
        let s = signer();
        let jwk = s.private_jwk();
        assert_eq!(jwk["d"], RFC_D);
        let back = Signer::from_private_jwk(&jwk).unwrap();
        assert_eq!(back.kid(), "rfc-key");
        assert_eq!(back.public_jwk(), s.public_jwk());
        let mut wrong = jwk.clone();
        wrong["x"] = json!(RFC_Y);
        assert_eq!(code(Signer::from_private_jwk(&wrong)), "invalid_input");
        assert_eq!(
            code(Signer::from_private_jwk(
                &json!({"kty": "EC", "crv": "P-256", "kid": "k"})
            )),
            "invalid_input"
        );
    }

    #[test]
    fn debug_never_prints_the_secret() {
        let s = signer();
        let printed = format!("{s:?}");
        assert!(printed.contains("rfc-key"));
        assert!(!printed.contains(RFC_D));
    }

    #[test]
    fn rfc3339_millis_formats_epoch_milliseconds() {
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_millis(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(
            rfc3339_millis(1_800_000_000_250),
            "2027-01-15T08:00:00.250Z"
        );
        assert_eq!(
            rfc3339_millis(253_402_300_799_999),
            "9999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn ids_are_base36_of_the_random_bytes() {
        assert_eq!(event_id_from(&[0; 16]), "evt_000000000000000000000000");
        assert_eq!(kid_from(&[0; 16]), "test-0000000000000000");
        assert_eq!(
            &event_id_from(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 37]),
            "evt_000000000000000000000011"
        );
    }
}
