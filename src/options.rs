//! What every options decoder shares: serde decoding one field at a time, so an error names the field at fault
//! (serde's own message does not), and the rule for whole numbers given as JS numbers.
//!
//! The options types themselves live with their concern: `client::ClientOptions`, `realtime::TranscriberOptions`,
//! the webhook verifier's `maxBodyBytes` (`webhook::body_limit`).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::json::Json;

/// `Number.MAX_SAFE_INTEGER`: the largest whole number a JS number holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Why one option did not decode. No serde message is kept or formatted: formatting serde's errors links float and
/// `Display` machinery into every wasm module (about 20 KB gzip in the webhook-only one), and a message could echo a
/// secret put in the wrong place. Each options type says what a field must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    /// The name is not an option of the type.
    Unknown(String),
    /// The value of this option has the wrong type.
    WrongType(String),
    /// The options are not an object.
    NotAnObject,
}

/// Decodes `value` (an object) into `T`, which should be `deny_unknown_fields`.
///
/// # Errors
/// The first field that is unknown or of the wrong type, in the object's order; [`FieldError::NotAnObject`].
pub fn decode_fields<T: DeserializeOwned>(value: Value) -> Result<T, FieldError> {
    let Value::Object(map) = value else {
        return Err(FieldError::NotAnObject);
    };
    let known = field_names::<T>();
    if let Some(name) = map.keys().find(|name| !known.contains(&name.as_str())) {
        return Err(FieldError::Unknown(name.clone()));
    }
    for (name, field) in &map {
        let mut one = Map::new();
        one.insert(name.clone(), field.clone());
        if serde_json::from_value::<T>(Value::Object(one)).is_err() {
            return Err(FieldError::WrongType(name.clone()));
        }
    }
    serde_json::from_value(Value::Object(map)).map_err(|_| FieldError::WrongType(String::new()))
}

fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    struct_field_names::<T>().unwrap_or(&[])
}

/// The field names a derived `Deserialize` of a struct declares (after renaming), read by asking it to deserialize
/// from a deserializer that only records them (the trick of the `serde_introspect` crate); `None` for a type whose
/// derive does not read a struct (a struct with a `flatten` field reads a map).
pub fn struct_field_names<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut names: Option<&'static [&'static str]> = None;
    let _ = T::deserialize(Introspect(&mut names));
    names
}

struct Introspect<'a>(&'a mut Option<&'static [&'static str]>);

/// The error of [`Introspect`]: carries nothing (its message is never formatted).
#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field introspection")
    }
}

impl std::error::Error for Stop {}

impl serde::de::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop
    }
}

impl<'de> serde::Deserializer<'de> for Introspect<'_> {
    type Error = Stop;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = Some(fields);
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// The JSON type an option must have, for [`check_table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    String,
    /// A number.
    Number,
    /// A boolean.
    Bool,
    /// A string or an object (a document given as JSON text or as an object).
    StringOrObject,
}

impl Kind {
    fn admits(self, value: &Json) -> bool {
        matches!(
            (self, value),
            (Kind::String | Kind::StringOrObject, Json::String(_))
                | (Kind::Number, Json::Number(_))
                | (Kind::Bool, Json::Bool(_))
                | (Kind::StringOrObject, Json::Object(_))
        )
    }
}

/// Checks an options object against a table of names and kinds, without a serde derive: the table-driven reading
/// of the options types in the smallest wasm modules (a derived `Deserialize` plus [`decode_fields`] measured 14 KB
/// of code in the webhook-only module). `null` values are dropped (not given). Returns the options left, each with
/// its index in `table`, so that the caller reads them by index rather than comparing names again (string
/// comparisons against each constant name, inlined, made its reader 4.7 KB of wasm that a cold start compiled).
///
/// # Errors
/// The first name (in the object's order) that is not in the table, or whose value has the wrong kind;
/// [`FieldError::NotAnObject`].
pub fn check_table(value: Json, table: &[(&str, Kind)]) -> Result<Vec<(usize, Json)>, FieldError> {
    let Json::Object(members) = value else {
        return Err(FieldError::NotAnObject);
    };
    let mut out = Vec::with_capacity(members.len());
    for (name, field) in members {
        if field == Json::Null {
            continue;
        }
        match table
            .iter()
            .enumerate()
            .find(|(_, (known, _))| *known == name)
        {
            None => return Err(FieldError::Unknown(name)),
            Some((_, (_, kind))) if !kind.admits(&field) => {
                return Err(FieldError::WrongType(name))
            }
            Some((i, _)) => out.push((i, field)),
        }
    }
    Ok(out)
}

