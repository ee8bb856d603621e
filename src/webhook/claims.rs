//! The token's claims and their agreement with the delivered body.
//!
//! Run only after the signature verified: the claims are authentic from then on. Order of checks: required
//! claims, issuer, time window, body hash, envelope, envelope agreement.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::base64url;
use super::error::{err, ErrorCode, Result, WebhookError};
use crate::json::Json;

/// The constant issuer of this API's webhook tokens.
pub const ISSUER: &str = "svc-process";

/// Default clock tolerance, in seconds, applied both to `exp` and to `iat`/`nbf`.
pub const DEFAULT_CLOCK_TOLERANCE: f64 = 5.0;

/// Time-dependent inputs of a check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeWindow {
    /// Current time, seconds since the Unix epoch.
    pub now: f64,
    /// Allowed clock difference in seconds, both ways.
    pub tolerance: f64,
}

/// The identifying fields of a verified event, read from the body and equal to the token's claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventIds {
    /// `eventId`, the deduplication key.
    pub event_id: String,
    /// `type`, such as `agent_run.waiting`.
    pub event_type: String,
    /// `processingId`, the run (or space) the event is about.
    pub processing_id: String,
}

/// The claims this API defines, by their index in [`CLAIMS`].
#[derive(Clone, Copy)]
enum Claim {
    Iss,
    ProcessingId,
    EventId,
    Type,
    BodySha256,
    Iat,
    Exp,
    Nbf,
}

/// Their names, in the order of [`Claim`].
const CLAIMS: [&str; 8] = [
    "iss",
    "processingId",
    "eventId",
    "type",
    "bodySha256",
    "iat",
    "exp",
    "nbf",
];

fn text(value: Option<Json>) -> Result<String> {
    match value {
        Some(Json::String(s)) => Ok(s),
        _ => Err(err(
            ErrorCode::MissingClaim,
            "a required claim is absent or not a string",
        )),
    }
}

/// A time claim: a number within the `f64` range. One beyond it (`1e400`, which `JSON.parse` reads as Infinity) is
/// refused with its own message, never taken as a time that never comes.
fn number(value: &Option<Json>) -> Result<f64> {
    match value.as_ref().and_then(Json::as_f64) {
        Some(n) if n.is_finite() => Ok(n),
        Some(_) => Err(err(
            ErrorCode::MissingClaim,
            "a time claim is a number beyond the range of a double (read as Infinity)",
        )),
        None => Err(err(
            ErrorCode::MissingClaim,
            "a required time claim is absent or not a number",
        )),
    }
}

/// Checks the authentic claims payload against the raw body and the clock.
///
/// # Errors
/// `missing_claim`, `wrong_issuer`, `expired`, `not_yet_valid`, `body_mismatch`, `malformed_body` or
/// `claims_mismatch`, in that order of checking.
pub fn check(payload: &[u8], body: &[u8], window: TimeWindow) -> Result<EventIds> {
    check_with_digest(
        payload,
        || sha256(body),
        || EnvelopeIds::from_json(body),
        window,
    )
}

/// SHA-256 of `body`, by sha2 (in wasm, where the host has no faster digest).
pub fn sha256(body: &[u8]) -> [u8; 32] {
    Sha256::digest(body).into()
}

/// As [`check`], with the body's SHA-256 and envelope supplied by the caller, for a body that stays with the host:
/// `digest` computes it (called only after the claims and the clock passed, so an expired or misissued token never
/// costs a hash of its body), and `envelope` reads the envelope (called only once the digest matched, so an
/// unauthentic body is never parsed).
///
/// # Errors
/// As [`check`].
pub fn check_with_digest(
    payload: &[u8],
    digest: impl FnOnce() -> [u8; 32],
    envelope: impl FnOnce() -> Result<EnvelopeIds>,
    window: TimeWindow,
) -> Result<EventIds> {
    precheck(payload, window)?.finish(digest, envelope)
}

