//! The one step protocol of every client method: a [`Flow`] is a sans-IO state machine over one or more
//! [`Call`]s (with their retries) and the planners that chain them (waits, uploads, output downloads, pages).
//!
//! ```text
//! let mut flow = Flow::single(&config, spec, &options, Goal::Data, random_bytes)?;
//! loop {
//!     match flow.next(now_ms()) {
//!         Step::Send { request, read } => match fetch(request, read) {   // host's I/O; `read` says what to do
//!             Ok(r) => flow.on_response(r.status, &r.headers, r.body, env()),   // with a 2xx body
//!             Err(e) => flow.on_transport_error(e, env()),
//!         },
//!         Step::Sleep { ms } => if !sleep(ms) { flow.abort() },   // host's timer; `false` when the caller aborted
//!         Step::Done(result) => return result,
//!     }
//! }
//! ```
//! Abort, per-attempt timeout and wait deadline have one meaning for every flow: [`Flow::abort`] (the caller's
//! signal, before a send or during a sleep) ends the flow with `aborted`; an attempt the host reports as
//! [`TransportError::Aborted`] does the same; a timed-out attempt is the call's retry decision; a wait's
//! `deadlineMs` is the poll planner's.

use serde_json::Value;

use super::call::{Action, ApiResponse, Call, CallOptions, Env, LogRecord, TransportError};
use super::error::{ApiError, ErrorKind};
use super::output::{OutputPlanner, OutputStep};
use super::pagination::Page;
use super::polling::{PollPlanner, PollStep, PollTiming};
use super::request::{HttpRequest, RequestSpec, Target};
use super::telemetry::{Attempt, Pause, PauseReason};
use super::{files, realtime, retry, runs, ClientConfig, LogLevel};

/// What the host does with the body of a 2xx answer of a [`Step::Send`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Read it as text and report it ([`Body::Text`]): the core needs it (registrations, output routes).
    Text,
    /// Read its bytes and keep them (a download); report an empty text.
    Bytes,
    /// Parse it as JSON on the host and keep the value; report [`Body::Parsed`] (the data never enters the core) when
    /// it is a JSON object. A body that does not parse, or parses to anything but an object, is reported as text (the
    /// core answers `non_json_body` or `unexpected_shape`).
    Json,
    /// As [`Read::Json`], and a 2xx whose body parses to an object ends the flow on the host without being reported: the core has
    /// nothing more to read or log ([`Call::json_success_is_final`]). The host then reads the request id and the
    /// replay flag of the answer with [`super::call::AnswerMeta::read`].
    FinalJson,
    /// A list page: as [`Read::Text`], except that the core reads only the page's own members (`object`,
    /// `has_more`, `cursor`) and whether `data` is an array, never the items. A host that parses the body itself
    /// (to hand its caller the items) may therefore report the page with its items left out: when the body is a JSON
    /// object whose `data` is an array, the text of that object with `data` set to `[]` (any other body as it came).
    /// The items then never enter the core, whatever the page's size, and the [`FlowValue::Page`] has none.
    Page,
}

/// An answer's body as reported to [`Flow::on_response`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// The body text (empty when there is none, or when it was read as bytes).
    Text(&'a str),
    /// The host parsed it into a JSON object ([`Read::Json`]); `status` is its top-level `status` string, which a
    /// wait reads. A body that parses to anything else (`null`, an array) is reported as its text: the core refuses it.
    Parsed {
        /// The parsed body's `status`, when it is a string.
        status: Option<&'a str>,
    },
    /// An error answer's text (status 400 or above) and the host's `JSON.parse` reading of it written back plainly,
    /// for the core to read when its own reader refuses the text ([`Call::on_error_response`]).
    ErrorText {
        /// The body text.
        text: &'a str,
        /// `JSON.stringify` of the host's reading, strings made well-formed, nesting past 8 levels `null`.
        host_read: &'a str,
    },
    /// Not read: the answer's status is 400 or above and its body is longer than
    /// [`HttpRequest::max_error_body_bytes`].
    Unread,
}

