//! The JS boundary: thin wasm-bindgen wrappers that decode arguments, call the core and encode results.

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "webhooks")]
mod host_crypto;
mod interop;
#[cfg(feature = "webhooks-p256")]
mod p256_module;
mod platform;
#[cfg(feature = "realtime")]
mod realtime;
#[cfg(any(feature = "client", feature = "realtime", feature = "webhooks"))]
mod telemetry;
#[cfg(feature = "testing")]
mod testing;
#[cfg(feature = "webhooks")]
mod webhook;

#[cfg(feature = "client")]
pub use client::{
    validate_extraction_schema, ActionsResource, AgentRunsResource, AgentsResource,
    ConfigsResource, DocAuto, FilesResource, RealtimeResource, RunsResource, WebhooksResource,
};
#[cfg(feature = "webhooks")]
pub use host_crypto::use_p256;
#[cfg(feature = "webhooks-p256")]
pub use p256_module::verify_p256;
#[cfg(feature = "realtime")]
pub use realtime::RealtimeTranscriber;
#[cfg(feature = "testing")]
pub use testing::TestSigner;
#[cfg(feature = "webhooks")]
pub use webhook::WebhookVerifier;

// For the type sections below (none in the P-256 module alone).
#[cfg(any(
    feature = "client",
    feature = "realtime",
    feature = "webhooks",
    feature = "testing"
))]
use wasm_bindgen::prelude::*;

/// The package's allocator (feature `talc-allocator`, which `cargo xtask build` enables; Cargo.toml gives the
/// measurements): smaller than std's dlmalloc in every module and no slower. Single-threaded wasm only, as talc's
/// `TalcSyncCell` requires.
#[cfg(all(feature = "talc-allocator", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

// The `tracerProvider` and `meterProvider` options' types (the verifier's options are declared by `docauto/testing` too).
#[cfg(any(
    feature = "client",
    feature = "realtime",
    feature = "webhooks",
    feature = "testing"
))]
#[wasm_bindgen(typescript_custom_section)]
const TELEMETRY_TYPES: &'static str = include_str!("telemetry_types.d.ts");

// Types of both the client's answers and the webhook modules (key sets, the agent-run status).
#[cfg(any(feature = "client", feature = "webhooks", feature = "testing"))]
#[wasm_bindgen(typescript_custom_section)]
const SHARED_TYPES: &'static str = include_str!("shared_types.d.ts");

#[cfg(any(feature = "client", feature = "webhooks", feature = "testing"))]
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_SHARED_TYPES: &'static str = include_str!("generated/shared.d.ts");

// The webhook types (events, stores, WebhookVerificationError) are shared by the verifier and the test signer.
#[cfg(any(feature = "webhooks", feature = "testing"))]
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

// Generated from the core's Rust types (src/typegen.rs; `cargo xtask types` rewrites them, a test fails if stale).
#[cfg(any(feature = "webhooks", feature = "testing"))]
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_WEBHOOK_TYPES: &'static str = include_str!("generated/webhooks.d.ts");

#[cfg(feature = "realtime")]
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_REALTIME_TYPES: &'static str = include_str!("generated/realtime.d.ts");

#[cfg(feature = "client")]
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_CLIENT_TYPES: &'static str = include_str!("generated/client.d.ts");

#[cfg(feature = "client")]
#[wasm_bindgen(typescript_custom_section)]
const CLIENT_TYPES: &'static str = include_str!("client_types.d.ts");

#[cfg(feature = "realtime")]
#[wasm_bindgen(typescript_custom_section)]
const REALTIME_TYPES: &'static str = include_str!("realtime_types.d.ts");

#[cfg(feature = "testing")]
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_TESTING_TYPES: &'static str = include_str!("generated/testing.d.ts");

#[cfg(feature = "testing")]
#[wasm_bindgen(typescript_custom_section)]
const TESTING_TYPES: &'static str = include_str!("testing_types.d.ts");
