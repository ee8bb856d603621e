//! The agent-run routes: start, read (with long-poll `wait`), approve or reject a sign-off,
//! complete a human step, and the `waitFor` planner. There is no list, cancel or delete.

use super::agents::ApprovalKind;
use super::common::{
    string_enum, validate_file_values, validate_webhook_value, Executor, FileRef, FileSummary,
    Metadata, WebhookRef, FILE_REFS, WEBHOOK_REF,
};
use super::error::ApiError;
use super::params::{Field, Fields, Kind, Params, Table};
use super::polling::{PollPlanner, Until};
use super::request::{segment, Method, RequestSpec};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

string_enum! {
    /// Status of an agent run.
    AgentRunStatus {
        /// Files still being prepared.
        Queued = "queued",
        /// Working.
        Processing = "processing",
        /// Blocked on a person.
        Waiting = "waiting",
        /// Paused on a model or system error (not a failure).
        Paused = "paused",
        /// Finished with a result.
        Completed = "completed",
        /// Ended without a result.
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
        /// Passed its deadline.
        Expired = "expired",
    }
}

impl AgentRunStatus {
    /// Whether the run will not change any more.
    pub fn is_finished(&self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Cancelled | Self::Expired
        )
    }
}

string_enum! {
    /// Status of a step of a run.
    TaskStatus {
        /// Dependencies unfinished.
        Pending = "pending",
        /// Can be done now.
        Ready = "ready",
        /// Being done.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
        /// Skipped.
        Skipped = "skipped",
    }
}

/// Body of `POST /v1/agent-runs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct AgentRunCreateParams {
    /// Agent id from the list route.
    pub agent: String,
    /// 1 to 200 file references.
    #[cfg_attr(test, ts(type = "Array<FileRef>"))]
    pub files: Vec<FileRef>,
    /// At most 10 KB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "Metadata", optional))]
    pub metadata: Option<Value>,
    /// Destination of this run's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "WebhookRef", optional))]
    pub webhook: Option<WebhookRef>,
}

/// Body of an approval (without `decision`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ApproveParams {
    /// At most 4000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Replaces the proposed inputs of a `before` gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "Record<string, JsonValue>", optional))]
    pub params: Option<Value>,
    /// Replaces the step's files: up to 200 file ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
}

/// Body of a rejection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct RejectParams {
    /// Required, at most 4000 characters.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub note: Option<String>,
}

/// Body of a task completion (both optional).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct CompleteTaskParams {
    /// At most 2000 characters; becomes the step's summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Up to 20 file ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
}

impl Fields for AgentRunCreateParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::req("agent", Kind::Str),
            Field::req("files", FILE_REFS),
            Field::opt("metadata", Kind::Any),
            Field::opt("webhook", Kind::Object(&WEBHOOK_REF)),
        ],
        keep_others: false,
    };
}

/// A list of file ids.
const FILE_IDS: Kind = Kind::List(&Kind::Str);

impl Fields for ApproveParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::opt("note", Kind::Str),
            Field::opt("params", Kind::Any),
            Field::opt("files", FILE_IDS),
        ],
        keep_others: false,
    };
}

impl Fields for RejectParams {
    const TABLE: &'static Table = &Table {
        fields: &[Field::opt("note", Kind::Str)],
        keep_others: false,
    };
}

impl Fields for CompleteTaskParams {
    const TABLE: &'static Table = &Table {
        fields: &[Field::opt("note", Kind::Str), Field::opt("files", FILE_IDS)],
        keep_others: false,
    };
}

