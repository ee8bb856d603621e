//! Agent routes: one test per row of the spec's agent-run and task tables.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn agents_list_and_read_have_the_spec_shape() {
    let h = start_fast().await;
    let l = get(&h, "/v1/agents").await;
    assert_eq!(l.body["object"], "list");
    let a = &l.body["data"][0];
    for k in [
        "object",
        "id",
        "name",
        "version",
        "tasks",
        "actions",
        "description",
        "updatedAt",
    ] {
        assert!(!a[k].is_null(), "{k}");
    }
    assert!(a["tasks"][0]["dependsOn"].is_array());
    let one = get(&h, &format!("/v1/agents/{}", a["id"].as_str().unwrap())).await;
    assert_eq!(one.body, *a);
    assert_eq!(get(&h, "/v1/agents/agt_nope").await.status, 404);
}

#[tokio::test]
async fn start_with_unknown_agent_is_404_not_found() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_nope", json!({}), "").await;
    assert_eq!((r.status, r.code()), (404, "not_found"));
}

#[tokio::test]
async fn start_with_files_being_prepared_is_202_queued() {
    let h = start(&["--time-scale", "1"]).await;
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest", "files": [{"url": format!("{base}/a.txt")}]}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["status"], "queued");
    assert!(r.body["id"].as_str().unwrap().starts_with("agr_"));
    assert_eq!(
        r.body["statusUrl"],
        format!("/v1/agent-runs/{}", r.body["id"].as_str().unwrap())
    );
}

#[tokio::test]
async fn queued_run_stays_queued_until_a_read_then_processes() {
    let h = start(&["--control", "--time-scale", "0.2"]).await; // files ready after 200 ms, work 240 ms
    let base = doc_server(vec![("/a.txt", "text/plain", b"hello".to_vec())]).await;
    let r = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest", "files": [{"url": format!("{base}/a.txt")}]}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["status"], "queued");
    let id = r.body["id"].as_str().unwrap().to_string();
    post(&h, "/__emulator/clock/advance", json!({"seconds": 60})).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = h.state().await["agent_runs"][&id]["status"].clone();
    assert_eq!(status, "queued", "nothing moves without a read");
    let r = get(&h, &format!("/v1/agent-runs/{id}?wait=10")).await;
    assert_eq!(r.body["status"], "completed");
    assert_eq!(
        r.body["progress"]["tasks"],
        json!({"total": 2, "completed": 2})
    );
    assert!(r.body["output"]["files"][0]["url"]
        .as_str()
        .unwrap()
        .contains("/downloads/"));
    assert_eq!(r.body["result"], "Digest written.");
    assert!(r.body.get("incomplete").is_none());
    assert!(r.body.get("waiting").is_none());
}

#[tokio::test]
async fn finished_inside_the_window_is_200_full_run() {
    let h = start_fast().await;
    let t = Instant::now();
    let r = start_run(&h, "agt_document_digest", json!({}), "?wait=60").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "completed");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the hold releases early"
    );
}

#[tokio::test]
async fn still_working_at_the_cap_is_202_minimal_handle() {
    let h = start(&["--time-scale", "1"]).await;
    let r = start_run(&h, "agt_document_digest", json!({}), "?wait=0").await;
    assert_eq!(r.status, 202);
    let keys: Vec<_> = r.body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert_eq!(r.body["object"], "agent_run");
    assert_eq!(r.body["status"], "processing");
}

#[tokio::test]
async fn blocked_on_a_person_is_202_at_once_with_waiting_counts() {
    let h = start_fast().await;
    let t = Instant::now();
    let r = start_run(&h, "agt_contract_review", json!({}), "?wait=60").await;
    assert_eq!(r.status, 202);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(r.body["status"], "waiting");
    assert_eq!(r.body["waiting"]["approvals"], 0);
    assert_eq!(r.body["waiting"]["tasks"], 1);
    assert!(r.body["waiting"]["summary"]
        .as_str()
        .unwrap()
        .contains("Legal review"));
    let legal = r.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "legal_review")
        .unwrap()
        .clone();
    assert_eq!(legal["status"], "ready");
    assert_eq!(legal["executor"], "human");
    assert!(legal["summary"].is_null() && legal["completedAt"].is_null());
}

#[tokio::test]
async fn completing_an_agent_step_is_422() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_contract_review", json!({}), "").await;
    let id = r.body["id"].as_str().unwrap();
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/read_contract/complete"),
        json!({}),
    )
    .await;
    assert_eq!((c.status, c.code()), (422, "task_not_human"));
}

