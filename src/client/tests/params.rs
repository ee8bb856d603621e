//! Params read once as JSON and checked by the route's table: the table names exactly the struct's fields, a bad
//! field is `invalid_request` at its path, and the caller's text is the body.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::sent;
use crate::client::common::{FileRef, WebhookRef, FILE_REF, WEBHOOK_REF};
use crate::client::params::{Fields, Kind, Params, Table};
use crate::client::request::RequestBody;
use crate::client::{
    actions, agent_runs, configs, files, realtime, runs, verbs, webhooks, RequestSpec,
};

/// A value of every field of a table (each list holding one item).
fn sample(table: &Table) -> Value {
    let map: Map<String, Value> = table
        .fields
        .iter()
        .map(|f| (f.name.to_owned(), sample_of(f.kind)))
        .collect();
    Value::Object(map)
}

fn sample_of(kind: Kind) -> Value {
    match kind {
        Kind::Str => json!("s"),
        Kind::Bool => json!(true),
        Kind::Uint => json!(7),
        Kind::Number => json!(1.5),
        Kind::Any => json!({"any": [1, "two"]}),
        Kind::List(item) => json!([sample_of(*item)]),
        Kind::Object(table) => sample(table),
        Kind::Map(item) => json!({"name": sample_of(*item)}),
    }
}

/// The field names serde's derive hands to `deserialize_struct` (`None` for a struct with a `flatten` field, whose
/// derive reads a map instead).
fn struct_fields<T: DeserializeOwned>() -> Option<Vec<&'static str>> {
    crate::options::struct_field_names::<T>().map(<[_]>::to_vec)
}

fn names(table: &Table) -> Vec<&'static str> {
    let mut names: Vec<_> = table.fields.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names
}

/// A table's sample goes through the struct unchanged (every table field is a struct field of a matching type, none
/// lands in `extra`), and a struct without `flatten` declares exactly the table's names.
fn assert_table_is_the_struct<T: Fields + DeserializeOwned + Serialize>(what: &str) {
    let table = T::TABLE;
    let sample = sample(table);
    let typed: T = serde_json::from_value(sample.clone())
        .unwrap_or_else(|e| panic!("{what}: the table's sample does not fit the struct: {e}"));
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        sample,
        "{what}: a table field is not a field of the struct"
    );
    if let Some(mut fields) = struct_fields::<T>() {
        fields.sort_unstable();
        assert_eq!(fields, names(table), "{what}: the struct's fields");
    }
}

struct Nested<T>(std::marker::PhantomData<T>);
impl Fields for Nested<FileRef> {
    const TABLE: &'static Table = &FILE_REF;
}
impl Fields for Nested<WebhookRef> {
    const TABLE: &'static Table = &WEBHOOK_REF;
}

fn assert_nested_table<T: DeserializeOwned>(table: &Table, what: &str) {
    let mut fields = struct_fields::<T>().unwrap();
    fields.sort_unstable();
    assert_eq!(fields, names(table), "{what}");
}

#[test]
fn each_route_table_names_exactly_its_struct_fields() {
    assert_table_is_the_struct::<verbs::ExtractParams>("extract");
    assert_table_is_the_struct::<verbs::ExtractBatchParams>("extract batch");
    assert_table_is_the_struct::<verbs::ParseParams>("parse");
    assert_table_is_the_struct::<verbs::RedactParams>("redact");
    assert_table_is_the_struct::<verbs::FillParams>("fill");
    assert_table_is_the_struct::<verbs::SignParams>("sign");
    assert_table_is_the_struct::<verbs::PipelineParams>("pipeline");
    assert_table_is_the_struct::<agent_runs::AgentRunCreateParams>("agent run create");
    assert_table_is_the_struct::<agent_runs::ApproveParams>("approve");
    assert_table_is_the_struct::<agent_runs::RejectParams>("reject");
    assert_table_is_the_struct::<agent_runs::CompleteTaskParams>("complete task");
    assert_table_is_the_struct::<webhooks::WebhookCreateParams>("webhook create");
    assert_table_is_the_struct::<webhooks::WebhookUpdateParams>("webhook update");
    assert_table_is_the_struct::<configs::ConfigParams>("config create");
    assert_table_is_the_struct::<actions::ActionParams>("action create");
    assert_table_is_the_struct::<realtime::RealtimeSessionParams>("realtime session");
    assert_table_is_the_struct::<files::FileCreateParams>("file create");
    assert_table_is_the_struct::<runs::KeepParams>("keep");
    assert_table_is_the_struct::<runs::RunListParams>("run list");
    assert_nested_table::<FileRef>(<Nested<FileRef>>::TABLE, "file reference");
    assert_nested_table::<crate::client::options::ClientOptions>(
        &crate::client::options::CLIENT_OPTIONS,
        "client options",
    );
    assert_nested_table::<WebhookRef>(<Nested<WebhookRef>>::TABLE, "webhook reference");
    assert_nested_table::<verbs::TemplateRef>(
        table_of(<verbs::FillParams as Fields>::TABLE, "template"),
        "template",
    );
    assert_nested_table::<verbs::Signer>(
        table_of(<verbs::SignParams as Fields>::TABLE, "signers"),
        "signer",
    );
}