/// An agent run (`object: agent_run`). A 202 answer may carry only `{object, id, status, statusUrl}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    /// `agent_run`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "\"agent_run\""))]
    pub object: Option<String>,
    /// `agr_...`.
    pub id: String,
    /// Agent executed.
    #[serde(default)]
    #[cfg_attr(test, ts(inline))]
    pub agent: Option<AgentRef>,
    /// Status.
    pub status: AgentRunStatus,
    /// Outstanding work while `waiting`.
    #[serde(default)]
    #[cfg_attr(test, ts(inline))]
    pub waiting: Option<WaitingInfo>,
    /// Reason while `paused`.
    #[serde(default)]
    #[cfg_attr(
        test,
        ts(
            type = "{ reason: \"model_error\" | \"system_error\" | (string & {}) }",
            optional
        )
    )]
    pub paused: Option<Value>,
    /// Task counts.
    #[serde(default)]
    #[cfg_attr(
        test,
        ts(type = "{ tasks: { total: number; completed: number } }", optional)
    )]
    pub progress: Option<Value>,
    /// The step ledger.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<RunTask>>", optional))]
    pub tasks: Vec<RunTask>,
    /// Outstanding sign-offs, oldest first.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<RunApproval>>", optional))]
    pub approvals: Vec<RunApproval>,
    /// Closing summary (string or object).
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string | Record<string, unknown>", optional))]
    pub result: Option<Value>,
    /// `files[]` attached while steps completed.
    #[serde(default)]
    #[cfg_attr(
        test,
        ts(
            type = "{ files: Array<{ url: string; [field: string]: unknown }> }",
            optional
        )
    )]
    pub output: Option<Value>,
    /// `{code, message}` when failed.
    #[serde(default)]
    #[cfg_attr(test, ts(inline))]
    pub error: Option<RunError>,
    /// Completed with outstanding work.
    #[serde(default)]
    pub incomplete: Option<bool>,
    /// `/v1/agent-runs/<id>`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub status_url: Option<String>,
    /// Caller key/values.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Metadata", optional))]
    pub metadata: Option<Metadata>,
    /// Creation time.
    #[serde(default)]
    pub created_at: Option<String>,
    /// Run deadline.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{id, name, version}` of the agent a run executes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct AgentRef {
    /// Agent id.
    pub id: String,
    /// Name.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub name: Option<String>,
    /// Version.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "number"))]
    pub version: Option<i64>,
}

/// `waiting` of a blocked run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct WaitingInfo {
    /// Outstanding approvals.
    #[serde(default)]
    pub approvals: u32,
    /// Outstanding human tasks.
    #[serde(default)]
    pub tasks: u32,
    /// One-line summary.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub summary: Option<String>,
}

/// `{code, message}` of a failed run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct RunError {
    /// Code (`run_cancelled`, `run_expired`, ...).
    pub code: String,
    /// Text.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub message: Option<String>,
}

/// A step of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RunTask {
    /// Task id.
    pub id: String,
    /// Title.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub title: Option<String>,
    /// `agent` or `human`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Executor"))]
    pub executor: Option<Executor>,
    /// Status.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "TaskStatus"))]
    pub status: Option<TaskStatus>,
    /// Summary recorded when the step closed.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string | null"))]
    pub summary: Option<String>,
    /// Completion time.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string | null"))]
    pub completed_at: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An outstanding sign-off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RunApproval {
    /// Approval id.
    pub id: String,
    /// `before` or `output`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "ApprovalKind"))]
    pub kind: Option<ApprovalKind>,
    /// Action name.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub action: Option<String>,
    /// Request time.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub requested_at: Option<String>,
    /// Why the agent asks.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub rationale: Option<String>,
    /// Files involved.
    #[serde(default)]
    #[cfg_attr(
        test,
        ts(type = "Array<{ id: string; name: string; [field: string]: unknown }>")
    )]
    pub files: Vec<FileSummary>,
    /// Proposed inputs.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub params: Option<Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{id, status, statusUrl}` of the run an approval or task belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct RunHandle {
    /// Run id.
    pub id: String,
    /// Status after the decision.
    pub status: AgentRunStatus,
    /// Path of the run.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub status_url: Option<String>,
}

