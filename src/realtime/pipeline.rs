//! The sans-IO audio pipeline the wasm layer drives: samples in, PCM16 frames out, buffering across outages.
//!
//! Flow per block: non-finite samples become 0, the block is resampled from its input rate to the session
//! rate, encoded to PCM16 with clipping, and cut into fixed frames. While connected the frames are returned, to
//! be sent as binary messages in order; while disconnected they go to the bounded [`ReconnectBuffer`] and come
//! back from [`Pipeline::on_connected`], oldest first, before any new frame.

use super::error::RealtimeError;
use super::framing::{Framer, DEFAULT_FRAME_MS};
use super::pcm;
use super::reconnect_buffer::{ReconnectBuffer, DEFAULT_BUFFER_MS};
use super::resample::{Resampler, MAX_OUTPUT_RATE, MIN_OUTPUT_RATE};
use super::usage::Usage;

/// Most interleaved channels accepted for downmixing.
pub const MAX_CHANNELS: u16 = 32;

/// Pipeline settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineConfig {
    /// Session rate in Hz (8 000..=48 000), the rate of the binary frames; default 16 000.
    pub session_rate: u32,
    /// Frame length in milliseconds (20..=100); default 40.
    pub frame_ms: u32,
    /// Reconnect buffer capacity in milliseconds of audio; default 10 000 (0: nothing is kept during an outage,
    /// all of it is counted as dropped).
    pub buffer_ms: u32,
    /// Whether interleaved multi-channel input is averaged to mono (otherwise it is refused); default true.
    pub downmix: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            session_rate: 16_000,
            frame_ms: DEFAULT_FRAME_MS,
            buffer_ms: DEFAULT_BUFFER_MS,
            downmix: true,
        }
    }
}

/// Frames to send right after a (re)connect, and what the outage cost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Drained {
    /// Buffered frames, oldest first: send them before anything else.
    pub frames: Vec<Vec<u8>>,
    /// Audio dropped (oldest first) during the outage that just ended, in milliseconds.
    pub dropped_ms: u64,
}

