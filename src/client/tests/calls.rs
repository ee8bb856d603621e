use super::{config, drive, env, h, retrieve_call, run, Reply, KEY};
use crate::client::{
    agent_runs, files, runs, verbs, webhooks, Action, Call, CallOptions, ClientConfig, ErrorKind,
    LogLevel, Method, TransportError,
};

fn create_spec() -> crate::client::RequestSpec {
    agent_runs::create(&agent_runs::AgentRunCreateParams {
        agent: "agt_1".into(),
        files: vec![crate::client::common::FileRef::url(
            "https://files.example/a.pdf",
        )],
        ..Default::default()
    })
    .unwrap()
}

const RUN: &str =
    r#"{"object":"agent_run","id":"agr_1","status":"queued","statusUrl":"/v1/agent-runs/agr_1"}"#;

#[test]
fn every_retry_of_a_post_reuses_one_idempotency_key() {
    let trace = run(
        create_spec(),
        &CallOptions::default(),
        vec![
            Reply::Transport(TransportError::Connection("socket hang up".into())),
            Reply::Http(503, h(&[]), r#"{"error":"auth_unavailable"}"#),
            Reply::Http(202, h(&[]), RUN),
        ],
    );
    assert_eq!(trace.requests.len(), 3);
    let keys: Vec<&str> = trace
        .requests
        .iter()
        .map(|r| r.header("idempotency-key").unwrap())
        .collect();
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    assert_eq!(keys[0].len(), 36);
    assert_eq!(trace.sleeps, vec![500, 1000]);
    let response = trace.result.unwrap();
    assert_eq!(response.status, 202, "a 202 is a success");
    assert_eq!(response.attempts, 3);
    assert_eq!(response.body["status"], "queued");
}

#[test]
fn callers_idempotency_key_is_sent_and_kept() {
    let options = CallOptions {
        idempotency_key: Some("order-42".into()),
        ..Default::default()
    };
    let trace = run(
        create_spec(),
        &options,
        vec![
            Reply::Transport(TransportError::Timeout),
            Reply::Http(200, h(&[("Idempotent-Replay", "true")]), RUN),
        ],
    );
    assert!(trace
        .requests
        .iter()
        .all(|r| r.header("idempotency-key") == Some("order-42")));
    assert!(trace.result.unwrap().idempotent_replay);
}

#[test]
fn generated_keys_differ_per_call_and_are_uuid_v4() {
    let a = Call::new(&config(), create_spec(), &CallOptions::default(), [0u8; 16]).unwrap();
    let b = Call::new(
        &config(),
        create_spec(),
        &CallOptions::default(),
        [255u8; 16],
    )
    .unwrap();
    assert_ne!(a.idempotency_key(), b.idempotency_key());
    let key = a.idempotency_key().unwrap();
    assert_eq!(key, "00000000-0000-4000-8000-000000000000");
    assert_eq!(
        b.idempotency_key().unwrap(),
        "ffffffff-ffff-4fff-bfff-ffffffffffff"
    );
    let counting: [u8; 16] = core::array::from_fn(|i| i as u8 * 17);
    let c = Call::new(&config(), create_spec(), &CallOptions::default(), counting).unwrap();
    // Each byte as two lower-case hex digits, in order; the version nibble 4 and the variant bits 10.
    assert_eq!(
        c.idempotency_key().unwrap(),
        "00112233-4455-4677-8899-aabbccddeeff"
    );
}

#[test]
fn invalid_idempotency_key_is_rejected_before_sending() {
    let options = CallOptions {
        idempotency_key: Some("bad key\n".into()),
        ..Default::default()
    };
    let err = Call::new(&config(), create_spec(), &options, [0; 16]).unwrap_err();
    assert_eq!(err.code, "invalid_request");
    assert!(err.message.starts_with("idempotencyKey:"));
}

#[test]
fn get_and_delete_carry_no_idempotency_key() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            200,
            h(&[]),
            r#"{"id":"exr_1","status":"processed"}"#,
        )],
    );
    assert_eq!(trace.requests[0].method, Method::Get);
    assert_eq!(trace.requests[0].header("idempotency-key"), None);
    let trace = run(
        runs::delete("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(204, h(&[]), "")],
    );
    assert_eq!(trace.requests[0].header("idempotency-key"), None);
    assert_eq!(trace.result.unwrap().body, serde_json::Value::Null);
}

