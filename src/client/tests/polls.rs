use crate::client::pagination::Page;
use crate::client::polling::{PollPlanner, PollStep, Until};
use crate::client::runs::{self, RunListParams};
use crate::client::{agent_runs, files, ErrorKind, Target};
use serde_json::{json, Value};

/// A simulated service: a run that is `processing` until `finish_at` seconds, then `end_status`.
/// A request with `wait=w` holds until the run finishes or `w` seconds pass.
struct FakeRun {
    now: u64,
    finish_at: u64,
    end_status: &'static str,
}

impl FakeRun {
    fn answer(&mut self, wait: u64) -> Value {
        if self.now < self.finish_at {
            self.now = (self.now + wait).min(self.finish_at);
        }
        let status = if self.now >= self.finish_at {
            self.end_status
        } else {
            "processing"
        };
        json!({"object": "agent_run", "id": "agr_1", "status": status})
    }
}

fn wait_of(spec: &crate::client::RequestSpec) -> u64 {
    u64::from(spec.wait.expect("long polls carry wait"))
}

fn drive_planner(
    mut planner: PollPlanner,
    mut answer: impl FnMut(&crate::client::RequestSpec) -> Value,
) -> (u32, Vec<u64>, Value) {
    let mut sleeps = Vec::new();
    for _ in 0..100_000 {
        match planner.next() {
            PollStep::Request(spec) => {
                let body = answer(&spec);
                planner.on_body(&body);
            }
            PollStep::Sleep { ms } => sleeps.push(ms),
            PollStep::Done(result) => return (planner.requests(), sleeps, result.unwrap()),
        }
    }
    panic!("planner never finished");
}

#[test]
fn wait_for_costs_about_t_over_120_plus_one_requests() {
    for t in [0u64, 30, 119, 120, 121, 600, 3_600, 86_400] {
        let mut run = FakeRun {
            now: 0,
            finish_at: t,
            end_status: "completed",
        };
        let planner = agent_runs::wait_for("agr_1", Until::Finished).unwrap();
        let (requests, sleeps, last) = drive_planner(planner, |spec| {
            assert_eq!(wait_of(spec), 120);
            run.answer(120)
        });
        assert_eq!(last["status"], "completed");
        assert!(sleeps.is_empty());
        let expected = t.div_ceil(120).max(1) as u32;
        assert!(
            requests == expected || requests == expected + 1,
            "T={t}: {requests} requests"
        );
        assert!(
            u64::from(requests) <= t / 120 + 1,
            "T={t}: {requests} requests"
        );
    }
}

#[test]
fn wait_for_long_polls_the_agent_run_route_with_wait_120() {
    let mut planner = agent_runs::wait_for("agr_1", Until::Settled).unwrap();
    let PollStep::Request(spec) = planner.next() else {
        panic!()
    };
    assert_eq!(spec.target, Target::Api("/v1/agent-runs/agr_1".into()));
    assert_eq!(spec.wait, Some(120));
}

#[test]
fn settled_stops_when_the_run_waits_on_a_person() {
    let mut answers = vec!["queued", "processing", "waiting"].into_iter();
    let planner = agent_runs::wait_for("agr_1", Until::Settled).unwrap();
    let (requests, sleeps, last) = drive_planner(
        planner,
        |_| json!({"id": "agr_1", "status": answers.next().unwrap()}),
    );
    assert_eq!(requests, 3);
    assert!(sleeps.is_empty());
    assert_eq!(last["status"], "waiting");
}

