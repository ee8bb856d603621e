//! Outgoing HTTP through the JS host: the glue's `fetch(method, url, headers, body, timeoutMs, maxBytes, purpose)`
//! (the runtime's `fetch`, so TLS and its trusted roots are the host's; a webhook delivery, `purpose` "deliver", goes
//! to the `deliver` handler instead when `createEmulator` has one) resolves to `[status, headers, body]`, or rejects
//! with an `Error` whose `code` is `too_large` when the body passes `maxBytes`.
//! The function lives in this thread's table; [`Fetcher`] holds its key.

use crate::host::{FetchError, Fetched, MAX_BODY};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use bytes::Bytes;
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

thread_local! {
    static FETCHERS: RefCell<(u32, HashMap<u32, Function>)> = RefCell::new((0, HashMap::new()));
}

/// What an outgoing request is for: the glue sends a delivery to `deliver` when it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A document fetched by URL.
    Fetch,
    /// A webhook delivery.
    Deliver,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Fetch => "fetch",
            Purpose::Deliver => "deliver",
        }
    }
}

/// The key of a JS fetch function; dropping it forgets the function.
pub struct Fetcher(u32);

impl Fetcher {
    /// Keeps `f` in the table.
    pub fn new(f: Function) -> Fetcher {
        let key = FETCHERS.with(|t| {
            let Ok(mut t) = t.try_borrow_mut() else {
                return 0;
            };
            t.0 = t.0.wrapping_add(1);
            let key = t.0;
            t.1.insert(key, f);
            key
        });
        Fetcher(key)
    }

    /// The request as owned parts, for [`fetch`] (which runs in a local task).
    pub fn call(
        &self,
        purpose: Purpose,
        method: Method,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Fetched, FetchError>> + 'static {
        let flat: Vec<String> = headers
            .iter()
            .flat_map(|(k, v)| [(*k).to_owned(), v.clone()])
            .collect();
        fetch(
            self.0,
            purpose,
            method.as_str().to_owned(),
            url.to_owned(),
            flat,
            body,
            timeout,
        )
    }
}

impl Drop for Fetcher {
    fn drop(&mut self) {
        FETCHERS.with(|t| {
            if let Ok(mut t) = t.try_borrow_mut() {
                t.1.remove(&self.0);
            }
        });
    }
}

fn unreachable(e: &JsValue) -> FetchError {
    let text = |k: &str| {
        Reflect::get(e, &JsValue::from_str(k))
            .ok()
            .and_then(|v| v.as_string())
    };
    if text("code").as_deref() == Some("too_large") {
        return FetchError::TooLarge;
    }
    let message = text("message")
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "fetch failed".into());
    FetchError::Unreachable(format!("request failed: {message}"))
}

async fn fetch(
    key: u32,
    purpose: Purpose,
    method: String,
    url: String,
    headers: Vec<String>,
    body: Bytes,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    let f = FETCHERS
        .with(|t| t.try_borrow().ok()?.1.get(&key).cloned())
        .ok_or_else(|| FetchError::Unreachable("the emulator was closed".into()))?;
    let args = Array::new();
    args.push(&JsValue::from_str(&method));
    args.push(&JsValue::from_str(&url));
    args.push(
        &headers
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect::<Array>(),
    );
    args.push(&Uint8Array::from(body.as_ref()));
    args.push(&JsValue::from_f64(timeout.as_secs_f64() * 1000.0));
    args.push(&JsValue::from_f64(MAX_BODY as f64));
    args.push(&JsValue::from_str(purpose.as_str()));
    let answer = f
        .apply(&JsValue::NULL, &args)
        .map_err(|e| unreachable(&e))?;
    let answer = JsFuture::from(Promise::resolve(&answer))
        .await
        .map_err(|e| unreachable(&e))?;
    let parts: Array = answer.unchecked_into();
    let status = parts.get(0).as_f64().unwrap_or(0.0) as u16;
    let mut map = HeaderMap::new();
    let flat: Array = parts.get(1).unchecked_into();
    let mut i = 0;
    while i + 1 < flat.length() {
        let (k, v) = (flat.get(i).as_string(), flat.get(i + 1).as_string());
        if let (Some(k), Some(v)) = (k, v) {
            if let (Ok(k), Ok(v)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(&v),
            ) {
                map.append(k, v);
            }
        }
        i += 2;
    }
    let body: Uint8Array = parts.get(2).unchecked_into();
    if body.length() as usize > MAX_BODY {
        return Err(FetchError::TooLarge);
    }
    Ok(Fetched {
        status,
        headers: map,
        body: Bytes::from(body.to_vec()),
    })
}
