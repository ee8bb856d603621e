//! CPU time to resample, encode and frame one second of audio with the realtime pipeline (native).
//!
//! Run: `cargo bench -p docauto --bench realtime`. No framework: `std::time::Instant`, median of rounds.
//! The input arrives as an AudioWorklet delivers it: blocks of 128 `f32` samples.

use std::hint::black_box;
use std::time::{Duration, Instant};

use docauto::realtime::{Pipeline, PipelineConfig, RealtimeError, Resampler};

const ROUNDS: usize = 31;

fn tone(rate: u32) -> Vec<f32> {
    (0..rate)
        .map(|i| {
            let t = f64::from(i) / f64::from(rate);
            (0.5 * (2.0 * std::f64::consts::PI * 440.0 * t).sin()
                + 0.2 * (2.0 * std::f64::consts::PI * 3_100.0 * t).sin()) as f32
        })
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// One second of `rate` audio through a connected pipeline, in 128-sample blocks.
fn pipeline_second(rate: u32) -> Result<Duration, RealtimeError> {
    let input = tone(rate);
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let mut pipeline = Pipeline::new(PipelineConfig::default())?;
        pipeline.on_connected(16_000)?;
        // Build the filter outside the timed part (done once per session).
        pipeline.push_f32(&[], rate)?;
        let start = Instant::now();
        let mut bytes = 0usize;
        for block in input.chunks(128) {
            for frame in pipeline.push_f32(black_box(block), rate)? {
                bytes += frame.len();
            }
        }
        times.push(start.elapsed());
        black_box(bytes);
    }
    Ok(median(times))
}

/// One second of `rate` audio through the resampler alone, in 128-sample blocks.
fn resampler_second(rate: u32) -> Result<Duration, RealtimeError> {
    let input = tone(rate);
    let mut times = Vec::with_capacity(ROUNDS);
    let mut out = Vec::with_capacity(20_000);
    for _ in 0..ROUNDS {
        let mut resampler = Resampler::new(rate, 16_000)?;
        out.clear();
        let start = Instant::now();
        for block in input.chunks(128) {
            resampler.process(black_box(block), &mut out);
        }
        times.push(start.elapsed());
        black_box(&out);
    }
    Ok(median(times))
}

fn design_time(rate: u32) -> Result<Duration, RealtimeError> {
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        black_box(Resampler::new(black_box(rate), 16_000)?);
        times.push(start.elapsed());
    }
    Ok(median(times))
}

/// Output level (dB relative to the input) of a 1 s tone at `frequency`, warm-up excluded.
fn tone_gain_db(in_rate: u32, frequency: f64) -> Result<f64, RealtimeError> {
    let input: Vec<f32> = (0..in_rate)
        .map(|i| {
            (0.9 * (2.0 * std::f64::consts::PI * frequency * f64::from(i) / f64::from(in_rate))
                .sin()) as f32
        })
        .collect();
    let mut out = Vec::new();
    Resampler::new(in_rate, 16_000)?.process(&input, &mut out);
    let rms = |s: &[f32]| {
        (s.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>() / s.len().max(1) as f64).sqrt()
    };
    let body = out.get(800..).unwrap_or_default();
    Ok(20.0 * (rms(body).max(1e-300) / rms(&input)).log10())
}

fn main() -> Result<(), RealtimeError> {
    println!("realtime pipeline, native, median of {ROUNDS} rounds, 128-sample blocks, to 16 kHz PCM16 40 ms frames");
    for rate in [48_000, 44_100] {
        let taps = Resampler::new(rate, 16_000)?.taps();
        let full = pipeline_second(rate)?;
        let resample = resampler_second(rate)?;
        let design = design_time(rate)?;
        println!(
            "{rate} Hz ({taps} taps): resample+encode+frame 1 s = {:.3} ms (realtime x{:.0}); resample only = {:.3} ms; filter design = {:.3} ms",
            full.as_secs_f64() * 1e3,
            1.0 / full.as_secs_f64(),
            resample.as_secs_f64() * 1e3,
            design.as_secs_f64() * 1e3,
        );
    }
    for rate in [48_000, 44_100] {
        let mut line = format!("{rate} Hz -> 16 kHz tone gain:");
        for frequency in [
            1_000.0, 6_000.0, 7_000.0, 8_000.0, 8_400.0, 10_000.0, 12_000.0, 20_000.0,
        ] {
            line.push_str(&format!(
                " {frequency} Hz {:.1} dB;",
                tone_gain_db(rate, frequency)?
            ));
        }
        println!("{line}");
    }
    Ok(())
}
