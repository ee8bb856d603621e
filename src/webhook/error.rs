//! The one error type of webhook verification.
//!
//! Every failure carries a stable [`ErrorCode`] and a fixed human message. Messages are static text chosen by this
//! crate: they never contain the body, the token, or key material, so an error can be logged as it is.

use core::fmt;

/// Stable codes for every way a webhook verification can fail. Branch on these, never on the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The body or the header was not of an accepted type (JS layer).
    InvalidInput,
    /// The request carried no `x-svc-signature` header.
    MissingSignature,
    /// The signature header is not a well-formed compact JWS of this API.
    MalformedSignature,
    /// The JOSE header names an algorithm other than ES256.
    UnsupportedAlgorithm,
    /// The JOSE header carries a `crit` parameter; this verifier understands no extensions (RFC 7515 4.1.11).
    UnsupportedCrit,
    /// No key of the key set has the token's `kid`, even after a refresh.
    UnknownKey,
    /// The ECDSA signature does not verify under the named key.
    InvalidSignature,
    /// A required claim is absent or has the wrong type.
    MissingClaim,
    /// The `iss` claim is not `svc-process`.
    WrongIssuer,
    /// `exp` has passed (beyond the clock tolerance).
    Expired,
    /// `iat` or `nbf` lies in the future (beyond the clock tolerance).
    NotYetValid,
    /// The SHA-256 of the received bytes differs from the `bodySha256` claim.
    BodyMismatch,
    /// The (authentic) body is not a JSON event envelope.
    MalformedBody,
    /// The token's `eventId`, `type` or `processingId` differ from the envelope's.
    ClaimsMismatch,
    /// The key set could not be fetched (network, timeout, non-2xx status, not JSON).
    JwksUnavailable,
    /// A key set given as data is malformed or holds no usable key.
    InvalidJwks,
    /// The verifier's options are invalid.
    InvalidOptions,
    /// `verifySync` was called before any key set was held.
    KeysNotLoaded,
    /// The body is larger than `maxBodyBytes` (refused before it is read in full or hashed).
    BodyTooLarge,
    /// A request body was not read in full within `bodyTimeoutMs` (the stream is cancelled).
    BodyTimeout,
    /// The dedupe store did not answer within a third of `claimTtlSeconds`.
    DedupeUnavailable,
}

impl ErrorCode {
    /// The stable snake_case string of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid_input",
            Self::MissingSignature => "missing_signature",
            Self::MalformedSignature => "malformed_signature",
            Self::UnsupportedAlgorithm => "unsupported_algorithm",
            Self::UnsupportedCrit => "unsupported_crit",
            Self::UnknownKey => "unknown_key",
            Self::InvalidSignature => "invalid_signature",
            Self::MissingClaim => "missing_claim",
            Self::WrongIssuer => "wrong_issuer",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::BodyMismatch => "body_mismatch",
            Self::MalformedBody => "malformed_body",
            Self::ClaimsMismatch => "claims_mismatch",
            Self::JwksUnavailable => "jwks_unavailable",
            Self::InvalidJwks => "invalid_jwks",
            Self::InvalidOptions => "invalid_options",
            Self::KeysNotLoaded => "keys_not_loaded",
            Self::BodyTooLarge => "body_too_large",
            Self::BodyTimeout => "body_timeout",
            Self::DedupeUnavailable => "dedupe_unavailable",
        }
    }
}

impl ErrorCode {
    /// The HTTP status a receiver answers the sender with when a delivery fails this way (`handle` answers it, and
    /// the JS error carries it as `status`). Every non-2xx answer makes the service deliver again later, so the
    /// status says whose the fault is: 400 for a request that is not an authentic, well-formed delivery; 413 for a
    /// body over `maxBodyBytes`; 408 for a body that stalled; 503 when the key set or the dedupe store could not be
    /// reached (the delivery may be good: its redelivery will be checked again); 500 for the receiver's own
    /// mistakes (options, a static key set, `verifySync` before keys, an argument of the wrong type).
    pub fn http_status(self) -> u16 {
        match self {
            Self::BodyTooLarge => 413,
            Self::BodyTimeout => 408,
            Self::JwksUnavailable | Self::DedupeUnavailable => 503,
            Self::InvalidInput | Self::InvalidJwks | Self::InvalidOptions | Self::KeysNotLoaded => {
                500
            }
            Self::MissingSignature
            | Self::MalformedSignature
            | Self::UnsupportedAlgorithm
            | Self::UnsupportedCrit
            | Self::UnknownKey
            | Self::InvalidSignature
            | Self::MissingClaim
            | Self::WrongIssuer
            | Self::Expired
            | Self::NotYetValid
            | Self::BodyMismatch
            | Self::MalformedBody
            | Self::ClaimsMismatch => 400,
        }
    }

