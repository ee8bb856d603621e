//! `client.actions`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::checked;
use super::{simple, ClientState, Opt};
use crate::client::actions;
use crate::client::telemetry::Operation;
use crate::client::Goal;

/// `client.actions`: the catalog, and the deprecated `create`.
#[wasm_bindgen]
pub struct ActionsResource {
    inner: Rc<ClientState>,
}

impl ActionsResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
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
        simple(
            &self.inner,
            Operation::ActionsCatalog,
            options,
            Goal::Data,
            &mut || Ok(actions::catalog()),
        )
    }

    /// `POST /v1/actions`: saves a configuration `{ capability, name, config }` (the older form of
    /// `client.configs.create`).
    ///
    /// @deprecated Use `client.configs.create(capability, { name, config })`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<SavedConfig>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ActionCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::ActionsCreate,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, actions::create_params),
        )
    }
}
