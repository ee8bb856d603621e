//! The `runs.downloadOutput` planner: reads the output route's 302 until the produced file has
//! settled. A file registers a moment after `processed`; until then the route answers 409
//! `output_not_ready`, and right after a synchronous run it can answer 404 briefly.
//!
//! Decision where the spec is silent: after the inner call's own retries, the planner asks again
//! after 1 s, 2 s, 4 s, then every 5 s, at most 10 times in all (about 40 s); a 404 is tolerated
//! only on the first 3 reads, later it is the answer.

use super::call::ApiResponse;
use super::error::{ApiError, ErrorKind};
use super::request::RequestSpec;
use super::runs;

/// Reads at most this many times.
pub const MAX_OUTPUT_READS: u32 = 10;
/// A 404 is taken for "not registered yet" on this many first reads.
pub const TOLERATED_NOT_FOUND_READS: u32 = 3;

/// The next step of an output wait.
#[derive(Debug, PartialEq)]
pub enum OutputStep {
    /// Run this request through a `Call` and hand its result to [`OutputPlanner::on_result`].
    Request(RequestSpec),
    /// Wait, then ask again.
    Sleep {
        /// Milliseconds.
        ms: u64,
    },
    /// The signed download URL (fetch it with [`runs::download`]), or the final error.
    Done(Result<String, ApiError>),
}

#[derive(Debug, PartialEq)]
enum State {
    NeedRequest,
    Awaiting,
    Sleeping(u64),
    Finished(Option<Result<String, ApiError>>),
}

/// Plans the reads of one output.
#[derive(Debug, PartialEq)]
pub struct OutputPlanner {
    spec: RequestSpec,
    reads: u32,
    state: State,
}

impl OutputPlanner {
    /// Waits for output `name` of run `id`.
    ///
    /// # Errors
    /// `invalid_request` for an empty id or name.
    pub fn new(id: &str, name: &str) -> Result<Self, ApiError> {
        Ok(Self {
            spec: runs::output_url(id, name)?,
            reads: 0,
            state: State::NeedRequest,
        })
    }

    /// Reads planned so far.
    pub fn reads(&self) -> u32 {
        self.reads
    }

    /// The next step.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self) -> OutputStep {
        match std::mem::replace(&mut self.state, State::Finished(None)) {
            State::NeedRequest => {
                self.reads = self.reads.saturating_add(1);
                self.state = State::Awaiting;
                OutputStep::Request(self.spec.clone())
            }
            State::Sleeping(ms) => {
                self.state = State::NeedRequest;
                OutputStep::Sleep { ms }
            }
            State::Awaiting | State::Finished(None) => OutputStep::Done(Err(ApiError::new(
                ErrorKind::Validation,
                "invalid_call_state",
                "next() called out of order",
            ))),
            State::Finished(Some(result)) => OutputStep::Done(result),
        }
    }

    /// Hands over the result of the last request's call.
    pub fn on_result(&mut self, result: Result<ApiResponse, ApiError>) {
        if self.state != State::Awaiting {
            return;
        }
        let outcome = match result {
            Ok(response) => match response.location {
                Some(location) => Ok(location),
                None => Err(ApiError::new(
                    ErrorKind::InvalidResponse,
                    "missing_location",
                    "the output route answered without a Location",
                )),
            },
            Err(err) => {
                let not_ready = err.code == "output_not_ready";
                let early_404 = err.status == Some(404) && self.reads <= TOLERATED_NOT_FOUND_READS;
                if (not_ready || early_404) && self.reads < MAX_OUTPUT_READS {
                    let exponent = self.reads.saturating_sub(1).min(8);
                    let delay = 1_000u64.saturating_mul(1u64 << exponent).min(5_000);
                    self.state = State::Sleeping(delay);
                    return;
                }
                Err(err)
            }
        };
        self.state = State::Finished(Some(outcome));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(status: u16, body: &str) -> Result<ApiResponse, ApiError> {
        Err(ApiError::from_response(status, &[], body, None))
    }

    fn found() -> Result<ApiResponse, ApiError> {
        Ok(ApiResponse {
            status: 302,
            headers: Vec::new(),
            request_id: None,
            idempotent_replay: false,
            body: serde_json::Value::Null,
            location: Some("https://cdn.example/o?sig=1".into()),
            attempts: 1,
        })
    }

    fn drive(
        mut answers: Vec<Result<ApiResponse, ApiError>>,
    ) -> (u32, Vec<u64>, Result<String, ApiError>) {
        answers.reverse();
        let mut planner = OutputPlanner::new("exr_1", "out.pdf").unwrap();
        let mut sleeps = Vec::new();
        loop {
            match planner.next() {
                OutputStep::Request(spec) => {
                    assert_eq!(spec.response, crate::client::ResponseKind::Redirect);
                    planner.on_result(answers.pop().expect("more reads than scripted"));
                }
                OutputStep::Sleep { ms } => sleeps.push(ms),
                OutputStep::Done(result) => return (planner.reads(), sleeps, result),
            }
        }
    }

    const NOT_READY: &str = r#"{"code":"output_not_ready","retryable":true}"#;

    #[test]
    fn output_not_ready_is_waited_out_until_the_redirect() {
        let (reads, sleeps, result) = drive(vec![
            err(409, NOT_READY),
            err(409, NOT_READY),
            err(409, NOT_READY),
            found(),
        ]);
        assert_eq!(reads, 4);
        assert_eq!(sleeps, vec![1_000, 2_000, 4_000]);
        assert_eq!(result.unwrap(), "https://cdn.example/o?sig=1");
    }

    #[test]
    fn an_early_404_is_tolerated_but_a_late_one_is_the_answer() {
        let (_, _, result) = drive(vec![err(404, r#"{"code":"not_found"}"#), found()]);
        assert!(result.is_ok());
        let answers = vec![
            err(409, NOT_READY),
            err(409, NOT_READY),
            err(409, NOT_READY),
            err(404, r#"{"code":"not_found"}"#),
        ];
        let (reads, _, result) = drive(answers);
        assert_eq!(reads, 4);
        assert_eq!(result.unwrap_err().code, "not_found");
    }

    #[test]
    fn output_wait_gives_up_after_ten_reads() {
        let (reads, sleeps, result) = drive((0..10).map(|_| err(409, NOT_READY)).collect());
        assert_eq!(reads, MAX_OUTPUT_READS);
        assert_eq!(
            sleeps.iter().sum::<u64>(),
            1_000 + 2_000 + 4_000 + 5_000 * 6
        );
        assert_eq!(result.unwrap_err().code, "output_not_ready");
    }

    #[test]
    fn other_errors_end_the_output_wait_at_once() {
        let (reads, _, result) = drive(vec![err(
            410,
            r#"{"code":"run_expired","retryable":false}"#,
        )]);
        assert_eq!(reads, 1);
        assert_eq!(result.unwrap_err().js_class_name(), "GoneError");
    }
}
