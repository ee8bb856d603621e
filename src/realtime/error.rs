//! The one error type of the realtime core, with stable snake_case codes.

use std::fmt;

/// Everything that can go wrong in a live transcription session.
///
/// Each variant has a stable [`code`](RealtimeError::code) that the JS layer copies onto its `Error` objects.
/// No variant carries a ticket, a socket URL or any other secret, so `Debug` and `Display` are safe to log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RealtimeError {
    /// The user (or a permissions policy) refused microphone access (`microphone_denied`).
    MicrophoneDenied,
    /// No capture device exists (`no_audio_device`).
    NoAudioDevice,
    /// The session ticket was already used by another connection (`ticket_used`, close code 4401).
    TicketUsed,
    /// The session ticket is not valid (`ticket_invalid`, close code 4401).
    TicketInvalid,
    /// The session ticket expired before it was used (`ticket_expired`, close code 4401).
    TicketExpired,
    /// The service closed the socket with a code this client does not map to anything more specific
    /// (`socket_closed`).
    SocketClosed {
        /// WebSocket close code as received.
        code: u16,
        /// Close reason as received from the service (never contains the ticket).
        reason: String,
    },
    /// Audio the session cannot take: a rate out of range, a channel count that is not mono while downmixing
    /// is off, a frame length out of range, or a server rate that differs from the pipeline's
    /// (`unsupported_audio_format`).
    UnsupportedAudioFormat {
        /// Human readable detail (no secrets).
        detail: String,
    },
    /// Reconnection was given up after the policy's maximum number of attempts (`reconnect_failed`).
    ReconnectFailed {
        /// Attempts made before giving up.
        attempts: u32,
    },
    /// The service closed an idle session (`idle_timeout`, close code 4408).
    IdleTimeout,
    /// A message from the service is not valid JSON or a known message lacks a field (`invalid_message`).
    /// Unknown message types are not errors: they decode to `ServerMessage::Unknown`.
    InvalidMessage {
        /// Human readable detail from the JSON decoder (no secrets: server messages carry none).
        detail: String,
    },
    /// An option of the transcriber is unknown, of the wrong type or out of range (`invalid_options`).
    InvalidOptions {
        /// The option's path, e.g. `keepaliveMs` (empty for the options object itself).
        path: String,
        /// What is wrong (never the option's value: a URL holds the ticket).
        detail: String,
    },
    /// A call the session cannot take now: `start()` twice, audio after `stop()` (`invalid_state`).
    InvalidState {
        /// Which call, and why.
        detail: &'static str,
    },
    /// The service did not send `open` within `openTimeoutMs` (`open_timeout`).
    OpenTimeout,
    /// Audio flowed but the service sent nothing for `silenceTimeoutMs` (`connection_silent`).
    ConnectionSilent,
    /// The microphone in use went away (unplugged, disabled) and no other could replace it (`device_lost`).
    DeviceLost,
    /// The browser did not let the capture's audio run within `openTimeoutMs` (`audio_not_allowed`): an autoplay
    /// policy (Safari's, and every browser's by default) runs audio only after a user gesture, or, in WebKit, while
    /// the page captures the microphone. Call `start()` from a click or a key press; the ticket is still unused.
    AudioNotAllowed,
    /// The transcriber was freed (`free()`, `[Symbol.dispose]()`, the end of a `using` block) while its `start()`
    /// was pending (`disposed`).
    Disposed,
    /// A service `error` message with a code this client has no variant for; the code is the service's.
    Service {
        /// The service's code, kept as sent.
        code: String,
        /// The service's message.
        message: String,
    },
}

impl RealtimeError {
    /// The stable snake_case code of this error.
    pub fn code(&self) -> &str {
        match self {
            Self::MicrophoneDenied => "microphone_denied",
            Self::NoAudioDevice => "no_audio_device",
            Self::TicketUsed => "ticket_used",
            Self::TicketInvalid => "ticket_invalid",
            Self::TicketExpired => "ticket_expired",
            Self::SocketClosed { .. } => "socket_closed",
            Self::UnsupportedAudioFormat { .. } => "unsupported_audio_format",
            Self::ReconnectFailed { .. } => "reconnect_failed",
            Self::IdleTimeout => "idle_timeout",
            Self::InvalidMessage { .. } => "invalid_message",
            Self::InvalidOptions { .. } => "invalid_options",
            Self::InvalidState { .. } => "invalid_state",
            Self::OpenTimeout => "open_timeout",
            Self::ConnectionSilent => "connection_silent",
            Self::DeviceLost => "device_lost",
            Self::AudioNotAllowed => "audio_not_allowed",
            Self::Disposed => "disposed",
            Self::Service { code, .. } => code,
        }
    }

    /// Whether reconnecting (with a fresh ticket from `getUrl`) may help.
    ///
    /// True for a socket closed by the service or the network, an idle timeout, an open timeout and a silent
    /// connection; false for permission,
    /// device, format and ticket errors (a ticket error on a fresh URL means the backend minted a bad one) and
    /// for an exhausted reconnect policy.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::SocketClosed { .. }
                | Self::IdleTimeout
                | Self::OpenTimeout
                | Self::ConnectionSilent
        )
    }

    pub(crate) fn unsupported(detail: impl Into<String>) -> Self {
        Self::UnsupportedAudioFormat {
            detail: detail.into(),
        }
    }
}

