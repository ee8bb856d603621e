//! Saved configurations: `POST /v1/{extract|redact|fill}/configs`. The catalog and the deprecated alias
//! `POST /v1/actions` are in [`super::actions`].

use super::error::ApiError;
use super::params::{Field, Fields, Kind, Params, Table, ANY_OBJECT};
use super::request::{Method, RequestSpec};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Capabilities that have saved configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ConfigCapability {
    /// `extract`.
    Extract,
    /// `redact`.
    Redact,
    /// `fill`.
    Fill,
}

impl ConfigCapability {
    /// Parses `extract`, `redact` or `fill`.
    ///
    /// # Errors
    /// `invalid_request` at `capability`.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        match text {
            "extract" => Ok(Self::Extract),
            "redact" => Ok(Self::Redact),
            "fill" => Ok(Self::Fill),
            _ => Err(ApiError::validation(
                "invalid_request",
                "capability",
                "must be extract, redact or fill",
            )),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Extract => "extract",
            Self::Redact => "redact",
            Self::Fill => "fill",
        }
    }
}

/// Body of a config creation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ConfigParams {
    /// Name of the saved config.
    pub name: String,
    /// The capability's config (for extract, an inline `schema` is checked against the dialect).
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub config: Map<String, Value>,
}

impl Fields for ConfigParams {
    const TABLE: &'static Table = &Table {
        fields: &[
            Field::req("name", Kind::Str),
            Field::opt("config", ANY_OBJECT),
        ],
        keep_others: false,
    };
}

/// A saved config as answered (fields beyond `id` are not shown in the spec).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct SavedConfig {
    /// Id, usable in a verb's `action` field.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub id: Option<String>,
    /// Every other field.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The checks of a config creation.
pub(super) fn check<T>(capability: ConfigCapability, params: &Params<T>) -> Result<(), ApiError> {
    validate::required_text("name", params.str("name").unwrap_or(""))?;
    if capability == ConfigCapability::Extract {
        params.schema_at(&["config", "schema"], "config.schema")?;
    }
    Ok(())
}

/// The body of a config creation: the params, with `config` `{}` when the caller left it out.
pub(super) fn body<T>(params: Params<T>, spec: RequestSpec) -> RequestSpec {
    if params.has("config") {
        params.into_body(spec)
    } else {
        params.into_body_adding(spec, "config", Value::Object(Map::new()))
    }
}

/// `POST /v1/{capability}/configs` with `{name, config}`.
///
/// # Errors
/// As [`create_params`].
pub fn create(
    capability: ConfigCapability,
    params: &ConfigParams,
) -> Result<RequestSpec, ApiError> {
    create_params(capability, Params::from_typed(params)?)
}

/// `POST /v1/{capability}/configs` with `{name, config}`, of checked params.
///
/// # Errors
/// `invalid_request` for an empty name; `invalid_schema` / `schema_too_large` for an extract
/// config whose schema breaks the dialect.
pub fn create_params(
    capability: ConfigCapability,
    params: Params<ConfigParams>,
) -> Result<RequestSpec, ApiError> {
    check(capability, &params)?;
    Ok(body(
        params,
        RequestSpec::api(Method::Post, format!("/v1/{}/configs", capability.as_str())),
    ))
}
