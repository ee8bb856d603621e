use crate::client::agent_runs::{
    self, AgentRunCreateParams, ApproveParams, CompleteTaskParams, RejectParams,
};
use crate::client::common::{FileRef, WebhookRef};
use crate::client::runs::{self, KeepParams, RunListParams};
use crate::client::verbs::{
    self, ExtractBatchParams, ExtractParams, FillParams, PipelineParams, SignParams, Signer,
    TemplateRef,
};
use crate::client::{configs, validate_extraction_schema, webhooks, ApiError, ErrorKind};
use serde_json::{json, Value};

#[track_caller]
fn assert_rejected(result: Result<impl std::fmt::Debug, ApiError>, code: &str, path: &str) {
    let err = result.expect_err("must be rejected");
    assert_eq!(err.code, code, "{err}");
    assert_eq!(err.kind, ErrorKind::Validation);
    assert_eq!(err.status, Some(400));
    assert!(
        err.message.starts_with(&format!("{path}:")),
        "message `{}` should start with `{path}:`",
        err.message
    );
}

fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

#[test]
fn schema_root_must_be_an_object_type() {
    assert_rejected(
        validate_extraction_schema(&json!({"type": "array"})),
        "invalid_schema",
        "schema.type",
    );
    assert_rejected(
        validate_extraction_schema(&json!([1])),
        "invalid_schema",
        "schema",
    );
    assert_rejected(
        validate_extraction_schema(&json!({"properties": {}})),
        "invalid_schema",
        "schema.type",
    );
    validate_extraction_schema(&json!({"type": "object"})).unwrap();
    validate_extraction_schema(&json!({"type": ["object", "null"]})).unwrap();
}

#[test]
fn schema_keywords_are_rejected_in_keyword_positions_with_their_path() {
    for kw in [
        "$defs", "$ref", "oneOf", "anyOf", "allOf", "const", "pattern",
    ] {
        let mut inner = json!({"type": "string"});
        inner[kw] = json!("x");
        let schema = obj(json!({"total": inner}));
        assert_rejected(
            validate_extraction_schema(&schema),
            "invalid_schema",
            &format!("schema.properties.total.{kw}"),
        );
    }
    let root = json!({"type": "object", "$defs": {}});
    assert_rejected(
        validate_extraction_schema(&root),
        "invalid_schema",
        "schema.$defs",
    );
    let in_items = obj(json!({"rows": {"type": "array", "items": {"anyOf": []}}}));
    assert_rejected(
        validate_extraction_schema(&in_items),
        "invalid_schema",
        "schema.properties.rows.items.anyOf",
    );
}

#[test]
fn properties_named_like_keywords_are_valid() {
    let schema = obj(json!({
        "$ref": {"type": "string"},
        "pattern": {"type": "string", "description": "a sewing pattern"},
        "const": {"type": "object", "properties": {"oneOf": {"type": "number"}}},
        "anyOf": {"type": "array", "items": {"type": "string"}},
    }));
    validate_extraction_schema(&schema).unwrap();
}

#[test]
fn keyword_names_inside_data_values_are_valid() {
    let schema = obj(json!({
        "kind": {"type": "string", "enum": ["$ref", "oneOf"], "default": "const",
                 "examples": [{"$ref": "#/x"}]},
        "meta": {"type": "object", "default": {"pattern": "x"}},
    }));
    validate_extraction_schema(&schema).unwrap();
}

/// A chain of `depth` nested objects below the root, the last holding a string field.
fn nested(levels: usize) -> Value {
    let mut node = json!({"type": "string"});
    for _ in 1..levels {
        node = obj(json!({"f": node}));
    }
    obj(json!({"f": node}))
}

#[test]
fn schema_nesting_of_five_levels_is_accepted_and_six_rejected() {
    validate_extraction_schema(&nested(5)).unwrap();
    let path =
        "schema.properties.f.properties.f.properties.f.properties.f.properties.f.properties.f";
    assert_rejected(
        validate_extraction_schema(&nested(6)),
        "invalid_schema",
        path,
    );
    let arrays = obj(
        json!({"a": {"type": "array", "items": {"type": "array", "items": {"type": "array",
        "items": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}}}}),
    );
    assert_rejected(
        validate_extraction_schema(&arrays),
        "invalid_schema",
        "schema.properties.a.items.items.items.items.items",
    );
}

