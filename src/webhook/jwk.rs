//! The public key set (JWKS, RFC 7517) that signs this API's webhooks.
//!
//! Keys that cannot sign ES256 webhooks are ignored rather than rejected, so a key set may grow other keys without
//! breaking verifiers: a key is used only when `kty` is `EC`, `crv` is `P-256`, `alg` (if present) is `ES256`,
//! `use` (if present) is `sig`, `key_ops` (if present) include `verify`, it has a non-empty `kid`, and `x`/`y` are a
//! point on the curve. Two keys sharing one `kid` are both dropped: a token naming that `kid` is ambiguous, and exactly
//! one key must match. A string holding a lone surrogate (`"\ud800"`, valid JSON that a Rust `String` cannot hold)
//! reads as `null`: a key holding one in a member above is unusable, and only that key is dropped.

use crate::json::Json;
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::elliptic_curve::ff::PrimeField;
use p256::elliptic_curve::point::DecompressPoint;
use p256::elliptic_curve::subtle::{Choice, ConstantTimeEq};
use p256::{AffinePoint, NistP256};
use primeorder::PrimeCurveParams;

use super::base64url;
use super::error::{err, ErrorCode, Result};
use super::jws::{CompactJws, ALGORITHM};

/// Largest key set document accepted, in bytes.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// Most keys kept from one key set.
pub const MAX_KEYS: usize = 64;

/// Whether `(x, y)` (big-endian coordinates, each below the field's prime) is on P-256: `y^2 = x^3 - 3x + b`. Field
/// arithmetic only (no square root, no point type): this is what a key set's parse links into `docauto/webhooks`,
/// whose signatures the host checks (the point itself is made only where p256 checks a signature, below).
fn on_curve(x_bytes: &[u8; 32], y_bytes: &[u8; 32]) -> bool {
    type Fe = <NistP256 as PrimeCurveParams>::FieldElement;
    let (Some(x), Some(y)) = (
        Option::<Fe>::from(Fe::from_repr((*x_bytes).into())),
        Option::<Fe>::from(Fe::from_repr((*y_bytes).into())),
    ) else {
        return false;
    };
    let rhs = x.square() * x + NistP256::EQUATION_A * x + NistP256::EQUATION_B;
    bool::from(y.square().ct_eq(&rhs))
}

/// The curve point `(x, y)` (big-endian coordinates, each below the field's prime), `None` when it is not on
/// P-256: `y^2 = x^3 - 3x + b`.
///
/// Not through `EncodedPoint`: its tag reader `expect`s, which links the `Debug` printing of the sec1, der and
/// const-oid errors into the wasm modules. The point is made by decompressing `x` with `y`'s parity; on the curve,
/// the two roots of `x^3 - 3x + b` are `y` and `p - y`, of opposite parity (`p` is odd), so it is `(x, y)` itself.
fn point_on_curve(x_bytes: &[u8; 32], y_bytes: &[u8; 32]) -> Option<AffinePoint> {
    type Fe = <NistP256 as PrimeCurveParams>::FieldElement;
    let x = Option::<Fe>::from(Fe::from_repr((*x_bytes).into()))?;
    let y = Option::<Fe>::from(Fe::from_repr((*y_bytes).into()))?;
    let rhs = x.square() * x + NistP256::EQUATION_A * x + NistP256::EQUATION_B;
    if !bool::from(y.square().ct_eq(&rhs)) {
        return None;
    }
    let y_is_odd = Choice::from(y_bytes.last().copied().unwrap_or(0) & 1);
    Option::from(AffinePoint::decompress(&(*x_bytes).into(), y_is_odd))
}

/// One usable P-256 verification key and its id.
#[derive(Clone)]
pub struct PublicKey {
    kid: String,
    x: String,
    y: String,
    /// `x || y`, big-endian, a point on the curve.
    point: [u8; 64],
}

