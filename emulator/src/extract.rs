//! Extraction: the schema dialect check and a deterministic label matcher with citations.
//!
//! The matcher reads lines of the form `Label: value` (also `Label - value` and `Label = value`). A schema property
//! matches a label when their words agree (camelCase, snake_case and the property `description` are split into
//! words): equal words give confidence 5, label containing every property word 4, property containing every label
//! word 3. Values are coerced to the property type (numbers lose thousands separators; booleans read yes/no,
//! true/false). Citation boxes are line boxes: `y = line/lines`, `height = 1/lines`, `x = 0`,
//! `width = min(1, chars/80)`: an approximation, since the emulator does not keep glyph positions.

use crate::documents::DocText;
use crate::error::{ApiError, ApiResult};
use axum::http::StatusCode;
use serde_json::{json, Map, Value};

/// Largest schema, serialized (exclusive).
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Deepest nesting below the root.
pub const MAX_NESTING: usize = 5;
const FORBIDDEN: &[&str] = &[
    "$defs", "$ref", "oneOf", "anyOf", "allOf", "const", "pattern",
];

fn invalid(path: &str, text: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "invalid_schema",
        format!("{path}: {text}"),
    )
}

/// Checks an inline schema against the dialect.
///
/// # Errors
/// 400 `invalid_schema` naming the offending path, 400 `schema_too_large` at 64 KB and beyond.
pub fn check_schema(schema: &Value) -> ApiResult<()> {
    if schema.to_string().len() >= MAX_SCHEMA_BYTES {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "schema_too_large",
            "schema: serialized size must stay under 64 KB",
        ));
    }
    let o = schema
        .as_object()
        .ok_or_else(|| invalid("schema", "must be a JSON object"))?;
    if o.get("type").and_then(Value::as_str) != Some("object") {
        return Err(invalid(
            "schema.type",
            "the root must be an object type (\"type\": \"object\")",
        ));
    }
    node(schema, "schema", 0)
}

fn node(v: &Value, path: &str, depth: usize) -> ApiResult<()> {
    let Some(o) = v.as_object() else {
        return Err(invalid(path, "must be a schema object"));
    };
    for k in o.keys() {
        if FORBIDDEN.contains(&k.as_str()) {
            return Err(invalid(
                &format!("{path}.{k}"),
                &format!("the keyword `{k}` is not supported"),
            ));
        }
    }
    if let Some(props) = o.get("properties") {
        let p = props
            .as_object()
            .ok_or_else(|| invalid(&format!("{path}.properties"), "must be an object"))?;
        if depth + 1 > MAX_NESTING && !p.is_empty() {
            return Err(invalid(
                &format!("{path}.properties"),
                "nesting is limited to 5 levels",
            ));
        }
        for (name, sub) in p {
            node(sub, &format!("{path}.properties.{name}"), depth + 1)?;
        }
    }
    if let Some(items) = o.get("items") {
        if depth + 1 > MAX_NESTING {
            return Err(invalid(
                &format!("{path}.items"),
                "nesting is limited to 5 levels",
            ));
        }
        node(items, &format!("{path}.items"), depth + 1)?;
    }
    Ok(())
}

/// A schema inferred from `hints` (comma or newline separated names; each a nullable string).
pub fn schema_from_hints(hints: &str) -> Value {
    let mut props = Map::new();
    for h in hints
        .split([',', '\n', ';'])
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        let words = words_of(h);
        let mut key = String::new();
        for (i, w) in words.iter().enumerate() {
            if i == 0 {
                key.push_str(w);
            } else {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    key.extend(f.to_uppercase());
                    key.push_str(c.as_str());
                }
            }
        }
        if !key.is_empty() {
            props.insert(key, json!({"type": ["string", "null"], "description": h}));
        }
    }
    json!({"type": "object", "properties": props})
}

