//! Bodies as the caller wrote them: the sent text keeps every object's key order.

use super::{run, sent, Reply};
use crate::client::params::Params;
use crate::client::{agent_runs, verbs, CallOptions};

#[test]
fn an_extract_body_is_sent_in_the_callers_key_order_byte_for_byte() {
    let text = r#"{"file":{"url":"https://example.com/i.pdf"},"schema":{"type":"object","properties":{"invoice_number":{"type":"string"},"customer":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}}},"amount":{"type":["number","null"]}},"required":["invoice_number"]},"metadata":{"z":1,"a":{"y":[{"q":1,"b":2}],"c":true}},"ttl":3600,"zzz_extra":{"b":1,"a":2}}"#;
    let spec = verbs::extract_params(Params::from_text(text).unwrap()).unwrap();
    assert_eq!(sent(spec), text);
}

#[test]
fn keys_the_client_adds_follow_the_callers_and_without_a_text_the_order_is_the_structs() {
    let text = r#"{"params":{"z":1,"a":2},"note":"ok"}"#;
    let params: agent_runs::ApproveParams = serde_json::from_str(text).unwrap();
    let spec = agent_runs::approve("agr_1", "apr_1", &params).unwrap();
    let plain = run(
        spec.clone(),
        &CallOptions::default(),
        vec![Reply::Http(200, vec![], "{}")],
    );
    assert_eq!(
        plain.requests[0].body.as_deref(),
        // The struct's field order, its map in the order it was read, the client's `decision` last (serde_json keeps
        // insertion order: `preserve_order`).
        Some(r#"{"note":"ok","params":{"z":1,"a":2},"decision":"approve"}"#)
    );
    let ordered = run(
        agent_runs::approve_params("agr_1", "apr_1", Params::from_text(text).unwrap()).unwrap(),
        &CallOptions::default(),
        vec![Reply::Http(200, vec![], "{}")],
    );
    assert_eq!(
        ordered.requests[0].body.as_deref(),
        Some(r#"{"params":{"z":1,"a":2},"note":"ok","decision":"approve"}"#)
    );
}

#[test]
fn a_rewritten_body_keeps_the_callers_digits() {
    // The `null` makes the client write the body again (it is not sent); every number keeps the caller's text,
    // where reading it into an f64 and printing it again would change `1E+300`, `2^53 + 1` and the 30 digits.
    let numbers = r#"[0.1,1e-7,9007199254740993,1.5e300,-0.0,-0,1E+300,2.2250738585072011e-308,100.0,123456789012345678901234567890,0.30000000000000004]"#;
    let text = format!(
        r#"{{"ttl":null,"files":[{{"url":"https://example.com/i.pdf"}}],"zeta":{{"n":{numbers}}}}}"#
    );
    let spec = verbs::parse_params(Params::from_text(&text).unwrap()).unwrap();
    assert_eq!(
        sent(spec),
        format!(r#"{{"files":[{{"url":"https://example.com/i.pdf"}}],"zeta":{{"n":{numbers}}}}}"#)
    );
}

#[test]
fn numbers_the_client_writes_are_exact_integers_and_floats_that_read_back() {
    // A body built without the caller's text (a Rust caller's struct): serde_json's text, up to `e+`.
    let value = serde_json::json!({"n": [0.1, 1e-7, 9007199254740993_u64, 1.5e300, -0.0, 1.0, -7, u64::MAX]});
    let written = crate::json::to_text(&value);
    assert_eq!(
        written.replace("e+", "e"),
        serde_json::to_string(&value).unwrap().replace("e+", "e")
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&written).unwrap(),
        value
    );
}
