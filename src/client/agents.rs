//! `GET /v1/agents` and `GET /v1/agents/:id`: the saved automations a key can run.
//! The spec shows no pagination for this list, so `list` reads one `{object, data}` answer.

use super::common::{string_enum, Executor, ObjectList};
use super::error::ApiError;
use super::request::{segment, Method, RequestSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

string_enum! {
    /// When an action's sign-off is requested.
    ApprovalKind {
        /// Before the action runs.
        Before = "before",
        /// On the action's output.
        Output = "output",
    }
}

/// A saved, versioned automation (`object: agent`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// `agent`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "\"agent\""))]
    pub object: Option<String>,
    /// Agent id.
    pub id: String,
    /// Name.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub name: Option<String>,
    /// Version of the saved automation.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "number"))]
    pub version: Option<i64>,
    /// Steps.
    #[serde(default)]
    pub tasks: Vec<AgentTask>,
    /// Saved actions.
    #[serde(default)]
    pub actions: Vec<AgentAction>,
    /// Description (type not shown in the spec).
    #[serde(default)]
    pub description: Option<Value>,
    /// Last update (format not shown in the spec).
    #[serde(default)]
    pub updated_at: Option<Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A step of an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct AgentTask {
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
    /// Ids of the tasks this one waits for.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A saved action of an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct AgentAction {
    /// Action name.
    pub name: String,
    /// Approval gate (`before`).
    #[serde(default)]
    pub approval: Option<ApprovalKind>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The list answer.
pub type AgentList = ObjectList<Agent>;

/// `GET /v1/agents`.
pub fn list() -> RequestSpec {
    RequestSpec::api(Method::Get, "/v1/agents".to_owned())
}

/// `GET /v1/agents/:id`.
///
/// # Errors
/// `invalid_request` for an empty id.
pub fn retrieve(id: &str) -> Result<RequestSpec, ApiError> {
    Ok(RequestSpec::api(
        Method::Get,
        format!("/v1/agents/{}", segment("id", id)?),
    ))
}
