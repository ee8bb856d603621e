//! The event envelope of an authentic body, parsed by `JSON.parse` (it is what the caller gets), and its fields for the
//! core's [`EnvelopeIds`] to judge.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use super::body_limit::Body;
use crate::wasm::interop;
use crate::wasm::platform;
use crate::webhook::claims::EnvelopeIds;
use crate::webhook::{ErrorCode, Result, WebhookError};

const MALFORMED_BODY: WebhookError = WebhookError::new(
    ErrorCode::MalformedBody,
    "body is not a JSON event envelope",
);

/// The event of a body, parsed by `JSON.parse`, and its envelope fields for the core to judge.
pub(super) fn envelope(body: &Body) -> Result<(JsValue, EnvelopeIds)> {
    match body {
        Body::Kept(value) => kept_envelope(value),
        Body::Copied(raw) => parsed_envelope(interop::body_text(raw)),
    }
}

/// The event of a body kept in JS, parsed by `JSON.parse`, and its envelope fields for the core to judge.
fn kept_envelope(value: &JsValue) -> Result<(JsValue, EnvelopeIds)> {
    let text = if value.is_string() {
        Some(value.clone())
    } else {
        platform::utf8_text(value)
    };
    parsed_envelope(text)
}

/// The event parsed from the body's text by `JSON.parse` (it is what the caller gets, so it is parsed once), and
/// its envelope fields for the core to judge. `None` (the bytes are not UTF-8) is `malformed_body`.
fn parsed_envelope(text: Option<JsValue>) -> Result<(JsValue, EnvelopeIds)> {
    let event = text
        .and_then(|t| platform::json_parse(&t).ok())
        .ok_or(MALFORMED_BODY)?;
    let ids = ENVELOPE_KEYS.with(|keys| {
        let get = |key: &JsValue| Reflect::get(&event, key).unwrap_or(JsValue::UNDEFINED);
        let data = get(&keys.data);
        EnvelopeIds::from_fields(
            get(&keys.event_id).as_string(),
            get(&keys.kind).as_string(),
            get(&keys.processing_id).as_string(),
            get(&keys.occurred_at).is_string(),
            data.is_object() && !js_sys::Array::is_array(&data),
        )
    })?;
    Ok((event, ids))
}

/// The envelope's field names (and the two the verifier sets) as JS strings, made once: a `&str` key is decoded into a new JS string on every
/// call (measured in Chromium: about 2 % of a `verify`).
pub(super) struct EnvelopeKeys {
    pub(super) event_id: JsValue,
    pub(super) kind: JsValue,
    pub(super) processing_id: JsValue,
    pub(super) occurred_at: JsValue,
    pub(super) data: JsValue,
    pub(super) duplicate: JsValue,
    pub(super) in_progress: JsValue,
}

thread_local! {
    pub(super) static ENVELOPE_KEYS: EnvelopeKeys = EnvelopeKeys {
        event_id: JsValue::from_str("eventId"),
        kind: JsValue::from_str("type"),
        processing_id: JsValue::from_str("processingId"),
        occurred_at: JsValue::from_str("occurredAt"),
        data: JsValue::from_str("data"),
        duplicate: JsValue::from_str("duplicate"),
        in_progress: JsValue::from_str("inProgress"),
    };
}
