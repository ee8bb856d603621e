//! The agent-run routes: start and read runs, decide approvals, complete human steps (`GET /v1/agents` is in
//! `agents.rs`).

use crate::agent_engine::{self, is_terminal, Ctx, RUN_LIFETIME_MS};
use crate::app::{App, Shared};
use crate::auth::Caller;
use crate::body;
use crate::error::{ApiError, ApiResult};
use crate::files::{file_entry, file_status};
use crate::host::{self, Instant};
use crate::state::{AgentRun, RunTask, State};
use crate::util::{iso, lock, new_id};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::time::Duration;

fn status_url(id: &str) -> String {
    format!("/v1/agent-runs/{id}")
}

/// The full served run.
pub fn run_json(app: &App, st: &State, run: &AgentRun) -> Value {
    let tasks: Vec<Value> = run
        .tasks
        .iter()
        .map(|t| json!({"id": t.id, "title": t.title, "executor": t.executor, "status": t.status, "summary": t.summary, "completedAt": t.completed_ms.map(iso)}))
        .collect();
    let mut pending: Vec<_> = run
        .approvals
        .iter()
        .filter(|a| a.status == "pending")
        .collect();
    pending.sort_by_key(|a| a.requested_ms);
    let approvals: Vec<Value> = pending.iter().map(|a| approval_entry(st, a)).collect();
    let entry = |s: &State, id: &str| file_entry(app, s, id);
    let ctx = Ctx {
        scale: app.config.time_scale,
        file_entry: &entry,
    };
    let mut v = json!({
        "object": "agent_run",
        "id": run.id,
        "agent": {"id": run.agent_id, "name": run.agent_name, "version": run.agent_version},
        "status": run.status,
        "progress": agent_engine::progress_json(run),
        "tasks": tasks,
        "approvals": approvals,
        "output": agent_engine::output_json(run, &ctx, st),
        "statusUrl": status_url(&run.id),
        "createdAt": iso(run.created_ms),
        "expiresAt": iso(run.expires_ms),
    });
    if let Some(o) = v.as_object_mut() {
        if run.status == "waiting" {
            o.insert("waiting".into(), agent_engine::waiting_json(run));
        }
        if let (true, Some(p)) = (run.status == "paused", &run.paused) {
            o.insert("paused".into(), json!({"reason": p.reason}));
        }
        if let Some(r) = &run.result {
            o.insert("result".into(), r.clone().into());
        }
        if let Some((c, m)) = &run.error {
            o.insert("error".into(), json!({"code": c, "message": m}));
        }
        if run.incomplete {
            o.insert("incomplete".into(), true.into());
        }
        if let Some(m) = &run.metadata {
            o.insert("metadata".into(), m.clone());
        }
    }
    v
}

fn approval_entry(st: &State, a: &crate::state::RunApproval) -> Value {
    let files: Vec<Value> = a
        .files
        .iter()
        .map(|f| json!({"id": f, "name": st.files.get(f).map(|x| x.name.clone()).unwrap_or_default()}))
        .collect();
    json!({"id": a.id, "kind": a.kind, "action": a.action, "requestedAt": iso(a.requested_ms), "rationale": a.rationale, "files": files, "params": a.params})
}

/// Brings a run up to date and delivers its events (inside this request); `retries`: also retry events that
/// failed in earlier requests.
pub async fn observe(app: &App, run_id: &str, retries: bool) {
    {
        let mut st = lock(&app.state);
        let Some(mut run) = st.agent_runs.remove(run_id) else {
            return;
        };
        let now = app.now_ms();
        if let Some(agent) = app.agent(&run.agent_id) {
            let entry = |s: &State, id: &str| file_entry(app, s, id);
            let ctx = Ctx {
                scale: app.config.time_scale,
                file_entry: &entry,
            };
            agent_engine::advance(&mut run, agent, now, &ctx, &mut st);
        }
        st.agent_runs.insert(run_id.to_string(), run);
    }
    crate::webhooks::deliver_agent_events(app, run_id, retries).await;
}

/// A `waiting` run with nothing left outstanding resumes `processing` (a new block then fires `agent_run.waiting`).
fn resume(st: &mut State, id: &str) {
    if let Some(r) = st.agent_runs.get_mut(id) {
        if r.status == "waiting" && agent_engine::outstanding(r) == (0, 0) {
            r.status = "processing".into();
        }
    }
}