#[tokio::test]
async fn completing_a_step_with_unfinished_dependencies_is_409() {
    let h = start(&["--time-scale", "2", "--rate-limit", "100000"]).await; // read_contract takes 2 s
    let r = start_run(&h, "agt_contract_review", json!({}), "?wait=0").await;
    let id = r.body["id"].as_str().unwrap();
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({}),
    )
    .await;
    assert_eq!((c.status, c.code()), (409, "task_dependencies_pending"));
}

#[tokio::test]
async fn completing_a_human_step_twice_is_409_and_note_becomes_summary() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_contract_review", json!({}), "").await;
    let id = r.body["id"].as_str().unwrap();
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({"note": "clauses fine"}),
    )
    .await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.body["object"], "agent_run_task");
    assert_eq!(c.body["status"], "completed");
    assert_eq!(c.body["summary"], "clauses fine");
    assert!(c.body["completedAt"].is_string());
    assert_eq!(c.body["run"]["id"], id);
    let again = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({}),
    )
    .await;
    assert_eq!(
        (again.status, again.code()),
        (409, "task_already_completed")
    );
}

#[tokio::test]
async fn task_note_over_2000_and_files_over_20_are_400() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_contract_review", json!({}), "").await;
    let id = r.body["id"].as_str().unwrap();
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({"note": "x".repeat(2001)}),
    )
    .await;
    assert_eq!(c.code(), "invalid_request");
    assert!(c.body["message"].as_str().unwrap().starts_with("note: "));
    let files: Vec<String> = (0..21).map(|i| format!("file_{i}")).collect();
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({"files": files}),
    )
    .await;
    assert!(
        c.body["message"].as_str().unwrap().starts_with("files: "),
        "{}",
        c.body
    );
}

#[tokio::test]
async fn task_files_join_output_files() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_contract_review", json!({}), "").await;
    let id = r.body["id"].as_str().unwrap();
    let extra = ready_file(&h).await;
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({"files": [extra]}),
    )
    .await;
    assert_eq!(c.status, 200);
    let run = get(&h, &format!("/v1/agent-runs/{id}")).await;
    assert_eq!(run.body["output"]["files"][0]["id"], extra);
}

async fn to_before_gate(h: &Emu) -> (String, serde_json::Value) {
    let r = start_run(
        h,
        "agt_contract_review",
        json!({"metadata": {"case": "42"}}),
        "",
    )
    .await;
    let id = r.body["id"].as_str().unwrap().to_string();
    let c = post(
        h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete?wait=10"),
        json!({"note": "ok"}),
    )
    .await;
    assert_eq!(c.body["run"]["status"], "waiting");
    let run = get(h, &format!("/v1/agent-runs/{id}")).await;
    (id, run.body)
}

#[tokio::test]
async fn before_gate_is_an_outstanding_approval_with_params_and_files() {
    let h = start_fast().await;
    let (_, run) = to_before_gate(&h).await;
    assert_eq!(run["waiting"]["approvals"], 1);
    assert_eq!(run["waiting"]["tasks"], 0);
    let a = &run["approvals"][0];
    assert_eq!(a["kind"], "before");
    assert_eq!(a["action"], "send_email");
    assert_eq!(a["params"]["to"], "counterparty@example.com");
    assert!(a["files"][0]["id"].is_string() && a["files"][0]["name"].is_string());
    assert!(a["rationale"].is_string() && a["requestedAt"].is_string());
    assert_eq!(run["metadata"], json!({"case": "42"}));
}

#[tokio::test]
async fn reject_without_note_is_400() {
    let h = start_fast().await;
    let (id, run) = to_before_gate(&h).await;
    let aid = run["approvals"][0]["id"].as_str().unwrap();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "reject"}),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "invalid_request"));
    assert!(r.body["message"].as_str().unwrap().starts_with("note: "));
}

#[tokio::test]
async fn approve_then_second_decision_is_409_and_first_stands() {
    let h = start_fast().await;
    let (id, run) = to_before_gate(&h).await;
    let aid = run["approvals"][0]["id"].as_str().unwrap();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}?wait=10"),
        json!({"decision": "approve", "params": {"to": "legal@example.com"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["object"], "agent_run_approval");
    assert_eq!(r.body["status"], "approved");
    assert!(r.body["decidedAt"].is_string());
    assert!(r.body["note"].is_null());
    assert_eq!(r.body["run"]["status"], "completed");
    let again = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "reject", "note": "no"}),
    )
    .await;
    assert_eq!(
        (again.status, again.code()),
        (409, "approval_already_decided")
    );
    let run = get(&h, &format!("/v1/agent-runs/{id}")).await;
    assert_eq!(run.body["status"], "completed");
    assert!(run.body.get("incomplete").is_none());
    assert_eq!(run.body["approvals"], json!([]));
}

