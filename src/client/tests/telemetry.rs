//! What an observed method records ([`crate::client::telemetry`]): each request's outcome and the decision taken on
//! it, the pauses of a wait; and nothing at all when nobody observes.

use super::{config, KEY};
use crate::client::output::OutputPlanner;
use crate::client::params::Params;
use crate::client::telemetry::{
    Attempt, Failure, Operation, Pause, PauseReason, Resend, OPERATIONS,
};
use crate::client::{
    agent_runs, polling::Until, realtime, runs, Body, CallOptions, Env, Flow, Goal, Method, Read,
    Step, TransportError,
};

/// What a step left: a request's record, or a pause between calls.
#[derive(Debug, PartialEq)]
enum Record {
    Attempt(Attempt),
    Pause(Pause),
}

/// Takes what the last step left, in order.
fn take(flow: &mut Flow, into: &mut Vec<Record>) {
    if let Some(a) = flow.take_attempt() {
        into.push(Record::Attempt(a));
    }
    if let Some(p) = flow.take_pause() {
        into.push(Record::Pause(p));
    }
}

/// A scripted outcome of one request.
enum Reply {
    Http(u16, Vec<(&'static str, &'static str)>, &'static str),
    Transport(TransportError),
}

fn env(now_ms: u64) -> Env {
    Env {
        now_ms,
        jitter: 0.0,
    }
}

/// Runs `flow` against `replies` (observed from its first step when `observe`), each answer taking 10 ms; returns the
/// records taken after every step, in order.
fn drive(mut flow: Flow, replies: Vec<Reply>, observe: bool) -> Vec<Record> {
    if observe {
        flow.observe();
    }
    let mut replies = replies.into_iter();
    let mut now = 1_700_000_000_000u64;
    let mut records = Vec::new();
    for _ in 0..100 {
        let step = flow.next(now);
        take(&mut flow, &mut records);
        match step {
            Step::Send { .. } => {
                now += 10;
                match replies.next().expect("more requests than scripted") {
                    Reply::Http(status, headers, body) => {
                        let headers: Vec<(String, String)> = headers
                            .iter()
                            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                            .collect();
                        flow.on_response(status, &headers, Body::Text(body), env(now));
                    }
                    Reply::Transport(e) => flow.on_transport_error(e, env(now)),
                }
            }
            Step::Sleep { ms } => now += ms,
            Step::Done(_) => {
                assert!(replies.next().is_none(), "ended before every reply");
                return records;
            }
        }
    }
    panic!("the flow never ended");
}

fn attempts(records: &[Record]) -> Vec<&Attempt> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Attempt(a) => Some(a),
            Record::Pause(_) => None,
        })
        .collect()
}

fn create_run() -> Flow {
    let params = Params::from_text(
        r#"{"agent":"agt_1","files":[{"url":"https://files.example.com/a.pdf"}]}"#,
    )
    .unwrap();
    let spec = agent_runs::create_params(params).unwrap();
    Flow::single(
        &config(),
        spec,
        &CallOptions::default(),
        Goal::Data,
        [3; 16],
    )
    .unwrap()
}

fn retrieve_run() -> Flow {
    retrieve_run_with(&CallOptions::default())
}

fn retrieve_run_with(options: &CallOptions) -> Flow {
    Flow::single(
        &config(),
        runs::retrieve("exr_1").unwrap(),
        options,
        Goal::Data,
        [0; 16],
    )
    .unwrap()
}

const RUN: &str = r#"{"id":"arn_1","status":"queued"}"#;

#[test]
fn an_unobserved_flow_keeps_no_record() {
    let mut flow = retrieve_run();
    let step = flow.next(0);
    assert!(matches!(step, Step::Send { .. }));
    flow.on_response(503, &[], Body::Text(""), env(0));
    assert!(matches!(flow.next(0), Step::Sleep { .. }));
    assert_eq!((flow.take_attempt(), flow.take_pause()), (None, None));
    let records = drive(
        create_run(),
        vec![
            Reply::Transport(TransportError::Connection("socket hang up".into())),
            Reply::Http(201, vec![], RUN),
        ],
        false,
    );
    assert!(records.is_empty());
}