/// The claims read and checked against the clock, before the body: the first half of [`check_with_digest`].
///
/// A verifier whose signature host works on another thread (WebCrypto in a browser) runs this while the host
/// checks, and hashes the body meanwhile when it passed: the claims are not authentic yet, so its error is reported
/// only after the signature's (see [`crate::webhook::check_token_prechecked`]), and the body is still hashed only
/// for a token whose claims and clock pass.
///
/// # Errors
/// `missing_claim`, `wrong_issuer`, `expired`, `not_yet_valid`.
pub fn precheck(payload: &[u8], window: TimeWindow) -> Result<Prechecked> {
    // Taken out of the array one by one, in the order of checking: an early return drops what is left as one array
    // (one call), where eight separate values made every return drop each (30 drops in the function V8 compiles
    // for a cold start's first verification).
    let mut claims = crate::json::members(payload, &CLAIMS).ok_or(err(
        ErrorCode::MissingClaim,
        "token payload is not a JSON object of claims, or names a claim twice",
    ))?;
    let mut take = |claim: Claim| claims.get_mut(claim as usize).and_then(Option::take);
    let iss = text(take(Claim::Iss))?;
    let ids = EventIds {
        event_id: text(take(Claim::EventId))?,
        event_type: text(take(Claim::Type))?,
        processing_id: text(take(Claim::ProcessingId))?,
    };
    let body_sha256 = text(take(Claim::BodySha256))?;
    let exp = number(&take(Claim::Exp))?;
    let iat = number(&take(Claim::Iat))?;
    let nbf = match take(Claim::Nbf) {
        None => None,
        nbf => Some(number(&nbf)?),
    };

    if iss != ISSUER {
        return Err(err(
            ErrorCode::WrongIssuer,
            "token issuer is not svc-process",
        ));
    }
    let TimeWindow { now, tolerance } = window;
    if now > exp + tolerance {
        return Err(err(ErrorCode::Expired, "token has expired"));
    }
    if iat > now + tolerance || nbf.is_some_and(|nbf| nbf > now + tolerance) {
        return Err(err(
            ErrorCode::NotYetValid,
            "token is issued in the future (check the clock)",
        ));
    }
    Ok(Prechecked { ids, body_sha256 })
}

/// Claims that passed [`precheck`]; [`Prechecked::finish`] checks the body against them.
#[derive(Debug)]
pub struct Prechecked {
    ids: EventIds,
    body_sha256: String,
}

impl Prechecked {
    /// The second half of [`check_with_digest`]: the body's digest against `bodySha256`, then the envelope
    /// (read only once the digest matched) against the claims.
    ///
    /// # Errors
    /// `body_mismatch`, `malformed_body`, `claims_mismatch`.
    pub fn finish(
        self,
        digest: impl FnOnce() -> [u8; 32],
        envelope: impl FnOnce() -> Result<EnvelopeIds>,
    ) -> Result<EventIds> {
        let Self { ids, body_sha256 } = self;
        let claimed = base64url::decode(&body_sha256).unwrap_or_default();
        let digest = digest();
        // Lengths are public (32 bytes); the content comparison is constant-time.
        if claimed.len() != digest.len() || !bool::from(claimed.as_slice().ct_eq(&digest[..])) {
            return Err(err(
                ErrorCode::BodyMismatch,
                "body does not match the signed hash (hash the raw received bytes, not re-serialized JSON)",
            ));
        }

        let envelope = envelope()?;
        if envelope.event_id != ids.event_id
            || envelope.event_type != ids.event_type
            || envelope.processing_id != ids.processing_id
        {
            return Err(err(
                ErrorCode::ClaimsMismatch,
                "token claims disagree with the event envelope",
            ));
        }
        Ok(ids)
    }
}

const MALFORMED_BODY: WebhookError = err(
    ErrorCode::MalformedBody,
    "body is not a JSON event envelope",
);

/// The identifying fields of an event envelope (`eventId`, `type`, `processingId`), read from an authentic body
/// that has the envelope's shape (those three, `occurredAt` strings and `data` an object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeIds {
    event_id: String,
    event_type: String,
    processing_id: String,
}

