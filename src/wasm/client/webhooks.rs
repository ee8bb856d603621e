//! `client.webhooks`: endpoints, deliveries and the public key set.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{checked, string_arg};
use super::{simple, ClientState, Opt};
use crate::client::telemetry::Operation;
use crate::client::webhooks;
use crate::client::Goal;

/// `client.webhooks`.
#[wasm_bindgen]
pub struct WebhooksResource {
    inner: Rc<ClientState>,
}

impl WebhooksResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl WebhooksResource {
    /// `POST /v1/webhooks`: saves an endpoint (an https URL; `events` left out means every event).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<WebhookEndpoint>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WebhookCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksCreate,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, webhooks::create_params),
        )
    }

    /// `GET /v1/webhooks`: the saved endpoints, newest first.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<WebhookList>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksList,
            options,
            Goal::Data,
            &mut || Ok(webhooks::list()),
        )
    }

    /// `GET /v1/webhooks/:id`: reads an endpoint.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<WebhookEndpoint>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksRetrieve,
            options,
            Goal::Data,
            &mut || webhooks::retrieve(&string_arg(&id, "id")?),
        )
    }

    /// `PATCH /v1/webhooks/:id`: changes an endpoint's `url`, `events` or `disabled`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<WebhookEndpoint>")]
    pub fn update(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "WebhookUpdateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksUpdate,
            options,
            Goal::Data,
            &mut || {
                let id = string_arg(&id, "id")?;
                checked(&body, "params", false, |p| webhooks::update_params(&id, p))
            },
        )
    }

    /// `DELETE /v1/webhooks/:id`: removes an endpoint (resolves to `undefined`); runs that name it stop delivering.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<void>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksDelete,
            options,
            Goal::Void,
            &mut || webhooks::delete(&string_arg(&id, "id")?),
        )
    }

    /// `GET /v1/webhooks/:id/deliveries`: an endpoint's 50 most recent delivery attempts, newest first.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<WebhookDeliveryList>")]
    pub fn deliveries(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksDeliveries,
            options,
            Goal::Data,
            &mut || webhooks::deliveries(&string_arg(&id, "id")?),
        )
    }

    /// `GET /v1/webhooks/jwks.json`: the public keys of webhook signatures (sent without the API key).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<JsonWebKeySet>")]
    pub fn jwks(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::WebhooksJwks,
            options,
            Goal::Data,
            &mut || Ok(webhooks::jwks()),
        )
    }
}
