//! Shapes shared by several resources: file references, webhook references, object lists, and
//! string enums that keep values they do not know (the service may add statuses).

use super::error::ApiError;
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// JSON object of caller key/values.
pub type Metadata = Map<String, Value>;

/// Declares a string enum with known variants and `Other(String)` for values added later.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A value this version does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)+
                    Self::Other(s) => s.as_str(),
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($wire => Self::$variant,)+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok(Self::from(s.as_str()))
            }
        }
    };
}
pub(crate) use string_enum;

string_enum! {
    /// Executor of a task.
    Executor {
        /// Done by the agent.
        Agent = "agent",
        /// Done by a person.
        Human = "human",
    }
}

/// A file passed by reference: `{url, name?, processing?}` (fetched server-side) or `{id}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRef {
    /// Id of a registered or produced file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// URL the service fetches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Display name (with `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `auto` (default), `ocr`, `simple`, `transcribe`, `transcribe_diarize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processing: Option<String>,
}

impl FileRef {
    /// A reference by URL.
    pub fn url(url: &str) -> Self {
        Self {
            url: Some(url.to_owned()),
            ..Self::default()
        }
    }

    /// A reference by id.
    pub fn id(id: &str) -> Self {
        Self {
            id: Some(id.to_owned()),
            ..Self::default()
        }
    }

    /// Exactly one of `url` and `id`, non-empty.
    ///
    /// # Errors
    /// `invalid_request` at `path`.
    pub fn validate(&self, path: &str) -> Result<(), ApiError> {
        match (&self.url, &self.id) {
            (Some(u), None) => validate::required_text(&format!("{path}.url"), u),
            (None, Some(i)) => validate::required_text(&format!("{path}.id"), i),
            (Some(_), Some(_)) => {
                validate::exclusive(&format!("{path}.url"), true, &format!("{path}.id"), true)
            }
            (None, None) => Err(ApiError::validation(
                "invalid_request",
                path,
                "needs a url or an id",
            )),
        }
    }
}

/// Validates a list of file references with its count bounds.
///
/// # Errors
/// `invalid_request` at `path` or `path[i]`.
pub fn validate_files(
    path: &str,
    files: &[FileRef],
    min: usize,
    max: usize,
) -> Result<(), ApiError> {
    validate::count(path, files.len(), min, max)?;
    for (i, f) in files.iter().enumerate() {
        f.validate(&format!("{path}[{i}]"))?;
    }
    Ok(())
}

/// Where a run's events go: an ad-hoc `{url}` or a saved endpoint `{id}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookRef {
    /// Ad-hoc destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Saved endpoint id (`whe_...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl WebhookRef {
    /// Exactly one of `url` and `id`.
    ///
    /// # Errors
    /// `invalid_request` at `webhook`.
    pub fn validate(&self) -> Result<(), ApiError> {
        match (&self.url, &self.id) {
            (Some(u), None) => validate::required_text("webhook.url", u),
            (None, Some(i)) => validate::required_text("webhook.id", i),
            (Some(_), Some(_)) => validate::exclusive("webhook.url", true, "webhook.id", true),
            (None, None) => Err(ApiError::validation(
                "invalid_request",
                "webhook",
                "needs a url or an id",
            )),
        }
    }
}

/// `{object: "list", data: [...]}` of routes without pagination.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectList<T> {
    /// `list`.
    #[serde(default)]
    pub object: Option<String>,
    /// Items.
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
}

/// `{id, name}` of a file attached to an approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// File id.
    #[serde(default)]
    pub id: Option<String>,
    /// File name.
    #[serde(default)]
    pub name: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Serializes a params struct into a JSON body. Infallible for the types of this crate
/// (string keys only); an error maps to `invalid_request`.
///
/// # Errors
/// `invalid_request` at `body`.
pub fn to_body<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value)
        .map_err(|_| ApiError::validation("invalid_request", "body", "cannot be serialized"))
}
