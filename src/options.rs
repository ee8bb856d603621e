//! What every options decoder shares: serde decoding one field at a time, so an error names the field at fault
//! (serde's own message does not), and the rule for whole numbers given as JS numbers.
//!
//! The options types themselves live with their concern: `client::ClientOptions`, `realtime::TranscriberOptions`,
//! the webhook verifier's `maxBodyBytes` (`webhook::body_limit`).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// `Number.MAX_SAFE_INTEGER`: the largest whole number a JS number holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Why one option did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    /// The name is not an option of the type.
    Unknown(String),
    /// The value has the wrong type: the option's name and what was expected (never the value itself, which may
    /// be a secret such as a key or a ticket URL put in the wrong place).
    WrongType(String, String),
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
    for (name, field) in &map {
        let mut one = Map::new();
        one.insert(name.clone(), field.clone());
        if let Err(e) = serde_json::from_value::<T>(Value::Object(one)) {
            return Err(if e.to_string().starts_with("unknown field") {
                FieldError::Unknown(name.clone())
            } else {
                FieldError::WrongType(name.clone(), type_detail(&e))
            });
        }
    }
    serde_json::from_value(Value::Object(map))
        .map_err(|e| FieldError::WrongType(String::new(), type_detail(&e)))
}

/// The serde message without any quoted value (a misplaced URL or key must not be echoed).
fn type_detail(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.split_once(", expected ") {
        Some((_, expected)) => {
            let expected = expected.split(" at line ").next().unwrap_or(expected);
            format!("has the wrong type (expected {expected})")
        }
        None if text.starts_with("unknown variant") => {
            let expected = text.split_once("expected ").map_or("", |(_, e)| e);
            let expected = expected.split(" at line ").next().unwrap_or(expected);
            format!("must be {expected}")
        }
        None => "has the wrong type".to_owned(),
    }
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
    }

    #[test]
    fn a_wrong_type_names_the_field_and_never_echoes_the_value() {
        let e = decode_fields::<Sample>(json!({"apiKey": 42, "count": "sk_secret"})).unwrap_err();
        let FieldError::WrongType(field, detail) = e else {
            panic!("{e:?}")
        };
        assert!(field == "apiKey" || field == "count", "{field}");
        assert!(
            !detail.contains("sk_secret") && !detail.contains("42"),
            "{detail}"
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
