//! The capability verbs on the client itself: `extract`, `extractBatch`, `parse`, `redact`, `fill`, `sign`,
//! `pipeline`. Each is one POST; a 202 resolves to the run handle with its status.

use wasm_bindgen::prelude::*;

use super::convert::checked;
use super::{simple, DocAuto, Opt};
use crate::client::telemetry::Operation;
use crate::client::verbs;
use crate::client::Goal;

#[wasm_bindgen]
impl DocAuto {
    /// `POST /v1/extract`: structured data from documents (schema checked before sending).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn extract(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ExtractParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Extract,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::extract_params),
        )
    }

    /// `POST /v1/extract/batch`: a saved action over up to 100 documents (always 202). Not resent after a dropped
    /// connection: the service ignores `idempotency-key` on this route.
    #[wasm_bindgen(js_name = extractBatch, unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn extract_batch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ExtractBatchParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::ExtractBatch,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::extract_batch_params),
        )
    }

    /// `POST /v1/parse`: text and layout of documents.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn parse(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ParseParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Parse,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::parse_params),
        )
    }

    /// `POST /v1/redact`: personal data removed.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn redact(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RedactParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Redact,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::redact_params),
        )
    }

    /// `POST /v1/fill`: a form filled from `values` or drafted from `files`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn fill(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FillParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Fill,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::fill_params),
        )
    }

    /// `POST /v1/sign`: a signature envelope (202, status `needs_input`).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn sign(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SignParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Sign,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::sign_params),
        )
    }

    /// `POST /v1/pipeline`: several capabilities over one file set.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn pipeline(
        &self,
        #[wasm_bindgen(unchecked_param_type = "PipelineParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::Pipeline,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, verbs::pipeline_params),
        )
    }
}
