//! `client.realtime`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::checked;
use super::{simple, ClientState, Opt};
use crate::client::realtime;
use crate::client::telemetry::Operation;
use crate::client::Goal;

/// `client.realtime`: live transcription sessions.
#[wasm_bindgen]
pub struct RealtimeResource {
    inner: Rc<ClientState>,
}

impl RealtimeResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl RealtimeResource {
    /// `POST /v1/realtime/transcriptions`: creates a live transcription session. Its `url` is always a `ws://` or
    /// `wss://` address (taken from `wsUrl` when the service names it so) carrying a single-use ticket (a secret: hand
    /// it to one browser, never log it); an answer without one rejects with `unexpected_shape`.
    #[wasm_bindgen(js_name = createSession, unchecked_return_type = "APIPromise<RealtimeSession>")]
    pub fn create_session(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RealtimeSessionParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(
            &self.inner,
            Operation::RealtimeCreateSession,
            options,
            Goal::RealtimeSession,
            &mut || checked(&body, "params", true, realtime::create_session_params),
        )
    }
}