/// Lowercase words of a name or label (`invoiceNumber`, `invoice_number`, `Invoice Number`).
pub fn words_of(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in s.chars() {
        if ch.is_alphanumeric() {
            if ch.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
            cur.extend(ch.to_lowercase());
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One labelled line.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// 0-based page.
    pub page: usize,
    /// Line index on the page.
    pub line: usize,
    /// Lines on the page.
    pub lines: usize,
    /// Label words.
    pub label: Vec<String>,
    /// Raw value text.
    pub value: String,
    /// Whole line.
    pub text: String,
}

/// Every `Label: value` line of a document.
pub fn labelled_lines(doc: &DocText) -> Vec<Labelled> {
    let mut out = Vec::new();
    for (p, page) in doc.pages.iter().enumerate() {
        let lines: Vec<&str> = page.lines().collect();
        let n = lines.len().max(1);
        for (i, raw) in lines.iter().enumerate() {
            let line = raw
                .trim()
                .trim_start_matches(['-', '*', '#', ' '])
                .replace("**", "");
            let split = line
                .split_once(':')
                .or_else(|| line.split_once(" - "))
                .or_else(|| line.split_once(" = "));
            if let Some((label, value)) = split {
                let label_words = words_of(label);
                if !label_words.is_empty() && label_words.len() <= 6 {
                    out.push(Labelled {
                        page: p,
                        line: i,
                        lines: n,
                        label: label_words,
                        value: value.trim().to_string(),
                        text: raw.trim().to_string(),
                    });
                }
            }
        }
    }
    out
}

fn score(prop: &[String], label: &[String]) -> u8 {
    if prop.is_empty() {
        return 0;
    }
    if prop == label {
        5
    } else if prop.iter().all(|w| label.contains(w)) {
        4
    } else if !label.is_empty() && label.iter().all(|w| prop.contains(w)) {
        3
    } else {
        0
    }
}

/// Finds the best line for a property (by name, then by its description).
pub fn find<'a>(
    lines: &'a [Labelled],
    name: &str,
    description: Option<&str>,
) -> Option<(&'a Labelled, u8)> {
    let mut cands = vec![words_of(name)];
    if let Some(d) = description {
        cands.push(words_of(d));
    }
    let mut best: Option<(&Labelled, u8)> = None;
    for c in &cands {
        for l in lines {
            let s = score(c, &l.label);
            if s > 0 && best.is_none_or(|(_, b)| s > b) {
                best = Some((l, s));
            }
        }
    }
    best
}

fn primary_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string")
            .to_string(),
        _ => "string".into(),
    }
}

/// Coerces raw text to a schema type; `None` when it cannot be read as that type.
pub fn coerce(raw: &str, schema: &Value) -> Option<Value> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    match primary_type(schema).as_str() {
        "number" | "integer" => {
            let num: String = raw
                .chars()
                .skip_while(|c| !(c.is_ascii_digit() || *c == '-'))
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',' || *c == '-')
                .filter(|c| *c != ',')
                .collect();
            let f: f64 = num.trim_end_matches('.').parse().ok()?;
            if primary_type(schema) == "integer" {
                (f.fract() == 0.0).then(|| json!(f as i64))
            } else {
                serde_json::Number::from_f64(f).map(Value::Number)
            }
        }
        "boolean" => match raw.to_ascii_lowercase().as_str() {
            "yes" | "true" | "y" | "1" | "paid" | "oui" => Some(Value::Bool(true)),
            "no" | "false" | "n" | "0" | "unpaid" | "non" => Some(Value::Bool(false)),
            _ => None,
        },
        "array" => {
            let items = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            let v: Vec<Value> = raw
                .split([',', ';'])
                .filter_map(|p| coerce(p, &items))
                .collect();
            (!v.is_empty()).then_some(Value::Array(v))
        }
        "object" => None,
        _ => Some(Value::String(raw.to_string())),
    }
}

/// Fills a schema from a document. Returns `(value, citations by dotted path)`.
pub fn fill(schema: &Value, doc: &DocText, file_id: &str) -> (Value, Map<String, Value>) {
    let lines = labelled_lines(doc);
    let mut cites = Map::new();
    let v = fill_object(schema, &lines, file_id, "", &mut cites);
    (v, cites)
}

