//! Realtime transcription core, sans-IO: the browser layer feeds it audio and socket events, it returns bytes to
//! send and errors to report. No JS, no sockets, no clocks: everything here runs and is tested natively.
//!
//! - [`resample`]: streaming windowed-sinc resampler, exact rational ratio, any input rate to the session rate;
//! - [`pcm`]: `f32` to PCM16 little-endian with clipping;
//! - [`framing`]: fixed frames of 20 to 100 ms;
//! - [`reconnect_buffer`]: bounded buffer for audio captured during an outage;
//! - [`pipeline`]: the above chained, with the connection state ([`Pipeline`]);
//! - [`protocol`]: socket messages and close codes;
//! - messages and options are read by the crate's JSON reader ([`crate::json`]; no serde in the wasm module);
//! - [`usage`]: credits by the spec's pricing;
//! - [`backoff`]: reconnect delays and policy;
//! - [`keepalive`]: the keep-alive interval;
//! - [`level`]: RMS and peak of a block in dBFS, for meters;
//! - [`options`]: [`TranscriberOptions`], read by a table of names and kinds and validated with the option's path;
//! - [`session`]: the whole session as a sans-IO state machine ([`Session`]): inputs in, [`Effect`]s out;
//! - [`error`]: [`RealtimeError`] with stable codes.

pub mod backoff;
pub mod error;
pub mod framing;
pub mod keepalive;
pub mod level;
pub mod options;
pub mod pcm;
pub mod pipeline;
pub mod protocol;
pub mod reconnect_buffer;
pub mod resample;
pub mod session;
pub mod usage;

#[cfg(test)]
mod test_signal;

pub use backoff::{Backoff, ReconnectPolicy};
pub use error::RealtimeError;
pub use framing::Framer;
pub use level::Level;
pub use options::{SessionConfig, TranscriberOptions};
pub use pipeline::{Drained, Pipeline, PipelineConfig};
pub use protocol::{close_error, ClientMessage, ServerMessage};
pub use reconnect_buffer::ReconnectBuffer;
pub use resample::Resampler;
pub use session::{AudioOrigin, CaptureSource, Effect, Event, Phase, Session, TimerKind};
pub use usage::Usage;
