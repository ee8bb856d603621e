//! Every route of the spec: method, path, body and answer shape.

use crate::client::agent_runs::{
    self, AgentRunCreateParams, ApproveParams, CompleteTaskParams, RejectParams,
};
use crate::client::common::{FileRef, WebhookRef};
use crate::client::configs::{self, ConfigCapability, ConfigParams};
use crate::client::realtime::{self, RealtimeSession, RealtimeSessionParams};
use crate::client::runs::{self, KeepParams};
use crate::client::verbs::{self, ExtractParams, ParseParams, RedactParams};
use crate::client::{actions, agents, files, webhooks, Method, RequestSpec, ResponseKind, Target};
use serde_json::{json, Value};

#[track_caller]
fn route(spec: &RequestSpec, method: Method, path: &str) {
    assert_eq!(spec.method, method);
    assert_eq!(spec.target, Target::Api(path.to_owned()));
}

#[test]
fn agent_routes() {
    route(&agents::list(), Method::Get, "/v1/agents");
    route(
        &agents::retrieve("agt/1").unwrap(),
        Method::Get,
        "/v1/agents/agt%2F1",
    );
    let create = agent_runs::create(&AgentRunCreateParams {
        agent: "agt_1".into(),
        files: vec![
            FileRef {
                url: Some("https://f/a.pdf".into()),
                processing: Some("ocr".into()),
                ..Default::default()
            },
            FileRef::id("file_2"),
        ],
        metadata: Some(json!({"order": "42"})),
        webhook: Some(WebhookRef {
            id: Some("whe_1".into()),
            url: None,
        }),
    })
    .unwrap();
    route(&create, Method::Post, "/v1/agent-runs");
    assert!(create.accepts_wait);
    assert_eq!(
        create.body.unwrap().to_value(),
        json!({"agent": "agt_1", "files": [{"url": "https://f/a.pdf", "processing": "ocr"}, {"id": "file_2"}],
               "metadata": {"order": "42"}, "webhook": {"id": "whe_1"}})
    );
    let read = agent_runs::retrieve("agr_1").unwrap();
    route(&read, Method::Get, "/v1/agent-runs/agr_1");
    assert!(read.accepts_wait);
}

#[test]
fn approval_and_task_routes() {
    let approve = agent_runs::approve(
        "agr_1",
        "apr_1",
        &ApproveParams {
            note: Some("ok".into()),
            params: Some(json!({"amount": 5})),
            files: Some(vec!["file_1".into()]),
        },
    )
    .unwrap();
    route(
        &approve,
        Method::Post,
        "/v1/agent-runs/agr_1/approvals/apr_1",
    );
    assert_eq!(
        approve.body.unwrap().to_value(),
        json!({"decision": "approve", "note": "ok", "params": {"amount": 5}, "files": ["file_1"]})
    );
    let bare = agent_runs::approve("agr_1", "apr_1", &ApproveParams::default()).unwrap();
    assert_eq!(
        bare.body.unwrap().to_value(),
        json!({"decision": "approve"})
    );
    let reject = agent_runs::reject(
        "agr_1",
        "apr_1",
        &RejectParams {
            note: Some("no".into()),
        },
    )
    .unwrap();
    assert_eq!(
        reject.body.unwrap().to_value(),
        json!({"decision": "reject", "note": "no"})
    );
    let done = agent_runs::complete_task("agr_1", "tsk_1", &CompleteTaskParams::default()).unwrap();
    route(
        &done,
        Method::Post,
        "/v1/agent-runs/agr_1/tasks/tsk_1/complete",
    );
    assert_eq!(
        done.body.unwrap().to_value(),
        json!({}),
        "an empty object when neither field is set"
    );
    assert!(done.accepts_wait);
}

