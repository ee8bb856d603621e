//! JSON objects read without a typed `Deserialize`: a derived (typed) reader links serde's "invalid type" messages,
//! which format floats (about 14 KB of wasm for `core::fmt`'s float printing; 13.5 KB gzip of the webhook module
//! with the derives these replaced). The visitors here implement every `visit_*` that `serde_json` calls, so none
//! of serde's default messages is linked, and values are read as `serde_json::Value`, whose reader formats nothing.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The `visit_*` methods, other than `visit_map`, that `serde_json`'s `deserialize_any` calls: each refuses.
macro_rules! not_an_object {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(E::custom(NOT_AN_OBJECT))
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(de::Error::custom(NOT_AN_OBJECT))
        }
    };
}

/// The members `names` of the JSON object in `bytes` (`None` for each absent one), others skipped unread; `None` when
/// it is not JSON, not an object, or names one of `names` twice (a last-wins reader and a first-wins reader would
/// disagree on it). Member names are compared without being copied.
pub fn members<const N: usize>(bytes: &[u8], names: &[&str; N]) -> Option<[Option<Value>; N]> {
    let mut found: [Option<Value>; N] = core::array::from_fn(|_| None);
    read_members(bytes, names, &mut found)?;
    Some(found)
}

/// [`members`] without the length in the type, so one copy of the reader serves every caller.
fn read_members(bytes: &[u8], names: &[&str], found: &mut [Option<Value>]) -> Option<()> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    (&mut de).deserialize_any(Members { names, found }).ok()?;
    de.end().ok()
}

struct Members<'n, 'f> {
    names: &'n [&'n str],
    found: &'f mut [Option<Value>],
}

impl<'de> Visitor<'de> for Members<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(NOT_AN_OBJECT)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while let Some(index) = access.next_key_seed(NameIndex { names: self.names })? {
            match index.and_then(|i| self.found.get_mut(i)) {
                Some(slot) => {
                    if slot.replace(access.next_value::<Value>()?).is_some() {
                        return Err(de::Error::custom("a member is named twice"));
                    }
                }
                None => {
                    access.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    not_an_object!();
}

/// Reads a member name as its index in `names` (`None`: another name).
struct NameIndex<'n> {
    names: &'n [&'n str],
}

impl<'de> DeserializeSeed<'de> for NameIndex<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NameIndex<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.names.iter().position(|n| *n == name))
    }
}

const NOT_AN_OBJECT: &str = "not a JSON object";

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["a", "d", "z"];

    #[test]
    fn the_named_members_are_read_and_the_others_skipped() {
        let [a, d, z] = members(
            br#" {"a": 1, "b": {"c": [true, null, 1.5]}, "d": "e\u00e9"} "#,
            &NAMES,
        )
        .unwrap();
        assert_eq!(a, Some(Value::from(1)));
        assert_eq!(d, Some(Value::from("e\u{e9}")));
        assert_eq!(z, None);
    }

    #[test]
    fn a_named_member_given_twice_is_refused() {
        assert!(members(br#"{"a": 1, "a": 1}"#, &NAMES).is_none());
        // Escapes are decoded before names are compared.
        assert!(members(br#"{"a": 1, "\u0061": 2}"#, &NAMES).is_none());
        // A member this reader skips may repeat: it is never read, so no two readers can see it differently here.
        assert!(members(br#"{"b": 1, "b": 2}"#, &NAMES).is_some());
    }

    #[test]
    fn anything_but_one_object_is_refused() {
        for text in [
            "",
            "[]",
            "[1]",
            "1",
            "1.5",
            "-1",
            "true",
            "null",
            "\"a\"",
            "{",
            "{}{}",
            "{} x",
            "{\"a\"}",
            "{\"a\": }",
            "{1: 2}",
        ] {
            assert!(members(text.as_bytes(), &NAMES).is_none(), "{text:?}");
        }
        assert_eq!(members(b"{}", &NAMES), Some([None, None, None]));
    }
}