#[test]
fn json_len_is_the_length_of_the_compact_text() {
    // Oracle: the text `json::to_text` writes (the size rules of the schema and metadata were its length).
    let texts = [
        r#"null"#,
        r#"[true,false,null,[],{}]"#,
        r#"{"a":"plain","b":"q\"uote","c":"back\\slash","d":"\n\r\t\b\f","e":"\u0001\u001f\u007f"}"#,
        r#"{"é":"ünïcödé ✓ 𝄞","k\u0000":0}"#,
        r#"[0,-0,1,-1,9007199254740992,9007199254740993,-9007199254740993,18446744073709551615]"#,
        r#"[0.5,-0.5,1.0,-0.0,1e300,1.5e-7,123456.789,1e21,2.5e-300,0.1]"#,
        r#"{"type":"object","properties":{"a":{"type":["number","null"],"minimum":0,"maximum":1.5,"enum":[1,"x",null]}}}"#,
    ];
    for text in texts {
        let value = crate::json::parse_value_exact(text).unwrap();
        assert_eq!(
            crate::client::validate::json_len(&value),
            crate::json::to_text(&value).len(),
            "{text}"
        );
    }
    let built =
        json!({"n": u64::MAX, "i": i64::MIN, "f": -2.75, "s": "\u{0}\u{1b}\"\\", "a": [[[]]]});
    assert_eq!(
        crate::client::validate::json_len(&built),
        crate::json::to_text(&built).len()
    );
}

#[test]
fn schema_of_64_kb_or_more_is_too_large() {
    let mut props = serde_json::Map::new();
    let mut i = 0;
    while serde_json::to_vec(&props).unwrap().len() < 70_000 {
        props.insert(
            format!("field_{i}"),
            json!({"type": "string", "description": "x".repeat(100)}),
        );
        i += 1;
    }
    let big = obj(Value::Object(props));
    assert_rejected(
        validate_extraction_schema(&big),
        "schema_too_large",
        "schema",
    );
    // exactly at the limit: 65 536 bytes is not "under 64 KB"
    let base = obj(json!({"d": {"type": "string", "description": ""}}));
    let pad = 65_536 - serde_json::to_vec(&base).unwrap().len();
    let at = obj(json!({"d": {"type": "string", "description": "y".repeat(pad)}}));
    assert_eq!(serde_json::to_vec(&at).unwrap().len(), 65_536);
    assert_rejected(
        validate_extraction_schema(&at),
        "schema_too_large",
        "schema",
    );
    let under = obj(json!({"d": {"type": "string", "description": "y".repeat(pad - 1)}}));
    validate_extraction_schema(&under).unwrap();
}

fn extract_base() -> ExtractParams {
    ExtractParams {
        file: Some(FileRef::url("https://f.example/a.pdf")),
        ..Default::default()
    }
}

#[test]
fn extract_mutually_exclusive_pairs_are_invalid_request() {
    let p = ExtractParams {
        files: Some(vec![FileRef::id("file_1")]),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "file");
    let p = ExtractParams {
        schema: Some(obj(json!({}))),
        action: Some("act_1".into()),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "schema");
    let p = ExtractParams {
        hints: Some("totals".into()),
        schema: Some(obj(json!({}))),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "hints");
    let p = ExtractParams {
        hints: Some("totals".into()),
        action: Some("act".into()),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "hints");
    let p = ExtractParams {
        hints: Some("totals".into()),
        instructions: Some("x".into()),
        ..extract_base()
    };
    verbs::extract(&p).unwrap();
}