    /// Every code, in declaration order.
    pub fn all() -> impl Iterator<Item = ErrorCode> {
        core::iter::successors(Some(ErrorCode::InvalidInput), |c| c.next())
    }

    /// The code declared after this one: the `match` makes a new variant a compile error here, so [`ErrorCode::all`]
    /// (and the TypeScript union written from it) cannot miss one.
    fn next(self) -> Option<Self> {
        use ErrorCode::*;
        match self {
            InvalidInput => Some(MissingSignature),
            MissingSignature => Some(MalformedSignature),
            MalformedSignature => Some(UnsupportedAlgorithm),
            UnsupportedAlgorithm => Some(UnsupportedCrit),
            UnsupportedCrit => Some(UnknownKey),
            UnknownKey => Some(InvalidSignature),
            InvalidSignature => Some(MissingClaim),
            MissingClaim => Some(WrongIssuer),
            WrongIssuer => Some(Expired),
            Expired => Some(NotYetValid),
            NotYetValid => Some(BodyMismatch),
            BodyMismatch => Some(MalformedBody),
            MalformedBody => Some(ClaimsMismatch),
            ClaimsMismatch => Some(JwksUnavailable),
            JwksUnavailable => Some(InvalidJwks),
            InvalidJwks => Some(InvalidOptions),
            InvalidOptions => Some(KeysNotLoaded),
            KeysNotLoaded => Some(BodyTooLarge),
            BodyTooLarge => Some(BodyTimeout),
            BodyTimeout => Some(DedupeUnavailable),
            DedupeUnavailable => None,
        }
    }

    /// The code of a stable string ([`ErrorCode::as_str`]); `None` for any other text.
    pub fn from_code(text: &str) -> Option<Self> {
        Self::all().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A webhook verification failure: a stable code and a static message that leaks nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebhookError {
    code: ErrorCode,
    detail: &'static str,
}

impl WebhookError {
    /// An error of `code` with a static explanation.
    pub const fn new(code: ErrorCode, detail: &'static str) -> Self {
        Self { code, detail }
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human explanation (static text, safe to log).
    pub fn detail(&self) -> &'static str {
        self.detail
    }
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.detail, self.code)
    }
}

impl std::error::Error for WebhookError {}

/// Shorthand for a `Result` of this module.
pub type Result<T> = core::result::Result<T, WebhookError>;

pub(crate) const fn err(code: ErrorCode, detail: &'static str) -> WebhookError {
    WebhookError::new(code, detail)
}

/// No key of the key set has the token's `kid` (the one text of this error, for the core and the JS layer).
pub const UNKNOWN_KEY: WebhookError = err(
    ErrorCode::UnknownKey,
    "no key of the key set has the token's kid",
);

/// The key set could not be fetched, and no usable one is held.
pub const JWKS_UNAVAILABLE: WebhookError = err(
    ErrorCode::JwksUnavailable,
    "the key set could not be fetched",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_string_and_nothing_else_does() {
        let all: Vec<ErrorCode> = ErrorCode::all().collect();
        assert_eq!(all.len(), 21);
        for code in &all {
            assert_eq!(ErrorCode::from_code(code.as_str()), Some(*code));
        }
        for other in [
            "",
            "Invalid_input",
            "in_progress",
            "handler_failed",
            "invalid_input ",
        ] {
            assert_eq!(ErrorCode::from_code(other), None, "{other:?}");
        }
    }
}
