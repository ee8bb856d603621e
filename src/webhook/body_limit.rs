//! The body rules: a delivery larger than `maxBodyBytes` is refused before it is read in full or hashed, a streamed
//! body not read within `bodyTimeoutMs` is refused, and a body that cannot be read is `invalid_input`.
//!
//! The host glue asks [`plan`] with what it was handed (a string's length, a buffer's real byte length) before it
//! copies a byte, [`check_declared`] with the `Content-Length` of a `Request` before it reads one, and [`check_read`]
//! with the running count while it streams a body; the first refusal ends the read, and so does the deadline
//! ([`BODY_TIMEOUT`]): the glue then cancels the stream. The token's shape is checked before either (see
//! `jws::parse_compact`).

use super::error::{err, ErrorCode, Result, WebhookError};
use crate::options::{whole_number, MAX_SAFE_INTEGER};

/// Default cap on a delivery body: 1 MiB (the service's event envelopes are a few KiB).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 1024 * 1024;

/// Cap on a key-set (JWKS) response: the largest document [`super::jwk::KeySet::from_json`] accepts (256 KiB).
pub const MAX_JWKS_BYTES: u64 = super::jwk::MAX_JWKS_BYTES as u64;

/// Default deadline for reading a streamed body (`verifyRequest`), in ms: the service sends a few KiB at once, so a
/// body still arriving after this is stalled, and the call ends instead of holding the caller's time and memory.
pub const DEFAULT_BODY_TIMEOUT_MS: f64 = 5000.0;

/// The refusal of a body larger than `maxBodyBytes`.
pub const TOO_LARGE: WebhookError = err(
    ErrorCode::BodyTooLarge,
    "the body is larger than maxBodyBytes (refused without reading it)",
);

/// The refusal of a streamed body not read in full within `bodyTimeoutMs` (the stream is cancelled).
pub const BODY_TIMEOUT: WebhookError = err(
    ErrorCode::BodyTimeout,
    "the request body was not read within bodyTimeoutMs (the stream is cancelled)",
);

/// The refusal of a body handed over as something else than a string, an ArrayBuffer or a view, or one whose
/// memory is gone (a detached buffer).
pub const NOT_A_BODY: WebhookError = err(
    ErrorCode::InvalidInput,
    "body must be a string, a Uint8Array or an ArrayBuffer (the raw bytes received), not detached",
);

/// The refusal of a request body that could not be read: already consumed, or a stream or reader that threw,
/// answered something other than a promise of `{ done, value }`, or gave a chunk that is not bytes.
pub const UNREADABLE: WebhookError = err(
    ErrorCode::InvalidInput,
    "the request body could not be read (already consumed, or not a stream of bytes)",
);

/// A body as the host holds it, measured without copying it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// A string of this many UTF-16 units (at least as many UTF-8 bytes, at most three times as many).
    Text {
        /// Its length in UTF-16 units.
        units: u64,
    },
    /// Bytes (an ArrayBuffer or a view) of this exact length, read from the buffer itself.
    Bytes {
        /// Its length in bytes.
        len: u64,
    },
}

/// Where a body handed as data is hashed and parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Left with the host, which hashes it (`node:crypto`): it never grows wasm memory.
    Keep,
    /// Copied into wasm memory (and measured again there: see [`check_len`]).
    Copy,
}

/// Most bytes a body copied into wasm memory may have: a 32-bit memory holds no more (a `maxBodyBytes` above it
/// applies where the host hashes, and the body stays there).
pub const MAX_COPIED_BYTES: u64 = u32::MAX as u64;

/// Decides what happens to a body handed as data: refused when it is surely above `max`, kept with a host that
/// hashes (`host_hashes`) when its byte length is surely within `max`, copied otherwise.
///
/// # Errors
/// `body_too_large` when it is longer than `max` (a string of more UTF-16 units than `max` has more bytes too), or
/// when it must be copied and is longer than [`MAX_COPIED_BYTES`].
pub fn plan(held: Held, max: u64, host_hashes: bool) -> Result<Plan> {
    let (at_least, at_most) = match held {
        Held::Text { units } => (units, units.saturating_mul(3)),
        Held::Bytes { len } => (len, len),
    };
    check_len(at_least, max)?;
    if host_hashes && at_most <= max {
        return Ok(Plan::Keep);
    }
    check_len(at_least, MAX_COPIED_BYTES)?;
    Ok(Plan::Copy)
}

/// Validates the `bodyTimeoutMs` option: a positive number of milliseconds (default [`DEFAULT_BODY_TIMEOUT_MS`]).
///
/// # Errors
/// `invalid_options` for zero, a negative number, NaN or infinity.
pub fn parse_timeout_option(value: Option<f64>) -> Result<f64> {
    match value {
        None => Ok(DEFAULT_BODY_TIMEOUT_MS),
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(ms),
        Some(_) => Err(err(
            ErrorCode::InvalidOptions,
            "bodyTimeoutMs must be a positive number of milliseconds",
        )),
    }
}