/// What a flow's result is, besides the last answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// The last answer's JSON body (parsed by the host when it read it with [`Read::Json`]).
    Data,
    /// Nothing (`204` routes).
    Void,
    /// The last answer's `Location` (a redirect route).
    Location,
    /// A live session (`realtime.createSession`): the answer is read by the core ([`Read::Text`]), which takes its
    /// address from `url` or `wsUrl` ([`realtime::session_url`]) and refuses an answer without one
    /// (`unexpected_shape`), as an upload's registration without `uploadUrl` is refused.
    RealtimeSession,
}

/// The value a finished flow hands back, besides the last answer (which the host holds).
#[derive(Clone, Debug, PartialEq)]
pub enum FlowValue {
    /// The last answer's JSON body, as the host parsed it (or [`ApiResponse::body`] when it was read as text).
    Data,
    /// Nothing.
    Void,
    /// The signed URL of a redirect route.
    Location(Option<String>),
    /// A live session ([`Goal::RealtimeSession`]): the data is the last answer's JSON body as the core read it
    /// ([`ApiResponse::body`]), where `url` is set to this address; every other field is as the service sent it
    /// (`wsUrl` included). The address is a secret: never logged.
    RealtimeSession {
        /// The session's `ws://` / `wss://` address, with its ticket.
        url: String,
    },
    /// The bytes the host read (a download).
    Bytes,
    /// One page of a cursor list.
    Page {
        /// The page's items (none when the host left them out of what it reported: [`Read::Page`]).
        items: Vec<Value>,
        /// Whether the service says another page exists (`has_more`, or `hasMore`).
        has_more: bool,
        /// The page's own `cursor`.
        cursor: Option<String>,
        /// The cursor to ask for next; `None` at the end (also when a faulty page repeats its cursor).
        next_cursor: Option<String>,
    },
}

/// A finished flow: the last answer as the core read it and the value to hand back.
#[derive(Debug, PartialEq)]
pub struct Finished {
    /// The last answer.
    pub response: ApiResponse,
    /// What the flow produced.
    pub value: FlowValue,
}

/// What the host must do next.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// Perform this request (attaching the caller's bytes when [`HttpRequest::raw_body`]), read a 2xx body as `read`
    /// says, and report with [`Flow::on_response`] or [`Flow::on_transport_error`].
    Send {
        /// The request.
        request: HttpRequest,
        /// What to do with a 2xx body.
        read: Read,
    },
    /// Wait, then call [`Flow::next`] again (or [`Flow::abort`] when the caller aborted meanwhile).
    Sleep {
        /// Milliseconds.
        ms: u64,
    },
    /// The flow is over.
    Done(Result<Finished, ApiError>),
}

/// Where a flow is.
#[derive(Debug)]
enum Stage {
    /// One call; its success ends the flow with the goal's value.
    Single(Goal),
    /// A wait; `sent_at` is when its current poll started, `last` the last poll's answer.
    Poll {
        planner: Box<PollPlanner>,
        sent_at: u64,
        last: Option<Box<ApiResponse>>,
    },
    /// Upload step 1 (registration), then the PUT of the bytes, then the wait until ready.
    Register { mime: String },
    /// Upload step 2.
    Put { id: String },
    /// `downloadOutput` step 1: the output route until it has a `Location`.
    Output(OutputPlanner),
    /// `downloadOutput` step 2: the bytes of the signed URL.
    Download,
    /// One page of a list requested with `cursor`.
    Page { cursor: Option<String> },
    /// Over; the result is taken by the next [`Flow::next`].
    Over(Option<Result<Finished, ApiError>>),
}

/// One client method's requests. `Debug` never shows the key.
#[derive(Debug)]
pub struct Flow {
    /// What later calls of a chained flow are made with; `None` for a flow of one call (nothing to clone).
    chain: Option<Box<(ClientConfig, CallOptions)>>,
    stage: Stage,
    call: Option<Call>,
    /// The `status` of the last answer's parsed body ([`Body::Parsed`]).
    parsed_status: Option<String>,
    /// Whether the host parsed the last answer's body into an object and keeps it ([`Body::Parsed`]).
    parsed: bool,
    /// The clock at the first step (a wait's deadline counts from there).
    started_at: Option<u64>,
    /// Whether the flow has (or will have) a wait, whose pauses and deadline read the clock.
    clocked: bool,
    aborted: bool,
    logs: Vec<LogRecord>,
    /// Calls started so far (a wait's polls, an upload's steps).
    calls: u32,
    /// Whether the host observes this flow ([`Flow::observe`]).
    observe: bool,
    /// The record of the last request of a call that ended, and of the last pause between calls, until taken.
    attempt: Option<Attempt>,
    pause: Option<Pause>,
}

