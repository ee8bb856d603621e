//! Validation before a request is spent. Each failure carries the service's own code
//! (`invalid_request`, `invalid_schema`, `schema_too_large`) and a field path prefixing the
//! message, exactly as the service would answer (status 400).
//!
//! Decisions where the spec is silent:
//! - Lengths of notes count Unicode scalar values (`char`s).
//! - "10 KB" of metadata is 10 240 bytes of compact JSON; "64 KB" of schema is 65 536 bytes
//!   (the schema must be strictly under it); "1 MiB" is 1 048 576 bytes of the compact JSON
//!   `{"params":..,"files":..}`.
//! - Schema nesting counts one level per descent into `properties.<name>`, `items`,
//!   `additionalProperties` and the other subschema keywords; the root's own properties are
//!   level 1, so a field may sit at most 5 levels deep.
//! - Pre-flight checks never reject what the spec allows: unknown fields and values are left to
//!   the service.

use super::error::ApiError;
use crate::json::tape::{Doc, Node, Tag};
use serde_json::Value;

/// Largest `wait`, in seconds.
pub const MAX_WAIT_SECONDS: u32 = 120;
/// Largest serialized metadata, in bytes.
pub const MAX_METADATA_BYTES: usize = 10 * 1024;
/// Serialized schema must be strictly smaller than this.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Deepest level a schema field may sit at.
pub const MAX_SCHEMA_DEPTH: usize = 5;
/// Largest capability `ttl`, in seconds.
pub const MAX_TTL_SECONDS: u64 = 604_800;
/// Largest approval note, in characters.
pub const MAX_APPROVAL_NOTE_CHARS: usize = 4000;
/// Largest task note, in characters.
pub const MAX_TASK_NOTE_CHARS: usize = 2000;
/// Largest number of files of an agent run.
pub const MAX_AGENT_RUN_FILES: usize = 200;
/// Largest number of files of a multi-file verb.
pub const MAX_VERB_FILES: usize = 100;
/// Largest number of file ids of an approval.
pub const MAX_APPROVAL_FILES: usize = 200;
/// Largest number of file ids of a task completion.
pub const MAX_TASK_FILES: usize = 20;
/// Approval `params` plus `files` must be strictly smaller than this.
pub const MAX_APPROVAL_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Largest page size of the run list.
pub const MAX_LIST_LIMIT: u32 = 50;
/// Largest number of metadata filters of the run list.
pub const MAX_METADATA_FILTERS: usize = 3;

const FORBIDDEN_KEYWORDS: [&str; 7] = [
    "$defs", "$ref", "oneOf", "anyOf", "allOf", "const", "pattern",
];
/// Keywords whose value is one subschema.
const SUBSCHEMA_KEYWORDS: [&str; 11] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value maps names to subschemas (the names are data, not keywords).
const SUBSCHEMA_MAP_KEYWORDS: [&str; 4] = [
    "properties",
    "patternProperties",
    "definitions",
    "dependentSchemas",
];

fn invalid(path: &str, message: &str) -> ApiError {
    ApiError::validation("invalid_request", path, message)
}

/// Validates an extraction schema against the service's dialect.
///
/// # Errors
/// - `schema_too_large` when its compact JSON is 64 KB or more;
/// - `invalid_schema` with the offending path (`schema.properties.a.$ref`) when the root is not
///   an object type, a field nests deeper than 5 levels, or `$defs`, `$ref`, `oneOf`, `anyOf`,
///   `allOf`, `const` or `pattern` appears in a keyword position. A property *named* like one
///   of them is valid, and so is any value under `enum`, `default`, `examples` and the like.
pub fn validate_extraction_schema(schema: &Value) -> Result<(), ApiError> {
    schema_at(schema, "schema")
}

/// [`validate_extraction_schema`] with the path prefix used in messages (`config.schema`).
///
/// # Errors
/// As [`validate_extraction_schema`].
pub fn schema_at(schema: &Value, path: &str) -> Result<(), ApiError> {
    // One set of rules, over the schema's text (the compact text of a `Value` names no member twice).
    schema_text_at(crate::json::to_text(schema), path)
}

