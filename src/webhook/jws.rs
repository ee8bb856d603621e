//! Parsing of the `x-svc-signature` compact JWS (RFC 7515 section 7.1) under this API's rules.
//!
//! Only structure is checked here: three base64url segments, a JSON object header naming `alg: ES256` and a `kid`,
//! no `crit`, and a raw `r||s` signature of exactly 64 bytes. The claims are decoded later, after the signature
//! verified ([`crate::webhook::claims`]).

use std::borrow::Cow;

use crate::json::Json;

use super::base64url;
use super::error::{err, ErrorCode, Result};

/// Longest signature header accepted, in bytes. Real tokens are about 600 bytes; anything far larger is refused
/// before any decoding work.
pub const MAX_TOKEN_LEN: usize = 8 * 1024;

/// The only algorithm accepted (an allow-list of one).
pub const ALGORITHM: &str = "ES256";

/// A structurally valid compact JWS, borrowed from the header string it was parsed from (or owning a copy of its
/// signing input, [`CompactJws::into_owned`]).
#[derive(Clone)]
pub struct CompactJws<'a> {
    kid: String,
    signing_input: Cow<'a, str>,
    payload: Vec<u8>,
    /// `r || s`, both known to be in `[1, n - 1]` ([`scalars_in_range`]).
    signature: [u8; 64],
}

impl core::fmt::Debug for CompactJws<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The token is not secret, but it is the caller's data: print only the key id.
        f.debug_struct("CompactJws")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl<'a> CompactJws<'a> {
    /// The key id named by the JOSE header.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The ASCII bytes that were signed: `base64url(header) || '.' || base64url(payload)`.
    pub fn signing_input(&self) -> &[u8] {
        self.signing_input.as_bytes()
    }

    /// The same token, no longer borrowing the header string (its signing input copied): for a check that finishes
    /// after the caller's string is gone, without parsing the token again.
    pub fn into_owned(self) -> CompactJws<'static> {
        CompactJws {
            kid: self.kid,
            signing_input: Cow::Owned(self.signing_input.into_owned()),
            payload: self.payload,
            signature: self.signature,
        }
    }

    /// The decoded payload bytes (the claims JSON, not yet trusted).
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The signature as the 64 raw bytes `r || s` (`r` and `s` known to be in range).
    pub fn signature_bytes(&self) -> [u8; 64] {
        self.signature
    }
}

/// One JOSE header member: absent, a string, or anything else (`null` included, which is not absence). A header
/// naming one of them twice is refused ([`crate::json::members`]).
enum Member {
    Absent,
    Text(String),
    Other,
}

/// Parses a compact JWS and enforces the header rules of this API.
///
/// # Errors
/// `malformed_signature` for anything that is not three strict base64url segments with a JSON object header naming
/// a `kid` and a 64-byte signature (a DER signature is refused); `unsupported_algorithm` when `alg` is not `ES256`
/// (including `none` and every HMAC or RSA label); `unsupported_crit` when a `crit` parameter is present;
/// `invalid_signature` when `r` or `s` is zero or not below the group order.
pub fn parse_compact(token: &str) -> Result<CompactJws<'_>> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(err(
            ErrorCode::MalformedSignature,
            "signature header is too long",
        ));
    }
    let token = trim_blanks(token);
    let Some((header_b64, payload_b64, signature_b64)) = three_segments(token) else {
        return Err(err(
            ErrorCode::MalformedSignature,
            "signature header is not a compact JWS (three base64url segments)",
        ));
    };
    let header_bytes = base64url::decode(header_b64).ok_or(err(
        ErrorCode::MalformedSignature,
        "JOSE header is not base64url",
    ))?;
    let [alg, kid, crit] =
        crate::json::members(&header_bytes, &["alg", "kid", "crit"]).ok_or(err(
            ErrorCode::MalformedSignature,
            "JOSE header is not a JSON object, or names a member twice",
        ))?;
    let member = |value: Option<Json>| match value {
        None => Member::Absent,
        Some(Json::String(text)) => Member::Text(text),
        Some(_) => Member::Other,
    };
    let (alg, kid, crit) = (member(alg), member(kid), member(crit));

    match alg {
        Member::Text(alg) if alg == ALGORITHM => {}
        Member::Absent => return Err(err(ErrorCode::MalformedSignature, "JOSE header has no alg")),
        _ => {
            return Err(err(
                ErrorCode::UnsupportedAlgorithm,
                "only ES256 signatures are accepted",
            ));
        }
    }
    if !matches!(crit, Member::Absent) {
        return Err(err(
            ErrorCode::UnsupportedCrit,
            "JOSE header lists critical extensions this verifier does not understand",
        ));
    }
    let kid = match kid {
        Member::Text(kid) if !kid.is_empty() => kid,
        _ => {
            return Err(err(
                ErrorCode::MalformedSignature,
                "JOSE header names no kid",
            ))
        }
    };

    let signature_raw = base64url::decode(signature_b64).ok_or(err(
        ErrorCode::MalformedSignature,
        "signature is not base64url",
    ))?;
    let Ok(signature) = <[u8; 64]>::try_from(signature_raw.as_slice()) else {
        return Err(err(
            ErrorCode::MalformedSignature,
            "ES256 signature must be the 64 raw bytes r||s (DER is not accepted)",
        ));
    };
    if !scalars_in_range(&signature) {
        return Err(err(
            ErrorCode::InvalidSignature,
            "signature scalars are out of range",
        ));
    }
    let payload = base64url::decode(payload_b64).ok_or(err(
        ErrorCode::MalformedSignature,
        "JWS payload is not base64url",
    ))?;

    let signing_input_len = header_b64.len() + 1 + payload_b64.len();
    let signing_input = token.get(..signing_input_len).ok_or(err(
        ErrorCode::MalformedSignature,
        "signature header is not a compact JWS",
    ))?;

    Ok(CompactJws {
        kid,
        signing_input: Cow::Borrowed(signing_input),
        payload,
        signature,
    })
}

