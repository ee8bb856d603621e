//! `/v1/runs`: list with cursor and metadata filters, ttl purge, delete, keep, cancel; capability-run events.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::HashSet;

async fn parse_run(h: &Emu, f: &str, extra: Value, q: &str) -> Resp {
    let mut b = json!({"file": {"id": f}});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    post(h, &format!("/v1/parse{q}"), b).await
}

#[tokio::test]
async fn list_pages_newest_first_with_cursor() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(
            parse_run(&h, &f, json!({}), "").await.body["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let p1 = get(&h, "/v1/runs?limit=2").await.body;
    assert_eq!(p1["object"], "list");
    assert_eq!(p1["has_more"], true);
    assert_eq!(p1["data"][0]["id"], ids[4].as_str(), "newest first");
    let mut seen: Vec<String> = p1["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let mut cursor = p1["cursor"].as_str().unwrap().to_string();
    loop {
        let p = get(&h, &format!("/v1/runs?limit=2&cursor={cursor}"))
            .await
            .body;
        seen.extend(
            p["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_string()),
        );
        if p["has_more"] == false {
            assert!(p["cursor"].is_null());
            break;
        }
        cursor = p["cursor"].as_str().unwrap().to_string();
    }
    assert_eq!(seen.len(), 5);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 5);
}

#[tokio::test]
async fn list_filters_by_metadata_object_and_status_and_excludes_agent_runs() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    parse_run(&h, &f, json!({"metadata": {"team": "a", "n": "1"}}), "").await;
    parse_run(&h, &f, json!({"metadata": {"team": "b"}}), "").await;
    start_run(
        &h,
        "agt_document_digest",
        json!({"metadata": {"team": "a"}}),
        "",
    )
    .await;
    let l = get(&h, "/v1/runs?metadata.team=a").await.body;
    assert_eq!(l["data"].as_array().unwrap().len(), 1);
    assert_eq!(l["data"][0]["metadata"]["team"], "a");
    let l = get(&h, "/v1/runs?metadata.team=a&metadata.n=2").await.body;
    assert_eq!(l["data"].as_array().unwrap().len(), 0);
    let l = get(&h, "/v1/runs?object=parse_run&status=processed")
        .await
        .body;
    assert_eq!(l["data"].as_array().unwrap().len(), 2);
    let l = get(&h, "/v1/runs").await.body;
    assert!(l["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| !r["id"].as_str().unwrap().starts_with("agr_")));
}

#[tokio::test]
async fn list_rejects_queued_status_bad_limit_and_a_fourth_metadata_filter() {
    let h = start_fast().await;
    let r = get(&h, "/v1/runs?status=queued").await;
    assert!(r.body["message"].as_str().unwrap().starts_with("status: "));
    let r = get(&h, "/v1/runs?limit=51").await;
    assert!(r.body["message"].as_str().unwrap().starts_with("limit: "));
    let r = get(&h, "/v1/runs?limit=0").await;
    assert_eq!(r.code(), "invalid_request");
    let r = get(
        &h,
        "/v1/runs?metadata.a=1&metadata.b=1&metadata.c=1&metadata.d=1",
    )
    .await;
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .starts_with("metadata: "));
}

#[tokio::test]
async fn ttl_purge_is_410_run_expired_then_404() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let f = ready_file(&h).await;
    let r = parse_run(&h, &f, json!({"ttl": 60, "webhook": {"url": rcv.url}}), "").await;
    let id = r.body["id"].as_str().unwrap();
    post(&h, "/__emulator/clock/advance", json!({"seconds": 61})).await;
    let g = get(&h, &format!("/v1/runs/{id}")).await;
    assert_eq!((g.status, g.code()), (410, "run_expired"));
    assert_eq!(g.body["retryable"], false);
    assert_eq!(get(&h, &format!("/v1/runs/{id}")).await.status, 410);
    post(
        &h,
        "/__emulator/clock/advance",
        json!({"seconds": 25 * 3600}),
    )
    .await;
    assert_eq!(get(&h, &format!("/v1/runs/{id}")).await.status, 404);
    for _ in 0..200 {
        if rcv.types().iter().any(|t| t == "processing.expired") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let expired = rcv
        .types()
        .into_iter()
        .filter(|t| t == "processing.expired")
        .count();
    assert_eq!(expired, 1, "fired once");
}

#[tokio::test]
async fn delete_is_204_idempotent_then_reads_404() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let id = parse_run(&h, &f, json!({}), "").await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        call(
            &h,
            "DELETE",
            &format!("/v1/runs/{id}"),
            Some(KEY),
            None,
            &[]
        )
        .await
        .status,
        204
    );
    assert_eq!(
        call(
            &h,
            "DELETE",
            &format!("/v1/runs/{id}"),
            Some(KEY),
            None,
            &[]
        )
        .await
        .status,
        204
    );
    assert_eq!(get(&h, &format!("/v1/runs/{id}")).await.status, 404);
    assert_eq!(
        call(&h, "DELETE", "/v1/runs/par_never", Some(KEY), None, &[])
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn keep_clears_ttl_and_conflicts_are_409() {
    let h = start(&["--control", "--time-scale", "1", "--rate-limit", "100000"]).await;
    let f = ready_file(&h).await;
    let slow = parse_run(&h, &f, json!({}), "?wait=0").await;
    let k = post(
        &h,
        &format!("/v1/runs/{}/keep", slow.body["id"].as_str().unwrap()),
        json!({}),
    )
    .await;
    assert_eq!((k.status, k.code()), (409, "pipeline_running"));
    let r = parse_run(&h, &f, json!({"ttl": 60}), "?wait=10").await;
    let id = r.body["id"].as_str().unwrap();
    let k = post(
        &h,
        &format!("/v1/runs/{id}/keep"),
        json!({"space": "Archive"}),
    )
    .await;
    assert_eq!(k.status, 200, "{}", k.body);
    assert!(k.body["expiresAt"].is_null());
    let sid = k.body["spaceId"].as_str().unwrap().to_string();
    post(&h, "/__emulator/clock/advance", json!({"seconds": 120})).await;
    assert_eq!(
        get(&h, &format!("/v1/runs/{id}")).await.status,
        200,
        "kept runs are not purged"
    );
    let same = post(&h, &format!("/v1/runs/{id}/keep"), json!({"spaceId": sid})).await;
    assert_eq!(same.status, 200);
    let other = post(
        &h,
        &format!("/v1/runs/{id}/keep"),
        json!({"space": "Elsewhere"}),
    )
    .await;
    assert_eq!((other.status, other.code()), (409, "already_kept"));
    let both = post(
        &h,
        &format!("/v1/runs/{id}/keep"),
        json!({"space": "x", "spaceId": sid}),
    )
    .await;
    assert_eq!((both.status, both.code()), (400, "invalid_request"));
}

#[tokio::test]
async fn cancel_stops_in_flight_work_and_a_finished_run_is_409() {
    let h = start(&["--time-scale", "1"]).await;
    let f = ready_file(&h).await;
    let r = parse_run(&h, &f, json!({}), "?wait=0").await;
    let id = r.body["id"].as_str().unwrap();
    let c = post(&h, &format!("/v1/runs/{id}/cancel"), json!({})).await;
    assert_eq!(c.status, 200);
    assert_eq!(c.body["status"], "cancelled");
    assert!(c.body.get("output").is_none());
    let again = post(&h, &format!("/v1/runs/{id}/cancel"), json!({})).await;
    assert_eq!((again.status, again.code()), (409, "run_not_cancellable"));
}

#[tokio::test]
async fn capability_events_are_signed_and_retried_on_the_10_20_40_80_ladder() {
    let h = start(&["--time-scale", "0.01", "--allow-http-webhooks"]).await; // ladder 100/200/400/800 ms
    let rcv = receiver(vec![500, 500, 200]).await;
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": rcv.url, "events": ["processing.started"]}),
    )
    .await;
    let f = ready_file(&h).await;
    parse_run(&h, &f, json!({"webhook": {"id": e.body["id"]}}), "?wait=0").await;
    for _ in 0..300 {
        if rcv.hits.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let hits = rcv.hits.lock().unwrap().clone();
    assert_eq!(hits.len(), 3);
    let g1 = (hits[1].at - hits[0].at).as_millis();
    let g2 = (hits[2].at - hits[1].at).as_millis();
    assert!((95..2000).contains(&g1), "{g1}");
    assert!((195..2500).contains(&g2), "{g2}");
    for hit in &hits {
        verify_signature(
            &h,
            hit.headers
                .get("x-svc-signature")
                .unwrap()
                .to_str()
                .unwrap(),
            &hit.body,
        )
        .await;
    }
    let d = get(
        &h,
        &format!("/v1/webhooks/{}/deliveries", e.body["id"].as_str().unwrap()),
    )
    .await;
    let attempts: Vec<i64> = d.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attempt"].as_i64().unwrap())
        .collect();
    assert_eq!(attempts, vec![3, 2, 1]);
}

#[tokio::test]
async fn capability_event_is_dropped_after_5_attempts() {
    let h = start(&["--time-scale", "0.001", "--allow-http-webhooks"]).await;
    let rcv = receiver(vec![500]).await;
    let e = post(
        &h,
        "/v1/webhooks",
        json!({"url": rcv.url, "events": ["processing.started"]}),
    )
    .await;
    let f = ready_file(&h).await;
    parse_run(&h, &f, json!({"webhook": {"id": e.body["id"]}}), "?wait=0").await;
    for _ in 0..300 {
        if rcv.hits.lock().unwrap().len() >= 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(rcv.hits.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn space_past_expires_at_closes_lazily_once_and_fires_space_expired() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    post(
        &h,
        "/v1/webhooks",
        json!({"url": rcv.url, "events": ["space.expired"]}),
    )
    .await;
    let f = ready_file(&h).await;
    let id = parse_run(&h, &f, json!({}), "").await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let k = post(
        &h,
        &format!("/v1/runs/{id}/keep"),
        json!({"space": {"name": "Q1", "expiresAt": "2000-01-01T00:00:00.000Z"}}),
    )
    .await;
    assert_eq!(k.status, 200, "{}", k.body);
    let sid = k.body["spaceId"].as_str().unwrap().to_string();
    assert_eq!(
        get(&h, &format!("/v1/runs/{id}")).await.status,
        404,
        "the space closed and its runs went"
    );
    let again = post(&h, &format!("/v1/runs/{id}/keep"), json!({"spaceId": sid})).await;
    assert_eq!(again.status, 404);
    for _ in 0..200 {
        if !rcv.hits.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let ev = rcv.events();
    assert_eq!(ev.len(), 1, "fired once");
    assert_eq!(ev[0]["type"], "space.expired");
    assert_eq!(ev[0]["processingId"], sid.as_str());
    assert_eq!(
        ev[0]["data"],
        json!({"spaceId": sid, "name": "Q1", "expiresAt": "2000-01-01T00:00:00.000Z"})
    );
}

/// Memory returns to a plateau: runs that are created, deleted or purged and then outlive the
/// 24 h grace leave nothing behind, neither their records (deleted ones too) nor the idempotency keys that named
/// them; the state after each cycle holds no more than one cycle's worth.
#[tokio::test]
async fn purge_cycles_leave_no_run_records_or_idempotency_keys_behind() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    // what the state holds once the once-a-second sweep has run after the clock moved (read through the control
    // API, which observes nothing): waits for `done` up to 5 s
    async fn held_after_sweep(
        h: &Emu,
        done: impl Fn((usize, usize, usize)) -> bool,
    ) -> (usize, usize, usize) {
        let mut last = (0, 0, 0);
        for _ in 0..50 {
            let st = h.state().await;
            let n = |k: &str| st[k].as_object().map_or(0, |o| o.len());
            last = (n("runs"), n("idempotency"), n("files"));
            if done(last) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        last
    }
    const PER_CYCLE: usize = 12;
    let mut first_id = String::new();
    for cycle in 0..5 {
        for i in 0..PER_CYCLE {
            let key = format!("cycle{cycle}-{i}");
            let r = call(
                &h,
                "POST",
                "/v1/parse?wait=0",
                Some(KEY),
                Some(json!({"file": {"id": f}, "ttl": 60})),
                &[("idempotency-key", &key)],
            )
            .await;
            assert!(r.status == 200 || r.status == 202, "{:?}", r.body);
            let id = r.body["id"].as_str().unwrap().to_string();
            if cycle == 0 && i == 0 {
                first_id = id.clone();
            }
            if i % 2 == 0 {
                let d = call(
                    &h,
                    "DELETE",
                    &format!("/v1/runs/{id}"),
                    Some(KEY),
                    None,
                    &[],
                )
                .await;
                assert_eq!(d.status, 204);
            }
        }
        // this cycle's runs pass their ttl (purged) and the previous cycle's pass their grace (dropped)
        post(
            &h,
            "/__emulator/clock/advance",
            json!({"seconds": 25 * 3600}),
        )
        .await;
        let (runs, keys, files) = held_after_sweep(&h, |(runs, keys, files)| {
            runs <= PER_CYCLE && keys <= PER_CYCLE && files == 1
        })
        .await;
        assert!(
            runs <= PER_CYCLE && keys <= PER_CYCLE,
            "cycle {cycle}: {runs} run records and {keys} idempotency keys held, at most one cycle's worth expected"
        );
        assert_eq!(files, 1, "only the registered file stays");
    }
    post(
        &h,
        "/__emulator/clock/advance",
        json!({"seconds": 25 * 3600}),
    )
    .await;
    assert_eq!(
        held_after_sweep(&h, |held| held == (0, 0, 1)).await,
        (0, 0, 1),
        "runs, idempotency keys, files"
    );
    // the key of a dropped run is free again: a retry with it makes a new run instead of replaying a 404
    let again = call(
        &h,
        "POST",
        "/v1/parse?wait=0",
        Some(KEY),
        Some(json!({"file": {"id": f}, "ttl": 60})),
        &[("idempotency-key", "cycle0-0")],
    )
    .await;
    assert!(
        again.status == 200 || again.status == 202,
        "{:?}",
        again.body
    );
    assert_eq!(again.header("idempotent-replay"), None);
    assert_ne!(again.body["id"].as_str().unwrap(), first_id);
}
