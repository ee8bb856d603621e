//! `client.agentRuns`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{checked, string_arg};
use super::{simple, ClientState, Opt};
use crate::client::telemetry::Operation;
use crate::client::{agent_runs, Goal};

/// `client.agentRuns`: start a run, read it, decide its sign-offs, complete its human steps, wait for it.
#[wasm_bindgen]
pub struct AgentRunsResource {
    inner: Rc<ClientState>,
}

impl AgentRunsResource {
    pub(super) fn new(inner: Rc<ClientState>) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl AgentRunsResource {
    /// `POST /v1/agent-runs`: starts a run of an agent (option `wait`: hold the request up to that many seconds for
    /// the run to settle).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<AgentRun>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "AgentRunCreateParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::AgentRunsCreate,
            options,
            Goal::Data,
            &mut || checked(&body, "params", false, agent_runs::create_params),
        )
    }

    /// `GET /v1/agent-runs/:id`: reads a run (option `wait`: long-poll up to that many seconds).
    #[wasm_bindgen(unchecked_return_type = "APIPromise<AgentRun>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::AgentRunsRetrieve,
            options,
            Goal::Data,
            &mut || agent_runs::retrieve(&string_arg(&id, "id")?),
        )
    }

    /// `POST /v1/agent-runs/:runId/approvals/:approvalId`: approves a sign-off (sends `decision: "approve"`),
    /// optionally replacing its inputs (`params`) or files.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<ApprovalDecision>")]
    pub fn approve(
        &self,
        #[wasm_bindgen(js_name = runId, unchecked_param_type = "string")] run_id: JsValue,
        #[wasm_bindgen(js_name = approvalId, unchecked_param_type = "string")] approval_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ApproveParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(
            &self.inner,
            Operation::AgentRunsApprove,
            options,
            Goal::Data,
            &mut || {
                let (run_id, second) = (
                    string_arg(&run_id, "runId")?,
                    string_arg(&approval_id, "approvalId")?,
                );
                checked(&body, "params", true, |p| {
                    agent_runs::approve_params(&run_id, &second, p)
                })
            },
        )
    }

    /// `POST /v1/agent-runs/:runId/approvals/:approvalId`: rejects a sign-off (sends `decision: "reject"`); the
    /// `note` is required.
    #[wasm_bindgen(unchecked_return_type = "APIPromise<ApprovalDecision>")]
    pub fn reject(
        &self,
        #[wasm_bindgen(js_name = runId, unchecked_param_type = "string")] run_id: JsValue,
        #[wasm_bindgen(js_name = approvalId, unchecked_param_type = "string")] approval_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "RejectParams")] body: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        simple(
            &self.inner,
            Operation::AgentRunsReject,
            options,
            Goal::Data,
            &mut || {
                let (run_id, second) = (
                    string_arg(&run_id, "runId")?,
                    string_arg(&approval_id, "approvalId")?,
                );
                checked(&body, "params", true, |p| {
                    agent_runs::reject_params(&run_id, &second, p)
                })
            },
        )
    }

    /// `POST /v1/agent-runs/:runId/tasks/:taskId/complete`: marks a human step done, with an optional note and files.
    #[wasm_bindgen(js_name = completeTask, unchecked_return_type = "APIPromise<TaskCompletion>")]
    pub fn complete_task(
        &self,
        #[wasm_bindgen(js_name = runId, unchecked_param_type = "string")] run_id: JsValue,
        #[wasm_bindgen(js_name = taskId, unchecked_param_type = "string")] task_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CompleteTaskParams")] body: Opt,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitRequestOptions")] options: Opt,
    ) -> JsValue {
        let body = body.unwrap_or(JsValue::UNDEFINED);
        simple(
            &self.inner,
            Operation::AgentRunsCompleteTask,
            options,
            Goal::Data,
            &mut || {
                let (run_id, second) = (
                    string_arg(&run_id, "runId")?,
                    string_arg(&task_id, "taskId")?,
                );
                checked(&body, "params", true, |p| {
                    agent_runs::complete_task_params(&run_id, &second, p)
                })
            },
        )
    }

    /// Waits for the run: long-polls it until it is finished or, with `until: "settled"`, also when it is blocked on
    /// a person (an approval or a human task). With the default `until: "finished"` and no `deadlineMs`, the wait on
    /// a run blocked on a person lasts until someone acts or the run expires (about seven days).
    ///
    /// Routes: `GET /v1/agent-runs/:id?wait=120`, repeated until the run is finished (or settled).
    #[wasm_bindgen(js_name = waitFor, unchecked_return_type = "APIPromise<AgentRun>")]
    pub fn wait_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WaitForOptions")] options: Opt,
    ) -> JsValue {
        super::wait_for(
            &self.inner,
            Operation::AgentRunsWaitFor,
            &id,
            options,
            agent_runs::wait_for,
        )
    }
}
