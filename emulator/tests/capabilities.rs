//! Capability verbs over real documents (text, markdown, PDF) fetched over loopback HTTP.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod common;
use common::*;
use docauto_emulator::documents::make_pdf;
use serde_json::{json, Value};

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string"},
        "total": {"type": "number", "description": "Total Amount"},
        "paid": {"type": "boolean"},
        "dueDate": {"type": ["string", "null"]},
        "customer": {"type": "object", "properties": {"name": {"type": "string", "description": "Customer Name"}}}
    }})
}

async fn text_file(_h: &Emu) -> Value {
    let base = doc_server(vec![(
        "/invoice.txt",
        "text/plain",
        INVOICE_TXT.as_bytes().to_vec(),
    )])
    .await;
    json!({"url": format!("{base}/invoice.txt")})
}

#[tokio::test]
async fn extract_fills_schema_without_citations_by_default() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(&h, "/v1/extract", json!({"file": f, "schema": schema()})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["object"], "extract_run");
    assert!(r.body["id"].as_str().unwrap().starts_with("exr_"));
    assert_eq!(r.body["status"], "processed");
    let out = &r.body["output"];
    assert_eq!(out["value"]["invoiceNumber"], "INV-2041");
    assert_eq!(out["value"]["total"], 1250.5);
    assert_eq!(out["value"]["paid"], true);
    assert!(out["value"]["dueDate"].is_null(), "absent field is null");
    assert_eq!(out["value"]["customer"]["name"], "Jane Smith");
    assert!(
        out.get("citations").is_none(),
        "absent, never empty, when off"
    );
    assert_eq!(out["documents"][0]["value"], out["value"]);
    assert_eq!(out["documents"][0]["status"], "processed");
    assert_eq!(r.body["config"]["schema"], schema());
    assert!(r.body["statusUrl"]
        .as_str()
        .unwrap()
        .starts_with("/v1/runs/exr_"));
    assert!(r.body["expiresAt"].is_string());
}

#[tokio::test]
async fn extract_citations_give_page_bbox_text_confidence_and_not_found() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": schema(), "citations": true}),
    )
    .await;
    let c = &r.body["output"]["citations"];
    let inv = &c["invoiceNumber"][0];
    assert_eq!(inv["page"], 0);
    assert!(inv["text"].as_str().unwrap().contains("INV-2041"));
    let conf = inv["confidence"].as_f64().unwrap();
    assert!((0.0..=5.0).contains(&conf));
    for k in ["x", "y", "width", "height"] {
        let v = inv["bbox"][k].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{k}={v}");
    }
    assert!(inv["fileId"].is_string());
    let nf = &c["dueDate"][0];
    assert_eq!(nf.as_object().unwrap().len(), 2);
    assert_eq!(nf["notFound"], true);
    assert!(c["customer.name"].is_array());
    assert_eq!(r.body["output"]["documents"][0]["citations"], *c);
}

#[tokio::test]
async fn extract_reads_pdf_text_with_pages() {
    let h = start_fast().await;
    let pdf = make_pdf(&[
        &["ACME", "Invoice Number: PDF-77"],
        &["Total Amount: 99.90"],
    ]);
    let base = doc_server(vec![("/inv.pdf", "application/pdf", pdf)]).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": {"url": format!("{base}/inv.pdf")}, "schema": schema(), "citations": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["output"]["value"]["invoiceNumber"], "PDF-77");
    assert_eq!(r.body["output"]["value"]["total"], 99.9);
    assert_eq!(r.body["output"]["citations"]["total"][0]["page"], 1);
}

#[tokio::test]
async fn invalid_schema_names_the_offending_path() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let bad = json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}});
    let r = post(&h, "/v1/extract", json!({"file": f, "schema": bad})).await;
    assert_eq!((r.status, r.code()), (400, "invalid_schema"));
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("schema.properties.a.anyOf: "),
        "{}",
        r.body
    );
    let root = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": {"type": "array"}}),
    )
    .await;
    assert_eq!(root.code(), "invalid_schema");
    let named = post(&h, "/v1/extract", json!({"file": f, "schema": {"type": "object", "properties": {"const": {"type": "string"}}}})).await;
    assert_eq!(
        named.status, 200,
        "a property named like a keyword is valid"
    );
}

#[tokio::test]
async fn schema_of_64_kb_is_schema_too_large() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": {"type": "object", "description": "x".repeat(66_000)}}),
    )
    .await;
    assert_eq!(r.code(), "schema_too_large");
}