/// Holds up to `wait` seconds until the run finishes or blocks on a person. Returns its status.
async fn hold(app: &App, run_id: &str, wait: u64, mut retries: bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(wait);
    loop {
        observe(app, run_id, retries).await;
        retries = false;
        let status = lock(&app.state)
            .agent_runs
            .get(run_id)
            .map(|r| r.status.clone())
            .unwrap_or_default();
        if is_terminal(&status)
            || status == "waiting"
            || status == "paused"
            || Instant::now() >= deadline
        {
            return status;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        host::sleep(left.min(Duration::from_millis(25))).await;
    }
}

fn visible<'a>(st: &'a State, c: &Caller, id: &str, scope: bool) -> ApiResult<&'a AgentRun> {
    st.agent_runs
        .get(id)
        .filter(|r| r.org == c.org && (!scope || r.key.0 == c.key))
        .ok_or_else(|| ApiError::not_found("agent run"))
}

fn full(app: &App, id: &str) -> Value {
    let st = lock(&app.state);
    st.agent_runs
        .get(id)
        .map(|r| run_json(app, &st, r))
        .unwrap_or(Value::Null)
}

fn replay_header(mut r: Response) -> Response {
    r.headers_mut()
        .insert("idempotent-replay", HeaderValue::from_static("true"));
    r
}

/// `POST /v1/agent-runs`.
pub async fn create(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    raw: Bytes,
) -> ApiResult<Response> {
    let q = body::query_pairs(q.as_deref());
    let wait = body::wait(&q, 60)?;
    let idem = body::idempotency_key(&headers).map(|k| format!("{}|agent-runs|{k}", c.org));
    // the key is reserved before the first await; a concurrent request with it waits, then replays
    let mut reservation = None;
    if let Some(k) = &idem {
        match crate::idempotency::claim(&app, k).await {
            crate::idempotency::Claim::Reserved(r) => reservation = Some(r),
            crate::idempotency::Claim::Replay(id) => {
                // isolation: the replaying key must see the run before it is advanced
                visible(&lock(&app.state), &c, &id, app.config.scope_keys)?;
                observe(&app, &id, true).await;
                let st = lock(&app.state);
                let run = visible(&st, &c, &id, app.config.scope_keys)?;
                let code = if is_terminal(&run.status) {
                    StatusCode::OK
                } else {
                    StatusCode::ACCEPTED
                };
                return Ok(replay_header(
                    (code, Json(run_json(&app, &st, run))).into_response(),
                ));
            }
        }
    }
    app.check_credits(&c.org)?;
    let b = body::object(&raw)?;
    let agent_id =
        body::opt_str(&b, "agent")?.ok_or_else(|| ApiError::field("agent", "is required"))?;
    let agent = app
        .agent(&agent_id)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "not_found", "agent: no such agent"))?
        .clone();
    let files = match b.get("files") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= 200 => a.clone(),
        Some(Value::Array(_)) => {
            return Err(ApiError::field(
                "files",
                "must hold 1 to 200 file references",
            ))
        }
        Some(_) => {
            return Err(ApiError::field(
                "files",
                "must be an array of file references",
            ))
        }
        None => return Err(ApiError::field("files", "is required")),
    };
    let metadata = body::metadata(&b)?;
    let webhook = body::webhook(&b, app.config.allow_http_webhooks)?;
    crate::webhooks::check_ref(&lock(&app.state), &c.org, &webhook)?;
    let id = new_id("agr_");
    let mut input = Vec::new();
    for (i, f) in files.iter().enumerate() {
        input.push(crate::files::resolve_ref(&app, &c.org, f, &format!("files[{i}]"), None).await?);
    }
    {
        let st = lock(&app.state);
        let total: u64 = input
            .iter()
            .filter_map(|f| st.files.get(f))
            .map(|f| f.bytes.len() as u64)
            .sum();
        app.check_dispatch_budget(total)?;
    }
    let now = app.now_ms();
    {
        let mut st = lock(&app.state);
        let seq = st.next_seq();
        let tasks = agent
            .tasks
            .iter()
            .map(|t| RunTask {
                id: t.id.clone(),
                title: t.title.clone(),
                executor: t.executor.clone(),
                depends_on: t.depends_on.clone(),
                status: "pending".into(),
                summary: None,
                completed_ms: None,
                started_ms: None,
                due_ms: None,
                produced_file: None,
            })
            .collect();
        let run = AgentRun {
            id: id.clone(),
            org: c.org.clone(),
            key: crate::util::Secret(c.key.clone()),
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            agent_version: agent.version,
            status: "queued".into(),
            tasks,
            approvals: Vec::new(),
            input_files: input.clone(),
            output_files: Vec::new(),
            result: None,
            error: None,
            incomplete: false,
            metadata,
            webhook,
            created_ms: now,
            expires_ms: now + RUN_LIFETIME_MS,
            started_ms: None,
            pending_events: Vec::new(),
            paused: None,
            seq,
        };
        st.agent_runs.insert(id.clone(), run);
        crate::idempotency::commit(&mut st, idem, &id);
        let prepared = input.iter().all(|f| {
            st.files
                .get(f)
                .is_some_and(|f| file_status(f, now) == "ready")
        });
        if !prepared {
            let run = st
                .agent_runs
                .get(&id)
                .map(|r| run_json(&app, &st, r))
                .unwrap_or(Value::Null);
            return Ok((StatusCode::ACCEPTED, Json(run)).into_response());
        }
    }
    // committed with the run: concurrent holders of the key replay it from here on
    drop(reservation);
    let status = hold(&app, &id, wait, true).await;
    if is_terminal(&status) {
        return Ok((StatusCode::OK, Json(full(&app, &id))).into_response());
    }
    if status == "waiting" || status == "queued" {
        return Ok((StatusCode::ACCEPTED, Json(full(&app, &id))).into_response());
    }
    let handle =
        json!({"object": "agent_run", "id": id, "status": status, "statusUrl": status_url(&id)});
    Ok((StatusCode::ACCEPTED, Json(handle)).into_response())
}