/// `unexpected_shape` for a 2xx answer whose body is not the JSON object the route answers.
fn not_an_object(response: &ApiResponse) -> ApiError {
    let what = match &response.body {
        Value::Null => "null or no body",
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Object(_) => "an object",
    };
    let mut err = ApiError::new(
        ErrorKind::InvalidResponse,
        "unexpected_shape",
        format!(
            "HTTP {} answered with {what}, not the JSON object the route answers",
            response.status
        ),
    );
    err.status = Some(response.status);
    err.request_id = response.request_id.clone();
    err
}

fn aborted_error() -> ApiError {
    ApiError::new(ErrorKind::UserAbort, "aborted", "the call was aborted")
}

impl Flow {
    /// A log line of the flow itself (not of one call) at `warn`, kept when the configured level lets it through.
    fn warn(&mut self, message: String) {
        let shown = self
            .chain
            .as_ref()
            .is_some_and(|chain| LogLevel::Warn <= chain.0.log_level);
        if shown {
            self.logs.push(LogRecord {
                level: LogLevel::Warn,
                message,
            });
        }
    }

    fn with(
        config: &ClientConfig,
        options: &CallOptions,
        stage: Stage,
        call: Option<Call>,
    ) -> Self {
        Self {
            chain: (!matches!(stage, Stage::Single(_) | Stage::Page { .. }))
                .then(|| Box::new((config.clone(), options.clone()))),
            clocked: matches!(stage, Stage::Poll { .. } | Stage::Register { .. }),
            stage,
            parsed_status: None,
            parsed: false,
            started_at: None,
            aborted: false,
            logs: Vec::new(),
            calls: u32::from(call.is_some()),
            observe: false,
            attempt: None,
            pause: None,
            call,
        }
    }

    /// One call with its retries (most methods). `random_bytes` seed a POST's idempotency key.
    ///
    /// # Errors
    /// The call's refusal of the options ([`Call::new`]).
    pub fn single(
        config: &ClientConfig,
        spec: RequestSpec,
        options: &CallOptions,
        goal: Goal,
        random_bytes: [u8; 16],
    ) -> Result<Self, ApiError> {
        let call = Call::new(config, spec, options, random_bytes)?;
        Ok(Self::with(config, options, Stage::Single(goal), Some(call)))
    }

    /// A wait (`waitFor`, `waitUntilReady`): the planner's polls, each a call with its retries.
    pub fn poll(config: &ClientConfig, planner: PollPlanner, options: &CallOptions) -> Self {
        Self::with(
            config,
            options,
            Stage::Poll {
                planner: Box::new(planner),
                sent_at: 0,
                last: None,
            },
            None,
        )
    }

    /// `files.upload`: register `{name, mimeType}`, PUT the caller's bytes to the answer's `uploadUrl`, wait until
    /// the file is ready.
    ///
    /// # Errors
    /// `invalid_request` for a blank name or a bad mime type; the call's refusal of the options.
    pub fn upload(
        config: &ClientConfig,
        name: &str,
        mime_type: &str,
        options: &CallOptions,
        random_bytes: [u8; 16],
    ) -> Result<Self, ApiError> {
        let spec = files::register_upload(name, mime_type)?;
        let call = Call::new(config, spec, options, random_bytes)?;
        let stage = Stage::Register {
            mime: mime_type.to_owned(),
        };
        Ok(Self::with(config, options, stage, Some(call)))
    }

    /// `runs.downloadOutput`: wait out `output_not_ready`, then read the signed URL's bytes.
    pub fn download(config: &ClientConfig, planner: OutputPlanner, options: &CallOptions) -> Self {
        Self::with(config, options, Stage::Output(planner), None)
    }

    /// One page of `GET /v1/runs` asked with `cursor`.
    ///
    /// # Errors
    /// The call's refusal of the options.
    pub fn page(
        config: &ClientConfig,
        spec: RequestSpec,
        cursor: Option<String>,
        options: &CallOptions,
    ) -> Result<Self, ApiError> {
        let call = Call::new(config, spec, options, [0; 16])?;
        Ok(Self::with(
            config,
            options,
            Stage::Page { cursor },
            Some(call),
        ))
    }