impl fmt::Display for RealtimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MicrophoneDenied => f.write_str("microphone access was denied"),
            Self::NoAudioDevice => f.write_str("no audio capture device is available"),
            Self::TicketUsed => f.write_str("the session ticket was already used"),
            Self::TicketInvalid => f.write_str("the session ticket is invalid"),
            Self::TicketExpired => f.write_str("the session ticket expired"),
            Self::SocketClosed { code, reason } => {
                write!(f, "the service closed the socket (code {code}")?;
                if !reason.is_empty() {
                    // Quoted by hand: `{reason:?}` would link `Debug` for `str` and its escaping tables (about
                    // 5 KB of wasm) for reasons that are snake_case words.
                    write!(f, ", reason \"{reason}\"")?;
                }
                f.write_str(")")
            }
            Self::UnsupportedAudioFormat { detail } => {
                write!(f, "unsupported audio format: {detail}")
            }
            Self::ReconnectFailed { attempts } => {
                write!(f, "reconnecting failed after {attempts} attempts")
            }
            Self::IdleTimeout => f.write_str("the service closed the idle session"),
            Self::InvalidMessage { detail } => {
                write!(f, "invalid message from the service: {detail}")
            }
            Self::InvalidOptions { path, detail } if path.is_empty() => f.write_str(detail),
            Self::InvalidOptions { path, detail } => write!(f, "{path}: {detail}"),
            Self::InvalidState { detail } => f.write_str(detail),
            Self::OpenTimeout => f.write_str("the service did not open the session in time"),
            Self::ConnectionSilent => {
                f.write_str("the service sent nothing for too long while audio flowed")
            }
            Self::DeviceLost => f.write_str("the microphone in use was disconnected"),
            Self::AudioNotAllowed => f.write_str(
                "the browser did not let audio run: call start() from a user gesture (a click or a key press)",
            ),
            Self::Disposed => f.write_str(
                "the transcriber was freed (free(), [Symbol.dispose]() or a using block) before its session opened",
            ),
            Self::Service { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for RealtimeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_its_stable_code() {
        let cases = [
            (RealtimeError::MicrophoneDenied, "microphone_denied"),
            (RealtimeError::NoAudioDevice, "no_audio_device"),
            (RealtimeError::TicketUsed, "ticket_used"),
            (RealtimeError::TicketInvalid, "ticket_invalid"),
            (RealtimeError::TicketExpired, "ticket_expired"),
            (
                RealtimeError::SocketClosed {
                    code: 1011,
                    reason: String::new(),
                },
                "socket_closed",
            ),
            (RealtimeError::unsupported("x"), "unsupported_audio_format"),
            (
                RealtimeError::ReconnectFailed { attempts: 3 },
                "reconnect_failed",
            ),
            (RealtimeError::IdleTimeout, "idle_timeout"),
            (
                RealtimeError::InvalidOptions {
                    path: "frameMs".into(),
                    detail: "x".into(),
                },
                "invalid_options",
            ),
            (RealtimeError::InvalidState { detail: "x" }, "invalid_state"),
            (RealtimeError::OpenTimeout, "open_timeout"),
            (RealtimeError::ConnectionSilent, "connection_silent"),
            (RealtimeError::DeviceLost, "device_lost"),
            (RealtimeError::AudioNotAllowed, "audio_not_allowed"),
            (RealtimeError::Disposed, "disposed"),
            (
                RealtimeError::Service {
                    code: "decoder_failed".into(),
                    message: "x".into(),
                },
                "decoder_failed",
            ),
            (
                RealtimeError::InvalidMessage {
                    detail: String::new(),
                },
                "invalid_message",
            ),
        ];
        for (error, code) in cases {
            assert_eq!(error.code(), code);
            assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn a_socket_close_message_quotes_its_reason() {
        let closed = |reason: &str| {
            RealtimeError::SocketClosed {
                code: 1011,
                reason: reason.into(),
            }
            .to_string()
        };
        assert_eq!(
            closed("server_restart"),
            "the service closed the socket (code 1011, reason \"server_restart\")"
        );
        assert_eq!(closed(""), "the service closed the socket (code 1011)");
    }

    #[test]
    fn only_socket_drops_and_idle_timeouts_are_retryable() {
        assert!(RealtimeError::SocketClosed {
            code: 1006,
            reason: String::new()
        }
        .is_retryable());
        assert!(RealtimeError::IdleTimeout.is_retryable());
        assert!(!RealtimeError::TicketUsed.is_retryable());
        assert!(!RealtimeError::MicrophoneDenied.is_retryable());
        assert!(!RealtimeError::AudioNotAllowed.is_retryable());
        assert!(!RealtimeError::Disposed.is_retryable());
        assert!(!RealtimeError::ReconnectFailed { attempts: 5 }.is_retryable());
    }
}