/// `GET /v1/agent-runs/:id`.
pub async fn get(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Value>> {
    let q = body::query_pairs(q.as_deref());
    let wait = body::wait(&q, 0)?;
    visible(&lock(&app.state), &c, &id, app.config.scope_keys)?;
    hold(&app, &id, wait, true).await;
    Ok(Json(full(&app, &id)))
}

fn file_ids(
    st: &State,
    c: &Caller,
    run: &AgentRun,
    v: Option<&Value>,
    max: usize,
) -> ApiResult<Option<Vec<String>>> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let arr = v
        .as_array()
        .ok_or_else(|| ApiError::field("files", "must be an array of file ids"))?;
    if arr.len() > max {
        return Err(ApiError::field("files", &format!("at most {max} file ids")));
    }
    let mut out = Vec::new();
    for (i, f) in arr.iter().enumerate() {
        let id = f
            .as_str()
            .ok_or_else(|| ApiError::field(&format!("files[{i}]"), "must be a file id string"))?;
        let known = run
            .input_files
            .iter()
            .chain(run.output_files.iter())
            .any(|x| x == id)
            || st.files.get(id).is_some_and(|f| f.org == c.org);
        if !known {
            return Err(ApiError::field(
                &format!("files[{i}]"),
                "is not a file registered by this organization or held by the run",
            ));
        }
        out.push(id.to_string());
    }
    Ok(Some(out))
}

