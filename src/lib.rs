#![doc = include_str!("../README.md")]

#[cfg(feature = "client")]
pub mod client;
pub mod json;
pub mod options;
#[cfg(feature = "realtime")]
pub mod realtime;
pub mod text;
pub mod url;
pub mod webhook;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod typegen;

/// The JS API (wasm-bindgen exports). Public only so the wasm tests can reach it; JS users import the npm package.
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;