#[test]
fn extract_checks_its_inline_schema() {
    let p = ExtractParams {
        schema: Some(json!({"type": "string"})),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_schema", "schema.type");
}

#[test]
fn verb_needs_a_file_and_accepts_at_most_100() {
    assert_rejected(
        verbs::extract(&ExtractParams::default()),
        "invalid_request",
        "file",
    );
    let many = vec![FileRef::id("f"); 101];
    let p = ExtractParams {
        file: None,
        files: Some(many),
        ..Default::default()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "files");
    let p = ExtractParams {
        file: None,
        files: Some(vec![FileRef::id("f"); 100]),
        ..Default::default()
    };
    verbs::extract(&p).unwrap();
    let p = ExtractParams {
        file: Some(FileRef::default()),
        ..Default::default()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "file");
    let both = FileRef {
        url: Some("https://a".into()),
        id: Some("f".into()),
        ..Default::default()
    };
    let p = ExtractParams {
        file: None,
        files: Some(vec![FileRef::id("f"), both]),
        ..Default::default()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "files[1].url");
}

#[test]
fn verb_ttl_metadata_and_webhook_are_bounded() {
    let p = ExtractParams {
        ttl: Some(604_801),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "ttl");
    let p = ExtractParams {
        ttl: Some(604_800),
        ..extract_base()
    };
    verbs::extract(&p).unwrap();
    let p = ExtractParams {
        metadata: Some(json!({"k": "v".repeat(10_240)})),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "metadata");
    let p = ExtractParams {
        metadata: Some(json!("text")),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "metadata");
    let p = ExtractParams {
        webhook: Some(WebhookRef {
            url: Some("https://h".into()),
            id: Some("whe_1".into()),
        }),
        ..extract_base()
    };
    assert_rejected(verbs::extract(&p), "invalid_request", "webhook.url");
}

#[test]
fn metadata_of_exactly_10_kb_is_accepted() {
    let pad = 10_240 - serde_json::to_vec(&json!({"k": ""})).unwrap().len();
    let m = json!({"k": "v".repeat(pad)});
    assert_eq!(serde_json::to_vec(&m).unwrap().len(), 10_240);
    let p = AgentRunCreateParams {
        agent: "agt".into(),
        files: vec![FileRef::id("f")],
        metadata: Some(m),
        ..Default::default()
    };
    agent_runs::create(&p).unwrap();
}

#[test]
fn extract_batch_rejects_schema_and_hints_and_needs_an_action() {
    let base = ExtractBatchParams {
        action: Some("act".into()),
        files: Some(vec![FileRef::id("f")]),
        ..Default::default()
    };
    verbs::extract_batch(&base).unwrap();
    let p = ExtractBatchParams {
        schema: Some(obj(json!({}))),
        ..base.clone()
    };
    assert_rejected(verbs::extract_batch(&p), "invalid_request", "schema");
    let p = ExtractBatchParams {
        hints: Some(json!("x")),
        ..base.clone()
    };
    assert_rejected(verbs::extract_batch(&p), "invalid_request", "hints");
    let p = ExtractBatchParams {
        action: None,
        ..base.clone()
    };
    assert_rejected(verbs::extract_batch(&p), "invalid_request", "action");
    let p = ExtractBatchParams {
        files: None,
        ..base
    };
    assert_rejected(verbs::extract_batch(&p), "invalid_request", "files");
}

#[test]
fn fill_needs_exactly_one_of_values_or_files() {
    let base = FillParams {
        template: Some(TemplateRef {
            id: "file_form".into(),
        }),
        ..Default::default()
    };
    assert_rejected(verbs::fill(&base), "invalid_request", "values");
    let both = FillParams {
        values: Some(json!({"a": 1})),
        files: Some(vec![FileRef::id("f")]),
        ..base.clone()
    };
    assert_rejected(verbs::fill(&both), "invalid_request", "values");
    verbs::fill(&FillParams {
        values: Some(json!({"a": 1})),
        ..base.clone()
    })
    .unwrap();
    verbs::fill(&FillParams {
        files: Some(vec![FileRef::id("f")]),
        ..base.clone()
    })
    .unwrap();
    let no_template = FillParams {
        values: Some(json!({})),
        ..Default::default()
    };
    assert_rejected(verbs::fill(&no_template), "invalid_request", "template");
}

#[test]
fn sign_needs_signers_with_name_and_email() {
    let base = SignParams {
        file: Some(FileRef::id("f")),
        ..Default::default()
    };
    assert_rejected(verbs::sign(&base), "invalid_request", "signers");
    let p = SignParams {
        signers: Some(vec![Signer {
            name: "A".into(),
            email: String::new(),
        }]),
        ..base.clone()
    };
    assert_rejected(verbs::sign(&p), "invalid_request", "signers[0].email");
    let p = SignParams {
        signers: Some(vec![Signer {
            name: "A".into(),
            email: "a@x".into(),
        }]),
        ..base
    };
    verbs::sign(&p).unwrap();
}

#[test]
fn pipeline_takes_files_not_a_single_file() {
    let p = PipelineParams {
        file: Some(FileRef::id("f")),
        steps: Some(vec![json!({"parse": {}})]),
        ..Default::default()
    };
    assert_rejected(verbs::pipeline(&p), "invalid_request", "file");
}

#[test]
fn pipeline_steps_must_be_capability_objects() {
    let base = PipelineParams {
        files: Some(vec![FileRef::id("f")]),
        ..Default::default()
    };
    assert_rejected(verbs::pipeline(&base), "invalid_request", "steps");
    let p = PipelineParams {
        steps: Some(vec![json!({"parse": {}}), json!("redact")]),
        ..base.clone()
    };
    assert_rejected(verbs::pipeline(&p), "invalid_request", "steps[1]");
    let p = PipelineParams {
        steps: Some(vec![
            json!({"extract": {"schema": {"type": "object", "$defs": {}}}}),
        ]),
        ..base.clone()
    };
    assert_rejected(
        verbs::pipeline(&p),
        "invalid_schema",
        "steps[0].extract.schema.$defs",
    );
    verbs::pipeline(&PipelineParams {
        steps: Some(vec![json!({"parse": {}}), json!({"redact": {"mode": "x"}})]),
        ..base
    })
    .unwrap();
}

#[test]
fn agent_run_files_must_be_1_to_200() {
    let p = AgentRunCreateParams {
        agent: "agt".into(),
        files: vec![],
        ..Default::default()
    };
    assert_rejected(agent_runs::create(&p), "invalid_request", "files");
    let p = AgentRunCreateParams {
        agent: "agt".into(),
        files: vec![FileRef::id("f"); 201],
        ..Default::default()
    };
    assert_rejected(agent_runs::create(&p), "invalid_request", "files");
    let p = AgentRunCreateParams {
        agent: "agt".into(),
        files: vec![FileRef::id("f"); 200],
        ..Default::default()
    };
    agent_runs::create(&p).unwrap();
    let p = AgentRunCreateParams {
        agent: " ".into(),
        files: vec![FileRef::id("f")],
        ..Default::default()
    };
    assert_rejected(agent_runs::create(&p), "invalid_request", "agent");
}

#[test]
fn reject_without_note_is_400() {
    assert_rejected(
        agent_runs::reject("agr_1", "apr_1", &RejectParams::default()),
        "invalid_request",
        "note",
    );
    assert_rejected(
        agent_runs::reject(
            "agr_1",
            "apr_1",
            &RejectParams {
                note: Some("  ".into()),
            },
        ),
        "invalid_request",
        "note",
    );
    agent_runs::reject(
        "agr_1",
        "apr_1",
        &RejectParams {
            note: Some("wrong vendor".into()),
        },
    )
    .unwrap();
}

#[test]
fn approval_note_is_at_most_4000_characters() {
    let ok = ApproveParams {
        note: Some("é".repeat(4000)),
        ..Default::default()
    };
    agent_runs::approve("agr_1", "apr_1", &ok).unwrap();
    let long = ApproveParams {
        note: Some("a".repeat(4001)),
        ..Default::default()
    };
    assert_rejected(
        agent_runs::approve("agr_1", "apr_1", &long),
        "invalid_request",
        "note",
    );
    let long = RejectParams {
        note: Some("a".repeat(4001)),
    };
    assert_rejected(
        agent_runs::reject("agr_1", "apr_1", &long),
        "invalid_request",
        "note",
    );
}

#[test]
fn approval_files_at_most_200_and_payload_under_1_mib() {
    let p = ApproveParams {
        files: Some(vec!["file_1".into(); 201]),
        ..Default::default()
    };
    assert_rejected(
        agent_runs::approve("agr_1", "apr_1", &p),
        "invalid_request",
        "files",
    );
    let p = ApproveParams {
        files: Some(vec!["file_1".into(); 200]),
        ..Default::default()
    };
    agent_runs::approve("agr_1", "apr_1", &p).unwrap();
    let p = ApproveParams {
        params: Some(json!({"blob": "x".repeat(1024 * 1024)})),
        ..Default::default()
    };
    assert_rejected(
        agent_runs::approve("agr_1", "apr_1", &p),
        "invalid_request",
        "params",
    );
    let p = ApproveParams {
        params: Some(json!([1])),
        ..Default::default()
    };
    assert_rejected(
        agent_runs::approve("agr_1", "apr_1", &p),
        "invalid_request",
        "params",
    );
}

#[test]
fn task_note_at_most_2000_and_files_at_most_20() {
    let p = CompleteTaskParams {
        note: Some("n".repeat(2001)),
        files: None,
    };
    assert_rejected(
        agent_runs::complete_task("agr_1", "tsk_1", &p),
        "invalid_request",
        "note",
    );
    let p = CompleteTaskParams {
        note: None,
        files: Some(vec!["f".into(); 21]),
    };
    assert_rejected(
        agent_runs::complete_task("agr_1", "tsk_1", &p),
        "invalid_request",
        "files",
    );
    let p = CompleteTaskParams {
        note: Some("n".repeat(2000)),
        files: Some(vec!["f".into(); 20]),
    };
    agent_runs::complete_task("agr_1", "tsk_1", &p).unwrap();
    let p = CompleteTaskParams {
        note: None,
        files: Some(vec!["".into()]),
    };
    assert_rejected(
        agent_runs::complete_task("agr_1", "tsk_1", &p),
        "invalid_request",
        "files[0]",
    );
}

#[test]
fn run_list_limit_is_1_to_50_with_at_most_3_metadata_filters() {
    for bad in [0, 51] {
        let p = RunListParams {
            limit: Some(bad),
            ..Default::default()
        };
        assert_rejected(runs::list(&p), "invalid_request", "limit");
    }
    runs::list(&RunListParams {
        limit: Some(50),
        ..Default::default()
    })
    .unwrap();
    let four = (0..4).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    assert_rejected(
        runs::list(&RunListParams {
            metadata: four,
            ..Default::default()
        }),
        "invalid_request",
        "metadata",
    );
    let queued = RunListParams {
        status: Some("queued".into()),
        ..Default::default()
    };
    assert_rejected(runs::list(&queued), "invalid_request", "status");
}

#[test]
fn keep_takes_space_id_or_space_not_both() {
    let both = KeepParams {
        space_id: Some("spc_1".into()),
        space: Some("Invoices".into()),
    };
    assert_rejected(runs::keep("exr_1", &both), "invalid_request", "spaceId");
    runs::keep("exr_1", &KeepParams::default()).unwrap();
    runs::keep(
        "exr_1",
        &KeepParams {
            space: Some("Invoices".into()),
            ..Default::default()
        },
    )
    .unwrap();
}

#[test]
fn ids_that_would_change_the_route_are_rejected() {
    for id in ["", ".", ".."] {
        assert_rejected(runs::retrieve(id), "invalid_request", "id");
    }
    assert_rejected(
        agent_runs::approve("agr_1", "", &ApproveParams::default()),
        "invalid_request",
        "approvalId",
    );
}

#[test]
fn webhook_urls_must_be_https() {
    let p = webhooks::WebhookCreateParams {
        url: "http://hooks.example/x".into(),
        events: None,
    };
    assert_rejected(webhooks::create(&p), "invalid_request", "url");
    let p = webhooks::WebhookCreateParams {
        url: "https://hooks.example/x".into(),
        events: Some(vec!["agent_run.completed".into()]),
    };
    webhooks::create(&p).unwrap();
    assert_rejected(
        webhooks::update("whe_1", &webhooks::WebhookUpdateParams::default()),
        "invalid_request",
        "body",
    );
}

#[test]
fn http_webhook_urls_pass_only_on_loopback_for_local_receivers() {
    for url in [
        "http://127.0.0.1:9000/hooks",
        "http://localhost/hooks",
        "http://[::1]:8080/x",
        "http://127.1.2.3/x",
    ] {
        let p = webhooks::WebhookCreateParams {
            url: url.into(),
            events: None,
        };
        assert!(webhooks::create(&p).is_ok(), "{url}");
    }
    for url in [
        "http://10.0.0.1/x",
        "http://localhost.evil.example/x",
        "http://127.0.0.1.evil.example/x",
        "http://128.0.0.1/x",
        "ftp://127.0.0.1/x",
    ] {
        let p = webhooks::WebhookCreateParams {
            url: url.into(),
            events: None,
        };
        assert_rejected(webhooks::create(&p), "invalid_request", "url");
    }
}

#[test]
fn extract_config_schema_is_checked_with_its_path() {
    let mut config = serde_json::Map::new();
    config.insert(
        "schema".into(),
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}),
    );
    let p = configs::ConfigParams {
        name: "invoices".into(),
        config,
    };
    assert_rejected(
        configs::create(configs::ConfigCapability::Extract, &p),
        "invalid_schema",
        "config.schema.properties.a.pattern",
    );
    configs::create(configs::ConfigCapability::Redact, &p).unwrap();
}
