//! Realtime transcription core, sans-IO: the browser layer feeds it audio and socket events, it returns bytes to
//! send and errors to report. No JS, no sockets, no clocks: everything here runs and is tested natively.
//!
//! - [`resample`]: streaming windowed-sinc resampler, exact rational ratio, any input rate to the session rate;
//! - [`pcm`]: `f32` to PCM16 little-endian with clipping;
//! - [`framing`]: fixed frames of 20 to 100 ms;
//! - [`reconnect_buffer`]: bounded buffer for audio captured during an outage;
//! - [`pipeline`]: the above chained, with the connection state ([`Pipeline`]);
//! - [`protocol`]: socket messages and close codes;
//! - [`usage`]: credits by the spec's pricing;
//! - [`backoff`]: reconnect delays and policy;
//! - [`keepalive`]: when to send `{"type":"keepalive"}`;
//! - [`error`]: [`RealtimeError`] with stable codes.

pub mod backoff;
pub mod error;
pub mod framing;
pub mod keepalive;
pub mod pcm;
pub mod pipeline;
pub mod protocol;
pub mod reconnect_buffer;
pub mod resample;
pub mod usage;

#[cfg(test)]
mod test_signal;

pub use backoff::{Backoff, ReconnectPolicy};
pub use error::RealtimeError;
pub use framing::Framer;
pub use keepalive::Keepalive;
pub use pipeline::{Drained, Pipeline, PipelineConfig};
pub use protocol::{close_error, ClientMessage, ServerMessage};
pub use reconnect_buffer::ReconnectBuffer;
pub use resample::Resampler;
pub use usage::Usage;
