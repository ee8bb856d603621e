//! `client.files`: registration by URL, upload of bytes, read, wait until ready.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{checked, string_arg, wait_deadline};
use super::{prepare, simple, start, ClientState, Opt};
use crate::client::telemetry::Operation;
use crate::client::{files, ApiError, Flow, Goal};
use crate::wasm::{interop, platform};

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
    /// `POST /v1/files`: registers a file by URL (`{ url, name? }`); the service fetches it.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FileCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::FilesCreate,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, files::create_params),
        )
    }

    /// Uploads bytes: registers `{ name, mimeType }`, PUTs `data` to the returned `uploadUrl` (same Content-Type, no
    /// Authorization header) and waits until the file is `ready`. Resolves to the file.
    ///
    /// Routes: `POST /v1/files`, then `PUT {uploadUrl}`, then `GET /v1/files/:id` until the file is ready.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn upload(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FileUploadParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        start(
            &self.inner,
            Operation::FilesUpload,
            prepare(&options, &[]),
            &JsValue::UNDEFINED,
            |config, o| {
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
                let (name, mime) = (text("name")?, text("mimeType")?);
                let flow = Flow::upload(config, &name, &mime, o, platform::random_bytes())?;
                Ok((flow, upload_data(&interop::option(&body, "data"))?))
            },
        )
    }

    /// `GET /v1/files/:id`: reads a file and its status.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::FilesRetrieve,
            options,
            Goal::Data,
            &mut || files::retrieve(&string_arg(&id, "id")?),
        )
    }

    /// Polls the file (after 1 s, 2 s, 4 s, then every 5 s) until its status is `ready` (or `failed`/`error`, which
    /// is returned for the caller to check).
    ///
    /// Routes: `GET /v1/files/:id`, repeated until the file is ready.
    #[wasm_bindgen(js_name = waitUntilReady, unchecked_return_type = "APIPromise<FileRecord>")]
    pub fn wait_until_ready(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let mut deadline = None;
        let prepared = prepare(&options, &["deadlineMs"]).and_then(|o| {
            deadline = wait_deadline(&options)?;
            Ok(o)
        });
        start(
            &self.inner,
            Operation::FilesWaitUntilReady,
            prepared,
            &JsValue::UNDEFINED,
            |config, o| {
                let planner = files::wait_until_ready(&string_arg(&id, "id")?)?;
                Ok((
                    Flow::poll(config, planner.with_deadline(deadline), o),
                    JsValue::UNDEFINED,
                ))
            },
        )
    }
}
