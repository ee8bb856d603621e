#![doc = include_str!("../README.md")]

pub mod realtime;
pub mod webhook;

#[cfg(target_arch = "wasm32")]
mod wasm;