impl core::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PublicKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl PublicKey {
    /// Builds a key from a JWK object; `None` when the JWK is not a usable ES256 verification key.
    pub fn from_jwk(jwk: &Json) -> Option<Self> {
        let obj = jwk.as_object().map(|_| jwk)?;
        let text = |name: &str| obj.get(name).and_then(Json::as_str);
        if text("kty")? != "EC" || text("crv")? != "P-256" {
            return None;
        }
        if obj
            .get("alg")
            .is_some_and(|alg| alg.as_str() != Some(ALGORITHM))
        {
            return None;
        }
        if obj.get("use").is_some_and(|u| u.as_str() != Some("sig")) {
            return None;
        }
        if let Some(ops) = obj.get("key_ops") {
            let ops = ops.as_array()?;
            if !ops.iter().any(|op| op.as_str() == Some("verify")) {
                return None;
            }
        }
        let kid = text("kid").filter(|kid| !kid.is_empty())?;
        let (x, y) = (text("x")?, text("y")?);
        let x_bytes: [u8; 32] = base64url::decode(x)?.try_into().ok()?;
        let y_bytes: [u8; 32] = base64url::decode(y)?.try_into().ok()?;
        if !on_curve(&x_bytes, &y_bytes) {
            return None;
        }
        let mut point = [0u8; 64];
        let (px, py) = point.split_at_mut(32);
        px.copy_from_slice(&x_bytes);
        py.copy_from_slice(&y_bytes);
        Some(Self {
            kid: kid.to_owned(),
            x: x.to_owned(),
            y: y.to_owned(),
            point,
        })
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The point `x || y` (big-endian coordinates), as [`verify_prehash`] takes it.
    pub fn point(&self) -> &[u8; 64] {
        &self.point
    }

    /// The key in the p256 crate's form.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        verifying_key(&self.point)
    }

    /// The public JWK, normalized to the members this crate uses (never private members).
    pub fn to_jwk(&self) -> Json {
        let members = [
            ("kty", "EC"),
            ("crv", "P-256"),
            ("x", self.x.as_str()),
            ("y", self.y.as_str()),
            ("kid", self.kid.as_str()),
            ("alg", ALGORITHM),
            ("use", "sig"),
        ];
        Json::Object(
            members
                .into_iter()
                .map(|(name, value)| (name.to_owned(), Json::String(value.to_owned())))
                .collect(),
        )
    }

    /// Verifies the token's ES256 signature with this key, in pure Rust (p256).
    ///
    /// # Errors
    /// `invalid_signature` when the signature does not verify.
    pub fn verify(&self, jws: &CompactJws<'_>) -> Result<()> {
        let digest = super::claims::sha256(jws.signing_input());
        if verify_prehash(&self.point, &digest, &jws.signature_bytes()) {
            Ok(())
        } else {
            Err(err(
                ErrorCode::InvalidSignature,
                "signature does not verify under the named key",
            ))
        }
    }

    /// Turns a host's answer for this token's signature (node:crypto, WebCrypto: "is this `r || s` valid under this
    /// key") into the verdict. The token's shape was checked by [`crate::webhook::jws::parse_compact`] before the host
    /// was asked (64 bytes, `r` and `s` in range), so a host is never the only guard against a malformed signature.
    /// `None` (the host could not run the check, or there is no host) checks the signature here with p256.
    ///
    /// # Errors
    /// `invalid_signature` when the host answered `false`, or when it did not answer and p256 refuses the signature.
    pub fn verify_host_answer(&self, jws: &CompactJws<'_>, answer: Option<bool>) -> Result<()> {
        match answer {
            Some(true) => Ok(()),
            Some(false) => Err(err(
                ErrorCode::InvalidSignature,
                "signature does not verify under the named key",
            )),
            None => self.verify(jws),
        }
    }