#[test]
fn a_lost_answer_resent_is_two_attempts_of_one_call_the_second_saying_why() {
    let records = drive(
        create_run(),
        vec![
            Reply::Transport(TransportError::Connection("socket hang up".into())),
            Reply::Http(201, vec![("X-Request-Id", "req_2")], RUN),
        ],
        true,
    );
    assert_eq!(
        records,
        vec![
            Record::Attempt(Attempt {
                call: 1,
                number: 1,
                resends: 0,
                resend: None,
                method: Method::Post,
                idempotency_key: true,
                status: None,
                failure: Some(Failure::Connection),
                retry: Some(Pause {
                    ms: 500,
                    reason: PauseReason::Backoff
                }),
            }),
            Record::Attempt(Attempt {
                call: 1,
                number: 2,
                resends: 1,
                resend: Some(Resend::AnswerLost),
                method: Method::Post,
                idempotency_key: true,
                status: Some(201),
                failure: None,
                retry: None,
            }),
        ]
    );
    assert_eq!(Resend::AnswerLost.kind(), "answer_lost");
}

#[test]
fn each_retry_records_its_pause_and_whether_retry_after_set_it() {
    let options = CallOptions {
        max_retries: Some(3),
        ..CallOptions::default()
    };
    let flow = retrieve_run_with(&options);
    let records = drive(
        flow,
        vec![
            Reply::Http(429, vec![("retry-after", "2")], ""),
            Reply::Http(503, vec![("x-request-id", "req_b")], ""),
            Reply::Transport(TransportError::Timeout),
            Reply::Http(200, vec![], RUN),
        ],
        true,
    );
    let seen: Vec<_> = attempts(&records)
        .iter()
        .map(|a| {
            (
                a.number,
                a.resend,
                a.status,
                a.failure,
                a.retry,
                a.idempotency_key,
            )
        })
        .collect();
    let pause = |ms, reason| Some(Pause { ms, reason });
    assert_eq!(
        seen,
        vec![
            (
                1,
                None,
                Some(429),
                None,
                pause(2000, PauseReason::RetryAfter),
                false
            ),
            (
                2,
                Some(Resend::Status(429)),
                Some(503),
                None,
                pause(1000, PauseReason::Backoff),
                false
            ),
            (
                3,
                Some(Resend::Status(503)),
                None,
                Some(Failure::Timeout),
                pause(2000, PauseReason::Backoff),
                false
            ),
            (4, Some(Resend::Timeout), Some(200), None, None, false),
        ],
        "a GET carries no idempotency key"
    );
    assert_eq!(Resend::Status(429).code(), 429);
}

#[test]
fn the_last_attempt_of_a_failed_call_has_no_retry() {
    let options = CallOptions {
        max_retries: Some(1),
        ..CallOptions::default()
    };
    let flow = retrieve_run_with(&options);
    let records = drive(
        flow,
        vec![
            Reply::Transport(TransportError::NotSent("ECONNREFUSED".into())),
            Reply::Http(500, vec![], ""),
        ],
        true,
    );
    let last = attempts(&records)[1];
    assert_eq!(
        (last.resend, last.status, last.retry),
        (Some(Resend::NotSent), Some(500), None)
    );
}

#[test]
fn observing_after_the_first_send_records_that_request() {
    let mut flow = retrieve_run();
    assert!(matches!(flow.next(0), Step::Send { .. }));
    flow.observe();
    flow.on_response(200, &[], Body::Text(RUN), env(0));
    assert!(matches!(flow.next(0), Step::Done(Ok(_))));
    let mut records = Vec::new();
    take(&mut flow, &mut records);
    assert_eq!(attempts(&records).len(), 1);
    assert_eq!(attempts(&records)[0].number, 1);
    assert_eq!(attempts(&records)[0].status, Some(200));
}

#[test]
fn an_observed_call_has_every_answer_reported_to_the_core() {
    let mut flow = retrieve_run();
    assert!(
        matches!(
            flow.next(0),
            Step::Send {
                read: Read::FinalJson,
                ..
            }
        ),
        "unobserved at the default level: the host may end the call on the answer"
    );
    let mut flow = retrieve_run();
    flow.observe();
    assert!(
        matches!(
            flow.next(0),
            Step::Send {
                read: Read::Json,
                ..
            }
        ),
        "observed: each answer goes to the core, which records it"
    );
}

