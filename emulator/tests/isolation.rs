//! Tenant isolation. The API specification, Authentication 2: "The key is an organization key; one key belongs to
//! one organization and identifies the tenant"; 7: with key scoping "a run of another key then answers 404 exactly as
//! an unknown id does". Every route that takes an id is walked with a second organization's key (and, for agent
//! runs, a second key of the same organization under `--scope-keys`); then the owner's objects must be untouched:
//! same status, same body.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use serde_json::{json, Value};

const OTHER: &str = "k_other";
const SIBLING: &str = "k_sibling";

/// (method, path, body, keys that must be refused, expected status)
type Attack<'a> = (&'a str, String, Option<Value>, &'a [&'a str], u16);

async fn owner_get(h: &Emu, path: &str) -> (u16, Value) {
    let r = get(h, path).await;
    (r.status, strip_signed_urls(r.body))
}

/// Signed download URLs carry a fresh expiry on every read; everything else must be byte-for-byte stable.
fn strip_signed_urls(mut v: Value) -> Value {
    match &mut v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "url" && x.as_str().is_some_and(|s| s.contains("sig=")) {
                    *x = Value::Null;
                } else {
                    *x = strip_signed_urls(x.take());
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| *x = strip_signed_urls(x.take())),
        _ => {}
    }
    v
}

