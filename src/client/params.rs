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
//!
//! The caller's text is read once into tokens ([`crate::json::tape`]). A text the table takes as it is stays as it
//! is: a field's `Value` is built when a route first reads it, and an extraction schema is checked where it lies
//! ([`Params::schema_at`]), so a 20 KB schema is never built into a `Value`. Any other text (one the check changes or
//! refuses, or that names a member twice) is read into a `Value` and checked there.

use std::cell::OnceCell;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::ApiError;
use super::request::{KeyOrder, RequestBody, RequestSpec};
use super::validate::{self, FieldPath};
use crate::json::tape::{Doc, Node, Tag};

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

/// A route's checked parameters: the JSON object, and how the body keeps the caller's text.
#[derive(Debug)]
pub struct Params<T> {
    store: Store,
    of: PhantomData<fn() -> T>,
}

#[derive(Debug)]
enum Store {
    /// The caller's text, which passed the table without a change: it is the body, and a member's `Value` is built
    /// when a route first reads it (a 20 KB schema is checked where it lies, never built: see [`Params::schema_at`]).
    /// A cell per member, in order.
    Text {
        doc: Doc,
        values: Vec<OnceCell<Value>>,
    },
    /// The checked object (typed params, or a caller's text the check changed or that names a member twice), and how
    /// the body keeps the caller's text.
    Map {
        map: Map<String, Value>,
        order: Option<CallerBody>,
    },
}

/// The caller's own JSON text of a body, kept so the wire has the caller's key order and digits.
#[derive(Debug)]
enum CallerBody {
    /// The text is the body (it parses to the same value): sent as it is.
    Verbatim(String),
    /// The body differs (fields the client adds or drops): written in the text's key order.
    Order(KeyOrder),
}

impl<T: Fields> Params<T> {
    /// Reads the caller's JSON text of the params (from `JSON.stringify`) and checks it against `T`'s table.
    ///
    /// # Errors
    /// `invalid_request` at the field's path (`file.url`, `signers[0].name`) when a field has the wrong type or a
    /// required one is missing; at `params` when the text is not a JSON object.
    pub fn from_text(text: &str) -> Result<Self, ApiError> {
        Self::from_string(text.to_owned())
    }

    /// [`Params::from_text`] of a text the caller hands over.
    ///
    /// # Errors
    /// As [`Params::from_text`].
    pub fn from_string(text: String) -> Result<Self, ApiError> {
        Store::read(text, T::TABLE, Doc::parse).map(Self::new)
    }

    /// [`Params::from_string`] of a text `JSON.stringify` wrote: its objects name each member once, so names are not
    /// compared while reading it ([`Doc::parse_unique`]).
    ///
    /// # Errors
    /// As [`Params::from_text`].
    pub fn from_stringified(text: String) -> Result<Self, ApiError> {
        Store::read(text, T::TABLE, Doc::parse_unique).map(Self::new)
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
        Ok(Self::new(Store::Map { map, order: None }))
    }

    /// No parameters (`undefined` for a route whose params are optional).
    pub fn empty() -> Self {
        Self::new(Store::Map {
            map: Map::new(),
            order: None,
        })
    }
}

// The methods are one copy each for every route's `Params<T>`: each calls its `Store` method, which is not generic.
impl<T> Params<T> {
    fn new(store: Store) -> Self {
        Self {
            store,
            of: PhantomData,
        }
    }

