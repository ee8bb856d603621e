use super::*;
use crate::realtime::pcm::decode_le_bytes;
use crate::realtime::test_signal::{sine, zero_crossing_frequency};

fn connected(config: PipelineConfig) -> Pipeline {
    let mut p = Pipeline::new(config).unwrap();
    let drained = p.on_connected(config.session_rate).unwrap();
    assert!(drained.frames.is_empty());
    p
}

fn samples_of(frames: &[Vec<u8>]) -> Vec<i16> {
    frames.iter().flat_map(|f| decode_le_bytes(f)).collect()
}

#[test]
fn worklet_blocks_at_44100_become_40_ms_frames_of_1280_bytes() {
    let mut p = connected(PipelineConfig::default());
    let input = sine(440.0, 0.5, 44_100, 1.0);
    let mut frames = Vec::new();
    for block in input.chunks(128) {
        frames.extend(p.push_f32(block, 44_100).unwrap());
    }
    // floor(44100 * 16000 / 44100) = 16000 samples = 25 frames of 640.
    assert_eq!(frames.len(), 25);
    assert!(frames.iter().all(|f| f.len() == 1_280));
    assert_eq!(p.sent_samples(), 16_000);
    let pcm: Vec<f32> = samples_of(&frames)[800..]
        .iter()
        .map(|&s| f32::from(s) / 32_768.0)
        .collect();
    let f = zero_crossing_frequency(&pcm, 16_000);
    assert!((f - 440.0).abs() < 0.2, "{f}");
}

#[test]
fn int16_input_at_the_session_rate_passes_through_bit_exact() {
    let mut p = connected(PipelineConfig::default());
    let input: Vec<i16> = (0..3_200)
        .map(|i| ((i * 7919) % 65_536 - 32_768) as i16)
        .collect();
    let mut frames = p.push_i16(&input, 16_000).unwrap();
    frames.extend(p.stop());
    assert_eq!(samples_of(&frames), input);
    assert_eq!(frames.len(), 5);
}

#[test]
fn float_input_beyond_full_scale_and_nan_is_clipped_or_silenced() {
    let mut p = connected(PipelineConfig::default());
    let mut input = vec![2.0_f32; 320];
    input.extend(vec![f32::NAN; 160]);
    input.extend(vec![f32::NEG_INFINITY; 160]);
    let frames = p.push_f32(&input, 16_000).unwrap();
    let out = samples_of(&frames);
    assert_eq!(out.len(), 640);
    assert!(out[..320].iter().all(|&s| s == 32_767));
    assert!(out[320..].iter().all(|&s| s == 0));
}

#[test]
fn stop_emits_the_tail_and_the_last_partial_frame() {
    let mut p = connected(PipelineConfig::default());
    let input = sine(440.0, 0.5, 48_000, 0.5);
    let mut frames = p.push_f32(&input, 48_000).unwrap();
    assert_eq!(frames.len(), 12); // 8000 samples: 12 frames + 320 pending
    let tail = p.stop();
    assert_eq!(tail.len(), 1);
    frames.extend(tail);
    let latency = Resampler::new(48_000, 16_000)
        .unwrap()
        .latency_input_samples() as u64;
    let expected = ((24_000 + latency) * 16_000).div_ceil(48_000);
    assert_eq!(samples_of(&frames).len() as u64, expected);
    assert!(p.stop().is_empty());
}

#[test]
fn frames_captured_while_disconnected_are_sent_first_on_connect() {
    let config = PipelineConfig::default();
    let mut p = Pipeline::new(config).unwrap();
    let input: Vec<i16> = (0..16_000).map(|i| (i % 1_000) as i16).collect();
    assert!(p.push_i16(&input[..8_000], 16_000).unwrap().is_empty());
    assert_eq!(p.buffered_ms(), 480);
    let drained = p.on_connected(16_000).unwrap();
    assert_eq!(drained.dropped_ms, 0);
    let mut frames = drained.frames;
    frames.extend(p.push_i16(&input[8_000..], 16_000).unwrap());
    frames.extend(p.stop());
    assert_eq!(samples_of(&frames), input);
    assert_eq!(p.sent_samples(), 16_000);
}

#[test]
fn a_long_outage_keeps_the_last_ten_seconds_and_reports_the_drop() {
    let mut p = connected(PipelineConfig::default());
    p.on_disconnected();
    assert!(!p.is_connected());
    let second: Vec<i16> = vec![100; 16_000];
    for _ in 0..15 {
        assert!(p.push_i16(&second, 16_000).unwrap().is_empty());
    }
    assert_eq!(p.buffered_ms(), 10_000);
    let drained = p.on_connected(16_000).unwrap();
    assert_eq!(drained.frames.len(), 250);
    assert_eq!(drained.dropped_ms, 5_000);
    assert_eq!(p.dropped_ms_total(), 5_000);
    // The next outage reports only its own drop.
    p.on_disconnected();
    p.push_i16(&second, 16_000).unwrap();
    assert_eq!(p.on_connected(16_000).unwrap().dropped_ms, 0);
}

