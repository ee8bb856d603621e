//! Retry classes per route: run creations are resent after a lost answer with the same key; any other POST only when
//! nothing can have happened; GET, PATCH, DELETE always. The API specification is the oracle: "Idempotency: header
//! `idempotency-key` on writes makes a retry return the original run; extract batch ignores it."

use super::{h, run, Reply};
use crate::client::actions;
use crate::client::common::FileRef;
use crate::client::configs::{self, ConfigCapability, ConfigParams};
use crate::client::request::RetryClass;
use crate::client::{
    agent_runs, files, realtime, runs, verbs, webhooks, CallOptions, ErrorKind, RequestSpec,
    TransportError,
};
use serde_json::json;

fn file() -> Option<FileRef> {
    Some(FileRef::id("f"))
}

fn run_creations() -> Vec<(&'static str, RequestSpec)> {
    vec![
        (
            "agentRuns.create",
            agent_runs::create(&agent_runs::AgentRunCreateParams {
                agent: "a".into(),
                files: vec![FileRef::id("f")],
                metadata: None,
                webhook: None,
            })
            .unwrap(),
        ),
        (
            "extract",
            verbs::extract(&verbs::ExtractParams {
                file: file(),
                action: Some("act".into()),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "parse",
            verbs::parse(&verbs::ParseParams {
                file: file(),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "redact",
            verbs::redact(&verbs::RedactParams {
                file: file(),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "fill",
            verbs::fill(&verbs::FillParams {
                template: Some(verbs::TemplateRef { id: "t".into() }),
                values: Some(json!({"name": "A"})),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "sign",
            verbs::sign(&verbs::SignParams {
                file: file(),
                signers: Some(vec![verbs::Signer {
                    name: "A".into(),
                    email: "a@x".into(),
                }]),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "pipeline",
            verbs::pipeline(&verbs::PipelineParams {
                files: Some(vec![FileRef::id("f")]),
                steps: Some(vec![json!({"parse": {}})]),
                ..Default::default()
            })
            .unwrap(),
        ),
    ]
}

fn other_writes() -> Vec<(&'static str, RequestSpec)> {
    let config = ConfigParams {
        name: "n".into(),
        config: serde_json::Map::new(),
    };
    vec![
        (
            "extract.batch",
            verbs::extract_batch(&verbs::ExtractBatchParams {
                action: Some("act".into()),
                files: Some(vec![FileRef::id("f")]),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "webhooks.create",
            webhooks::create(&webhooks::WebhookCreateParams {
                url: "https://hooks.example/x".into(),
                events: None,
            })
            .unwrap(),
        ),
        (
            "files.create",
            files::create(&files::FileCreateParams {
                url: "https://files.example/a.pdf".into(),
                name: None,
            })
            .unwrap(),
        ),
        (
            "files.registerUpload",
            files::register_upload("a.pdf", "application/pdf").unwrap(),
        ),
        (
            "configs.create",
            configs::create(ConfigCapability::Extract, &config).unwrap(),
        ),
        (
            "actions.create",
            actions::create(&actions::ActionParams {
                capability: Some(json!("extract")),
                name: config.name.clone(),
                config: config.config.clone(),
            })
            .unwrap(),
        ),
        (
            "realtime.createSession",
            realtime::create_session(&realtime::RealtimeSessionParams::default()).unwrap(),
        ),
        ("runs.cancel", runs::cancel("exr_1").unwrap()),
        (
            "runs.keep",
            runs::keep("exr_1", &Default::default()).unwrap(),
        ),
    ]
}

fn decisions() -> Vec<(&'static str, RequestSpec)> {
    vec![
        (
            "agentRuns.approve",
            agent_runs::approve("agr_1", "apr_1", &Default::default()).unwrap(),
        ),
        (
            "agentRuns.reject",
            agent_runs::reject(
                "agr_1",
                "apr_1",
                &agent_runs::RejectParams {
                    note: Some("no".into()),
                },
            )
            .unwrap(),
        ),
        (
            "agentRuns.completeTask",
            agent_runs::complete_task("agr_1", "tsk_1", &Default::default()).unwrap(),
        ),
    ]
}

fn idempotent_routes() -> Vec<(&'static str, RequestSpec)> {
    vec![
        ("runs.retrieve", runs::retrieve("exr_1").unwrap()),
        ("runs.delete", runs::delete("exr_1").unwrap()),
        ("webhooks.delete", webhooks::delete("wh_1").unwrap()),
        (
            "webhooks.update",
            webhooks::update(
                "wh_1",
                &webhooks::WebhookUpdateParams {
                    url: Some("https://hooks.example/y".into()),
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        ("webhooks.list", webhooks::list()),
    ]
}

#[test]
fn every_route_has_the_retry_class_the_spec_gives_it() {
    for (name, spec) in run_creations() {
        assert_eq!(spec.retry, RetryClass::KeyedCreate, "{name}");
    }
    for (name, spec) in other_writes() {
        assert_eq!(spec.retry, RetryClass::NotReplaySafe, "{name}");
    }
    for (name, spec) in idempotent_routes() {
        assert_eq!(spec.retry, RetryClass::Idempotent, "{name}");
    }
    for (name, spec) in decisions() {
        assert_eq!(spec.retry, RetryClass::DecideOnce, "{name}");
    }
}

const CONFLICT: &str =
    r#"{"code":"conflict","message":"approval already decided","retryable":false}"#;

#[test]
fn a_decision_whose_answer_is_lost_is_resent_and_a_409_then_is_outcome_unknown_not_a_conflict() {
    for (name, spec) in decisions() {
        for (lost, kind) in [
            (
                TransportError::Connection("other side closed".into()),
                ErrorKind::Connection,
            ),
            (TransportError::Timeout, ErrorKind::Timeout),
        ] {
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![
                    Reply::Transport(lost.clone()),
                    Reply::Http(409, h(&[("x-request-id", "req_2")]), CONFLICT),
                ],
            );
            assert_eq!(
                trace.requests.len(),
                2,
                "{name}: resent (a second decision cannot apply)"
            );
            let err = trace.result.unwrap_err();
            assert_eq!(err.kind, kind, "{name}: not a ConflictError");
            assert!(err.outcome_unknown, "{name}");
            assert_eq!(err.request_id.as_deref(), Some("req_2"));
            assert!(err.message.contains("409 conflict"), "{}", err.message);
            // The first attempt never arrived: the resend decides.
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![Reply::Transport(lost), Reply::Http(200, h(&[]), OK)],
            );
            assert!(trace.result.is_ok(), "{name}");
        }
        // Without a lost answer, a 409 is someone else's decision: a plain conflict.
        let trace = run(
            spec.clone(),
            &CallOptions::default(),
            vec![Reply::Http(409, h(&[]), CONFLICT)],
        );
        let err = trace.result.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict, "{name}");
        assert!(!err.outcome_unknown);
        // The service refuses a second decision, so any transient failure is resent (a bare 503 included) ...
        let trace = run(
            spec.clone(),
            &CallOptions::default(),
            vec![Reply::Http(503, h(&[]), ""), Reply::Http(200, h(&[]), OK)],
        );
        assert_eq!(trace.requests.len(), 2, "{name}");
        // ... and a bare 503 may come after the decision was applied: a 409 then is outcome unknown too.
        let trace = run(
            spec.clone(),
            &CallOptions::default(),
            vec![
                Reply::Http(503, h(&[]), ""),
                Reply::Http(409, h(&[]), CONFLICT),
            ],
        );
        let err = trace.result.unwrap_err();
        assert!(
            err.outcome_unknown && err.kind == ErrorKind::InternalServer,
            "{name}"
        );
        // A 429 proves nothing was done: a 409 after it is someone else's decision.
        let trace = run(
            spec,
            &CallOptions::default(),
            vec![
                Reply::Http(429, h(&[("retry-after", "0")]), ""),
                Reply::Http(409, h(&[]), CONFLICT),
            ],
        );
        assert_eq!(
            trace.result.unwrap_err().kind,
            ErrorKind::Conflict,
            "{name}"
        );
    }
}

const OK: &str = r#"{"id":"x_1","status":"queued"}"#;

#[test]
fn a_write_that_is_not_replay_safe_is_not_resent_after_a_lost_answer_or_a_timeout() {
    for (name, spec) in other_writes() {
        for (lost, kind) in [
            (
                TransportError::Connection("other side closed (UND_ERR_SOCKET)".into()),
                ErrorKind::Connection,
            ),
            (TransportError::Timeout, ErrorKind::Timeout),
        ] {
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![Reply::Transport(lost)],
            );
            assert_eq!(trace.requests.len(), 1, "{name}: sent once");
            let err = trace.result.unwrap_err();
            assert_eq!(err.kind, kind, "{name}");
            assert!(err.outcome_unknown, "{name}: outcome unknown");
            assert!(!err.retryable, "{name}");
            assert!(err.message.contains("outcomeUnknown"), "{}", err.message);
        }
    }
}

#[test]
fn a_write_that_is_not_replay_safe_is_resent_when_nothing_can_have_happened() {
    let cases = [
        "refused",
        "429",
        "429 bare",
        "503 auth_unavailable",
        "500 retryable",
    ];
    for (name, spec) in other_writes() {
        for case in cases {
            let first = match case {
                "refused" => Reply::Transport(TransportError::from_runtime(
                    "ECONNREFUSED",
                    "fetch failed (ECONNREFUSED)",
                )),
                "429" => Reply::Http(
                    429,
                    h(&[("retry-after", "0")]),
                    r#"{"code":"rate_limited","retryable":true}"#,
                ),
                "429 bare" => Reply::Http(429, h(&[]), ""),
                "503 auth_unavailable" => {
                    Reply::Http(503, h(&[]), r#"{"code":"auth_unavailable","message":"x"}"#)
                }
                _ => Reply::Http(500, h(&[]), r#"{"code":"internal_error","retryable":true}"#),
            };
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![first, Reply::Http(200, h(&[]), OK)],
            );
            assert_eq!(trace.requests.len(), 2, "{name} after {case}: resent");
            assert!(trace.result.is_ok(), "{name} after {case}");
            assert_eq!(
                trace.requests[0].header("idempotency-key"),
                trace.requests[1].header("idempotency-key"),
                "{name}: one key per call"
            );
        }
    }
}

#[test]
fn a_write_that_is_not_replay_safe_is_not_resent_on_an_answer_that_may_follow_a_commit() {
    for (name, spec) in other_writes() {
        for (status, body) in [
            (503, ""),
            (503, "<html>bad gateway</html>"),
            (408, ""),
            (502, ""),
            (500, r#"{"code":"internal_error","retryable":false}"#),
        ] {
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![Reply::Http(status, h(&[]), body)],
            );
            assert_eq!(trace.requests.len(), 1, "{name} {status} {body}");
            let err = trace.result.unwrap_err();
            assert!(!err.retryable && !err.outcome_unknown, "{name} {status}");
        }
    }
}

#[test]
fn a_run_creation_is_resent_with_the_same_key_after_a_lost_answer_or_a_timeout() {
    for (name, spec) in run_creations() {
        for lost in [
            TransportError::Connection("other side closed".into()),
            TransportError::Timeout,
        ] {
            let trace = run(
                spec.clone(),
                &CallOptions::default(),
                vec![
                    Reply::Transport(lost),
                    Reply::Http(202, h(&[("idempotent-replay", "true")]), OK),
                ],
            );
            assert_eq!(trace.requests.len(), 2, "{name}");
            let key = trace.requests[0].header("idempotency-key");
            assert!(key.is_some(), "{name}");
            assert_eq!(key, trace.requests[1].header("idempotency-key"), "{name}");
            assert!(trace.result.unwrap().idempotent_replay, "{name}");
        }
        // A bare 503 is retried for a run creation: the key dedupes it.
        let trace = run(
            spec.clone(),
            &CallOptions::default(),
            vec![Reply::Http(503, h(&[]), ""), Reply::Http(202, h(&[]), OK)],
        );
        assert_eq!(trace.requests.len(), 2, "{name}");
    }
}

#[test]
fn reads_deletes_and_patches_are_resent_after_a_lost_answer() {
    for (name, spec) in idempotent_routes() {
        let ok = if spec.method == crate::client::Method::Delete {
            Reply::Http(204, h(&[]), "")
        } else {
            Reply::Http(200, h(&[]), OK)
        };
        let trace = run(
            spec,
            &CallOptions::default(),
            vec![
                Reply::Transport(TransportError::Connection("reset".into())),
                ok,
            ],
        );
        assert_eq!(trace.requests.len(), 2, "{name}");
        assert!(trace.result.is_ok(), "{name}");
    }
}

#[test]
fn a_runtime_failure_counts_as_not_sent_only_when_it_proves_it() {
    let not_sent = [
        ("ECONNREFUSED", "fetch failed (ECONNREFUSED)"),
        ("ENOTFOUND", "fetch failed"),
        ("UND_ERR_CONNECT_TIMEOUT", "fetch failed"),
        ("ConnectionRefused", "Unable to connect. Is the computer able to access the url?"),
        (
            "",
            "error sending request for url (http://127.0.0.1:1/v1/x): client error (Connect): tcp connect error: Connection refused (os error 111)",
        ),
        ("DOCAUTO_NOT_SENT", "Invalid URL"),
        // A port the Fetch standard blocks ("bad port", e.g. 9 or 6000): refused before any connection.
        ("", "fetch failed (bad port)"),
        ("", "Fetch failed: Requests to port 9 are blocked"),
    ];
    for (code, message) in not_sent {
        assert!(
            matches!(
                TransportError::from_runtime(code, message),
                TransportError::NotSent(_)
            ),
            "{code} {message}"
        );
    }
    let unknown = [
        ("UND_ERR_SOCKET", "fetch failed (other side closed)"),
        ("ECONNRESET", "fetch failed"),
        ("EPIPE", "fetch failed"),
        ("", "Failed to fetch"),
        ("", "NetworkError when attempting to fetch resource."),
        ("ConnectionClosed", "The socket connection was closed unexpectedly"),
        (
            "",
            "error sending request for url (http://127.0.0.1:1/v1/x): connection closed before message completed",
        ),
    ];
    for (code, message) in unknown {
        assert!(
            matches!(
                TransportError::from_runtime(code, message),
                TransportError::Connection(_)
            ),
            "{code} {message}"
        );
    }
}