#[test]
fn api_requests_carry_bearer_key_and_json_headers() {
    let trace = run(
        create_spec(),
        &CallOptions::default(),
        vec![Reply::Http(202, h(&[]), RUN)],
    );
    let req = &trace.requests[0];
    assert_eq!(req.url, "https://api.example.com/v1/agent-runs");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("accept"), Some("application/json"));
    assert_eq!(req.timeout_ms, 600_000);
    assert!(
        !req.follow_redirects,
        "API routes: redirect manual, the call decides"
    );
}

#[test]
fn upload_put_never_carries_the_authorization_header() {
    for url in [
        "https://storage.example.net/up/1?sig=abc",
        // even on the API's own origin: the PUT must not carry the key
        "https://api.example.com/uploads/1?sig=abc",
    ] {
        let spec = files::upload_put(url, "application/pdf").unwrap();
        let trace = run(
            spec,
            &CallOptions::default(),
            vec![Reply::Http(200, h(&[]), "<ok/>")],
        );
        let req = &trace.requests[0];
        assert_eq!(req.method, Method::Put);
        assert_eq!(req.url, url);
        assert_eq!(req.header("authorization"), None, "{url}");
        assert_eq!(req.header("content-type"), Some("application/pdf"));
        assert!(req.raw_body && req.body.is_none());
        assert!(trace.result.is_ok(), "a non-JSON 2xx from storage is fine");
    }
}

#[test]
fn signed_download_urls_never_carry_the_key() {
    let trace = run(
        runs::download("https://api.example.com/signed/out.pdf?token=t"),
        &CallOptions::default(),
        vec![Reply::Http(200, h(&[]), "%PDF-1.7")],
    );
    assert_eq!(trace.requests[0].header("authorization"), None);
}

#[test]
fn key_and_default_headers_are_never_sent_off_origin() {
    let mut cfg = config();
    cfg.set_default_headers(vec![
        ("X-Team".into(), "ops".into()),
        ("Authorization".into(), "Bearer other".into()),
    ])
    .unwrap();
    for (url, on_origin) in [
        ("https://api.example.com/v1/x", true),
        ("https://API.EXAMPLE.COM:443/v1/x", true),
        ("http://api.example.com/v1/x", false),
        ("https://api.example.com:8443/v1/x", false),
        ("https://api.example.com.evil.net/v1/x", false),
        ("https://evil.net/?https://api.example.com", false),
        ("https://api.example.com@evil.net/", false),
        ("https://evil.net\\@api.example.com/", false),
    ] {
        let mut spec = runs::download(url);
        spec.auth = true;
        let call = Call::new(&cfg, spec, &CallOptions::default(), [0; 16]).unwrap();
        let trace = drive(call, vec![Reply::Http(200, h(&[]), "")]);
        let req = &trace.requests[0];
        let auth = req.header("authorization");
        assert_eq!(auth.is_some(), on_origin, "{url}");
        assert_eq!(req.header("x-team").is_some(), on_origin, "{url}");
        if let Some(a) = auth {
            assert_eq!(
                a,
                format!("Bearer {KEY}"),
                "default headers cannot replace the key"
            );
        }
    }
}

#[test]
fn jwks_is_fetched_without_the_key() {
    let trace = run(
        webhooks::jwks(),
        &CallOptions::default(),
        vec![Reply::Http(200, h(&[]), r#"{"keys":[]}"#)],
    );
    assert_eq!(
        trace.requests[0].url,
        "https://api.example.com/v1/webhooks/jwks.json"
    );
    assert_eq!(trace.requests[0].header("authorization"), None);
}

#[test]
fn retry_after_within_cap_is_slept_then_retried() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Http(
                429,
                h(&[("Retry-After", "3")]),
                r#"{"code":"rate_limited","retryable":true}"#,
            ),
            Reply::Http(200, h(&[]), r#"{"id":"exr_1","status":"processed"}"#),
        ],
    );
    assert_eq!(trace.sleeps, vec![3000]);
    assert!(trace.result.is_ok());
}

