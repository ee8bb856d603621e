//! `POST /v1/pipeline`: several capabilities over one file set, in parallel.

use super::extract::{extract_config, extract_output};
use super::parse::parse_output;
use super::redact::{redact_done, redact_opts};
use super::*;

/// `POST /v1/pipeline`: `files[]` and `steps[]` (each `{extract: {...}}`, `{parse: {}}` or `{redact: {...}}`),
/// run in parallel over the same files, never chained.
pub async fn pipeline(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "pipeline");
    let files = many(&b)?;
    let steps = b
        .get("steps")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::field("steps", "must be a non-empty array"))?
        .clone();
    enum Step {
        Extract(Value, bool),
        Parse,
        Redact(Vec<String>, String),
    }
    let mut plan = Vec::new();
    let mut names = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let o = s.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
            ApiError::field(
                &format!("steps[{i}]"),
                "must be an object with exactly one capability key",
            )
        })?;
        let (cap, cfg) = o
            .iter()
            .next()
            .ok_or_else(|| ApiError::field(&format!("steps[{i}]"), "is empty"))?;
        let cfg = cfg.as_object().cloned().unwrap_or_default();
        let prefix = |e: ApiError| ApiError {
            message: format!("steps[{i}].{cap}.{}", e.message),
            ..e
        };
        match cap.as_str() {
            "extract" => {
                let (schema, _, cit, _) =
                    extract_config(&lock(&app.state), &c.org, &cfg, false).map_err(prefix)?;
                plan.push(Step::Extract(schema, cit));
            }
            "parse" => plan.push(Step::Parse),
            "redact" => {
                let (cats, mode) = redact_opts(&lock(&app.state), &c.org, &cfg).map_err(prefix)?;
                plan.push(Step::Redact(cats, mode));
            }
            other => {
                return Err(ApiError::field(
                    &format!("steps[{i}]"),
                    &format!("`{other}` cannot run in a pipeline (extract, parse, redact)"),
                ))
            }
        }
        names.push(cap.clone());
    }
    let id = new_id("plr_");
    let mut inputs = Vec::new();
    let mut docs = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let i = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
        docs.push(doc_of(&i, &format!("files[{n}]"))?);
        inputs.push(i);
    }
    let pairs: Vec<(Input, DocText)> = inputs.iter().cloned().zip(docs).collect();
    let jobs = plan.into_iter().zip(names.iter().cloned()).map(|(step, cap)| {
        let pairs = pairs.clone();
        crate::host::blocking(move || {
            let mut produced = Vec::new();
            let documents: Vec<Value> = match &step {
                Step::Extract(schema, cit) => pairs
                    .iter()
                    .map(|p| json!({"fileId": p.0.id, "name": p.0.name, "output": extract_output(schema, *cit, std::slice::from_ref(p))}))
                    .collect(),
                Step::Parse => pairs.iter().map(|(i, d)| json!({"fileId": i.id, "name": i.name, "output": parse_output(d)})).collect(),
                Step::Redact(cats, mode) => pairs
                    .iter()
                    .map(|(i, d)| {
                        let (o, f) = redact_done(i, d, cats, mode);
                        produced.push(f);
                        json!({"fileId": i.id, "name": i.name, "output": o})
                    })
                    .collect(),
            };
            (json!({"capability": cap, "status": "processed", "documents": documents}), produced)
        })
    });
    let results = futures_util::future::join_all(jobs).await;
    let mut step_out = Vec::new();
    let mut produced = Vec::new();
    for r in results {
        let (v, p) = r.map_err(|_| ApiError::internal("a pipeline step failed"))?;
        step_out.push(v);
        produced.extend(p);
    }
    let config = json!({"steps": steps});
    finish(
        &app,
        &c,
        id,
        "pipeline_run",
        cm,
        &inputs,
        Done {
            config,
            output: json!({"steps": step_out}),
            produced,
            steps: names,
        },
        None,
    )
    .await
}