/// Samples in, frames out; see the module documentation.
pub struct Pipeline {
    config: PipelineConfig,
    resampler: Option<Resampler>,
    framer: Framer,
    buffer: ReconnectBuffer,
    connected: bool,
    joined: bool,
    sent_samples: u64,
    dropped_reported: u64,
    input: Vec<f32>,
    resampled: Vec<f32>,
    encoded: Vec<i16>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("config", &self.config)
            .field("resampler", &self.resampler)
            .field("framer", &self.framer)
            .field("buffer", &self.buffer)
            .field("connected", &self.connected)
            .field("joined", &self.joined)
            .field("sent_samples", &self.sent_samples)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A disconnected pipeline: frames are buffered until [`on_connected`](Self::on_connected).
    ///
    /// # Errors
    /// `unsupported_audio_format` when the session rate is outside 8 000..=48 000 Hz or the frame length
    /// outside 20..=100 ms.
    pub fn new(config: PipelineConfig) -> Result<Self, RealtimeError> {
        if !(MIN_OUTPUT_RATE..=MAX_OUTPUT_RATE).contains(&config.session_rate) {
            return Err(RealtimeError::unsupported(format!(
                "session sample rate {} Hz is outside {MIN_OUTPUT_RATE}..={MAX_OUTPUT_RATE} Hz",
                config.session_rate
            )));
        }
        Ok(Self {
            framer: Framer::new(config.session_rate, config.frame_ms)?,
            buffer: ReconnectBuffer::new(config.session_rate, config.buffer_ms),
            config,
            resampler: None,
            connected: false,
            joined: false,
            sent_samples: 0,
            dropped_reported: 0,
            input: Vec::new(),
            resampled: Vec::new(),
            encoded: Vec::new(),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> PipelineConfig {
        self.config
    }

    /// Bytes in a full frame.
    pub fn frame_bytes(&self) -> usize {
        self.framer.frame_bytes()
    }

    /// Mono `f32` samples (nominally in [-1, 1]) at `input_rate` Hz; returns the frames to send now (none
    /// while disconnected).
    ///
    /// # Errors
    /// `unsupported_audio_format` when `input_rate` is outside 8 000..=192 000 Hz.
    pub fn push_f32(
        &mut self,
        samples: &[f32],
        input_rate: u32,
    ) -> Result<Vec<Vec<u8>>, RealtimeError> {
        self.input.clear();
        self.input
            .extend(samples.iter().map(|&s| if s.is_finite() { s } else { 0.0 }));
        self.run(input_rate)
    }

    /// Mono PCM16 samples at `input_rate` Hz; at the session rate they pass through bit-exact.
    ///
    /// # Errors
    /// `unsupported_audio_format` when `input_rate` is outside 8 000..=192 000 Hz.
    pub fn push_i16(
        &mut self,
        samples: &[i16],
        input_rate: u32,
    ) -> Result<Vec<Vec<u8>>, RealtimeError> {
        self.input.clear();
        self.input
            .extend(samples.iter().map(|&s| pcm::i16_to_f32(s)));
        self.run(input_rate)
    }

    /// Interleaved `f32` samples with `channels` channels, averaged to mono when downmixing is on.
    ///
    /// # Errors
    /// `unsupported_audio_format` when `channels` is 0 or above 32, when it is above 1 and downmixing is off,
    /// when the length is not a multiple of `channels`, or when `input_rate` is out of range.
    pub fn push_interleaved_f32(
        &mut self,
        samples: &[f32],
        channels: u16,
        input_rate: u32,
    ) -> Result<Vec<Vec<u8>>, RealtimeError> {
        if channels == 0 || channels > MAX_CHANNELS {
            return Err(RealtimeError::unsupported(format!(
                "{channels} channels (1..={MAX_CHANNELS} accepted)"
            )));
        }
        if channels > 1 && !self.config.downmix {
            return Err(RealtimeError::unsupported(format!(
                "{channels} channels while downmixing is off (the session takes mono)"
            )));
        }
        let width = usize::from(channels);
        if !samples.len().is_multiple_of(width) {
            return Err(RealtimeError::unsupported(format!(
                "{} interleaved samples is not a multiple of {channels} channels",
                samples.len()
            )));
        }
        self.input.clear();
        let scale = 1.0 / f32::from(channels);
        self.input.extend(samples.chunks_exact(width).map(|frame| {
            frame
                .iter()
                .map(|&s| if s.is_finite() { s } else { 0.0 })
                .sum::<f32>()
                * scale
        }));
        self.run(input_rate)
    }

    fn run(&mut self, input_rate: u32) -> Result<Vec<Vec<u8>>, RealtimeError> {
        self.resampled.clear();
        let resampler = match self.resampler.take() {
            Some(r) if r.input_rate() == input_rate => r,
            previous => {
                let fresh = match Resampler::new(input_rate, self.config.session_rate) {
                    Ok(r) => r,
                    Err(e) => {
                        self.resampler = previous;
                        return Err(e);
                    }
                };
                // A rate change (e.g. another source through sendAudio): close the old stream's tail first.
                if let Some(mut old) = previous {
                    old.finish(&mut self.resampled);
                }
                fresh
            }
        };
        let resampler = self.resampler.insert(resampler);
        resampler.process(&self.input, &mut self.resampled);
        Ok(self.frame_resampled(false))
    }

    /// Encodes and frames `self.resampled`, and routes the frames (sent or buffered).
    fn frame_resampled(&mut self, flush: bool) -> Vec<Vec<u8>> {
        self.encoded.clear();
        pcm::encode_f32(&self.resampled, &mut self.encoded);
        let mut frames = self.framer.push(&self.encoded);
        if flush {
            frames.extend(self.framer.flush());
        }
        self.route(frames)
    }

    fn route(&mut self, frames: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        if self.connected {
            self.sent_samples += frames.iter().map(|f| (f.len() / 2) as u64).sum::<u64>();
            frames
        } else {
            for frame in frames {
                self.buffer.push(frame);
            }
            Vec::new()
        }
    }

    /// End of audio: emits the resampler's delayed tail and the last partial frame. Returns them when connected
    /// (send them, then `{"type":"stop"}`); when disconnected they join the buffer for the next `on_connected`.
    /// The pipeline can take a new stream afterwards.
    pub fn stop(&mut self) -> Vec<Vec<u8>> {
        self.resampled.clear();
        if let Some(mut resampler) = self.resampler.take() {
            resampler.finish(&mut self.resampled);
        }
        self.frame_resampled(true)
    }

    /// The socket is open and the service sent `open` with `server_rate`: returns the buffered frames to send
    /// first and the audio the outage dropped.
    ///
    /// # Errors
    /// `unsupported_audio_format` when `server_rate` differs from the session rate of this pipeline (its frames
    /// would be misread); the pipeline stays disconnected.
    pub fn on_connected(&mut self, server_rate: u32) -> Result<Drained, RealtimeError> {
        if server_rate != self.config.session_rate {
            return Err(RealtimeError::unsupported(format!(
                "the service expects {server_rate} Hz but the pipeline produces {} Hz",
                self.config.session_rate
            )));
        }
        self.connected = true;
        self.joined = true;
        let frames = self.buffer.drain();
        self.sent_samples += frames.iter().map(|f| (f.len() / 2) as u64).sum::<u64>();
        let dropped = self.buffer.dropped_samples() - self.dropped_reported;
        self.dropped_reported = self.buffer.dropped_samples();
        Ok(Drained {
            frames,
            dropped_ms: dropped * 1_000 / u64::from(self.config.session_rate),
        })
    }

    /// The socket closed or failed: frames are buffered from now on.
    pub fn on_disconnected(&mut self) {
        self.connected = false;
    }

    /// Whether frames are currently returned for sending.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Audio waiting in the reconnect buffer, in milliseconds.
    pub fn buffered_ms(&self) -> u64 {
        self.buffer.buffered_ms()
    }

    /// Audio dropped from the reconnect buffer since creation, in milliseconds.
    pub fn dropped_ms_total(&self) -> u64 {
        self.buffer.dropped_ms()
    }

    /// Samples dropped from the reconnect buffer since creation (at the session rate).
    pub fn dropped_samples_total(&self) -> u64 {
        self.buffer.dropped_samples()
    }

    /// Samples handed out for sending (at the session rate) since creation.
    pub fn sent_samples(&self) -> u64 {
        self.sent_samples
    }

    /// Client-side usage estimate from the samples sent, by the spec's pricing (the service's `usage` message is
    /// authoritative).
    pub fn usage(&self) -> Usage {
        Usage::from_decoded_samples(self.sent_samples, self.config.session_rate, self.joined)
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
