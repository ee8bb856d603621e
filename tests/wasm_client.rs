//! The JS API of `DocAuto` without a server, run as wasm in Node and in headless Chromium (wasm-bindgen-test): error
//! classes, constructor guards, validation before any request, retries, `Retry-After`, pagination and aborts, all
//! against a scripted `fetch`.
#![cfg(all(target_arch = "wasm32", feature = "client"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use docauto::wasm::{validate_extraction_schema, DocAuto};
use js_sys::{Array, Promise, Reflect};
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
export function scripted(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, method: init.method, redirect: init.redirect, headers: Object.fromEntries(new Headers(init.headers)), body: init.body });
    const a = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (a.hang) return new Promise(() => {});
    if (a.throw) throw new TypeError(a.throw);
    const body = a.json !== undefined ? JSON.stringify(a.json) : (a.text ?? null);
    return new Response(body, { status: a.status, headers: a.headers ?? {} });
  };
  return { fetch, calls };
}
export function protoNames(value) {
  const names = [];
  for (let p = Object.getPrototypeOf(value); p; p = Object.getPrototypeOf(p)) {
    if (Object.prototype.hasOwnProperty.call(p, "constructor")) names.push(p.constructor.name);
  }
  return names.join(">");
}
export async function collect(iterable) {
  const out = [];
  for await (const item of iterable) out.push(item);
  return out;
}
export function isBrowser() {
  return typeof window === "object" && typeof document === "object";
}
export function abortLater(ms) {
  const c = new AbortController();
  setTimeout(() => c.abort(), ms);
  return c.signal;
}
export function abortedSignal() {
  const c = new AbortController();
  c.abort();
  return c.signal;
}
"#)]
extern "C" {
    fn scripted(answers: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = protoNames)]
    fn proto_names(value: &JsValue) -> String;
    fn collect(iterable: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = isBrowser)]
    fn is_browser() -> bool;
    #[wasm_bindgen(js_name = abortLater)]
    fn abort_later(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = abortedSignal)]
    fn aborted_signal() -> JsValue;
}

const BASE: &str = "https://api.example.com";

fn js(value: &serde_json::Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap()
}

fn get(value: &JsValue, name: &str) -> JsValue {
    Reflect::get(value, &name.into()).unwrap()
}

fn text(value: &JsValue, name: &str) -> String {
    get(value, name).as_string().unwrap_or_default()
}

/// A client whose `fetch` plays `answers` in order (the last one repeats); returns it and the recorded calls.
fn client_with(answers: serde_json::Value, extra: serde_json::Value) -> (DocAuto, Array) {
    let script = scripted(&js(&answers));
    let options = js(&json!({"apiKey": "sk_test_1", "baseUrl": BASE, "logLevel": "off"}));
    Reflect::set(&options, &"fetch".into(), &get(&script, "fetch")).unwrap();
    Reflect::set(&options, &"dangerouslyAllowBrowser".into(), &true.into()).unwrap();
    for (k, v) in extra.as_object().unwrap() {
        Reflect::set(&options, &k.into(), &js(v)).unwrap();
    }
    let client = DocAuto::new(Some(options)).unwrap();
    (client, get(&script, "calls").unchecked_into())
}

async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(value.unchecked_into::<Promise>()).await
}

async fn failure(value: JsValue) -> JsValue {
    settle(value).await.expect_err("must reject")
}

fn none() -> Option<JsValue> {
    None
}

#[wasm_bindgen_test]
async fn each_error_status_maps_to_its_class_with_status_code_and_request_id() {
    let cases = [
        (400, "BadRequestError", "invalid_request"),
        (401, "AuthenticationError", "invalid_token"),
        (402, "CreditsExhaustedError", "credits_exhausted"),
        (403, "PermissionDeniedError", "forbidden"),
        (404, "NotFoundError", "not_found"),
        (409, "ConflictError", "already_kept"),
        (410, "GoneError", "run_expired"),
        (422, "UnprocessableEntityError", "file_fetch_failed"),
        (429, "RateLimitError", "rate_limited"),
        (500, "InternalServerError", "internal_error"),
        (418, "APIError", "teapot"),
    ];
    for (status, class, code) in cases {
        let (client, calls) = client_with(
            json!([{"status": status, "json": {"code": code, "message": "m", "retryable": false,
                    "docUrl": "https://docs.example/e"}, "headers": {"x-request-id": "req_9"}}]),
            json!({}),
        );
        let e = failure(client.runs().retrieve("exr_1".into(), none())).await;
        let chain = proto_names(&e);
        assert!(chain.starts_with(class), "{status}: {chain}");
        assert!(chain.contains("APIError>Error"), "{status}: {chain}");
        assert_eq!(text(&e, "name"), class);
        assert_eq!(text(&e, "code"), code);
        assert_eq!(get(&e, "status").as_f64(), Some(f64::from(status)));
        assert_eq!(text(&e, "requestId"), "req_9");
        assert_eq!(text(&e, "docUrl"), "https://docs.example/e");
        assert_eq!(get(&e, "retryable").as_bool(), Some(false));
        assert_eq!(text(&get(&e, "headers"), "x-request-id"), "req_9");
        assert_eq!(
            calls.length(),
            1,
            "{status}: retryable false is never retried"
        );
    }
}

