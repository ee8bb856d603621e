//! Cross-module behaviour tests of the client core.

mod calls;
mod classes;
mod errors;
mod flows;
mod order;
mod params;
mod polls;
mod redirects;
mod resources;
mod retries;
mod telemetry;
mod validation;

use super::{
    Action, ApiError, ApiResponse, Call, CallOptions, ClientConfig, Env, HttpRequest, RequestSpec,
    TransportError,
};

pub(crate) const KEY: &str = "sk_live_SECRET123";

pub(crate) fn config() -> ClientConfig {
    ClientConfig::new(KEY, "https://api.example.com/").unwrap()
}

/// A fresh call of `GET /v1/runs/exr_1` with the default options.
pub(crate) fn retrieve_call() -> Call {
    Call::new(
        &config(),
        crate::client::runs::retrieve("exr_1").unwrap(),
        &CallOptions::default(),
        [0; 16],
    )
    .unwrap()
}

pub(crate) fn env() -> Env {
    Env {
        now_ms: 1_700_000_000_000,
        jitter: 0.0,
    }
}

/// A scripted answer.
pub(crate) enum Reply {
    Http(u16, Vec<(&'static str, &'static str)>, &'static str),
    Transport(TransportError),
}

pub(crate) fn h(pairs: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    pairs.to_vec()
}

/// What a driven call did.
pub(crate) struct Trace {
    pub requests: Vec<HttpRequest>,
    pub sleeps: Vec<u64>,
    pub result: Result<ApiResponse, ApiError>,
}

/// Runs a call against scripted replies; panics if the call wants more replies than given.
pub(crate) fn drive(mut call: Call, replies: Vec<Reply>) -> Trace {
    let mut replies = replies.into_iter();
    let mut requests = Vec::new();
    let mut sleeps = Vec::new();
    for _ in 0..100 {
        match call.next() {
            Action::Send(req) => {
                requests.push(req);
                match replies
                    .next()
                    .expect("the call sent more requests than scripted")
                {
                    Reply::Http(status, headers, body) => {
                        let headers: Vec<(String, String)> = headers
                            .iter()
                            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                            .collect();
                        call.on_response(status, &headers, body, env());
                    }
                    Reply::Transport(e) => call.on_transport_error(e, env()),
                }
            }
            Action::Sleep { ms } => sleeps.push(ms),
            Action::Done(result) => {
                return Trace {
                    requests,
                    sleeps,
                    result,
                }
            }
        }
    }
    panic!("the call did not finish");
}

/// The body a request was sent with, the service answering 202 with a queued run.
pub(crate) fn sent(spec: RequestSpec) -> String {
    let trace = run(
        spec,
        &CallOptions::default(),
        vec![Reply::Http(
            202,
            vec![],
            r#"{"id":"exr_1","status":"queued"}"#,
        )],
    );
    trace.requests[0].body.as_deref().unwrap().to_owned()
}

pub(crate) fn run(spec: RequestSpec, options: &CallOptions, replies: Vec<Reply>) -> Trace {
    let call = Call::new(&config(), spec, options, [1u8; 16]).unwrap();
    drive(call, replies)
}
