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

/// The key order of every object of a caller's JSON text, by position, and the text of each of its numbers.
/// serde_json (with `preserve_order`) keeps an object's members in the order they were read, but removing one (a
/// `null` the client does not send) moves the last member into its place; a body is written back in the caller's
/// order with [`write_in_order`], so what goes on the wire keeps the order the caller wrote (a schema's properties are the columns of an extraction table) and the
/// caller's own digits (`0.1`, `1e-7`, `9007199254740993`: no number is read into an `f64` and printed again).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyOrder {
    keys: Vec<(String, KeyOrder)>,
    items: Vec<KeyOrder>,
    /// The caller's text of a number.
    number: Option<String>,
}

impl KeyOrder {
    /// Reads the key order of a JSON text.
    ///
    /// # Errors
    /// `invalid_request` at `body` when the text is not JSON.
    pub fn of_text(text: &str) -> Result<Self, ApiError> {
        let (value, numbers) = crate::json::parse_with_number_texts(text)
            .ok_or_else(|| ApiError::validation("invalid_request", "body", "is not JSON"))?;
        Ok(Self::of(value, &mut numbers.into_iter()))
    }

    /// The order of a value read by [`crate::json::parse_with_number_texts`], its numbers' texts taken in document order. A
    /// name given twice keeps its first place and its last value, as `JSON.parse` and serde_json read it.
    fn of<'a>(value: crate::json::Json, numbers: &mut impl Iterator<Item = &'a str>) -> Self {
        use crate::json::Json;
        let mut order = KeyOrder::default();
        match value {
            Json::Object(members) => {
                for (name, member) in members {
                    let sub = Self::of(member, numbers);
                    match order.keys.iter_mut().find(|(k, _)| *k == name) {
                        Some((_, slot)) => *slot = sub,
                        None => order.keys.push((name, sub)),
                    }
                }
            }
            Json::Array(items) => {
                order.items = items.into_iter().map(|v| Self::of(v, numbers)).collect();
            }
            Json::Number(_) => order.number = numbers.next().map(str::to_owned),
            Json::Null | Json::Bool(_) | Json::String(_) => {}
        }
        order
    }

    /// The names of the object under `field`, in the text's order.
    pub fn names_of(&self, field: &str) -> Option<Vec<String>> {
        self.keys
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, sub)| sub.keys.iter().map(|(k, _)| k.clone()).collect())
    }
}

/// Writes `value` as JSON text with each object's keys in `order` (the caller's order); keys the caller did not
/// write (added by the client, such as an approval's `decision`) follow in the map's order.
pub fn write_in_order(value: &Value, order: &KeyOrder) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, Some(order));
    out
}

fn write_value(out: &mut String, value: &Value, order: Option<&KeyOrder>) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            let mut entry = |out: &mut String, key: &str, v: &Value, sub: Option<&KeyOrder>| {
                if !first {
                    out.push(',');
                }
                first = false;
                crate::json::write_string(out, key);
                out.push(':');
                write_value(out, v, sub);
            };
            let known = order.map_or(&[][..], |o| o.keys.as_slice());
            for (key, sub) in known {
                if let Some(v) = map.get(key) {
                    entry(out, key, v, Some(sub));
                }
            }
            // Keys the caller did not write (few: the client's own), found by a scan rather than a sorted set (no sort
            // code in the module for this).
            if map.len() > known.len() || known.iter().any(|(k, _)| !map.contains_key(k)) {
                for (key, v) in map {
                    if !known.iter().any(|(k, _)| k == key) {
                        entry(out, key, v, None);
                    }
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, v, order.and_then(|o| o.items.get(i)));
            }
            out.push(']');
        }
        scalar => match (scalar, order.and_then(|o| o.number.as_deref())) {
            // The caller's own digits where the caller wrote this number (and it is still the number read there).
            (Value::Number(n), Some(text)) if text.parse::<f64>().ok() == n.as_f64() => {
                out.push_str(text);
            }
            _ => crate::json::write_value(out, scalar),
        },
    }
}