#[wasm_bindgen_test]
async fn older_error_shape_and_non_json_bodies_are_parsed() {
    let (client, _) = client_with(
        json!([{"status": 409, "json": {"error": "objects_exist"}}]),
        json!({}),
    );
    let e = failure(client.agents().list(none())).await;
    assert_eq!(text(&e, "name"), "ConflictError");
    assert_eq!(text(&e, "code"), "objects_exist");

    let (client, _) = client_with(
        json!([{"status": 502, "text": "<html>bad gateway</html>", "headers": {"content-type": "text/html"}}]),
        json!({"maxRetries": 0}),
    );
    let e = failure(client.agents().list(none())).await;
    assert_eq!(text(&e, "name"), "InternalServerError");
    assert_eq!(text(&e, "code"), "non_json_body");
    assert!(text(&e, "message").contains("text/html"));
}

#[wasm_bindgen_test]
async fn connection_failure_is_api_connection_error_without_status() {
    let (client, calls) = client_with(json!([{"throw": "fetch failed"}]), json!({"maxRetries": 1}));
    let e = failure(client.agents().list(none())).await;
    assert!(proto_names(&e).starts_with("APIConnectionError>APIError"));
    assert_eq!(text(&e, "code"), "connection_error");
    assert!(get(&e, "status").is_undefined());
    assert_eq!(
        calls.length(),
        2,
        "a GET is retried after a connection failure"
    );
}

#[wasm_bindgen_test]
async fn validation_errors_are_thrown_before_any_request() {
    let (client, calls) = client_with(json!([{"status": 200, "json": {}}]), json!({}));
    let f = json!({"url": "https://files.example/a.pdf"});
    let cases: Vec<(JsValue, &str)> = vec![
        (
            client.extract(js(&json!({"file": f, "files": [f]})), None),
            "invalid_request",
        ),
        (
            client.extract(
                js(&json!({"file": f, "schema": {"type": "object"}, "action": "a"})),
                None,
            ),
            "invalid_request",
        ),
        (
            client.extract(
                js(&json!({"file": f, "hints": "total", "schema": {"type": "object"}})),
                None,
            ),
            "invalid_request",
        ),
        (
            client.extract(js(&json!({"file": f, "schema": {"type": "array"}})), None),
            "invalid_schema",
        ),
        (
            client.extract(js(&json!({"file": f, "ttl": 604_801})), None),
            "invalid_request",
        ),
        (
            client.fill(
                js(&json!({"template": {"id": "t"}, "values": {}, "files": [f]})),
                None,
            ),
            "invalid_request",
        ),
        (
            client
                .agent_runs()
                .reject("agr_1".into(), "apr_1".into(), js(&json!({})), None),
            "invalid_request",
        ),
        (
            client.runs().list(Some(js(&json!({"limit": 51}))), None),
            "invalid_request",
        ),
        (
            client.runs().list(
                Some(js(
                    &json!({"metadata": {"a": "1", "b": "2", "c": "3", "d": "4"}}),
                )),
                None,
            ),
            "invalid_request",
        ),
        (
            client.runs().keep(
                "exr_1".into(),
                Some(js(&json!({"spaceId": "s", "space": "n"}))),
                None,
            ),
            "invalid_request",
        ),
        (client.agents().retrieve("".into(), None), "invalid_request"),
        (
            client
                .runs()
                .retrieve("exr_1".into(), Some(js(&json!({"wait": 121})))),
            "invalid_request",
        ),
    ];
    for (i, (promise, code)) in cases.into_iter().enumerate() {
        let e = failure(promise).await;
        assert_eq!(text(&e, "name"), "BadRequestError", "case {i}");
        assert_eq!(text(&e, "code"), code, "case {i}: {}", text(&e, "message"));
        assert_eq!(get(&e, "status").as_f64(), Some(400.0));
    }
    assert_eq!(calls.length(), 0, "nothing was sent");
}

