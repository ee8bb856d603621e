//! Poll planners for `agentRuns.waitFor`, `runs.waitFor` and `files.waitUntilReady`.
//!
//! A planner yields the next request (run it through a [`super::Call`], which handles retries)
//! and reads each answer's `status`:
//!
//! - Runs are long-polled with `wait=120`: the service holds the request until the run finishes,
//!   blocks on a person, or 120 s pass, so a run of T seconds costs about T/120 + 1 requests.
//! - Decision where the spec is silent: a status the service does not hold for (`waiting`,
//!   `paused` or `needs_input` when the caller waits for the end, or a status this version does
//!   not know) would make the next poll return at once; the planner then sleeps 5 s, 10 s, 20 s,
//!   40 s, then every 60 s, so a run waiting days on a person costs at most one request a minute.
//! - Files have no `wait`: polled after 1 s, 2 s, 4 s, then every 5 s, until `ready` (or a status
//!   named `failed`/`error`, handed back for the caller to report).
//! - A floor between polls: an answer that comes back sooner than the floor with the same status as the previous
//!   one, a status the service holds for (a proxy with a short timeout, a server that ignores `wait`), is followed
//!   by a pause that fills the floor: 1 s, then 2 s, 4 s, 5 s for consecutive early answers; an answer held at least
//!   the floor, or a changed status (the service's own reason to answer early), polls again at once. A
//!   `Retry-After` on a poll's answer is honoured (the longer of the two). An honest server pays no pause, so a
//!   T-second run still costs about T/120 + 2 requests.
//! - An overall deadline (`deadlineMs`): the wait fails with `wait_deadline` ([`ErrorKind::Timeout`]) as soon as the
//!   next poll could not end within it, and the last poll's `wait` shrinks to fit what is left.

use super::error::{ApiError, ErrorKind};
use super::request::{segment, Method, RequestSpec};
use super::validate::MAX_WAIT_SECONDS;
use serde_json::Value;

/// When a wait ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Until {
    /// A terminal status (completed/processed, failed, cancelled, expired).
    #[default]
    Finished,
    /// Terminal, or blocked on a person (`waiting` agent run, `needs_input` sign run).
    Settled,
}

impl Until {
    /// Parses `finished` or `settled`.
    ///
    /// # Errors
    /// `invalid_request` at `until` for any other value.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        match text {
            "finished" => Ok(Self::Finished),
            "settled" => Ok(Self::Settled),
            _ => Err(ApiError::validation(
                "invalid_request",
                "until",
                "must be \"finished\" or \"settled\"",
            )),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    AgentRun,
    Run,
    File,
}

/// The next step of a wait.
#[derive(Clone, Debug, PartialEq)]
pub enum PollStep {
    /// Run this request (through a `Call`) and hand its body to [`PollPlanner::on_body`].
    Request(RequestSpec),
    /// Wait, then ask again.
    Sleep {
        /// Milliseconds.
        ms: u64,
    },
    /// The wait is over: the last resource read, or an error for an answer without `status`.
    Done(Result<Value, ApiError>),
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    NeedRequest,
    Awaiting,
    Sleeping(u64),
    Finished(Option<Result<Value, ApiError>>),
}

/// Plans the requests of one wait. `Debug` omits the last body read.
#[derive(Clone, PartialEq)]
pub struct PollPlanner {
    target: Target,
    until: Until,
    spec: RequestSpec,
    state: State,
    requests: u32,
    idle_polls: u32,
    early_polls: u32,
    last_status: Option<String>,
    deadline_ms: Option<u64>,
    /// A notice for the caller's log, taken by [`PollPlanner::take_notice`].
    notice: Option<String>,
    /// Whether the notice of a wait blocked on a person was given (once per wait).
    noticed_person: bool,
}

/// What the driver measured around one poll, for [`PollPlanner::on_answer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollTiming {
    /// How long the poll's call took (its retries included).
    pub held_ms: u64,
    /// Time since the wait started, this poll included.
    pub elapsed_ms: u64,
    /// The `Retry-After` of the answer, when it had one.
    pub retry_after_ms: Option<u64>,
}

impl std::fmt::Debug for PollPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollPlanner")
            .field("target", &self.target)
            .field("until", &self.until)
            .field("spec", &self.spec.label())
            .field("requests", &self.requests)
            .field("idle_polls", &self.idle_polls)
            .finish()
    }
}