/// `value` as a whole number in `min..=max` (finite, no fraction); `None` otherwise.
pub fn whole_number(value: f64, min: f64, max: f64) -> Option<u64> {
    (value.is_finite() && value.fract() == 0.0 && value >= min && value <= max)
        .then_some(value as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Sample {
        #[allow(dead_code)]
        api_key: Option<String>,
        #[allow(dead_code)]
        count: Option<f64>,
    }

    #[test]
    fn an_unknown_name_is_named() {
        let e = decode_fields::<Sample>(json!({"count": 1, "api_key": "sk_x"})).unwrap_err();
        assert_eq!(e, FieldError::Unknown("api_key".into()));
        // An unknown name is reported before a wrong type elsewhere.
        let e = decode_fields::<Sample>(json!({"count": "x", "extra": 1})).unwrap_err();
        assert_eq!(e, FieldError::Unknown("extra".into()));
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let e = decode_fields::<Sample>(json!({"apiKey": 42, "count": 1})).unwrap_err();
        assert_eq!(e, FieldError::WrongType("apiKey".into()));
        let e = decode_fields::<Sample>(json!({"apiKey": "k", "count": "sk_secret"})).unwrap_err();
        assert_eq!(e, FieldError::WrongType("count".into()));
    }

    #[test]
    fn the_field_names_are_the_renamed_ones() {
        assert_eq!(field_names::<Sample>(), &["apiKey", "count"]);
    }

    #[test]
    fn a_table_names_the_unknown_or_mistyped_option_and_drops_nulls() {
        const TABLE: [(&str, Kind); 3] = [
            ("url", Kind::String),
            ("n", Kind::Number),
            ("jwks", Kind::StringOrObject),
        ];
        let ok = check_table(
            Json::from(&json!({"jwks": {}, "url": "u", "n": 1, "x": null})),
            &TABLE,
        )
        .unwrap();
        let indices: Vec<usize> = ok.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, [2, 0, 1]);
        assert_eq!(ok[1].1, Json::String("u".into()));
        assert_eq!(
            check_table(Json::from(&json!({"y": 1})), &TABLE),
            Err(FieldError::Unknown("y".into()))
        );
        assert_eq!(
            check_table(Json::from(&json!({"n": "1"})), &TABLE),
            Err(FieldError::WrongType("n".into()))
        );
        assert_eq!(
            check_table(Json::from(&json!({"jwks": 7})), &TABLE),
            Err(FieldError::WrongType("jwks".into()))
        );
        assert_eq!(
            check_table(Json::from(&json!(1)), &TABLE),
            Err(FieldError::NotAnObject)
        );
    }

    #[test]
    fn a_non_object_is_refused() {
        assert_eq!(
            decode_fields::<Sample>(json!([1])).unwrap_err(),
            FieldError::NotAnObject
        );
    }

    #[test]
    fn whole_numbers_are_finite_without_fraction_and_in_range() {
        assert_eq!(whole_number(3.0, 0.0, 100.0), Some(3));
        assert_eq!(
            whole_number(MAX_SAFE_INTEGER, 1.0, MAX_SAFE_INTEGER),
            Some(9_007_199_254_740_991)
        );
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1.5, 101.0] {
            assert_eq!(whole_number(bad, 0.0, 100.0), None, "{bad}");
        }
    }
}