impl EnvelopeIds {
    /// Parses the envelope of a raw body.
    ///
    /// # Errors
    /// `malformed_body` when the body is not a JSON object of the envelope's shape.
    pub fn from_json(body: &[u8]) -> Result<Self> {
        let envelope: Envelope = serde_json::from_slice(body).map_err(|_| MALFORMED_BODY)?;
        Ok(Self {
            event_id: envelope.event_id,
            event_type: envelope.event_type,
            processing_id: envelope.processing_id,
        })
    }

    /// The envelope as a host's JSON parser read it: each field `None` when absent or not a string;
    /// `occurred_at_is_string` when `occurredAt` is a string, `data_is_object` when `data` is a JSON object (not an
    /// array, not null).
    ///
    /// # Errors
    /// `malformed_body` when a field is missing or of the wrong type.
    pub fn from_fields(
        event_id: Option<String>,
        event_type: Option<String>,
        processing_id: Option<String>,
        occurred_at_is_string: bool,
        data_is_object: bool,
    ) -> Result<Self> {
        let shaped = occurred_at_is_string && data_is_object;
        match (event_id, event_type, processing_id, shaped) {
            (Some(event_id), Some(event_type), Some(processing_id), true) => Ok(Self {
                event_id,
                event_type,
                processing_id,
            }),
            _ => Err(MALFORMED_BODY),
        }
    }
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "eventId")]
    event_id: String,
    #[serde(rename = "type")]
    event_type: String,
    #[serde(rename = "processingId")]
    processing_id: String,
    #[serde(rename = "occurredAt")]
    _occurred_at: String,
    #[serde(rename = "data")]
    _data: AnyObject,
}

