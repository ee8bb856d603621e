//! Verification of the API's signed webhooks: an ES256 compact JWS in `x-svc-signature` over the raw body.
//!
//! The core is sans-IO: [`jws::parse_compact`] checks the token's structure and header rules, a key comes from a
//! [`jwk::KeySet`] (with [`key_cache::KeyCache`] deciding when a remote set is fetched), the signature is checked
//! (here with p256, or by WebCrypto in the JS layer), then [`claims::check`] checks the claims against the clock and
//! the raw body. [`Verifier`] puts the steps together for static keys.
//!
//! ```
//! use docauto::webhook::{jwk::KeySet, Verifier};
//! let keys = KeySet::from_json(br#"{"keys":[]}"#)?;
//! let verifier = Verifier::new(keys);
//! let err = verifier.verify(b"{}", "not-a-token", 1_800_000_000.0).unwrap_err();
//! assert_eq!(err.code().as_str(), "malformed_signature");
//! # Ok::<(), docauto::webhook::WebhookError>(())
//! ```

pub mod base64url;
pub mod body_limit;
pub mod claims;
pub mod dedupe;
mod error;
pub mod handle;
pub mod jwk;
pub mod jws;
pub mod key_cache;
pub mod key_fetch;
pub mod options;
pub mod signing;

pub use claims::{EventIds, TimeWindow};
pub use error::{ErrorCode, Result, WebhookError, JWKS_UNAVAILABLE, UNKNOWN_KEY};

use jwk::KeySet;

/// Path of the key set under the API's base address.
pub const JWKS_PATH: &str = "/v1/webhooks/jwks.json";

/// Name of the request header that carries the token.
pub const SIGNATURE_HEADER: &str = "x-svc-signature";

/// Verifies webhooks against a fixed key set, synchronously, in pure Rust.
#[derive(Clone, Debug)]
pub struct Verifier {
    keys: KeySet,
    tolerance: f64,
}

impl Verifier {
    /// A verifier over `keys` with the default clock tolerance.
    pub fn new(keys: KeySet) -> Self {
        Self {
            keys,
            tolerance: claims::DEFAULT_CLOCK_TOLERANCE,
        }
    }

    /// Sets the clock tolerance in seconds (applied to `exp`, `iat` and `nbf`).
    pub fn with_clock_tolerance(mut self, seconds: f64) -> Self {
        self.tolerance = seconds.max(0.0);
        self
    }

    /// Verifies one delivery: `body` is the raw received bytes, `header` the `x-svc-signature` value, `now` the
    /// current time in seconds since the epoch.
    ///
    /// # Errors
    /// Any [`ErrorCode`] of parsing, key lookup (`unknown_key`), signature, claims, body or envelope checks.
    pub fn verify(&self, body: &[u8], header: &str, now: f64) -> Result<EventIds> {
        verify_with_keys(
            &self.keys,
            body,
            header,
            TimeWindow {
                now,
                tolerance: self.tolerance,
            },
        )
    }
}

/// All checks of one delivery against `keys`, in order: structure, key, signature, claims.
///
/// # Errors
/// As [`Verifier::verify`].
pub fn verify_with_keys(
    keys: &KeySet,
    body: &[u8],
    header: &str,
    window: TimeWindow,
) -> Result<EventIds> {
    verify_with_host(keys, body, header, window, |_, _| None)
}

/// As [`verify_with_keys`], with the signature checked by a host: `host(key, token)` answers whether the token's
/// `r || s` is valid under `key` over its signing input (`None`: it cannot tell, and p256 checks here). The host is
/// asked only after the token's shape was checked; its answer goes through [`jwk::PublicKey::verify_host_answer`].
///
/// # Errors
/// As [`Verifier::verify`].
pub fn verify_with_host(
    keys: &KeySet,
    body: &[u8],
    header: &str,
    window: TimeWindow,
    host: impl FnOnce(&jwk::PublicKey, &jws::CompactJws<'_>) -> Option<bool>,
) -> Result<EventIds> {
    let token = jws::parse_compact(header)?;
    let key = keys.get(token.kid()).ok_or(error::UNKNOWN_KEY)?;
    let answer = host(key, &token);
    check_token(key, &token, answer, body, window)
}

/// The checks after the key lookup: the host's `answer` about the signature (`None`: p256 checks here), then the
/// claims against the clock and the raw body.
///
/// # Errors
/// `invalid_signature`, then any error of [`claims::check`].
pub fn check_token(
    key: &jwk::PublicKey,
    token: &jws::CompactJws<'_>,
    answer: Option<bool>,
    body: &[u8],
    window: TimeWindow,
) -> Result<EventIds> {
    key.verify_host_answer(token, answer)?;
    claims::check(token.payload(), body, window)
}

/// As [`check_token`] for a body the host kept: `digest` computes its SHA-256 (by the host where it hashes),
/// `envelope` reads its envelope fields; each is asked only once the checks before it passed (see
/// [`claims::check_with_digest`]).
///
/// # Errors
/// As [`check_token`].
pub fn check_token_hosted(
    key: &jwk::PublicKey,
    token: &jws::CompactJws<'_>,
    answer: Option<bool>,
    digest: impl FnOnce() -> [u8; 32],
    envelope: impl FnOnce() -> Result<claims::EnvelopeIds>,
    window: TimeWindow,
) -> Result<EventIds> {
    key.verify_host_answer(token, answer)?;
    claims::check_with_digest(token.payload(), digest, envelope, window)
}

/// As [`check_token_hosted`], with the claims read and checked against the clock earlier
/// ([`claims::precheck`], while the host checked the signature): the signature's verdict still comes first, then
/// the claims' error if they failed, then the body. The host's `answer` is final
/// ([`jwk::PublicKey::final_host_answer`]: no answer is `invalid_signature`, p256 is not asked here): the JS layer
/// asks p256 itself, in a module of its own.
///
/// # Errors
/// As [`check_token`].
pub fn check_token_prechecked(
    key: &jwk::PublicKey,
    answer: Option<bool>,
    prechecked: Result<claims::Prechecked>,
    digest: impl FnOnce() -> [u8; 32],
    envelope: impl FnOnce() -> Result<claims::EnvelopeIds>,
) -> Result<EventIds> {
    key.final_host_answer(answer)?;
    prechecked?.finish(digest, envelope)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
