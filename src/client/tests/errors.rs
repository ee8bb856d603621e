use crate::client::{ApiError, ErrorKind};

fn hv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn v1_envelope_is_parsed_into_every_field() {
    let body = r#"{"code":"invalid_schema","message":"schema.properties.a: bad","retryable":false,
        "requestId":"req_1","docUrl":"https://docs.example/developers/errors#invalid_schema"}"#;
    let err = ApiError::from_response(400, &hv(&[("X-Request-Id", "req_hdr")]), body, None);
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert_eq!(err.status, Some(400));
    assert_eq!(err.code, "invalid_schema");
    assert_eq!(err.message, "schema.properties.a: bad");
    assert!(!err.retryable);
    assert_eq!(err.request_id.as_deref(), Some("req_1"));
    assert_eq!(
        err.doc_url.as_deref(),
        Some("https://docs.example/developers/errors#invalid_schema")
    );
    assert_eq!(err.headers, hv(&[("x-request-id", "req_hdr")]));
    assert_eq!(err.js_class_name(), "BadRequestError");
}

#[test]
fn a_doc_url_that_is_not_an_absolute_http_url_is_dropped() {
    for bad in [
        "javascript:alert(1)",
        "data:text/html,x",
        "/developers/errors",
        "https://a b",
    ] {
        let body = format!(r#"{{"code":"invalid_schema","message":"m","docUrl":"{bad}"}}"#);
        let err = ApiError::from_response(400, &[], &body, None);
        assert_eq!(err.doc_url, None, "{bad}");
        assert_eq!(err.code, "invalid_schema");
    }
}

#[test]
fn request_id_falls_back_to_the_header() {
    let err = ApiError::from_response(
        404,
        &hv(&[("x-request-id", "req_9")]),
        r#"{"code":"not_found","message":"no such run","retryable":false}"#,
        None,
    );
    assert_eq!(err.request_id.as_deref(), Some("req_9"));
    assert_eq!(err.js_class_name(), "NotFoundError");
}

#[test]
fn older_error_shape_gives_code_and_detail() {
    let err = ApiError::from_response(
        422,
        &[],
        r#"{"error":"invalid_request","fields":["$where"]}"#,
        None,
    );
    assert_eq!(err.kind, ErrorKind::UnprocessableEntity);
    assert_eq!(err.code, "invalid_request");
    assert!(err.message.contains("fields"), "{}", err.message);
    let err = ApiError::from_response(404, &[], r#"{"error":"org not found"}"#, None);
    assert_eq!(err.code, "org not found");
    assert_eq!(err.kind, ErrorKind::NotFound);
}

#[test]
fn older_shape_auth_unavailable_is_retryable() {
    let err = ApiError::from_response(503, &[], r#"{"error":"auth_unavailable"}"#, None);
    assert_eq!(err.kind, ErrorKind::InternalServer);
    assert_eq!(err.code, "auth_unavailable");
    assert!(err.retryable);
}

#[test]
fn nested_error_object_shape_is_parsed() {
    let err = ApiError::from_response(
        429,
        &[],
        r#"{"error":{"type":"rate_limit_exceeded","message":"slow down"}}"#,
        None,
    );
    assert_eq!(err.code, "rate_limit_exceeded");
    assert_eq!(err.message, "slow down");
    assert_eq!(err.kind, ErrorKind::RateLimit);
}

#[test]
fn non_json_body_gives_a_clear_error_without_the_body() {
    let html = "<html><body>502 Bad Gateway sk_live_SECRET123</body></html>";
    let err = ApiError::from_response(502, &hv(&[("Content-Type", "text/html")]), html, None);
    assert_eq!(err.kind, ErrorKind::InternalServer);
    assert_eq!(err.code, "non_json_body");
    assert!(err.message.contains("text/html"), "{}", err.message);
    assert!(err.message.contains(&html.len().to_string()));
    assert!(!err.message.contains("Bad Gateway"));
    assert!(!err.to_string().contains("SECRET"));
    assert!(!err.retryable, "a 502 without an envelope is not retried");
}

#[test]
fn empty_and_non_object_bodies_keep_the_status_class() {
    let err = ApiError::from_response(409, &[], "", None);
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::Conflict, "conflict")
    );
    let err = ApiError::from_response(410, &[], "[1,2]", None);
    assert_eq!((err.kind, err.code.as_str()), (ErrorKind::Gone, "expired"));
    let err = ApiError::from_response(500, &[], "\"oops\"", None);
    assert_eq!(err.kind, ErrorKind::InternalServer);
    assert_eq!(err.code, "internal_error");
}

#[test]
fn unknown_code_is_kept_and_maps_to_its_status_class() {
    let err = ApiError::from_response(
        409,
        &[],
        r#"{"code":"brand_new_conflict","message":"x","retryable":false}"#,
        None,
    );
    assert_eq!(err.code, "brand_new_conflict");
    assert_eq!(err.js_class_name(), "ConflictError");
    let err = ApiError::from_response(418, &[], r#"{"code":"teapot","message":"x"}"#, None);
    assert_eq!(err.kind, ErrorKind::OtherStatus);
    assert_eq!(err.js_class_name(), "APIError");
}

#[test]
fn each_status_class_has_its_js_class() {
    let cases = [
        (400, "BadRequestError"),
        (401, "AuthenticationError"),
        (402, "CreditsExhaustedError"),
        (403, "PermissionDeniedError"),
        (404, "NotFoundError"),
        (409, "ConflictError"),
        (410, "GoneError"),
        (422, "UnprocessableEntityError"),
        (429, "RateLimitError"),
        (500, "InternalServerError"),
        (503, "InternalServerError"),
        (599, "InternalServerError"),
        (413, "APIError"),
    ];
    for (status, class) in cases {
        assert_eq!(
            ErrorKind::from_status(status).js_class_name(),
            class,
            "{status}"
        );
    }
    assert_eq!(ErrorKind::Connection.js_class_name(), "APIConnectionError");
    assert_eq!(ErrorKind::Timeout.js_class_name(), "APITimeoutError");
    assert_eq!(ErrorKind::UserAbort.js_class_name(), "APIUserAbortError");
    assert_eq!(ErrorKind::Validation.js_class_name(), "BadRequestError");
}

#[test]
fn rate_limit_error_carries_retry_after() {
    let err = ApiError::from_response(
        429,
        &hv(&[("Retry-After", "60")]),
        r#"{"code":"rate_limited","message":"budget exhausted","retryable":true}"#,
        None,
    );
    assert_eq!(err.retry_after_ms, Some(60_000));
    assert!(err.retryable);
}

#[test]
fn display_names_status_code_and_request_id() {
    let err = ApiError::from_response(
        404,
        &[],
        r#"{"code":"not_found","message":"no such run","requestId":"req_2"}"#,
        None,
    );
    assert_eq!(
        err.to_string(),
        "404 not_found: no such run (request req_2)"
    );
}

/// Deterministic garbage (xorshift) through every parser: none may panic.
#[test]
fn garbage_inputs_never_panic() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet: Vec<char> =
        "{}[]\":,0123456789.-eE tfnulr\\/?#@:GMTSunNov ,abc\u{e9}\u{1F600}\r\n"
            .chars()
            .collect();
    for _ in 0..5_000 {
        let len = (next() % 64) as usize;
        let text: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let status = 100 + (next() % 500) as u16;
        let headers = vec![
            ("retry-after".to_owned(), text.clone()),
            ("retry-after-ms".to_owned(), text.chars().rev().collect()),
        ];
        let _ = ApiError::from_response(status, &headers, &text, Some(next()));
        let _ = crate::client::retry::parse_http_date(&text);
        let _ = crate::client::url::origin(&format!("https://{text}"));
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
            let _ = crate::client::validate_extraction_schema(&value);
        }
    }
}

