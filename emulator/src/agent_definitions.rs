//! Agent definitions: the agent file's shape, its checks, and the built-in agents. Loaded once at start (the files
//! of `emulator/agents/*.json`, built in; plus `--agents DIR`, or the `agents` option of the wasm build), then held
//! by the app ([`crate::app::App::agents`]); the routes that serve them are [`crate::agents`]'s.
//!
//! Besides the spec's agent fields, a task may carry emulator-only keys: `durationMs` (work time before the
//! time scale), `action` (name of an action it takes), `output` `{name}` (a file it produces), `summary`
//! (recorded when it closes) and `fail` `{code, message}` (the run fails there). These keys are not served.

use serde::Deserialize;
use serde_json::{json, Value};

/// One task of an agent.
#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct AgentTask {
    /// Task id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `agent` or `human`.
    pub executor: String,
    /// Dependencies.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Work time in ms (scaled).
    #[serde(default = "default_duration")]
    pub duration_ms: f64,
    /// Action taken.
    pub action: Option<String>,
    /// File produced.
    pub output: Option<OutputSpec>,
    /// Summary at close.
    pub summary: Option<String>,
    /// Failure.
    pub fail: Option<FailSpec>,
}

fn default_duration() -> f64 {
    1000.0
}

/// A produced file.
#[derive(Deserialize, Clone, Debug)]
pub struct OutputSpec {
    /// File name.
    pub name: String,
}

/// A failure.
#[derive(Deserialize, Clone, Debug)]
pub struct FailSpec {
    /// Error code.
    pub code: String,
    /// Message.
    pub message: String,
}

/// An action the agent may take.
#[derive(Deserialize, Clone, Debug)]
pub struct AgentAction {
    /// Name.
    pub name: String,
    /// `before`, `output` or `none`.
    pub approval: String,
    /// Why a sign-off is asked.
    #[serde(default)]
    pub rationale: String,
    /// Proposed inputs.
    #[serde(default)]
    pub params: Value,
}

/// An agent.
#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: i64,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Last change.
    #[serde(default)]
    pub updated_at: String,
    /// Steps.
    pub tasks: Vec<AgentTask>,
    /// Actions.
    #[serde(default)]
    pub actions: Vec<AgentAction>,
    /// Closing summary.
    pub result: Option<String>,
}

const BUILT_IN: &[&str] = &[
    include_str!("../agents/contract_review.json"),
    include_str!("../agents/invoice_summary.json"),
    include_str!("../agents/document_digest.json"),
    include_str!("../agents/flaky_import.json"),
];

impl Agent {
    /// Parses and checks one definition.
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Agent, String> {
        let a: Agent = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for t in &a.tasks {
            if t.executor != "agent" && t.executor != "human" {
                return Err(format!("task {}: executor must be agent or human", t.id));
            }
            for d in &t.depends_on {
                if !a.tasks.iter().any(|o| &o.id == d) {
                    return Err(format!("task {}: unknown dependency {d}", t.id));
                }
            }
            if let Some(act) = &t.action {
                if !a.actions.iter().any(|x| &x.name == act) {
                    return Err(format!("task {}: unknown action {act}", t.id));
                }
            }
        }
        for act in &a.actions {
            if !["before", "output", "none"].contains(&act.approval.as_str()) {
                return Err(format!(
                    "action {}: approval must be before, output or none",
                    act.name
                ));
            }
        }
        Ok(a)
    }

    /// The served shape (`object: agent`).
    pub fn to_json(&self) -> Value {
        json!({
            "object": "agent",
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "updatedAt": self.updated_at,
            "tasks": self.tasks.iter().map(|t| json!({
                "id": t.id, "title": t.title, "executor": t.executor, "dependsOn": t.depends_on,
            })).collect::<Vec<_>>(),
            "actions": self.actions.iter().map(|a| json!({"name": a.name, "approval": a.approval})).collect::<Vec<_>>(),
        })
    }

    /// The action of a task.
    pub fn action(&self, name: &str) -> Option<&AgentAction> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// Built-in agents plus `extra`, `(name, JSON text)` pairs in order (the files of `--agents`, read by the host, or
/// the `agents` option of the wasm build); one with the id of a built-in agent replaces it.
///
/// # Errors
/// A definition that cannot be parsed, named in the message.
pub fn load(extra: Vec<(String, String)>) -> Result<Vec<Agent>, String> {
    let mut agents = Vec::new();
    for text in BUILT_IN {
        agents.push(Agent::parse(text).map_err(|e| format!("built-in agent: {e}"))?);
    }
    for (name, text) in extra {
        let a = Agent::parse(&text).map_err(|e| format!("{name}: {e}"))?;
        agents.retain(|x| x.id != a.id);
        agents.push(a);
    }
    Ok(agents)
}

#[cfg(test)]
mod tests {
    #[test]
    fn built_in_agents_parse() {
        let a = super::load(Vec::new()).unwrap();
        assert_eq!(a.len(), 4);
    }
}