#[test]
fn a_followed_redirect_is_a_resend_of_the_same_attempt() {
    let records = drive(
        retrieve_run(),
        vec![
            Reply::Http(307, vec![("location", "/v1/runs/exr_1?region=eu")], ""),
            Reply::Http(200, vec![], RUN),
        ],
        true,
    );
    let seen: Vec<_> = attempts(&records)
        .iter()
        .map(|a| (a.number, a.resends, a.resend, a.status, a.retry))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1, 0, None, Some(307), None),
            (1, 1, Some(Resend::Redirect), Some(200), None)
        ]
    );
}

#[test]
fn a_waits_polls_are_its_numbered_calls_with_the_pauses_between_them() {
    let planner = agent_runs::wait_for("arn_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    let records = drive(
        flow,
        vec![
            Reply::Http(200, vec![], r#"{"id":"arn_1","status":"waiting"}"#),
            Reply::Http(503, vec![], ""),
            Reply::Http(200, vec![], r#"{"id":"arn_1","status":"completed"}"#),
        ],
        true,
    );
    let seen: Vec<String> = records
        .iter()
        .map(|r| match r {
            Record::Attempt(a) => format!("call {} attempt {} -> {:?}", a.call, a.number, a.status),
            Record::Pause(p) => format!("pause {} {}", p.ms, p.reason.as_str()),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "call 1 attempt 1 -> Some(200)",
            "pause 5000 poll",
            "call 2 attempt 1 -> Some(503)",
            "call 2 attempt 2 -> Some(200)",
        ]
    );
}

#[test]
fn an_uploads_steps_are_its_numbered_calls_and_records_hold_no_secret() {
    let mut flow = Flow::upload(
        &config(),
        "a.pdf",
        "application/pdf",
        &CallOptions::default(),
        [7; 16],
    )
    .unwrap();
    flow.observe();
    let mut records = Vec::new();
    let answers = [
        r#"{"id":"file_1","status":"pending","uploadUrl":"https://storage.example.net:8443/up/file_1?sig=TOKEN123&exp=9"}"#,
        "",
        r#"{"id":"file_1","status":"ready"}"#,
    ];
    let mut answers = answers.iter();
    for _ in 0..10 {
        let step = flow.next(0);
        take(&mut flow, &mut records);
        match step {
            Step::Send { .. } => {
                let body = answers.next().unwrap();
                flow.on_response(200, &[], Body::Text(body), env(0));
            }
            Step::Sleep { .. } => {}
            Step::Done(result) => {
                assert!(result.is_ok(), "{result:?}");
                break;
            }
        }
    }
    let servers: Vec<_> = attempts(&records)
        .iter()
        .map(|a| (a.call, a.method, a.idempotency_key))
        .collect();
    assert_eq!(
        servers,
        vec![
            (1, Method::Post, true),
            (2, Method::Put, false),
            (3, Method::Get, false),
        ]
    );
    let printed = format!("{records:?}");
    for secret in [KEY, "TOKEN123", "sig=", "a.pdf", "uploadUrl"] {
        assert!(!printed.contains(secret), "{secret} in {printed}");
    }
}

#[test]
fn a_download_records_its_pauses_while_the_output_is_not_ready() {
    let planner = OutputPlanner::new("exr_1", "out.pdf").unwrap();
    let flow = Flow::download(&config(), planner, &CallOptions::default());
    let records = drive(
        flow,
        vec![
            Reply::Http(
                409,
                vec![("retry-after", "1")],
                r#"{"error":{"code":"output_not_ready","message":"not yet"}}"#,
            ),
            Reply::Http(
                302,
                vec![("location", "https://files.example.com/o?sig=S")],
                "",
            ),
            Reply::Http(200, vec![], "bytes"),
        ],
        true,
    );
    let pauses: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Pause(p) => Some(p.reason),
            Record::Attempt(_) => None,
        })
        .collect();
    assert_eq!(pauses, [PauseReason::OutputNotReady]);
    assert_eq!(attempts(&records).last().unwrap().method, Method::Get);
}