    /// A field, when present.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.store.get(name)
    }

    /// A string field, when present.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// An array field, when present.
    pub fn list(&self, name: &str) -> Option<&[Value]> {
        self.get(name).and_then(Value::as_array).map(Vec::as_slice)
    }

    /// Whether a field is present.
    pub fn has(&self, name: &str) -> bool {
        self.store.has(name)
    }

    /// The length of a field's compact JSON text ([`validate::json_len`]), when present: measured where it lies in
    /// the caller's text, without writing it.
    pub fn compact_len(&self, name: &str) -> Option<usize> {
        self.store.compact_len(name)
    }

    /// Checks the extraction schema under `names` (`["config", "schema"]`), when present, with `path` in messages
    /// ([`validate::schema_at`]). The caller's text is checked where it lies, without building the schema's `Value`.
    ///
    /// # Errors
    /// As [`validate::schema_at`].
    pub fn schema_at(&self, names: &[&str], path: &str) -> Result<(), ApiError> {
        self.store.schema_at(names, path)
    }

    /// The names of an object field in the caller's order (the map's order without a caller's text). The map keeps
    /// the order it was read in (serde_json's `preserve_order`) until the check removes a member; only then is the
    /// caller's order taken from the text's [`KeyOrder`].
    pub fn names_in_order(&self, name: &str) -> Vec<String> {
        self.store.names_in_order(name)
    }

    /// [`Params::into_body`] plus a field the client adds after the caller's fields (an approval's `decision`, a
    /// config's default `config`); the caller's text stays the body, with the field appended. `name` is this crate's
    /// constant (plain ASCII, nothing to escape) and not a field of the params.
    pub fn into_body_adding(self, spec: RequestSpec, name: &str, value: Value) -> RequestSpec {
        self.store.into_body_adding(spec, name, value)
    }

    /// The body of the route: the object, sent as the caller's text when unchanged.
    pub fn into_body(self, spec: RequestSpec) -> RequestSpec {
        self.store.into_body(spec)
    }
}

impl Store {
    /// The caller's text checked against `table` ([`Params::from_string`]).
    #[inline(never)]
    fn read(
        text: String,
        table: &'static Table,
        parse: fn(String) -> Result<Doc, String>,
    ) -> Result<Self, ApiError> {
        let doc = parse(text).map_err(|_| invalid("params", "must be a JSON object"))?;
        let root = doc.root();
        // The fast path: a text the table takes as it is. Anything else (a `null` or an ignored field to drop, a
        // field of the wrong type, a name given twice) is read into a `Value` and checked there, which writes every
        // error and every changed body.
        if !doc.repeats_a_name() && passes(root, Kind::Object(table)) {
            let values = root.members().map(|_| OnceCell::new()).collect();
            return Ok(Store::Text { doc, values });
        }
        let text = doc.into_text();
        let Some(Value::Object(mut map)) = crate::json::parse_value_exact(&text) else {
            return Err(invalid("params", "must be a JSON object"));
        };
        let changed = check_object(&mut map, table, FieldPath::Root(""))?;
        let order = if changed {
            CallerBody::Order(KeyOrder::of_text(&text)?)
        } else {
            CallerBody::Verbatim(text)
        };
        Ok(Store::Map {
            map,
            order: Some(order),
        })
    }