#[test]
fn verb_routes() {
    let file = Some(FileRef::id("file_1"));
    let extract = verbs::extract(&ExtractParams {
        file: file.clone(),
        schema: Some(
            json!({"type": "object", "properties": {"total": {"type": ["number", "null"]}}}),
        ),
        citations: Some(true),
        unit: Some("per_document".into()),
        ttl: Some(3600),
        ..Default::default()
    })
    .unwrap();
    route(&extract, Method::Post, "/v1/extract");
    let body = extract.body.unwrap().to_value();
    assert_eq!(body["citations"], true);
    assert_eq!(body["ttl"], 3600);
    assert!(body.get("hints").is_none(), "unset fields are not sent");
    let batch = verbs::extract_batch(&verbs::ExtractBatchParams {
        action: Some("act".into()),
        files: Some(vec![FileRef::id("f")]),
        ..Default::default()
    })
    .unwrap();
    route(&batch, Method::Post, "/v1/extract/batch");
    route(
        &verbs::parse(&ParseParams {
            file: file.clone(),
            ..Default::default()
        })
        .unwrap(),
        Method::Post,
        "/v1/parse",
    );
    let mut extra = serde_json::Map::new();
    extra.insert("language".into(), json!("fr"));
    let redact = verbs::redact(&RedactParams {
        file: file.clone(),
        categories: Some(vec!["names".into()]),
        mode: Some("black".into()),
        extra,
        ..Default::default()
    })
    .unwrap();
    route(&redact, Method::Post, "/v1/redact");
    assert_eq!(
        redact.body.unwrap().to_value()["language"],
        "fr",
        "unknown fields pass through"
    );
    let fill = verbs::fill(&verbs::FillParams {
        template: Some(verbs::TemplateRef {
            id: "file_form".into(),
        }),
        values: Some(json!({"name": "A"})),
        ..Default::default()
    })
    .unwrap();
    route(&fill, Method::Post, "/v1/fill");
    assert_eq!(
        fill.body.unwrap().to_value()["template"],
        json!({"id": "file_form"})
    );
    let sign = verbs::sign(&verbs::SignParams {
        file: file.clone(),
        signers: Some(vec![verbs::Signer {
            name: "A".into(),
            email: "a@x".into(),
        }]),
        ..Default::default()
    })
    .unwrap();
    route(&sign, Method::Post, "/v1/sign");
    let pipe = verbs::pipeline(&verbs::PipelineParams {
        files: Some(vec![FileRef::id("f")]),
        steps: Some(vec![json!({"parse": {}})]),
        ..Default::default()
    })
    .unwrap();
    route(&pipe, Method::Post, "/v1/pipeline");
    assert!(pipe.accepts_wait);
}

#[test]
fn config_and_action_routes() {
    let p = ConfigParams {
        name: "invoices".into(),
        config: serde_json::Map::new(),
    };
    for (cap, path) in [
        (ConfigCapability::Extract, "/v1/extract/configs"),
        (ConfigCapability::Redact, "/v1/redact/configs"),
        (ConfigCapability::Fill, "/v1/fill/configs"),
    ] {
        let spec = configs::create(cap, &p).unwrap();
        route(&spec, Method::Post, path);
        assert_eq!(
            spec.body.unwrap().to_value(),
            json!({"name": "invoices", "config": {}})
        );
    }
    route(&actions::catalog(), Method::Get, "/v1/actions/catalog");
    let old = actions::create(&actions::ActionParams {
        capability: Some(json!("fill")),
        name: p.name.clone(),
        config: p.config.clone(),
    })
    .unwrap();
    route(&old, Method::Post, "/v1/actions");
    assert_eq!(
        old.body.unwrap().to_value(),
        json!({"capability": "fill", "name": "invoices", "config": {}})
    );
    assert_eq!(
        ConfigCapability::parse("sign").unwrap_err().code,
        "invalid_request"
    );
}

#[test]
fn run_routes() {
    route(
        &runs::list(&Default::default()).unwrap(),
        Method::Get,
        "/v1/runs",
    );
    route(
        &runs::retrieve("exr_1").unwrap(),
        Method::Get,
        "/v1/runs/exr_1",
    );
    let cancel = runs::cancel("exr_1").unwrap();
    route(&cancel, Method::Post, "/v1/runs/exr_1/cancel");
    let delete = runs::delete("exr_1").unwrap();
    route(&delete, Method::Delete, "/v1/runs/exr_1");
    assert_eq!(delete.response, ResponseKind::NoContent);
    let keep = runs::keep(
        "exr_1",
        &KeepParams {
            space_id: Some("spc_1".into()),
            space: None,
        },
    )
    .unwrap();
    route(&keep, Method::Post, "/v1/runs/exr_1/keep");
    assert_eq!(keep.body.unwrap().to_value(), json!({"spaceId": "spc_1"}));
    let out = runs::output_url("exr_1", "out file.pdf").unwrap();
    route(&out, Method::Get, "/v1/runs/exr_1/output/out%20file.pdf");
    assert_eq!(out.response, ResponseKind::Redirect);
}

