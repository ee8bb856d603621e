//! A route's parameters read once as JSON and checked against the route's table of fields (name, JSON type,
//! required, nested tables), instead of a serde derive per route: one generic parse, one checker, and the caller's
//! own JSON text sent as the body when the route sends the parameters as they are (which keeps the caller's key
//! order).
//!
//! The params structs (`verbs::ExtractParams` ...) stay the Rust callers' API and the types' source; each names
//! its table through [`Fields`], and a native test checks that a table names exactly its struct's fields.
//!
//! Decisions that keep what the serde derives did:
//! - `null` is an absent field (serde reads `null` into `None`); it is not sent.
//! - A field that is not in a table is kept when the table says so (the verbs' `extra`), else ignored and not sent
//!   (a nested file reference's unknown keys).
//! - A body the checker changed (a `null` or an ignored key removed) is written in the caller's key order
//!   ([`KeyOrder`]); an unchanged one is the caller's text itself.

use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::ApiError;
use super::request::{CallerBody, KeyOrder, RequestSpec};
use super::validate::FieldPath;

/// The JSON type of a field.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A string.
    Str,
    /// `true` or `false`.
    Bool,
    /// A non-negative whole number.
    Uint,
    /// Any number (a JS number: the rules that read it decide its range).
    Number,
    /// Any JSON value (checked by the route, if at all).
    Any,
    /// An array of values of a kind.
    List(&'static Kind),
    /// An object with its own table.
    Object(&'static Table),
    /// An object whose every value is of a kind (names are data).
    Map(&'static Kind),
}

/// One field of a table.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Wire name.
    pub name: &'static str,
    /// JSON type.
    pub kind: Kind,
    /// Whether the field must be present (and not `null`).
    pub required: bool,
}

impl Field {
    /// An optional field.
    pub const fn opt(name: &'static str, kind: Kind) -> Self {
        Self {
            name,
            kind,
            required: false,
        }
    }

    /// A required field.
    pub const fn req(name: &'static str, kind: Kind) -> Self {
        Self {
            name,
            kind,
            required: true,
        }
    }
}

/// The fields of an object and what happens to the others.
#[derive(Debug)]
pub struct Table {
    /// Known fields.
    pub fields: &'static [Field],
    /// Whether fields the table does not name are kept (sent as given) or ignored (not sent).
    pub keep_others: bool,
}

/// Any JSON object (a `Map<String, Value>` field).
pub const ANY_OBJECT: Kind = Kind::Object(&Table {
    fields: &[],
    keep_others: true,
});

/// A list of strings.
pub const STRINGS: Kind = Kind::List(&Kind::Str);

/// A params struct's table.
pub trait Fields {
    /// The table of the struct's wire fields.
    const TABLE: &'static Table;
}

/// A route's checked parameters: the JSON object, and how the body keeps the caller's key order.
#[derive(Debug)]
pub struct Params<T> {
    map: Map<String, Value>,
    order: Option<CallerBody>,
    of: PhantomData<fn() -> T>,
}

impl<T: Fields> Params<T> {
    /// Reads the caller's JSON text of the params (from `JSON.stringify`) and checks it against `T`'s table.
    ///
    /// # Errors
    /// `invalid_request` at the field's path (`file.url`, `signers[0].name`) when a field has the wrong type or a
    /// required one is missing; at `params` when the text is not a JSON object.
    pub fn from_text(text: &str) -> Result<Self, ApiError> {
        from_text(text, T::TABLE).map(Self::new)
    }

    /// The parameters a Rust caller built as a struct (the body is in the struct's field order).
    ///
    /// # Errors
    /// As [`Params::from_text`] (a struct of this crate always passes).
    pub fn from_typed(params: &T) -> Result<Self, ApiError>
    where
        T: Serialize,
    {
        let value =
            serde_json::to_value(params).map_err(|_| invalid("params", "cannot be serialized"))?;
        let Value::Object(mut map) = value else {
            return Err(invalid("params", "must be an object"));
        };
        check_object(&mut map, T::TABLE, FieldPath::Root(""))?;
        Ok(Self::new((map, None)))
    }

    /// No parameters (`undefined` for a route whose params are optional).
    pub fn empty() -> Self {
        Self::new((Map::new(), None))
    }
}

impl<T> Params<T> {
    fn new((map, order): (Map<String, Value>, Option<CallerBody>)) -> Self {
        Self {
            map,
            order,
            of: PhantomData,
        }
    }

    /// The object (checked: every known field has its type, `null`s removed).
    pub fn map(&self) -> &Map<String, Value> {
        &self.map
    }

    /// A field, when present.
    // One copy of the map lookup for every route (inlined, it was repeated in each route's binding).
    #[inline(never)]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// A string field, when present.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// An array field, when present.
    pub fn list(&self, name: &str) -> Option<&[Value]> {
        self.get(name).and_then(Value::as_array).map(Vec::as_slice)
    }

    /// The names of an object field in the caller's order (the map's order without a caller's text). The map keeps
    /// the order it was read in (serde_json's `preserve_order`) until the check removes a member; only then is the
    /// caller's order taken from the text's [`KeyOrder`].
    pub fn names_in_order(&self, name: &str) -> Vec<String> {
        let own: Vec<String> = self
            .get(name)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        match &self.order {
            Some(CallerBody::Order(order)) => match order.names_of(name) {
                Some(names) => names.into_iter().filter(|n| own.contains(n)).collect(),
                None => own,
            },
            _ => own,
        }
    }

    /// Whether a field is present.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets a field the caller left out to its default; the body then differs from the caller's text and is written
    /// in its key order.
    ///
    /// # Errors
    /// `invalid_request` when the caller's text is not JSON (it always is: it was read).
    pub fn or_insert(&mut self, name: &str, value: Value) -> Result<(), ApiError> {
        if !self.map.contains_key(name) {
            self.map.insert(name.to_owned(), value);
            if let Some(CallerBody::Verbatim(text)) = &self.order {
                self.order = Some(CallerBody::Order(KeyOrder::of_text(text)?));
            }
        }
        Ok(())
    }

    /// [`Params::into_body`] plus a field the client adds (an approval's `decision`), after the caller's fields.
    /// `name` and `value` are this crate's constants (plain ASCII, nothing to escape).
    pub fn into_body_adding(mut self, spec: RequestSpec, name: &str, value: &str) -> RequestSpec {
        self.map.insert(name.to_owned(), Value::from(value));
        if let Some(CallerBody::Verbatim(text)) = &self.order {
            // The caller's text is a JSON object the table did not change, so it has no `name` (the table ignores
            // fields it does not know) and ends with its closing brace.
            if let Some(head) = text.strip_suffix('}') {
                let comma = if head.trim_end() == "{" { "" } else { "," };
                self.order = Some(CallerBody::Extended(format!(
                    "{head}{comma}\"{name}\":\"{value}\"}}"
                )));
            }
        }
        self.into_body(spec)
    }

    /// The body of the route: the object, sent as the caller's text when unchanged.
    pub fn into_body(self, spec: RequestSpec) -> RequestSpec {
        let mut spec = spec.with_body(Value::Object(self.map));
        spec.body_order = self.order.map(Arc::new);
        spec
    }
}

fn from_text(
    text: &str,
    table: &Table,
) -> Result<(Map<String, Value>, Option<CallerBody>), ApiError> {
    let Some(Value::Object(mut map)) = crate::json::parse_value_exact(text) else {
        return Err(invalid("params", "must be a JSON object"));
    };
    let changed = check_object(&mut map, table, FieldPath::Root(""))?;
    let order = if changed {
        CallerBody::Order(KeyOrder::of_text(text)?)
    } else {
        CallerBody::Verbatim(text.to_owned())
    };
    Ok((map, Some(order)))
}

fn invalid(path: &str, message: &str) -> ApiError {
    ApiError::validation("invalid_request", path, message)
}

/// Checks an object against a table, removing `null` fields and the fields the table ignores. Returns whether it
/// removed anything. Paths are written out only for an error.
fn check_object(
    map: &mut Map<String, Value>,
    table: &Table,
    path: FieldPath<'_>,
) -> Result<bool, ApiError> {
    let mut changed = false;
    if !table.keep_others {
        let before = map.len();
        map.retain(|key, _| table.fields.iter().any(|f| f.name == key));
        changed = map.len() != before;
    }
    for field in table.fields {
        if map.get(field.name).is_some_and(Value::is_null) {
            map.remove(field.name);
            changed = true;
        }
        let present = match map.get_mut(field.name) {
            Some(value) => {
                changed |= check_at(value, field.kind, FieldPath::Key(&path, field.name))?;
                true
            }
            None => false,
        };
        if field.required && !present {
            return Err(invalid(
                &FieldPath::Key(&path, field.name).render(),
                "is required",
            ));
        }
    }
    Ok(changed)
}

/// Checks one value against its kind (removing `null`s and ignored keys in nested objects); returns whether it
/// removed anything.
///
/// # Errors
/// `invalid_request` at `path` (or deeper) naming what the value must be.
pub fn check_value(value: &mut Value, kind: Kind, path: &str) -> Result<bool, ApiError> {
    check_at(value, kind, FieldPath::Root(path))
}

fn check_at(value: &mut Value, kind: Kind, path: FieldPath<'_>) -> Result<bool, ApiError> {
    let message = match (kind, value) {
        (Kind::Any, _) | (Kind::Str, Value::String(_)) | (Kind::Bool, Value::Bool(_)) => {
            return Ok(false)
        }
        (Kind::Uint, Value::Number(n)) if n.is_u64() => return Ok(false),
        (Kind::Number, Value::Number(_)) => return Ok(false),
        (Kind::List(item), Value::Array(items)) => {
            let mut changed = false;
            for (i, v) in items.iter_mut().enumerate() {
                changed |= check_at(v, *item, FieldPath::Index(&path, i))?;
            }
            return Ok(changed);
        }
        (Kind::Object(table), Value::Object(map)) => return check_object(map, table, path),
        (Kind::Map(item), Value::Object(map)) => {
            for (name, v) in map.iter_mut() {
                check_at(v, *item, FieldPath::Key(&path, name))?;
            }
            return Ok(false);
        }
        (Kind::Str, _) => "must be a string",
        (Kind::Bool, _) => "must be a boolean",
        (Kind::Uint, _) => "must be a non-negative whole number",
        (Kind::Number, _) => "must be a number",
        (Kind::List(_), _) => "must be an array",
        (Kind::Object(_) | Kind::Map(_), _) => "must be an object",
    };
    Err(invalid(&path.render(), message))
}
