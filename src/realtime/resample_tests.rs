use super::*;
use crate::realtime::test_signal::{
    db, goertzel_amplitude, rms, sine, zero_crossing_frequency, SplitMix64,
};

/// Runs `input` through a fresh resampler in chunks of `chunk` samples.
fn resample_chunked(input: &[f32], in_rate: u32, out_rate: u32, chunk: usize) -> Vec<f32> {
    let mut r = Resampler::new(in_rate, out_rate).unwrap();
    let mut out = Vec::new();
    for block in input.chunks(chunk) {
        r.process(block, &mut out);
    }
    out
}

/// Output with the filter warm-up (start) cut off.
fn settled(out: &[f32], out_rate: u32) -> &[f32] {
    &out[(out_rate / 20) as usize..]
}

fn assert_tone_kept(in_rate: u32, frequency: f64) {
    let amplitude = 0.5;
    let input = sine(frequency, amplitude, in_rate, 2.0);
    let out = resample_chunked(&input, in_rate, 16_000, 128);
    let body = settled(&out, 16_000);
    let measured = zero_crossing_frequency(body, 16_000);
    assert!(
        (measured - frequency).abs() / frequency < 2e-4,
        "{in_rate} Hz: {frequency} Hz tone came out at {measured} Hz"
    );
    let level = db(rms(body) * std::f64::consts::SQRT_2, amplitude);
    assert!(
        level.abs() < 0.05,
        "{in_rate} Hz: {frequency} Hz tone level changed by {level} dB"
    );
    // The spectral peak is at the tone, not a neighbour.
    let at = goertzel_amplitude(body, frequency, 16_000);
    let off = goertzel_amplitude(body, frequency * 1.05, 16_000);
    assert!((at - amplitude).abs() < 0.01, "Goertzel amplitude {at}");
    assert!(db(off, at) < -40.0);
}

#[test]
fn tones_at_44100_resampled_to_16000_keep_their_frequency_and_level() {
    for frequency in [100.0, 440.0, 1_000.0, 3_000.0, 6_000.0] {
        assert_tone_kept(44_100, frequency);
    }
}

#[test]
fn tones_at_48000_resampled_to_16000_keep_their_frequency_and_level() {
    for frequency in [100.0, 440.0, 1_000.0, 3_000.0, 6_000.0] {
        assert_tone_kept(48_000, frequency);
    }
}

fn alias_level_db(in_rate: u32, out_rate: u32, frequency: f64) -> f64 {
    let input = sine(frequency, 0.9, in_rate, 1.0);
    let out = resample_chunked(&input, in_rate, out_rate, 128);
    db(rms(settled(&out, out_rate)), rms(&input))
}

#[test]
fn tones_above_the_output_nyquist_are_attenuated_below_minus_60_db() {
    let cases: [(u32, u32, f64); 11] = [
        (48_000, 16_000, 8_400.0),
        (48_000, 16_000, 10_000.0),
        (48_000, 16_000, 12_000.0),
        (48_000, 16_000, 15_000.0),
        (48_000, 16_000, 20_000.0),
        (44_100, 16_000, 8_400.0),
        (44_100, 16_000, 10_000.0),
        (44_100, 16_000, 12_000.0),
        (44_100, 16_000, 20_000.0),
        (192_000, 8_000, 5_000.0),
        (44_101, 16_000, 10_000.0),
    ];
    for (in_rate, out_rate, frequency) in cases {
        let level = alias_level_db(in_rate, out_rate, frequency);
        assert!(
            level < -60.0,
            "{frequency} Hz in {in_rate} -> {out_rate}: alias at {level:.1} dB"
        );
    }
}

#[test]
fn interpolated_phases_keep_frequency_for_odd_rate_pairs() {
    let r = Resampler::new(44_101, 16_000).unwrap();
    assert!(!r.has_exact_phases());
    assert_eq!(r.ratio(), (16_000, 44_101));
    let input = sine(1_000.0, 0.5, 44_101, 2.0);
    let out = resample_chunked(&input, 44_101, 16_000, 128);
    let body = settled(&out, 16_000);
    let measured = zero_crossing_frequency(body, 16_000);
    assert!((measured - 1_000.0).abs() < 0.2, "{measured}");
    assert!(db(rms(body) * std::f64::consts::SQRT_2, 0.5).abs() < 0.05);
}

