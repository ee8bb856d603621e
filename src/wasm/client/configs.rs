//! `client.configs`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{checked, string_arg};
use super::{simple, ClientState, Opt};
use crate::client::configs::{self, ConfigCapability};
use crate::client::telemetry::Operation;
use crate::client::Goal;

/// `client.configs`: saved configurations of extract, redact and fill.
#[wasm_bindgen]
pub struct ConfigsResource {
    inner: Rc<ClientState>,
}

impl ConfigsResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl ConfigsResource {
    /// `POST /v1/:capability/configs`: saves a configuration `{ name, config }` of `extract`, `redact` or `fill`
    /// (an extract schema is checked before sending).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<SavedConfig>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ConfigCapability")] capability: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ConfigParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::ConfigsCreate,
            options,
            Goal::Data,
            &mut || {
                let capability = ConfigCapability::parse(&string_arg(&capability, "capability")?)?;
                checked(&body, "params", false, |p| {
                    configs::create_params(capability, p)
                })
            },
        )
    }
}