#[wasm_bindgen_test]
fn validate_extraction_schema_throws_the_service_code() {
    assert!(validate_extraction_schema(js(&json!({"type": "object"}))).is_ok());
    let e = validate_extraction_schema(js(
        &json!({"type": "object", "properties": {"a": {"anyOf": []}}}),
    ))
    .unwrap_err();
    assert_eq!(text(&e, "name"), "BadRequestError");
    assert_eq!(text(&e, "code"), "invalid_schema");
}

#[wasm_bindgen_test]
async fn a_503_then_200_is_retried_with_the_same_idempotency_key() {
    let (client, calls) = client_with(
        json!([
            {"status": 503, "json": {"code": "auth_unavailable", "message": "m", "retryable": true}},
            {"status": 200, "json": {"object": "extract_run", "id": "exr_1", "status": "processed"}},
        ]),
        json!({}),
    );
    let run = settle(client.extract(
        js(&json!({"file": {"url": "https://files.example/a.pdf"}})),
        None,
    ))
    .await
    .unwrap();
    assert_eq!(text(&run, "id"), "exr_1");
    assert_eq!(calls.length(), 2);
    let key = |i: u32| text(&get(&calls.get(i), "headers"), "idempotency-key");
    assert!(!key(0).is_empty());
    assert_eq!(key(0), key(1));
    assert_eq!(
        text(&get(&calls.get(0), "headers"), "authorization"),
        "Bearer sk_test_1"
    );
}

#[wasm_bindgen_test]
async fn caller_idempotency_key_is_sent_and_replay_is_visible() {
    let (client, calls) = client_with(
        json!([{"status": 200, "json": {"object": "agent_run", "id": "agr_1", "status": "queued"},
                "headers": {"idempotent-replay": "true", "x-request-id": "req_1"}}]),
        json!({}),
    );
    let promise = client.agent_runs().create(
        js(&json!({"agent": "agt_1", "files": [{"id": "file_1"}]})),
        Some(js(&json!({"idempotencyKey": "my-key-1"}))),
    );
    let with = get(&promise, "withResponse")
        .unchecked_into::<js_sys::Function>()
        .call0(&promise)
        .unwrap();
    let out = settle(with).await.unwrap();
    let response = get(&out, "response");
    assert_eq!(get(&response, "idempotentReplay").as_bool(), Some(true));
    assert_eq!(text(&response, "requestId"), "req_1");
    assert_eq!(get(&response, "status").as_f64(), Some(200.0));
    assert_eq!(text(&get(&out, "data"), "id"), "agr_1");
    assert_eq!(
        text(&get(&calls.get(0), "headers"), "idempotency-key"),
        "my-key-1"
    );
}

#[wasm_bindgen_test]
async fn retry_after_beyond_the_cap_is_thrown_with_retry_after() {
    let (client, calls) = client_with(
        json!([{"status": 429, "json": {"code": "rate_limited", "message": "m", "retryable": true},
                "headers": {"retry-after": "120"}}]),
        json!({"maxRetryAfterMs": 1000}),
    );
    let e = failure(client.agents().list(none())).await;
    assert_eq!(text(&e, "name"), "RateLimitError");
    assert_eq!(get(&e, "retryAfter").as_f64(), Some(120.0));
    assert_eq!(calls.length(), 1, "not retried beyond the cap");

    let (client, calls) = client_with(
        json!([
            {"status": 429, "json": {"code": "rate_limited", "retryable": true}, "headers": {"retry-after": "0"}},
            {"status": 200, "json": {"object": "list", "data": []}},
        ]),
        json!({"maxRetryAfterMs": 1000}),
    );
    settle(client.agents().list(none())).await.unwrap();
    assert_eq!(
        calls.length(),
        2,
        "a Retry-After within the cap is waited out and retried"
    );
}