    #[inline(never)]
    fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Store::Map { map, .. } => map.get(name),
            Store::Text { doc, values } => doc
                .root()
                .members()
                .zip(values)
                .filter(|((k, _), _)| k == name)
                .last()
                .map(|((_, node), cell)| cell.get_or_init(|| node.value())),
        }
    }

    #[inline(never)]
    fn has(&self, name: &str) -> bool {
        match self {
            Store::Map { map, .. } => map.contains_key(name),
            Store::Text { doc, .. } => doc.root().get(name).is_some(),
        }
    }

    fn compact_len(&self, name: &str) -> Option<usize> {
        match self {
            Store::Map { map, .. } => map.get(name).map(validate::json_len),
            Store::Text { doc, .. } => doc.root().get(name).map(Node::compact_len),
        }
    }

    fn schema_at(&self, names: &[&str], path: &str) -> Result<(), ApiError> {
        let Some((first, rest)) = names.split_first() else {
            return Ok(());
        };
        match self {
            Store::Text { doc, .. } => {
                let mut node = doc.root().get(first);
                for name in rest {
                    node = node.and_then(|n| n.get(name));
                }
                node.map_or(Ok(()), |n| validate::schema_node_at(n, path))
            }
            Store::Map { map, .. } => {
                let mut value = map.get(*first);
                for name in rest {
                    value = value.and_then(|v| v.get(name));
                }
                value.map_or(Ok(()), |v| validate::schema_at(v, path))
            }
        }
    }

    fn names_in_order(&self, name: &str) -> Vec<String> {
        let own: Vec<String> = self
            .get(name)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        match self {
            Store::Map {
                order: Some(CallerBody::Order(order)),
                ..
            } => match order.names_of(name) {
                Some(names) => names.into_iter().filter(|n| own.contains(n)).collect(),
                None => own,
            },
            _ => own,
        }
    }

    fn into_body_adding(self, mut spec: RequestSpec, name: &str, value: Value) -> RequestSpec {
        let caller_text = match &self {
            Store::Text { doc, .. } => Some(doc.text()),
            Store::Map {
                order: Some(CallerBody::Verbatim(text)),
                ..
            } => Some(text.as_str()),
            Store::Map { .. } => None,
        };
        // The caller's text is a JSON object the table did not change, so it has no `name` (the table ignores fields
        // it does not know, and the route adds only a field the caller left out) and ends with its closing brace:
        // the field is appended to it, and the text stays the body (no `Value` of it is needed).
        if let Some(head) = caller_text.and_then(|text| text.trim_end().strip_suffix('}')) {
            let comma = if head.trim_end() == "{" { "" } else { "," };
            let value = crate::json::to_text(&value);
            spec.body = Some(RequestBody::Text {
                text: format!("{head}{comma}\"{name}\":{value}}}").into(),
                verbatim: false,
            });
            return spec;
        }
        match self {
            Store::Map { mut map, order } => {
                map.insert(name.to_owned(), value);
                Store::Map { map, order }.into_body(spec)
            }
            // A text that was read always ends with its closing brace (above).
            text @ Store::Text { .. } => text.into_body(spec),
        }
    }

    #[inline(never)]
    fn into_body(self, mut spec: RequestSpec) -> RequestSpec {
        spec.body = Some(match self {
            Store::Text { doc, .. } => RequestBody::Text {
                text: doc.into_text().into(),
                verbatim: true,
            },
            Store::Map { map, order: None } => RequestBody::Value(Value::Object(map)),
            Store::Map {
                order: Some(CallerBody::Verbatim(text)),
                ..
            } => RequestBody::Text {
                text: text.into(),
                verbatim: true,
            },
            Store::Map {
                map,
                order: Some(CallerBody::Order(order)),
            } => RequestBody::Ordered(Value::Object(map), Arc::new(order)),
        });
        spec
    }
}

/// Whether `node` passes `kind` as it is: [`check_at`] would accept it and change nothing (no `null` field, no field
/// the table ignores). A node that does not pass is checked again as a `Value` by [`check_at`], which says why.
fn passes(node: Node<'_>, kind: Kind) -> bool {
    match (kind, node.tag()) {
        (Kind::Any, _) | (Kind::Str, Tag::String) | (Kind::Bool, Tag::Bool) => true,
        (Kind::Uint, Tag::Number) => node.number().is_some_and(|n| n.is_u64()),
        (Kind::Number, Tag::Number) => true,
        (Kind::List(item), Tag::Array) => node.items().all(|v| passes(v, *item)),
        (Kind::Map(item), Tag::Object) => node.members().all(|(_, v)| passes(v, *item)),
        (Kind::Object(table), Tag::Object) => {
            node.members().all(
                |(name, v)| match table.fields.iter().find(|f| f.name == name) {
                    Some(field) => v.tag() != Tag::Null && passes(v, field.kind),
                    None => table.keep_others,
                },
            ) && table
                .fields
                .iter()
                .all(|f| !f.required || node.get(f.name).is_some())
        }
        _ => false,
    }
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