    /// A host's answer for this token's signature taken as final: as [`PublicKey::verify_host_answer`], except that
    /// no answer fails instead of checking with p256 here. The JS layer of `docauto/webhooks` uses it: there p256 is
    /// a second module that it asks itself, so the verifier's own module links no curve arithmetic beyond
    /// [`KeySet`]'s point check.
    ///
    /// # Errors
    /// `invalid_signature` when the host answered `false` or did not answer.
    pub fn final_host_answer(&self, answer: Option<bool>) -> Result<()> {
        match answer {
            Some(true) => Ok(()),
            Some(false) => Err(err(
                ErrorCode::InvalidSignature,
                "signature does not verify under the named key",
            )),
            None => Err(err(
                ErrorCode::InvalidSignature,
                "no host could check the signature (the P-256 module did not load)",
            )),
        }
    }

    /// Verifies an ES256 signature given as raw `r || s` bytes over `message`.
    ///
    /// # Errors
    /// `invalid_signature` when the signature is not 64 bytes, its scalars are out of range, or it does not verify.
    pub fn verify_raw(&self, message: &[u8], signature: &[u8]) -> Result<()> {
        let signature = Signature::from_slice(signature).map_err(|_| {
            err(
                ErrorCode::InvalidSignature,
                "signature is not 64 bytes of in-range scalars",
            )
        })?;
        let digest = super::claims::sha256(message);
        if verify_prehash(&self.point, &digest, &signature.to_bytes().into()) {
            Ok(())
        } else {
            Err(err(
                ErrorCode::InvalidSignature,
                "signature does not verify under the named key",
            ))
        }
    }
}

/// The p256 key of a point `x || y`; `None` when it is not on the curve.
fn verifying_key(point: &[u8; 64]) -> Option<VerifyingKey> {
    let (x, y) = point.split_at(32);
    let (x, y): (&[u8; 32], &[u8; 32]) = (x.try_into().ok()?, y.try_into().ok()?);
    VerifyingKey::from_affine(point_on_curve(x, y)?).ok()
}

/// Whether `signature` (`r || s`) is a valid ES256 signature by the key `point` (`x || y`) of a message whose SHA-256
/// is `digest`. The whole of p256's ECDSA check: [`PublicKey::verify`] natively, and the one export of
/// `docauto-webhooks-p256.wasm`, which `docauto/webhooks` loads only when no host crypto answers.
pub fn verify_prehash(point: &[u8; 64], digest: &[u8; 32], signature: &[u8; 64]) -> bool {
    let Ok(signature) = Signature::from_slice(signature) else {
        return false;
    };
    verifying_key(point).is_some_and(|key| key.verify_prehash(digest, &signature).is_ok())
}

/// The usable keys of a key set, by `kid`.
#[derive(Clone, Debug, Default)]
pub struct KeySet {
    keys: Vec<PublicKey>,
}

impl KeySet {
    /// Parses a JWKS document (`{"keys": [...]}`), keeping only usable keys (see the module docs).
    ///
    /// # Errors
    /// `invalid_jwks` when the document is larger than [`MAX_JWKS_BYTES`], not JSON, or has no `keys` array.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(err(ErrorCode::InvalidJwks, "key set document is too large"));
        }
        // A string holding a lone surrogate escape (valid JSON to `JSON.parse` and jose) reads as null: the one key
        // holding it where it matters is unusable, the others are kept.
        let value = core::str::from_utf8(bytes)
            .ok()
            .and_then(Json::parse_lone_surrogates_as_null)
            .ok_or(err(ErrorCode::InvalidJwks, "key set is not JSON"))?;
        Self::from_value(&value)
    }

    /// Like [`KeySet::from_json`] for an already parsed document.
    ///
    /// # Errors
    /// `invalid_jwks` when the value has no `keys` array.
    pub fn from_value(value: &Json) -> Result<Self> {
        let list = value
            .get("keys")
            .and_then(Json::as_array)
            .ok_or(err(ErrorCode::InvalidJwks, "key set has no keys array"))?;
        let parsed: Vec<PublicKey> = list.iter().filter_map(PublicKey::from_jwk).collect();
        let mut keys: Vec<PublicKey> = Vec::new();
        for key in &parsed {
            let shared = parsed.iter().filter(|other| other.kid == key.kid).count();
            if shared == 1 && keys.len() < MAX_KEYS {
                keys.push(key.clone());
            }
        }
        Ok(Self { keys })
    }

    /// The key with this id, if exactly one usable key has it.
    pub fn get(&self, kid: &str) -> Option<&PublicKey> {
        self.keys.iter().find(|key| key.kid == kid)
    }

    /// Number of usable keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no usable key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The usable keys.
    pub fn iter(&self) -> impl Iterator<Item = &PublicKey> {
        self.keys.iter()
    }

    /// The held keys as a JWKS document, public members only.
    pub fn to_value(&self) -> Json {
        key_set_value(self.keys.iter().map(PublicKey::to_jwk).collect())
    }
}

