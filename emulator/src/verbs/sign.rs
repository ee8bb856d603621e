//! `POST /v1/sign` and the envelope page that completes it.

use super::*;

/// `POST /v1/sign`: always 202 `needs_input` with an `envelopeUrl`; exempt from the purge while the envelope is open.
pub async fn sign(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    h: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let (b, cm) = idempotent_verb_prelude!(app, c, q, h, raw, "sign");
    let f = single(&b)?;
    if let Some(a) = body::opt_str(&b, "action")? {
        crate::actions::resolve(&lock(&app.state), &c.org, &a, "sign")?;
    }
    let arr = b
        .get("signers")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::field("signers", "must be a non-empty array of {name, email}"))?;
    let mut signers = Vec::new();
    for (i, s) in arr.iter().enumerate() {
        let name = s
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| ApiError::field(&format!("signers[{i}].name"), "is required"))?;
        let email = s
            .get("email")
            .and_then(Value::as_str)
            .filter(|e| e.contains('@'))
            .ok_or_else(|| {
                ApiError::field(&format!("signers[{i}].email"), "must be an email address")
            })?;
        signers.push(json!({"name": name, "email": email, "status": "pending", "signedAt": null}));
    }
    let id = new_id("sgr_");
    let inp = input(&app, &c, f, "file", &id).await?;
    let name = format!(
        "{}.signed.{}",
        stem(&inp.name),
        inp.name.rsplit_once('.').map(|(_, e)| e).unwrap_or("bin")
    );
    let output = json!({"file": file_ref_by_name(&name)});
    let config = json!({"signers": signers.iter().map(|s| json!({"name": s["name"], "email": s["email"]})).collect::<Vec<_>>()});
    let produced = vec![(name, inp.mime.clone(), inp.bytes.clone())];
    let envelope = json!({"signers": signers});
    finish(
        &app,
        &c,
        id,
        "sign_run",
        cm,
        &[inp],
        Done {
            config,
            output,
            produced,
            steps: vec![],
        },
        Some(envelope),
    )
    .await
}

/// `GET /envelopes/:id` (the signing page, JSON; no bearer).
pub async fn envelope_get(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let st = lock(&app.state);
    let r = st
        .runs
        .get(&id)
        .filter(|r| r.object == "sign_run" && !r.deleted)
        .ok_or_else(|| ApiError::not_found("envelope"))?;
    Ok(Json(
        json!({"object": "envelope", "runId": r.id, "status": r.status, "signers": r.envelope.as_ref().and_then(|e| e.get("signers")).cloned()}),
    ))
}

/// `POST /envelopes/:id/sign` `{email}`: a signer signs; when all have signed, the run becomes `processed`.
pub async fn envelope_sign(
    AxState(app): AxState<Shared>,
    Path(id): Path<String>,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let b = body::object(&raw)?;
    let email =
        body::opt_str(&b, "email")?.ok_or_else(|| ApiError::field("email", "is required"))?;
    let now = app.now_ms();
    let mut out = Outbox::new();
    let v = {
        let mut st = lock(&app.state);
        let r = st
            .runs
            .get_mut(&id)
            .filter(|r| r.object == "sign_run" && !r.deleted)
            .ok_or_else(|| ApiError::not_found("envelope"))?;
        if r.status != "needs_input" {
            return Err(ApiError::conflict(
                "envelope_closed",
                format!("the envelope is closed (run {})", r.status),
            ));
        }
        let signers = r
            .envelope
            .as_mut()
            .and_then(|e| e.get_mut("signers"))
            .and_then(Value::as_array_mut)
            .ok_or_else(|| ApiError::internal("envelope without signers"))?;
        let s = signers
            .iter_mut()
            .find(|s| s["email"] == email.as_str())
            .ok_or_else(|| ApiError::field("email", "is not a signer of this envelope"))?;
        if s["status"] == "signed" {
            return Err(ApiError::conflict(
                "already_signed",
                "this signer has already signed",
            ));
        }
        s["status"] = "signed".into();
        s["signedAt"] = iso(now).into();
        let all = signers.iter().all(|s| s["status"] == "signed");
        if all {
            r.status = "processing".into();
            r.done_ms = now;
            r.expires_ms = Some(now + r.ttl * 1000);
            let settle = now + app.config.scaled_ms(SETTLE_MS) as i64;
            let produced: Vec<String> = r.produced.iter().map(|(_, f)| f.clone()).collect();
            for f in produced {
                if let Some(file) = st.files.get_mut(&f) {
                    file.ready_ms = settle;
                }
            }
            out = runs::materialize(&mut st, &id, now);
        }
        let r = st
            .runs
            .get(&id)
            .ok_or_else(|| ApiError::not_found("envelope"))?;
        json!({"object": "envelope", "runId": r.id, "status": r.status, "signers": r.envelope.as_ref().and_then(|e| e.get("signers")).cloned()})
    };
    runs::dispatch(&app, out);
    Ok(Json(v))
}