#[test]
fn retry_after_beyond_cap_returns_the_error_with_retry_after() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            429,
            h(&[("Retry-After", "61")]),
            r#"{"code":"rate_limited","message":"budget","retryable":true}"#,
        )],
    );
    assert_eq!(trace.requests.len(), 1);
    assert!(trace.sleeps.is_empty());
    let err = trace.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimit);
    assert_eq!(err.retry_after_ms, Some(61_000));
}

#[test]
fn retry_after_http_date_uses_the_callers_clock() {
    // env().now_ms is 1_700_000_000_000 = Tue, 14 Nov 2023 22:13:20 GMT.
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Http(
                503,
                h(&[("Retry-After", "Tue, 14 Nov 2023 22:13:30 GMT")]),
                "",
            ),
            Reply::Http(200, h(&[]), r#"{"id":"exr_1","status":"processed"}"#),
        ],
    );
    assert_eq!(trace.sleeps, vec![10_000]);
}

#[test]
fn retries_stop_after_max_retries_with_the_last_error() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Http(503, h(&[]), ""),
            Reply::Http(503, h(&[]), ""),
            Reply::Http(503, h(&[("x-request-id", "req_last")]), ""),
        ],
    );
    assert_eq!(trace.requests.len(), 3);
    let err = trace.result.unwrap_err();
    assert_eq!(err.status, Some(503));
    assert_eq!(err.request_id.as_deref(), Some("req_last"));
    assert_eq!(
        trace.requests.iter().map(|r| r.attempt).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

#[test]
fn per_call_max_retries_and_timeout_override_the_client() {
    let options = CallOptions {
        max_retries: Some(0),
        timeout_ms: Some(5_000),
        ..Default::default()
    };
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &options,
        vec![Reply::Transport(TransportError::Timeout)],
    );
    assert_eq!(trace.requests.len(), 1);
    assert_eq!(trace.requests[0].timeout_ms, 5_000);
    let err = trace.result.unwrap_err();
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::Timeout, "timeout")
    );
    assert!(err.retryable);
}

#[test]
fn credits_exhausted_is_never_retried() {
    let trace = run(
        create_spec(),
        &CallOptions {
            max_retries: Some(5),
            ..Default::default()
        },
        vec![Reply::Http(
            402,
            h(&[]),
            r#"{"code":"credits_exhausted","message":"top up","retryable":false}"#,
        )],
    );
    assert_eq!(trace.requests.len(), 1);
    assert_eq!(
        trace.result.unwrap_err().js_class_name(),
        "CreditsExhaustedError"
    );
}

#[test]
fn connection_errors_are_retried_then_reported() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Transport(TransportError::Connection("ECONNRESET".into())),
            Reply::Transport(TransportError::Connection("ECONNRESET".into())),
            Reply::Transport(TransportError::Connection("ECONNRESET".into())),
        ],
    );
    assert_eq!(trace.requests.len(), 3);
    let err = trace.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Connection);
    assert_eq!(err.code, "connection_error");
    assert_eq!(err.js_class_name(), "APIConnectionError");
}

#[test]
fn an_aborted_attempt_is_not_retried() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Transport(TransportError::Aborted)],
    );
    assert_eq!(trace.requests.len(), 1);
    assert_eq!(
        trace.result.unwrap_err().js_class_name(),
        "APIUserAbortError"
    );
}

