//! `POST /v1/fill`: a template filled from values or from source documents.

use super::*;

/// `POST /v1/fill`: `template {id}` plus exactly one of `values` or `files[]`; output is a text rendition.
pub async fn fill(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "fill");
    let tpl = b
        .get("template")
        .filter(|t| t.get("id").is_some_and(Value::is_string))
        .ok_or_else(|| ApiError::field("template", "must be {id} of a registered file"))?;
    let saved = match body::opt_str(&b, "action")? {
        Some(a) => Some(crate::actions::resolve(&lock(&app.state), &c.org, &a, "fill")?.config),
        None => None,
    };
    let values = b
        .get("values")
        .cloned()
        .or_else(|| saved.as_ref().and_then(|s| s.get("values").cloned()));
    let files = b.get("files");
    if values.is_some() == files.is_some() {
        return Err(ApiError::field(
            "values",
            "send exactly one of values or files",
        ));
    }
    let out_kind = body::opt_str(&b, "output")?;
    let review = body::opt_str(&b, "review")?;
    let id = new_id("flr_");
    let t = input(&app, &c, tpl, "template", &id).await?;
    let td = doc_of(&t, "template")?;
    let labels: Vec<crate::extract::Labelled> = crate::extract::labelled_lines(&td);
    let mut filled: Map<String, Value> = Map::new();
    let mut inputs = vec![t.clone()];
    match (values, files) {
        (Some(v), None) => {
            let v = v
                .as_object()
                .cloned()
                .ok_or_else(|| ApiError::field("values", "must be an object"))?;
            for l in &labels {
                if let Some((_, val)) = v
                    .iter()
                    .find(|(k, _)| crate::extract::words_of(k) == l.label)
                {
                    filled.insert(l.label.join(" "), val.clone());
                }
            }
        }
        (None, Some(fs)) => {
            let arr = fs
                .as_array()
                .filter(|a| !a.is_empty() && a.len() <= 100)
                .ok_or_else(|| ApiError::field("files", "must hold 1 to 100 file references"))?;
            let mut docs = Vec::new();
            for (n, f) in arr.iter().enumerate() {
                let i = input(&app, &c, f, &format!("files[{n}]"), &id).await?;
                docs.push(doc_of(&i, &format!("files[{n}]"))?);
                inputs.push(i);
            }
            for l in &labels {
                let name = l.label.join(" ");
                for d in &docs {
                    let lines = crate::extract::labelled_lines(d);
                    if let Some((m, _)) = crate::extract::find(&lines, &name, None) {
                        filled.insert(name.clone(), Value::String(m.value.clone()));
                        break;
                    }
                }
            }
        }
        _ => {}
    }
    let mut text = String::new();
    for page in &td.pages {
        for line in page.lines() {
            let key = line
                .split_once(':')
                .map(|(l, _)| crate::extract::words_of(l).join(" "));
            match key.and_then(|k| filled.get(&k).map(|v| (k, v))) {
                Some((_, v)) => {
                    let label = line.split_once(':').map(|(l, _)| l).unwrap_or(line);
                    let shown = v
                        .as_str()
                        .map(String::from)
                        .unwrap_or_else(|| v.to_string());
                    text.push_str(&format!("{label}: {shown}\n"));
                }
                None => {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    let unfilled: Vec<String> = labels
        .iter()
        .map(|l| l.label.join(" "))
        .filter(|k| !filled.contains_key(k))
        .collect();
    let name = format!("{}.filled.txt", stem(&t.name));
    let output = json!({"file": file_ref_by_name(&name), "values": filled, "unfilled": unfilled});
    let config = json!({"template": {"id": t.id}, "output": out_kind, "review": review});
    finish(
        &app,
        &c,
        id,
        "fill_run",
        cm,
        &inputs,
        Done {
            config,
            output,
            produced: vec![(name, "text/plain".into(), text.into_bytes())],
            steps: vec![],
        },
        None,
    )
    .await
}
