//! Retry policy: which outcomes are retried, how long to wait, and how `Retry-After` is read.
//!
//! Retried: connection failures, timeouts, 408, 429, 503 (`auth_unavailable` included) and any
//! answer whose envelope says `retryable: true` (for example 409 `output_not_ready` or 500
//! `internal_error`). Never retried: an envelope with `retryable: false`, any 402, other 4xx.
//! Decision where the spec is silent: a 500/502/504 without an envelope (a proxy's HTML page) is
//! not retried, because only 503 is named as transient and a POST may have been committed; the
//! idempotency key would make a retry safe, but the rule stays the one the service documents.

/// First backoff delay.
pub const INITIAL_BACKOFF_MS: u64 = 500;
/// Largest backoff delay.
pub const MAX_BACKOFF_MS: u64 = 8_000;

/// When a route may be sent again, from the spec: the service dedupes `idempotency-key` only for run creations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryClass {
    /// GET, PUT, PATCH, DELETE: reading or setting state; resent after any transient failure, a lost answer and a
    /// timeout included (the spec calls DELETE idempotent; PATCH sets fields).
    Idempotent,
    /// A run creation (agent runs, extract, parse, redact, fill, sign, pipeline): the service returns the original run
    /// for a repeated `idempotency-key`, so it is resent with the same key after a lost answer or a timeout.
    KeyedCreate,
    /// A decision the service takes once (approve / reject an approval, complete a human step): "a first decision is
    /// final; a second decision on the same approval is a 409" (spec), so a resend cannot apply twice. Resent after a
    /// lost answer or a timeout; a 409 on such a resend rejects with `outcome_unknown` (the decision is made, maybe by
    /// this call, maybe by someone else: the service does not say), never a plain conflict about the caller's own write.
    DecideOnce,
    /// Every other POST (extract batch, which ignores the key, webhooks, files, configs, actions, realtime
    /// sessions, cancel, keep ...): resent only when nothing can have happened (the connection failed
    /// before the request was sent, 429, 503 `auth_unavailable`, an envelope with `retryable: true`). After a lost
    /// answer or a timeout the call fails with `outcome_unknown` set.
    NotReplaySafe,
}

impl RetryClass {
    /// Whether a request that may have reached the service (lost answer, timeout) may be sent again.
    pub fn resend_after_unknown_outcome(self) -> bool {
        self != Self::NotReplaySafe
    }
}

/// Case-insensitive lookup of a header value (the policy reads `Retry-After` with it; errors, calls and requests
/// read their headers through it too).
#[inline(never)]
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Whether an HTTP error answer may be retried.
pub fn is_retryable(status: u16, code: &str, envelope_retryable: Option<bool>) -> bool {
    if status == 402 || code == "credits_exhausted" {
        return false;
    }
    match envelope_retryable {
        Some(flag) => flag,
        None => matches!(status, 408 | 429 | 503) || code == "auth_unavailable",
    }
}

/// [`is_retryable`] for a route of retry class `class`. A write that is not replay-safe
/// ([`RetryClass::NotReplaySafe`]) is retried only on an answer that says nothing was done: its envelope's
/// `retryable` when it has one, otherwise 429 and `auth_unavailable` (the key was not checked, so nothing ran).
/// A bare 503 or 408 (a proxy's page) may come after the service applied the write, so it is not retried there.
pub fn is_retryable_for(
    class: RetryClass,
    status: u16,
    code: &str,
    envelope_retryable: Option<bool>,
) -> bool {
    match class {
        RetryClass::Idempotent | RetryClass::KeyedCreate | RetryClass::DecideOnce => {
            is_retryable(status, code, envelope_retryable)
        }
        RetryClass::NotReplaySafe => {
            if status == 402 || code == "credits_exhausted" {
                return false;
            }
            match envelope_retryable {
                Some(flag) => flag,
                None => status == 429 || code == "auth_unavailable",
            }
        }
    }
}