#[test]
fn abort_during_a_sleep_ends_the_call() {
    let mut call = retrieve_call();
    assert!(matches!(call.next(), Action::Send(_)));
    call.on_response(503, &[], "", env());
    assert!(matches!(call.next(), Action::Sleep { .. }));
    call.abort();
    match call.next() {
        Action::Done(Err(e)) => assert_eq!(e.code, "aborted"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn next_without_an_answer_is_an_error_not_a_second_send() {
    let mut call = retrieve_call();
    assert!(matches!(call.next(), Action::Send(_)));
    match call.next() {
        Action::Done(Err(e)) => assert_eq!(e.code, "invalid_call_state"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wait_is_sent_as_query_and_bounded() {
    let options = CallOptions {
        wait: Some(120),
        ..Default::default()
    };
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &options,
        vec![Reply::Http(200, h(&[]), "{}")],
    );
    assert_eq!(
        trace.requests[0].url,
        "https://api.example.com/v1/runs/exr_1?wait=120"
    );
    let bad = CallOptions {
        wait: Some(121),
        ..Default::default()
    };
    let err = Call::new(&config(), runs::retrieve("exr_1").unwrap(), &bad, [0; 16]).unwrap_err();
    assert_eq!(err.code, "invalid_request");
    assert!(err.message.starts_with("wait:"));
    let zero = CallOptions {
        wait: Some(0),
        ..Default::default()
    };
    let trace = run(create_spec(), &zero, vec![Reply::Http(202, h(&[]), RUN)]);
    assert!(trace.requests[0].url.ends_with("/v1/agent-runs?wait=0"));
}

#[test]
fn wait_on_a_route_without_wait_is_rejected() {
    let options = CallOptions {
        wait: Some(5),
        ..Default::default()
    };
    let err = Call::new(&config(), webhooks::list(), &options, [0; 16]).unwrap_err();
    assert_eq!(err.code, "invalid_request");
}

#[test]
fn output_route_reads_location_without_following() {
    let trace = run(
        runs::output_url("exr_1", "redacted.pdf").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            302,
            h(&[("Location", "https://cdn.example/o?sig=1")]),
            "",
        )],
    );
    assert!(!trace.requests[0].follow_redirects);
    assert_eq!(
        trace.requests[0].url,
        "https://api.example.com/v1/runs/exr_1/output/redacted.pdf"
    );
    let response = trace.result.unwrap();
    assert_eq!(response.status, 302);
    assert_eq!(
        response.location.as_deref(),
        Some("https://cdn.example/o?sig=1")
    );
}

#[test]
fn output_not_ready_is_waited_out_by_retries() {
    let trace = run(
        runs::output_url("exr_1", "a.pdf").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Http(
                409,
                h(&[]),
                r#"{"code":"output_not_ready","retryable":true}"#,
            ),
            Reply::Http(302, h(&[("location", "https://cdn.example/o")]), ""),
        ],
    );
    assert_eq!(trace.requests.len(), 2);
    assert!(trace.result.is_ok());
}

#[test]
fn redirect_without_location_is_an_invalid_response() {
    let trace = run(
        runs::output_url("exr_1", "a.pdf").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(302, h(&[]), "")],
    );
    let err = trace.result.unwrap_err();
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::InvalidResponse, "missing_location")
    );
}

#[test]
fn a_2xx_with_a_non_json_body_is_a_clear_error() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(200, h(&[("x-request-id", "req_7")]), "<html>")],
    );
    let err = trace.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidResponse);
    assert_eq!(err.code, "non_json_body");
    assert_eq!(err.request_id.as_deref(), Some("req_7"));
    assert!(!err.retryable);
}

#[test]
fn response_exposes_request_id_headers_and_typed_body() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            200,
            h(&[("X-Request-Id", "req_5")]),
            r#"{"id":"exr_1","status":"processed","novel":1}"#,
        )],
    );
    let response = trace.result.unwrap();
    assert_eq!(response.request_id.as_deref(), Some("req_5"));
    assert!(!response.idempotent_replay);
    let typed: runs::CapabilityRun = response.json().unwrap();
    assert_eq!(typed.status, runs::RunStatus::Processed);
    assert_eq!(typed.extra["novel"], 1, "unknown fields are kept");
    let wrong = response.json::<Vec<u8>>().unwrap_err();
    assert_eq!(wrong.code, "unexpected_shape");
}

#[test]
fn debug_output_never_shows_the_key() {
    let cfg = config();
    let call = Call::new(&cfg, create_spec(), &CallOptions::default(), [0; 16]).unwrap();
    let mut call2 = Call::new(&cfg, create_spec(), &CallOptions::default(), [0; 16]).unwrap();
    let Action::Send(req) = call2.next() else {
        panic!()
    };
    for text in [format!("{cfg:?}"), format!("{call:?}"), format!("{req:?}")] {
        assert!(!text.contains("SECRET123"), "{text}");
    }
    assert!(format!("{req:?}").contains("[redacted]"));
}