#[test]
fn common_rate_pairs_use_exact_phases_and_reduced_ratios() {
    let r = Resampler::new(44_100, 16_000).unwrap();
    assert_eq!(r.ratio(), (160, 441));
    assert!(r.has_exact_phases());
    let r = Resampler::new(48_000, 16_000).unwrap();
    assert_eq!(r.ratio(), (1, 3));
    assert_eq!(r.latency_input_samples(), r.taps() / 2);
}

/// Pushes `seconds` of noise in random chunk sizes and checks the exact output count after every chunk.
fn assert_exact_counts(in_rate: u32, out_rate: u32, seconds: u64, seed: u64) {
    let mut rng = SplitMix64::new(seed);
    let mut r = Resampler::new(in_rate, out_rate).unwrap();
    let total = seconds * u64::from(in_rate);
    let block: Vec<f32> = (0..8192).map(|_| rng.signed_unit() * 0.5).collect();
    let mut out = Vec::new();
    let mut produced = 0u64;
    let mut fed = 0u64;
    while fed < total {
        let n = rng.range(1, 4096).min((total - fed) as usize);
        let offset = rng.range(0, block.len() - n);
        out.clear();
        r.process(&block[offset..offset + n], &mut out);
        fed += n as u64;
        produced += out.len() as u64;
        let expected = fed * u64::from(out_rate) / u64::from(in_rate);
        assert_eq!(
            produced, expected,
            "{in_rate} -> {out_rate} after {fed} input samples"
        );
        assert_eq!(r.total_out(), expected);
    }
    assert_eq!(r.total_in(), total);
}

#[test]
fn sample_count_is_exact_over_ten_minutes_of_random_chunks_at_44100() {
    assert_exact_counts(44_100, 16_000, 600, 0x5EED_0001);
}

#[test]
fn sample_count_is_exact_over_long_runs_for_other_rate_pairs() {
    for (i, (in_rate, out_rate)) in [
        (48_000, 16_000),
        (22_050, 16_000),
        (8_000, 16_000),
        (11_025, 48_000),
        (192_000, 8_000),
        (44_101, 16_000),
        (16_000, 16_000),
    ]
    .into_iter()
    .enumerate()
    {
        assert_exact_counts(in_rate, out_rate, 20, 0x5EED_0100 + i as u64);
    }
}

#[test]
fn chunked_output_equals_one_shot_output_sample_by_sample() {
    let mut rng = SplitMix64::new(0x5EED_0002);
    for (in_rate, out_rate) in [
        (44_100, 16_000),
        (48_000, 16_000),
        (8_000, 16_000),
        (44_101, 16_000),
    ] {
        let mut input = sine(997.0, 0.7, in_rate, 3.0);
        for s in input.iter_mut() {
            *s += rng.signed_unit() * 0.1;
        }
        let mut one_shot = Vec::new();
        Resampler::new(in_rate, out_rate)
            .unwrap()
            .process(&input, &mut one_shot);

        let mut r = Resampler::new(in_rate, out_rate).unwrap();
        let mut chunked = Vec::new();
        let mut rest = &input[..];
        while !rest.is_empty() {
            let n = rng.range(0, 700).min(rest.len());
            r.process(&rest[..n], &mut chunked);
            rest = &rest[n..];
        }
        assert_eq!(chunked.len(), one_shot.len());
        for (i, (a, b)) in chunked.iter().zip(&one_shot).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{in_rate} -> {out_rate}: sample {i} differs"
            );
        }
    }
}

#[test]
fn a_worklet_stream_of_128_sample_blocks_has_no_jump_at_block_borders() {
    // The largest step between consecutive samples of a 1 kHz sine at 16 kHz is 2*pi*1000/16000*A.
    let amplitude = 0.8;
    let input = sine(1_000.0, amplitude, 44_100, 1.0);
    let out = resample_chunked(&input, 44_100, 16_000, 128);
    let limit = 2.0 * std::f64::consts::PI * 1_000.0 / 16_000.0 * amplitude * 1.001;
    for pair in settled(&out, 16_000).windows(2) {
        assert!(f64::from((pair[1] - pair[0]).abs()) <= limit);
    }
}

#[test]
fn constant_input_gives_constant_output_for_every_phase() {
    let input = vec![0.25_f32; 44_100];
    let out = resample_chunked(&input, 44_100, 16_000, 128);
    for &s in settled(&out, 16_000) {
        assert!((s - 0.25).abs() < 1e-5, "{s}");
    }
}

