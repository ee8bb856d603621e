//! `POST /v1/extract` and `POST /v1/extract/batch`.

use super::*;

/// Parses and checks extract options; returns `(schema, source, citations, config)`.
pub(super) fn extract_config(
    st: &crate::state::State,
    org: &str,
    b: &Map<String, Value>,
    batch: bool,
) -> ApiResult<(Value, &'static str, bool, Value)> {
    let schema = b.get("schema").filter(|v| !v.is_null());
    let hints = body::opt_str(b, "hints")?;
    let action = body::opt_str(b, "action")?;
    if batch && (schema.is_some() || hints.is_some()) {
        return Err(ApiError::field(
            if schema.is_some() { "schema" } else { "hints" },
            "extract/batch takes a saved action only, not schema or hints",
        ));
    }
    if hints.is_some() && (schema.is_some() || action.is_some()) {
        return Err(ApiError::field(
            "hints",
            "cannot be combined with schema or action; use instructions",
        ));
    }
    if schema.is_some() && action.is_some() {
        return Err(ApiError::bad("schema and action are mutually exclusive"));
    }
    let citations_inline = match b.get("citations") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(x)) => Some(*x),
        Some(_) => return Err(ApiError::field("citations", "must be a boolean")),
    };
    let unit = body::opt_str(b, "unit")?.unwrap_or_else(|| "per_document".into());
    if !["per_document", "across_documents", "rows_per_document"].contains(&unit.as_str()) {
        return Err(ApiError::field(
            "unit",
            "must be per_document, across_documents or rows_per_document",
        ));
    }
    let instructions = body::opt_str(b, "instructions")?;
    let (schema, source, saved_citations) = if let Some(s) = schema {
        crate::extract::check_schema(s)?;
        (s.clone(), "inline", None)
    } else if let Some(h) = hints {
        (crate::extract::schema_from_hints(&h), "inferred", None)
    } else if let Some(a) = action {
        let act = crate::actions::resolve(st, org, &a, "extract")?;
        let s = act
            .config
            .get("schema")
            .cloned()
            .ok_or_else(|| ApiError::field("action", "the saved action has no schema"))?;
        (
            s,
            "saved",
            act.config.get("citations").and_then(Value::as_bool),
        )
    } else {
        return Err(ApiError::field("schema", "give schema, hints or action"));
    };
    let citations = citations_inline.or(saved_citations).unwrap_or(false);
    let config = json!({"schema": schema, "schemaSource": source, "citations": citations, "unit": unit, "instructions": instructions});
    Ok((schema, source, citations, config))
}

/// Citations larger than this (serialized, all documents together) are dropped: `citationsOmitted: true`.
pub const MAX_CITATIONS_BYTES: usize = 128 * 1024;

pub(super) fn extract_output(schema: &Value, citations: bool, docs: &[(Input, DocText)]) -> Value {
    let filled: Vec<(&Input, Value, Map<String, Value>)> = docs
        .iter()
        .map(|(i, d)| {
            let (v, c) = crate::extract::fill(schema, d, &i.id);
            (i, v, c)
        })
        .collect();
    let size: usize = filled
        .iter()
        .map(|(_, _, c)| Value::Object(c.clone()).to_string().len())
        .sum();
    let omitted = citations && size > MAX_CITATIONS_BYTES;
    let cite = citations && !omitted;
    let documents: Vec<Value> = filled
        .iter()
        .map(|(i, v, c)| {
            let mut e = json!({"fileId": i.id, "name": i.name, "status": "processed", "value": v});
            if let (true, false, Some(o)) = (cite, c.is_empty(), e.as_object_mut()) {
                o.insert("citations".into(), Value::Object(c.clone()));
            }
            e
        })
        .collect();
    let (value, cites) = filled
        .first()
        .map(|(_, v, c)| (v.clone(), c.clone()))
        .unwrap_or((Value::Null, Map::new()));
    let mut out = json!({"value": value, "documents": documents});
    if let Some(o) = out.as_object_mut() {
        if cite && !cites.is_empty() {
            o.insert("citations".into(), Value::Object(cites));
        }
        if omitted {
            o.insert("citationsOmitted".into(), true.into());
        }
    }
    out
}

/// `POST /v1/extract`.
pub async fn extract(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "extract");
    let f = single(&b)?;
    let (schema, _, citations, config) = extract_config(&lock(&app.state), &c.org, &b, false)?;
    let id = new_id("exr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let i2 = inp.clone();
    let output = blocking(move || extract_output(&schema, citations, &[(i2, d)])).await?;
    finish(
        &app,
        &c,
        id,
        "extract_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced: vec![],
            steps: vec![],
        },
        None,
    )
    .await
}

/// `POST /v1/extract/batch`: always 202; one extract run per file; ignores `idempotency-key`.
pub async fn extract_batch(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, mut cm) = verb_prelude!(app, c, q, h, raw, "extract_batch");
    cm.idem = None;
    if b.get("action").is_none() && b.get("schema").is_none() && b.get("hints").is_none() {
        return Err(ApiError::field("action", "is required"));
    }
    let (schema, _, citations, config) = extract_config(&lock(&app.state), &c.org, &b, true)?;
    let files = many(&b)?;
    let mut handles = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let id = new_id("exr_");
        let inp = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
        // a file that cannot be read (corrupt PDF, unsupported binary) does not refuse the batch: its run ends
        // `failed` with the reading error and fires `file.failed` (README, "file.failed")
        let (output, failure) = match doc_of(&inp, &format!("files[{n}]")) {
            Ok(d) => {
                let (s, i2) = (schema.clone(), inp.clone());
                (
                    blocking(move || extract_output(&s, citations, &[(i2, d)])).await?,
                    None,
                )
            }
            Err(e) => (Value::Null, Some((e.code.to_string(), e.message.clone()))),
        };
        let sub = Common {
            metadata: cm.metadata.clone(),
            webhook: cm.webhook.clone(),
            ttl: cm.ttl,
            wait: 0,
            idem: None,
            reservation: None,
            failure,
        };
        finish(
            &app,
            &c,
            id.clone(),
            "extract_run",
            sub,
            &[inp],
            Done {
                config: config.clone(),
                output,
                produced: vec![],
                steps: vec![],
            },
            None,
        )
        .await?;
        handles.push(json!({"object": "extract_run", "id": id, "status": "processing", "statusUrl": runs::status_url(&id)}));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"object": "extract_batch", "id": new_id("exb_"), "runs": handles})),
    )
        .into_response())
}