    /// Whether [`Flow::next`] reads the clock (a wait's timing); other flows may be given 0.
    pub fn uses_clock(&self) -> bool {
        self.clocked
    }

    /// Whether [`Body::Parsed`] should carry the parsed body's `status` (a wait reads it).
    pub fn reads_status(&self) -> bool {
        matches!(self.stage, Stage::Poll { .. })
    }

    /// Takes the log lines produced since the last call (filtered by the configured level).
    pub fn take_logs(&mut self) -> Vec<LogRecord> {
        if let Some(call) = &mut self.call {
            self.logs.append(&mut call.take_logs());
        }
        std::mem::take(&mut self.logs)
    }

    /// From now on, keeps the record of each request's outcome ([`Flow::take_attempt`]) and of each pause between
    /// calls ([`Flow::take_pause`]), a request already in flight included. An unobserved flow keeps none.
    pub fn observe(&mut self) {
        self.observe = true;
        if let Some(call) = &mut self.call {
            call.observe_as(self.calls);
        }
    }

    /// Takes the record of the request the last report was about ([`Flow::observe`]), once. Take it after each
    /// report and step: each leaves at most one, and a later one replaces it.
    pub fn take_attempt(&mut self) -> Option<Attempt> {
        self.attempt
            .take()
            .or_else(|| self.call.as_mut().and_then(Call::take_attempt))
    }

    /// Takes the record of the pause between two calls the last step decided ([`Flow::observe`]), once.
    pub fn take_pause(&mut self) -> Option<Pause> {
        self.pause.take()
    }

    /// A pause between two calls, kept when observed.
    fn pause(&mut self, ms: u64, reason: PauseReason) -> Step {
        if self.observe {
            self.pause = Some(Pause { ms, reason });
        }
        Step::Sleep { ms }
    }

    /// The caller aborted: the next [`Flow::next`] ends the flow with `aborted` (`APIUserAbortError`).
    pub fn abort(&mut self) {
        self.aborted = true;
        if let Some(call) = &mut self.call {
            call.abort();
        }
    }

    /// Reports the answer of the last [`Step::Send`].
    pub fn on_response(
        &mut self,
        status: u16,
        headers: &[(String, String)],
        body: Body<'_>,
        env: Env,
    ) {
        let Some(call) = &mut self.call else { return };
        if let Body::ErrorText { text, host_read } = body {
            self.parsed_status = None;
            self.parsed = false;
            call.on_error_response(status, headers, text, host_read, env);
            return;
        }
        let text = match body {
            Body::Text(text) => {
                self.parsed_status = None;
                self.parsed = false;
                Some(text)
            }
            Body::Parsed { status } => {
                self.parsed_status = status.map(str::to_owned);
                self.parsed = true;
                Some("")
            }
            Body::Unread | Body::ErrorText { .. } => {
                self.parsed_status = None;
                self.parsed = false;
                None
            }
        };
        match text {
            Some(text) => call.on_response(status, headers, text, env),
            None => call.on_unread_response(status, headers, env),
        }
    }

    /// Reports that the last [`Step::Send`] produced no HTTP answer.
    pub fn on_transport_error(&mut self, error: TransportError, env: Env) {
        if let Some(call) = &mut self.call {
            call.on_transport_error(error, env);
        }
    }