/// A struct with `flatten` has no field list to read: its fields are named here, so a new one fails to compile until
/// it is added (and then to its table, which the sample above checks).
#[test]
fn a_flattened_struct_declares_only_its_tables_fields() {
    let realtime::RealtimeSessionParams { final_pass, extra } = Default::default();
    assert_eq!((final_pass, extra.len()), (None, 0));
    assert_eq!(
        names(<realtime::RealtimeSessionParams as Fields>::TABLE),
        ["finalPass"]
    );
}

/// The table of an object field (or of the items of a list field).
fn table_of(table: &Table, name: &str) -> &'static Table {
    let field = table.fields.iter().find(|f| f.name == name).unwrap();
    match field.kind {
        Kind::Object(t) => t,
        Kind::List(Kind::Object(t)) => t,
        other => panic!("{name} is {other:?}"),
    }
}

fn message<T: Fields>(
    text: &str,
    route: fn(Params<T>) -> Result<RequestSpec, crate::client::ApiError>,
) -> String {
    let err = Params::<T>::from_text(text).and_then(route).unwrap_err();
    assert_eq!(err.code, "invalid_request", "{text}");
    assert_eq!(err.status, Some(400), "{text}");
    err.message
}

#[test]
fn a_field_of_the_wrong_type_is_invalid_request_at_its_path() {
    let cases: [(&str, &str); 9] = [
        (r#"{"file":{"url":5}}"#, "file.url: must be a string"),
        (r#"{"files":{"url":"u"}}"#, "files: must be an array"),
        (
            r#"{"files":[{"id":"a"},"b"]}"#,
            "files[1]: must be an object",
        ),
        (
            r#"{"file":{"id":"a"},"ttl":-1}"#,
            "ttl: must be a non-negative whole number",
        ),
        (
            r#"{"file":{"id":"a"},"ttl":1.5}"#,
            "ttl: must be a non-negative whole number",
        ),
        (
            r#"{"file":{"id":"a"},"citations":"yes"}"#,
            "citations: must be a boolean",
        ),
        (
            r#"{"file":{"id":"a"},"webhook":{"url":["u"]}}"#,
            "webhook.url: must be a string",
        ),
        (r#"[1]"#, "params: must be a JSON object"),
        (r#"{"file":"#, "params: must be a JSON object"),
    ];
    for (text, want) in cases {
        assert_eq!(message(text, verbs::extract_params), want, "{text}");
    }
    assert_eq!(
        message(
            r#"{"file":{"id":"a"},"signers":[{"name":"n"}]}"#,
            verbs::sign_params
        ),
        "signers[0].email: is required"
    );
    assert_eq!(
        message(r#"{"template":{},"values":{}}"#, verbs::fill_params),
        "template.id: is required"
    );
    assert_eq!(
        message(
            r#"{"files":[{"id":"a"}],"steps":"parse"}"#,
            verbs::pipeline_params
        ),
        "steps: must be an array"
    );
}

#[test]
fn the_callers_text_is_the_body_with_unknown_fields_kept() {
    let text = r#"{"zeta":{"b":1,"a":2},"file":{"url":"https://example.com/i.pdf"},"schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}},"ttl":60}"#;
    let spec = verbs::extract_params(Params::from_text(text).unwrap()).unwrap();
    assert_eq!(
        spec.body.as_ref().unwrap().to_value()["zeta"],
        json!({"a": 2, "b": 1})
    );
    assert_eq!(sent(spec), text);
}

#[test]
fn nulls_and_a_file_references_unknown_keys_are_not_sent_and_the_rest_keeps_the_callers_order() {
    let text = r#"{"ttl":null,"files":[{"url":"https://example.com/i.pdf","x":1,"name":null}],"zeta":null,"b":1,"a":2}"#;
    let spec = verbs::parse_params(Params::from_text(text).unwrap()).unwrap();
    assert_eq!(
        sent(spec),
        r#"{"files":[{"url":"https://example.com/i.pdf"}],"zeta":null,"b":1,"a":2}"#
    );
}

/// The request of the first attempt of `spec`.
fn first_request(spec: RequestSpec) -> crate::client::HttpRequest {
    super::run(
        spec,
        &crate::client::CallOptions::default(),
        vec![super::Reply::Http(202, vec![], r#"{"id":"exr_1"}"#)],
    )
    .requests
    .remove(0)
}

#[test]
fn only_a_body_that_is_the_callers_text_as_given_says_so() {
    // The host may then send its own copy of the text (the JS string of `JSON.stringify`) instead of the body.
    let text = r#"{"file":{"url":"https://example.com/i.pdf"},"zeta":1}"#;
    let verbatim = first_request(verbs::extract_params(Params::from_text(text).unwrap()).unwrap());
    assert!(verbatim.caller_text);
    assert_eq!(verbatim.body.as_deref(), Some(text));
    // Changed by the table (a null left out), extended by the client (a decision), or built from a struct: not it.
    let changed = r#"{"file":{"url":"https://example.com/i.pdf"},"ttl":null}"#;
    let changed =
        first_request(verbs::extract_params(Params::from_text(changed).unwrap()).unwrap());
    assert!(!changed.caller_text);
    let approve = agent_runs::approve_params("agr_1", "apr_1", Params::from_text("{}").unwrap());
    assert!(!first_request(approve.unwrap()).caller_text);
    let typed = verbs::ExtractParams {
        file: Some(FileRef::url("https://example.com/i.pdf")),
        ..Default::default()
    };
    assert!(!first_request(verbs::extract(&typed).unwrap()).caller_text);
    assert!(!first_request(runs::retrieve("exr_1").unwrap()).caller_text);
}

#[test]
fn a_struct_and_its_json_text_build_the_same_request() {
    let text = r#"{"file":{"id":"file_1"},"signers":[{"name":"Ann","email":"ann@example.com"}],"ttl":60,"novel":true}"#;
    let typed: verbs::SignParams = serde_json::from_str(text).unwrap();
    let from_struct = verbs::sign(&typed).unwrap();
    let from_text = verbs::sign_params(Params::from_text(text).unwrap()).unwrap();
    assert_eq!(
        from_struct.body.map(|b| b.to_value()),
        from_text.body.as_ref().map(RequestBody::to_value)
    );
    assert_eq!(sent(from_text), text);
}

#[test]
fn a_decision_follows_the_callers_text_and_an_ignored_key_is_not_sent() {
    let text = r#"{"params":{"zeta":1,"alpha":2},"note":"ok"}"#;
    let spec = agent_runs::approve_params("agr_1", "apr_1", Params::from_text(text).unwrap());
    assert_eq!(
        sent(spec.unwrap()),
        r#"{"params":{"zeta":1,"alpha":2},"note":"ok","decision":"approve"}"#
    );
    let spec = agent_runs::reject_params(
        "agr_1",
        "apr_1",
        Params::from_text("{\"note\":\"no\",\"x\":1}").unwrap(),
    );
    assert_eq!(sent(spec.unwrap()), r#"{"note":"no","decision":"reject"}"#);
    let spec = agent_runs::complete_task_params("agr_1", "tsk_1", Params::from_text("{}").unwrap());
    assert_eq!(sent(spec.unwrap()), "{}");
    let spec = agent_runs::approve_params("agr_1", "apr_1", Params::from_text("{}").unwrap());
    assert_eq!(sent(spec.unwrap()), r#"{"decision":"approve"}"#);
}

#[test]
fn an_agent_run_needs_its_agent_and_files_of_the_right_type() {
    let create = agent_runs::create_params;
    assert_eq!(message(r#"{"agent":"a"}"#, create), "files: is required");
    assert_eq!(
        message(r#"{"files":[{"id":"f"}]}"#, create),
        "agent: is required"
    );
    assert_eq!(
        message(r#"{"agent":1,"files":[{"id":"f"}]}"#, create),
        "agent: must be a string"
    );
    let approve = |p| agent_runs::approve_params("agr_1", "apr_1", p);
    assert_eq!(
        message(r#"{"files":["f",2]}"#, approve),
        "files[1]: must be a string"
    );
}

#[test]
fn a_config_without_config_sends_an_empty_one_after_the_callers_fields() {
    let create = |p| configs::create_params(configs::ConfigCapability::Fill, p);
    let spec = create(Params::from_text(r#"{"name":"n"}"#).unwrap()).unwrap();
    assert_eq!(sent(spec), r#"{"name":"n","config":{}}"#);
    let text = r#"{"config":{"b":1,"a":2},"name":"n"}"#;
    assert_eq!(
        sent(create(Params::from_text(text).unwrap()).unwrap()),
        text
    );
    assert_eq!(
        message(r#"{"name":"n","config":[]}"#, create),
        "config: must be an object"
    );
    let action = r#"{"name":"n","capability":"redact"}"#;
    let spec = actions::create_params(Params::from_text(action).unwrap()).unwrap();
    assert_eq!(
        sent(spec),
        r#"{"name":"n","capability":"redact","config":{}}"#
    );
}

#[test]
fn the_other_creations_check_their_field_types() {
    assert_eq!(
        message(
            r#"{"url":"https://h.example","events":"a"}"#,
            webhooks::create_params
        ),
        "events: must be an array"
    );
    let update = |p| webhooks::update_params("whe_1", p);
    assert_eq!(
        message(r#"{"disabled":"yes"}"#, update),
        "disabled: must be a boolean"
    );
    assert_eq!(
        message(r#"{"name":"a"}"#, files::create_params),
        "url: is required"
    );
    let keep = |p| runs::keep_params("exr_1", p);
    assert_eq!(message(r#"{"space":1}"#, keep), "space: must be a string");
    assert_eq!(
        message(r#"{"finalPass":1}"#, realtime::create_session_params),
        "finalPass: must be a boolean"
    );
}

#[test]
fn run_list_metadata_filters_keep_the_callers_order() {
    for text in [
        r#"{"metadata":{"zeta":"1","alpha":"2"},"limit":5}"#,
        r#"{"cursor":null,"metadata":{"zeta":"1","alpha":"2"},"limit":5,"x":1}"#,
    ] {
        let p = runs::RunListParams::from_params(&Params::from_text(text).unwrap()).unwrap();
        assert_eq!(p.limit, Some(5), "{text}");
        assert_eq!(
            p.metadata,
            [
                ("zeta".to_owned(), "1".to_owned()),
                ("alpha".to_owned(), "2".to_owned())
            ],
            "{text}"
        );
    }
    let list = |p: Params<runs::RunListParams>| runs::RunListParams::from_params(&p);
    let err = Params::from_text(r#"{"metadata":{"a":1}}"#)
        .and_then(list)
        .unwrap_err();
    assert_eq!(err.message, "metadata.a: must be a string");
    let err = Params::from_text(r#"{"limit":4294967296}"#)
        .and_then(list)
        .unwrap_err();
    assert_eq!(err.message, "limit: must be between 1 and 50");
}

/// A config created from the caller's text (read where it lies: [`crate::json::tape`]) and from the same params read
/// into a `Value` first (the typed path): the same answer, error or body. The text is written as a caller may write
/// it: whitespace, escapes, digits, a name given twice.
fn same_as_typed(text: &str) -> Result<Value, String> {
    let create = |p| configs::create_params(configs::ConfigCapability::Extract, p);
    let describe = |e: crate::client::ApiError| format!("{} {}", e.code, e.message);
    let from_text = Params::from_text(text)
        .and_then(create)
        .map(|spec| spec.body.map(|b| b.to_value()).unwrap_or_default())
        .map_err(describe);
    let value = crate::json::parse_value_exact(text).unwrap_or_else(|| panic!("not JSON: {text}"));
    let typed: configs::ConfigParams = serde_json::from_value(value).expect("the case is a config");
    let from_typed = configs::create(configs::ConfigCapability::Extract, &typed)
        .map(|spec| spec.body.map(|b| b.to_value()).unwrap_or_default())
        .map_err(describe);
    assert_eq!(from_text, from_typed, "{text}");
    from_text
}

#[test]
fn a_schema_read_where_it_lies_gets_the_answer_of_the_same_schema_as_a_value() {
    let ok = [
        r#"{"name":"n","config":{"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}"#,
        // Whitespace, escapes and another spelling of a number.
        "{ \"name\" : \"n\" ,\n \"config\" : { \"schema\" : { \"type\" : [ \"object\" , \"null\" ] , \"maximum\" : 1.0e1 , \"properties\" : { \"\\u00e9\" : { \"type\" : \"number\" } } } } }",
        // Names given twice: the last one counts, as `JSON.parse` reads them.
        r#"{"name":"n","config":{"schema":{"type":"string","type":"object","properties":{"a":{"$ref":"x"},"a":{"type":"string"}}}}}"#,
        r#"{"name":"x","name":"n","config":{"schema":{"type":"object"}}}"#,
        // A property named like a keyword, and keywords under `enum` and `default`.
        r#"{"name":"n","config":{"schema":{"type":"object","properties":{"$ref":{"type":"string","enum":["oneOf"],"default":{"$defs":1}}}}}}"#,
    ];
    for text in ok {
        assert!(same_as_typed(text).is_ok(), "{text}");
    }
    let refused = [
        (
            r#"{"name":"n","config":{"schema":{"type":"object","properties":{"a":{"\u0024ref":"x"}}}}}"#,
            "config.schema.properties.a.$ref",
        ),
        (
            r#"{"name":"n","config":{"schema":{"type":"array"}}}"#,
            "config.schema.type",
        ),
        (
            r#"{"name":"n","config":{"schema":{"type":"object","properties":[]}}}"#,
            "config.schema.properties",
        ),
        (
            r#"{"name":"n","config":{"schema":{"type":"object","items":[{"pattern":"x"}]}}}"#,
            "config.schema.items[0].pattern",
        ),
        (
            r#"{"name":"n","config":{"schema":{"type":"object","properties":{"a":{"type":"string"},"a":{"anyOf":[]}}}}}"#,
            "config.schema.properties.a.anyOf",
        ),
        (r#"{"name":"n","config":{"schema":null}}"#, "config.schema"),
        (
            r#"{"name":"n","config":{"schema":{"type":"object","properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"items":{}}}}}}}}}}}}}}"#,
            "config.schema.properties.a.properties.b.properties.c.properties.d.properties.e.items",
        ),
    ];
    for (text, path) in refused {
        let err = same_as_typed(text).unwrap_err();
        assert!(err.contains(&format!("{path}: ")), "{text}: {err}");
    }
}

#[test]
fn a_schemas_size_is_its_compact_text_however_the_caller_wrote_it() {
    // A schema whose compact text (what `JSON.stringify` writes) is `size` bytes, written by the caller with spaces
    // around every member and `\u00e9` for each `é` (6 bytes of text for 2 of compact JSON).
    let caller_text = |size: usize| {
        let head = r#"{"type":"object","description":""#;
        let tail = r#""}"#;
        let room = size - head.len() - tail.len();
        let description = format!("{}{}", "é".repeat(room / 2), "a".repeat(room % 2));
        let compact = format!("{head}{description}{tail}");
        assert_eq!(compact.len(), size);
        let written = description.replace('é', "\\u00e9");
        format!(
            r#"{{ "name" : "n" , "config" : {{ "schema" : {{ "type" : "object" , "description" : "{written}" }} }} }}"#
        )
    };
    assert!(same_as_typed(&caller_text(65_535)).is_ok());
    let err = same_as_typed(&caller_text(65_536)).unwrap_err();
    assert_eq!(
        err,
        "schema_too_large config.schema: serialized schema is 65536 bytes; it must be under 65536"
    );
}

#[test]
fn an_approval_measures_its_params_where_they_lie_in_the_callers_text() {
    let approve = |text: &str| {
        agent_runs::approve_params("agr_1", "apr_1", Params::from_text(text).unwrap())
            .map_err(|e| e.message)
    };
    // `{"params":..,"files":..}` must stay under 1 MiB: 20 bytes of keys and punctuation, `null` for no files, and
    // `{"v":"é..é"}` is 8 bytes plus 2 per `é` of compact JSON (the text, with spaces and `\u00e9`, is longer).
    let params = |n: usize| format!(r#"{{ "params" : {{ "v" : "{}" }} }}"#, "\\u00e9".repeat(n));
    assert!(approve(&params(524_271)).is_ok(), "1048574 bytes");
    assert_eq!(
        approve(&params(524_272)).unwrap_err(),
        "params: params and files are 1048576 bytes together; they must stay under 1 MiB"
    );
}

#[test]
fn an_approval_of_a_text_ending_in_whitespace_keeps_its_decision() {
    // The caller's text is extended with the decision; a text ending in a newline was sent without it.
    let spec = agent_runs::approve_params(
        "agr_1",
        "apr_1",
        Params::from_text("{\"note\":\"ok\"}\n").unwrap(),
    );
    assert_eq!(sent(spec.unwrap()), r#"{"note":"ok","decision":"approve"}"#);
}