#[tokio::test]
async fn reject_skips_the_action_and_completes_incomplete() {
    let h = start_fast().await;
    let (id, run) = to_before_gate(&h).await;
    let aid = run["approvals"][0]["id"].as_str().unwrap();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}?wait=10"),
        json!({"decision": "reject", "note": "wrong recipient"}),
    )
    .await;
    assert_eq!(r.body["status"], "rejected");
    assert_eq!(r.body["note"], "wrong recipient");
    let run = get(&h, &format!("/v1/agent-runs/{id}")).await.body;
    assert_eq!(run["status"], "completed");
    assert_eq!(run["incomplete"], true);
    let send = run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "send_to_counterparty")
        .unwrap()
        .clone();
    assert_eq!(send["status"], "skipped");
    assert!(send["summary"]
        .as_str()
        .unwrap()
        .contains("wrong recipient"));
}

#[tokio::test]
async fn approval_note_over_4000_is_400_and_unknown_decision_is_400() {
    let h = start_fast().await;
    let (id, run) = to_before_gate(&h).await;
    let aid = run["approvals"][0]["id"].as_str().unwrap();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "approve", "note": "x".repeat(4001)}),
    )
    .await;
    assert!(r.body["message"].as_str().unwrap().starts_with("note: "));
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "maybe"}),
    )
    .await;
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .starts_with("decision: "));
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/apr_nope"),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn approval_files_must_be_known_and_params_plus_files_under_1_mib() {
    let h = start_fast().await;
    let (id, run) = to_before_gate(&h).await;
    let aid = run["approvals"][0]["id"].as_str().unwrap();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "approve", "files": ["file_unknown"]}),
    )
    .await;
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("files[0]: "),
        "{}",
        r.body
    );
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "approve", "params": {"blob": "x".repeat(1024 * 1024)}}),
    )
    .await;
    assert_eq!(r.code(), "invalid_request");
    let many: Vec<String> = (0..201).map(|i| format!("f{i}")).collect();
    let r = post(
        &h,
        &format!("/v1/agent-runs/{id}/approvals/{aid}"),
        json!({"decision": "approve", "files": many}),
    )
    .await;
    assert!(r.body["message"].as_str().unwrap().starts_with("files: "));
}

#[tokio::test]
async fn output_gate_lists_the_produced_file_and_approve_publishes_it() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_invoice_summary", json!({}), "?wait=30").await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["status"], "waiting");
    let a = &r.body["approvals"][0];
    assert_eq!(a["kind"], "output");
    assert_eq!(a["files"][0]["name"], "invoice-summary.md");
    let id = r.body["id"].as_str().unwrap();
    let d = post(
        &h,
        &format!(
            "/v1/agent-runs/{id}/approvals/{}?wait=10",
            a["id"].as_str().unwrap()
        ),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(d.body["run"]["status"], "completed");
    let run = get(&h, &format!("/v1/agent-runs/{id}")).await.body;
    let f = &run["output"]["files"][0];
    assert_eq!(f["name"], "invoice-summary.md");
    let dl = call(&h, "GET", f["url"].as_str().unwrap(), None, None, &[]).await;
    assert_eq!(dl.status, 200);
    assert!(String::from_utf8_lossy(&dl.raw).contains("Invoice summary"));
}

#[tokio::test]
async fn run_ending_without_result_is_failed_with_error() {
    let h = start_fast().await;
    let r = start_run(&h, "agt_flaky_import", json!({}), "?wait=30").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "failed");
    assert_eq!(r.body["error"]["code"], "task_failed");
}

