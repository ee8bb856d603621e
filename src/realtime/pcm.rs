//! PCM16 little-endian conversion: `f32` in [-1, 1] to `i16` with clipping, `i16` passthrough, decoding.
//!
//! Scale: `i16 = round(f32 * 32768)` clamped to `-32768..=32767`, and back `f32 = i16 / 32768`, so an `Int16Array`
//! routed through the `f32` path comes out bit-identical. NaN maps to 0; +-infinity and anything beyond +-1 clip.

/// One `f32` sample to PCM16 with clipping; NaN gives 0.
pub fn f32_to_i16(sample: f32) -> i16 {
    if sample.is_nan() {
        return 0;
    }
    let scaled = (sample * 32_768.0).round();
    // The clamp keeps the value inside i16, so the cast is exact.
    scaled.clamp(-32_768.0, 32_767.0) as i16
}

/// One PCM16 sample to `f32` in [-1, 1).
pub fn i16_to_f32(sample: i16) -> f32 {
    f32::from(sample) / 32_768.0
}

/// `f32` samples to PCM16, appended to `out`.
pub fn encode_f32(samples: &[f32], out: &mut Vec<i16>) {
    out.extend(samples.iter().map(|&s| f32_to_i16(s)));
}

/// `i16` samples as little-endian bytes (the socket's binary frame payload).
pub fn i16_to_le_bytes(samples: &[i16]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(samples.len() * 2);
    for s in samples {
        bytes.extend_from_slice(&s.to_le_bytes());
    }
    bytes
}

/// `f32` samples straight to PCM16 little-endian bytes, with clipping.
pub fn f32_to_le_bytes(samples: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(samples.len() * 2);
    for &s in samples {
        bytes.extend_from_slice(&f32_to_i16(s).to_le_bytes());
    }
    bytes
}

/// Decodes PCM16 little-endian bytes; a trailing odd byte is ignored.
pub fn decode_le_bytes(bytes: &[u8]) -> Vec<i16> {
    bytes
        .chunks_exact(2)
        .map(|pair| match pair {
            [lo, hi] => i16::from_le_bytes([*lo, *hi]),
            _ => 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_beyond_full_scale_clip_to_the_i16_range() {
        assert_eq!(f32_to_i16(1.0), 32_767);
        assert_eq!(f32_to_i16(1.5), 32_767);
        assert_eq!(f32_to_i16(f32::INFINITY), 32_767);
        assert_eq!(f32_to_i16(f32::MAX), 32_767);
        assert_eq!(f32_to_i16(-1.0), -32_768);
        assert_eq!(f32_to_i16(-7.0), -32_768);
        assert_eq!(f32_to_i16(f32::NEG_INFINITY), -32_768);
    }

    #[test]
    fn nan_encodes_as_silence() {
        assert_eq!(f32_to_i16(f32::NAN), 0);
        assert_eq!(f32_to_le_bytes(&[f32::NAN, -f32::NAN]), vec![0, 0, 0, 0]);
    }

    #[test]
    fn in_range_samples_round_to_nearest() {
        assert_eq!(f32_to_i16(0.0), 0);
        assert_eq!(f32_to_i16(0.5), 16_384);
        assert_eq!(f32_to_i16(-0.5), -16_384);
        assert_eq!(f32_to_i16(1.4 / 32_768.0), 1);
        assert_eq!(f32_to_i16(1.6 / 32_768.0), 2);
    }

    #[test]
    fn every_i16_survives_the_f32_path_unchanged() {
        for v in i16::MIN..=i16::MAX {
            assert_eq!(f32_to_i16(i16_to_f32(v)), v);
        }
    }

    #[test]
    fn bytes_are_little_endian_and_decode_back() {
        let samples = [0x0102_i16, -2, i16::MIN, i16::MAX];
        let bytes = i16_to_le_bytes(&samples);
        assert_eq!(bytes, vec![0x02, 0x01, 0xFE, 0xFF, 0x00, 0x80, 0xFF, 0x7F]);
        assert_eq!(decode_le_bytes(&bytes), samples);
        assert_eq!(decode_le_bytes(&[1, 2, 3]), vec![0x0201]);
        let mut encoded = Vec::new();
        encode_f32(&[0.5, -1.0], &mut encoded);
        assert_eq!(i16_to_le_bytes(&encoded), f32_to_le_bytes(&[0.5, -1.0]));
    }
}
