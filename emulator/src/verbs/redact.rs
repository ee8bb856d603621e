//! `POST /v1/redact`: a new file without the requested categories.

use super::*;

pub(super) fn redact_opts(
    st: &crate::state::State,
    org: &str,
    b: &Map<String, Value>,
) -> ApiResult<(Vec<String>, String)> {
    let saved = match body::opt_str(b, "action")? {
        Some(a) => Some(crate::actions::resolve(st, org, &a, "redact")?.config),
        None => None,
    };
    let cats_v = b
        .get("categories")
        .cloned()
        .or_else(|| saved.as_ref().and_then(|s| s.get("categories").cloned()));
    let cats_v = cats_v.ok_or_else(|| ApiError::field("categories", "is required"))?;
    let arr = cats_v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::field("categories", "must be a non-empty array of strings"))?;
    let mut cats = Vec::new();
    for (i, v) in arr.iter().enumerate() {
        match v.as_str() {
            Some(s) if crate::redact::CATEGORIES.contains(&s) => cats.push(s.to_string()),
            _ => {
                return Err(ApiError::field(
                    &format!("categories[{i}]"),
                    "must be email, phone or name",
                ))
            }
        }
    }
    let mode = body::opt_str(b, "mode")?
        .or_else(|| {
            saved
                .as_ref()
                .and_then(|s| s.get("mode"))
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_else(|| "mask".into());
    if mode != "mask" && mode != "remove" {
        return Err(ApiError::field("mode", "must be mask or remove"));
    }
    Ok((cats, mode))
}

pub(super) fn redact_done(
    inp: &Input,
    d: &DocText,
    cats: &[String],
    mode: &str,
) -> (Value, (String, String, Vec<u8>)) {
    let text = d.pages.join("\u{c}");
    let (red, counts) = crate::redact::redact(&text, cats, mode);
    let (ext, mime) = if d.markdown {
        ("md", "text/markdown")
    } else {
        ("txt", "text/plain")
    };
    let name = format!("{}.redacted.{ext}", stem(&inp.name));
    (
        json!({"file": file_ref_by_name(&name), "redactions": counts}),
        (name, mime.into(), red.into_bytes()),
    )
}

/// `POST /v1/redact`: returns a new file (text or markdown) with the categories removed.
pub async fn redact(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "redact");
    let f = single(&b)?;
    let (cats, mode) = redact_opts(&lock(&app.state), &c.org, &b)?;
    let id = new_id("rdr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let (output, file) = redact_done(&inp, &d, &cats, &mode);
    let config = json!({"categories": cats, "mode": mode});
    finish(
        &app,
        &c,
        id,
        "redact_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced: vec![file],
            steps: vec![],
        },
        None,
    )
    .await
}
