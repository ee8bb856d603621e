//! Keep-alive schedule (sans-IO: the caller passes the clock).
//!
//! Decision (the spec does not give the service's idle timeout): send `{"type":"keepalive"}` every 5 s while
//! connected, whether or not audio flows, because a service may count silent audio as idle (close 4408); twenty
//! bytes every five seconds cost nothing. The first one is due one interval after the connection opened.

use super::protocol::ClientMessage;

/// Default keep-alive interval, in milliseconds.
pub const DEFAULT_KEEPALIVE_MS: u64 = 5_000;

/// When the next keep-alive is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keepalive {
    interval_ms: u64,
    due_ms: Option<u64>,
}

impl Default for Keepalive {
    fn default() -> Self {
        Self::new(DEFAULT_KEEPALIVE_MS)
    }
}

impl Keepalive {
    /// A schedule with `interval_ms` between keep-alives (at least 1 ms); idle until [`on_open`](Self::on_open).
    pub fn new(interval_ms: u64) -> Self {
        Self {
            interval_ms: interval_ms.max(1),
            due_ms: None,
        }
    }

    /// The connection opened at `now_ms`.
    pub fn on_open(&mut self, now_ms: u64) {
        self.due_ms = Some(now_ms.saturating_add(self.interval_ms));
    }

    /// The connection closed: nothing is due until the next `on_open`.
    pub fn on_close(&mut self) {
        self.due_ms = None;
    }

    /// When the next keep-alive is due (to arm a timer), or `None` while disconnected.
    pub fn due_ms(&self) -> Option<u64> {
        self.due_ms
    }

    /// The message to send at `now_ms`, if one is due; the next one is then scheduled an interval later.
    pub fn poll(&mut self, now_ms: u64) -> Option<ClientMessage> {
        let due = self.due_ms?;
        if now_ms < due {
            return None;
        }
        self.due_ms = Some(now_ms.saturating_add(self.interval_ms));
        Some(ClientMessage::Keepalive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_due_before_the_socket_opens() {
        let mut k = Keepalive::default();
        assert_eq!(k.poll(1_000_000), None);
        assert_eq!(k.due_ms(), None);
    }

    #[test]
    fn a_keepalive_is_due_every_interval_after_open() {
        let mut k = Keepalive::new(5_000);
        k.on_open(1_000);
        assert_eq!(k.due_ms(), Some(6_000));
        assert_eq!(k.poll(5_999), None);
        assert_eq!(k.poll(6_000), Some(ClientMessage::Keepalive));
        assert_eq!(k.poll(6_001), None);
        assert_eq!(k.poll(11_500), Some(ClientMessage::Keepalive));
        assert_eq!(k.due_ms(), Some(16_500));
    }

    #[test]
    fn closing_stops_the_schedule_until_the_next_open() {
        let mut k = Keepalive::new(5_000);
        k.on_open(0);
        k.on_close();
        assert_eq!(k.poll(60_000), None);
        k.on_open(60_000);
        assert_eq!(k.poll(65_000), Some(ClientMessage::Keepalive));
    }
}