/// Accepts any JSON object without building it.
struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> core::result::Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = AnyObject;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> core::result::Result<AnyObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyObject)
            }
        }
        deserializer
            .deserialize_map(ObjectVisitor)
            .map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: f64 = 1_800_000_000.0;
    const WINDOW: TimeWindow = TimeWindow {
        now: NOW,
        tolerance: 5.0,
    };

    fn body() -> Vec<u8> {
        br#"{"eventId":"evt_1","type":"agent_run.waiting","processingId":"agr_1","occurredAt":"2027-01-15T08:00:00.000Z","data":{"object":"agent_run","id":"agr_1","status":"waiting"}}"#.to_vec()
    }

    fn claims_for(body: &[u8]) -> serde_json::Value {
        json!({
            "iss": "svc-process", "eventId": "evt_1", "type": "agent_run.waiting", "processingId": "agr_1",
            "bodySha256": base64url::encode(&Sha256::digest(body)), "iat": NOW - 10.0, "exp": NOW + 290.0,
        })
    }

    fn code_with(edit: impl FnOnce(&mut serde_json::Value), body: &[u8]) -> ErrorCode {
        let mut c = claims_for(body);
        edit(&mut c);
        check(c.to_string().as_bytes(), body, WINDOW)
            .unwrap_err()
            .code()
    }

    #[test]
    fn valid_claims_give_the_event_ids() {
        let b = body();
        let ids = check(claims_for(&b).to_string().as_bytes(), &b, WINDOW).unwrap();
        assert_eq!(ids.event_id, "evt_1");
        assert_eq!(ids.event_type, "agent_run.waiting");
        assert_eq!(ids.processing_id, "agr_1");
    }

    #[test]
    fn each_missing_claim_is_missing_claim() {
        for name in [
            "iss",
            "eventId",
            "type",
            "processingId",
            "bodySha256",
            "iat",
            "exp",
        ] {
            let code = code_with(|c| drop(c.as_object_mut().unwrap().remove(name)), &body());
            assert_eq!(code, ErrorCode::MissingClaim, "{name}");
        }
        assert_eq!(
            code_with(|c| c["exp"] = json!("soon"), &body()),
            ErrorCode::MissingClaim
        );
        assert_eq!(
            code_with(|c| c["eventId"] = json!(1), &body()),
            ErrorCode::MissingClaim
        );
        let b = body();
        assert_eq!(
            check(b"[]", &b, WINDOW).unwrap_err().code(),
            ErrorCode::MissingClaim
        );
    }

    /// The claims of [`claims_for`] with `name` set to the number `text`, written as the service (or an attacker)
    /// writes it: `serde_json::json!` cannot hold 1e400.
    fn claims_with_number(body: &[u8], name: &str, text: &str) -> String {
        let mut c = claims_for(body);
        c[name] = json!("@");
        c.to_string().replace("\"@\"", text)
    }

    #[test]
    fn the_largest_double_is_a_time_and_beyond_it_is_refused() {
        let b = body();
        // f64::MAX is a time: a reader that rounded this exp to Infinity refused it as `missing_claim`.
        let c = claims_with_number(&b, "exp", "1.7976931348623157e308");
        assert!(check(c.as_bytes(), &b, WINDOW).is_ok());
        for (name, text) in [
            ("exp", "1e400"),
            ("exp", "-1e400"),
            ("iat", "-1e999"),
            ("nbf", "1e309"),
        ] {
            let c = claims_with_number(&b, name, text);
            let e = check(c.as_bytes(), &b, WINDOW).unwrap_err();
            assert_eq!(e.code(), ErrorCode::MissingClaim, "{name}: {text}");
            assert!(e.detail().contains("beyond the range"), "{name}: {e}");
        }
    }

    #[test]
    fn wrong_issuer_is_rejected() {
        assert_eq!(
            code_with(|c| c["iss"] = json!("someone-else"), &body()),
            ErrorCode::WrongIssuer
        );
    }

    #[test]
    fn expiry_honours_tolerance_both_ways() {
        assert_eq!(
            code_with(|c| c["exp"] = json!(NOW - 6.0), &body()),
            ErrorCode::Expired
        );
        let b = body();
        let mut c = claims_for(&b);
        c["exp"] = json!(NOW - 4.0);
        assert!(
            check(c.to_string().as_bytes(), &b, WINDOW).is_ok(),
            "within tolerance"
        );
        assert_eq!(
            code_with(|c| c["iat"] = json!(NOW + 60.0), &body()),
            ErrorCode::NotYetValid
        );
        assert_eq!(
            code_with(|c| c["nbf"] = json!(NOW + 60.0), &body()),
            ErrorCode::NotYetValid
        );
        let mut c = claims_for(&b);
        c["iat"] = json!(NOW + 4.0);
        assert!(
            check(c.to_string().as_bytes(), &b, WINDOW).is_ok(),
            "within tolerance"
        );
    }

    #[test]
    fn tampered_and_reserialized_bodies_are_body_mismatch() {
        let b = body();
        let claims = claims_for(&b).to_string();
        let mut tampered = b.clone();
        tampered[20] ^= 1;
        assert_eq!(
            check(claims.as_bytes(), &tampered, WINDOW)
                .unwrap_err()
                .code(),
            ErrorCode::BodyMismatch
        );
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        let pretty = serde_json::to_vec_pretty(&v).unwrap();
        assert_eq!(
            check(claims.as_bytes(), &pretty, WINDOW)
                .unwrap_err()
                .code(),
            ErrorCode::BodyMismatch
        );
        assert_eq!(
            code_with(|c| c["bodySha256"] = json!("short"), &body()),
            ErrorCode::BodyMismatch
        );
    }

    #[test]
    fn disagreeing_envelope_is_claims_mismatch() {
        assert_eq!(
            code_with(|c| c["eventId"] = json!("evt_2"), &body()),
            ErrorCode::ClaimsMismatch
        );
        assert_eq!(
            code_with(|c| c["type"] = json!("agent_run.failed"), &body()),
            ErrorCode::ClaimsMismatch
        );
        assert_eq!(
            code_with(|c| c["processingId"] = json!("agr_2"), &body()),
            ErrorCode::ClaimsMismatch
        );
    }

    #[test]
    fn authentic_non_envelope_body_is_malformed_body() {
        for b in [
            &b"not json"[..],
            b"[]",
            br#"{"eventId":"evt_1"}"#,
            br#"{"eventId":"evt_1","type":"t","processingId":"p","occurredAt":"x","data":[]}"#,
        ] {
            assert_eq!(code_with(|_| {}, b), ErrorCode::MalformedBody);
        }
    }
}
