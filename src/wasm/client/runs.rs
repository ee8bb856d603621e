//! `client.runs`: capability runs.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::wait_options;
use super::convert::{self, ordered, params, string_arg};
use super::driver::{BodyKind, Ctx};
use super::{make_page, page_promise, prepare, simple, spawn, ClientState, Data, Opt};
use crate::client::output::OutputPlanner;
use crate::client::pagination::Page;
use crate::client::runs::{self, RunListParams};

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
    /// `GET /v1/runs`: one page `{ data, hasMore, cursor, nextPage() }`; the promise and the page are also
    /// async-iterable over every run of every page (`for await (const run of client.runs.list())`).
    #[wasm_bindgen(unchecked_return_type = "PagePromise<CapabilityRun>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "RunListParams")] query: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let query = query.unwrap_or(JsValue::UNDEFINED);
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = prepare(&options, &[]).and_then(|o| {
            let p: RunListParams = params(&query, "params", true)?;
            let spec = runs::list(&p)?;
            Ok((o, p, spec))
        });
        let inner = self.inner.clone();
        let resource = JsValue::from(RunsResource::new(self.inner.clone()));
        page_promise(&future_to_promise(async move {
            let run = async {
                let (call_options, p, spec) = prepared?;
                let ctx = Ctx::new(&inner, call_options.core, &call_options.signal)?;
                let outcome = ctx.call(spec, None, BodyKind::Text).await?;
                let page = Page::from_value(&outcome.response.body)?;
                let next = page
                    .next_cursor(p.cursor.as_deref())
                    .map_or(JsValue::UNDEFINED, JsValue::from);
                let body = outcome.data();
                let page = make_page(&body, &next, &resource, &query, &options);
                Ok(convert::with_response(page, &outcome))
            };
            run.await.map_err(|e| convert::error_to_js(&e))
        }))
    }

    /// `GET /v1/runs/:id` (option `wait`: long-poll up to that many seconds).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            runs::retrieve(&string_arg(&id, "id")?)
        })
    }

    /// `POST /v1/runs/:id/cancel`.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn cancel(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Json, || {
            runs::cancel(&string_arg(&id, "id")?)
        })
    }

    /// `DELETE /v1/runs/:id` (idempotent; resolves to `undefined`).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<void>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        simple(&self.inner, options, Data::Void, || {
            runs::delete(&string_arg(&id, "id")?)
        })
    }

    /// `POST /v1/runs/:id/keep` into a space (`{ spaceId }` or `{ space }`).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<KeepResult>")]
    pub fn keep(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "KeepParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(&self.inner, options, Data::Json, || {
            let id = string_arg(&id, "id")?;
            ordered(&body, "params", true, |p| runs::keep(&id, p))
        })
    }

    /// The signed URL of output `name` (the route's 302 `Location`, not followed).
    #[wasm_bindgen(js_name = outputUrl, unchecked_return_type = "APIPromise<string>")]
    pub fn output_url(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = prepare(&options, &[]).and_then(|o| {
            Ok((
                o,
                runs::output_url(&string_arg(&id, "id")?, &string_arg(&name, "name")?)?,
            ))
        });
        let inner = self.inner.clone();
        spawn(async move {
            let (options, spec) = prepared?;
            let ctx = Ctx::new(&inner, options.core, &options.signal)?;
            let outcome = ctx.call(spec, None, BodyKind::Text).await?;
            let location = outcome
                .response
                .location
                .as_deref()
                .map_or(JsValue::NULL, JsValue::from);
            Ok(convert::with_response(location, &outcome))
        })
    }

    /// The bytes of output `name`: waits out `output_not_ready`, then fetches the signed URL without the API key.
    #[wasm_bindgen(js_name = downloadOutput, unchecked_return_type = "APIPromise<Uint8Array>")]
    pub fn download_output(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RequestOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = prepare(&options, &[]).and_then(|o| {
            Ok((
                o,
                OutputPlanner::new(&string_arg(&id, "id")?, &string_arg(&name, "name")?)?,
            ))
        });
        let inner = self.inner.clone();
        spawn(async move {
            let (options, planner) = prepared?;
            let ctx = Ctx::new(&inner, options.core, &options.signal)?;
            let location = ctx.output_location(planner).await?;
            let outcome = ctx
                .call(runs::download(&location), None, BodyKind::Bytes)
                .await?;
            let bytes = outcome
                .bytes
                .clone()
                .unwrap_or_else(|| js_sys::Uint8Array::new_with_length(0));
            Ok(convert::with_response(bytes.into(), &outcome))
        })
    }

    /// Long-polls the run (`wait=120`) until it is finished (or, with `until: "settled"`, needs a signature).
    #[wasm_bindgen(js_name = waitFor, unchecked_return_type = "APIPromise<CapabilityRun>")]
    pub fn wait_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitForOptions")] options: Opt,
    ) -> JsValue {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let prepared = wait_options(&options).and_then(|(o, until)| {
            let deadline = super::convert::wait_deadline(&options)?;
            Ok((
                o,
                runs::wait_for(&string_arg(&id, "id")?, until)?.with_deadline(deadline),
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
