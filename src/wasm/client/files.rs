//! `client.files`: registration by URL, upload of bytes, read, wait until ready.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{self, ordered, string_arg};
use super::driver::{BodyKind, Ctx};
use super::{prepare, simple, spawn, ClientState, Data, Opt};
use crate::client::{files, ApiError};
use crate::wasm::interop;

/// `client.files`.
#[wasm_bindgen]
pub struct FilesResource {
    inner: Rc<ClientState>,
}

impl FilesResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

/// The bytes of an upload: a string, an `ArrayBuffer`, any view of one (`Uint8Array`, `Buffer`) or a `Blob`; handed
/// to `fetch` as they are.
fn upload_data(value: &JsValue) -> Result<JsValue, ApiError> {
    let blob_like = value.is_object()
        && interop::function_option(&interop::option(value, "arrayBuffer")).is_some()
        && interop::option(value, "size").as_f64().is_some();
    let buffer_like = value.is_object()
        && (js_sys::ArrayBuffer::is_view(value)
            || value.has_type::<js_sys::ArrayBuffer>()
            || interop::option(value, "byteLength").as_f64().is_some());
    if value.is_string() || blob_like || buffer_like {
        Ok(value.clone())
    } else {
        Err(ApiError::validation(
            "invalid_request",
            "data",
            "must be a string, an ArrayBuffer, a Uint8Array or a Blob",
        ))
    }
}

#[wasm_bindgen]
impl FilesResource {
    /// `POST /v1/files` with `{ url, name? }`: the service fetches the file.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FileCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            ordered(&body, "params", false, files::create)
        })
    }

    /// Uploads bytes: registers `{ name, mimeType }`, PUTs `data` to the returned `uploadUrl` (same Content-Type, no
    /// Authorization header) and waits until the file is `ready`. Resolves to the file.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn upload(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FileUploadParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = prepare(&options, &[]).and_then(|o| {
            if !body.is_object() {
                return Err(ApiError::validation(
                    "invalid_request",
                    "params",
                    "is required",
                ));
            }
            let text = |name: &str| {
                interop::option(&body, name).as_string().ok_or_else(|| {
                    ApiError::validation("invalid_request", name, "must be a string")
                })
            };
            let name = text("name")?;
            let mime = text("mimeType")?;
            let spec = files::register_upload(&name, &mime)?;
            let data = upload_data(&interop::option(&body, "data"))?;
            Ok((o, mime, spec, data))
        });
        let inner = self.inner.clone();
        spawn(async move {
            let (options, mime, spec, data) = prepared?;
            let ctx = Ctx::new(&inner, options.core, &options.signal)?;
            let registration = ctx.call(spec, None, BodyKind::Text).await?;
            let url = files::upload_url(&registration.response.body)?;
            let put = files::upload_put(&url, &mime)?;
            ctx.call(put, Some(&data), BodyKind::Text).await?;
            let id = registration
                .response
                .body
                .get("id")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let ready = ctx.poll(files::wait_until_ready(&id)?).await?;
            Ok(convert::with_response(ready.data(), &ready))
        })
    }

    /// `GET /v1/files/:id`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            files::retrieve(&string_arg(&id, "id")?)
        })
    }

    /// Polls the file (after 1 s, 2 s, 4 s, then every 5 s) until its status is `ready` (or `failed`/`error`, which
    /// is returned for the caller to check).
    #[wasm_bindgen(js_name = waitUntilReady, unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn wait_until_ready(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = prepare(&options, &["deadlineMs"]).and_then(|o| {
            let deadline = super::convert::wait_deadline(&options)?;
            Ok((
                o,
                files::wait_until_ready(&string_arg(&id, "id")?)?.with_deadline(deadline),
            ))
        });
        let inner = self.inner.clone();
        spawn(async move {
            let (options, planner) = prepared?;
            let ctx = Ctx::new(&inner, options.core, &options.signal)?;
            let outcome = ctx.poll(planner).await?;
            Ok(convert::with_response(outcome.data(), &outcome))
        })
    }
}
