//! Bodies: one handed as data is refused, kept or copied as the core's [`plan`] decides; a request's or
//! key-set response's stream is read under its cap and deadline, and cancelled on any refusal. Every value the
//! caller's objects answer is read through a `catch` binding or `interop.js`.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::promise;
use crate::wasm::interop::{self, RawBody};
use crate::wasm::platform::{self, MessageLike};
use crate::webhook::body_limit::{
    check_len, check_read, plan, Held, Plan, BODY_TIMEOUT, TOO_LARGE, UNREADABLE,
};
use crate::webhook::WebhookError;

/// A body to verify: copied into wasm memory, or kept in JS where the host hashes it (`node:crypto`), so a large
/// body never grows wasm memory.
pub(super) enum Body {
    Copied(RawBody),
    /// A string, the caller's own ArrayBuffer view, or a `Uint8Array` over the ArrayBuffer handed over.
    Kept(JsValue),
}

/// A body handed as data, measured (a string by its length, bytes by their buffer's own length, never by what the
/// value claims) and refused, kept or copied as [`plan`] decides.
pub(super) fn bounded_body(value: &JsValue, max: u64, keep: bool) -> Result<Body, JsValue> {
    if let Some(text) = value.dyn_ref::<js_sys::JsString>() {
        let held = Held::Text {
            units: u64::from(text.length()),
        };
        return match plan(held, max, keep).map_err(interop::webhook_error)? {
            Plan::Keep => Ok(Body::Kept(value.clone())),
            Plan::Copy => {
                let body = interop::raw_body(value)?;
                check_len(body.bytes.len() as u64, max).map_err(interop::webhook_error)?;
                Ok(Body::Copied(body))
            }
        };
    }
    let view = interop::body_bytes(value).ok_or_else(interop::not_a_body)?;
    let held = Held::Bytes {
        len: interop::byte_count(&view),
    };
    Ok(
        match plan(held, max, keep).map_err(interop::webhook_error)? {
            // The caller's own view where it is one (the host reads views by their internal slots, never their
            // properties), else the view made over its ArrayBuffer: hashed in place, never copied.
            Plan::Keep if js_sys::ArrayBuffer::is_view(value) => Body::Kept(value.clone()),
            Plan::Keep => Body::Kept(view.into()),
            Plan::Copy => Body::Copied(RawBody {
                bytes: view.to_vec(),
                text: None,
            }),
        },
    )
}

/// Why a streamed read ended early.
pub(super) enum ReadError {
    TooLarge,
    Unreadable,
    TimedOut,
}

impl ReadError {
    pub(super) fn error(self) -> WebhookError {
        match self {
            Self::TooLarge => TOO_LARGE,
            Self::Unreadable => UNREADABLE,
            Self::TimedOut => BODY_TIMEOUT,
        }
    }
}

/// Awaits what the caller's object answered (a promise, a thenable, anything) through a promise of this module,
/// until the deadline.
async fn answer(value: &JsValue, deadline: &platform::Deadline) -> Result<JsValue, ReadError> {
    let settled = deadline.race(&interop::own_promise(value));
    JsFuture::from(settled).await.map_err(|_| {
        if deadline.expired() {
            ReadError::TimedOut
        } else {
            ReadError::Unreadable
        }
    })
}

/// Reads a Request's or Response's body stream up to `max` bytes before `deadline`; past either the stream is
/// cancelled and the read refused. Without a `body` stream (a minimal Request-like object) it falls back to
/// `arrayBuffer()`. Every value the caller's objects answer is read through a `catch` binding or `interop.js`.
pub(super) async fn read_capped(
    message: &MessageLike,
    max: u64,
    deadline: &platform::Deadline,
) -> Result<Vec<u8>, ReadError> {
    let stream = interop::try_option(message, "body").map_err(|()| ReadError::Unreadable)?;
    if stream.is_null() {
        return Ok(Vec::new());
    }
    let get_reader = interop::try_option(&stream, "getReader")
        .ok()
        .and_then(|f| interop::function_option(&f));
    let Some(get_reader) = get_reader else {
        let buffer = message.array_buffer().map_err(|_| ReadError::Unreadable)?;
        let buffer = answer(&buffer, deadline).await?;
        let view = interop::body_bytes(&buffer).ok_or(ReadError::Unreadable)?;
        check_len(interop::byte_count(&view), max).map_err(|_| ReadError::TooLarge)?;
        return Ok(view.to_vec());
    };
    let reader = get_reader
        .call0(&stream)
        .map_err(|_| ReadError::Unreadable)?;
    let read = read_chunks(&reader, max, deadline).await;
    if read.is_err() {
        cancel(&reader);
    }
    read
}

/// The chunks of a stream's reader, up to `max` bytes before `deadline` (also checked by the clock between chunks:
/// a reader whose promises are already settled never lets a timer run).
async fn read_chunks(
    reader: &JsValue,
    max: u64,
    deadline: &platform::Deadline,
) -> Result<Vec<u8>, ReadError> {
    let read = interop::try_option(reader, "read")
        .ok()
        .and_then(|f| interop::function_option(&f))
        .ok_or(ReadError::Unreadable)?;
    let mut bytes = Vec::new();
    loop {
        if deadline.expired() {
            return Err(ReadError::TimedOut);
        }
        let chunk = read.call0(reader).map_err(|_| ReadError::Unreadable)?;
        let chunk = answer(&chunk, deadline).await?;
        let field =
            |name: &str| interop::try_option(&chunk, name).map_err(|()| ReadError::Unreadable);
        if field("done")?.as_bool() == Some(true) {
            return Ok(bytes);
        }
        // Bytes of any realm (edge-runtime's chunks come from another one), measured by their buffer, not a claim.
        let view = interop::body_bytes(&field("value")?).ok_or(ReadError::Unreadable)?;
        let total = (bytes.len() as u64).saturating_add(interop::byte_count(&view));
        check_read(total, max).map_err(|_| ReadError::TooLarge)?;
        bytes.extend_from_slice(&view.to_vec());
    }
}

/// Cancels the rest of a stream; whatever `cancel()` answers (a rejection included) is awaited and dropped.
fn cancel(reader: &JsValue) {
    let cancel = interop::try_option(reader, "cancel")
        .ok()
        .and_then(|f| interop::function_option(&f));
    if let Some(Ok(answer)) = cancel.map(|f| f.call0(reader)) {
        drop(promise(async move {
            let _ = interop::settle(answer).await;
            Ok(JsValue::UNDEFINED)
        }));
    }
}
