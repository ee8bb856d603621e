//! `client.configs`, `client.actions` and `client.realtime`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{ordered, string_arg};
use super::{simple, Data, Inner, Opt};
use crate::client::configs::{self, ConfigCapability};
use crate::client::realtime;
use crate::client::ApiError;
use crate::wasm::interop;

/// `client.configs`: saved configurations of extract, redact and fill.
#[wasm_bindgen]
pub struct ConfigsResource {
    inner: Rc<Inner>,
}

impl ConfigsResource {
    pub(super) fn new(inner: Rc<Inner>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl ConfigsResource {
    /// `POST /v1/{capability}/configs` with `{ name, config }` (an extract schema is checked before sending).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<SavedConfig>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ConfigCapability")] capability: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ConfigParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            let capability = ConfigCapability::parse(&string_arg(&capability, "capability")?)?;
            ordered(&body, "params", false, |p| configs::create(capability, p))
        })
    }
}

/// `client.actions`: the catalog, and the deprecated `create`.
#[wasm_bindgen]
pub struct ActionsResource {
    inner: Rc<Inner>,
}

impl ActionsResource {
    pub(super) fn new(inner: Rc<Inner>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl ActionsResource {
    /// `GET /v1/actions/catalog`: the configurable shapes of every capability.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<ActionCatalog>")]
    pub fn catalog(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || Ok(configs::catalog()))
    }

    /// Deprecated `POST /v1/actions` with `{ capability, name, config }`; use `client.configs.create`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<SavedConfig>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ActionCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            let capability = interop::option(&body, "capability")
                .as_string()
                .ok_or_else(|| {
                    ApiError::validation(
                        "invalid_request",
                        "capability",
                        "must be extract, redact or fill",
                    )
                })?;
            let capability = ConfigCapability::parse(&capability)?;
            ordered(&body, "params", false, |p| {
                configs::create_action_deprecated(capability, p)
            })
        })
    }
}

/// `client.realtime`: live transcription sessions.
#[wasm_bindgen]
pub struct RealtimeResource {
    inner: Rc<Inner>,
}

impl RealtimeResource {
    pub(super) fn new(inner: Rc<Inner>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl RealtimeResource {
    /// `POST /v1/realtime/transcriptions`: a session whose `wss://` address carries a single-use ticket (a secret:
    /// hand it to one browser, never log it).
    #[wasm_bindgen(js_name = createSession, unchecked_return_type = "APIPromise<RealtimeSession>")]
    pub fn create_session(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RealtimeSessionParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(&self.inner, options, Data::Json, || {
            ordered(&body, "params", true, realtime::create_session)
        })
    }
}