#[test]
fn finish_emits_the_delayed_tail_and_resets_the_stream() {
    let input = sine(440.0, 0.5, 48_000, 0.5);
    let mut r = Resampler::new(48_000, 16_000).unwrap();
    let mut first = Vec::new();
    r.process(&input, &mut first);
    assert_eq!(first.len(), 8_000);
    r.finish(&mut first);
    let latency = r.latency_input_samples() as u64;
    let expected = ((input.len() as u64 + latency) * 16_000).div_ceil(48_000);
    assert_eq!(first.len() as u64, expected);
    assert_eq!((r.total_in(), r.total_out()), (0, 0));

    let mut second = Vec::new();
    r.process(&input, &mut second);
    r.finish(&mut second);
    assert_eq!(first, second);
}

#[test]
fn the_tail_holds_the_end_of_the_input() {
    // A burst at the very end of the input must appear only after finish().
    let mut input = vec![0.0_f32; 4_800];
    input.extend(sine(1_000.0, 0.5, 48_000, 0.001));
    let mut r = Resampler::new(48_000, 16_000).unwrap();
    let mut out = Vec::new();
    r.process(&input, &mut out);
    let before = out.len();
    r.finish(&mut out);
    let tail_energy = rms(&out[before..]);
    assert!(tail_energy > 0.05, "tail rms {tail_energy}");
}

#[test]
fn equal_rates_pass_samples_through_unchanged() {
    let input = sine(440.0, 0.5, 16_000, 0.1);
    let out = resample_chunked(&input, 16_000, 16_000, 100);
    assert_eq!(out, input);
    assert_eq!(
        Resampler::new(16_000, 16_000)
            .unwrap()
            .latency_input_samples(),
        0
    );
}

#[test]
fn rates_out_of_range_are_unsupported_audio_format() {
    for (in_rate, out_rate) in [
        (7_999, 16_000),
        (192_001, 16_000),
        (44_100, 7_999),
        (44_100, 48_001),
        (0, 16_000),
    ] {
        let error = Resampler::new(in_rate, out_rate).unwrap_err();
        assert_eq!(error.code(), "unsupported_audio_format");
    }
    assert!(Resampler::new(192_000, 48_000).is_ok());
    assert!(Resampler::new(8_000, 8_000).is_ok());
}

#[test]
fn upsampling_8000_to_16000_keeps_the_tone_and_rejects_its_image() {
    let input = sine(3_000.0, 0.5, 8_000, 2.0);
    let out = resample_chunked(&input, 8_000, 16_000, 128);
    let body = settled(&out, 16_000);
    let at = goertzel_amplitude(body, 3_000.0, 16_000);
    let image = goertzel_amplitude(body, 5_000.0, 16_000);
    assert!((at - 0.5).abs() < 0.01, "{at}");
    assert!(db(image, at) < -60.0, "image at {:.1} dB", db(image, at));
    let measured = zero_crossing_frequency(body, 16_000);
    assert!((measured - 3_000.0).abs() < 0.5, "{measured}");
}

#[test]
fn debug_output_is_a_summary_not_the_sample_buffers() {
    let mut r = Resampler::new(44_100, 16_000).unwrap();
    let mut out = Vec::new();
    r.process(&[0.0; 4_096], &mut out);
    let text = format!("{r:?}");
    assert!(text.contains("taps") && text.len() < 300, "{text}");
}

#[test]
fn the_sine_of_the_filter_design_matches_the_platform_sine() {
    // `sin_pi` replaces `f64::sin` in the kernel (smaller wasm); over the arguments the kernel uses (|x| up to
    // about 30 for 192 kHz -> 8 kHz) it stays within the rounding of `PI * x` itself (about 2e-16 |PI x|).
    let mut worst = 0.0_f64;
    for i in -40_000..=40_000 {
        let x = f64::from(i) * 0.000_77 + 0.000_013;
        let want = (std::f64::consts::PI * x).sin();
        worst = worst.max((sin_pi(x) - want).abs() / (1.0 + x.abs()));
    }
    assert!(worst < 1e-15, "largest difference {worst:e}");
    assert_eq!(sin_pi(0.0), 0.0);
    assert!((sin_pi(0.5) - 1.0).abs() < 1e-16);
    assert!((sin_pi(-1.5) - 1.0).abs() < 1e-16);
    assert!(sin_pi(7.0).abs() < 1e-15);
}