    /// The next thing to do. `now_ms` is the clock (epoch milliseconds) when [`Flow::uses_clock`], else anything.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self, now_ms: u64) -> Step {
        let started = *self.started_at.get_or_insert(now_ms);
        // Each pass either returns or moves the flow to a later stage; the bound only guards a faulty planner.
        for _ in 0..1_000 {
            if let Some(call) = &mut self.call {
                match call.next() {
                    Action::Send(request) => {
                        let read = self.read_mode();
                        return Step::Send { request, read };
                    }
                    Action::Sleep { ms } => return Step::Sleep { ms },
                    Action::Done(result) => {
                        self.logs.append(&mut call.take_logs());
                        if let Some(attempt) = call.take_attempt() {
                            self.attempt = Some(attempt);
                        }
                        self.call = None;
                        self.on_call_done(result, now_ms, started);
                    }
                }
                continue;
            }
            if self.aborted && !matches!(self.stage, Stage::Over(_)) {
                self.stage = Stage::Over(Some(Err(aborted_error())));
            }
            match &mut self.stage {
                Stage::Poll {
                    planner,
                    sent_at,
                    last,
                } => match planner.next() {
                    PollStep::Request(spec) => {
                        *sent_at = now_ms;
                        self.start(spec, [0; 16]);
                    }
                    PollStep::Sleep { ms } => return self.pause(ms, PauseReason::Poll),
                    // The data is the last answer's (the host holds it, parsed).
                    PollStep::Done(result) => {
                        let last = last.take();
                        self.stage = Stage::Over(Some(result.and_then(|_| {
                            last.map(|response| Finished {
                                response: *response,
                                value: FlowValue::Data,
                            })
                            .ok_or_else(|| {
                                ApiError::new(
                                    ErrorKind::InvalidResponse,
                                    "unexpected_shape",
                                    "no answer",
                                )
                            })
                        })));
                    }
                },
                Stage::Output(planner) => match planner.next() {
                    OutputStep::Request(spec) => self.start(spec, [0; 16]),
                    OutputStep::Sleep { ms } => return self.pause(ms, PauseReason::OutputNotReady),
                    OutputStep::Done(Ok(location)) => {
                        self.stage = Stage::Download;
                        self.start(runs::download(&location), [0; 16]);
                    }
                    OutputStep::Done(Err(e)) => self.stage = Stage::Over(Some(Err(e))),
                },
                Stage::Over(result) => {
                    return Step::Done(result.take().unwrap_or_else(|| {
                        Err(ApiError::new(
                            ErrorKind::Validation,
                            "invalid_call_state",
                            "the flow is already done",
                        ))
                    }))
                }
                // Stages that always hold a call: reaching here without one is a host's misuse.
                _ => {
                    self.stage = Stage::Over(Some(Err(ApiError::new(
                        ErrorKind::Validation,
                        "invalid_call_state",
                        "next() called out of order",
                    ))));
                }
            }
        }
        Step::Done(Err(ApiError::new(
            ErrorKind::Validation,
            "invalid_call_state",
            "the flow made no progress",
        )))
    }

    /// What the host does with a 2xx body of the current call.
    fn read_mode(&self) -> Read {
        match &self.stage {
            // The core reads the session's address from the answer.
            Stage::Single(Goal::RealtimeSession) => Read::Text,
            // An observed call reports every answer: each attempt has its record.
            Stage::Single(Goal::Data) => match &self.call {
                Some(call) if call.json_success_is_final() && !self.observe => Read::FinalJson,
                _ => Read::Json,
            },
            Stage::Poll { .. } => Read::Json,
            Stage::Download => Read::Bytes,
            Stage::Page { .. } => Read::Page,
            _ => Read::Text,
        }
    }

    /// Starts the next call of the flow; a refusal of the options ends it.
    fn start(&mut self, spec: RequestSpec, random_bytes: [u8; 16]) {
        let Some(chain) = &self.chain else {
            self.stage = Stage::Over(Some(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "a flow of one call cannot start another",
            ))));
            return;
        };
        if let Target::External(url) = &spec.target {
            // A signed upload or download URL is never plain http under an https API (loopback included).
            if super::url::downgrades(chain.0.base_origin(), url) {
                self.stage = Stage::Over(Some(Err(ApiError::new(
                    ErrorKind::InvalidResponse,
                    "insecure_url",
                    "the service named a plain http URL for the file's bytes while the API is https; not used, the \
                     bytes would travel unencrypted",
                ))));
                return;
            }
        }
        match Call::new(&chain.0, spec, &chain.1, random_bytes) {
            Ok(mut call) => {
                self.calls = self.calls.saturating_add(1);
                if self.observe {
                    call.observe_as(self.calls);
                }
                self.call = Some(call);
            }
            Err(e) => self.stage = Stage::Over(Some(Err(e))),
        }
    }

    fn on_call_done(&mut self, result: Result<ApiResponse, ApiError>, now_ms: u64, started: u64) {
        let stage = std::mem::replace(&mut self.stage, Stage::Over(None));
        // The data of a call and a wait's answers are JSON objects (every resource of the spec is one): a 2xx body of
        // `null`, an array, a string, a number or no body at all is refused, never resolved.
        let result = match (&stage, result) {
            (
                Stage::Single(Goal::Data | Goal::RealtimeSession) | Stage::Poll { .. },
                Ok(response),
            ) if !self.parsed && !response.body.is_object() => Err(not_an_object(&response)),
            (_, result) => result,
        };
        self.stage = match (stage, result) {
            (Stage::Single(Goal::RealtimeSession), Ok(mut response)) => {
                Stage::Over(Some(match realtime::session_url(&response.body) {
                    Ok(url) => {
                        if let Value::Object(body) = &mut response.body {
                            body.insert("url".to_owned(), Value::String(url.clone()));
                        }
                        Ok(Finished {
                            value: FlowValue::RealtimeSession { url },
                            response,
                        })
                    }
                    Err(mut e) => {
                        e.status = Some(response.status);
                        e.request_id = response.request_id;
                        Err(e)
                    }
                }))
            }
            (Stage::Single(goal), result) => Stage::Over(Some(result.map(|response| {
                let value = match goal {
                    Goal::Data | Goal::RealtimeSession => FlowValue::Data,
                    Goal::Void => FlowValue::Void,
                    Goal::Location => FlowValue::Location(response.location.clone()),
                };
                Finished { response, value }
            }))),
            (
                Stage::Poll {
                    mut planner,
                    sent_at,
                    ..
                },
                Ok(response),
            ) => {
                let timing = PollTiming {
                    held_ms: now_ms.saturating_sub(sent_at),
                    elapsed_ms: now_ms.saturating_sub(started),
                    retry_after_ms: retry::parse_retry_after(&response.headers, Some(now_ms)),
                };
                let body = match (&response.body, self.parsed_status.take()) {
                    (Value::Null, Some(status)) => {
                        let mut map = serde_json::Map::new();
                        map.insert("status".to_owned(), Value::String(status));
                        Value::Object(map)
                    }
                    (Value::Null, None) => Value::Null,
                    (body, _) => body.clone(),
                };
                planner.on_answer(&body, timing);
                if let Some(notice) = planner.take_notice() {
                    self.warn(notice);
                }
                Stage::Poll {
                    planner,
                    sent_at,
                    last: Some(Box::new(response)),
                }
            }
            (Stage::Register { mime }, Ok(response)) => {
                let id = response
                    .body
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                match files::upload_url(&response.body)
                    .and_then(|url| files::upload_put(&url, &mime))
                {
                    Ok(spec) => {
                        self.stage = Stage::Put { id };
                        self.start(spec, [0; 16]);
                        return;
                    }
                    Err(e) => Stage::Over(Some(Err(e))),
                }
            }
            (Stage::Put { id }, Ok(_)) => match files::wait_until_ready(&id) {
                Ok(planner) => Stage::Poll {
                    planner: Box::new(planner),
                    sent_at: now_ms,
                    last: None,
                },
                Err(e) => Stage::Over(Some(Err(e))),
            },
            (Stage::Output(mut planner), result) => {
                if self.aborted || matches!(&result, Err(e) if e.kind == ErrorKind::UserAbort) {
                    Stage::Over(Some(Err(aborted_error())))
                } else {
                    planner.on_result(result);
                    Stage::Output(planner)
                }
            }
            (Stage::Download, result) => Stage::Over(Some(result.map(|response| Finished {
                response,
                value: FlowValue::Bytes,
            }))),
            (Stage::Page { cursor }, Ok(response)) => {
                Stage::Over(Some(Page::from_value(&response.body).map(|page| {
                    let next_cursor = page.next_cursor(cursor.as_deref()).map(str::to_owned);
                    Finished {
                        value: FlowValue::Page {
                            items: page.data,
                            has_more: page.has_more,
                            cursor: page.cursor,
                            next_cursor,
                        },
                        response,
                    }
                })))
            }
            (_, Err(e)) => Stage::Over(Some(Err(e))),
            (Stage::Over(result), Ok(_)) => Stage::Over(result),
        };
    }
}