/// [`schema_at`] of a schema's JSON text: the compact text of a `Value`, or `JSON.stringify`'s of a JS value, which
/// name no member twice (a text that does is refused: the rules read a schema as `JSON.parse` holds it).
///
/// # Errors
/// `invalid_request` at `path` when the text is not JSON or names a member twice; else as
/// [`validate_extraction_schema`].
pub(crate) fn schema_text_at(text: String, path: &str) -> Result<(), ApiError> {
    match Doc::parse(text) {
        Ok(doc) if !doc.repeats_a_name() => schema_node_at(doc.root(), path),
        _ => Err(invalid(path, "is not JSON with one member of each name")),
    }
}

/// [`schema_at`] of a schema where it lies in a JSON text the caller gave (read once, never built into a `Value`).
/// The text must name no member twice ([`Doc::repeats_a_name`]): a `Value` of it would keep one member of the name,
/// and the rules read the `Value`'s view.
///
/// # Errors
/// As [`validate_extraction_schema`].
pub fn schema_node_at(schema: Node<'_>, path: &str) -> Result<(), ApiError> {
    let size = schema.compact_len();
    if size >= MAX_SCHEMA_BYTES {
        return Err(ApiError::validation(
            "schema_too_large",
            path,
            &format!("serialized schema is {size} bytes; it must be under {MAX_SCHEMA_BYTES}"),
        ));
    }
    if schema.tag() != Tag::Object {
        return Err(ApiError::validation(
            "invalid_schema",
            path,
            "root must be an object type (a JSON object with \"type\": \"object\")",
        ));
    }
    let is_object = |t: Node<'_>| t.as_str().is_some_and(|s| s == "object");
    let is_object_type = schema
        .get("type")
        .is_some_and(|t| is_object(t) || t.items().any(is_object));
    if !is_object_type {
        return Err(ApiError::validation(
            "invalid_schema",
            &format!("{path}.type"),
            "root must be an object type",
        ));
    }
    walk_schema(schema, FieldPath::Root(path), 0)
}

/// A field's path, written out only when a rule fails (a valid value costs no string per key): a root (`""` for a
/// route's params, `config.schema`), then `.name` or `[index]` per step (a name right under an empty root has no
/// dot: `signers[0].email`).
#[derive(Clone, Copy, Debug)]
pub enum FieldPath<'a> {
    /// Where the path starts.
    Root(&'a str),
    /// A member of the object at the inner path.
    Key(&'a FieldPath<'a>, &'a str),
    /// An item of the array at the inner path.
    Index(&'a FieldPath<'a>, usize),
}

impl FieldPath<'_> {
    /// The path as messages show it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Self::Root(root) => out.push_str(root),
            Self::Key(inner, name) => {
                inner.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Self::Index(inner, i) => {
                inner.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

fn schema_error(path: &FieldPath<'_>, message: &str) -> ApiError {
    ApiError::validation("invalid_schema", &path.render(), message)
}

fn walk_schema(node: Node<'_>, path: FieldPath<'_>, depth: usize) -> Result<(), ApiError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(schema_error(
            &path,
            &format!("nesting is limited to {MAX_SCHEMA_DEPTH} levels"),
        ));
    }
    match node.tag() {
        Tag::Object => {}
        Tag::Bool => return Ok(()),
        _ => return Err(schema_error(&path, "must be a schema object")),
    }
    if let Some((key, _)) = node
        .members()
        .find(|(k, _)| FORBIDDEN_KEYWORDS.contains(&k.as_ref()))
    {
        return Err(schema_error(
            &FieldPath::Key(&path, &key),
            &format!("keyword {key} is not supported"),
        ));
    }
    for (key, value) in node.members() {
        let key_path = FieldPath::Key(&path, &key);
        if SUBSCHEMA_MAP_KEYWORDS.contains(&key.as_ref()) {
            if value.tag() != Tag::Object {
                return Err(schema_error(&key_path, "must be an object"));
            }
            for (name, child) in value.members() {
                walk_schema(child, FieldPath::Key(&key_path, &name), depth + 1)?;
            }
        } else if key == "prefixItems" || (key == "items" && value.tag() == Tag::Array) {
            for (i, child) in value.items().enumerate() {
                walk_schema(child, FieldPath::Index(&key_path, i), depth + 1)?;
            }
        } else if SUBSCHEMA_KEYWORDS.contains(&key.as_ref()) {
            walk_schema(value, key_path, depth + 1)?;
        }
    }
    Ok(())
}

/// `wait` in whole seconds, 0 to 120.
///
/// # Errors
/// `invalid_request` at `wait`.
pub fn wait_seconds(wait: u32) -> Result<(), ApiError> {
    if wait > MAX_WAIT_SECONDS {
        return Err(invalid("wait", "must be between 0 and 120 seconds"));
    }
    Ok(())
}

/// A caller-supplied idempotency key: 1 to 255 visible ASCII characters.
///
/// # Errors
/// `invalid_request` at `idempotencyKey`.
pub fn idempotency_key(key: &str) -> Result<(), ApiError> {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(invalid(
            "idempotencyKey",
            "must be 1 to 255 visible ASCII characters",
        ));
    }
    Ok(())
}