#[test]
fn finished_keeps_waiting_through_a_person_with_spaced_polls() {
    let mut answers = vec![
        "waiting",
        "waiting",
        "waiting",
        "waiting",
        "waiting",
        "waiting",
        "processing",
        "failed",
    ]
    .into_iter();
    let planner = agent_runs::wait_for("agr_1", Until::Finished).unwrap();
    let (requests, sleeps, last) = drive_planner(
        planner,
        |_| json!({"id": "agr_1", "status": answers.next().unwrap()}),
    );
    assert_eq!(requests, 8);
    assert_eq!(sleeps, vec![5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    assert_eq!(last["status"], "failed");
}

#[test]
fn every_terminal_agent_run_status_ends_the_wait() {
    for status in ["completed", "failed", "cancelled", "expired"] {
        let planner = agent_runs::wait_for("agr_1", Until::Finished).unwrap();
        let (requests, _, last) =
            drive_planner(planner, |_| json!({"id": "agr_1", "status": status}));
        assert_eq!((requests, last["status"].as_str()), (1, Some(status)));
    }
}

#[test]
fn run_wait_for_stops_at_needs_input_only_when_settled() {
    let planner = runs::wait_for("sgr_1", Until::Settled).unwrap();
    let (requests, _, _) =
        drive_planner(planner, |_| json!({"id": "sgr_1", "status": "needs_input"}));
    assert_eq!(requests, 1);
    let mut answers = vec!["processing", "needs_input", "processed"].into_iter();
    let planner = runs::wait_for("sgr_1", Until::Finished).unwrap();
    let (requests, sleeps, last) = drive_planner(planner, |spec| {
        assert_eq!(spec.target, Target::Api("/v1/runs/sgr_1".into()));
        json!({"id": "sgr_1", "status": answers.next().unwrap()})
    });
    assert_eq!(
        (requests, sleeps, last["status"].as_str()),
        (3, vec![5_000], Some("processed"))
    );
}

#[test]
fn file_wait_polls_with_growing_delay_until_ready() {
    let mut answers = vec![
        "pending", "pending", "pending", "pending", "pending", "ready",
    ]
    .into_iter();
    let planner = files::wait_until_ready("file_1").unwrap();
    let (requests, sleeps, last) = drive_planner(planner, |spec| {
        assert_eq!(spec.wait, None, "the file route takes no wait");
        json!({"id": "file_1", "status": answers.next().unwrap()})
    });
    assert_eq!(requests, 6);
    assert_eq!(sleeps, vec![1_000, 2_000, 4_000, 5_000, 5_000]);
    assert_eq!(last["status"], "ready");
}

#[test]
fn a_polled_body_without_status_ends_with_an_error() {
    let mut planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let _ = planner.next();
    planner.on_body(&json!({"id": "exr_1"}));
    match planner.next() {
        PollStep::Done(Err(e)) => assert_eq!(
            (e.kind, e.code.as_str()),
            (ErrorKind::InvalidResponse, "unexpected_shape")
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(PollPlanner::file(""), Err(e) if e.code == "invalid_request"));
    assert_eq!(
        Until::parse("sometime").unwrap_err().code,
        "invalid_request"
    );
}

#[test]
fn pagination_follows_cursors_until_has_more_is_false() {
    let params = RunListParams {
        limit: Some(2),
        metadata: vec![("order".into(), "A 1".into())],
        ..Default::default()
    };
    let first = runs::list(&params).unwrap();
    assert_eq!(
        first.query,
        vec![
            ("limit".to_owned(), "2".to_owned()),
            ("metadata.order".to_owned(), "A 1".to_owned())
        ]
    );
    let page: Page<Value> = Page::from_value(&json!({"object": "list", "data": [{"id": "exr_1"}, {"id": "exr_2"}], "has_more": true, "cursor": "c2"})).unwrap();
    let second = runs::next_page(&params, &page).unwrap().unwrap();
    assert!(second
        .query
        .contains(&("cursor".to_owned(), "c2".to_owned())));
    assert!(second.query.contains(&("limit".to_owned(), "2".to_owned())));
    let params2 = RunListParams {
        cursor: Some("c2".into()),
        ..params.clone()
    };
    let last: Page<Value> = Page::from_value(
        &json!({"object": "list", "data": [{"id": "exr_3"}], "has_more": false, "cursor": null}),
    )
    .unwrap();
    assert!(runs::next_page(&params2, &last).is_none());
}

#[test]
fn pagination_stops_on_a_repeated_or_missing_cursor() {
    let params = RunListParams {
        cursor: Some("c2".into()),
        ..Default::default()
    };
    let same: Page<Value> =
        Page::from_value(&json!({"data": [], "has_more": true, "cursor": "c2"})).unwrap();
    assert!(runs::next_page(&params, &same).is_none());
    let none: Page<Value> = Page::from_value(&json!({"data": [], "hasMore": true})).unwrap();
    assert!(runs::next_page(&params, &none).is_none());
    assert_eq!(
        Page::from_value(&json!({"data": 3})).unwrap_err().code,
        "unexpected_shape"
    );
}

#[test]
fn metadata_filters_are_encoded_in_the_url() {
    use crate::client::{Action, Call, CallOptions};
    let params = RunListParams {
        status: Some("processed".into()),
        object: Some("extract_run".into()),
        metadata: vec![("customer id".into(), "a&b=c".into())],
        ..Default::default()
    };
    let mut call = Call::new(
        &super::config(),
        runs::list(&params).unwrap(),
        &CallOptions::default(),
        [0; 16],
    )
    .unwrap();
    let Action::Send(req) = call.next() else {
        panic!()
    };
    assert_eq!(
        req.url,
        "https://api.example.com/v1/runs?status=processed&object=extract_run&metadata.customer%20id=a%26b%3Dc"
    );
}

/// A server that answers every long poll at once with a status the service holds for (a proxy with a short
/// timeout): the planner keeps a floor between polls, 1 s then backing off to 5 s.
#[test]
fn early_answers_keep_a_floor_between_polls_backing_off_to_five_seconds() {
    use crate::client::polling::{PollTiming, POLL_FLOOR_MAX_MS};
    let mut planner = runs::wait_for("exr_1", Until::Finished).unwrap();
    let mut clock = 0u64;
    let mut requests = 0u32;
    let mut sleeps = Vec::new();
    while clock < 3_000 {
        match planner.next() {
            PollStep::Request(_) => {
                requests += 1;
                clock += 2;
                planner.on_answer(
                    &json!({"id": "exr_1", "status": "processing"}),
                    PollTiming {
                        held_ms: 2,
                        elapsed_ms: clock,
                        retry_after_ms: None,
                    },
                );
            }
            PollStep::Sleep { ms } => {
                sleeps.push(ms);
                clock += ms;
            }
            PollStep::Done(r) => panic!("done early: {r:?}"),
        }
    }
    assert!(requests <= 4, "{requests} requests in 3 s");
    assert_eq!(
        sleeps[..2],
        [998, 1_998],
        "the first answer is a change (none before)"
    );
    for _ in 0..6 {
        match planner.next() {
            PollStep::Request(_) => planner.on_answer(
                &json!({"id": "exr_1", "status": "processing"}),
                PollTiming {
                    held_ms: 0,
                    elapsed_ms: 0,
                    retry_after_ms: None,
                },
            ),
            PollStep::Sleep { ms } => sleeps.push(ms),
            PollStep::Done(r) => panic!("done early: {r:?}"),
        }
    }
    assert_eq!(*sleeps.last().unwrap(), POLL_FLOOR_MAX_MS);
}

#[test]
fn a_poll_held_past_the_floor_resets_it_and_retry_after_is_honoured() {
    use crate::client::polling::PollTiming;
    let mut planner = agent_runs::wait_for("agr_1", Until::Finished).unwrap();
    let processing = json!({"id": "agr_1", "status": "processing"});
    let timing = |held_ms, retry_after_ms| PollTiming {
        held_ms,
        elapsed_ms: 0,
        retry_after_ms,
    };
    assert!(matches!(planner.next(), PollStep::Request(_)));
    planner.on_answer(
        &json!({"id": "agr_1", "status": "queued"}),
        timing(10, None),
    );
    assert!(
        matches!(planner.next(), PollStep::Request(_)),
        "a changed status: poll again at once"
    );
    planner.on_answer(&processing, timing(10, None));
    assert!(
        matches!(planner.next(), PollStep::Request(_)),
        "changed again"
    );
    planner.on_answer(&processing, timing(10, None));
    assert_eq!(planner.next(), PollStep::Sleep { ms: 990 });
    assert!(matches!(planner.next(), PollStep::Request(_)));
    planner.on_answer(&processing, timing(120_000, None));
    assert!(
        matches!(planner.next(), PollStep::Request(_)),
        "held: poll again at once"
    );
    planner.on_answer(&processing, timing(120_000, Some(7_000)));
    assert_eq!(planner.next(), PollStep::Sleep { ms: 7_000 });
    assert!(matches!(planner.next(), PollStep::Request(_)));
    planner.on_answer(&processing, timing(10, None));
    assert_eq!(
        planner.next(),
        PollStep::Sleep { ms: 990 },
        "the floor starts again at 1 s"
    );
}

#[test]
fn an_honest_server_still_costs_about_t_over_120_plus_two_requests_with_the_floor() {
    use crate::client::polling::PollTiming;
    for t in [0u64, 1, 30, 119, 121, 600, 3_600] {
        let mut planner = runs::wait_for("exr_1", Until::Finished).unwrap();
        let mut now = 0u64;
        let mut requests = 0u64;
        loop {
            match planner.next() {
                PollStep::Request(spec) => {
                    requests += 1;
                    // queued answered at once (a status change), then held until done or 120 s.
                    let start = now;
                    let status = if requests == 1 {
                        "queued"
                    } else {
                        now = (now + 1000 * u64::from(spec.wait.unwrap())).min((t * 1000).max(now));
                        if now >= t * 1000 {
                            "processed"
                        } else {
                            "processing"
                        }
                    };
                    planner.on_answer(
                        &json!({"id": "exr_1", "status": status}),
                        PollTiming {
                            held_ms: now - start,
                            elapsed_ms: now,
                            retry_after_ms: None,
                        },
                    );
                }
                PollStep::Sleep { ms } => now += ms,
                PollStep::Done(r) => {
                    assert_eq!(r.unwrap()["status"], "processed");
                    break;
                }
            }
        }
        assert!(requests <= t / 120 + 2, "T={t}: {requests} requests");
    }
}

#[test]
fn a_deadline_ends_the_wait_with_wait_deadline_and_shrinks_the_last_wait() {
    use crate::client::polling::{deadline_ms, PollTiming};
    let mut planner = runs::wait_for("exr_1", Until::Finished)
        .unwrap()
        .with_deadline(Some(150_000));
    let processing = json!({"id": "exr_1", "status": "processing"});
    let PollStep::Request(first) = planner.next() else {
        panic!()
    };
    assert_eq!(first.wait, Some(120));
    planner.on_answer(
        &processing,
        PollTiming {
            held_ms: 120_000,
            elapsed_ms: 120_000,
            retry_after_ms: None,
        },
    );
    let PollStep::Request(second) = planner.next() else {
        panic!()
    };
    assert_eq!(second.wait, Some(30), "fits the 30 s left");
    planner.on_answer(
        &processing,
        PollTiming {
            held_ms: 30_000,
            elapsed_ms: 150_000,
            retry_after_ms: None,
        },
    );
    let PollStep::Done(Err(err)) = planner.next() else {
        panic!("the deadline ends the wait")
    };
    assert_eq!(err.code, "wait_deadline");
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert_eq!(deadline_ms(1000.0).unwrap(), 1000);
    for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 1e300] {
        assert_eq!(
            deadline_ms(bad).unwrap_err().code,
            "invalid_request",
            "{bad}"
        );
    }
}

/// Answers `status` to every poll of `planner` and collects its notices, for `polls` polls.
fn notices_of(mut planner: PollPlanner, status: &str, polls: usize) -> Vec<String> {
    let mut notices = Vec::new();
    let mut answered = 0;
    while answered < polls {
        match planner.next() {
            PollStep::Request(_) => {
                planner.on_body(&json!({"object": "agent_run", "id": "agr_1", "status": status}));
                answered += 1;
                notices.extend(planner.take_notice());
            }
            PollStep::Sleep { .. } => {}
            PollStep::Done(_) => break,
        }
    }
    notices
}

#[test]
fn waiting_for_the_end_of_a_run_blocked_on_a_person_gives_one_notice() {
    let notices = notices_of(
        agent_runs::wait_for("agr_1", Until::Finished).unwrap(),
        "waiting",
        5,
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("GET /v1/agent-runs/agr_1"),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("until: \"settled\""), "{}", notices[0]);
    assert!(notices[0].contains("deadlineMs"), "{}", notices[0]);
    let sign = notices_of(
        runs::wait_for("sgr_1", Until::Finished).unwrap(),
        "needs_input",
        3,
    );
    assert_eq!(sign.len(), 1, "{sign:?}");
}

#[test]
fn a_settled_wait_a_deadline_or_a_working_run_gives_no_notice() {
    assert!(notices_of(
        agent_runs::wait_for("agr_1", Until::Settled).unwrap(),
        "waiting",
        1
    )
    .is_empty());
    let bounded = agent_runs::wait_for("agr_1", Until::Finished)
        .unwrap()
        .with_deadline(Some(86_400_000));
    assert!(notices_of(bounded, "waiting", 3).is_empty());
    assert!(notices_of(
        agent_runs::wait_for("agr_1", Until::Finished).unwrap(),
        "processing",
        3
    )
    .is_empty());
    assert!(notices_of(
        agent_runs::wait_for("agr_1", Until::Finished).unwrap(),
        "paused",
        3
    )
    .is_empty());
}