/// A JWKS document `{"keys": [...]}` of these keys.
pub fn key_set_value(keys: Vec<Json>) -> Json {
    Json::Object(vec![("keys".to_owned(), Json::Array(keys))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    // RFC 7515 appendix A.3.1: the ES256 example key (public part).
    const RFC_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const RFC_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";

    fn jwk(extra: Value) -> Value {
        let mut base = json!({"kty": "EC", "crv": "P-256", "x": RFC_X, "y": RFC_Y, "kid": "k1"});
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                if v.is_null() {
                    b.remove(k);
                } else {
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        base
    }

    fn usable(extra: Value) -> bool {
        PublicKey::from_jwk(&Json::from(&jwk(extra))).is_some()
    }

    #[test]
    fn accepts_a_p256_key_with_or_without_alg_and_use() {
        assert!(usable(json!({})));
        assert!(usable(
            json!({"alg": "ES256", "use": "sig", "key_ops": ["verify"]})
        ));
    }

    #[test]
    fn ignores_keys_of_wrong_kty_crv_alg_use_or_ops() {
        assert!(!usable(json!({"kty": "RSA"})));
        assert!(!usable(json!({"kty": "oct"})));
        assert!(!usable(json!({"crv": "P-384"})));
        assert!(!usable(json!({"alg": "ES384"})));
        assert!(!usable(json!({"alg": "HS256"})));
        assert!(!usable(json!({"use": "enc"})));
        assert!(!usable(json!({"key_ops": ["encrypt"]})));
        assert!(!usable(json!({"kid": null})));
        assert!(!usable(json!({"kid": ""})));
    }

    #[test]
    fn ignores_points_off_the_curve_and_bad_coordinates() {
        assert!(!usable(json!({"y": RFC_X})));
        assert!(!usable(json!({"x": "AAAA"})));
        assert!(!usable(json!({"x": "not base64!"})));
    }

    /// sec1's `EncodedPoint` path (what `VerifyingKey::from_encoded_point` does) as the oracle: the same verdict
    /// and the same key for points on the curve, their negation (the other root), and off-curve or out-of-range
    /// coordinates.
    #[test]
    fn points_are_checked_as_sec1_checks_them() {
        use p256::ecdsa::SigningKey;
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        use p256::EncodedPoint;
        let oracle = |x: &[u8; 32], y: &[u8; 32]| {
            let point = EncodedPoint::from_affine_coordinates(&(*x).into(), &(*y).into(), false);
            VerifyingKey::from_encoded_point(&point).ok()
        };
        let ours = |x: &[u8; 32], y: &[u8; 32]| {
            point_on_curve(x, y).and_then(|p| VerifyingKey::from_affine(p).ok())
        };
        let mut cases = Vec::new();
        for seed in 1u8..=40 {
            let key = SigningKey::from_slice(&[seed; 32]).unwrap();
            let point = key.verifying_key().to_encoded_point(false);
            let x: [u8; 32] = point.x().unwrap()[..].try_into().unwrap();
            let y: [u8; 32] = point.y().unwrap()[..].try_into().unwrap();
            let neg = (-key.verifying_key().as_affine().to_owned()).to_encoded_point(false);
            let neg_y: [u8; 32] = neg.y().unwrap()[..].try_into().unwrap();
            let mut off = y;
            off[31] ^= 1;
            cases.extend([(x, y), (x, neg_y), (x, off), (y, x)]);
        }
        cases.push(([0xff; 32], [0xff; 32]));
        cases.push(([0; 32], [0; 32]));
        let mut valid = 0;
        for (x, y) in &cases {
            let (a, b) = (ours(x, y), oracle(x, y));
            assert_eq!(a, b, "{x:?} {y:?}");
            assert_eq!(on_curve(x, y), b.is_some(), "{x:?} {y:?}");
            valid += usize::from(a.is_some());
        }
        assert_eq!(valid, 80, "each key and its negation");
    }

    #[test]
    fn duplicate_kids_are_both_dropped() {
        let set = KeySet::from_value(&Json::from(
            &json!({"keys": [jwk(json!({})), jwk(json!({}))]}),
        ))
        .unwrap();
        assert!(set.is_empty());
        assert!(set.get("k1").is_none());
    }

    #[test]
    fn a_lone_surrogate_drops_only_the_key_that_holds_it() {
        // One key with "\ud800" (valid JSON: JSON.parse and jose read it) must not refuse the whole set.
        let other = |kid: &str| jwk(json!({"kid": kid})).to_string();
        for (member, usable) in [
            (r#""kid":"\ud800""#, false),
            (r#""kid":"k\udfffx""#, false),
            (r#""alg":"\ud800""#, false),
            (r#""use":"\udbff\u0041""#, false),
            (r#""x":"\ud800""#, false),
            // In a member the verifier ignores, it leaves the key as usable as the documented rule says.
            (r#""note":"\ud800""#, true),
            (r#""\ud800":1"#, true),
            (r#""key_ops":["verify","\ud800"]"#, true),
        ] {
            // Last, so the member wins over the base key's own one of the same name.
            let base = other("k2");
            let odd = format!("{},{member}}}", base.trim_end_matches('}'));
            let doc = format!(r#"{{"keys":[{},{odd},{}]}}"#, other("k1"), other("k3"));
            let set = KeySet::from_json(doc.as_bytes()).unwrap_or_else(|e| panic!("{member}: {e}"));
            assert!(
                set.get("k1").is_some() && set.get("k3").is_some(),
                "{member}"
            );
            assert_eq!(set.get("k2").is_some(), usable, "{member}");
        }
        // Outside the keys too: the set is read.
        let doc = format!(r#"{{"note":"\udc00","keys":[{}]}}"#, other("k1"));
        assert_eq!(KeySet::from_json(doc.as_bytes()).unwrap().len(), 1);
    }

    #[test]
    fn document_errors_are_invalid_jwks() {
        for doc in [&b"nope"[..], b"{}", br#"{"keys": 3}"#, b"[]"] {
            assert_eq!(
                KeySet::from_json(doc).unwrap_err().code(),
                ErrorCode::InvalidJwks
            );
        }
        let big = vec![b' '; MAX_JWKS_BYTES + 1];
        assert_eq!(
            KeySet::from_json(&big).unwrap_err().code(),
            ErrorCode::InvalidJwks
        );
    }

    #[test]
    fn export_holds_public_members_only() {
        let set = KeySet::from_value(&Json::from(
            &json!({"keys": [jwk(json!({"d": "secret-ish"}))]}),
        ))
        .unwrap();
        let out = set.to_value();
        let first = &out.get("keys").and_then(Json::as_array).unwrap()[0];
        assert_eq!(first.get("kid").and_then(Json::as_str), Some("k1"));
        assert!(first.get("d").is_none());
        let again = KeySet::from_value(&out).unwrap();
        assert_eq!(again.len(), 1);
    }
}
