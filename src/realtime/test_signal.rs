//! Test helpers: a fixed-seed PRNG, tone generators and measurements (frequency, level).

/// SplitMix64 (Steele, Lea, Flood 2014): small, fixed-seed, good enough to pick chunk sizes and noise.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: usize, high: usize) -> usize {
        low + (self.next_u64() % (high - low + 1) as u64) as usize
    }

    /// Uniform in [-1, 1).
    pub fn signed_unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// `seconds` of a sine of `frequency` Hz and `amplitude` at `rate` Hz.
pub fn sine(frequency: f64, amplitude: f64, rate: u32, seconds: f64) -> Vec<f32> {
    let n = (f64::from(rate) * seconds).round() as usize;
    (0..n)
        .map(|i| {
            (amplitude
                * (2.0 * std::f64::consts::PI * frequency * i as f64 / f64::from(rate)).sin())
                as f32
        })
        .collect()
}

/// Root mean square.
pub fn rms(samples: &[f32]) -> f64 {
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len().max(1) as f64).sqrt()
}

/// Level of `signal` relative to `reference`, in dB.
pub fn db(signal: f64, reference: f64) -> f64 {
    20.0 * (signal.max(1e-300) / reference).log10()
}

/// Frequency from upward zero crossings, each located by linear interpolation.
pub fn zero_crossing_frequency(samples: &[f32], rate: u32) -> f64 {
    let mut first = None;
    let mut last = 0.0;
    let mut count = 0usize;
    for (i, pair) in samples.windows(2).enumerate() {
        let (a, b) = (f64::from(pair[0]), f64::from(pair[1]));
        if a < 0.0 && b >= 0.0 {
            let t = i as f64 + a / (a - b);
            if first.is_none() {
                first = Some(t);
            }
            last = t;
            count += 1;
        }
    }
    let first = first.expect("at least one zero crossing");
    (count - 1) as f64 * f64::from(rate) / (last - first)
}

/// Goertzel power at `frequency` (Hann window), normalised so a full-scale sine of that frequency gives ~0.25.
pub fn goertzel_amplitude(samples: &[f32], frequency: f64, rate: u32) -> f64 {
    let n = samples.len();
    let omega = 2.0 * std::f64::consts::PI * frequency / f64::from(rate);
    let coeff = 2.0 * omega.cos();
    let (mut s1, mut s2) = (0.0_f64, 0.0_f64);
    for (i, &x) in samples.iter().enumerate() {
        let w = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (n - 1) as f64).cos();
        let s0 = f64::from(x) * w + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    // Hann window coherent gain is 0.5: amplitude = 2 * |X| / (0.5 * n).
    4.0 * power.sqrt() / n as f64
}
