//! `client.runs`: capability runs.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{checked, string_arg};
use super::{prepare, simple, start, ClientState, Opt};
use crate::client::output::OutputPlanner;
use crate::client::runs::{self, RunListParams};
use crate::client::telemetry::Operation;
use crate::client::{Flow, Goal};
use crate::wasm::platform;

/// `client.runs`: list (cursor pages), read, wait, cancel, delete, keep, outputs.
#[wasm_bindgen]
pub struct RunsResource {
    inner: Rc<ClientState>,
}

impl RunsResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl RunsResource {
    /// `GET /v1/runs`: one page of capability runs, `{ data, hasMore, cursor, nextPage() }`. The promise and the
    /// page are also async-iterable over every run of every page (`for await (const run of client.runs.list())`);
    /// each further page is one more `GET /v1/runs` with the previous page's `cursor`.
    #[wasm_bindgen(unchecked_return_type = "PagePromise<CapabilityRun>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RunListParams")] query: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let query = query.unwrap_or(JsValue::UNDEFINED);
        let options = options.unwrap_or(JsValue::UNDEFINED);
        // `nextPage()` calls `list` again with the next cursor and the same options.
        let list = platform::object(&[
            ("resource", RunsResource::new(self.inner.clone()).into()),
            ("params", query.clone()),
            ("options", options.clone()),
        ]);
        start(
            &self.inner,
            Operation::RunsList,
            prepare(&options, &[]),
            &list,
            |config, o| {
                let p = checked(&query, "params", true, |p| RunListParams::from_params(&p))?;
                let flow = Flow::page(config, runs::list(&p)?, p.cursor, o)?;
                Ok((flow, JsValue::UNDEFINED))
            },
        )
    }

    /// `GET /v1/runs/:id`: reads a run, its status and result (option `wait`: long-poll up to that many seconds).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::RunsRetrieve,
            options,
            Goal::Data,
            &mut || runs::retrieve(&string_arg(&id, "id")?),
        )
    }

    /// `POST /v1/runs/:id/cancel`: stops a run's work in flight.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn cancel(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::RunsCancel,
            options,
            Goal::Data,
            &mut || runs::cancel(&string_arg(&id, "id")?),
        )
    }

    /// `DELETE /v1/runs/:id`: purges a run now (idempotent; resolves to `undefined`).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<void>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::RunsDelete,
            options,
            Goal::Void,
            &mut || runs::delete(&string_arg(&id, "id")?),
        )
    }

    /// `POST /v1/runs/:id/keep`: keeps a run in a space (`{ spaceId }` or `{ space }`), clearing its `ttl`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<KeepResult>")]
    pub fn keep(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "KeepParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(
            &self.inner,
            Operation::RunsKeep,
            options,
            Goal::Data,
            &mut || {
                let id = string_arg(&id, "id")?;
                checked(&body, "params", true, |p| runs::keep_params(&id, p))
            },
        )
    }

    /// `GET /v1/runs/:id/output/:name`: the signed URL of output `name` (the 302's `Location`, not followed).
    #[wasm_bindgen(js_name = outputUrl, unchecked_return_type = "APIPromise<string>")]
    pub fn output_url(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::RunsOutputUrl,
            options,
            Goal::Location,
            &mut || runs::output_url(&string_arg(&id, "id")?, &string_arg(&name, "name")?),
        )
    }

    /// The bytes of output `name`: waits out `output_not_ready`, then fetches the signed URL without the API key.
    ///
    /// Routes: `GET /v1/runs/:id/output/:name` (again while the output is not ready), then `GET {Location}`.
    #[wasm_bindgen(js_name = downloadOutput, unchecked_return_type = "APIPromise<Uint8Array>")]
    pub fn download_output(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        start(
            &self.inner,
            Operation::RunsDownloadOutput,
            prepare(&options, &[]),
            &JsValue::UNDEFINED,
            |config, o| {
                let planner =
                    OutputPlanner::new(&string_arg(&id, "id")?, &string_arg(&name, "name")?)?;
                Ok((Flow::download(config, planner, o), JsValue::UNDEFINED))
            },
        )
    }

    /// Waits for the run: long-polls it until it is finished (or, with `until: "settled"`, also when it needs a
    /// signature).
    ///
    /// Routes: `GET /v1/runs/:id?wait=120`, repeated until the run is finished (or settled).
    #[wasm_bindgen(js_name = waitFor, unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn wait_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitForOptions")] options: Opt,
    ) -> JsValue {
        super::wait_for(
            &self.inner,
            Operation::RunsWaitFor,
            &id,
            options,
            runs::wait_for,
        )
    }
}
