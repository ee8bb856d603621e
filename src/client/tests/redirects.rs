//! Redirects on API routes: sent with `redirect: "manual"`; same-origin followed by the call with the same headers,
//! bounded; another origin never, with `redirect_refused`.

use super::{env, h, retrieve_call, run, Reply, KEY};
use crate::client::call::MAX_REDIRECTS;
use crate::client::{runs, webhooks, Action, CallOptions, ErrorKind};

fn create() -> crate::client::RequestSpec {
    webhooks::create(&webhooks::WebhookCreateParams {
        url: "https://hooks.example/x".into(),
        events: None,
    })
    .unwrap()
}

#[test]
fn a_same_origin_307_is_followed_with_the_same_method_headers_and_body() {
    let trace = run(
        create(),
        &CallOptions::default(),
        vec![
            Reply::Http(307, h(&[("location", "/v2/webhooks?x=1")]), ""),
            Reply::Http(201, h(&[]), r#"{"id":"wh_1"}"#),
        ],
    );
    assert_eq!(trace.requests.len(), 2);
    let (a, b) = (&trace.requests[0], &trace.requests[1]);
    assert_eq!(b.url, "https://api.example.com/v2/webhooks?x=1");
    assert_eq!(a.method, b.method);
    assert_eq!(
        a.headers, b.headers,
        "same headers, key and idempotency key included"
    );
    assert_eq!(a.body, b.body);
    assert!(trace.sleeps.is_empty());
    assert_eq!(trace.result.unwrap().attempts, 1, "a hop is not a retry");
}

#[test]
fn a_redirect_to_another_origin_is_refused_with_a_code() {
    for location in [
        "https://evil.example/v1/webhooks",
        "//evil.example/v1/webhooks",
        "http://api.example.com/v1/webhooks",
        "https://api.example.com:8443/v1/webhooks",
        "ftp://api.example.com/x",
        "relative/path",
    ] {
        for status in [301, 302, 303, 307, 308] {
            let trace = run(
                create(),
                &CallOptions::default(),
                vec![Reply::Http(status, h(&[("location", location)]), "")],
            );
            assert_eq!(trace.requests.len(), 1, "{status} {location}: not followed");
            let err = trace.result.unwrap_err();
            assert_eq!(err.code, "redirect_refused", "{status} {location}");
            assert_eq!(err.kind, ErrorKind::OtherStatus);
            assert!(!err.retryable);
            assert!(!err.message.contains(KEY));
        }
    }
}

#[test]
fn a_browsers_opaque_redirect_is_refused_with_a_code() {
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(0, h(&[]), "")],
    );
    assert_eq!(trace.result.unwrap_err().code, "redirect_refused");
}

#[test]
fn a_301_to_a_post_is_refused_and_a_get_follows_it() {
    let trace = run(
        create(),
        &CallOptions::default(),
        vec![Reply::Http(
            302,
            h(&[("location", "https://api.example.com/v1/other")]),
            "",
        )],
    );
    assert_eq!(trace.result.unwrap_err().code, "redirect_refused");
    let trace = run(
        runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        vec![
            Reply::Http(301, h(&[("location", "/v1/runs/exr_2")]), ""),
            Reply::Http(200, h(&[]), r#"{"id":"exr_2"}"#),
        ],
    );
    assert_eq!(
        trace.requests[1].url,
        "https://api.example.com/v1/runs/exr_2"
    );
    assert!(trace.result.is_ok());
}

#[test]
fn redirects_are_bounded() {
    let mut call = retrieve_call();
    let mut sent = 0;
    let result = loop {
        match call.next() {
            Action::Send(_) => {
                sent += 1;
                let loc = vec![("location".to_owned(), "/v1/runs/loop".to_owned())];
                call.on_response(307, &loc, "", env());
            }
            Action::Sleep { .. } => {}
            Action::Done(r) => break r,
        }
    };
    assert_eq!(sent, MAX_REDIRECTS + 1);
    assert_eq!(result.unwrap_err().code, "redirect_refused");
}

#[test]
fn the_output_route_still_reads_its_302_and_downloads_still_follow() {
    let trace = run(
        runs::output_url("exr_1", "out.pdf").unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(
            302,
            h(&[("location", "https://cdn.example/o?sig=S")]),
            "",
        )],
    );
    assert_eq!(
        trace.result.unwrap().location.as_deref(),
        Some("https://cdn.example/o?sig=S")
    );
    assert!(!trace.requests[0].follow_redirects);
    let trace = run(
        runs::download("https://cdn.example/o?sig=S"),
        &CallOptions::default(),
        vec![Reply::Http(200, h(&[]), "bytes")],
    );
    assert!(trace.requests[0].follow_redirects);
    assert!(trace.requests[0].header("authorization").is_none());
}