/// Answer of an approve or reject (`object: agent_run_approval`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    /// Approval id.
    pub id: String,
    /// `before` or `output`.
    #[serde(default)]
    pub kind: Option<ApprovalKind>,
    /// Action name.
    #[serde(default)]
    pub action: Option<String>,
    /// `approved` after an approve (value after a reject: not shown in the spec).
    #[serde(default)]
    pub status: Option<String>,
    /// Request time.
    #[serde(default)]
    pub requested_at: Option<String>,
    /// Decision time.
    #[serde(default)]
    pub decided_at: Option<String>,
    /// The note sent.
    #[serde(default)]
    pub note: Option<String>,
    /// The run afterwards.
    #[serde(default)]
    pub run: Option<RunHandle>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Answer of a task completion (`object: agent_run_task`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCompletion {
    /// Task id.
    pub id: String,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// `human`.
    #[serde(default)]
    pub executor: Option<Executor>,
    /// `completed`.
    #[serde(default)]
    pub status: Option<TaskStatus>,
    /// The submitted note.
    #[serde(default)]
    pub summary: Option<String>,
    /// Completion time.
    #[serde(default)]
    pub completed_at: Option<String>,
    /// The run afterwards.
    #[serde(default)]
    pub run: Option<RunHandle>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `POST /v1/agent-runs` (takes `wait`, server default 60).
///
/// # Errors
/// As [`create_params`].
pub fn create(params: &AgentRunCreateParams) -> Result<RequestSpec, ApiError> {
    create_params(Params::from_typed(params)?)
}

/// `POST /v1/agent-runs` of checked params.
///
/// # Errors
/// `invalid_request`: empty `agent`, 0 or more than 200 `files`, a file without exactly one of
/// `url`/`id`, metadata over 10 KB or not an object, a webhook without exactly one of `url`/`id`.
pub fn create_params(params: Params<AgentRunCreateParams>) -> Result<RequestSpec, ApiError> {
    validate::required_text("agent", params.str("agent").unwrap_or(""))?;
    validate_file_values(
        "files",
        params.list("files").unwrap_or(&[]),
        1,
        validate::MAX_AGENT_RUN_FILES,
    )?;
    if let Some(m) = params.get("metadata") {
        validate::metadata(m)?;
    }
    if let Some(w) = params.get("webhook") {
        validate_webhook_value(w)?;
    }
    Ok(params.into_body(
        RequestSpec::api(Method::Post, "/v1/agent-runs".to_owned())
            .with_wait(None)
            .run_creation(),
    ))
}

/// `GET /v1/agent-runs/:id` (takes `wait`, server default 0).
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn retrieve(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Get,
        format!("/v1/agent-runs/{}", segment("id", id)?),
    )
    .with_wait(None))
}

fn decision_path(run_id: &str, approval_id: &str) -> Result<String, ApiError> {
    Ok(format!(
        "/v1/agent-runs/{}/approvals/{}",
        segment("runId", run_id)?,
        segment("approvalId", approval_id)?
    ))
}

/// A checked list of file ids: at most `max`, each non-empty.
fn file_ids(files: &[Value], max: usize) -> Result<(), ApiError> {
    validate::count("files", files.len(), 0, max)?;
    for (i, id) in files.iter().enumerate() {
        validate::required_text(&format!("files[{i}]"), id.as_str().unwrap_or(""))?;
    }
    Ok(())
}

/// `POST /v1/agent-runs/:id/approvals/:approvalId` with `decision: approve`.
///
/// # Errors
/// As [`approve_params`].
pub fn approve(
    run_id: &str,
    approval_id: &str,
    params: &ApproveParams,
) -> Result<RequestSpec, ApiError> {
    approve_params(run_id, approval_id, Params::from_typed(params)?)
}

