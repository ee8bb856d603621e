use crate::client::retry::{
    backoff_ms, decide, is_retryable, parse_http_date, parse_retry_after, RetryDecision,
};
use crate::client::ApiError;

fn hv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Retry matrix: (status, body, retried?).
#[test]
fn retry_matrix_per_status_and_code() {
    let cases: &[(u16, &str, bool)] = &[
        (408, "", true),
        (429, r#"{"code":"rate_limited","retryable":true}"#, true),
        (429, "", true),
        (503, "", true),
        (503, r#"{"error":"auth_unavailable"}"#, true),
        (503, r#"{"code":"auth_unavailable","message":"x"}"#, true),
        (500, r#"{"code":"internal_error","retryable":true}"#, true),
        (409, r#"{"code":"output_not_ready","retryable":true}"#, true),
        (503, r#"{"code":"upstream_error","retryable":false}"#, false),
        (
            502,
            r#"{"code":"file_unreadable","retryable":false}"#,
            false,
        ),
        (500, "<html>oops</html>", false),
        (
            402,
            r#"{"code":"credits_exhausted","retryable":true}"#,
            false,
        ),
        (402, "", false),
        (
            400,
            r#"{"code":"invalid_request","retryable":false}"#,
            false,
        ),
        (400, "", false),
        (401, r#"{"code":"invalid_token"}"#, false),
        (403, "", false),
        (404, r#"{"code":"not_found"}"#, false),
        (409, r#"{"code":"already_kept","retryable":false}"#, false),
        (410, r#"{"code":"run_expired","retryable":false}"#, false),
        (410, r#"{"error":"expired"}"#, false),
        (422, r#"{"code":"webhook_endpoint_disabled"}"#, false),
    ];
    for (status, body, expected) in cases {
        let err = ApiError::from_response(*status, &[], body, None);
        assert_eq!(err.retryable, *expected, "{status} {body}");
    }
    assert!(!is_retryable(429, "rate_limited", Some(false)));
    assert!(is_retryable(418, "x", Some(true)));
}

#[test]
fn backoff_doubles_from_half_a_second_and_caps_at_eight() {
    let expected = [500, 1000, 2000, 4000, 8000, 8000, 8000];
    for (n, want) in expected.iter().enumerate() {
        assert_eq!(backoff_ms(n as u32, 0.0), *want, "retry {n}");
    }
    assert_eq!(backoff_ms(u32::MAX, 0.0), 8000);
}

#[test]
fn jitter_keeps_backoff_within_three_quarters_and_full() {
    for n in 0..8u32 {
        let base = backoff_ms(n, 0.0);
        for j in [0.0, 0.1, 0.5, 0.9, 0.999_999] {
            let d = backoff_ms(n, j);
            assert!(d * 4 >= base * 3 && d <= base, "n={n} j={j} d={d}");
        }
        assert_eq!(backoff_ms(n, 0.5), (base as f64 * 0.875).round() as u64);
    }
    assert_eq!(backoff_ms(0, f64::NAN), 500);
    assert_eq!(backoff_ms(0, 7.0), 375);
    assert_eq!(backoff_ms(0, -3.0), 500);
}

#[test]
fn retry_after_seconds_and_milliseconds_are_read() {
    assert_eq!(
        parse_retry_after(&hv(&[("Retry-After", "60")]), None),
        Some(60_000)
    );
    assert_eq!(
        parse_retry_after(&hv(&[("retry-after", "1.5")]), None),
        Some(1_500)
    );
    assert_eq!(
        parse_retry_after(&hv(&[("retry-after", "0")]), None),
        Some(0)
    );
    assert_eq!(
        parse_retry_after(
            &hv(&[("retry-after", "60"), ("retry-after-ms", "250")]),
            None
        ),
        Some(250),
        "retry-after-ms wins"
    );
    assert_eq!(parse_retry_after(&hv(&[("retry-after", "-5")]), None), None);
    assert_eq!(
        parse_retry_after(&hv(&[("retry-after", "soon")]), None),
        None
    );
    assert_eq!(
        parse_retry_after(&hv(&[("retry-after", "1e400")]), None),
        None
    );
    assert_eq!(parse_retry_after(&[], None), None);
}

#[test]
fn retry_after_http_date_needs_now_and_counts_from_it() {
    // RFC 9110 section 5.6.7 example date: 1994-11-06T08:49:37Z = 784111777 s.
    let at = 784_111_777_000u64;
    for text in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ] {
        assert_eq!(parse_http_date(text), Some(at), "{text}");
    }
    let headers = hv(&[("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")]);
    assert_eq!(parse_retry_after(&headers, Some(at - 30_000)), Some(30_000));
    assert_eq!(
        parse_retry_after(&headers, Some(at + 5_000)),
        Some(0),
        "past date"
    );
    assert_eq!(parse_retry_after(&headers, None), None, "no clock, no date");
    assert_eq!(parse_http_date("Sun, 32 Nov 1994 08:49:37 GMT"), None);
    assert_eq!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), None);
    assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49 GMT"), None);
    assert_eq!(parse_http_date("2024-01-01T00:00:00Z"), None);
    assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    assert_eq!(
        parse_http_date("Thu, 01 Jan 9223372036854775807 00:00:00 GMT"),
        None,
        "no overflow"
    );
    assert_eq!(parse_http_date("Thu, 01 Jan 1969 00:00:00 GMT"), None);
    assert_eq!(
        parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
        Some(1_835_438_400_000)
    );
}

#[test]
fn retry_after_within_the_cap_is_honoured_exactly() {
    assert_eq!(
        decide(true, 0, 2, Some(60_000), 60_000, 0.3),
        RetryDecision::Retry { delay_ms: 60_000 }
    );
    assert_eq!(
        decide(true, 0, 2, Some(0), 60_000, 0.3),
        RetryDecision::Retry { delay_ms: 0 }
    );
}

#[test]
fn retry_after_beyond_the_cap_stops() {
    assert_eq!(
        decide(true, 0, 2, Some(60_001), 60_000, 0.0),
        RetryDecision::Stop
    );
}

#[test]
fn retries_stop_at_max_and_never_for_non_retryable() {
    assert_eq!(decide(true, 2, 2, None, 60_000, 0.0), RetryDecision::Stop);
    assert_eq!(decide(false, 0, 2, None, 60_000, 0.0), RetryDecision::Stop);
    assert_eq!(
        decide(true, 1, 2, None, 60_000, 0.0),
        RetryDecision::Retry { delay_ms: 1000 }
    );
    assert_eq!(decide(true, 0, 0, None, 60_000, 0.0), RetryDecision::Stop);
}

/// A 429 with `headers`, then a 200: the trace of a GET.
fn rate_limited_then_ok(headers: Vec<(&'static str, &'static str)>) -> super::Trace {
    super::run(
        crate::client::runs::retrieve("exr_1").unwrap(),
        &crate::client::CallOptions::default(),
        vec![
            super::Reply::Http(429, headers, r#"{"code":"rate_limited","retryable":true}"#),
            super::Reply::Http(200, vec![], r#"{"id":"exr_1","status":"processed"}"#),
        ],
    )
}

#[test]
fn a_retry_after_that_cannot_be_read_ends_the_call_with_the_error() {
    // Neither a number of seconds nor an HTTP date: the call ends with the error rather than retrying on its own
    // backoff, as if the server had asked for nothing.
    for value in ["1e400", "Infinity", "-5", "NaN", "soon", "", "+5", "5s"] {
        for name in ["retry-after", "retry-after-ms"] {
            let trace = rate_limited_then_ok(vec![(name, value)]);
            assert_eq!(trace.requests.len(), 1, "{name}: {value:?} was retried");
            let err = trace.result.unwrap_err();
            assert_eq!(err.code, "rate_limited");
            assert!(err.retryable, "the caller may still retry later");
            assert_eq!(err.retry_after_ms, None, "{name}: {value:?}");
            assert!(
                err.message.ends_with(
                    "not retried: its Retry-After is neither a number of seconds nor an HTTP date"
                ),
                "{}",
                err.message
            );
        }
    }
    // An unreadable `retry-after-ms` next to a readable `Retry-After`: the latter is honoured.
    let trace = rate_limited_then_ok(vec![("retry-after-ms", "NaN"), ("retry-after", "0")]);
    assert_eq!(trace.requests.len(), 2);
    assert!(trace.result.is_ok());
    // Without a Retry-After, the backoff.
    let trace = rate_limited_then_ok(vec![]);
    assert_eq!(trace.requests.len(), 2);
    assert_eq!(trace.sleeps.len(), 1);
}

#[test]
fn a_retry_after_of_more_seconds_than_an_f64_holds_is_longer_than_the_cap() {
    let digits: &'static str = Box::leak("9".repeat(400).into_boxed_str());
    assert_eq!(
        parse_retry_after(&hv(&[("retry-after", digits)]), None),
        Some(1_000_000_000_000_000)
    );
    let trace = rate_limited_then_ok(vec![("retry-after", digits)]);
    assert_eq!(trace.requests.len(), 1, "not retried");
    let err = trace.result.unwrap_err();
    assert_eq!(err.retry_after_ms, Some(1_000_000_000_000_000));
    assert!(
        !err.message.contains("not retried"),
        "a delay, not an unreadable value: {}",
        err.message
    );
}

#[test]
fn retry_after_tells_absent_from_unreadable() {
    use crate::client::retry::{retry_after, RetryAfter};
    assert_eq!(retry_after(&[], Some(0)), RetryAfter::Absent);
    assert_eq!(
        retry_after(&hv(&[("retry-after", "2")]), Some(0)),
        RetryAfter::Delay(2000)
    );
    assert_eq!(
        retry_after(&hv(&[("retry-after", "-5")]), Some(0)),
        RetryAfter::Unreadable
    );
    assert_eq!(
        retry_after(&hv(&[("retry-after-ms", "x")]), Some(0)),
        RetryAfter::Unreadable
    );
    let date = hv(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]);
    assert_eq!(
        retry_after(&date, None),
        RetryAfter::Absent,
        "a date and no clock"
    );
}