#[tokio::test]
async fn deadline_passing_parks_the_run_expired_with_run_expired() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let r = start_run(
        &h,
        "agt_contract_review",
        json!({"webhook": {"url": rcv.url}}),
        "",
    )
    .await;
    let id = r.body["id"].as_str().unwrap();
    let created = r.body["createdAt"].as_str().unwrap().to_string();
    let expires = r.body["expiresAt"].as_str().unwrap().to_string();
    assert!(expires > created);
    post(
        &h,
        "/__emulator/clock/advance",
        json!({"seconds": 7 * 24 * 3600 + 1}),
    )
    .await;
    let run = get(&h, &format!("/v1/agent-runs/{id}")).await.body;
    assert_eq!(run["status"], "expired");
    assert_eq!(run["error"]["code"], "run_expired");
    let failed: Vec<_> = rcv
        .events()
        .into_iter()
        .filter(|e| e["type"] == "agent_run.failed")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["data"]["status"], "expired");
    assert_eq!(failed[0]["data"]["error"]["code"], "run_expired");
    let c = post(
        &h,
        &format!("/v1/agent-runs/{id}/tasks/legal_review/complete"),
        json!({}),
    )
    .await;
    assert_eq!((c.status, c.code()), (409, "run_not_active"));
}

#[tokio::test]
async fn idempotency_key_replays_the_original_run() {
    let h = start_fast().await;
    let f = ready_file(&h).await;
    let body = json!({"agent": "agt_contract_review", "files": [{"id": f}]});
    let a = call(
        &h,
        "POST",
        "/v1/agent-runs",
        Some(KEY),
        Some(body.clone()),
        &[("idempotency-key", "k-1")],
    )
    .await;
    assert!(a.header("idempotent-replay").is_none());
    let b = call(
        &h,
        "POST",
        "/v1/agent-runs",
        Some(KEY),
        Some(body.clone()),
        &[("idempotency-key", "k-1")],
    )
    .await;
    assert_eq!(b.header("idempotent-replay").as_deref(), Some("true"));
    assert_eq!(a.body["id"], b.body["id"]);
    let c = call(
        &h,
        "POST",
        "/v1/agent-runs",
        Some(KEY),
        Some(body),
        &[("idempotency-key", "k-2")],
    )
    .await;
    assert_ne!(a.body["id"], c.body["id"]);
}

#[tokio::test]
async fn metadata_over_10_kb_is_400_and_files_over_200_is_400() {
    let h = start_fast().await;
    let r = start_run(
        &h,
        "agt_document_digest",
        json!({"metadata": {"k": "x".repeat(10 * 1024)}}),
        "",
    )
    .await;
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .starts_with("metadata: "));
    let files: Vec<_> = (0..201).map(|_| json!({"id": "file_x"})).collect();
    let r = post(
        &h,
        "/v1/agent-runs",
        json!({"agent": "agt_document_digest", "files": files}),
    )
    .await;
    assert!(r.body["message"].as_str().unwrap().starts_with("files: "));
}

#[tokio::test]
async fn approvals_are_listed_oldest_first() {
    let dir = std::env::temp_dir().join(format!("docauto-agents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("two_gates.json"),
        r#"{"id":"agt_two_gates","name":"Two gates","version":1,"tasks":[
        {"id":"a","title":"A","executor":"agent","durationMs":100,"action":"act_a"},
        {"id":"b","title":"B","executor":"agent","durationMs":100,"dependsOn":[],"action":"act_b"},
        {"id":"c","title":"C","executor":"agent","durationMs":1000}],
        "actions":[{"name":"act_a","approval":"before"},{"name":"act_b","approval":"before"}],"result":"done"}"#,
    )
    .unwrap();
    let h = start(&["--time-scale", "0.01", "--agents", dir.to_str().unwrap()]).await;
    // The emulator read the folder as it started: nothing of the test stays in the temp dir.
    let _ = std::fs::remove_dir_all(&dir);
    let r = start_run(&h, "agt_two_gates", json!({}), "").await;
    assert_eq!(r.body["waiting"]["approvals"], 2);
    let a = r.body["approvals"].as_array().unwrap();
    assert!(a[0]["requestedAt"].as_str() <= a[1]["requestedAt"].as_str());
    assert_eq!(a[0]["action"], "act_a");
}

#[tokio::test]
async fn get_wait_holds_until_finished_and_releases_early() {
    let h = start(&["--time-scale", "0.2"]).await; // digest work: 240 ms
    let r = start_run(&h, "agt_document_digest", json!({}), "?wait=0").await;
    let id = r.body["id"].as_str().unwrap();
    let t = Instant::now();
    let g = get(&h, &format!("/v1/agent-runs/{id}?wait=30")).await;
    assert_eq!(g.body["status"], "completed");
    assert!(t.elapsed() < Duration::from_secs(5));
    let quick = get(&h, &format!("/v1/agent-runs/{id}")).await;
    assert_eq!(quick.status, 200);
}