#[wasm_bindgen_test]
async fn abort_signal_ends_a_hanging_request_and_a_backoff_sleep() {
    let (client, calls) = client_with(json!([{"hang": true}]), json!({}));
    let options = js_sys::Object::new();
    Reflect::set(&options, &"signal".into(), &abort_later(20.0)).unwrap();
    let e = failure(client.agents().list(Some(options.into()))).await;
    assert_eq!(text(&e, "name"), "APIUserAbortError");
    assert_eq!(text(&e, "code"), "aborted");
    assert_eq!(calls.length(), 1);

    let (client, calls) = client_with(
        json!([{"status": 503, "json": {"code": "auth_unavailable", "retryable": true},
                "headers": {"retry-after": "30"}}]),
        json!({}),
    );
    let options = js_sys::Object::new();
    Reflect::set(&options, &"signal".into(), &abort_later(30.0)).unwrap();
    let started = js_sys::Date::now();
    let e = failure(client.agents().list(Some(options.into()))).await;
    assert_eq!(text(&e, "name"), "APIUserAbortError");
    assert!(
        js_sys::Date::now() - started < 5000.0,
        "the 30 s sleep was interrupted"
    );
    assert_eq!(calls.length(), 1);

    let (client, calls) = client_with(json!([{"status": 200, "json": {}}]), json!({}));
    let options = js_sys::Object::new();
    Reflect::set(&options, &"signal".into(), &aborted_signal()).unwrap();
    let e = failure(client.agents().list(Some(options.into()))).await;
    assert_eq!(text(&e, "name"), "APIUserAbortError");
    assert_eq!(calls.length(), 0, "an already aborted signal sends nothing");
}

#[wasm_bindgen_test]
async fn timeout_is_api_timeout_error_and_retried() {
    let (client, calls) = client_with(
        json!([{"hang": true}]),
        json!({"timeoutMs": 30, "maxRetries": 1}),
    );
    let e = failure(client.agents().list(none())).await;
    assert!(proto_names(&e).starts_with("APITimeoutError>APIConnectionError>APIError"));
    assert_eq!(text(&e, "code"), "timeout");
    assert_eq!(calls.length(), 2);
}

#[wasm_bindgen_test]
async fn runs_list_is_async_iterable_over_every_page() {
    let run = |id: &str| json!({"object": "extract_run", "id": id, "status": "processed"});
    let (client, calls) = client_with(
        json!([
            {"status": 200, "json": {"object": "list", "data": [run("exr_1"), run("exr_2")], "has_more": true, "cursor": "c1"}},
            {"status": 200, "json": {"object": "list", "data": [run("exr_3")], "has_more": false, "cursor": null}},
        ]),
        json!({}),
    );
    let promise = client
        .runs()
        .list(Some(js(&json!({"limit": 2, "status": "processed"}))), None);
    let items: Array = JsFuture::from(collect(&promise))
        .await
        .unwrap()
        .unchecked_into();
    let ids: Vec<String> = items.iter().map(|r| text(&r, "id")).collect();
    assert_eq!(ids, ["exr_1", "exr_2", "exr_3"]);
    assert_eq!(calls.length(), 2);
    let second = text(&calls.get(1), "url");
    assert!(
        second.contains("cursor=c1") && second.contains("limit=2"),
        "{second}"
    );
}

#[wasm_bindgen_test]
async fn output_url_reads_the_redirect_without_following_it() {
    let (client, calls) = client_with(
        json!([{"status": 302, "headers": {"location": "https://cdn.example/o.pdf?sig=1"}}]),
        json!({}),
    );
    let url = settle(
        client
            .runs()
            .output_url("exr_1".into(), "o.pdf".into(), None),
    )
    .await
    .unwrap();
    assert_eq!(url.as_string().unwrap(), "https://cdn.example/o.pdf?sig=1");
    assert_eq!(calls.length(), 1);
    assert_eq!(text(&calls.get(0), "redirect"), "manual");
    assert_eq!(
        text(&calls.get(0), "url"),
        format!("{BASE}/v1/runs/exr_1/output/o.pdf")
    );
}

#[wasm_bindgen_test]
fn constructor_guards_browser_pages_and_bad_settings() {
    let base = json!({"apiKey": "sk_test_1", "baseUrl": BASE});
    let plain = DocAuto::new(Some(js(&base)));
    if is_browser() {
        let e = plain.err().expect("a browser page must refuse");
        assert_eq!(text(&e, "code"), "browser_not_allowed");
        assert_eq!(text(&e, "name"), "BadRequestError");
        assert!(!text(&e, "message").contains("sk_test_1"));
    } else {
        assert!(plain.is_ok(), "no browser guard outside a page");
    }
    let mut allowed = base.clone();
    allowed["dangerouslyAllowBrowser"] = json!(true);
    assert!(DocAuto::new(Some(js(&allowed))).is_ok());
    for (field, value) in [
        ("apiKey", json!("")),
        ("baseUrl", json!("not a url")),
        ("maxRetries", json!(1.5)),
        ("logLevel", json!("chatty")),
        ("unknownOption", json!(1)),
    ] {
        let mut o = allowed.clone();
        o[field] = value;
        let e = DocAuto::new(Some(js(&o))).err().unwrap();
        assert_eq!(text(&e, "code"), "invalid_config", "{field}");
    }
}