/// The error of a GET answered `status` with `text`, and the host's reading of it (`host_read`).
fn error_of(status: u16, text: &str, host_read: Option<&str>) -> ApiError {
    use crate::client::{Action, Env};
    let mut call = super::retrieve_call();
    let Action::Send(_) = call.next() else {
        panic!("no send")
    };
    let env = Env {
        now_ms: 0,
        jitter: 0.0,
    };
    match host_read {
        Some(read) => call.on_error_response(status, &[], text, read, env),
        None => call.on_response(status, &[], text, env),
    }
    match call.next() {
        Action::Done(Err(err)) => err,
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_envelope_keeps_its_code_whenever_json_parse_reads_it() {
    // A lone surrogate, a number beyond a double, nesting deeper than the core reads: JSON.parse reads each, the
    // core's reader refuses it, and the error would be `non_json_body` if the host did not hand its reading too.
    let deep = format!(
        r#"{{"code":"invalid_request","message":"bad","detail":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    for (text, host_read) in [
        (
            r#"{"code":"invalid_request","message":"bad \ud800 name"}"#.to_owned(),
            "{\"code\":\"invalid_request\",\"message\":\"bad \u{fffd} name\"}".to_owned(),
        ),
        (
            r#"{"code":"invalid_request","message":"bad","limit":1e400}"#.to_owned(),
            r#"{"code":"invalid_request","message":"bad","limit":null}"#.to_owned(),
        ),
        (
            deep.clone(),
            format!(
                r#"{{"code":"invalid_request","message":"bad","detail":{}null{}}}"#,
                "[".repeat(7),
                "]".repeat(7)
            ),
        ),
    ] {
        let without = error_of(400, &text, None);
        assert_eq!(
            without.code, "non_json_body",
            "the core alone cannot read {text:.60}"
        );
        let err = error_of(400, &text, Some(&host_read));
        assert_eq!(err.code, "invalid_request", "{text:.60}");
        assert_eq!(
            err.message,
            "400 invalid_request: bad"
                .split_once(": ")
                .map(|(_, m)| m)
                .unwrap_or_default()
                .to_owned()
                + if text.contains("ud800") {
                    " \u{fffd} name"
                } else {
                    ""
                }
        );
    }
    // A text the core reads is read as it is, whatever the host says.
    let err = error_of(
        400,
        r#"{"code":"invalid_schema","message":"no"}"#,
        Some(r#"{"code":"other"}"#),
    );
    assert_eq!(err.code, "invalid_schema");
}