#[test]
fn debug_logs_name_method_path_status_and_attempt_but_never_key_or_body() {
    let mut cfg = config();
    cfg.log_level = LogLevel::Debug;
    let spec = verbs::extract(&verbs::ExtractParams {
        file: Some(crate::client::common::FileRef::url(
            "https://f.example/a.pdf?token=abc",
        )),
        hints: Some("invoice total".into()),
        ..Default::default()
    })
    .unwrap();
    let mut call = Call::new(&cfg, spec, &CallOptions::default(), [0; 16]).unwrap();
    let mut logs = Vec::new();
    let mut replies = vec![
        (503u16, r#"{"error":"auth_unavailable"}"#),
        (200, r#"{"id":"exr_1","status":"processed"}"#),
    ]
    .into_iter();
    loop {
        match call.next() {
            Action::Send(_) => {
                let (status, body) = replies.next().unwrap();
                call.on_response(
                    status,
                    &[("x-request-id".into(), "req_1".into())],
                    body,
                    env(),
                );
            }
            Action::Sleep { .. } => {}
            Action::Done(r) => {
                assert!(r.is_ok());
                break;
            }
        }
        logs.extend(call.take_logs());
    }
    let text: Vec<String> = logs.iter().map(|l| l.message.clone()).collect();
    let joined = text.join("\n");
    assert!(joined.contains("POST /v1/extract attempt 1/3"), "{joined}");
    assert!(joined.contains("-> 503 request_id=req_1"), "{joined}");
    assert!(joined.contains("retrying in 500 ms"), "{joined}");
    assert!(
        !joined.contains("SECRET")
            && !joined.contains("invoice total")
            && !joined.contains("token")
    );
}

#[test]
fn default_log_level_reports_retries_but_not_attempts() {
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_response(503, &[], "", env());
    let logs = call.take_logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].level, LogLevel::Warn);
}

#[test]
fn waiting_out_output_not_ready_is_logged_at_debug_not_warn() {
    let not_ready = r#"{"code":"output_not_ready","message":"still registering","retryable":true}"#;
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_response(409, &[], not_ready, env());
    assert!(
        call.take_logs().is_empty(),
        "an expected wait stays out of the default (warn) log"
    );

    let mut cfg = config();
    cfg.log_level = LogLevel::Debug;
    let mut call = Call::new(
        &cfg,
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        [0; 16],
    )
    .unwrap();
    let _ = call.next();
    call.on_response(409, &[], not_ready, env());
    let logs = call.take_logs();
    let retry = logs
        .iter()
        .find(|l| l.message.contains("retrying in"))
        .expect("the retry is logged");
    assert_eq!(retry.level, LogLevel::Debug);
}

#[test]
fn default_log_level_is_silent_on_a_handled_4xx_but_reports_exhausted_retries() {
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_response(
        404,
        &[],
        r#"{"code":"not_found","message":"no such run","retryable":false}"#,
        env(),
    );
    assert!(
        call.take_logs().is_empty(),
        "the caller gets the 404; the console stays quiet"
    );

    let options = CallOptions {
        max_retries: Some(0),
        ..CallOptions::default()
    };
    let mut call = Call::new(
        &config(),
        runs::retrieve("exr_1").unwrap(),
        &options,
        [0; 16],
    )
    .unwrap();
    let _ = call.next();
    call.on_response(503, &[], "", env());
    let logs = call.take_logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].level, LogLevel::Error);
}

#[test]
fn config_rejects_bad_keys_and_urls_without_echoing_the_key() {
    let err = ClientConfig::new("sk with space", "https://api.example.com").unwrap_err();
    assert_eq!(err.code, "invalid_config");
    assert!(!err.message.contains("sk with space"));
    for url in [
        "api.example.com",
        "ftp://x",
        "https://u:p@api.example.com",
        "https://api.example.com/?x=1",
    ] {
        let err = ClientConfig::new("sk", url).unwrap_err();
        assert_eq!(err.code, "invalid_config", "{url}");
    }
    let cfg = ClientConfig::new("sk", "http://127.0.0.1:8787/base/").unwrap();
    assert_eq!(cfg.base_url(), "http://127.0.0.1:8787/base");
    assert_eq!(cfg.base_origin(), "http://127.0.0.1:8787");
    assert_eq!(
        ClientConfig::new("", "https://a.b").unwrap_err().code,
        "invalid_config"
    );
}