/// Floor between the starts of two polls when the server answers early: first, then doubled up to max.
pub const POLL_FLOOR_FIRST_MS: u64 = 1_000;
/// Largest floor.
pub const POLL_FLOOR_MAX_MS: u64 = 5_000;

/// Reads a `deadlineMs` option: a whole number of milliseconds from 1 to 2^53 - 1.
///
/// # Errors
/// `invalid_request` at `deadlineMs` for anything else.
pub fn deadline_ms(value: f64) -> Result<u64, ApiError> {
    crate::options::whole_number(value, 1.0, crate::options::MAX_SAFE_INTEGER).ok_or_else(|| {
        ApiError::validation(
            "invalid_request",
            "deadlineMs",
            "must be a whole number of milliseconds, at least 1",
        )
    })
}

/// Idle delays (statuses the service does not hold for).
const IDLE_FIRST_MS: u64 = 5_000;
const IDLE_MAX_MS: u64 = 60_000;
/// File polling delays.
const FILE_FIRST_MS: u64 = 1_000;
const FILE_MAX_MS: u64 = 5_000;

impl PollPlanner {
    /// Waits on an agent run.
    ///
    /// # Errors
    /// `invalid_request` for an empty id.
    pub fn agent_run(id: &str, until: Until) -> Result<Self, ApiError> {
        let spec = RequestSpec::api(
            Method::Get,
            format!("/v1/agent-runs/{}", segment("id", id)?),
        )
        .with_wait(Some(MAX_WAIT_SECONDS));
        Ok(Self::new(Target::AgentRun, until, spec))
    }

    /// Waits on a capability run.
    ///
    /// # Errors
    /// `invalid_request` for an empty id.
    pub fn run(id: &str, until: Until) -> Result<Self, ApiError> {
        let spec = RequestSpec::api(Method::Get, format!("/v1/runs/{}", segment("id", id)?))
            .with_wait(Some(MAX_WAIT_SECONDS));
        Ok(Self::new(Target::Run, until, spec))
    }

    /// Waits until a registered file is `ready`.
    ///
    /// # Errors
    /// `invalid_request` for an empty id.
    #[inline(never)]
    pub fn file(id: &str) -> Result<Self, ApiError> {
        let spec = RequestSpec::api(Method::Get, format!("/v1/files/{}", segment("id", id)?));
        Ok(Self::new(Target::File, Until::Finished, spec))
    }

    fn new(target: Target, until: Until, spec: RequestSpec) -> Self {
        Self {
            target,
            until,
            spec,
            state: State::NeedRequest,
            requests: 0,
            idle_polls: 0,
            early_polls: 0,
            last_status: None,
            deadline_ms: None,
            notice: None,
            noticed_person: false,
        }
    }

    /// Sets the overall deadline of the wait, in milliseconds from its start.
    pub fn with_deadline(mut self, deadline_ms: Option<u64>) -> Self {
        self.deadline_ms = deadline_ms;
        self
    }

