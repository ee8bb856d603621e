//! Streaming rational resampler: windowed-sinc (Kaiser) polyphase filter with integer phase accumulation.
//!
//! The ratio `out_rate / in_rate` is reduced to `up / down` (44 100 -> 16 000 is 160 / 441). Output sample `n`
//! sits at input time `n * down / up`; its integer part and its phase (numerator over `up`) are carried as
//! integers across calls, so there is no drift however long the stream runs, and a chunk border changes nothing:
//! chunked and one-shot processing give bit-identical output.
//!
//! Filter: a low-pass with its passband edge at 0.40 and its stopband edge at 0.50 of the lower of the two rates
//! (so at the output Nyquist when downsampling), 80 dB Kaiser design. Latency is fixed at
//! [`Resampler::latency_input_samples`] input samples (half the filter length): the output stream is the filtered
//! input delayed by that much, which lets [`Resampler::process`] keep the exact count
//! `floor(total_in * out_rate / in_rate)` at every moment. [`Resampler::finish`] emits the delayed tail at stop.
//!
//! When `up` is small enough (every common pair, e.g. 160 phases for 44.1 kHz -> 16 kHz) each phase has its own
//! exact row of coefficients; for odd pairs with very many phases (e.g. 44 101 -> 16 000) the table keeps 256
//! phases and the coefficients of a phase are linearly interpolated between the two nearest rows (error below
//! -90 dB), while the phase itself is still tracked exactly.

use super::error::RealtimeError;

/// Lowest accepted input rate in Hz.
pub const MIN_INPUT_RATE: u32 = 8_000;
/// Highest accepted input rate in Hz.
pub const MAX_INPUT_RATE: u32 = 192_000;
/// Lowest accepted output (session) rate in Hz.
pub const MIN_OUTPUT_RATE: u32 = 8_000;
/// Highest accepted output (session) rate in Hz.
pub const MAX_OUTPUT_RATE: u32 = 48_000;

/// Stopband attenuation the filter is designed for, in dB.
const STOPBAND_DB: f64 = 80.0;
/// Passband edge as a fraction of the lower rate.
const PASSBAND_EDGE: f64 = 0.40;
/// Stopband edge as a fraction of the lower rate (0.5 = its Nyquist frequency).
const STOPBAND_EDGE: f64 = 0.50;
/// Largest exact table (phases x taps, in coefficients) before switching to interpolated phases.
const MAX_EXACT_TABLE: usize = 1 << 19;
/// Rows of the interpolated table (plus one closing row).
const INTERPOLATED_PHASES: u64 = 256;

/// Greatest common divisor (Euclid).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

/// Zeroth-order modified Bessel function of the first kind, by its power series.
fn bessel_i0(x: f64) -> f64 {
    let half = x / 2.0;
    let mut term = 1.0_f64;
    let mut sum = 1.0_f64;
    let mut k = 1.0_f64;
    while term > sum * 1e-16 {
        term *= (half / k) * (half / k);
        sum += term;
        k += 1.0;
    }
    sum
}

/// `sin(PI * x)` for the filter design, without `f64::sin`: on wasm that is compiler-builtins' libm `sin` with its
/// large-argument reduction (about 7 KB of code). `x` is reduced exactly to `r` in `[-1, 1]` (the period is 2),
/// then to `|y| <= PI / 4` (`sin(PI r) = cos(PI (1/2 - r))` and symmetry), where the Taylor series of `sin` or
/// `cos` is summed to its term of degree 20 or 21 (the next is below 1e-21): within a unit or two in the last
/// place.
fn sin_pi(x: f64) -> f64 {
    let r = x - 2.0 * (x * 0.5 + 0.5).floor();
    let (sign, r) = if r < 0.0 { (-1.0, -r) } else { (1.0, r) };
    // sin(PI r) = sin(PI (1 - r)) brings r into [0, 1/2].
    let r = if r > 0.5 { 1.0 - r } else { r };
    let series = |mut term: f64, y2: f64, first: f64| {
        let (mut sum, mut k) = (term, first);
        for _ in 0..10 {
            term *= -y2 / ((k + 1.0) * (k + 2.0));
            sum += term;
            k += 2.0;
        }
        sum
    };
    let pi = std::f64::consts::PI;
    sign * if r <= 0.25 {
        let y = pi * r;
        series(y, y * y, 1.0)
    } else {
        let y = pi * (0.5 - r);
        series(1.0, y * y, 0.0)
    }
}