#[test]
fn file_routes_and_upload_plan() {
    let create = files::create(&files::FileCreateParams {
        url: "https://f.example/a.pdf".into(),
        name: Some("a.pdf".into()),
    })
    .unwrap();
    route(&create, Method::Post, "/v1/files");
    assert_eq!(
        create.body.unwrap().to_value(),
        json!({"url": "https://f.example/a.pdf", "name": "a.pdf"})
    );
    assert_eq!(
        files::create(&files::FileCreateParams {
            url: "a.pdf".into(),
            name: None
        })
        .unwrap_err()
        .code,
        "invalid_request"
    );
    let register = files::register_upload("a.pdf", "application/pdf").unwrap();
    route(&register, Method::Post, "/v1/files");
    assert_eq!(
        register.body.unwrap().to_value(),
        json!({"name": "a.pdf", "mimeType": "application/pdf"})
    );
    let answer =
        json!({"id": "file_1", "status": "pending", "uploadUrl": "https://up.example/1?sig=x"});
    let url = files::upload_url(&answer).unwrap();
    let put = files::upload_put(&url, "application/pdf").unwrap();
    assert_eq!(put.method, Method::Put);
    assert!(!put.auth);
    assert_eq!(
        put.raw_body_content_type.as_deref(),
        Some("application/pdf")
    );
    assert_eq!(
        files::upload_url(&json!({"id": "file_1"}))
            .unwrap_err()
            .code,
        "unexpected_shape"
    );
    assert_eq!(
        files::register_upload("a.pdf", "pdf").unwrap_err().code,
        "invalid_request"
    );
    assert_eq!(
        files::register_upload("a.pdf", "text/plain\r\nx: y")
            .unwrap_err()
            .code,
        "invalid_request"
    );
    route(
        &files::retrieve("file_1").unwrap(),
        Method::Get,
        "/v1/files/file_1",
    );
}

