//! Cuts the PCM16 stream into fixed frames of N milliseconds; the remainder waits for the next call.

use super::error::RealtimeError;
use super::pcm;

/// Shortest accepted frame, in milliseconds.
pub const MIN_FRAME_MS: u32 = 20;
/// Longest accepted frame, in milliseconds.
pub const MAX_FRAME_MS: u32 = 100;
/// Default frame length, in milliseconds.
pub const DEFAULT_FRAME_MS: u32 = 40;

/// A framer for one sample rate and frame length.
///
/// A frame holds `floor(sample_rate * frame_ms / 1000)` samples (exact for every rate that is a multiple of
/// 50 Hz, which covers 8, 11.025, 16, 22.05, 24, 32, 44.1 and 48 kHz).
#[derive(Clone)]
pub struct Framer {
    samples_per_frame: usize,
    pending: Vec<i16>,
}

impl std::fmt::Debug for Framer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Framer")
            .field("samples_per_frame", &self.samples_per_frame)
            .field("pending_samples", &self.pending.len())
            .finish()
    }
}

impl Framer {
    /// A framer cutting `frame_ms` frames of audio at `sample_rate` Hz.
    ///
    /// # Errors
    /// `unsupported_audio_format` when `frame_ms` is outside 20..=100 or `sample_rate` is 0.
    pub fn new(sample_rate: u32, frame_ms: u32) -> Result<Self, RealtimeError> {
        if !(MIN_FRAME_MS..=MAX_FRAME_MS).contains(&frame_ms) {
            return Err(RealtimeError::unsupported(format!(
                "frame length {frame_ms} ms is outside {MIN_FRAME_MS}..={MAX_FRAME_MS} ms"
            )));
        }
        let samples = u64::from(sample_rate) * u64::from(frame_ms) / 1_000;
        if samples == 0 {
            return Err(RealtimeError::unsupported("sample rate 0 Hz"));
        }
        Ok(Self {
            samples_per_frame: usize::try_from(samples).unwrap_or(usize::MAX),
            pending: Vec::new(),
        })
    }

    /// Samples in a full frame.
    pub fn samples_per_frame(&self) -> usize {
        self.samples_per_frame
    }

    /// Bytes in a full frame (two per sample).
    pub fn frame_bytes(&self) -> usize {
        self.samples_per_frame * 2
    }

    /// Samples waiting for the next frame.
    pub fn pending_samples(&self) -> usize {
        self.pending.len()
    }

    /// Adds samples; returns every frame completed, as PCM16 little-endian bytes.
    pub fn push(&mut self, samples: &[i16]) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        let mut rest = samples;
        if !self.pending.is_empty() {
            let need = self.samples_per_frame - self.pending.len();
            let (head, tail) = rest.split_at(need.min(rest.len()));
            self.pending.extend_from_slice(head);
            rest = tail;
            if self.pending.len() < self.samples_per_frame {
                return frames;
            }
            frames.push(pcm::i16_to_le_bytes(&self.pending));
            self.pending.clear();
        }
        let mut chunks = rest.chunks_exact(self.samples_per_frame);
        for chunk in chunks.by_ref() {
            frames.push(pcm::i16_to_le_bytes(chunk));
        }
        self.pending.extend_from_slice(chunks.remainder());
        frames
    }

    /// The last partial frame, if any samples are pending (used at stop).
    pub fn flush(&mut self) -> Option<Vec<u8>> {
        if self.pending.is_empty() {
            return None;
        }
        let frame = pcm::i16_to_le_bytes(&self.pending);
        self.pending.clear();
        Some(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_frames_at_16000_hold_640_samples_of_1280_bytes() {
        let framer = Framer::new(16_000, DEFAULT_FRAME_MS).unwrap();
        assert_eq!(framer.samples_per_frame(), 640);
        assert_eq!(framer.frame_bytes(), 1_280);
        assert_eq!(Framer::new(44_100, 20).unwrap().samples_per_frame(), 882);
        assert_eq!(Framer::new(8_000, 100).unwrap().samples_per_frame(), 800);
    }

    #[test]
    fn small_pushes_accumulate_into_whole_frames_in_order() {
        let mut framer = Framer::new(16_000, 20).unwrap(); // 320 samples
        let input: Vec<i16> = (0..1_000).map(|i| i as i16).collect();
        let mut frames = Vec::new();
        for block in input.chunks(43) {
            frames.extend(framer.push(block));
        }
        assert_eq!(frames.len(), 3);
        assert!(frames.iter().all(|f| f.len() == 640));
        assert_eq!(framer.pending_samples(), 40);
        let last = framer.flush().unwrap();
        assert_eq!(last.len(), 80);
        assert_eq!(framer.flush(), None);
        let joined: Vec<i16> = frames
            .iter()
            .chain([&last])
            .flat_map(|f| pcm::decode_le_bytes(f))
            .collect();
        assert_eq!(joined, input);
    }

    #[test]
    fn one_large_push_gives_many_frames_and_keeps_the_remainder() {
        let mut framer = Framer::new(16_000, 40).unwrap();
        let frames = framer.push(&vec![7_i16; 640 * 5 + 1]);
        assert_eq!(frames.len(), 5);
        assert_eq!(framer.pending_samples(), 1);
        assert!(framer.push(&[]).is_empty());
    }

    #[test]
    fn flush_of_an_empty_framer_gives_nothing() {
        assert_eq!(Framer::new(16_000, 40).unwrap().flush(), None);
    }

    #[test]
    fn frame_lengths_outside_20_to_100_ms_are_unsupported_audio_format() {
        for ms in [0, 19, 101, 1_000] {
            assert_eq!(
                Framer::new(16_000, ms).unwrap_err().code(),
                "unsupported_audio_format"
            );
        }
        assert_eq!(
            Framer::new(0, 40).unwrap_err().code(),
            "unsupported_audio_format"
        );
    }
}