/// The continuous filter kernel: a Kaiser-windowed sinc in units of input samples.
struct Kernel {
    /// Cutoff in cycles per input sample (the -6 dB point).
    cutoff: f64,
    /// Half width of the window in input samples.
    half_width: f64,
    beta: f64,
    i0_beta: f64,
}

impl Kernel {
    fn at(&self, t: f64) -> f64 {
        if t.abs() > self.half_width {
            return 0.0;
        }
        let x = 2.0 * self.cutoff * t;
        let sinc = if x.abs() < 1e-12 {
            1.0
        } else {
            sin_pi(x) / (std::f64::consts::PI * x)
        };
        let r = t / self.half_width;
        let window = bessel_i0(self.beta * (1.0 - r * r).max(0.0).sqrt()) / self.i0_beta;
        2.0 * self.cutoff * sinc * window
    }
}

/// How coefficients are looked up for a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// Resampling at equal rates: samples are copied.
    Passthrough,
    /// One exact row per phase (`up` rows).
    Exact,
    /// `INTERPOLATED_PHASES + 1` rows; a phase interpolates linearly between two rows.
    Interpolated,
}

/// A streaming resampler from one input rate to one output rate, mono `f32`.
#[derive(Clone)]
pub struct Resampler {
    in_rate: u32,
    out_rate: u32,
    up: u64,
    down: u64,
    taps: usize,
    table: Table,
    coefficients: Vec<f32>,
    /// Input history; `history[cursor]` is the newest input sample the next output uses.
    history: Vec<f32>,
    cursor: usize,
    /// Phase of the next output, a numerator over `up`.
    phase: u64,
    total_in: u64,
    total_out: u64,
}

impl std::fmt::Debug for Resampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resampler")
            .field("in_rate", &self.in_rate)
            .field("out_rate", &self.out_rate)
            .field("up", &self.up)
            .field("down", &self.down)
            .field("taps", &self.taps)
            .field("table", &self.table)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

impl Resampler {
    /// A resampler from `in_rate` to `out_rate` (both in Hz).
    ///
    /// # Errors
    /// `unsupported_audio_format` when `in_rate` is outside 8 000..=192 000 or `out_rate` outside 8 000..=48 000.
    pub fn new(in_rate: u32, out_rate: u32) -> Result<Self, RealtimeError> {
        if !(MIN_INPUT_RATE..=MAX_INPUT_RATE).contains(&in_rate) {
            return Err(RealtimeError::unsupported(format!(
                "input sample rate {in_rate} Hz is outside {MIN_INPUT_RATE}..={MAX_INPUT_RATE} Hz"
            )));
        }
        if !(MIN_OUTPUT_RATE..=MAX_OUTPUT_RATE).contains(&out_rate) {
            return Err(RealtimeError::unsupported(format!(
                "session sample rate {out_rate} Hz is outside {MIN_OUTPUT_RATE}..={MAX_OUTPUT_RATE} Hz"
            )));
        }
        let g = gcd(u64::from(in_rate), u64::from(out_rate));
        let up = u64::from(out_rate) / g;
        let down = u64::from(in_rate) / g;
        let mut resampler = Self {
            in_rate,
            out_rate,
            up,
            down,
            taps: 1,
            table: Table::Passthrough,
            coefficients: Vec::new(),
            history: Vec::new(),
            cursor: 0,
            phase: 0,
            total_in: 0,
            total_out: 0,
        };
        if in_rate != out_rate {
            resampler.design();
        }
        resampler.reset();
        Ok(resampler)
    }

