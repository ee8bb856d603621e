//! Credits by the spec's realtime pricing, from decoded sample counts.
//!
//! Spec, "Realtime transcription": 5 credits when the first decoder joins (or when an unconnected session
//! expires), then 2 credits per started minute of decoded audio; a session failing on the service side is free.
//! The client can only see the first two cases from its side: an expiry without connection and service-side
//! failures are settled by the service, whose `usage` message wins over this estimate.

/// Credits charged when the first decoder joins.
pub const JOIN_CREDITS: u64 = 5;
/// Credits charged per started minute of decoded audio.
pub const CREDITS_PER_STARTED_MINUTE: u64 = 2;

/// Usage of one session, as in the service's `usage` message; in JS the `detail` of `usage` (the service's
/// message, else the client's estimate) and the `usage` getter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(rename = "RealtimeUsage", rename_all = "camelCase")
)]
pub struct Usage {
    /// Started minutes of decoded audio (a partial minute counts as one).
    #[cfg_attr(test, ts(type = "number"))]
    pub started_minutes: u64,
    /// Credits charged.
    #[cfg_attr(test, ts(type = "number"))]
    pub credits: u64,
}

impl Usage {
    /// Usage after `decoded_samples` samples at `sample_rate` Hz were decoded; `decoder_joined` says whether a
    /// decoder joined at all (no join, no charge from the client's view).
    pub fn from_decoded_samples(
        decoded_samples: u64,
        sample_rate: u32,
        decoder_joined: bool,
    ) -> Self {
        if !decoder_joined {
            return Self::default();
        }
        let per_minute = u64::from(sample_rate) * 60;
        let started_minutes = if per_minute == 0 {
            0
        } else {
            decoded_samples.div_ceil(per_minute)
        };
        Self {
            started_minutes,
            credits: JOIN_CREDITS + CREDITS_PER_STARTED_MINUTE * started_minutes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joining_without_audio_costs_five_credits() {
        assert_eq!(
            Usage::from_decoded_samples(0, 16_000, true),
            Usage {
                started_minutes: 0,
                credits: 5
            }
        );
    }

    #[test]
    fn a_session_no_decoder_joined_costs_nothing_from_the_client_view() {
        assert_eq!(Usage::from_decoded_samples(1_000, 16_000, false).credits, 0);
    }

    #[test]
    fn every_started_minute_costs_two_credits() {
        let minute = 16_000 * 60;
        for (samples, minutes, credits) in [
            (1, 1, 7),
            (minute - 1, 1, 7),
            (minute, 1, 7),
            (minute + 1, 2, 9),
            (10 * minute, 10, 25),
            (10 * minute + 1, 11, 27),
        ] {
            assert_eq!(
                Usage::from_decoded_samples(samples, 16_000, true),
                Usage {
                    started_minutes: minutes,
                    credits
                },
                "{samples} samples"
            );
        }
    }

    #[test]
    fn minutes_count_in_the_session_rate() {
        assert_eq!(
            Usage::from_decoded_samples(48_000 * 60, 48_000, true).started_minutes,
            1
        );
        assert_eq!(
            Usage::from_decoded_samples(48_000 * 60, 8_000, true).started_minutes,
            6
        );
        assert_eq!(Usage::from_decoded_samples(5, 0, true).started_minutes, 0);
    }
}