#[tokio::test]
async fn mutually_exclusive_fields_are_400_invalid_request() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "files": [f], "schema": schema()}),
    )
    .await;
    assert_eq!(r.code(), "invalid_request");
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": schema(), "hints": "total"}),
    )
    .await;
    assert!(r.body["message"].as_str().unwrap().starts_with("hints: "));
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "hints": "total", "action": "x"}),
    )
    .await;
    assert_eq!(r.code(), "invalid_request");
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": schema(), "action": "x"}),
    )
    .await;
    assert_eq!(r.code(), "invalid_request");
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "schema": schema(), "ttl": 604_801}),
    )
    .await;
    assert!(r.body["message"].as_str().unwrap().starts_with("ttl: "));
}

#[tokio::test]
async fn hints_infer_a_schema() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "hints": "invoice number, phone"}),
    )
    .await;
    assert_eq!(r.body["config"]["schemaSource"], "inferred");
    assert_eq!(r.body["output"]["value"]["invoiceNumber"], "INV-2041");
    assert_eq!(r.body["output"]["value"]["phone"], "+1 415 555 0134");
}

#[tokio::test]
async fn saved_action_by_slug_and_unknown_or_wrong_kind_actions() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let a = post(
        &h,
        "/v1/extract/configs",
        json!({"name": "Invoice basics", "config": {"schema": schema(), "citations": true}}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["slug"], "invoice-basics");
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": f, "action": "invoice-basics"}),
    )
    .await;
    assert_eq!(r.body["config"]["schemaSource"], "saved");
    assert!(r.body["output"]["citations"].is_object());
    let r = post(&h, "/v1/extract", json!({"file": f, "action": "nope"})).await;
    assert_eq!((r.status, r.code()), (404, "action_unknown"));
    post(
        &h,
        "/v1/actions",
        json!({"capability": "sign", "name": "NDA", "config": {}}),
    )
    .await;
    let r = post(&h, "/v1/extract", json!({"file": f, "action": "nda"})).await;
    assert_eq!((r.status, r.code()), (400, "invalid_request"));
    assert_eq!(get(&h, "/v1/actions/catalog").await.status, 200);
}

#[tokio::test]
async fn wait_zero_gives_a_202_handle_then_get_wait_gives_the_result() {
    let h = start(&["--time-scale", "0.2"]).await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/extract?wait=0",
        json!({"file": f, "schema": schema()}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body.as_object().unwrap().len(), 4);
    assert_eq!(r.body["status"], "processing");
    let id = r.body["id"].as_str().unwrap();
    let g = get(&h, &format!("/v1/runs/{id}")).await;
    assert!(
        g.body.get("output").is_none(),
        "output exists only at processed"
    );
    let g = get(&h, &format!("/v1/runs/{id}?wait=10")).await;
    assert_eq!(g.body["status"], "processed");
    assert!(g.body["output"].is_object());
}

#[tokio::test]
async fn parse_gives_markdown_and_structured_json() {
    let h = start_fast().await;
    let base = doc_server(vec![(
        "/n.md",
        "text/markdown",
        b"# Title\n\nSome **text**.".to_vec(),
    )])
    .await;
    let r = post(
        &h,
        "/v1/parse",
        json!({"file": {"url": format!("{base}/n.md")}}),
    )
    .await;
    assert_eq!(r.body["object"], "parse_run");
    assert!(r.body["id"].as_str().unwrap().starts_with("par_"));
    assert_eq!(r.body["output"]["markdown"], "# Title\n\nSome **text**.");
    assert_eq!(r.body["output"]["json"]["pageCount"], 1);
}