    /// Builds the coefficient table (Kaiser design formulas, e.g. Oppenheim & Schafer, "Discrete-Time Signal
    /// Processing", section 7.6).
    fn design(&mut self) {
        let lower = f64::from(self.in_rate.min(self.out_rate));
        let in_rate = f64::from(self.in_rate);
        let transition = (STOPBAND_EDGE - PASSBAND_EDGE) * lower / in_rate; // cycles per input sample
        let cutoff = (STOPBAND_EDGE + PASSBAND_EDGE) / 2.0 * lower / in_rate;
        let beta = 0.1102 * (STOPBAND_DB - 8.7);
        let length = (STOPBAND_DB - 8.0) / (2.285 * 2.0 * std::f64::consts::PI * transition);
        // Even number of taps, at least 2.
        let taps = ((length.ceil() as usize).div_ceil(2) * 2).max(2);
        let kernel = Kernel {
            cutoff,
            half_width: taps as f64 / 2.0,
            beta,
            i0_beta: bessel_i0(beta),
        };
        let exact_rows = usize::try_from(self.up).unwrap_or(usize::MAX);
        let (table, rows, row_phase_den) = if exact_rows.saturating_mul(taps) <= MAX_EXACT_TABLE {
            (Table::Exact, exact_rows, self.up as f64)
        } else {
            (
                Table::Interpolated,
                INTERPOLATED_PHASES as usize + 1,
                INTERPOLATED_PHASES as f64,
            )
        };
        let mut coefficients = Vec::with_capacity(rows * taps);
        let mut row = vec![0.0_f64; taps];
        let centre = taps as f64 / 2.0 - 1.0;
        for r in 0..rows {
            let phase = r as f64 / row_phase_den;
            for (j, c) in row.iter_mut().enumerate() {
                *c = kernel.at(phase + centre - j as f64);
            }
            // Unit gain at DC for every phase, so a constant input gives a constant output.
            let sum: f64 = row.iter().sum();
            let scale = if sum.abs() > 1e-12 { 1.0 / sum } else { 1.0 };
            coefficients.extend(row.iter().map(|c| (c * scale) as f32));
        }
        self.taps = taps;
        self.table = table;
        self.coefficients = coefficients;
    }

    /// Input rate in Hz.
    pub fn input_rate(&self) -> u32 {
        self.in_rate
    }

    /// Output rate in Hz.
    pub fn output_rate(&self) -> u32 {
        self.out_rate
    }

    /// The reduced ratio `(up, down)`: `out_rate / in_rate == up / down`.
    pub fn ratio(&self) -> (u64, u64) {
        (self.up, self.down)
    }

    /// Filter length in input samples (1 when the rates are equal).
    pub fn taps(&self) -> usize {
        self.taps
    }

    /// Whether every phase has an exact coefficient row (false only for rate pairs with very many phases).
    pub fn has_exact_phases(&self) -> bool {
        self.table != Table::Interpolated
    }

    /// Fixed delay of the output relative to the input, in input samples (0 when the rates are equal).
    pub fn latency_input_samples(&self) -> usize {
        if self.table == Table::Passthrough {
            0
        } else {
            self.taps / 2
        }
    }

    /// Input samples consumed since creation or the last [`finish`](Self::finish).
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Output samples produced since creation or the last [`finish`](Self::finish).
    pub fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Back to the initial state (silence history), keeping the designed filter.
    fn reset(&mut self) {
        self.history.clear();
        let warm = self.taps.saturating_sub(1);
        self.history.resize(warm, 0.0);
        self.cursor = warm;
        self.phase = 0;
        self.total_in = 0;
        self.total_out = 0;
    }

    /// Resamples `input`, appending the output to `output`.
    ///
    /// After the call, [`total_out`](Self::total_out) equals `floor(total_in * out_rate / in_rate)` exactly.
    pub fn process(&mut self, input: &[f32], output: &mut Vec<f32>) {
        self.total_in += input.len() as u64;
        if self.table == Table::Passthrough {
            output.extend_from_slice(input);
            self.total_out += input.len() as u64;
            return;
        }
        self.history.extend_from_slice(input);
        self.emit(output, u64::MAX);
    }