fn fill_object(
    schema: &Value,
    lines: &[Labelled],
    file_id: &str,
    prefix: &str,
    cites: &mut Map<String, Value>,
) -> Value {
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for (name, sub) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        if primary_type(sub) == "object" {
            out.insert(name.clone(), fill_object(sub, lines, file_id, &path, cites));
            continue;
        }
        let desc = sub.get("description").and_then(Value::as_str);
        let found =
            find(lines, name, desc).and_then(|(l, s)| coerce(&l.value, sub).map(|v| (l, s, v)));
        match found {
            Some((l, s, v)) => {
                out.insert(name.clone(), v);
                let n = l.lines as f64;
                let width = (l.text.chars().count() as f64 / 80.0).min(1.0);
                cites.insert(path, json!([{
                    "fileId": file_id, "page": l.page,
                    "bbox": {"x": 0.0, "y": round4(l.line as f64 / n), "width": round4(width), "height": round4(1.0 / n)},
                    "text": l.text, "confidence": s,
                }]));
            }
            None => {
                out.insert(name.clone(), Value::Null);
                cites.insert(path, json!([{"fileId": file_id, "notFound": true}]));
            }
        }
    }
    Value::Object(out)
}

fn round4(f: f64) -> f64 {
    (f * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(t: &str) -> DocText {
        DocText {
            pages: vec![t.into()],
            markdown: false,
        }
    }

    #[test]
    fn forbidden_keyword_names_its_path_but_property_names_are_fine() {
        let s = json!({"type": "object", "properties": {"$ref": {"type": "string"}, "a": {"type": "object", "properties": {"b": {"type": "string", "pattern": "x"}}}}});
        let e = check_schema(&s).unwrap_err();
        assert_eq!(e.code, "invalid_schema");
        assert_eq!(
            e.message,
            "schema.properties.a.properties.b.pattern: the keyword `pattern` is not supported"
        );
    }

    #[test]
    fn root_must_be_object_and_nesting_is_five() {
        assert_eq!(
            check_schema(&json!({"type": "array"})).unwrap_err().code,
            "invalid_schema"
        );
        let mut s = json!({"type": "string"});
        for _ in 0..5 {
            s = json!({"type": "object", "properties": {"x": s}});
        }
        assert!(check_schema(&s).is_ok());
        let deeper = json!({"type": "object", "properties": {"x": s}});
        let e = check_schema(&deeper).unwrap_err();
        assert!(e.message.contains("nesting"), "{}", e.message);
    }

    #[test]
    fn oversized_schema_is_schema_too_large() {
        let s = json!({"type": "object", "description": "x".repeat(70_000)});
        assert_eq!(check_schema(&s).unwrap_err().code, "schema_too_large");
    }

    #[test]
    fn matcher_fills_types_and_cites_lines() {
        let s = json!({"type": "object", "properties": {
            "invoiceNumber": {"type": "string"}, "total": {"type": "number", "description": "Total Amount"},
            "paid": {"type": "boolean"}, "dueDate": {"type": ["string", "null"]}}});
        let (v, c) = fill(
            &s,
            &doc("Invoice Number: INV-1\nTotal Amount: 1,250.50 EUR\nPaid: yes\n"),
            "file_1",
        );
        assert_eq!(v["invoiceNumber"], "INV-1");
        assert_eq!(v["total"], 1250.5);
        assert_eq!(v["paid"], true);
        assert!(v["dueDate"].is_null());
        assert_eq!(
            c["dueDate"],
            json!([{"fileId": "file_1", "notFound": true}])
        );
        assert_eq!(c["invoiceNumber"][0]["confidence"], 5);
        assert_eq!(c["invoiceNumber"][0]["page"], 0);
    }

    #[test]
    fn hints_become_nullable_string_properties() {
        let s = schema_from_hints("invoice number, total");
        assert!(s["properties"]["invoiceNumber"].is_object());
        assert!(s["properties"]["total"].is_object());
    }
}
