//! The JS boundary: thin wasm-bindgen wrappers that decode arguments, call the core and encode results.

mod interop;
mod platform;
mod webhook;

pub use webhook::WebhookVerifier;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");
