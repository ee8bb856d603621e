//! The agent routes (`GET /v1/agents`, `GET /v1/agents/:id`): the definitions the app holds
//! ([`crate::agent_definitions`]), served.

use crate::app::Shared;
use crate::error::{ApiError, ApiResult};
use axum::extract::{Path, State as AxState};
use axum::Json;
use serde_json::{json, Value};

/// `GET /v1/agents`.
pub async fn list_agents(AxState(app): AxState<Shared>) -> Json<Value> {
    Json(
        json!({"object": "list", "data": app.agents.iter().map(|a| a.to_json()).collect::<Vec<_>>()}),
    )
}

/// `GET /v1/agents/:id`.
pub async fn get_agent(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    app.agent(&id)
        .map(|a| Json(a.to_json()))
        .ok_or_else(|| ApiError::not_found("agent"))
}
