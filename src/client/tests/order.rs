//! Bodies as the caller wrote them (issue 10 item 5): the sent text keeps every object's key order.

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
fn keys_the_client_adds_follow_the_callers_and_without_a_text_the_order_is_serde_json_s() {
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
        Some(r#"{"decision":"approve","note":"ok","params":{"a":2,"z":1}}"#)
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