/// `POST /v1/agent-runs/:id/approvals/:approvalId`.
pub async fn decide(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path((id, approval_id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let q = body::query_pairs(q.as_deref());
    let wait = body::wait(&q, 0)?;
    {
        let st = lock(&app.state);
        let run = visible(&st, &c, &id, app.config.scope_keys)?;
        if !run.approvals.iter().any(|a| a.id == approval_id) {
            return Err(ApiError::not_found("approval"));
        }
    }
    let b = body::object(&raw)?;
    let decision = match body::opt_str(&b, "decision")?.as_deref() {
        Some("approve") => "approved",
        Some("reject") => "rejected",
        Some(_) => return Err(ApiError::field("decision", "must be approve or reject")),
        None => {
            return Err(ApiError::field(
                "decision",
                "is required (approve or reject)",
            ))
        }
    };
    let note = body::opt_str(&b, "note")?;
    if note.as_ref().is_some_and(|n| n.chars().count() > 4000) {
        return Err(ApiError::field("note", "must be at most 4000 characters"));
    }
    if decision == "rejected" && note.as_deref().is_none_or(|n| n.trim().is_empty()) {
        return Err(ApiError::field(
            "note",
            "is required when the decision is reject",
        ));
    }
    let params = match b.get("params") {
        None | Some(Value::Null) => None,
        Some(p @ Value::Object(_)) => Some(p.clone()),
        Some(_) => return Err(ApiError::field("params", "must be an object")),
    };
    let size = b.get("params").map(|p| p.to_string().len()).unwrap_or(0)
        + b.get("files").map(|p| p.to_string().len()).unwrap_or(0);
    if size >= 1024 * 1024 {
        return Err(ApiError::field(
            "params",
            "params and files together must stay under 1 MiB",
        ));
    }
    observe(&app, &id, true).await;
    {
        let mut st = lock(&app.state);
        let run = visible(&st, &c, &id, app.config.scope_keys)?.clone();
        let files = file_ids(&st, &c, &run, b.get("files"), 200)?;
        let ap = run
            .approvals
            .iter()
            .find(|a| a.id == approval_id)
            .ok_or_else(|| ApiError::not_found("approval"))?;
        if ap.status != "pending" {
            return Err(ApiError::conflict(
                "approval_already_decided",
                format!(
                    "this approval was already decided ({}); the first decision stands",
                    ap.status
                ),
            ));
        }
        if is_terminal(&run.status) || run.status == "paused" {
            return Err(ApiError::conflict(
                "run_not_active",
                format!("the run is {} and takes no more decisions", run.status),
            ));
        }
        if params.is_some() && ap.kind != "before" {
            return Err(ApiError::field(
                "params",
                "only a `before` gate takes params",
            ));
        }
        let now = app.now_ms();
        if let Some(a) = st
            .agent_runs
            .get_mut(&id)
            .and_then(|r| r.approvals.iter_mut().find(|a| a.id == approval_id))
        {
            a.status = decision.into();
            a.decided_ms = Some(now);
            a.note = note;
            if let Some(p) = params {
                a.params = p;
            }
            if let Some(f) = files {
                a.files = f;
            }
        }
        resume(&mut st, &id);
    }
    hold(&app, &id, wait, false).await;
    let st = lock(&app.state);
    let run = visible(&st, &c, &id, app.config.scope_keys)?;
    let a = run
        .approvals
        .iter()
        .find(|a| a.id == approval_id)
        .ok_or_else(|| ApiError::not_found("approval"))?;
    let out = json!({
        "object": "agent_run_approval", "id": a.id, "kind": a.kind, "action": a.action, "status": a.status,
        "requestedAt": iso(a.requested_ms), "decidedAt": a.decided_ms.map(iso), "note": a.note,
        "run": {"id": run.id, "status": run.status, "statusUrl": status_url(&run.id)},
    });
    Ok(Json(out))
}

/// `POST /v1/agent-runs/:id/tasks/:taskId/complete`.
pub async fn complete_task(
    AxState(app): AxState<Shared>,
    Extension(c): Extension<Caller>,
    Path((id, task_id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    raw: Bytes,
) -> ApiResult<Json<Value>> {
    let q = body::query_pairs(q.as_deref());
    let wait = body::wait(&q, 0)?;
    {
        let st = lock(&app.state);
        let run = visible(&st, &c, &id, app.config.scope_keys)?;
        if !run.tasks.iter().any(|t| t.id == task_id) {
            return Err(ApiError::not_found("task"));
        }
    }
    let b = body::object(&raw)?;
    let note = body::opt_str(&b, "note")?;
    if note.as_ref().is_some_and(|n| n.chars().count() > 2000) {
        return Err(ApiError::field("note", "must be at most 2000 characters"));
    }
    observe(&app, &id, true).await;
    {
        let mut st = lock(&app.state);
        let run = visible(&st, &c, &id, app.config.scope_keys)?.clone();
        let files = file_ids(&st, &c, &run, b.get("files"), 20)?.unwrap_or_default();
        let t = run
            .tasks
            .iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| ApiError::not_found("task"))?;
        if t.executor != "human" {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "task_not_human",
                "this step is executed by the agent; only human steps can be completed",
            ));
        }
        if t.status == "completed" || t.status == "skipped" {
            return Err(ApiError::conflict(
                "task_already_completed",
                format!("this step is already {}", t.status),
            ));
        }
        if t.status == "pending" {
            return Err(ApiError::conflict(
                "task_dependencies_pending",
                "the steps this one depends on are not finished",
            ));
        }
        if is_terminal(&run.status) || run.status == "paused" {
            return Err(ApiError::conflict(
                "run_not_active",
                format!("the run is {} and takes no more work", run.status),
            ));
        }
        let now = app.now_ms();
        if let Some(r) = st.agent_runs.get_mut(&id) {
            if let Some(t) = r.tasks.iter_mut().find(|t| t.id == task_id) {
                t.status = "completed".into();
                t.completed_ms = Some(now);
                t.summary = Some(note.unwrap_or_else(|| "Completed by a person.".into()));
            }
            for f in files {
                if !r.output_files.contains(&f) {
                    r.output_files.push(f);
                }
            }
        }
        resume(&mut st, &id);
    }
    hold(&app, &id, wait, false).await;
    let st = lock(&app.state);
    let run = visible(&st, &c, &id, app.config.scope_keys)?;
    let t = run
        .tasks
        .iter()
        .find(|t| t.id == task_id)
        .ok_or_else(|| ApiError::not_found("task"))?;
    Ok(Json(json!({
        "object": "agent_run_task", "id": t.id, "title": t.title, "executor": t.executor, "status": t.status,
        "summary": t.summary, "completedAt": t.completed_ms.map(iso),
        "run": {"id": run.id, "status": run.status, "statusUrl": status_url(&run.id)},
    })))
}
