//! The actions routes: `GET /v1/actions/catalog` (the configurable shapes of every capability) and the deprecated
//! `POST /v1/actions` with `{capability, name, config}`, an alias of [`super::configs::create`].

use super::configs::{self, ConfigCapability};
use super::error::ApiError;
use super::params::{Field, Fields, Kind, Params, Table, ANY_OBJECT};
use super::request::{Method, RequestSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Body of the deprecated `POST /v1/actions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionParams {
    /// `extract`, `redact` or `fill` (any other value, or none, is refused at `capability`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Value>,
    /// Name of the saved config.
    pub name: String,
    /// The capability's config.
    #[serde(default)]
    pub config: Map<String, Value>,
}

impl Fields for ActionParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::opt("capability", Kind::Any),
            Field::req("name", Kind::Str),
            Field::opt("config", ANY_OBJECT),
        ],
        keep_others: false,
    };
}

/// `GET /v1/actions/catalog`.
pub fn catalog() -> RequestSpec {
    RequestSpec::api(Method::Get, "/v1/actions/catalog".to_owned())
}

/// Deprecated `POST /v1/actions` with `{capability, name, config}`; prefer [`configs::create`].
///
/// # Errors
/// As [`create_params`].
pub fn create(params: &ActionParams) -> Result<RequestSpec, ApiError> {
    create_params(Params::from_typed(params)?)
}

/// Deprecated `POST /v1/actions` of checked params.
///
/// # Errors
/// `invalid_request` at `capability` unless it is `extract`, `redact` or `fill`; otherwise as [`configs::create`].
pub fn create_params(params: Params<ActionParams>) -> Result<RequestSpec, ApiError> {
    let capability = ConfigCapability::parse(params.str("capability").unwrap_or_default())?;
    configs::check(capability, &params)?;
    Ok(configs::body(
        params,
        RequestSpec::api(Method::Post, "/v1/actions".to_owned()),
    ))
}
