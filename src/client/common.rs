//! Shapes shared by several resources: file references, webhook references, object lists, and
//! string enums that keep values they do not know (the service may add statuses).

use super::error::ApiError;
use super::params::{Field, Kind, Table};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// JSON object of caller key/values.
pub type Metadata = Map<String, Value>;

/// Declares a string enum with known variants and `Other(String)` for values added later. In test builds it
/// implements `ts_rs::TS` as an open union, `"a" | "b" | (string & {})` (see src/typegen.rs).
macro_rules! string_enum {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)+ }) => {
        $(#[doc = $doc])*
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

        /// The known values, and (`Other`) any other string.
        #[cfg(test)]
        impl ts_rs::TS for $name {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn docs() -> Option<String> {
                Some(ts_rs::format_docs(&[$($doc,)* " Open: the service may add values."]))
            }
            fn name() -> String {
                stringify!($name).to_owned()
            }
            fn decl() -> String {
                format!("type {} = {};", Self::name(), Self::inline())
            }
            fn decl_concrete() -> String {
                Self::decl()
            }
            fn inline() -> String {
                [$(concat!("\"", $wire, "\""),)+ "(string & {})"].join(" | ")
            }
            fn inline_flattened() -> String {
                Self::inline()
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
}

/// The table of a [`FileRef`] (other keys are ignored, as the struct ignores them).
pub const FILE_REF: Table = Table {
    fields: &[
        Field::opt("id", Kind::Str),
        Field::opt("url", Kind::Str),
        Field::opt("name", Kind::Str),
        Field::opt("processing", Kind::Str),
    ],
    keep_others: false,
};

/// A list of [`FileRef`]s.
pub const FILE_REFS: Kind = Kind::List(&Kind::Object(&FILE_REF));

/// The table of a [`WebhookRef`].
pub const WEBHOOK_REF: Table = Table {
    fields: &[Field::opt("url", Kind::Str), Field::opt("id", Kind::Str)],
    keep_others: false,
};

/// Exactly one of `url` and `id` (non-empty) in a checked JSON file reference ([`FILE_REF`]).
///
/// # Errors
/// `invalid_request` at `path`.
pub fn validate_file_value(file: &Value, path: &str) -> Result<(), ApiError> {
    one_of_url_id(file, path)
}

/// A checked JSON list of file references: `min..=max` of them, each valid.
///
/// # Errors
/// `invalid_request` at `path` or `path[i]`.
pub fn validate_file_values(
    path: &str,
    files: &[Value],
    min: usize,
    max: usize,
) -> Result<(), ApiError> {
    validate::count(path, files.len(), min, max)?;
    for (i, f) in files.iter().enumerate() {
        validate_file_value(f, &format!("{path}[{i}]"))?;
    }
    Ok(())
}

/// Exactly one of `url` and `id` (non-empty) in a checked JSON webhook reference ([`WEBHOOK_REF`]).
///
/// # Errors
/// `invalid_request` at `webhook`.
pub fn validate_webhook_value(webhook: &Value) -> Result<(), ApiError> {
    one_of_url_id(webhook, "webhook")
}

/// Exactly one of the string fields `url` and `id`, non-empty.
fn one_of_url_id(value: &Value, path: &str) -> Result<(), ApiError> {
    let url = value.get("url").and_then(Value::as_str);
    let id = value.get("id").and_then(Value::as_str);
    match (url, id) {
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