#[tokio::test]
async fn every_id_route_refuses_another_org_and_leaves_the_owner_untouched() {
    let h = start(&[
        "--control",
        "--time-scale",
        "0.01",
        "--allow-http-webhooks",
        "--rate-limit",
        "100000",
        "--scope-keys",
        "--key",
        "sk_test_docauto:org_demo",
        "--key",
        "k_sibling:org_demo",
        "--key",
        "k_other:org_other",
    ])
    .await;
    let recv = receiver(vec![200]).await;
    // the owner's objects
    let file = ready_file(&h).await;
    let endpoint = post(&h, "/v1/webhooks", json!({"url": recv.url}))
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let agent_run = post(
        &h,
        "/v1/agent-runs?wait=10",
        json!({"agent": "agt_contract_review", "files": [{"id": file}], "metadata": {"k": "v"}}),
    )
    .await;
    assert_eq!(agent_run.body["status"], "waiting", "{:?}", agent_run.body);
    let agr = agent_run.body["id"].as_str().unwrap().to_string();
    let human = agent_run.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["executor"] == "human")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let parse = post(
        &h,
        "/v1/parse?wait=10",
        json!({"file": {"id": file}, "webhook": {"id": endpoint}}),
    )
    .await;
    assert_eq!(parse.body["status"], "processed", "{:?}", parse.body);
    let par = parse.body["id"].as_str().unwrap().to_string();
    let redact = post(
        &h,
        "/v1/redact?wait=10",
        json!({"file": {"id": file}, "categories": ["email"], "mode": "mask"}),
    )
    .await;
    assert_eq!(redact.body["status"], "processed", "{:?}", redact.body);
    let rdr = redact.body["id"].as_str().unwrap().to_string();
    let output_name = redact.body["output"]["file"]["name"]
        .as_str()
        .unwrap_or("invoice.redacted.txt")
        .to_string();
    let sign = post(
        &h,
        "/v1/sign",
        json!({"file": {"id": file}, "signers": [{"name": "A B", "email": "a@example.com"}]}),
    )
    .await;
    assert_eq!(sign.body["status"], "needs_input", "{:?}", sign.body);
    let sgr = sign.body["id"].as_str().unwrap().to_string();
    // a run kept into a space that is past its deadline: only an owner's call may close it
    let kept = post(&h, "/v1/parse?wait=10", json!({"file": {"id": file}})).await;
    let kept_id = kept.body["id"].as_str().unwrap().to_string();
    let exp = docauto_emulator::util::iso(h.now_ms().await + 60_000);
    let k = post(
        &h,
        &format!("/v1/runs/{kept_id}/keep"),
        json!({"space": {"name": "Quarter", "expiresAt": exp}}),
    )
    .await;
    assert_eq!(k.status, 200, "{:?}", k.body);
    let space = h.state().await["runs"][&kept_id]["space_id"]
        .as_str()
        .unwrap()
        .to_string();
    let rts = post(&h, "/v1/realtime/transcriptions", json!({}))
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_string();

    let reads = [
        format!("/v1/agent-runs/{agr}"),
        format!("/v1/runs/{par}"),
        format!("/v1/runs/{rdr}"),
        format!("/v1/runs/{sgr}"),
        format!("/v1/files/{file}"),
        format!("/v1/webhooks/{endpoint}"),
        format!("/v1/webhooks/{endpoint}/deliveries"),
        format!("/v1/realtime/transcriptions/{rts}"),
    ];
    let mut before = Vec::new();
    for p in &reads {
        before.push(owner_get(&h, p).await);
    }
    call(
        &h,
        "POST",
        "/__emulator/clock/advance",
        None,
        Some(json!({"seconds": 120})),
        &[],
    )
    .await;

    // the attacker's own file, to reference the owner's objects from its own creations
    let (o_base, o_file) = {
        let base = doc_server(vec![("/o.txt", "text/plain", b"Name: Eve".to_vec())]).await;
        let r = call(
            &h,
            "POST",
            "/v1/files",
            Some(OTHER),
            Some(json!({"url": format!("{base}/o.txt")})),
            &[],
        )
        .await;
        (base, r.body["id"].as_str().unwrap().to_string())
    };
    let _ = o_base;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let own_run = call(
        &h,
        "POST",
        "/v1/parse?wait=10",
        Some(OTHER),
        Some(json!({"file": {"id": o_file}})),
        &[],
    )
    .await;
    assert_eq!(own_run.body["status"], "processed", "{:?}", own_run.body);
    let own_run = own_run.body["id"].as_str().unwrap().to_string();

    // (method, path, body, keys that must be refused, expected status)
    let agent_keys: &[&str] = &[OTHER, SIBLING];
    let org_keys: &[&str] = &[OTHER];
    let attacks: Vec<Attack> = vec![
        (
            "GET",
            format!("/v1/agent-runs/{agr}?wait=1"),
            None,
            agent_keys,
            404,
        ),
        (
            "POST",
            format!("/v1/agent-runs/{agr}/approvals/apr_nope"),
            Some(json!({"decision": "approve"})),
            agent_keys,
            404,
        ),
        (
            "POST",
            format!("/v1/agent-runs/{agr}/tasks/{human}/complete"),
            Some(json!({"note": "done by someone else"})),
            agent_keys,
            404,
        ),
        ("GET", format!("/v1/runs/{par}?wait=1"), None, org_keys, 404),
        ("GET", format!("/v1/runs/{kept_id}"), None, org_keys, 404),
        (
            "POST",
            format!("/v1/runs/{sgr}/cancel"),
            None,
            org_keys,
            404,
        ),
        (
            "POST",
            format!("/v1/runs/{par}/keep"),
            Some(json!({})),
            org_keys,
            404,
        ),
        (
            "POST",
            format!("/v1/runs/{own_run}/keep"),
            Some(json!({"spaceId": space})),
            org_keys,
            404,
        ),
        (
            "GET",
            format!("/v1/runs/{rdr}/output/{output_name}"),
            None,
            org_keys,
            404,
        ),
        ("DELETE", format!("/v1/runs/{par}"), None, org_keys, 404),
        ("DELETE", format!("/v1/runs/{sgr}"), None, org_keys, 404),
        ("DELETE", format!("/v1/runs/{kept_id}"), None, org_keys, 404),
        ("GET", format!("/v1/files/{file}"), None, org_keys, 404),
        (
            "POST",
            "/v1/parse".to_string(),
            Some(json!({"file": {"id": file}})),
            org_keys,
            404,
        ),
        (
            "POST",
            "/v1/agent-runs".to_string(),
            Some(json!({"agent": "agt_document_digest", "files": [{"id": file}]})),
            org_keys,
            404,
        ),
        (
            "POST",
            "/v1/parse".to_string(),
            Some(json!({"file": {"id": o_file}, "webhook": {"id": endpoint}})),
            org_keys,
            422,
        ),
        (
            "GET",
            format!("/v1/webhooks/{endpoint}"),
            None,
            org_keys,
            404,
        ),
        (
            "PATCH",
            format!("/v1/webhooks/{endpoint}"),
            Some(json!({"disabled": true, "url": "http://127.0.0.1:9/x"})),
            org_keys,
            404,
        ),
        (
            "GET",
            format!("/v1/webhooks/{endpoint}/deliveries"),
            None,
            org_keys,
            404,
        ),
        (
            "DELETE",
            format!("/v1/webhooks/{endpoint}"),
            None,
            org_keys,
            404,
        ),
        (
            "GET",
            format!("/v1/realtime/transcriptions/{rts}"),
            None,
            org_keys,
            404,
        ),
    ];
    for (method, path, body, keys, status) in &attacks {
        for key in keys.iter() {
            let r = call(&h, method, path, Some(key), body.clone(), &[]).await;
            assert_eq!(
                r.status,
                *status,
                "{method} {path} with {key}: {}",
                String::from_utf8_lossy(&r.raw)
            );
        }
    }

    // the owner's space was not closed by someone else's call
    {
        let st = h.state().await;
        assert_eq!(
            st["spaces"][&space]["closed"], false,
            "space closed by another org"
        );
        assert_eq!(
            st["runs"][&kept_id]["deleted"], false,
            "kept run deleted by another org"
        );
        assert_eq!(
            st["runs"][&par]["deleted"], false,
            "run deleted by another org"
        );
    }
    // and every object reads exactly as before
    for (p, b) in reads.iter().zip(before) {
        let after = owner_get(&h, p).await;
        assert_eq!(after.0, b.0, "status of {p}");
        assert_eq!(after.1, b.1, "body of {p}");
    }
    // the owner's endpoint got nothing from the attacker's run
    assert!(recv
        .events()
        .iter()
        .all(|e| e["processingId"] != own_run.as_str()));
    // the owner can still act on its own objects
    let done = post(
        &h,
        &format!("/v1/agent-runs/{agr}/tasks/{human}/complete"),
        json!({"note": "ok"}),
    )
    .await;
    assert_eq!(done.status, 200, "{:?}", done.body);
    assert_eq!(
        call(
            &h,
            "DELETE",
            &format!("/v1/runs/{par}"),
            Some(KEY),
            None,
            &[]
        )
        .await
        .status,
        204
    );
}