    /// Requests planned so far.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// The next step.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self) -> PollStep {
        match std::mem::replace(&mut self.state, State::Finished(None)) {
            State::NeedRequest => {
                self.requests = self.requests.saturating_add(1);
                self.state = State::Awaiting;
                PollStep::Request(self.spec.clone())
            }
            State::Sleeping(ms) => {
                self.state = State::NeedRequest;
                PollStep::Sleep { ms }
            }
            State::Awaiting => PollStep::Done(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "next() called while an answer was still awaited",
            ))),
            State::Finished(Some(result)) => PollStep::Done(result),
            State::Finished(None) => PollStep::Done(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "the wait is already done",
            ))),
        }
    }

    /// Hands over the body of an answer that was held as the service promises (no floor needed, no deadline
    /// elapsed): [`PollPlanner::on_answer`] with the timing of an honest long poll.
    pub fn on_body(&mut self, body: &Value) {
        self.on_answer(
            body,
            PollTiming {
                held_ms: u64::MAX,
                elapsed_ms: 0,
                retry_after_ms: None,
            },
        );
    }

    /// Hands over the body of the last request's successful answer and how long it took.
    pub fn on_answer(&mut self, body: &Value, timing: PollTiming) {
        if self.state != State::Awaiting {
            return;
        }
        let Some(status) = body.get("status").and_then(Value::as_str) else {
            self.state = State::Finished(Some(Err(ApiError::new(
                ErrorKind::InvalidResponse,
                "unexpected_shape",
                "the polled resource has no status",
            ))));
            return;
        };
        let delay = match self.classify(status) {
            Verdict::Stop => {
                self.state = State::Finished(Some(Ok(body.clone())));
                return;
            }
            Verdict::PollNow => {
                self.idle_polls = 0;
                let floor = POLL_FLOOR_FIRST_MS
                    .saturating_mul(1u64 << self.early_polls.min(16))
                    .min(POLL_FLOOR_MAX_MS);
                // A status change is the service's own reason to answer a long poll early: poll again at once.
                let changed = self.last_status.as_deref() != Some(status);
                if changed {
                    self.last_status = Some(status.to_owned());
                    self.early_polls = 0;
                    0
                } else if timing.held_ms < floor {
                    self.early_polls = self.early_polls.saturating_add(1);
                    floor - timing.held_ms
                } else {
                    self.early_polls = 0;
                    0
                }
            }
            Verdict::PollLater => {
                self.notice_person(status);
                let (first, max) = match self.target {
                    Target::File => (FILE_FIRST_MS, FILE_MAX_MS),
                    _ => (IDLE_FIRST_MS, IDLE_MAX_MS),
                };
                let delay = first
                    .saturating_mul(1u64 << self.idle_polls.min(16))
                    .min(max);
                self.idle_polls = self.idle_polls.saturating_add(1);
                delay
            }
        };
        let delay = delay.max(timing.retry_after_ms.unwrap_or(0));
        if let Some(deadline) = self.deadline_ms {
            let next_at = timing.elapsed_ms.saturating_add(delay);
            if next_at >= deadline {
                let mut err = ApiError::new(
                    ErrorKind::Timeout,
                    "wait_deadline",
                    format!("still {status} when the wait's deadline ({deadline} ms) came"),
                );
                err.retryable = false;
                self.state = State::Finished(Some(Err(err)));
                return;
            }
            if self.spec.wait.is_some() {
                // The next long poll ends before the deadline (an honest server answers by then).
                let left_s = (deadline - next_at) / 1000;
                let fit = u32::try_from(left_s).unwrap_or(MAX_WAIT_SECONDS);
                self.spec.wait = Some(fit.min(MAX_WAIT_SECONDS));
            }
        }
        self.state = if delay == 0 {
            State::NeedRequest
        } else {
            State::Sleeping(delay)
        };
    }

    /// A wait for the end of a run that stopped on a person (an agent run `waiting`, a sign run `needs_input`) may
    /// last days, and without a deadline nothing else says so: the first time, a notice for the caller's log.
    fn notice_person(&mut self, status: &str) {
        let blocked = matches!(
            (self.target, status),
            (Target::AgentRun, "waiting") | (Target::Run, "needs_input")
        );
        if !blocked
            || self.noticed_person
            || self.until != Until::Finished
            || self.deadline_ms.is_some()
        {
            return;
        }
        self.noticed_person = true;
        let what = match self.target {
            Target::AgentRun => "is waiting on a person (an approval or a human task)",
            _ => "needs input (a signature envelope is open)",
        };
        self.notice = Some(format!(
            "{} {what}: waitFor keeps waiting until it finishes, which can take days; pass until: \"settled\" to \
             return now, or deadlineMs to bound the wait",
            self.spec.label()
        ));
    }

    /// The notice of the last answer, for the log at `warn` (at most one per wait).
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    fn classify(&self, status: &str) -> Verdict {
        let settled = self.until == Until::Settled;
        match (self.target, status) {
            (Target::AgentRun, "completed" | "failed" | "cancelled" | "expired") => Verdict::Stop,
            (Target::AgentRun, "waiting") if settled => Verdict::Stop,
            (Target::AgentRun, "queued" | "processing") => Verdict::PollNow,
            (Target::Run, "processed" | "failed" | "cancelled" | "expired") => Verdict::Stop,
            (Target::Run, "needs_input") if settled => Verdict::Stop,
            (Target::Run, "queued" | "processing") => Verdict::PollNow,
            (Target::File, "ready" | "failed" | "error") => Verdict::Stop,
            _ => Verdict::PollLater,
        }
    }
}

enum Verdict {
    Stop,
    PollNow,
    PollLater,
}
