//! `DocAuto`, the typed API client for JS: decode the arguments, let the core build and check the request and its
//! flow, hand the flow to the one driver (`run` in `promise.js`, through [`stepper::FlowStepper`]). Resource namespaces are small classes sharing the
//! client's state through an `Rc`.

mod actions;
mod agent_runs;
mod agents;
mod configs;
mod convert;
mod files;
mod realtime;
mod runs;
mod stepper;
mod verbs;
mod webhooks;

pub use actions::ActionsResource;
pub use agent_runs::AgentRunsResource;
pub use agents::AgentsResource;
pub use configs::ConfigsResource;
pub use files::FilesResource;
pub use realtime::RealtimeResource;
pub use runs::RunsResource;
pub use webhooks::WebhooksResource;

use std::cell::OnceCell;
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::client::options::{ClientHost, ClientOptions, HANDLES};
use crate::client::polling::{PollPlanner, Until};
use crate::client::telemetry::Operation;
use crate::client::{self, ApiError, CallOptions, ClientConfig, Flow, Goal, RequestSpec};
use crate::wasm::{interop, platform};
use convert::{error_to_js, JsCallOptions};

/// An optional JS argument (`undefined` and `null` are `None`).
pub(crate) type Opt = Option<JsValue>;

/// The client's shared state. `Debug` is never derived: the config holds the key.
pub struct ClientState {
    config: ClientConfig,
    fetch: Option<Function>,
    logger: Option<JsValue>,
    /// The `tracerProvider` and `meterProvider` options (`undefined` when neither is given: the registered ones).
    telemetry: JsValue,
}

/// The Document Automation API client.
#[wasm_bindgen]
pub struct DocAuto {
    inner: Rc<ClientState>,
    /// The resource namespaces, each made on first use and then the same object (`client.runs === client.runs`).
    namespaces: Namespaces,
}

/// One cell per namespace getter of [`DocAuto`].
#[derive(Default)]
struct Namespaces {
    agents: OnceCell<JsValue>,
    agent_runs: OnceCell<JsValue>,
    configs: OnceCell<JsValue>,
    actions: OnceCell<JsValue>,
    runs: OnceCell<JsValue>,
    files: OnceCell<JsValue>,
    webhooks: OnceCell<JsValue>,
    realtime: OnceCell<JsValue>,
}

fn config_error(field: &str, message: &str) -> JsValue {
    error_to_js(&ApiError::invalid_config(field, message))
}

/// `process.env[name]` (Node, Bun) or `Deno.env.get(name)` (Deno, which throws without permission).
fn env_var(name: &str) -> Option<String> {
    let process = platform::global("process");
    if process.is_object() {
        let env = interop::option(&process, "env");
        if let Some(v) = interop::option(&env, name).as_string() {
            return Some(v);
        }
    }
    let deno = platform::global("Deno");
    let env = interop::option(&deno, "env");
    let get = interop::function_option(&interop::option(&env, "get"))?;
    get.call1(&env, &name.into()).ok()?.as_string()
}

/// What the browser guard needs to know of this host (the core decides from these facts).
fn host_facts() -> crate::client::HostFacts {
    let worker_scope = platform::global("WorkerGlobalScope");
    // `interop::option` reads objects only; `WorkerGlobalScope` is a function.
    let prototype = js_sys::Reflect::get(&worker_scope, &"prototype".into()).unwrap_or_default();
    let worker_scope = worker_scope.is_function()
        && prototype.is_object()
        && prototype
            .unchecked_ref::<js_sys::Object>()
            .is_prototype_of(&js_sys::global());
    let process = platform::global("process");
    let node = interop::option(&interop::option(&process, "versions"), "node").is_string();
    let user_agent = interop::option(&platform::global("navigator"), "userAgent");
    let server_runtime = node
        || !platform::global("Deno").is_undefined()
        || !platform::global("Bun").is_undefined()
        || !platform::global("EdgeRuntime").is_undefined()
        || user_agent.as_string().as_deref() == Some("Cloudflare-Workers");
    crate::client::HostFacts {
        page: platform::global("window").is_object() && platform::global("document").is_object(),
        worker_scope,
        server_runtime,
    }
}