/// `token` without the spaces and tabs around it (ASCII, so the cuts fall on character boundaries).
fn trim_blanks(token: &str) -> &str {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let bytes = token.as_bytes();
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |i| i + 1);
    token.get(start..end).unwrap_or_default()
}

/// The three `.`-separated segments of a compact JWS; `None` for any other count. Byte-wise: `.` is ASCII, and
/// this keeps `str`'s pattern searchers out of the first verification's code (less for V8 to compile on a cold
/// start).
fn three_segments(token: &str) -> Option<(&str, &str, &str)> {
    let mut dots = token
        .bytes()
        .enumerate()
        .filter_map(|(i, b)| (b == b'.').then_some(i));
    let (Some(first), Some(second), None) = (dots.next(), dots.next(), dots.next()) else {
        return None;
    };
    Some((
        token.get(..first)?,
        token.get(first + 1..second)?,
        token.get(second + 1..)?,
    ))
}

/// P-256's group order `n`, big-endian.
const ORDER: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
];

/// Whether `r` and `s` (big-endian halves of `signature`) both lie in `[1, n - 1]`, as ECDSA requires: the check
/// p256's `Signature::from_slice` makes, without its scalar arithmetic in the verifier's module.
pub fn scalars_in_range(signature: &[u8; 64]) -> bool {
    signature
        .chunks_exact(32)
        .all(|half| half.iter().any(|&b| b != 0) && half < &ORDER[..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::Signature;

    /// The range check agrees with p256's own (`Signature::from_slice`) at the edges of `[1, n - 1]` (zero, one,
    /// `n - 1`, `n`, `n + 1`, all ones, `n` with one byte moved up or down) and on pseudo-random scalars, for `r`
    /// and `s` alike.
    #[test]
    fn scalar_range_matches_p256() {
        let mut scalars: Vec<[u8; 32]> = vec![[0; 32], [0xff; 32]];
        let mut one = [0; 32];
        one[31] = 1;
        scalars.push(one);
        let order = ORDER;
        for delta in [-1i16, 0, 1] {
            let mut v = order;
            v[31] = (i16::from(v[31]) + delta) as u8;
            scalars.push(v);
        }
        for i in 0..32 {
            for step in [1u8, 0xff] {
                let mut v = order;
                v[i] = v[i].wrapping_add(step);
                scalars.push(v);
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut v = [0u8; 32];
            for b in &mut v {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = state as u8;
            }
            // Half of them start like n, so that the comparison reaches the later bytes.
            if state & 1 == 0 {
                v[..8].copy_from_slice(&order[..8]);
            }
            scalars.push(v);
        }
        let good = [0x11; 32];
        for v in &scalars {
            for (r, s) in [(v, &good), (&good, v)] {
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(r);
                sig[32..].copy_from_slice(s);
                assert_eq!(
                    scalars_in_range(&sig),
                    Signature::from_slice(&sig).is_ok(),
                    "{sig:02x?}"
                );
            }
        }
    }

    #[test]
    fn segments_and_blanks_are_cut_bytewise() {
        assert_eq!(three_segments("a.b.c"), Some(("a", "b", "c")));
        assert_eq!(three_segments(".."), Some(("", "", "")));
        assert_eq!(three_segments("a.b"), None);
        assert_eq!(three_segments("a.b.c.d"), None);
        assert_eq!(three_segments("é.ü.ß"), Some(("é", "ü", "ß")));
        assert_eq!(trim_blanks(" \t a.b \t"), "a.b");
        assert_eq!(trim_blanks(" \t "), "");
        assert_eq!(trim_blanks("\u{a0}x\u{a0}"), "\u{a0}x\u{a0}");
    }
    use crate::webhook::base64url::encode;

    fn token(header: &str, payload: &str, signature: &[u8]) -> String {
        format!(
            "{}.{}.{}",
            encode(header.as_bytes()),
            encode(payload.as_bytes()),
            encode(signature)
        )
    }

    fn sig64() -> Vec<u8> {
        let mut s = vec![1u8; 64];
        s[0] = 0x10;
        s[32] = 0x10;
        s
    }

    fn code(t: &str) -> ErrorCode {
        parse_compact(t).unwrap_err().code()
    }

    #[test]
    fn accepts_es256_with_kid() {
        let t = token(r#"{"alg":"ES256","kid":"k1"}"#, "{}", &sig64());
        let jws = parse_compact(&t).unwrap();
        assert_eq!(jws.kid(), "k1");
        assert_eq!(jws.payload(), b"{}");
        assert_eq!(
            jws.signing_input(),
            t.rsplit_once('.').unwrap().0.as_bytes()
        );
        assert_eq!(jws.signature_bytes().to_vec(), sig64());
    }

    #[test]
    fn alg_none_is_unsupported_algorithm() {
        let t = token(r#"{"alg":"none","kid":"k1"}"#, "{}", b"");
        assert_eq!(code(&t), ErrorCode::UnsupportedAlgorithm);
    }

    #[test]
    fn hmac_rsa_and_other_curves_are_unsupported_algorithm() {
        for alg in [
            "HS256", "RS256", "ES384", "ES512", "PS256", "EdDSA", "es256", "ES256 ",
        ] {
            let t = token(&format!(r#"{{"alg":"{alg}","kid":"k1"}}"#), "{}", &sig64());
            assert_eq!(code(&t), ErrorCode::UnsupportedAlgorithm, "{alg}");
        }
        let t = token(r#"{"alg":["ES256"],"kid":"k1"}"#, "{}", &sig64());
        assert_eq!(code(&t), ErrorCode::UnsupportedAlgorithm);
    }

    #[test]
    fn missing_alg_or_kid_is_malformed() {
        assert_eq!(
            code(&token(r#"{"kid":"k1"}"#, "{}", &sig64())),
            ErrorCode::MalformedSignature
        );
        assert_eq!(
            code(&token(r#"{"alg":"ES256"}"#, "{}", &sig64())),
            ErrorCode::MalformedSignature
        );
        assert_eq!(
            code(&token(r#"{"alg":"ES256","kid":""}"#, "{}", &sig64())),
            ErrorCode::MalformedSignature
        );
        assert_eq!(
            code(&token(r#"{"alg":"ES256","kid":7}"#, "{}", &sig64())),
            ErrorCode::MalformedSignature
        );
    }

    #[test]
    fn a_header_member_named_twice_is_refused() {
        // A last-wins reader would see ES256 here; a first-wins reader would see HS256.
        for header in [
            r#"{"alg":"HS256","alg":"ES256","kid":"k1"}"#,
            r#"{"alg":"ES256","kid":"k1","kid":"k2"}"#,
        ] {
            let t = token(header, "{}", &sig64());
            assert_eq!(code(&t), ErrorCode::MalformedSignature, "{header}");
        }
    }

    #[test]
    fn a_null_alg_is_an_unsupported_algorithm_not_a_missing_one() {
        let t = token(r#"{"alg":null,"kid":"k1"}"#, "{}", &sig64());
        assert_eq!(code(&t), ErrorCode::UnsupportedAlgorithm);
    }

    #[test]
    fn any_crit_is_rejected() {
        for crit in [r#"["b64"]"#, r#"["exp"]"#, "[]", "null"] {
            let t = token(
                &format!(r#"{{"alg":"ES256","kid":"k1","crit":{crit},"b64":false}}"#),
                "{}",
                &sig64(),
            );
            assert_eq!(code(&t), ErrorCode::UnsupportedCrit, "{crit}");
        }
    }

    #[test]
    fn der_signature_is_malformed() {
        // A DER SEQUENCE of two INTEGERs is 70 to 72 bytes: never 64.
        let mut der = vec![0x30, 0x44, 0x02, 0x20];
        der.extend_from_slice(&[0x10; 32]);
        der.extend_from_slice(&[0x02, 0x20]);
        der.extend_from_slice(&[0x10; 32]);
        let t = token(r#"{"alg":"ES256","kid":"k1"}"#, "{}", &der);
        assert_eq!(code(&t), ErrorCode::MalformedSignature);
    }

    #[test]
    fn zero_scalar_signature_is_invalid_signature() {
        let t = token(r#"{"alg":"ES256","kid":"k1"}"#, "{}", &[0u8; 64]);
        assert_eq!(code(&t), ErrorCode::InvalidSignature);
    }

    #[test]
    fn garbage_is_malformed() {
        for t in [
            "",
            ".",
            "..",
            "...",
            "a.b",
            "a.b.c.d",
            "not a token",
            "e30.e30.!!!",
            "%%%.e30.AA",
        ] {
            assert_eq!(code(t), ErrorCode::MalformedSignature, "{t:?}");
        }
        let t = token("[1,2]", "{}", &sig64());
        assert_eq!(code(&t), ErrorCode::MalformedSignature);
    }

    #[test]
    fn megabyte_header_is_refused_early() {
        let t = "a".repeat(1 << 20);
        assert_eq!(code(&t), ErrorCode::MalformedSignature);
    }

    #[test]
    fn padded_segments_are_malformed() {
        let t = format!(
            "{}=.e30.{}",
            encode(br#"{"alg":"ES256","kid":"k1"}"#),
            encode(&sig64())
        );
        assert_eq!(code(&t), ErrorCode::MalformedSignature);
    }
}
