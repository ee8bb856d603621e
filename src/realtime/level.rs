//! Audio level of one block, for meters: RMS and peak in dBFS (0 dBFS is a full-scale square wave's RMS and
//! peak; a full-scale sine has an RMS of -3.01 dBFS).

/// The floor reported for digital silence, in dBFS (instead of minus infinity, which JSON cannot carry).
pub const MIN_DBFS: f64 = -100.0;

/// RMS and peak of one block of samples. In JS the `detail` of `level` (computed only once a `level` listener was
/// added): the level of one block of audio (about 20 ms from the microphone), in dBFS: -100 for digital silence, at
/// most 0 (float input beyond full scale counts as full scale, as it clips when converted to PCM16; 0 means the
/// input clips).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(rename = "RealtimeLevel", rename_all = "camelCase")
)]
pub struct Level {
    /// Root mean square, in dBFS, at least -100 (`MIN_DBFS`).
    pub rms_dbfs: f64,
    /// Largest absolute sample, in dBFS, at least -100 (`MIN_DBFS`).
    pub peak_dbfs: f64,
}

fn dbfs(amplitude: f64) -> f64 {
    if amplitude > 0.0 {
        (20.0 * amplitude.log10()).max(MIN_DBFS)
    } else {
        MIN_DBFS
    }
}

impl Level {
    /// The level of `samples` (nominally in [-1, 1]; non-finite samples count as 0). An empty block is silence.
    ///
    /// Float audio can exceed full scale (a browser's capture graph does not clip); such samples count as full
    /// scale, as they are clipped when converted to the PCM16 the service receives. So a level is never above
    /// 0 dBFS, and 0 dBFS means the input clips.
    pub fn of_f32(samples: &[f32]) -> Self {
        Self::of_normalized(
            samples.iter().map(|&s| {
                if s.is_finite() {
                    f64::from(s.clamp(-1.0, 1.0))
                } else {
                    0.0
                }
            }),
            samples.len(),
        )
    }

    /// The level of PCM16 samples (full scale 32 768).
    pub fn of_i16(samples: &[i16]) -> Self {
        Self::of_normalized(
            samples.iter().map(|&s| f64::from(s) / 32_768.0),
            samples.len(),
        )
    }

    /// RMS and peak of `len` samples already scaled to full scale 1.0.
    fn of_normalized(samples: impl Iterator<Item = f64>, len: usize) -> Self {
        let (mut sum, mut peak) = (0.0_f64, 0.0_f64);
        for s in samples {
            sum += s * s;
            peak = peak.max(s.abs());
        }
        let rms = if len == 0 {
            0.0
        } else {
            (sum / len as f64).sqrt()
        };
        Self {
            rms_dbfs: dbfs(rms),
            peak_dbfs: dbfs(peak),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::test_signal::sine;

    #[test]
    fn a_full_scale_sine_is_minus_3_dbfs_rms_and_0_dbfs_peak() {
        let level = Level::of_f32(&sine(1_000.0, 1.0, 48_000, 0.5));
        assert!((level.rms_dbfs + 3.0103).abs() < 0.01, "{level:?}");
        assert!(level.peak_dbfs.abs() < 0.01, "{level:?}");
    }

    #[test]
    fn half_amplitude_is_six_db_lower() {
        let level = Level::of_f32(&sine(1_000.0, 0.5, 48_000, 0.5));
        assert!((level.rms_dbfs + 9.0309).abs() < 0.01, "{level:?}");
        assert!((level.peak_dbfs + 6.0206).abs() < 0.01, "{level:?}");
    }

    #[test]
    fn silence_and_empty_blocks_report_the_floor() {
        assert_eq!(Level::of_f32(&[0.0; 128]).rms_dbfs, MIN_DBFS);
        assert_eq!(Level::of_f32(&[]).peak_dbfs, MIN_DBFS);
        assert_eq!(Level::of_f32(&[f32::NAN; 4]).peak_dbfs, MIN_DBFS);
    }

    #[test]
    fn float_samples_beyond_full_scale_clip_at_zero_dbfs() {
        // Chromium's capture graph delivered 1.0009 (peak +0.0075 dBFS) in the e2e suite.
        let level = Level::of_f32(&[1.3, -1.3, 1.0009, -1.5]);
        assert_eq!(level.peak_dbfs, 0.0, "{level:?}");
        assert_eq!(level.rms_dbfs, 0.0, "{level:?}");
    }

    #[test]
    fn pcm16_full_scale_is_zero_dbfs() {
        let level = Level::of_i16(&[i16::MIN, i16::MIN]);
        assert_eq!(level.peak_dbfs, 0.0);
        assert_eq!(level.rms_dbfs, 0.0);
    }
}