/// The strings of the array `name` of `telemetry.js`, which turns the numbers of the records into names.
fn js_table(name: &str) -> Vec<&'static str> {
    let js = include_str!("../../wasm/telemetry.js");
    let start = js
        .find(&format!("const {name} = ["))
        .unwrap_or_else(|| panic!("{name} in telemetry.js"));
    let end = start + js[start..].find("];").unwrap();
    js[start..end].split('"').skip(1).step_by(2).collect()
}

#[test]
fn every_operation_is_named_in_the_drivers_table_in_the_same_order() {
    assert_eq!(js_table("OPERATIONS"), OPERATIONS);
    assert_eq!(Operation::Pipeline.name(), "pipeline");
    assert_eq!(Operation::AgentRunsWaitFor.name(), "agentRuns.waitFor");
}

#[test]
fn the_hosts_tables_name_each_reason_and_failure_by_its_number() {
    let resends = [
        Resend::Timeout,
        Resend::AnswerLost,
        Resend::NotSent,
        Resend::Redirect,
    ];
    let mut names = vec![""];
    for r in resends {
        assert_eq!(
            usize::from(r.code()),
            names.len(),
            "{r:?} is numbered by its place"
        );
        names.push(r.kind());
    }
    assert_eq!(js_table("RESENDS"), names);
    assert_eq!(
        Resend::Status(503).code(),
        503,
        "a status is its own number"
    );
    let failures = [
        Failure::Timeout,
        Failure::Connection,
        Failure::Aborted,
        Failure::TooLarge,
    ];
    let mut names = vec![""];
    for f in failures {
        assert_eq!(
            f as usize + 1,
            names.len(),
            "{f:?} is numbered by its place"
        );
        names.push(f.code());
    }
    assert_eq!(js_table("FAILURES"), names);
    let reasons = [
        PauseReason::RetryAfter,
        PauseReason::Backoff,
        PauseReason::Poll,
        PauseReason::OutputNotReady,
    ];
    let mut names = vec![""];
    for r in reasons {
        assert_eq!(
            r as usize + 1,
            names.len(),
            "{r:?} is numbered by its place"
        );
        names.push(r.as_str());
    }
    assert_eq!(js_table("PAUSES"), names);
}

#[test]
fn a_session_answer_without_an_address_is_one_answered_attempt_and_the_method_fails_with_unexpected_shape(
) {
    // The request succeeded (its span ends with the 201, no failure, no resend); the method fails on what it answered.
    let session = || {
        let spec = realtime::create_session(&realtime::RealtimeSessionParams::default()).unwrap();
        Flow::single(
            &config(),
            spec,
            &CallOptions::default(),
            Goal::RealtimeSession,
            [5; 16],
        )
        .unwrap()
    };
    for (body, code) in [
        (r#"{"id":"rts_1"}"#, Some("unexpected_shape")),
        (
            r#"{"id":"rts_1","url":"https://h/x?ticket=T"}"#,
            Some("unexpected_shape"),
        ),
        (r#"{"id":"rts_1","wsUrl":"wss://h/x?ticket=T"}"#, None),
    ] {
        let mut flow = session();
        flow.observe();
        assert!(matches!(
            flow.next(0),
            Step::Send {
                read: Read::Text,
                ..
            }
        ));
        flow.on_response(201, &[], Body::Text(body), env(0));
        let Step::Done(result) = flow.next(0) else {
            panic!("one answer ends the call")
        };
        let attempt = flow.take_attempt().expect("the request's record");
        assert_eq!(
            (
                attempt.call,
                attempt.number,
                attempt.status,
                attempt.failure,
                attempt.retry
            ),
            (1, 1, Some(201), None, None),
            "{body}"
        );
        assert_eq!(attempt.method, Method::Post);
        assert_eq!(result.err().map(|e| e.code).as_deref(), code, "{body}");
        assert_eq!(
            Operation::RealtimeCreateSession.name(),
            "realtime.createSession"
        );
    }
}