/// `POST /v1/agent-runs/:id/approvals/:approvalId` with `decision: approve`, of checked params.
///
/// # Errors
/// `invalid_request`: note over 4000 characters, more than 200 files or an empty file id,
/// `params` not an object, `params` plus `files` of 1 MiB or more.
pub fn approve_params(
    run_id: &str,
    approval_id: &str,
    params: Params<ApproveParams>,
) -> Result<RequestSpec, ApiError> {
    let path = decision_path(run_id, approval_id)?;
    if let Some(note) = params.str("note") {
        validate::note("note", note, validate::MAX_APPROVAL_NOTE_CHARS)?;
    }
    if let Some(p) = params.get("params") {
        if !p.is_object() {
            return Err(ApiError::validation(
                "invalid_request",
                "params",
                "must be an object",
            ));
        }
    }
    if let Some(files) = params.list("files") {
        file_ids(files, validate::MAX_APPROVAL_FILES)?;
    }
    // The compact JSON `{"params":..,"files":..}`: the two values and 20 bytes of keys and punctuation.
    // An absent value counts as `null`.
    let len = |name| params.compact_len(name).unwrap_or(4);
    let size = len("params")
        .saturating_add(len("files"))
        .saturating_add(20);
    if size >= validate::MAX_APPROVAL_PAYLOAD_BYTES {
        return Err(ApiError::validation(
            "invalid_request",
            "params",
            &format!("params and files are {size} bytes together; they must stay under 1 MiB"),
        ));
    }
    Ok(params.into_body_adding(
        RequestSpec::api(Method::Post, path)
            .with_wait(None)
            .decide_once(),
        "decision",
        Value::from("approve"),
    ))
}

/// `POST /v1/agent-runs/:id/approvals/:approvalId` with `decision: reject`.
///
/// # Errors
/// As [`reject_params`].
pub fn reject(
    run_id: &str,
    approval_id: &str,
    params: &RejectParams,
) -> Result<RequestSpec, ApiError> {
    reject_params(run_id, approval_id, Params::from_typed(params)?)
}

/// `POST /v1/agent-runs/:id/approvals/:approvalId` with `decision: reject`, of checked params.
///
/// # Errors
/// `invalid_request` at `note` when the note is missing or blank (the service answers 400), or
/// longer than 4000 characters.
pub fn reject_params(
    run_id: &str,
    approval_id: &str,
    params: Params<RejectParams>,
) -> Result<RequestSpec, ApiError> {
    let path = decision_path(run_id, approval_id)?;
    let note = params.str("note").unwrap_or("");
    if note.trim().is_empty() {
        return Err(ApiError::validation(
            "invalid_request",
            "note",
            "is required to reject",
        ));
    }
    validate::note("note", note, validate::MAX_APPROVAL_NOTE_CHARS)?;
    Ok(params.into_body_adding(
        RequestSpec::api(Method::Post, path)
            .with_wait(None)
            .decide_once(),
        "decision",
        Value::from("reject"),
    ))
}

/// `POST /v1/agent-runs/:id/tasks/:taskId/complete` (an empty object when neither field is set).
///
/// # Errors
/// As [`complete_task_params`].
pub fn complete_task(
    run_id: &str,
    task_id: &str,
    params: &CompleteTaskParams,
) -> Result<RequestSpec, ApiError> {
    complete_task_params(run_id, task_id, Params::from_typed(params)?)
}

/// `POST /v1/agent-runs/:id/tasks/:taskId/complete` of checked params.
///
/// # Errors
/// `invalid_request`: note over 2000 characters, more than 20 files or an empty file id.
pub fn complete_task_params(
    run_id: &str,
    task_id: &str,
    params: Params<CompleteTaskParams>,
) -> Result<RequestSpec, ApiError> {
    let path = format!(
        "/v1/agent-runs/{}/tasks/{}/complete",
        segment("runId", run_id)?,
        segment("taskId", task_id)?
    );
    if let Some(note) = params.str("note") {
        validate::note("note", note, validate::MAX_TASK_NOTE_CHARS)?;
    }
    if let Some(files) = params.list("files") {
        file_ids(files, validate::MAX_TASK_FILES)?;
    }
    Ok(params.into_body(
        RequestSpec::api(Method::Post, path)
            .with_wait(None)
            .decide_once(),
    ))
}

/// The `waitFor` planner: long-polls `GET /v1/agent-runs/:id?wait=120` until the run is finished
/// (`Until::Finished`) or, with `Until::Settled`, also when it is blocked on a person.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn wait_for(id: &str, until: Until) -> Result<PollPlanner, ApiError> {
    PollPlanner::agent_run(id, until)
}