/// Compact JSON length of a value: the length of [`crate::json::to_text`]'s text (a caller's params text is measured
/// where it lies instead: [`super::params::Params::compact_len`]).
pub fn json_len(value: &Value) -> usize {
    crate::json::to_text(value).len()
}

/// Metadata: a JSON object of at most 10 KB.
///
/// # Errors
/// `invalid_request` at `metadata`.
pub fn metadata(value: &Value) -> Result<(), ApiError> {
    if !value.is_object() {
        return Err(invalid("metadata", "must be an object"));
    }
    let size = json_len(value);
    if size > MAX_METADATA_BYTES {
        return Err(invalid(
            "metadata",
            &format!("is {size} bytes; at most {MAX_METADATA_BYTES} are allowed"),
        ));
    }
    Ok(())
}

/// A count within `min..=max`.
///
/// # Errors
/// `invalid_request` at `path`.
#[inline(never)]
pub fn count(path: &str, len: usize, min: usize, max: usize) -> Result<(), ApiError> {
    if len < min || len > max {
        return Err(invalid(
            path,
            &format!("must hold {min} to {max} items (got {len})"),
        ));
    }
    Ok(())
}

/// A note of at most `max` characters.
///
/// # Errors
/// `invalid_request` at `path`.
pub fn note(path: &str, text: &str, max: usize) -> Result<(), ApiError> {
    let chars = text.chars().count();
    if chars > max {
        return Err(invalid(
            path,
            &format!("is {chars} characters; at most {max} are allowed"),
        ));
    }
    Ok(())
}

/// At most one of two fields.
///
/// # Errors
/// `invalid_request` at `a` naming both.
#[inline(never)]
pub fn exclusive(a: &str, has_a: bool, b: &str, has_b: bool) -> Result<(), ApiError> {
    if has_a && has_b {
        return Err(invalid(a, &format!("cannot be combined with {b}")));
    }
    Ok(())
}

/// Capability `ttl`: 1 to 604 800 seconds.
///
/// # Errors
/// `invalid_request` at `ttl`.
pub fn ttl(seconds: u64) -> Result<(), ApiError> {
    if seconds == 0 || seconds > MAX_TTL_SECONDS {
        return Err(invalid("ttl", "must be between 1 and 604800 seconds"));
    }
    Ok(())
}

/// A non-empty string field.
///
/// # Errors
/// `invalid_request` at `path`.
#[inline(never)]
pub fn required_text(path: &str, text: &str) -> Result<(), ApiError> {
    if text.trim().is_empty() {
        return Err(invalid(path, "is required"));
    }
    Ok(())
}

/// A list of file ids: each non-empty.
///
/// # Errors
/// `invalid_request` at `path[i]`.
pub fn file_ids(path: &str, ids: &[String]) -> Result<(), ApiError> {
    for (i, id) in ids.iter().enumerate() {
        required_text(&format!("{path}[{i}]"), id)?;
    }
    Ok(())
}

/// An https URL (webhook endpoints), or an http URL on this machine's loopback (`localhost`, `127.0.0.0/8`,
/// `[::1]`) for local receivers: the service refuses those, the local emulator accepts them with
/// `--allow-http-webhooks`, so the service decides rather than the client.
///
/// # Errors
/// `invalid_request` at `path`.
pub fn https_url(path: &str, url: &str) -> Result<(), ApiError> {
    if !crate::url::is_https_or_loopback(url) {
        return Err(invalid(
            path,
            "must be an absolute https URL (http only on localhost)",
        ));
    }
    Ok(())
}
