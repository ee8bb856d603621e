//! The agent-run state machine, advanced lazily whenever a request observes a run.
//!
//! Nothing moves in the background: a `queued` run stays `queued` until a read finds its files ready, and work
//! that "happened" while nobody looked is replayed on the next observation with its own (virtual) timestamps.
//!
//! Per step: a `pending` step whose dependencies are all closed opens: a human step becomes `ready`; an agent step
//! becomes `in_progress` (its work takes `durationMs` x time scale). An agent step whose action has a `before` gate
//! asks for the sign-off first and starts its work only once approved. An action with an `output` gate does the work,
//! produces its file, then asks for the sign-off. A rejected gate closes the step as `skipped` (the action never runs
//! or its output is discarded); steps depending on a skipped step are skipped too; the run then ends `completed`
//! with `incomplete: true`.

use crate::agent_definitions::Agent;
use crate::files::{file_status, make_file};
use crate::state::{AgentRun, PendingEvent, RunApproval, State};
use crate::util::{iso, new_id};
use serde_json::{json, Value};

/// What the engine needs from the app.
pub struct Ctx<'a> {
    /// Time scale of work durations.
    pub scale: f64,
    /// Builds the served entry of an output file (with its signed URL).
    pub file_entry: &'a dyn Fn(&State, &str) -> Value,
}

/// Agent-run deadline: seven days.
pub const RUN_LIFETIME_MS: i64 = 7 * 24 * 3600 * 1000;

/// Whether a status is final.
pub fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled" | "expired")
}

fn closed(status: &str) -> bool {
    status == "completed" || status == "skipped"
}

