//! The body-size rule: a delivery larger than `maxBodyBytes` is refused before it is read in full or hashed.
//!
//! The host glue asks [`check_declared`] with the `Content-Length` (or the length of a buffer it was handed) before it
//! reads or copies a byte, and [`check_read`] with the running count while it streams a body; the first refusal ends
//! the read (the glue cancels the stream). The token's shape is checked before either (see `jws::parse_compact`).

use super::error::{err, ErrorCode, Result, WebhookError};
use crate::options::{whole_number, MAX_SAFE_INTEGER};

/// Default cap on a delivery body: 1 MiB (the service's event envelopes are a few KiB).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 1024 * 1024;

/// Cap on a key-set (JWKS) response: the largest document [`super::jwk::KeySet::from_json`] accepts (256 KiB).
pub const MAX_JWKS_BYTES: u64 = super::jwk::MAX_JWKS_BYTES as u64;

const TOO_LARGE: WebhookError = err(
    ErrorCode::BodyTooLarge,
    "the body is larger than maxBodyBytes (refused without reading it)",
);

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
