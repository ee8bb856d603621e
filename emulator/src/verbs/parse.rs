//! `POST /v1/parse`: markdown and structured JSON.

use super::*;

pub(super) fn parse_output(d: &DocText) -> Value {
    let markdown = if d.markdown {
        d.pages.join("\n\n")
    } else {
        d.pages
            .iter()
            .enumerate()
            .map(|(i, p)| format!("<!-- page {} -->\n{}", i + 1, p.trim()))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let pages: Vec<Value> = d
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"page": i, "text": p, "lines": p.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>()}))
        .collect();
    json!({"markdown": markdown, "json": {"pageCount": d.pages.len(), "pages": pages}})
}

/// `POST /v1/parse`.
pub async fn parse(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "parse");
    let f = single(&b)?;
    let id = new_id("par_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let d = doc_of(&inp, "file")?;
    let output = parse_output(&d);
    finish(
        &app,
        &c,
        id,
        "parse_run",
        cm,
        &[inp],
        Done {
            config: json!({}),
            output,
            produced: vec![],
            steps: vec![],
        },
        None,
    )
    .await
}