/// Moves a run as far as `now` allows, queuing its events.
pub fn advance(run: &mut AgentRun, agent: &Agent, now: i64, ctx: &Ctx<'_>, st: &mut State) {
    let scale = ctx.scale;
    if is_terminal(&run.status) {
        return;
    }
    if run.status == "paused" {
        if now >= run.expires_ms {
            run.paused = None;
            expire(run, now);
        }
        return;
    }
    let horizon = now.min(run.expires_ms);
    if run.status == "queued" {
        let ready = run.input_files.iter().all(|id| {
            st.files
                .get(id)
                .is_some_and(|f| file_status(f, horizon) == "ready")
        });
        if !ready || now >= run.expires_ms {
            if now >= run.expires_ms {
                expire(run, now);
            }
            return;
        }
        run.status = "processing".into();
        run.started_ms = Some(horizon);
    }
    let start = run.started_ms.unwrap_or(run.created_ms);
    let mut new_approvals: Vec<String> = Vec::new();
    let mut new_ready: Vec<String> = Vec::new();
    loop {
        let mut changed = false;
        for i in 0..run.tasks.len() {
            let snapshot = run.tasks.clone();
            let Some(task) = run.tasks.get_mut(i) else {
                continue;
            };
            let def = agent.tasks.iter().find(|t| t.id == task.id);
            match task.status.as_str() {
                "pending" => {
                    let deps: Vec<_> = snapshot
                        .iter()
                        .filter(|t| task.depends_on.contains(&t.id))
                        .collect();
                    if !deps.iter().all(|d| closed(&d.status)) {
                        continue;
                    }
                    let opened = deps
                        .iter()
                        .filter_map(|d| d.completed_ms)
                        .max()
                        .unwrap_or(start)
                        .max(start);
                    if opened > horizon {
                        continue;
                    }
                    changed = true;
                    if let Some(skipped) = deps.iter().find(|d| d.status == "skipped") {
                        task.status = "skipped".into();
                        task.summary =
                            Some(format!("Skipped: depends on skipped step {}.", skipped.id));
                        task.completed_ms = Some(opened);
                        continue;
                    }
                    if task.executor == "human" {
                        task.status = "ready".into();
                        task.started_ms = Some(opened);
                        new_ready.push(task.id.clone());
                        continue;
                    }
                    task.status = "in_progress".into();
                    task.started_ms = Some(opened);
                    let duration = def.map(|d| d.duration_ms).unwrap_or(1000.0);
                    let action = def
                        .and_then(|d| d.action.as_deref())
                        .and_then(|a| agent.action(a));
                    if let Some(act) = action.filter(|a| a.approval == "before") {
                        task.due_ms = None;
                        let id = new_id("apr_");
                        run.approvals.push(RunApproval {
                            id: id.clone(),
                            kind: "before".into(),
                            action: act.name.clone(),
                            task_id: run.tasks.get(i).map(|t| t.id.clone()).unwrap_or_default(),
                            requested_ms: opened,
                            rationale: act.rationale.clone(),
                            files: run.input_files.clone(),
                            params: act.params.clone(),
                            status: "pending".into(),
                            decided_ms: None,
                            note: None,
                        });
                        new_approvals.push(id);
                    } else {
                        task.due_ms = Some(opened + scaled(duration, scale));
                    }
                }
                "in_progress" => {
                    let task_id = task.id.clone();
                    let gate = |kind: &str| {
                        run.approvals
                            .iter()
                            .find(|a| a.task_id == task_id && a.kind == kind)
                            .cloned()
                    };
                    let duration = def.map(|d| d.duration_ms).unwrap_or(1000.0);
                    let action = def
                        .and_then(|d| d.action.as_deref())
                        .and_then(|a| agent.action(a));
                    let Some(task) = run.tasks.get_mut(i) else {
                        continue;
                    };
                    let due = match task.due_ms {
                        Some(d) => d,
                        None => match gate("before") {
                            Some(a) if a.status == "approved" => {
                                let d = a.decided_ms.unwrap_or(horizon) + scaled(duration, scale);
                                task.due_ms = Some(d);
                                changed = true;
                                d
                            }
                            Some(a) if a.status == "rejected" => {
                                task.status = "skipped".into();
                                task.summary = Some(format!(
                                    "Rejected: {}",
                                    a.note.clone().unwrap_or_default()
                                ));
                                task.completed_ms = a.decided_ms;
                                changed = true;
                                continue;
                            }
                            _ => continue,
                        },
                    };
                    if due > horizon {
                        continue;
                    }
                    if let Some(fail) = def.and_then(|d| d.fail.as_ref()) {
                        task.completed_ms = Some(due);
                        run.status = "failed".into();
                        run.error = Some((fail.code.clone(), fail.message.clone()));
                        push_event(run, "agent_run.failed", due, None);
                        return;
                    }
                    let output_gate = action.filter(|a| a.approval == "output");
                    if task.produced_file.is_none() {
                        if let Some(out) = def.and_then(|d| d.output.as_ref()) {
                            let body = report_body(agent, &snapshot, &task.title);
                            let fid = make_file(
                                st,
                                &run.org,
                                &out.name,
                                "text/markdown",
                                body.into_bytes(),
                                due,
                                None,
                            );
                            task.produced_file = Some(fid);
                            changed = true;
                        }
                    }
                    let Some(task) = run.tasks.get_mut(i) else {
                        continue;
                    };
                    if let Some(act) = output_gate {
                        match gate("output") {
                            None => {
                                let id = new_id("apr_");
                                let files = task.produced_file.iter().cloned().collect();
                                run.approvals.push(RunApproval {
                                    id: id.clone(),
                                    kind: "output".into(),
                                    action: act.name.clone(),
                                    task_id,
                                    requested_ms: due,
                                    rationale: act.rationale.clone(),
                                    files,
                                    params: act.params.clone(),
                                    status: "pending".into(),
                                    decided_ms: None,
                                    note: None,
                                });
                                new_approvals.push(id);
                                changed = true;
                                continue;
                            }
                            Some(a) if a.status == "approved" => {
                                finish_task(
                                    run,
                                    i,
                                    a.decided_ms.unwrap_or(due),
                                    def.and_then(|d| d.summary.clone()),
                                    a.files.clone(),
                                );
                                changed = true;
                            }
                            Some(a) if a.status == "rejected" => {
                                if let Some(task) = run.tasks.get_mut(i) {
                                    task.status = "skipped".into();
                                    task.summary = Some(format!(
                                        "Output rejected: {}",
                                        a.note.clone().unwrap_or_default()
                                    ));
                                    task.completed_ms = a.decided_ms;
                                }
                                changed = true;
                            }
                            _ => continue,
                        }
                    } else {
                        let files: Vec<String> = task.produced_file.iter().cloned().collect();
                        finish_task(run, i, due, def.and_then(|d| d.summary.clone()), files);
                        changed = true;
                    }
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    if run.tasks.iter().all(|t| closed(&t.status)) {
        let done_at = run
            .tasks
            .iter()
            .filter_map(|t| t.completed_ms)
            .max()
            .unwrap_or(horizon);
        run.status = "completed".into();
        run.incomplete = run.tasks.iter().any(|t| t.status == "skipped");
        run.result = Some(match (&agent.result, run.incomplete) {
            (Some(r), false) => r.clone(),
            (Some(r), true) => {
                format!("{r} Incomplete: some steps were skipped after a rejected sign-off.")
            }
            (None, _) => "Run finished.".into(),
        });
        let output = output_json(run, ctx, st);
        push_event(run, "agent_run.completed", done_at, Some(output));
        return;
    }
    let outstanding = outstanding(run);
    if outstanding.0 + outstanding.1 > 0 {
        if run.status != "waiting" {
            run.status = "waiting".into();
            push_event(run, "agent_run.waiting", horizon, None);
        }
        for id in new_approvals {
            let ap = run.approvals.iter().find(|a| a.id == id).cloned();
            if let Some(a) = ap.filter(|a| a.status == "pending") {
                let mut ev = event_data(run);
                put(
                    &mut ev,
                    "approval",
                    json!({"id": a.id, "kind": a.kind, "action": a.action, "requestedAt": iso(a.requested_ms)}),
                );
                queue(run, "agent_run.approval_requested", a.requested_ms, ev);
            }
        }
        for id in new_ready {
            let t = run.tasks.iter().find(|t| t.id == id).cloned();
            if let Some(t) = t.filter(|t| t.status == "ready") {
                let mut ev = event_data(run);
                put(
                    &mut ev,
                    "task",
                    json!({"id": t.id, "title": t.title, "executor": "human", "status": "ready"}),
                );
                queue(
                    run,
                    "agent_run.task_ready",
                    t.started_ms.unwrap_or(horizon),
                    ev,
                );
            }
        }
    } else {
        run.status = "processing".into();
    }
    if now >= run.expires_ms {
        expire(run, now);
    }
}

fn scaled(ms: f64, scale: f64) -> i64 {
    let v = ms * scale;
    if v.is_finite() && v > 0.0 {
        v as i64
    } else {
        0
    }
}

fn finish_task(run: &mut AgentRun, i: usize, at: i64, summary: Option<String>, files: Vec<String>) {
    if let Some(task) = run.tasks.get_mut(i) {
        task.status = "completed".into();
        task.completed_ms = Some(at);
        task.summary = Some(summary.unwrap_or_else(|| format!("{} done.", task.title)));
    }
    for f in files {
        if !run.output_files.contains(&f) {
            run.output_files.push(f);
        }
    }
}

fn report_body(agent: &Agent, tasks: &[crate::state::RunTask], title: &str) -> String {
    let mut s = format!(
        "# {}\n\nProduced by the emulator's agent `{}` (step: {title}).\n\n",
        agent.name, agent.id
    );
    for t in tasks {
        s.push_str(&format!("- {}: {}\n", t.title, t.status));
    }
    s
}

fn expire(run: &mut AgentRun, _now: i64) {
    run.status = "expired".into();
    run.error = Some((
        "run_expired".into(),
        "the run passed its deadline (expiresAt)".into(),
    ));
    push_event(run, "agent_run.failed", run.expires_ms, None);
}

/// Pauses an unfinished run (`model_error` or `system_error`): nothing advances until [`resume`]. The spec lists
/// no event for a pause; reads show `status: paused` and `paused: {reason}`.
///
/// # Errors
/// The run is already finished or paused (its status).
pub fn pause(run: &mut AgentRun, reason: &str, now: i64) -> Result<(), String> {
    if is_terminal(&run.status) || run.status == "paused" {
        return Err(run.status.clone());
    }
    run.paused = Some(crate::state::Paused {
        reason: reason.into(),
        since_ms: now,
        resume_to: run.status.clone(),
    });
    run.status = "paused".into();
    Ok(())
}

/// Resumes a paused run where it stopped: agent work in progress is due later by the time spent paused.
///
/// # Errors
/// The run is not paused (its status).
pub fn resume(run: &mut AgentRun, now: i64) -> Result<(), String> {
    let Some(p) = run.paused.take().filter(|_| run.status == "paused") else {
        return Err(run.status.clone());
    };
    let gap = (now - p.since_ms).max(0);
    for t in run.tasks.iter_mut().filter(|t| t.status == "in_progress") {
        if let Some(d) = t.due_ms.as_mut() {
            *d += gap;
        }
    }
    run.status = p.resume_to;
    Ok(())
}

/// Cancels an unfinished run (paused ones too): status `cancelled`, `error.code` `run_cancelled`, one
/// `agent_run.failed` (spec, Agent-run payloads).
///
/// # Errors
/// The run is already finished (its status).
pub fn cancel(run: &mut AgentRun, now: i64) -> Result<(), String> {
    if is_terminal(&run.status) {
        return Err(run.status.clone());
    }
    run.paused = None;
    run.status = "cancelled".into();
    run.error = Some(("run_cancelled".into(), "the run was cancelled".into()));
    push_event(run, "agent_run.failed", now, None);
    Ok(())
}

/// Outstanding `(approvals, human tasks)`.
pub fn outstanding(run: &AgentRun) -> (usize, usize) {
    (
        run.approvals
            .iter()
            .filter(|a| a.status == "pending")
            .count(),
        run.tasks
            .iter()
            .filter(|t| t.executor == "human" && t.status == "ready")
            .count(),
    )
}

fn put(v: &mut Value, k: &str, x: Value) {
    if let Some(o) = v.as_object_mut() {
        o.insert(k.into(), x);
    }
}

/// `{object, id, status, metadata?}`: how every agent-run event payload begins.
fn event_data(run: &AgentRun) -> Value {
    let mut v = json!({"object": "agent_run", "id": run.id, "status": run.status});
    if let Some(m) = &run.metadata {
        put(&mut v, "metadata", m.clone());
    }
    v
}

fn queue(run: &mut AgentRun, kind: &str, at: i64, data: Value) {
    run.pending_events.push(PendingEvent {
        event_id: new_id("evt_"),
        kind: kind.into(),
        processing_id: run.id.clone(),
        occurred_ms: at,
        data,
        attempts: 0,
    });
}

fn push_event(run: &mut AgentRun, kind: &str, at: i64, output: Option<Value>) {
    let mut data = event_data(run);
    match kind {
        "agent_run.waiting" => put(&mut data, "waiting", waiting_json(run)),
        "agent_run.completed" => {
            put(&mut data, "progress", progress_json(run));
            if let Some(r) = &run.result {
                put(&mut data, "result", r.clone().into());
            }
            if let Some(o) = output {
                put(&mut data, "output", o);
            }
            if run.incomplete {
                put(&mut data, "incomplete", true.into());
            }
        }
        "agent_run.failed" => {
            if let Some((c, m)) = &run.error {
                put(&mut data, "error", json!({"code": c, "message": m}));
            }
        }
        _ => {}
    }
    queue(run, kind, at, data);
}

/// `{approvals, tasks, summary}`.
pub fn waiting_json(run: &AgentRun) -> Value {
    let (a, t) = outstanding(run);
    let mut parts = Vec::new();
    for ap in run.approvals.iter().filter(|a| a.status == "pending") {
        parts.push(format!("approve {} ({})", ap.action, ap.kind));
    }
    for tk in run
        .tasks
        .iter()
        .filter(|t| t.executor == "human" && t.status == "ready")
    {
        parts.push(format!("complete \"{}\"", tk.title));
    }
    json!({"approvals": a, "tasks": t, "summary": format!("Waiting on a person: {}.", parts.join("; "))})
}

/// `{tasks: {total, completed}}`.
pub fn progress_json(run: &AgentRun) -> Value {
    json!({"tasks": {"total": run.tasks.len(), "completed": run.tasks.iter().filter(|t| t.status == "completed").count()}})
}

/// `{files: [...]}` with signed URLs.
pub fn output_json(run: &AgentRun, ctx: &Ctx<'_>, st: &State) -> Value {
    json!({"files": run.output_files.iter().map(|f| (ctx.file_entry)(st, f)).collect::<Vec<_>>()})
}