    /// Emits the delayed tail (the last [`latency_input_samples`](Self::latency_input_samples) of input, as if
    /// followed by silence) and resets the resampler for a new stream.
    ///
    /// After the call the stream held `ceil((total_in + latency) * out_rate / in_rate)` output samples in all.
    pub fn finish(&mut self, output: &mut Vec<f32>) {
        if self.table != Table::Passthrough {
            let latency = self.latency_input_samples() as u64;
            let wanted = self
                .total_in
                .saturating_add(latency)
                .saturating_mul(self.up);
            let target = wanted.div_ceil(self.down);
            let step = self.down.div_ceil(self.up) as usize;
            let pad = self.taps + step + 1;
            self.history.resize(self.history.len() + pad, 0.0);
            self.emit(output, target);
        }
        self.reset();
    }

    /// Produces outputs while the input covers them, up to `limit` outputs in total.
    fn emit(&mut self, output: &mut Vec<f32>, limit: u64) {
        let taps = self.taps;
        let available = self.history.len() as u64 * self.up;
        let pending = self.history.len().saturating_sub(self.cursor) as u64 * self.up / self.down;
        output.reserve(usize::try_from(pending).unwrap_or(0) + 1);
        while self.total_out < limit
            && (self.cursor as u64) * self.up + self.phase + self.down <= available
        {
            let start = self.cursor + 1 - taps;
            let Some(window) = self.history.get(start..start + taps) else {
                break;
            };
            let value = match self.table {
                Table::Exact => {
                    let row = self.phase as usize * taps;
                    match self.coefficients.get(row..row + taps) {
                        Some(coefficients) => dot(window, coefficients),
                        None => break,
                    }
                }
                Table::Interpolated => {
                    let position = self.phase * INTERPOLATED_PHASES;
                    let index = (position / self.up) as usize;
                    let fraction = (position % self.up) as f32 / self.up as f32;
                    let row = index * taps;
                    match (
                        self.coefficients.get(row..row + taps),
                        self.coefficients.get(row + taps..row + 2 * taps),
                    ) {
                        (Some(a), Some(b)) => {
                            let ya = dot(window, a);
                            let yb = dot(window, b);
                            ya + fraction * (yb - ya)
                        }
                        _ => break,
                    }
                }
                Table::Passthrough => break,
            };
            output.push(value);
            self.total_out += 1;
            self.phase += self.down;
            self.cursor += (self.phase / self.up) as usize;
            self.phase %= self.up;
        }
        // Drop history no later output needs.
        let keep_from = (self.cursor + 1)
            .saturating_sub(taps)
            .min(self.history.len());
        if keep_from > 0 {
            self.history.drain(..keep_from);
            self.cursor -= keep_from;
        }
    }
}

/// Dot product with eight independent accumulators (lets the compiler use SIMD lanes natively, and keeps
/// unoptimised test builds fast enough).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0_f32; 8];
    let chunks_a = a.chunks_exact(8);
    let chunks_b = b.chunks_exact(8);
    let mut tail = 0.0_f32;
    for (x, y) in chunks_a.remainder().iter().zip(chunks_b.remainder()) {
        tail += x * y;
    }
    for (ca, cb) in chunks_a.zip(chunks_b) {
        if let (Ok(x), Ok(y)) = (<&[f32; 8]>::try_from(ca), <&[f32; 8]>::try_from(cb)) {
            acc[0] += x[0] * y[0];
            acc[1] += x[1] * y[1];
            acc[2] += x[2] * y[2];
            acc[3] += x[3] * y[3];
            acc[4] += x[4] * y[4];
            acc[5] += x[5] * y[5];
            acc[6] += x[6] * y[6];
            acc[7] += x[7] * y[7];
        }
    }
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]) + tail
}

#[cfg(test)]
#[path = "resample_tests.rs"]
mod tests;
