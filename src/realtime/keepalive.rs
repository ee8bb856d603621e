//! Keep-alive interval.
//!
//! Decision (the spec does not give the service's idle timeout): send `{"type":"keepalive"}` every 5 s while
//! connected, whether or not audio flows (and while paused), because a service may count silent audio as idle
//! (close 4408); twenty bytes every five seconds cost nothing. The first one is due one interval after the
//! service's `open`. The schedule is the session's `Keepalive` timer ([`super::session`]).

/// Default keep-alive interval, in milliseconds.
pub const DEFAULT_KEEPALIVE_MS: u64 = 5_000;
