//! The actions routes: `GET /v1/actions/catalog` (the configurable shapes of every capability) and the deprecated
//! `POST /v1/actions` with `{capability, name, config}`, an alias of [`super::configs::create`].

use super::configs::{self, ConfigCapability, ConfigParams};
use super::error::ApiError;
use super::request::{Method, RequestSpec};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// Body of the deprecated `POST /v1/actions`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ActionParams {
    /// `extract`, `redact` or `fill` (any other value, or none, is refused at `capability`).
    #[serde(default)]
    pub capability: Option<Value>,
    /// Name of the saved config.
    pub name: String,
    /// The capability's config.
    #[serde(default)]
    pub config: Map<String, Value>,
}

/// `GET /v1/actions/catalog`.
pub fn catalog() -> RequestSpec {
    RequestSpec::api(Method::Get, "/v1/actions/catalog".to_owned())
}

/// Deprecated `POST /v1/actions` with `{capability, name, config}`; prefer [`configs::create`].
///
/// # Errors
/// `invalid_request` at `capability` unless it is `extract`, `redact` or `fill`; otherwise as [`configs::create`].
pub fn create(params: &ActionParams) -> Result<RequestSpec, ApiError> {
    let capability = ConfigCapability::parse(
        params
            .capability
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )?;
    let config = ConfigParams {
        name: params.name.clone(),
        config: params.config.clone(),
    };
    configs::check(capability, &config)?;
    Ok(
        RequestSpec::api(Method::Post, "/v1/actions".to_owned()).with_body(json!({
            "capability": capability.as_str(),
            "name": config.name,
            "config": config.config,
        })),
    )
}