/// Whether a runtime's failure of `fetch` proves the request was never sent: the connection was refused or could
/// not be made (DNS, TCP connect, TLS), or `fetch` threw before starting. `code` is the runtime's error code (undici's
/// `cause.code` in Node, `error.code` in Bun), `message` its text (Deno names the connect phase there). Anything else
/// (a reset, a socket closed by the other side, a browser's bare "Failed to fetch") may have come after the request
/// went out: unknown.
pub fn failed_before_sending(code: &str, message: &str) -> bool {
    const CODES: [&str; 14] = [
        // Node (undici `cause.code`, system errors of `connect`)
        "ECONNREFUSED",
        "ENOTFOUND",
        "EAI_AGAIN",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "EADDRNOTAVAIL",
        "UND_ERR_CONNECT_TIMEOUT",
        "UND_ERR_INVALID_ARG",
        "ERR_INVALID_URL",
        "ERR_TLS_CERT_ALTNAME_INVALID",
        // Bun (`error.code`)
        "ConnectionRefused",
        "FailedToOpenSocket",
        "CERT_HAS_EXPIRED",
        // The host's marker for `fetch` throwing synchronously (bad URL, bad header): nothing left.
        "DOCAUTO_NOT_SENT",
    ];
    if CODES.contains(&code) {
        return true;
    }
    // Deno: "error sending request for url (...): client error (Connect): tcp connect error: Connection refused";
    // "dns error" for a name that does not resolve. A port the Fetch standard blocks (9, 6000, ...) is refused
    // before any connection: Node says "fetch failed (bad port)" (undici's cause, no code), Deno "Fetch failed:
    // Requests to port 9 are blocked"; browsers say only "Failed to fetch", which stays unknown.
    let lower = message.to_ascii_lowercase();
    [
        "client error (connect)",
        "tcp connect error",
        "dns error",
        "(bad port)",
        "requests to port",
    ]
    .iter()
    .any(|words| crate::text::contains(&lower, words))
}

/// Exponential backoff for the retry with index `retries_done` (0 for the first retry):
/// `min(0.5 s * 2^n, 8 s)`, scaled by `1 - 0.25 * jitter`, so it lies in `[0.75, 1] x base`.
/// `jitter` is a number in `[0, 1)` drawn by the caller; values outside are clamped, NaN is 0.
pub fn backoff_ms(retries_done: u32, jitter: f64) -> u64 {
    let exponent = retries_done.min(16);
    let base = INITIAL_BACKOFF_MS
        .saturating_mul(1u64 << exponent)
        .min(MAX_BACKOFF_MS);
    let jitter = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // base <= 8000, so the conversion is exact and the product is bounded.
    let scaled = (base as f64) * (1.0 - 0.25 * jitter);
    scaled.round().clamp(0.0, MAX_BACKOFF_MS as f64) as u64
}

/// The delay the server asked for, in milliseconds: `retry-after-ms` (a number of milliseconds)
/// first, then `retry-after` as seconds (decimals allowed) or as an HTTP date. A date needs
/// `now_ms` (epoch milliseconds); without it, or when unparseable, the header is ignored.
/// A date in the past gives 0. See [`retry_after`] for what an unreadable value means.
pub fn parse_retry_after(headers: &[(String, String)], now_ms: Option<u64>) -> Option<u64> {
    match retry_after(headers, now_ms) {
        RetryAfter::Delay(ms) => Some(ms),
        RetryAfter::Absent | RetryAfter::Unreadable => None,
    }
}

/// What an answer's `Retry-After` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// No `retry-after-ms` or `Retry-After` header (or a date and no clock to count from).
    Absent,
    /// Wait this many milliseconds. A number of seconds too large for an `f64` (`Retry-After: 999...9`, 400 digits)
    /// is `10^12` seconds: longer than any `maxRetryAfterMs`, so the call ends with the error.
    Delay(u64),
    /// Present, but neither a number of seconds (`retry-after-ms`: of milliseconds) nor an HTTP date: `1e400`,
    /// `Infinity`, `-5`, `NaN`, `soon`. The server asked for a pause the client cannot know: the call is not retried
    /// on the client's own schedule, it ends with the error (still `retryable`, `retryAfter` unset).
    Unreadable,
}