/// Validates the `maxBodyBytes` option: a whole number from 1 to `Number.MAX_SAFE_INTEGER`.
pub fn parse_option(value: Option<f64>) -> Result<u64> {
    match value {
        None => Ok(DEFAULT_MAX_BODY_BYTES),
        Some(n) => whole_number(n, 1.0, MAX_SAFE_INTEGER).ok_or(err(
            ErrorCode::InvalidOptions,
            "maxBodyBytes must be a whole number of bytes, at least 1",
        )),
    }
}

/// A length known before reading (`Content-Length`, a buffer's `byteLength`): refused when above `max`.
/// `None` (no usable `Content-Length`) passes; the streamed read is then capped by [`check_read`].
pub fn check_declared(declared: Option<&str>, max: u64) -> Result<()> {
    match declared.map(str::trim).map(str::parse::<u64>) {
        Some(Ok(n)) if n > max => Err(TOO_LARGE),
        Some(Err(_))
            if declared.is_some_and(|d| {
                !d.trim().is_empty() && d.trim().bytes().all(|b| b.is_ascii_digit())
            }) =>
        {
            // All digits but does not fit in u64: larger than any cap.
            Err(TOO_LARGE)
        }
        _ => Ok(()),
    }
}

/// A length of bytes in hand: refused when above `max`.
pub fn check_len(len: u64, max: u64) -> Result<()> {
    if len > max {
        Err(TOO_LARGE)
    } else {
        Ok(())
    }
}

/// The running count of a streamed read: refused as soon as it passes `max` (the glue then cancels the stream).
pub fn check_read(read_so_far: u64, max: u64) -> Result<()> {
    check_len(read_so_far, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_defaults_to_one_mebibyte_and_rejects_bad_values() {
        assert_eq!(parse_option(None), Ok(1_048_576));
        assert_eq!(parse_option(Some(10.0)), Ok(10));
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 1e300] {
            assert_eq!(
                parse_option(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{bad}"
            );
        }
    }

    #[test]
    fn a_held_body_is_refused_kept_or_copied_by_its_length() {
        use Held::{Bytes, Text};
        assert_eq!(plan(Bytes { len: 10 }, 10, true), Ok(Plan::Keep));
        assert_eq!(plan(Bytes { len: 10 }, 10, false), Ok(Plan::Copy));
        assert_eq!(plan(Bytes { len: 11 }, 10, true), Err(TOO_LARGE));
        // A string of n units is n to 3n bytes: kept only when 3n fits, copied and measured when it may not.
        assert_eq!(plan(Text { units: 3 }, 9, true), Ok(Plan::Keep));
        assert_eq!(plan(Text { units: 4 }, 9, true), Ok(Plan::Copy));
        assert_eq!(plan(Text { units: 10 }, 9, true), Err(TOO_LARGE));
        assert_eq!(
            plan(Text { units: u64::MAX }, u64::MAX - 1, true),
            Err(TOO_LARGE)
        );
        assert_eq!(plan(Text { units: 3 }, 9, false), Ok(Plan::Copy));
        // Past what wasm memory holds, a body that must be copied is refused; one the host hashes is kept.
        let huge = Bytes {
            len: MAX_COPIED_BYTES + 1,
        };
        assert_eq!(plan(huge, u64::MAX, false), Err(TOO_LARGE));
        assert_eq!(plan(huge, u64::MAX, true), Ok(Plan::Keep));
    }

    #[test]
    fn the_read_deadline_defaults_to_a_few_seconds_and_must_be_positive() {
        assert_eq!(parse_timeout_option(None), Ok(5000.0));
        assert_eq!(parse_timeout_option(Some(250.0)), Ok(250.0));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                parse_timeout_option(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{bad}"
            );
        }
        assert_eq!(BODY_TIMEOUT.code().as_str(), "body_timeout");
    }

    #[test]
    fn declared_length_above_cap_is_refused() {
        assert_eq!(
            check_declared(Some("11"), 10).unwrap_err().code(),
            ErrorCode::BodyTooLarge
        );
        assert_eq!(
            check_declared(Some("99999999999999999999999"), 10)
                .unwrap_err()
                .code(),
            ErrorCode::BodyTooLarge
        );
        assert!(check_declared(Some("10"), 10).is_ok());
        assert!(check_declared(Some(" 3 "), 10).is_ok());
        assert!(check_declared(None, 10).is_ok());
        // A malformed Content-Length proves nothing: the streamed read is capped instead.
        assert!(check_declared(Some("ten"), 10).is_ok());
    }

    #[test]
    fn streamed_count_is_refused_once_past_the_cap() {
        assert!(check_read(10, 10).is_ok());
        assert_eq!(
            check_read(11, 10).unwrap_err().code(),
            ErrorCode::BodyTooLarge
        );
        assert_eq!(
            check_len(1 << 30, DEFAULT_MAX_BODY_BYTES)
                .unwrap_err()
                .code(),
            ErrorCode::BodyTooLarge
        );
    }
}