#[test]
fn connection_error_text_loses_signed_queries_and_the_key() {
    let mut cfg = config();
    cfg.max_retries = 0;
    let call = Call::new(
        &cfg,
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        [0; 16],
    )
    .unwrap();
    let detail =
        format!("error sending request for url (https://up.example/x?sig=TOKEN) with {KEY}");
    let trace = drive(
        call,
        vec![Reply::Transport(TransportError::Connection(detail))],
    );
    let err = trace.result.unwrap_err();
    assert!(!err.message.contains("TOKEN"), "{}", err.message);
    assert!(!err.message.contains(KEY), "{}", err.message);
    assert!(
        err.message.contains("https://up.example/x?[redacted]"),
        "{}",
        err.message
    );
}

#[test]
fn server_echo_of_the_key_is_scrubbed_from_errors() {
    let body = format!(r#"{{"code":"invalid_token","message":"token {KEY} is revoked"}}"#);
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_response(401, &[("x-echo".into(), KEY.into())], &body, env());
    let Action::Done(Err(err)) = call.next() else {
        panic!()
    };
    assert!(!err.message.contains(KEY) && !format!("{err:?}").contains(KEY));
    assert_eq!(err.js_class_name(), "AuthenticationError");
}

#[test]
fn call_options_and_list_params_read_their_js_shapes() {
    let options: CallOptions = serde_json::from_value(
        serde_json::json!({"wait": 30, "idempotencyKey": "k", "timeoutMs": 1000, "maxRetries": 0}),
    )
    .unwrap();
    assert_eq!(
        options,
        CallOptions {
            wait: Some(30),
            idempotency_key: Some("k".into()),
            timeout_ms: Some(1000),
            max_retries: Some(0)
        }
    );
    let params: runs::RunListParams =
        serde_json::from_str(r#"{"limit": 5, "metadata": {"b": "2", "a": "1"}}"#).unwrap();
    assert_eq!(
        params.metadata,
        vec![
            ("b".to_owned(), "2".to_owned()),
            ("a".to_owned(), "1".to_owned())
        ]
    );
}

#[test]
fn default_headers_refuse_injection() {
    let mut cfg = config();
    let err = cfg
        .set_default_headers(vec![("x-a".into(), "v\r\nx-evil: 1".into())])
        .unwrap_err();
    assert_eq!(err.code, "invalid_config");
    let err = cfg
        .set_default_headers(vec![("bad name".into(), "v".into())])
        .unwrap_err();
    assert_eq!(err.code, "invalid_config");
}

#[test]
fn responses_and_specs_never_debug_print_tickets_or_signed_queries() {
    let trace = run(
        crate::client::realtime::create_session(&Default::default()).unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            201,
            h(&[]),
            r#"{"id":"rts_1","url":"wss://rt.example/s?ticket=TICKET_SECRET"}"#,
        )],
    );
    let response = trace.result.unwrap();
    assert!(!format!("{response:?}").contains("TICKET_SECRET"));
    let spec = files::upload_put("https://up.example/1?sig=SIGNED", "application/pdf").unwrap();
    assert!(!format!("{spec:?}").contains("SIGNED"));
    let trace = run(
        runs::output_url("exr_1", "a.pdf").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            302,
            h(&[("location", "https://cdn.example/o?sig=SIGNED")]),
            "",
        )],
    );
    assert!(!format!("{:?}", trace.result.unwrap()).contains("SIGNED"));
}

