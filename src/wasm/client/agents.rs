//! `client.agents`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::string_arg;
use super::{simple, ClientState, Opt};
use crate::client::agents;
use crate::client::telemetry::Operation;
use crate::client::Goal;

/// `client.agents`: the saved automations a key can run.
#[wasm_bindgen]
pub struct AgentsResource {
    inner: Rc<ClientState>,
}

impl AgentsResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl AgentsResource {
    /// `GET /v1/agents`: the agents this key can run.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<AgentList>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::AgentsList,
            options,
            Goal::Data,
            &mut || Ok(agents::list()),
        )
    }

    /// `GET /v1/agents/:id`: one agent, with its tasks and actions.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<Agent>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::AgentsRetrieve,
            options,
            Goal::Data,
            &mut || agents::retrieve(&string_arg(&id, "id")?),
        )
    }
}
