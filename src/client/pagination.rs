//! Cursor pages of `GET /v1/runs`: `{object: "list", data, has_more, cursor}`.
//!
//! Decision where the spec is silent: a page that says `has_more` but repeats the cursor of the
//! request that produced it (or gives none) ends the iteration, so a faulty answer can never
//! loop forever.

use super::error::{ApiError, ErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One page of a cursor list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// `list`.
    #[serde(default)]
    pub object: Option<String>,
    /// Items of this page.
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
    /// Whether another page exists (wire name `has_more`; `hasMore` also read).
    #[serde(default, rename = "has_more", alias = "hasMore")]
    pub has_more: bool,
    /// Cursor of the next page.
    #[serde(default)]
    pub cursor: Option<String>,
}

impl<T> Page<T> {
    /// The cursor to request next, given the cursor that produced this page; `None` at the end.
    pub fn next_cursor(&self, previous: Option<&str>) -> Option<&str> {
        if !self.has_more {
            return None;
        }
        let next = self.cursor.as_deref().filter(|c| !c.is_empty())?;
        if previous == Some(next) {
            return None;
        }
        Some(next)
    }
}

impl Page<Value> {
    /// Reads a page from a decoded body.
    ///
    /// # Errors
    /// `unexpected_shape` ([`ErrorKind::InvalidResponse`]) when the body is not a page.
    pub fn from_value(body: &Value) -> Result<Self, ApiError> {
        // Read member by member, as the derive reads them (absent or `null` optional fields are `None`, an absent
        // `data` is empty, `has_more` or its alias `hasMore`), without a deserializer and its error formatting.
        let shape = |what: &str| {
            ApiError::new(
                ErrorKind::InvalidResponse,
                "unexpected_shape",
                format!("the list answer is not a page: {what}"),
            )
        };
        let Value::Object(map) = body else {
            return Err(shape("not an object"));
        };
        let text = |name: &str| match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(shape(&format!("`{name}` is not a string"))),
        };
        let data = match map.get("data") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(_) => return Err(shape("`data` is not an array")),
        };
        let has_more = match (map.get("has_more"), map.get("hasMore")) {
            (None, None) => false,
            (Some(Value::Bool(b)), None) | (None, Some(Value::Bool(b))) => *b,
            (Some(_), Some(_)) => return Err(shape("both `has_more` and `hasMore`")),
            _ => return Err(shape("`has_more` is not a boolean")),
        };
        Ok(Page {
            object: text("object")?,
            data,
            has_more,
            cursor: text("cursor")?,
        })
    }
}