/// Reads `retry-after-ms`, then `retry-after` (used when `retry-after-ms` is absent or unreadable), as
/// [`parse_retry_after`] does, telling an absent header from an unreadable one.
pub fn retry_after(headers: &[(String, String)], now_ms: Option<u64>) -> RetryAfter {
    let ms = header(headers, "retry-after-ms");
    if let Some(ms) = ms.and_then(parse_non_negative) {
        return RetryAfter::Delay(ms.round() as u64);
    }
    let Some(value) = header(headers, "retry-after").map(str::trim) else {
        return if ms.is_some() {
            RetryAfter::Unreadable
        } else {
            RetryAfter::Absent
        };
    };
    if let Some(seconds) = parse_non_negative(value) {
        return RetryAfter::Delay((seconds * 1000.0).round() as u64);
    }
    match (parse_http_date(value), now_ms) {
        (Some(at), Some(now)) => RetryAfter::Delay(at.saturating_sub(now)),
        (Some(_), None) => RetryAfter::Absent,
        (None, _) => RetryAfter::Unreadable,
    }
}

/// A non-negative decimal number (digits and dots only, so never an exponent, a sign, `NaN` or `Infinity`), capped
/// at 10^12 so later conversions cannot overflow: digits too many for an `f64` are the cap, not unreadable.
fn parse_non_negative(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    (value >= 0.0).then_some(value.min(1e12))
}

/// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime form) into epoch milliseconds.
pub fn parse_http_date(text: &str) -> Option<u64> {
    let tokens: Vec<&str> = text
        .split([' ', ',', '-'])
        .filter(|t| !t.is_empty())
        .collect();
    let mut rest = tokens.as_slice();
    if let Some((first, tail)) = rest.split_first() {
        if first.chars().all(|c| c.is_ascii_alphabetic()) && month_number(first).is_none() {
            rest = tail;
        }
    }
    let (day, month, year, time) = match rest {
        // asctime: Nov 6 08:49:37 1994
        [m, d, t, y] if month_number(m).is_some() => (*d, *m, *y, *t),
        // IMF-fixdate / RFC 850: 06 Nov 1994 08:49:37 GMT
        [d, m, y, t, zone] if zone.eq_ignore_ascii_case("GMT") => (*d, *m, *y, *t),
        _ => return None,
    };
    let day: u32 = day.parse().ok()?;
    let month = month_number(month)?;
    let mut year: i64 = year.parse().ok()?;
    // Two-digit years (RFC 850): 70..99 are 19xx, 00..69 are 20xx.
    if year < 100 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let mut clock = time.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if clock.next().is_some()
        || !(1970..=9999).contains(&year)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if days < 0 {
        return None;
    }
    let secs = u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second;
    secs.checked_mul(1000)
}

fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == lower)
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send again after this many milliseconds.
    Retry {
        /// Delay before the next attempt.
        delay_ms: u64,
    },
    /// Return the error.
    Stop,
}

/// Decides whether to retry after `retries_done` retries already made.
///
/// A `retry_after_ms` within `max_retry_after_ms` is honoured exactly; a larger one stops the
/// call (the error keeps `retry_after_ms`, so the caller can schedule the retry itself).
pub fn decide(
    retryable: bool,
    retries_done: u32,
    max_retries: u32,
    retry_after_ms: Option<u64>,
    max_retry_after_ms: u64,
    jitter: f64,
) -> RetryDecision {
    let retry_after = match retry_after_ms {
        Some(ms) => RetryAfter::Delay(ms),
        None => RetryAfter::Absent,
    };
    decide_after(
        retryable,
        retries_done,
        max_retries,
        retry_after,
        max_retry_after_ms,
        jitter,
    )
}

/// [`decide`] with what the answer's `Retry-After` says ([`retry_after`]): an unreadable one stops the call, as a
/// delay longer than `max_retry_after_ms` does.
pub fn decide_after(
    retryable: bool,
    retries_done: u32,
    max_retries: u32,
    retry_after: RetryAfter,
    max_retry_after_ms: u64,
    jitter: f64,
) -> RetryDecision {
    if !retryable || retries_done >= max_retries {
        return RetryDecision::Stop;
    }
    match retry_after {
        RetryAfter::Unreadable => RetryDecision::Stop,
        RetryAfter::Delay(ms) if ms > max_retry_after_ms => RetryDecision::Stop,
        RetryAfter::Delay(ms) => RetryDecision::Retry { delay_ms: ms },
        RetryAfter::Absent => RetryDecision::Retry {
            delay_ms: backoff_ms(retries_done, jitter),
        },
    }
}