#[tokio::test]
async fn redact_returns_a_new_file_without_the_categories() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/redact",
        json!({"file": f, "categories": ["email", "phone", "name"], "mode": "mask"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["id"].as_str().unwrap().starts_with("rdr_"));
    let file = &r.body["output"]["file"];
    assert_eq!(file["name"], "invoice.redacted.txt");
    let url = file["url"].as_str().unwrap().to_string();
    let mut got = None;
    for _ in 0..100 {
        let d = call(&h, "GET", &url, None, None, &[]).await;
        if d.status == 200 {
            got = Some(String::from_utf8(d.raw.to_vec()).unwrap());
            break;
        }
        assert_eq!(d.code(), "output_not_ready");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let text = got.unwrap();
    assert!(
        !text.contains("jane.smith@example.com")
            && !text.contains("415 555")
            && !text.contains("Jane Smith"),
        "{text}"
    );
    assert!(text.contains("INV-2041"));
    let bad = post(
        &h,
        "/v1/redact",
        json!({"file": f, "categories": ["email", "ssn"]}),
    )
    .await;
    assert!(bad.body["message"]
        .as_str()
        .unwrap()
        .starts_with("categories[1]: "));
}

#[tokio::test]
async fn output_route_is_409_output_not_ready_then_302() {
    let h = start(&["--time-scale", "1"]).await; // processed after 1.5 s, settled 1 s later
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/redact?wait=10",
        json!({"file": f, "categories": ["email"]}),
    )
    .await;
    assert_eq!(r.body["status"], "processed");
    let id = r.body["id"].as_str().unwrap();
    let o = get(&h, &format!("/v1/runs/{id}/output/invoice.redacted.txt")).await;
    assert_eq!((o.status, o.code()), (409, "output_not_ready"));
    assert_eq!(o.body["retryable"], true);
    tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
    let o = get(&h, &format!("/v1/runs/{id}/output/invoice.redacted.txt")).await;
    assert_eq!(o.status, 302);
    assert!(o.header("location").unwrap().contains("/downloads/"));
    assert_eq!(
        get(&h, &format!("/v1/runs/{id}/output/nope.txt"))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn fill_with_values_writes_them_into_the_template() {
    let h = start_fast().await;
    let base = doc_server(vec![(
        "/form.txt",
        "text/plain",
        b"Full Name: ____\nCity: ____\nSignature: ____\n".to_vec(),
    )])
    .await;
    let t = post(&h, "/v1/files", json!({"url": format!("{base}/form.txt")})).await;
    let tid = t.body["id"].as_str().unwrap();
    let r = post(
        &h,
        "/v1/fill",
        json!({"template": {"id": tid}, "values": {"fullName": "Ada Lovelace", "city": "London"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["id"].as_str().unwrap().starts_with("flr_"));
    assert_eq!(r.body["output"]["values"]["full name"], "Ada Lovelace");
    assert_eq!(r.body["output"]["unfilled"], json!(["signature"]));
    let both = post(
        &h,
        "/v1/fill",
        json!({"template": {"id": tid}, "values": {}, "files": [{"id": tid}]}),
    )
    .await;
    assert_eq!(both.code(), "invalid_request");
}

#[tokio::test]
async fn sign_is_202_needs_input_exempt_from_purge_until_signed() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let r = post(
        &h,
        "/v1/sign",
        json!({"file": f, "signers": [{"name": "Ada", "email": "ada@example.com"}], "ttl": 60}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["status"], "needs_input");
    assert!(r.body["id"].as_str().unwrap().starts_with("sgr_"));
    let env = r.body["envelopeUrl"].as_str().unwrap().to_string();
    let id = r.body["id"].as_str().unwrap().to_string();
    post(&h, "/__emulator/clock/advance", json!({"seconds": 3600})).await;
    assert_eq!(
        get(&h, &format!("/v1/runs/{id}")).await.body["status"],
        "needs_input"
    );
    let s = call(
        &h,
        "POST",
        &format!("{env}/sign"),
        None,
        Some(json!({"email": "ada@example.com"})),
        &[],
    )
    .await;
    assert_eq!(s.status, 200, "{}", s.body);
    let g = get(&h, &format!("/v1/runs/{id}")).await;
    assert_eq!(g.body["status"], "processed");
    assert_eq!(g.body["signers"][0]["status"], "signed");
    let bad = post(
        &h,
        "/v1/sign",
        json!({"file": f, "signers": [{"name": "Ada", "email": "nope"}]}),
    )
    .await;
    assert!(bad.body["message"]
        .as_str()
        .unwrap()
        .starts_with("signers[0].email: "));
}

#[tokio::test]
async fn pipeline_runs_steps_over_the_same_files_and_emits_per_step_events() {
    let h = start_fast().await;
    let rcv = receiver(vec![200]).await;
    let f = text_file(&h).await;
    let r = post(&h, "/v1/pipeline", json!({"files": [f], "steps": [{"extract": {"schema": schema()}}, {"parse": {}}], "webhook": {"url": rcv.url}})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["id"].as_str().unwrap().starts_with("plr_"));
    let steps = r.body["output"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["capability"], "extract");
    assert_eq!(
        steps[0]["documents"][0]["output"]["value"]["invoiceNumber"],
        "INV-2041"
    );
    assert_eq!(steps[1]["capability"], "parse");
    for _ in 0..200 {
        if rcv.types().len() >= 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let types = rcv.types();
    assert_eq!(
        types.iter().filter(|t| *t == "run.completed").count(),
        2,
        "{types:?}"
    );
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "processing.completed")
            .count(),
        1
    );
    assert_eq!(
        types.iter().filter(|t| *t == "file.processed").count(),
        1,
        "{types:?}"
    );
    assert_eq!(
        types.iter().filter(|t| *t == "processing.started").count(),
        1
    );
    let bad = post(
        &h,
        "/v1/pipeline",
        json!({"files": [f], "steps": [{"sign": {}}]}),
    )
    .await;
    assert!(bad.body["message"]
        .as_str()
        .unwrap()
        .starts_with("steps[0]: "));
}

#[tokio::test]
async fn extract_batch_is_always_202_and_rejects_schema() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    post(
        &h,
        "/v1/extract/configs",
        json!({"name": "inv", "config": {"schema": schema()}}),
    )
    .await;
    let r = post(
        &h,
        "/v1/extract/batch",
        json!({"action": "inv", "files": [f, f]}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["runs"].as_array().unwrap().len(), 2);
    let r = post(
        &h,
        "/v1/extract/batch",
        json!({"action": "inv", "files": [f], "schema": schema()}),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "invalid_request"));
    let k = call(
        &h,
        "POST",
        "/v1/extract/batch",
        Some(KEY),
        Some(json!({"action": "inv", "files": [f]})),
        &[("idempotency-key", "same")],
    )
    .await;
    let k2 = call(
        &h,
        "POST",
        "/v1/extract/batch",
        Some(KEY),
        Some(json!({"action": "inv", "files": [f]})),
        &[("idempotency-key", "same")],
    )
    .await;
    assert_ne!(
        k.body["runs"][0]["id"], k2.body["runs"][0]["id"],
        "batch ignores idempotency-key"
    );
}

#[tokio::test]
async fn unsupported_type_is_422_file_ineligible_and_broken_pdf_502_file_unreadable() {
    let h = start_fast().await;
    let base = doc_server(vec![
        ("/a.png", "image/png", vec![0x89, b'P', b'N', b'G', 0, 1]),
        ("/b.pdf", "application/pdf", b"%PDF-1.4 nope".to_vec()),
    ])
    .await;
    let r = post(
        &h,
        "/v1/parse",
        json!({"file": {"url": format!("{base}/a.png")}}),
    )
    .await;
    assert_eq!((r.status, r.code()), (422, "file_ineligible"));
    let r = post(
        &h,
        "/v1/parse",
        json!({"file": {"url": format!("{base}/b.pdf")}}),
    )
    .await;
    assert_eq!((r.status, r.code()), (502, "file_unreadable"));
}

#[tokio::test]
async fn verb_idempotency_key_replays_the_run() {
    let h = start_fast().await;
    let f = text_file(&h).await;
    let a = call(
        &h,
        "POST",
        "/v1/parse",
        Some(KEY),
        Some(json!({"file": f})),
        &[("idempotency-key", "p1")],
    )
    .await;
    let b = call(
        &h,
        "POST",
        "/v1/parse",
        Some(KEY),
        Some(json!({"file": f})),
        &[("idempotency-key", "p1")],
    )
    .await;
    assert_eq!(a.body["id"], b.body["id"]);
    assert_eq!(b.header("idempotent-replay").as_deref(), Some("true"));
}

#[tokio::test]
async fn upload_not_arrived_is_409_file_not_ready() {
    let h = start_fast().await;
    let r = post(
        &h,
        "/v1/files",
        json!({"name": "a.txt", "mimeType": "text/plain"}),
    )
    .await;
    let p = post(&h, "/v1/parse", json!({"file": {"id": r.body["id"]}})).await;
    assert_eq!((p.status, p.code()), (409, "file_not_ready"));
}

#[tokio::test]
async fn oversized_citations_are_dropped_with_citations_omitted() {
    let h = start_fast().await;
    let mut props = serde_json::Map::new();
    let mut text = String::new();
    for i in 0..900 {
        props.insert(format!("field{i}"), json!({"type": "string"}));
        text.push_str(&format!(
            "field{i}: value number {i} with some words to cite\n"
        ));
    }
    let base = doc_server(vec![("/big.txt", "text/plain", text.into_bytes())]).await;
    let r = post(
        &h,
        "/v1/extract",
        json!({"file": {"url": format!("{base}/big.txt")}, "schema": {"type": "object", "properties": props}, "citations": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["output"]["citationsOmitted"], true);
    assert!(r.body["output"].get("citations").is_none());
    assert!(r.body["output"]["documents"][0].get("citations").is_none());
    assert_eq!(
        r.body["output"]["value"]["field7"],
        "value number 7 with some words to cite"
    );
}
