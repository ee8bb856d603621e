//! Reconnect backoff (exponential, capped, with caller-supplied jitter) and the reconnect policy.
//!
//! Sans-IO: the caller draws the jitter (e.g. `Math.random()`), sleeps, and fetches a fresh ticket URL through
//! `getUrl` (tickets are single use). Jitter is "equal jitter": the delay lies in `[d/2, d]` where
//! `d = min(max, initial * 2^attempt)`, so clients that dropped together do not reconnect together, and no delay
//! is ever zero.

use super::error::RealtimeError;

/// Default first delay, in milliseconds.
pub const DEFAULT_INITIAL_MS: u64 = 500;
/// Default delay cap, in milliseconds.
pub const DEFAULT_MAX_MS: u64 = 8_000;
/// Default number of reconnect attempts before giving up.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 6;

/// Exponential backoff, capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    initial_ms: u64,
    max_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(DEFAULT_INITIAL_MS, DEFAULT_MAX_MS)
    }
}

impl Backoff {
    /// Backoff starting at `initial_ms` (at least 1) and never above `max_ms` (at least `initial_ms`).
    pub fn new(initial_ms: u64, max_ms: u64) -> Self {
        let initial_ms = initial_ms.max(1);
        Self {
            initial_ms,
            max_ms: max_ms.max(initial_ms),
        }
    }

    /// Delay before reconnect attempt `attempt` (0 for the first), given `jitter` in [0, 1]
    /// (values outside are clamped, NaN counts as 0).
    pub fn delay_ms(&self, attempt: u32, jitter: f64) -> u64 {
        let factor = 1u64.checked_shl(attempt.min(63)).unwrap_or(u64::MAX);
        let ceiling = self.initial_ms.saturating_mul(factor).min(self.max_ms);
        let jitter = if jitter.is_nan() {
            0.0
        } else {
            jitter.clamp(0.0, 1.0)
        };
        let half = ceiling / 2;
        half + ((ceiling - half) as f64 * jitter).round() as u64
    }
}

/// Counts reconnect attempts and gives up after a maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectPolicy {
    backoff: Backoff,
    max_attempts: u32,
    attempts: u32,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        Self::new(Backoff::default(), DEFAULT_MAX_ATTEMPTS)
    }
}

impl ReconnectPolicy {
    /// A policy making at most `max_attempts` attempts per outage (0 disables reconnecting).
    pub fn new(backoff: Backoff, max_attempts: u32) -> Self {
        Self {
            backoff,
            max_attempts,
            attempts: 0,
        }
    }

    /// Attempts made in the current outage.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Delay before the next attempt, counting it.
    ///
    /// # Errors
    /// `reconnect_failed` once `max_attempts` attempts were made in this outage.
    pub fn next_delay_ms(&mut self, jitter: f64) -> Result<u64, RealtimeError> {
        if self.attempts >= self.max_attempts {
            return Err(RealtimeError::ReconnectFailed {
                attempts: self.attempts,
            });
        }
        let delay = self.backoff.delay_ms(self.attempts, jitter);
        self.attempts += 1;
        Ok(delay)
    }

    /// A connection succeeded (the service sent `open`): the next outage starts again from the first delay.
    pub fn on_connected(&mut self) {
        self.attempts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_until_the_cap() {
        let backoff = Backoff::new(500, 8_000);
        let full: Vec<u64> = (0..8).map(|a| backoff.delay_ms(a, 1.0)).collect();
        assert_eq!(
            full,
            vec![500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000]
        );
        let low: Vec<u64> = (0..6).map(|a| backoff.delay_ms(a, 0.0)).collect();
        assert_eq!(low, vec![250, 500, 1_000, 2_000, 4_000, 4_000]);
    }

    #[test]
    fn jitter_moves_the_delay_within_half_to_full() {
        let backoff = Backoff::new(1_000, 60_000);
        assert_eq!(backoff.delay_ms(0, 0.5), 750);
        assert_eq!(backoff.delay_ms(0, f64::NAN), 500);
        assert_eq!(backoff.delay_ms(0, 7.0), 1_000);
        assert_eq!(backoff.delay_ms(0, -1.0), 500);
    }

    #[test]
    fn huge_attempt_numbers_stay_at_the_cap() {
        let backoff = Backoff::new(500, 8_000);
        assert_eq!(backoff.delay_ms(u32::MAX, 1.0), 8_000);
        assert_eq!(Backoff::new(0, 0).delay_ms(0, 1.0), 1);
    }

    #[test]
    fn the_policy_gives_up_with_reconnect_failed_after_max_attempts() {
        let mut policy = ReconnectPolicy::new(Backoff::new(100, 1_000), 3);
        assert_eq!(policy.next_delay_ms(1.0), Ok(100));
        assert_eq!(policy.next_delay_ms(1.0), Ok(200));
        assert_eq!(policy.next_delay_ms(1.0), Ok(400));
        let error = policy.next_delay_ms(1.0).unwrap_err();
        assert_eq!(error.code(), "reconnect_failed");
        assert_eq!(error, RealtimeError::ReconnectFailed { attempts: 3 });
    }

    #[test]
    fn a_successful_connect_resets_the_attempts() {
        let mut policy = ReconnectPolicy::default();
        policy.next_delay_ms(0.0).unwrap();
        policy.next_delay_ms(0.0).unwrap();
        policy.on_connected();
        assert_eq!(policy.attempts(), 0);
        assert_eq!(policy.next_delay_ms(1.0), Ok(DEFAULT_INITIAL_MS));
    }

    #[test]
    fn zero_max_attempts_never_reconnects() {
        let mut policy = ReconnectPolicy::new(Backoff::default(), 0);
        assert_eq!(
            policy.next_delay_ms(0.5).unwrap_err().code(),
            "reconnect_failed"
        );
    }
}