#[test]
fn a_server_rate_other_than_the_session_rate_is_unsupported_audio_format() {
    let mut p = Pipeline::new(PipelineConfig::default()).unwrap();
    let error = p.on_connected(24_000).unwrap_err();
    assert_eq!(error.code(), "unsupported_audio_format");
    assert!(!p.is_connected());
}

#[test]
fn input_rates_out_of_range_are_unsupported_audio_format_and_keep_the_stream() {
    let mut p = connected(PipelineConfig::default());
    p.push_f32(&vec![0.1; 300], 44_100).unwrap();
    for rate in [0, 7_999, 192_001] {
        assert_eq!(
            p.push_f32(&[0.0; 128], rate).unwrap_err().code(),
            "unsupported_audio_format"
        );
    }
    // The 44.1 kHz stream continues where it was.
    let frames = p.push_f32(&vec![0.1; 44_100 - 300], 44_100).unwrap();
    assert_eq!(frames.len(), 25);
}

#[test]
fn bad_configs_are_unsupported_audio_format() {
    for config in [
        PipelineConfig {
            session_rate: 96_000,
            ..PipelineConfig::default()
        },
        PipelineConfig {
            session_rate: 4_000,
            ..PipelineConfig::default()
        },
        PipelineConfig {
            frame_ms: 10,
            ..PipelineConfig::default()
        },
        PipelineConfig {
            frame_ms: 200,
            ..PipelineConfig::default()
        },
    ] {
        assert_eq!(
            Pipeline::new(config).unwrap_err().code(),
            "unsupported_audio_format"
        );
    }
}

#[test]
fn stereo_is_averaged_when_downmixing_and_refused_otherwise() {
    let mut p = connected(PipelineConfig::default());
    let stereo: Vec<f32> = (0..640).flat_map(|_| [0.5_f32, 0.0]).collect();
    let frames = p.push_interleaved_f32(&stereo, 2, 16_000).unwrap();
    assert!(samples_of(&frames).iter().all(|&s| s == 8_192));

    let mut strict = connected(PipelineConfig {
        downmix: false,
        ..PipelineConfig::default()
    });
    assert_eq!(
        strict
            .push_interleaved_f32(&stereo, 2, 16_000)
            .unwrap_err()
            .code(),
        "unsupported_audio_format"
    );
    assert_eq!(
        strict
            .push_interleaved_f32(&stereo[..640], 1, 16_000)
            .unwrap()
            .len(),
        1
    );
    for (samples, channels) in [(&stereo[..3], 2), (&stereo[..], 0), (&stereo[..], 33)] {
        assert_eq!(
            p.push_interleaved_f32(samples, channels, 16_000)
                .unwrap_err()
                .code(),
            "unsupported_audio_format"
        );
    }
}

#[test]
fn a_change_of_input_rate_closes_the_old_stream_and_continues() {
    let mut p = connected(PipelineConfig::default());
    let mut frames = p.push_f32(&sine(440.0, 0.5, 48_000, 0.5), 48_000).unwrap();
    frames.extend(p.push_f32(&sine(440.0, 0.5, 44_100, 0.5), 44_100).unwrap());
    frames.extend(p.stop());
    let total = samples_of(&frames).len() as u64;
    let l48 = Resampler::new(48_000, 16_000)
        .unwrap()
        .latency_input_samples() as u64;
    let l44 = Resampler::new(44_100, 16_000)
        .unwrap()
        .latency_input_samples() as u64;
    let expected =
        ((24_000 + l48) * 16_000).div_ceil(48_000) + ((22_050 + l44) * 16_000).div_ceil(44_100);
    assert_eq!(total, expected);
}

#[test]
fn usage_counts_sent_audio_by_started_minute() {
    let mut p = Pipeline::new(PipelineConfig::default()).unwrap();
    assert_eq!(p.usage().credits, 0);
    p.on_connected(16_000).unwrap();
    assert_eq!(
        p.usage(),
        Usage {
            started_minutes: 0,
            credits: 5
        }
    );
    p.push_i16(&vec![0; 16_000 * 61], 16_000).unwrap();
    assert_eq!(
        p.usage(),
        Usage {
            started_minutes: 2,
            credits: 9
        }
    );
}
