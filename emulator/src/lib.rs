#![doc = include_str!("../README.md")]

pub mod actions;
pub mod agent_definitions;
pub mod agent_engine;
pub mod agent_runs;
pub mod agents;
pub mod app;
pub mod auth;
pub mod body;
pub mod config;
pub mod control;
pub mod documents;
pub mod error;
pub mod extract;
pub mod files;
pub mod host;
pub mod idempotency;
pub mod realtime;
pub mod redact;
pub mod runs;
pub mod signing;
pub mod state;
pub mod store;
pub mod util;
pub mod verbs;
pub mod webhooks;

use crate::app::Shared;
pub use crate::config::Config;
use crate::error::ApiError;
#[cfg(not(target_arch = "wasm32"))]
pub use crate::host::{serve, Handle};
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use axum::Router;

/// Opens the store (`--state`) and starts the ttl sweeper: what every host does once with a new app, before serving.
///
/// # Errors
/// The state file cannot be written.
pub fn start(app: &Shared) -> Result<(), String> {
    app.open_store()?;
    runs::spawn_sweeper(app);
    Ok(())
}

/// The full router for an app.
pub fn router(app: Shared) -> Router {
    let v1 = Router::new()
        .route("/v1/agents", get(agents::list_agents))
        .route("/v1/agents/{id}", get(agents::get_agent))
        .route("/v1/agent-runs", post(agent_runs::create))
        .route("/v1/agent-runs/{id}", get(agent_runs::get))
        .route(
            "/v1/agent-runs/{id}/approvals/{approval}",
            post(agent_runs::decide),
        )
        .route(
            "/v1/agent-runs/{id}/tasks/{task}/complete",
            post(agent_runs::complete_task),
        )
        .route("/v1/files", post(files::create))
        .route("/v1/files/{id}", get(files::get))
        .route("/v1/extract", post(verbs::extract))
        .route("/v1/extract/batch", post(verbs::extract_batch))
        .route("/v1/parse", post(verbs::parse))
        .route("/v1/redact", post(verbs::redact))
        .route("/v1/fill", post(verbs::fill))
        .route("/v1/sign", post(verbs::sign))
        .route("/v1/pipeline", post(verbs::pipeline))
        .route("/v1/{capability}/configs", post(actions::create_config))
        .route("/v1/actions", post(actions::create_action))
        .route("/v1/actions/catalog", get(actions::catalog))
        .route("/v1/realtime/transcriptions", post(realtime::create))
        .route("/v1/realtime/transcriptions/{id}", get(realtime::get))
        .route("/v1/runs", get(runs::list))
        .route("/v1/runs/{id}", get(runs::get).delete(runs::delete))
        .route("/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/v1/runs/{id}/keep", post(runs::keep))
        .route("/v1/runs/{id}/output/{name}", get(runs::output))
        .route("/v1/webhooks", post(webhooks::create).get(webhooks::list))
        .route(
            "/v1/webhooks/{id}",
            get(webhooks::get)
                .patch(webhooks::patch)
                .delete(webhooks::delete),
        )
        .route("/v1/webhooks/{id}/deliveries", get(webhooks::deliveries))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::gate,
        ));
    let mut public = Router::new()
        .route("/v1/webhooks/jwks.json", get(webhooks::jwks))
        .route("/process/jwks.json", get(webhooks::jwks))
        .route(
            "/uploads/{token}",
            put(files::upload).layer(DefaultBodyLimit::max(files::MAX_UPLOAD_BYTES)),
        )
        .route("/v1/realtime/socket", get(host::socket))
        .route("/downloads/{id}", get(files::download))
        .route("/envelopes/{id}", get(verbs::envelope_get))
        .route("/envelopes/{id}/sign", post(verbs::envelope_sign));
    if app.config.control {
        public = public
            .route("/__emulator/clock", get(control::clock))
            .route("/__emulator/clock/advance", post(control::advance))
            .route(
                "/__emulator/faults",
                post(control::push_fault).delete(control::clear_faults),
            )
            .route("/__emulator/credits", post(control::credits))
            .route("/__emulator/state", get(control::state))
            .route(
                "/__emulator/agent-runs/{id}/{op}",
                post(control::agent_run_control),
            );
    }
    public
        .merge(v1)
        .layer(DefaultBodyLimit::max(body::MAX_REQUEST_BODY))
        .layer(axum::middleware::from_fn(payload_too_large))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::request_id,
        ))
        .with_state(app)
}

/// A body over its route's limit is refused by axum with a plain-text 413; the service answers its JSON envelope
/// with the spec's code `payload_too_large`.
async fn payload_too_large(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let response = next.run(request).await;
    let json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if response.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE && !json {
        return axum::response::IntoResponse::into_response(ApiError::new(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!(
                "the request body is over this route's limit ({} MiB; an upload {} MiB)",
                body::MAX_REQUEST_BODY >> 20,
                files::MAX_UPLOAD_BYTES >> 20
            ),
        ));
    }
    response
}

async fn not_found() -> ApiError {
    ApiError::not_found("route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}
