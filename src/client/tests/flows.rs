//! The composed flows of [`Flow`]: waits, uploads, downloads, pages, and the abort and deadline rules every flow
//! shares.

use super::{config, KEY};
use crate::client::output::OutputPlanner;
use crate::client::polling::Until;
use crate::client::{
    agent_runs, agents, realtime, runs, AnswerMeta, ApiError, Body, CallOptions, ClientConfig, Env,
    ErrorKind, Finished, Flow, FlowValue, Goal, HttpRequest, LogLevel, Method, Read, Step,
    TransportError,
};

/// A scripted answer: status, headers, and a body reported as text or as the host's parse (its `status`).
enum Answer {
    Text(u16, Vec<(&'static str, &'static str)>, &'static str),
    Parsed(u16, Vec<(&'static str, &'static str)>, Option<&'static str>),
    /// An answer whose body the host left unread ([`Body::Unread`]).
    Unread(u16, Vec<(&'static str, &'static str)>),
    Transport(TransportError),
}

/// What a driven flow did.
struct Trace {
    sends: Vec<(HttpRequest, Read)>,
    sleeps: Vec<u64>,
    result: Result<Finished, ApiError>,
}

fn env(now_ms: u64) -> Env {
    Env {
        now_ms,
        jitter: 0.0,
    }
}

fn pairs(headers: &[(&'static str, &'static str)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A one-call flow of `spec` whose result is the answer's data, with the default options.
fn data_call(spec: crate::client::RequestSpec) -> Flow {
    Flow::single(
        &config(),
        spec,
        &CallOptions::default(),
        Goal::Data,
        [0; 16],
    )
    .unwrap()
}

/// `files.upload` of `a.pdf` (`application/pdf`).
fn pdf_upload(config: &ClientConfig, options: &CallOptions) -> Flow {
    Flow::upload(config, "a.pdf", "application/pdf", options, [7; 16]).unwrap()
}

/// One `runs.list` page flow answered 200 with `body`.
fn drive_page(body: &'static str) -> Trace {
    let spec = runs::list(&runs::RunListParams::default()).unwrap();
    let flow = Flow::page(&config(), spec, None, &CallOptions::default()).unwrap();
    drive(flow, vec![Answer::Text(200, vec![], body)], 10, None)
}

/// Runs `flow` against scripted answers on a fake clock: each answer takes `held_ms`, each sleep its length.
/// `abort_at_sleep` aborts the flow in place of its n-th sleep (0-based), as the host does when the signal fires.
fn drive(
    mut flow: Flow,
    answers: Vec<Answer>,
    held_ms: u64,
    abort_at_sleep: Option<usize>,
) -> Trace {
    let mut answers = answers.into_iter();
    let mut now = 1_700_000_000_000u64;
    let (mut sends, mut sleeps) = (Vec::new(), Vec::new());
    for _ in 0..1_000 {
        match flow.next(now) {
            Step::Send { request, read } => {
                sends.push((request, read));
                now += held_ms;
                match answers
                    .next()
                    .expect("the flow sent more requests than scripted")
                {
                    Answer::Text(status, headers, body) => {
                        flow.on_response(status, &pairs(&headers), Body::Text(body), env(now))
                    }
                    Answer::Parsed(status, headers, body_status) => flow.on_response(
                        status,
                        &pairs(&headers),
                        Body::Parsed {
                            status: body_status,
                        },
                        env(now),
                    ),
                    Answer::Unread(status, headers) => {
                        flow.on_response(status, &pairs(&headers), Body::Unread, env(now))
                    }
                    Answer::Transport(e) => flow.on_transport_error(e, env(now)),
                }
            }
            Step::Sleep { ms } => {
                if abort_at_sleep == Some(sleeps.len()) {
                    flow.abort();
                }
                sleeps.push(ms);
                now += ms;
            }
            Step::Done(result) => {
                assert!(
                    answers.next().is_none(),
                    "the flow ended before every scripted answer"
                );
                return Trace {
                    sends,
                    sleeps,
                    result,
                };
            }
        }
    }
    panic!("the flow never ended");
}

fn no_retries() -> CallOptions {
    CallOptions {
        max_retries: Some(0),
        ..CallOptions::default()
    }
}

#[test]
fn wait_that_polls_three_times_ends_on_the_third_answer() {
    let planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    let trace = drive(
        flow,
        vec![
            Answer::Parsed(200, vec![("x-request-id", "req_1")], Some("queued")),
            Answer::Parsed(200, vec![("x-request-id", "req_2")], Some("processing")),
            Answer::Parsed(200, vec![("x-request-id", "req_3")], Some("processed")),
        ],
        130_000,
        None,
    );
    assert_eq!(trace.sends.len(), 3);
    assert!(trace.sends.iter().all(|(r, read)| *read == Read::Json
        && r.method == Method::Get
        && r.url.ends_with("/v1/runs/exr_1?wait=120")));
    assert!(trace.sleeps.is_empty(), "an honest long poll pays no pause");
    let done = trace.result.unwrap();
    assert_eq!(done.value, FlowValue::Data);
    assert_eq!(done.response.request_id.as_deref(), Some("req_3"));
}

#[test]
fn wait_answered_early_with_the_same_status_pauses_to_the_floor() {
    let planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    let trace = drive(
        flow,
        vec![
            Answer::Parsed(200, vec![], Some("processing")),
            Answer::Parsed(200, vec![], Some("processing")),
            Answer::Parsed(200, vec![], Some("processed")),
        ],
        100,
        None,
    );
    // The second early answer repeats the status: the pause fills the 1 s floor from the poll's start.
    assert_eq!(trace.sleeps, vec![900]);
    assert!(trace.result.is_ok());
}

#[test]
fn wait_without_status_in_the_parsed_body_is_unexpected_shape() {
    let planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    let trace = drive(flow, vec![Answer::Parsed(200, vec![], None)], 10, None);
    assert_eq!(trace.result.unwrap_err().code, "unexpected_shape");
}

#[test]
fn wait_past_its_deadline_fails_with_wait_deadline() {
    let planner = crate::client::agent_runs::wait_for("agr_1", Until::Finished)
        .unwrap()
        .with_deadline(Some(8_000));
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    // `waiting` is not held for: the planner pauses 5 s, then 10 s, which would end past the 8 s deadline.
    let trace = drive(
        flow,
        vec![
            Answer::Parsed(200, vec![], Some("waiting")),
            Answer::Parsed(200, vec![], Some("waiting")),
        ],
        100,
        None,
    );
    assert_eq!(trace.sends.len(), 2);
    assert_eq!(trace.sleeps, vec![5_000]);
    let err = trace.result.unwrap_err();
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::Timeout, "wait_deadline")
    );
}

#[test]
fn wait_aborted_during_its_pause_ends_with_aborted_and_sends_nothing_more() {
    let planner = crate::client::agent_runs::wait_for("agr_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &CallOptions::default());
    let trace = drive(
        flow,
        vec![Answer::Parsed(200, vec![], Some("waiting"))],
        100,
        Some(0),
    );
    assert_eq!(trace.sends.len(), 1);
    let err = trace.result.unwrap_err();
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::UserAbort, "aborted")
    );
}

#[test]
fn wait_poll_that_fails_ends_the_wait_with_that_error() {
    let planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let flow = Flow::poll(&config(), planner, &no_retries());
    let trace = drive(
        flow,
        vec![Answer::Text(
            404,
            vec![],
            r#"{"code":"not_found","message":"no such run"}"#,
        )],
        10,
        None,
    );
    assert_eq!(trace.result.unwrap_err().status, Some(404));
}

#[test]
fn upload_registers_puts_the_bytes_without_the_key_then_waits_until_ready() {
    let flow = pdf_upload(&config(), &CallOptions::default());
    let trace = drive(
        flow,
        vec![
            Answer::Text(
                201,
                vec![],
                r#"{"id":"file_1","status":"pending","uploadUrl":"https://uploads.example/u/1"}"#,
            ),
            Answer::Text(200, vec![], ""),
            Answer::Parsed(200, vec![("x-request-id", "req_r")], Some("ready")),
        ],
        10,
        None,
    );
    let (register, put, poll) = (&trace.sends[0], &trace.sends[1], &trace.sends[2]);
    assert_eq!((register.0.method, register.1), (Method::Post, Read::Text));
    assert_eq!(put.0.method, Method::Put);
    assert_eq!(put.0.url, "https://uploads.example/u/1");
    assert!(put.0.raw_body && put.0.body.is_none());
    assert!(
        put.0.headers.iter().all(|(_, v)| !v.contains(KEY)),
        "the key never goes to the upload host"
    );
    assert!(put
        .0
        .headers
        .contains(&("content-type".to_owned(), "application/pdf".to_owned())));
    assert_eq!((poll.0.method, poll.1), (Method::Get, Read::Json));
    assert!(poll.0.url.ends_with("/v1/files/file_1"));
    // A file that is ready at once costs no pause.
    assert!(trace.sleeps.is_empty());
    let done = trace.result.unwrap();
    assert_eq!(done.response.request_id.as_deref(), Some("req_r"));
}

#[test]
fn an_https_client_never_sends_or_reads_a_files_bytes_over_plain_http() {
    // Upload: the registration names a plain http upload URL.
    let upload = pdf_upload(&config(), &no_retries());
    let trace = drive(
        upload,
        vec![Answer::Text(
            201,
            vec![],
            r#"{"id":"file_1","uploadUrl":"http://uploads.example/u/1"}"#,
        )],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 1, "no PUT is sent");
    assert_eq!(trace.result.unwrap_err().code, "insecure_url");
    // Download: the output route points at a plain http URL (loopback too: the caller chose https).
    let planner = OutputPlanner::new("exr_1", "a.pdf").unwrap();
    let download = Flow::download(&config(), planner, &no_retries());
    let trace = drive(
        download,
        vec![Answer::Text(
            302,
            vec![("location", "http://127.0.0.1:9/o?sig=1")],
            "",
        )],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 1, "no GET of the bytes");
    assert_eq!(trace.result.unwrap_err().code, "insecure_url");
    // An http API (the local emulator) may name http URLs.
    let local = ClientConfig::new(KEY, "http://127.0.0.1:8787").unwrap();
    let upload = pdf_upload(&local, &no_retries());
    let trace = drive(
        upload,
        vec![
            Answer::Text(
                201,
                vec![],
                r#"{"id":"file_1","uploadUrl":"http://127.0.0.1:8787/uploads/t"}"#,
            ),
            Answer::Text(200, vec![], ""),
            Answer::Parsed(200, vec![], Some("ready")),
        ],
        10,
        None,
    );
    assert_eq!(trace.sends[1].0.url, "http://127.0.0.1:8787/uploads/t");
    assert!(trace.result.is_ok());
}

#[test]
fn upload_whose_put_fails_ends_with_the_put_error_and_polls_nothing() {
    let flow = pdf_upload(&config(), &no_retries());
    let trace = drive(
        flow,
        vec![
            Answer::Text(
                201,
                vec![],
                r#"{"id":"file_1","uploadUrl":"https://uploads.example/u/1"}"#,
            ),
            Answer::Text(403, vec![], "signature expired"),
        ],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 2);
    assert_eq!(trace.result.unwrap_err().status, Some(403));
}

#[test]
fn upload_registration_without_upload_url_is_unexpected_shape() {
    let flow = pdf_upload(&config(), &no_retries());
    let trace = drive(
        flow,
        vec![Answer::Text(201, vec![], r#"{"id":"file_1"}"#)],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 1);
    assert_eq!(trace.result.unwrap_err().code, "unexpected_shape");
}

#[test]
fn download_waits_out_output_not_ready_then_reads_the_bytes() {
    let planner = OutputPlanner::new("exr_1", "a.pdf").unwrap();
    let flow = Flow::download(&config(), planner, &no_retries());
    let trace = drive(
        flow,
        vec![
            Answer::Text(
                409,
                vec![],
                r#"{"code":"output_not_ready","retryable":true}"#,
            ),
            Answer::Text(302, vec![("location", "https://cdn.example/o?sig=1")], ""),
            Answer::Text(200, vec![("x-request-id", "req_d")], ""),
        ],
        10,
        None,
    );
    assert_eq!(trace.sleeps, vec![1_000]);
    assert_eq!(trace.sends[1].1, Read::Text);
    let (download, read) = &trace.sends[2];
    assert_eq!(
        (download.url.as_str(), *read),
        ("https://cdn.example/o?sig=1", Read::Bytes)
    );
    assert!(download.headers.iter().all(|(_, v)| !v.contains(KEY)));
    assert_eq!(trace.result.unwrap().value, FlowValue::Bytes);
}

#[test]
fn download_aborted_while_waiting_for_the_output_ends_with_aborted() {
    let planner = OutputPlanner::new("exr_1", "a.pdf").unwrap();
    let flow = Flow::download(&config(), planner, &no_retries());
    let trace = drive(
        flow,
        vec![Answer::Text(
            409,
            vec![],
            r#"{"code":"output_not_ready","retryable":true}"#,
        )],
        10,
        Some(0),
    );
    assert_eq!(trace.result.unwrap_err().code, "aborted");
}

#[test]
fn download_attempt_aborted_by_the_signal_is_not_waited_out() {
    let planner = OutputPlanner::new("exr_1", "a.pdf").unwrap();
    let flow = Flow::download(&config(), planner, &CallOptions::default());
    let trace = drive(
        flow,
        vec![Answer::Transport(TransportError::Aborted)],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 1);
    assert_eq!(trace.result.unwrap_err().kind, ErrorKind::UserAbort);
}

#[test]
fn page_reports_has_more_and_the_next_cursor() {
    let trace =
        drive_page(r#"{"object":"list","data":[{"id":"exr_1"}],"hasMore":true,"cursor":"c2"}"#);
    assert_eq!(trace.sends[0].1, Read::Page);
    match trace.result.unwrap().value {
        FlowValue::Page {
            items,
            has_more,
            cursor,
            next_cursor,
        } => {
            assert_eq!(items.len(), 1);
            assert!(has_more, "hasMore is read as has_more");
            assert_eq!(cursor.as_deref(), Some("c2"));
            assert_eq!(next_cursor.as_deref(), Some("c2"));
        }
        other => panic!("not a page: {other:?}"),
    }
}

#[test]
fn page_reported_without_its_items_reads_as_the_whole_page_does() {
    // `Read::Page`: a host that keeps the items reports the page with `data` set to `[]`.
    let whole =
        r#"{"object":"list","data":[{"id":"exr_1"},{"id":"exr_2"}],"has_more":true,"cursor":"c3"}"#;
    let without = r#"{"object":"list","data":[],"has_more":true,"cursor":"c3"}"#;
    let read = |body| match drive_page(body).result.unwrap().value {
        FlowValue::Page {
            items,
            has_more,
            cursor,
            next_cursor,
        } => (items.len(), has_more, cursor, next_cursor),
        other => panic!("not a page: {other:?}"),
    };
    let (count, has_more, cursor, next) = read(whole);
    assert_eq!(count, 2);
    assert_eq!((0, has_more, cursor, next), read(without));
}

#[test]
fn page_that_repeats_its_cursor_has_no_next_page() {
    let spec = runs::list(&runs::RunListParams::default()).unwrap();
    let flow = Flow::page(
        &config(),
        spec,
        Some("c2".to_owned()),
        &CallOptions::default(),
    )
    .unwrap();
    let trace = drive(
        flow,
        vec![Answer::Text(
            200,
            vec![],
            r#"{"data":[],"has_more":true,"cursor":"c2"}"#,
        )],
        10,
        None,
    );
    assert!(matches!(
        trace.result.unwrap().value,
        FlowValue::Page {
            has_more: true,
            next_cursor: None,
            ..
        }
    ));
}

#[test]
fn single_json_call_is_final_on_the_host_only_below_info() {
    let spec = || agents::retrieve("agt_1").unwrap();
    let mut quiet = config();
    quiet.log_level = LogLevel::Warn;
    let mut flow =
        Flow::single(&quiet, spec(), &CallOptions::default(), Goal::Data, [0; 16]).unwrap();
    assert!(matches!(
        flow.next(0),
        Step::Send {
            read: Read::FinalJson,
            ..
        }
    ));
    let mut loud = config();
    loud.log_level = LogLevel::Info;
    let mut flow =
        Flow::single(&loud, spec(), &CallOptions::default(), Goal::Data, [0; 16]).unwrap();
    assert!(matches!(
        flow.next(0),
        Step::Send {
            read: Read::Json,
            ..
        }
    ));
    let mut flow =
        Flow::single(&quiet, spec(), &CallOptions::default(), Goal::Void, [0; 16]).unwrap();
    assert!(matches!(
        flow.next(0),
        Step::Send {
            read: Read::Text,
            ..
        }
    ));
}

/// `runs.outputUrl`'s flow answered 302 with `location`.
fn output_url(location: &'static str) -> Result<Finished, ApiError> {
    let spec = runs::output_url("exr_1", "a.pdf").unwrap();
    let flow = Flow::single(
        &config(),
        spec,
        &CallOptions::default(),
        Goal::Location,
        [0; 16],
    )
    .unwrap();
    let answer = Answer::Text(302, vec![("location", location)], "");
    drive(flow, vec![answer], 10, None).result
}

#[test]
fn output_url_ends_with_the_location() {
    assert_eq!(
        output_url("https://cdn.example/o").unwrap().value,
        FlowValue::Location(Some("https://cdn.example/o".to_owned()))
    );
}

#[test]
fn output_url_resolves_a_relative_location_and_refuses_any_but_http_s() {
    assert_eq!(
        output_url("/dl/a.pdf?sig=1").unwrap().value,
        FlowValue::Location(Some("https://api.example.com/dl/a.pdf?sig=1".to_owned()))
    );
    assert_eq!(
        output_url("//cdn.example/o").unwrap().value,
        FlowValue::Location(Some("https://cdn.example/o".to_owned()))
    );
    for hostile in [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "https://user@cdn.example/o",
        "https://cdn.example/o\nX-Injected: 1",
    ] {
        let err = output_url(hostile).unwrap_err();
        assert_eq!(
            (err.kind, err.code.as_str(), err.status),
            (ErrorKind::InvalidResponse, "invalid_location", Some(302)),
            "{hostile}"
        );
    }
}

#[test]
fn flow_aborted_before_its_first_send_sends_nothing() {
    let mut flow = data_call(agents::retrieve("agt_1").unwrap());
    flow.abort();
    match flow.next(0) {
        Step::Done(Err(e)) => {
            assert_eq!((e.kind, e.code.as_str()), (ErrorKind::UserAbort, "aborted"))
        }
        other => panic!("expected the aborted end, got {other:?}"),
    }
}

#[test]
fn retry_pause_aborted_ends_the_call_with_aborted() {
    let flow = data_call(agents::retrieve("agt_1").unwrap());
    let trace = drive(flow, vec![Answer::Text(503, vec![], "")], 10, Some(0));
    assert_eq!(trace.sends.len(), 1);
    assert_eq!(trace.result.unwrap_err().code, "aborted");
}

#[test]
fn timed_out_attempt_of_a_get_is_resent_then_reported_as_timeout() {
    let spec = agents::retrieve("agt_1").unwrap();
    let options = CallOptions {
        max_retries: Some(1),
        ..CallOptions::default()
    };
    let flow = Flow::single(&config(), spec, &options, Goal::Data, [0; 16]).unwrap();
    let trace = drive(
        flow,
        vec![
            Answer::Transport(TransportError::Timeout),
            Answer::Transport(TransportError::Timeout),
        ],
        10,
        None,
    );
    assert_eq!(trace.sends.len(), 2);
    let err = trace.result.unwrap_err();
    assert_eq!(
        (err.kind, err.code.as_str()),
        (ErrorKind::Timeout, "timeout")
    );
}

#[test]
fn answer_meta_reads_request_id_and_replay_as_the_call_does() {
    let meta = AnswerMeta::read(&pairs(&[
        ("x-request-id", "req_9"),
        ("idempotent-replay", " TRUE "),
    ]));
    assert_eq!(
        (meta.request_id.as_deref(), meta.idempotent_replay),
        (Some("req_9"), true)
    );
    let meta = AnswerMeta::read(&pairs(&[("idempotent-replay", "yes")]));
    assert_eq!((meta.request_id, meta.idempotent_replay), (None, false));
}

/// Numbers readers get wrong (2^53 + 1, -0, 2.2250738585072011e-308, 30 digits): what a page's items hold is what
/// `JSON.parse` reads from the answer.
const NUMBERS_PAGE: &str = r#"{"data":[{"n":[0.1,1e-7,9007199254740993,1.5e300,-0.0,2.2250738585072011e-308,0.30000000000000004,123456789012345678901234567890,7]}],"has_more":false}"#;

#[test]
fn a_pages_numbers_are_read_as_json_parse_reads_them() {
    let trace = drive_page(NUMBERS_PAGE);
    let FlowValue::Page { items, .. } = trace.result.unwrap().value else {
        panic!("not a page");
    };
    let got: Vec<f64> = items[0]["n"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_f64().unwrap())
        .collect();
    let want: Vec<f64> = [
        "0.1",
        "1e-7",
        "9007199254740993",
        "1.5e300",
        "-0.0",
        "2.2250738585072011e-308",
        "0.30000000000000004",
        "123456789012345678901234567890",
        "7",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect();
    assert_eq!(
        got.iter().map(|n| n.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|n| n.to_bits()).collect::<Vec<_>>(),
        "{got:?}"
    );
    assert_eq!(
        items[0]["n"][8],
        serde_json::Value::from(7),
        "a whole number stays an integer"
    );
}

#[test]
fn a_page_of_the_wrong_shape_is_unexpected_shape() {
    for body in [
        r#"[]"#,
        r#"{"data":3}"#,
        r#"{"data":[],"has_more":"yes"}"#,
        r#"{"data":[],"cursor":7}"#,
        r#"{"data":[],"has_more":true,"hasMore":true}"#,
    ] {
        let trace = drive_page(body);
        let err = trace.result.unwrap_err();
        assert_eq!(err.code, "unexpected_shape", "{body}");
        assert!(
            err.message.starts_with("the list answer is not a page"),
            "{body}: {}",
            err.message
        );
    }
}

#[test]
fn a_pages_items_keep_the_services_member_order_as_json_parse_does() {
    let trace = drive_page(
        r#"{"data":[{"object":"run","id":"exr_1","status":"processed","metadata":{"z":"1","a":"2"}}],"has_more":false}"#,
    );
    let FlowValue::Page { items, .. } = trace.result.unwrap().value else {
        panic!("not a page");
    };
    let names = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&items[0]), ["object", "id", "status", "metadata"]);
    assert_eq!(names(&items[0]["metadata"]), ["z", "a"]);
}

/// One `runs.retrieve` call against `answers`.
fn drive_retrieve(answers: Vec<Answer>) -> Trace {
    drive(
        data_call(runs::retrieve("exr_1").unwrap()),
        answers,
        10,
        None,
    )
}

#[test]
fn an_unread_error_body_is_an_error_of_its_status_and_retried_as_an_empty_one_would_be() {
    // The host reads error bodies up to 1 MiB only.
    let trace = drive_retrieve(vec![
        Answer::Unread(503, vec![("retry-after", "2"), ("x-request-id", "req_1")]),
        Answer::Unread(404, vec![("x-request-id", "req_2")]),
    ]);
    assert_eq!(trace.sends[0].0.max_error_body_bytes, 1024 * 1024);
    assert_eq!(trace.sends.len(), 2, "a 503 is retried whatever its body");
    assert_eq!(
        trace.sleeps,
        vec![2_000],
        "Retry-After is read from the headers"
    );
    let err = trace.result.unwrap_err();
    assert_eq!((err.status, err.code.as_str()), (Some(404), "not_found"));
    assert_eq!(err.request_id.as_deref(), Some("req_2"));
    assert!(
        err.message
            .contains("longer than 1048576 bytes and was not read"),
        "{}",
        err.message
    );
}

#[test]
fn an_unread_body_of_a_success_fails_as_too_large() {
    let trace = drive_retrieve(vec![Answer::Unread(200, vec![])]);
    assert_eq!(trace.result.unwrap_err().code, "response_too_large");
}

#[test]
fn a_2xx_that_is_not_a_json_object_is_unexpected_shape_never_data_and_not_resent() {
    // A 200 of `null` or `[]` must not resolve `runs.retrieve` to `null` or `[]`. The host reports a body that does
    // not parse to an object as its text.
    for body in ["null", "[]", "[1,2]", r#""run""#, "5", "true", ""] {
        let trace = drive(
            data_call(runs::retrieve("exr_1").unwrap()),
            vec![Answer::Text(200, vec![("x-request-id", "req_9")], body)],
            10,
            None,
        );
        assert_eq!(trace.sends.len(), 1, "{body:?} was resent");
        let err = trace.result.unwrap_err();
        assert_eq!(err.code, "unexpected_shape", "{body:?}");
        assert_eq!(err.kind, ErrorKind::InvalidResponse);
        assert_eq!(err.status, Some(200));
        assert_eq!(err.request_id.as_deref(), Some("req_9"));
        assert!(!err.retryable);
        // A wait's poll answered so ends the wait the same way.
        let planner = runs::wait_for("exr_1", Until::Finished).unwrap();
        let flow = Flow::poll(&config(), planner, &CallOptions::default());
        let trace = drive(flow, vec![Answer::Text(200, vec![], body)], 10, None);
        assert_eq!(trace.sends.len(), 1, "poll {body:?}");
        assert_eq!(
            trace.result.unwrap_err().code,
            "unexpected_shape",
            "poll {body:?}"
        );
    }
    // An object, as text or as the host's parse, is the data.
    let trace = drive(
        data_call(runs::retrieve("exr_1").unwrap()),
        vec![Answer::Text(200, vec![], r#"{"id":"exr_1"}"#)],
        10,
        None,
    );
    assert!(trace.result.is_ok());
    let trace = drive(
        data_call(runs::retrieve("exr_1").unwrap()),
        vec![Answer::Parsed(200, vec![], None)],
        10,
        None,
    );
    assert!(trace.result.is_ok());
}

/// The log lines of a wait for the end of an agent run that answers `waiting`, then `completed`, at `level`.
fn wait_logs(level: LogLevel) -> Vec<crate::client::LogRecord> {
    let mut cfg = config();
    cfg.log_level = level;
    let planner = agent_runs::wait_for("agr_1", Until::Finished).unwrap();
    let mut flow = Flow::poll(&cfg, planner, &CallOptions::default());
    let mut answers = ["waiting", "waiting", "completed"].into_iter();
    let mut now = 1_700_000_000_000u64;
    let mut logs = Vec::new();
    for _ in 0..100 {
        match flow.next(now) {
            Step::Send { .. } => {
                now += 130_000;
                let status = answers.next().expect("more polls than scripted");
                flow.on_response(
                    200,
                    &[],
                    Body::Parsed {
                        status: Some(status),
                    },
                    env(now),
                );
            }
            Step::Sleep { ms } => now += ms,
            Step::Done(result) => {
                result.unwrap();
                break;
            }
        }
        logs.extend(flow.take_logs());
    }
    logs
}

#[test]
fn a_wait_for_the_end_of_a_run_blocked_on_a_person_warns_once() {
    let warned: Vec<_> = wait_logs(LogLevel::Warn)
        .into_iter()
        .filter(|l| l.level == LogLevel::Warn)
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].message.contains("is waiting on a person"),
        "{}",
        warned[0].message
    );
    assert!(!warned[0].message.contains(KEY));
    assert!(wait_logs(LogLevel::Error).is_empty());
}

// A live session's address (`realtime.createSession`): read by the core from `url`, else `wsUrl`; an answer without a
// ws(s) address is `unexpected_shape`, and nothing about the error holds the address's ticket.

const SESSION_TICKET: &str = "tkt_SECRET_7f3a9c";

/// The flow of `realtime.createSession`, without retries.
fn session_flow() -> Flow {
    let spec = realtime::create_session(&realtime::RealtimeSessionParams::default()).unwrap();
    Flow::single(
        &config(),
        spec,
        &no_retries(),
        Goal::RealtimeSession,
        [0; 16],
    )
    .unwrap()
}

/// `realtime.createSession` answered 201 with `body`, without retries.
fn drive_session(body: &'static str) -> Trace {
    let flow = session_flow();
    drive(
        flow,
        vec![Answer::Text(201, vec![("x-request-id", "req_rt")], body)],
        10,
        None,
    )
}

/// The `unexpected_shape` error of a session answer, checked to hold no part of the ticket anywhere.
fn refused_session(body: &'static str) -> ApiError {
    let trace = drive_session(body);
    let e = trace.result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidResponse, "{body}");
    assert_eq!(e.code, "unexpected_shape", "{body}");
    assert_eq!(e.status, Some(201));
    assert_eq!(e.request_id.as_deref(), Some("req_rt"));
    for text in [e.message.clone(), format!("{e:?}"), format!("{e}")] {
        assert!(!text.contains(SESSION_TICKET), "{text}");
        assert!(
            !text.contains("h/x"),
            "the address's path is not named either: {text}"
        );
    }
    e
}

#[test]
fn a_session_answer_is_read_by_the_core_and_its_url_is_the_address() {
    let trace = drive_session(
        r#"{"id":"rts_1","url":"wss://h/x?ticket=tkt_SECRET_7f3a9c","expiresIn":60}"#,
    );
    assert_eq!(trace.sends.len(), 1);
    assert_eq!(trace.sends[0].1, Read::Text, "the core reads the answer");
    let done = trace.result.unwrap();
    assert_eq!(
        done.value,
        FlowValue::RealtimeSession {
            url: "wss://h/x?ticket=tkt_SECRET_7f3a9c".into()
        }
    );
    assert_eq!(
        done.response.body,
        serde_json::json!({"id": "rts_1", "url": "wss://h/x?ticket=tkt_SECRET_7f3a9c", "expiresIn": 60})
    );
}

#[test]
fn a_session_answer_with_only_ws_url_has_url_set_to_it_and_keeps_ws_url() {
    let done = drive_session(
        r#"{"id":"rts_2","wsUrl":"ws://127.0.0.1:8787/rt?ticket=tkt_SECRET_7f3a9c"}"#,
    )
    .result
    .unwrap();
    let address = "ws://127.0.0.1:8787/rt?ticket=tkt_SECRET_7f3a9c";
    assert_eq!(
        done.value,
        FlowValue::RealtimeSession {
            url: address.into()
        }
    );
    assert_eq!(
        done.response.body,
        serde_json::json!({"id": "rts_2", "wsUrl": address, "url": address}),
        "url added, wsUrl kept as the service sent it"
    );
    // A `null` url is an absent one.
    let done = drive_session(r#"{"url":null,"wsUrl":"wss://h/x?ticket=tkt_SECRET_7f3a9c"}"#)
        .result
        .unwrap();
    assert_eq!(
        done.response.body["url"],
        "wss://h/x?ticket=tkt_SECRET_7f3a9c"
    );
}

#[test]
fn a_session_answer_without_url_or_ws_url_is_unexpected_shape() {
    for body in [
        r#"{"id":"rts_3"}"#,
        "{}",
        r#"{"url":null}"#,
        r#"{"ticket":"tkt_SECRET_7f3a9c"}"#,
    ] {
        let e = refused_session(body);
        assert!(e.message.contains("no url"), "{}", e.message);
    }
    // Not an object at all: refused as every other data route refuses it.
    for body in ["[]", "null", r#""wss://h/x?ticket=tkt_SECRET_7f3a9c""#, ""] {
        refused_session(body);
    }
}

#[test]
fn a_session_address_that_is_not_a_ws_url_is_unexpected_shape() {
    for body in [
        r#"{"id":"rts_4","url":"https://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":"http://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":""}"#,
        r#"{"id":"rts_4","url":"wss://"}"#,
        r#"{"id":"rts_4","url":"wss:///x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":"wss://user@h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":" wss://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":"WSS://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","url":"/v1/realtime/socket?ticket=tkt_SECRET_7f3a9c"}"#,
        r#"{"id":"rts_4","wsUrl":"ftp://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
        // A url that is there but wrong is refused, never passed over for wsUrl.
        r#"{"id":"rts_4","url":"https://h/x?ticket=tkt_SECRET_7f3a9c","wsUrl":"wss://h/x?ticket=tkt_SECRET_7f3a9c"}"#,
    ] {
        let e = refused_session(body);
        assert!(
            e.message.contains("not a ws:// or wss:// URL"),
            "{}",
            e.message
        );
    }
    for body in [
        r#"{"id":"rts_4","url":5}"#,
        r#"{"id":"rts_4","url":{"href":"wss://h/x?ticket=tkt_SECRET_7f3a9c"}}"#,
        r#"{"id":"rts_4","url":["wss://h/x?ticket=tkt_SECRET_7f3a9c"]}"#,
        r#"{"id":"rts_4","wsUrl":true}"#,
    ] {
        let e = refused_session(body);
        assert!(e.message.contains("not a string"), "{}", e.message);
    }
}

#[test]
fn a_session_answer_of_an_error_status_is_that_error_not_unexpected_shape() {
    let flow = session_flow();
    let trace = drive(
        flow,
        vec![Answer::Text(
            403,
            vec![],
            r#"{"code":"permission_denied","message":"no realtime on this plan"}"#,
        )],
        10,
        None,
    );
    assert_eq!(trace.result.unwrap_err().code, "permission_denied");
}