#[wasm_bindgen]
impl DocAuto {
    /// Creates a client. `apiKey` and `baseUrl` fall back to `DOCAUTO_API_KEY` and `DOCAUTO_BASE_URL` where the
    /// runtime has an environment. Throws `BadRequestError` (`invalid_config`, `browser_not_allowed`) for bad settings.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "ClientOptions")] options: Opt,
    ) -> Result<DocAuto, JsValue> {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let options = if options.is_undefined() || options.is_null() {
            js_sys::Object::new().into()
        } else if options.is_object() {
            options
        } else {
            return Err(config_error("options", "must be an object"));
        };
        let data = interop::plain_options(&options, &HANDLES).map_err(|()| {
            config_error(
                "options",
                "must be plain data besides fetch, logger, tracerProvider and meterProvider",
            )
        })?;
        let host = ClientHost {
            env: &env_var,
            facts: host_facts(),
        };
        let config = ClientOptions::from_json(data)
            .and_then(|o| o.validate(&host))
            .map_err(|e| error_to_js(&e))?;
        let fetch = interop::option(&options, "fetch");
        let fetch = if fetch.is_undefined() || fetch.is_null() {
            None
        } else {
            Some(
                interop::function_option(&fetch)
                    .ok_or_else(|| config_error("fetch", "must be a function"))?,
            )
        };
        let logger = interop::option(&options, "logger");
        let logger = if logger.is_undefined() || logger.is_null() {
            None
        } else if logger.is_object() {
            Some(logger)
        } else {
            return Err(config_error(
                "logger",
                "must be an object with debug, info, warn and error methods",
            ));
        };
        let telemetry = crate::wasm::telemetry::providers(&options).map_err(|name| {
            config_error(
                name,
                "must be an OpenTelemetry provider (getTracer, getMeter)",
            )
        })?;
        Ok(DocAuto {
            inner: Rc::new(ClientState {
                config,
                fetch,
                logger,
                telemetry,
            }),
            namespaces: Default::default(),
        })
    }

    /// The base URL requests go to (the key is sent to this origin only).
    #[wasm_bindgen(getter, js_name = baseUrl)]
    pub fn base_url(&self) -> String {
        self.inner.config.base_url().to_owned()
    }

    /// Saved automations.
    #[wasm_bindgen(getter, js_name = agents, unchecked_return_type = "AgentsResource")]
    pub fn agents_js(&self) -> JsValue {
        self.namespaces
            .agents
            .get_or_init(|| AgentsResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Runs of agents: start, read, approve, reject, complete a human step, wait.
    #[wasm_bindgen(getter, js_name = agentRuns, unchecked_return_type = "AgentRunsResource")]
    pub fn agent_runs_js(&self) -> JsValue {
        self.namespaces
            .agent_runs
            .get_or_init(|| AgentRunsResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Saved configurations of extract, redact and fill.
    #[wasm_bindgen(getter, js_name = configs, unchecked_return_type = "ConfigsResource")]
    pub fn configs_js(&self) -> JsValue {
        self.namespaces
            .configs
            .get_or_init(|| ConfigsResource::new(self.inner.clone()).into())
            .clone()
    }

    /// The catalog of configurable actions (and the deprecated `create`).
    #[wasm_bindgen(getter, js_name = actions, unchecked_return_type = "ActionsResource")]
    pub fn actions_js(&self) -> JsValue {
        self.namespaces
            .actions
            .get_or_init(|| ActionsResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Capability runs: list, read, wait, cancel, delete, keep, outputs.
    #[wasm_bindgen(getter, js_name = runs, unchecked_return_type = "RunsResource")]
    pub fn runs_js(&self) -> JsValue {
        self.namespaces
            .runs
            .get_or_init(|| RunsResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Registered files: by URL or uploaded bytes.
    #[wasm_bindgen(getter, js_name = files, unchecked_return_type = "FilesResource")]
    pub fn files_js(&self) -> JsValue {
        self.namespaces
            .files
            .get_or_init(|| FilesResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Webhook endpoints, deliveries and the public key set.
    #[wasm_bindgen(getter, js_name = webhooks, unchecked_return_type = "WebhooksResource")]
    pub fn webhooks_js(&self) -> JsValue {
        self.namespaces
            .webhooks
            .get_or_init(|| WebhooksResource::new(self.inner.clone()).into())
            .clone()
    }

    /// Live transcription sessions.
    #[wasm_bindgen(getter, js_name = realtime, unchecked_return_type = "RealtimeResource")]
    pub fn realtime_js(&self) -> JsValue {
        self.namespaces
            .realtime
            .get_or_init(|| RealtimeResource::new(self.inner.clone()).into())
            .clone()
    }
}

/// The namespaces for Rust callers (JS reads the cached objects of the getters above).
impl DocAuto {
    /// `client.agents` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn agents(&self) -> AgentsResource {
        AgentsResource::new(self.inner.clone())
    }

    /// `client.agent_runs` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn agent_runs(&self) -> AgentRunsResource {
        AgentRunsResource::new(self.inner.clone())
    }

    /// `client.configs` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn configs(&self) -> ConfigsResource {
        ConfigsResource::new(self.inner.clone())
    }

    /// `client.actions` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn actions(&self) -> ActionsResource {
        ActionsResource::new(self.inner.clone())
    }

    /// `client.runs` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn runs(&self) -> RunsResource {
        RunsResource::new(self.inner.clone())
    }

    /// `client.files` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn files(&self) -> FilesResource {
        FilesResource::new(self.inner.clone())
    }

    /// `client.webhooks` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn webhooks(&self) -> WebhooksResource {
        WebhooksResource::new(self.inner.clone())
    }

    /// `client.realtime` as a Rust value (a new handle sharing the client), for Rust callers such as the wasm tests.
    pub fn realtime(&self) -> RealtimeResource {
        RealtimeResource::new(self.inner.clone())
    }
}

/// Checks an extraction schema against the service's dialect without sending anything. Throws `BadRequestError`
/// with code `invalid_schema` or `schema_too_large` (the message names the field path).
#[wasm_bindgen(js_name = validateExtractionSchema)]
pub fn validate_extraction_schema(
    #[wasm_bindgen(unchecked_param_type = "JsonSchema")] schema: JsValue,
) -> Result<(), JsValue> {
    let text = convert::json_source(&schema, "schema").map_err(|e| error_to_js(&e))?;
    client::validate::schema_text_at(text, "schema").map_err(|e| error_to_js(&e))
}

/// The start of every method: the call options (with the method's own extra option names).
pub(crate) fn prepare(options: &JsValue, extra: &[&str]) -> Result<JsCallOptions, ApiError> {
    convert::call_options(options, extra)
}

/// Starts a method: the flow `build` makes of the client's config and the call options (with the caller's bytes
/// of an upload), run by the one driver. `list` is `{ resource, params, options }` for a page, else `undefined`.
/// Bad arguments reject the returned promise; nothing is sent.
pub(crate) fn start(
    inner: &Rc<ClientState>,
    op: Operation,
    prepared: Result<JsCallOptions, ApiError>,
    list: &JsValue,
    build: impl FnOnce(&ClientConfig, &CallOptions) -> Result<(Flow, JsValue), ApiError>,
) -> JsValue {
    let started = prepared.and_then(|o| {
        let built = build(&inner.config, &o.core);
        // Taken whatever happened: it belongs to this call only.
        let params_text = convert::take_params_text();
        let (flow, raw_body) = built?;
        stepper::check_signal(&o.signal)?;
        Ok(stepper::drive(
            inner,
            flow,
            stepper::Bodies {
                raw: raw_body,
                params_text,
            },
            &o.signal,
            list,
            op,
        ))
    });
    started.unwrap_or_else(|e| stepper::rejected(&e, !list.is_undefined()))
}

/// A `waitFor`: the wait options (`until`, `deadlineMs` and the call options), then a poll flow over the planner
/// `plan` makes of the id and `until`.
pub(crate) fn wait_for(
    inner: &Rc<ClientState>,
    op: Operation,
    id: &JsValue,
    options: Option<JsValue>,
    plan: impl FnOnce(&str, Until) -> Result<PollPlanner, ApiError>,
) -> JsValue {
    let options = options.unwrap_or(JsValue::UNDEFINED);
    let mut wait = convert::WaitOptions::default();
    let prepared = convert::wait_options(&options).map(|(o, w)| {
        wait = w;
        o
    });
    start(inner, op, prepared, &JsValue::UNDEFINED, |config, o| {
        let planner = plan(&convert::string_arg(id, "id")?, wait.until)?;
        let flow = Flow::poll(config, planner.with_deadline(wait.deadline), o);
        Ok((flow, JsValue::UNDEFINED))
    })
}

/// The common method: one call (with its retries) whose result is `goal`. The options are read first (their error
/// wins over the params'), then `build` makes the request; the rest is [`single`], one copy for every method (`build`
/// is a `dyn` closure so that `simple` itself is one copy too).
pub(crate) fn simple(
    inner: &Rc<ClientState>,
    op: Operation,
    options: Option<JsValue>,
    goal: Goal,
    build: &mut dyn FnMut() -> Result<RequestSpec, ApiError>,
) -> JsValue {
    let options = options.unwrap_or(JsValue::UNDEFINED);
    single(
        inner,
        op,
        prepare(&options, &[]).and_then(|o| Ok((o, build()?))),
        goal,
    )
}

/// Starts one call of a built request.
#[inline(never)]
fn single(
    inner: &Rc<ClientState>,
    op: Operation,
    prepared: Result<(JsCallOptions, RequestSpec), ApiError>,
    goal: Goal,
) -> JsValue {
    match prepared {
        Ok((options, spec)) => start(inner, op, Ok(options), &JsValue::UNDEFINED, |config, o| {
            let random = ClientState::random_for(spec.method);
            Ok((
                Flow::single(config, spec, o, goal, random)?,
                JsValue::UNDEFINED,
            ))
        }),
        Err(e) => stepper::rejected(&e, false),
    }
}
