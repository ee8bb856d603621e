//! Bounded store for frames captured while the socket is down; the oldest audio goes first when it is full.

use std::collections::VecDeque;

/// Default capacity, in milliseconds of audio.
pub const DEFAULT_BUFFER_MS: u32 = 10_000;

/// Frames waiting for a reconnect, bounded by duration.
///
/// When a push makes the buffer exceed its capacity, whole frames are dropped from the front (the oldest audio)
/// and their duration is counted, so the app can report how much audio the outage cost.
#[derive(Clone)]
pub struct ReconnectBuffer {
    sample_rate: u32,
    capacity_samples: u64,
    frames: VecDeque<Vec<u8>>,
    buffered_samples: u64,
    dropped_samples: u64,
}

impl std::fmt::Debug for ReconnectBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconnectBuffer")
            .field("sample_rate", &self.sample_rate)
            .field("capacity_samples", &self.capacity_samples)
            .field("frames", &self.frames.len())
            .field("buffered_samples", &self.buffered_samples)
            .field("dropped_samples", &self.dropped_samples)
            .finish()
    }
}

impl ReconnectBuffer {
    /// A buffer holding up to `capacity_ms` of PCM16 mono audio at `sample_rate` Hz (0 keeps nothing: every
    /// frame pushed is dropped and counted).
    pub fn new(sample_rate: u32, capacity_ms: u32) -> Self {
        Self {
            sample_rate,
            capacity_samples: u64::from(sample_rate) * u64::from(capacity_ms) / 1_000,
            frames: VecDeque::new(),
            buffered_samples: 0,
            dropped_samples: 0,
        }
    }

    /// Stores one PCM16 frame, dropping the oldest frames while over capacity.
    pub fn push(&mut self, frame: Vec<u8>) {
        self.buffered_samples += samples_in(&frame);
        self.frames.push_back(frame);
        while self.buffered_samples > self.capacity_samples {
            let Some(oldest) = self.frames.pop_front() else {
                break;
            };
            let samples = samples_in(&oldest);
            self.buffered_samples -= samples;
            self.dropped_samples += samples;
        }
    }

    /// Takes every stored frame, oldest first, leaving the buffer empty (the drop count is kept).
    pub fn drain(&mut self) -> Vec<Vec<u8>> {
        self.buffered_samples = 0;
        Vec::from(std::mem::take(&mut self.frames))
    }

    /// Number of stored frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether no frame is stored.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Stored audio, in samples.
    pub fn buffered_samples(&self) -> u64 {
        self.buffered_samples
    }

    /// Stored audio, in whole milliseconds.
    pub fn buffered_ms(&self) -> u64 {
        self.to_ms(self.buffered_samples)
    }

    /// Audio dropped since creation, in samples.
    pub fn dropped_samples(&self) -> u64 {
        self.dropped_samples
    }

    /// Audio dropped since creation, in whole milliseconds.
    pub fn dropped_ms(&self) -> u64 {
        self.to_ms(self.dropped_samples)
    }

    fn to_ms(&self, samples: u64) -> u64 {
        if self.sample_rate == 0 {
            return 0;
        }
        samples * 1_000 / u64::from(self.sample_rate)
    }
}

/// PCM16 samples in a frame of bytes.
fn samples_in(frame: &[u8]) -> u64 {
    (frame.len() / 2) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tag: u8) -> Vec<u8> {
        vec![tag; 1_280] // 640 samples = 40 ms at 16 kHz
    }

    #[test]
    fn frames_drain_in_capture_order() {
        let mut buffer = ReconnectBuffer::new(16_000, DEFAULT_BUFFER_MS);
        for tag in 0..5 {
            buffer.push(frame(tag));
        }
        assert_eq!(buffer.buffered_ms(), 200);
        let drained = buffer.drain();
        assert_eq!(
            drained.iter().map(|f| f[0]).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert!(buffer.is_empty());
        assert_eq!(buffer.buffered_samples(), 0);
        assert_eq!(buffer.dropped_ms(), 0);
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_frames_and_counts_their_duration() {
        let mut buffer = ReconnectBuffer::new(16_000, 200); // room for five 40 ms frames
        for tag in 0..8 {
            buffer.push(frame(tag));
            assert!(buffer.buffered_ms() <= 200);
        }
        assert_eq!(buffer.len(), 5);
        assert_eq!(buffer.dropped_ms(), 120);
        assert_eq!(buffer.dropped_samples(), 3 * 640);
        let drained = buffer.drain();
        assert_eq!(
            drained.iter().map(|f| f[0]).collect::<Vec<_>>(),
            vec![3, 4, 5, 6, 7]
        );
    }

    #[test]
    fn the_default_buffer_holds_ten_seconds_and_no_more() {
        let mut buffer = ReconnectBuffer::new(16_000, DEFAULT_BUFFER_MS);
        for i in 0..1_000u32 {
            buffer.push(frame((i % 256) as u8)); // 40 s of audio
        }
        assert_eq!(buffer.buffered_ms(), 10_000);
        assert_eq!(buffer.len(), 250);
        assert_eq!(buffer.dropped_ms(), 30_000);
    }

    #[test]
    fn drop_count_survives_a_drain_and_keeps_adding_up() {
        let mut buffer = ReconnectBuffer::new(16_000, 40);
        buffer.push(frame(0));
        buffer.push(frame(1));
        assert_eq!(buffer.drain().len(), 1);
        buffer.push(frame(2));
        buffer.push(frame(3));
        assert_eq!(buffer.dropped_ms(), 80);
    }

    #[test]
    fn a_frame_longer_than_the_capacity_is_dropped_and_counted() {
        let mut buffer = ReconnectBuffer::new(16_000, 20);
        buffer.push(frame(9));
        assert!(buffer.is_empty());
        assert_eq!(buffer.dropped_ms(), 40);
    }
}