#[test]
fn extract_batch_is_not_resent_after_an_unknown_outcome() {
    let spec = verbs::extract_batch(&verbs::ExtractBatchParams {
        action: Some("act".into()),
        files: Some(vec![crate::client::common::FileRef::id("f")]),
        ..Default::default()
    })
    .unwrap();
    let trace = run(
        spec.clone(),
        &CallOptions::default(),
        vec![Reply::Transport(TransportError::Connection("reset".into()))],
    );
    assert_eq!(trace.requests.len(), 1);
    let err = trace.result.unwrap_err();
    assert_eq!(err.code, "connection_error");
    assert!(!err.retryable);
    let trace = run(
        spec,
        &CallOptions::default(),
        vec![
            Reply::Http(
                429,
                h(&[("retry-after", "1")]),
                r#"{"code":"rate_limited","retryable":true}"#,
            ),
            Reply::Http(202, h(&[]), r#"{"id":"exr_b","status":"queued"}"#),
        ],
    );
    assert_eq!(
        trace.requests.len(),
        2,
        "a 429 proves nothing started: retried"
    );
}

#[test]
fn a_timeout_shorter_than_wait_is_refused() {
    let options = CallOptions {
        wait: Some(60),
        timeout_ms: Some(30_000),
        ..Default::default()
    };
    let err = Call::new(
        &config(),
        runs::retrieve("exr_1").unwrap(),
        &options,
        [0; 16],
    )
    .unwrap_err();
    assert_eq!(err.code, "invalid_request");
    assert!(err.message.starts_with("timeoutMs:"), "{}", err.message);
    let options = CallOptions {
        wait: Some(60),
        timeout_ms: Some(90_000),
        ..Default::default()
    };
    assert!(Call::new(
        &config(),
        runs::retrieve("exr_1").unwrap(),
        &options,
        [0; 16]
    )
    .is_ok());
}

#[test]
fn a_planners_wait_shrinks_to_fit_a_short_timeout() {
    use crate::client::polling::{PollStep, Until};
    let mut planner = crate::client::agent_runs::wait_for("agr_1", Until::Finished).unwrap();
    let PollStep::Request(spec) = planner.next() else {
        panic!()
    };
    let options = CallOptions {
        timeout_ms: Some(30_000),
        ..Default::default()
    };
    let trace = run(spec.clone(), &options, vec![Reply::Http(200, h(&[]), "{}")]);
    assert!(
        trace.requests[0].url.ends_with("?wait=25"),
        "{}",
        trace.requests[0].url
    );
    let trace = run(
        spec,
        &CallOptions::default(),
        vec![Reply::Http(200, h(&[]), "{}")],
    );
    assert!(trace.requests[0].url.ends_with("?wait=120"));
}

#[test]
fn json_success_is_final_only_for_json_routes_below_info() {
    let mut quiet = config();
    quiet.log_level = LogLevel::Warn;
    let json = Call::new(&quiet, create_spec(), &CallOptions::default(), [1; 16]).unwrap();
    assert!(json.json_success_is_final());
    let void = Call::new(
        &quiet,
        webhooks::delete("we_1").unwrap(),
        &CallOptions::default(),
        [1; 16],
    )
    .unwrap();
    assert!(!void.json_success_is_final(), "a 204 route is not JSON");
    let mut chatty = config();
    chatty.log_level = LogLevel::Info;
    let logged = Call::new(&chatty, create_spec(), &CallOptions::default(), [1; 16]).unwrap();
    assert!(
        !logged.json_success_is_final(),
        "at info the core logs the answer line, so it must see the answer"
    );
    // What a host that finishes such an answer itself must match: any 2xx with a JSON body succeeds, with the
    // request id and the replay flag read from those two headers.
    for status in [200, 201, 202] {
        let trace = run(
            create_spec(),
            &CallOptions::default(),
            vec![Reply::Http(
                status,
                h(&[("X-Request-Id", "req_9"), ("Idempotent-Replay", " TRUE ")]),
                RUN,
            )],
        );
        let response = trace.result.unwrap();
        assert_eq!(response.status, status);
        assert_eq!(response.request_id.as_deref(), Some("req_9"));
        assert!(response.idempotent_replay);
    }
}

#[test]
fn the_browser_key_guard_covers_pages_and_browser_workers_not_server_runtimes() {
    use crate::client::HostFacts;
    let page = HostFacts {
        page: true,
        ..Default::default()
    };
    let worker = HostFacts {
        worker_scope: true,
        ..Default::default()
    };
    let workerd = HostFacts {
        worker_scope: true,
        server_runtime: true,
        ..Default::default()
    };
    assert!(page.is_browser(), "a page");
    assert!(worker.is_browser(), "a Web Worker or service worker");
    assert!(
        !workerd.is_browser(),
        "workerd's ServiceWorkerGlobalScope is a server"
    );
    assert!(!HostFacts::default().is_browser(), "Node, Deno, Bun");
}

#[test]
fn a_retry_log_line_names_the_status_when_there_is_one_and_reads_cleanly_when_not() {
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_transport_error(TransportError::Connection("socket hang up".into()), env());
    let line = call.take_logs().remove(0).message;
    assert!(
        line.contains("failed with connection_error; retrying in"),
        "{line}"
    );
    let mut call = retrieve_call();
    let _ = call.next();
    call.on_response(503, &[], "", env());
    let line = call.take_logs().remove(0).message;
    assert!(line.contains("failed with 503 "), "{line}");
}