#[test]
fn webhook_routes() {
    let create = webhooks::create(&webhooks::WebhookCreateParams {
        url: "https://h.example/in".into(),
        events: None,
    })
    .unwrap();
    route(&create, Method::Post, "/v1/webhooks");
    assert_eq!(
        create.body.unwrap().to_value(),
        json!({"url": "https://h.example/in"}),
        "events omitted means all"
    );
    route(&webhooks::list(), Method::Get, "/v1/webhooks");
    route(
        &webhooks::retrieve("whe_1").unwrap(),
        Method::Get,
        "/v1/webhooks/whe_1",
    );
    let update = webhooks::update(
        "whe_1",
        &webhooks::WebhookUpdateParams {
            disabled: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    route(&update, Method::Patch, "/v1/webhooks/whe_1");
    assert_eq!(update.body.unwrap().to_value(), json!({"disabled": true}));
    let delete = webhooks::delete("whe_1").unwrap();
    route(&delete, Method::Delete, "/v1/webhooks/whe_1");
    assert_eq!(delete.response, ResponseKind::NoContent);
    route(
        &webhooks::deliveries("whe_1").unwrap(),
        Method::Get,
        "/v1/webhooks/whe_1/deliveries",
    );
    let jwks = webhooks::jwks();
    route(&jwks, Method::Get, "/v1/webhooks/jwks.json");
    assert!(!jwks.auth);
}

#[test]
fn realtime_session_route_and_ticket_redaction() {
    let spec = realtime::create_session(&RealtimeSessionParams {
        final_pass: Some(true),
        ..Default::default()
    })
    .unwrap();
    route(&spec, Method::Post, "/v1/realtime/transcriptions");
    assert_eq!(spec.body.unwrap().to_value(), json!({"finalPass": true}));
    let session: RealtimeSession = serde_json::from_value(json!({"id": "rts_1", "url": "wss://rt.example/s?ticket=TICKET_SECRET", "ticket": "TICKET_SECRET"})).unwrap();
    let text = format!("{session:?}");
    assert!(!text.contains("TICKET_SECRET"), "{text}");
    assert!(text.contains("wss://rt.example/s"));
}

#[test]
fn typed_resources_tolerate_unknown_fields_and_statuses() {
    let run: agent_runs::AgentRun = serde_json::from_value(json!({
        "object": "agent_run", "id": "agr_1", "status": "hibernating", "brandNew": {"x": 1},
        "agent": {"id": "agt_1", "name": "Payables", "version": 3},
        "waiting": {"approvals": 1, "tasks": 0, "summary": "needs sign-off"},
        "tasks": [{"id": "t1", "title": "Review", "executor": "human", "status": "ready", "summary": null, "completedAt": null}],
        "approvals": [{"id": "apr_1", "kind": "before", "action": "pay", "requestedAt": "2026-01-01T00:00:00.000Z",
                       "rationale": "r", "files": [{"id": "file_1", "name": "a.pdf"}], "params": {"amount": 5}}],
        "statusUrl": "/v1/agent-runs/agr_1", "metadata": {"k": "v"}, "expiresAt": "2026-01-08T00:00:00.000Z"
    }))
    .unwrap();
    assert_eq!(
        run.status,
        agent_runs::AgentRunStatus::Other("hibernating".into())
    );
    assert_eq!(
        serde_json::to_value(&run.status).unwrap(),
        json!("hibernating"),
        "unknown status kept verbatim"
    );
    assert!(!run.status.is_finished());
    assert_eq!(
        run.tasks[0].executor,
        Some(crate::client::common::Executor::Human)
    );
    assert_eq!(run.approvals[0].files[0].id.as_deref(), Some("file_1"));
    assert_eq!(run.extra["brandNew"], json!({"x": 1}));
    let handle: agent_runs::AgentRun = serde_json::from_value(json!({"object": "agent_run", "id": "agr_2", "status": "processing", "statusUrl": "/v1/agent-runs/agr_2"})).unwrap();
    assert_eq!(handle.status, agent_runs::AgentRunStatus::Processing);
    let decision: agent_runs::ApprovalDecision = serde_json::from_value(json!({"id": "apr_1", "kind": "before", "action": "pay", "status": "approved",
        "decidedAt": "2026-01-01T00:00:00.000Z", "note": null, "run": {"id": "agr_1", "status": "processing", "statusUrl": "/v1/agent-runs/agr_1"}})).unwrap();
    assert_eq!(
        decision.run.unwrap().status,
        agent_runs::AgentRunStatus::Processing
    );
    let agents: agents::AgentList = serde_json::from_value(json!({"object": "list", "data": [{"object": "agent", "id": "agt_1", "name": "P", "version": 2,
        "tasks": [{"id": "t", "title": "x", "executor": "agent", "dependsOn": []}], "actions": [{"name": "pay", "approval": "before"}]}]})).unwrap();
    assert_eq!(
        agents.data[0].actions[0].approval,
        Some(agents::ApprovalKind::Before)
    );
    let output: runs::ExtractOutput = serde_json::from_value(json!({"value": {"total": 5}, "documents": [{"fileId": "file_1", "name": "a", "status": "processed",
        "value": {"total": 5}, "citations": {"total": [{"fileId": "file_1", "page": 0, "bbox": {"x": 0.1, "y": 0.2, "width": 0.3, "height": 0.05}, "text": "5", "confidence": 4}]}}],
        "citationsOmitted": true})).unwrap();
    assert_eq!(output.citations_omitted, Some(true));
    let cite: runs::Citation =
        serde_json::from_value(output.documents[0].citations.as_ref().unwrap()["total"][0].clone())
            .unwrap();
    assert_eq!(cite.bbox.unwrap().width, 0.3);
    let delivery: webhooks::WebhookDelivery = serde_json::from_value(json!({"endpointId": "whe_1", "processingId": "agr_1", "eventId": "evt_1",
        "type": "agent_run.completed", "attempt": 2, "responseStatus": 500, "ok": false, "at": "2026-01-01T00:00:00.000Z"})).unwrap();
    assert_eq!(delivery.event_type.as_deref(), Some("agent_run.completed"));
    let _: Value = serde_json::to_value(&delivery).unwrap();
}
