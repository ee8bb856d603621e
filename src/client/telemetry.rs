//! What an observed method did, as plain data for the host's tracing and metrics (OpenTelemetry spans, events and
//! metric points): each HTTP request of its calls with the decision taken on its answer, and each pause of a wait.
//!
//! Nothing is recorded unless the host asks ([`super::Flow::observe`], [`super::Call::observe`]), and nothing is
//! allocated either way: a step leaves at most one [`Attempt`] (the answer or failure it was told of) and one
//! [`Pause`] (the one it decided), which the host takes after each step. A record holds no key, no body, no URL and
//! no header: statuses, codes, counts and pauses.
//!
//! ```text
//! flow.observe();                          // once, before or after the first step
//! loop {
//!     ... flow.on_response(..) / flow.next(..) ...      // one step
//!     if let Some(a) = flow.take_attempt() { .. }       // the request's span ends with it
//!     if let Some(p) = flow.take_pause() { .. }         // an event of the method's span
//! }
//! ```

use super::request::Method;

/// The client's methods, in the order of their numbers: a method hands its number to the driver, whose host names
/// the method's span after it (`agentRuns.create`, `runs.waitFor`, `extract` for a method of the client itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)] // each is the JS method of the same name (`OPERATIONS`)
pub enum Operation {
    AgentsList,
    AgentsRetrieve,
    AgentRunsCreate,
    AgentRunsRetrieve,
    AgentRunsApprove,
    AgentRunsReject,
    AgentRunsCompleteTask,
    AgentRunsWaitFor,
    ConfigsCreate,
    ActionsCatalog,
    ActionsCreate,
    RunsList,
    RunsRetrieve,
    RunsCancel,
    RunsDelete,
    RunsKeep,
    RunsOutputUrl,
    RunsDownloadOutput,
    RunsWaitFor,
    FilesCreate,
    FilesUpload,
    FilesRetrieve,
    FilesWaitUntilReady,
    WebhooksCreate,
    WebhooksList,
    WebhooksRetrieve,
    WebhooksUpdate,
    WebhooksDelete,
    WebhooksDeliveries,
    WebhooksJwks,
    RealtimeCreateSession,
    Extract,
    ExtractBatch,
    Parse,
    Redact,
    Fill,
    Sign,
    Pipeline,
}

/// The JS name of each [`Operation`], by number (the driver's host holds the same table).
pub const OPERATIONS: [&str; 38] = [
    "agents.list",
    "agents.retrieve",
    "agentRuns.create",
    "agentRuns.retrieve",
    "agentRuns.approve",
    "agentRuns.reject",
    "agentRuns.completeTask",
    "agentRuns.waitFor",
    "configs.create",
    "actions.catalog",
    "actions.create",
    "runs.list",
    "runs.retrieve",
    "runs.cancel",
    "runs.delete",
    "runs.keep",
    "runs.outputUrl",
    "runs.downloadOutput",
    "runs.waitFor",
    "files.create",
    "files.upload",
    "files.retrieve",
    "files.waitUntilReady",
    "webhooks.create",
    "webhooks.list",
    "webhooks.retrieve",
    "webhooks.update",
    "webhooks.delete",
    "webhooks.deliveries",
    "webhooks.jwks",
    "realtime.createSession",
    "extract",
    "extractBatch",
    "parse",
    "redact",
    "fill",
    "sign",
    "pipeline",
];

impl Operation {
    /// The JS name (`agentRuns.create`).
    pub fn name(self) -> &'static str {
        OPERATIONS.get(self as usize).copied().unwrap_or("")
    }
}

/// Why a request of a call was sent again: what happened to the one before it (in this order in the host's table of
/// reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resend {
    /// It was answered with this retryable status (429, 5xx, 408, ...).
    Status(u16),
    /// It timed out (it may have reached the service).
    Timeout,
    /// Its connection failed after it may have gone out: its answer was lost.
    AnswerLost,
    /// Its connection failed before it was sent.
    NotSent,
    /// It was answered with a redirect to the same origin, which this request follows (the same attempt).
    Redirect,
}

impl Resend {
    /// The kind of reason: `status` (its number is the status), `timeout`, `answer_lost`, `not_sent`, `redirect`.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Status(_) => "status",
            Self::Timeout => "timeout",
            Self::AnswerLost => "answer_lost",
            Self::NotSent => "not_sent",
            Self::Redirect => "redirect",
        }
    }

    /// One number for the reason: the status of a [`Resend::Status`] (100 and above), else the place of its kind
    /// among `timeout`, `answer_lost`, `not_sent`, `redirect`, from 1.
    pub fn code(self) -> u16 {
        match self {
            Self::Status(status) => status,
            Self::Timeout => 1,
            Self::AnswerLost => 2,
            Self::NotSent => 3,
            Self::Redirect => 4,
        }
    }
}

/// Why a method waited (in this order in the host's table of reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseReason {
    /// Before a retry, as the answer's `Retry-After` asked.
    RetryAfter,
    /// Before a retry, the client's own backoff.
    Backoff,
    /// Between two polls of a wait.
    Poll,
    /// Before asking again for an output that is not ready yet (`downloadOutput`).
    OutputNotReady,
}

impl PauseReason {
    /// `retry_after`, `backoff`, `poll` or `output_not_ready`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RetryAfter => "retry_after",
            Self::Backoff => "backoff",
            Self::Poll => "poll",
            Self::OutputNotReady => "output_not_ready",
        }
    }
}

/// A pause taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Milliseconds (0: the next request goes at once).
    pub ms: u64,
    /// Why.
    pub reason: PauseReason,
}

/// A request that got no HTTP answer (in this order in the host's table of failures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It timed out.
    Timeout,
    /// Its connection failed (before or after it was sent).
    Connection,
    /// The caller aborted it.
    Aborted,
    /// Its answer's body was longer than the client reads.
    TooLarge,
}

impl Failure {
    /// The error's `code`: `timeout`, `connection_error`, `aborted`, `response_too_large`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connection => "connection_error",
            Self::Aborted => "aborted",
            Self::TooLarge => "response_too_large",
        }
    }
}

/// One HTTP request of a call and the decision taken on its outcome. Its URL (whose host and port the host reports,
/// never its query) is the one of the request the host sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// Which call of the method, from 1: a wait's poll, an upload's step (1 for a method of one call).
    pub call: u32,
    /// The attempt number within its call, from 1 (a followed redirect keeps the number of its attempt).
    pub number: u32,
    /// Requests of this call sent before this one (retries and followed redirects).
    pub resends: u32,
    /// Why this request was sent again; `None` for the first.
    pub resend: Option<Resend>,
    /// The request's method.
    pub method: Method,
    /// Whether the request carried an `idempotency-key` (its value is never recorded).
    pub idempotency_key: bool,
    /// The answer's status; `None` when there was no answer.
    pub status: Option<u16>,
    /// The failure below HTTP, when there was no answer.
    pub failure: Option<Failure>,
    /// The call's decision on this outcome when it sends again: the pause before the next attempt. `None`: the call
    /// ended, or follows a redirect.
    pub retry: Option<Pause>,
}
