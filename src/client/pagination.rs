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
        Page::deserialize(body).map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidResponse,
                "unexpected_shape",
                format!("the list answer is not a page: {e}"),
            )
        })
    }
}
