//! Messages of the realtime socket (the service's protocol, mirrored exactly).
//!
//! Client to server:
//! - binary frames: PCM16 little-endian mono at the session's `sampleRate` (see [`Framer`](super::framing::Framer));
//! - text: `{"type":"keepalive"}` and `{"type":"stop"}`.
//!
//! Server to client, text JSON:
//! `{"type":"open","sessionId","sampleRate"}`, `{"type":"partial","text","start","end"}`,
//! `{"type":"final","text","start","end"}`, `{"type":"usage","startedMinutes","credits"}`,
//! `{"type":"error","code","message"}`.
//! A message of any other `type` decodes to [`ServerMessage::Unknown`] (the protocol may grow), and unknown fields
//! are ignored. `start` and `end` are read as seconds of session audio in `f64` (integers decode too). Messages are
//! read with the core's small JSON reader ([`crate::json::Json`]); the serde derives below serve Rust test
//! servers and are not linked into the wasm module.
//!
//! Close codes: [`CLOSE_NORMAL`] 1000, [`CLOSE_TICKET`] 4401 with reason `ticket_used`, `ticket_invalid` or
//! `ticket_expired`, [`CLOSE_IDLE_TIMEOUT`] 4408 `idle_timeout`; see [`close_error`].

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::RealtimeError;
use crate::json::Json;

/// `Number.MAX_SAFE_INTEGER` (2^53 - 1): the largest count read from a message (JS numbers hold it exactly).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Largest text message read, in bytes of UTF-8. The spec does not bound the service's messages; a transcript
/// message of a few seconds of speech is far below this. A longer one is not parsed (its JSON tree would take
/// several times its size in wasm memory): it is reported as `invalid_message` and the session goes on.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// The error of a message longer than [`MAX_MESSAGE_BYTES`].
pub fn message_too_large() -> RealtimeError {
    invalid("message is larger than 256 KiB (not read)")
}

/// Close code of a normal close (after `stop`).
pub const CLOSE_NORMAL: u16 = 1000;
/// Close code a host reports when the socket ended without a close frame (network drop, refused connection).
pub const CLOSE_ABNORMAL: u16 = 1006;
/// Close code for a rejected ticket (reason `ticket_used`, `ticket_invalid` or `ticket_expired`).
pub const CLOSE_TICKET: u16 = 4401;
/// Close code for a session closed for idleness (reason `idle_timeout`).
pub const CLOSE_IDLE_TIMEOUT: u16 = 4408;

/// A text message from client to server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Keeps a silent session open.
    Keepalive,
    /// Ends the audio: the service sends the last `final`, then closes with 1000.
    Stop,
    /// Any other `type` (only seen when decoding, e.g. in a test server).
    #[serde(other)]
    Unknown,
}

impl ClientMessage {
    /// The JSON text to send (`Unknown` has none and gives an empty string).
    pub fn to_json(self) -> &'static str {
        match self {
            Self::Keepalive => r#"{"type":"keepalive"}"#,
            Self::Stop => r#"{"type":"stop"}"#,
            Self::Unknown => "",
        }
    }
}

/// Body of an `open` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenMessage {
    /// Session identifier (not a secret; the ticket is never echoed).
    pub session_id: String,
    /// Rate in Hz the binary frames must use.
    pub sample_rate: u32,
}

/// Body of a `partial` or `final` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    /// Transcribed text.
    pub text: String,
    /// Start of the text in the session's audio, in seconds.
    pub start: f64,
    /// End of the text in the session's audio, in seconds.
    pub end: f64,
}

/// Body of a `usage` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMessage {
    /// Started minutes of decoded audio so far.
    pub started_minutes: u64,
    /// Credits charged so far.
    pub credits: u64,
}

/// Body of an `error` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMessage {
    /// Stable snake_case code chosen by the service.
    pub code: String,
    /// Human readable message.
    pub message: String,
}

/// A text message from server to client.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// The session is ready for audio.
    Open(OpenMessage),
    /// Provisional text, about every 2 seconds.
    Partial(TranscriptMessage),
    /// Settled text, a few seconds after each pause.
    Final(TranscriptMessage),
    /// Usage so far.
    Usage(UsageMessage),
    /// A service-side error.
    Error(ErrorMessage),
    /// A message type this client does not know (kept so additive protocol changes do not break it).
    Unknown {
        /// The message's `type`.
        kind: String,
    },
}

/// The `invalid_message` error for a message that is not what the protocol says.
fn invalid(detail: &str) -> RealtimeError {
    RealtimeError::InvalidMessage {
        detail: detail.to_owned(),
    }
}

/// Field `name` of a known message, as a string.
fn string(m: &Json, kind: &str, name: &str) -> Result<String, RealtimeError> {
    m.get(name)
        .and_then(Json::as_str)
        .map(str::to_owned)
        .ok_or_else(|| field_error(kind, name, "a string"))
}

/// Field `name` of a known message, as a finite number: one beyond the `f64` range (`1e400`, which `JSON.parse`
/// reads as Infinity) is refused, never handed on as an infinite time.
fn number(m: &Json, kind: &str, name: &str) -> Result<f64, RealtimeError> {
    m.get(name)
        .and_then(Json::as_f64)
        .filter(|n| n.is_finite())
        .ok_or_else(|| field_error(kind, name, "a finite number"))
}

/// Field `name` of a known message, as a whole number from 0 to `max`.
fn whole(m: &Json, kind: &str, name: &str, max: u64) -> Result<u64, RealtimeError> {
    m.get(name)
        .and_then(|v| v.as_whole(max))
        .ok_or_else(|| field_error(kind, name, "a whole number"))
}

#[inline(never)]
fn field_error(kind: &str, name: &str, what: &str) -> RealtimeError {
    RealtimeError::InvalidMessage {
        detail: format!("{kind} message: {name} is missing or not {what}"),
    }
}

impl ServerMessage {
    /// Decodes one text message (with the core's small JSON reader, [`Json`]: no serde in the wasm module).
    ///
    /// # Errors
    /// `invalid_message` when the text is longer than [`MAX_MESSAGE_BYTES`], is not a JSON object with a string `type`, or a known type lacks a
    /// field or has one of the wrong type (counts must be whole numbers from 0). Unknown types and unknown fields
    /// are not errors.
    pub fn from_json(message: &str) -> Result<Self, RealtimeError> {
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(message_too_large());
        }
        let m = Json::parse(message).ok_or_else(|| invalid("not JSON"))?;
        if !matches!(m, Json::Object(_)) {
            return Err(invalid("not a JSON object"));
        }
        let kind = m
            .get("type")
            .and_then(Json::as_str)
            .ok_or_else(|| invalid("type is missing or not a string"))?;
        let transcript = |m: &Json| -> Result<TranscriptMessage, RealtimeError> {
            Ok(TranscriptMessage {
                text: string(m, kind, "text")?,
                start: number(m, kind, "start")?,
                end: number(m, kind, "end")?,
            })
        };
        Ok(match kind {
            "open" => Self::Open(OpenMessage {
                session_id: string(&m, kind, "sessionId")?,
                sample_rate: whole(&m, kind, "sampleRate", u64::from(u32::MAX))? as u32,
            }),
            "partial" => Self::Partial(transcript(&m)?),
            "final" => Self::Final(transcript(&m)?),
            "usage" => Self::Usage(UsageMessage {
                started_minutes: whole(&m, kind, "startedMinutes", MAX_SAFE_INTEGER)?,
                credits: whole(&m, kind, "credits", MAX_SAFE_INTEGER)?,
            }),
            "error" => Self::Error(ErrorMessage {
                code: string(&m, kind, "code")?,
                message: string(&m, kind, "message")?,
            }),
            _ => Self::Unknown {
                kind: kind.to_owned(),
            },
        })
    }

    /// The message's `type`.
    pub fn kind(&self) -> &str {
        match self {
            Self::Open(_) => "open",
            Self::Partial(_) => "partial",
            Self::Final(_) => "final",
            Self::Usage(_) => "usage",
            Self::Error(_) => "error",
            Self::Unknown { kind } => kind,
        }
    }

    /// Encodes the message as the service sends it (for test servers).
    ///
    /// # Errors
    /// `invalid_message` if a transcript time is not finite (JSON has no NaN or infinity).
    pub fn to_json(&self) -> Result<String, RealtimeError> {
        serde_json::to_string(self).map_err(|_| invalid("transcript times must be finite"))
    }
}

impl Serialize for ServerMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let body = match self {
            Self::Open(m) => serde_json::to_value(m),
            Self::Partial(m) | Self::Final(m) => {
                if !(m.start.is_finite() && m.end.is_finite()) {
                    return Err(serde::ser::Error::custom("transcript times must be finite"));
                }
                serde_json::to_value(m)
            }
            Self::Usage(m) => serde_json::to_value(m),
            Self::Error(m) => serde_json::to_value(m),
            Self::Unknown { .. } => Ok(serde_json::Value::Object(serde_json::Map::new())),
        };
        let mut object = match body {
            Ok(serde_json::Value::Object(object)) => object,
            Ok(_) => serde_json::Map::new(),
            Err(e) => return Err(serde::ser::Error::custom(e)),
        };
        object.insert(
            "type".to_owned(),
            serde_json::Value::String(self.kind().to_owned()),
        );
        object.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ServerMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Self::from_json(&value.to_string()).map_err(D::Error::custom)
    }
}

/// Classifies a socket close: `None` for a normal close (1000), otherwise the error to report.
///
/// 4401 maps by its reason to `ticket_used`, `ticket_expired` or `ticket_invalid` (an unknown reason counts as
/// invalid); 4408 is `idle_timeout`; every other code is `socket_closed` with the code and reason.
pub fn close_error(code: u16, reason: &str) -> Option<RealtimeError> {
    match code {
        CLOSE_NORMAL => None,
        CLOSE_TICKET => Some(match reason {
            "ticket_used" => RealtimeError::TicketUsed,
            "ticket_expired" => RealtimeError::TicketExpired,
            _ => RealtimeError::TicketInvalid,
        }),
        CLOSE_IDLE_TIMEOUT => Some(RealtimeError::IdleTimeout),
        _ => Some(RealtimeError::SocketClosed {
            code,
            reason: reason.chars().take(123).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_messages_encode_exactly() {
        assert_eq!(
            ClientMessage::Keepalive.to_json(),
            r#"{"type":"keepalive"}"#
        );
        assert_eq!(ClientMessage::Stop.to_json(), r#"{"type":"stop"}"#);
        for m in [ClientMessage::Keepalive, ClientMessage::Stop] {
            assert_eq!(serde_json::to_string(&m).unwrap(), m.to_json());
            assert_eq!(
                serde_json::from_str::<ClientMessage>(m.to_json()).unwrap(),
                m
            );
        }
        assert_eq!(
            serde_json::from_str::<ClientMessage>(r#"{"type":"flush"}"#).unwrap(),
            ClientMessage::Unknown
        );
    }

    #[test]
    fn open_decodes_session_id_and_sample_rate() {
        let m =
            ServerMessage::from_json(r#"{"type":"open","sessionId":"rt_1","sampleRate":16000}"#)
                .unwrap();
        assert_eq!(
            m,
            ServerMessage::Open(OpenMessage {
                session_id: "rt_1".into(),
                sample_rate: 16_000
            })
        );
    }

    #[test]
    fn partial_and_final_decode_text_and_times() {
        let p = ServerMessage::from_json(
            r#"{"type":"partial","text":"bonjour hello","start":0,"end":2.04}"#,
        )
        .unwrap();
        assert_eq!(
            p,
            ServerMessage::Partial(TranscriptMessage {
                text: "bonjour hello".into(),
                start: 0.0,
                end: 2.04
            })
        );
        let f =
            ServerMessage::from_json(r#"{"type":"final","text":"done.","start":1.5,"end":3.25}"#)
                .unwrap();
        assert_eq!(f.kind(), "final");
        assert!(
            matches!(f, ServerMessage::Final(TranscriptMessage { ref text, .. }) if text == "done.")
        );
    }

    #[test]
    fn usage_and_error_decode() {
        assert_eq!(
            ServerMessage::from_json(r#"{"type":"usage","startedMinutes":2,"credits":9}"#).unwrap(),
            ServerMessage::Usage(UsageMessage {
                started_minutes: 2,
                credits: 9
            })
        );
        assert_eq!(
            ServerMessage::from_json(
                r#"{"type":"error","code":"decoder_failed","message":"try again"}"#
            )
            .unwrap(),
            ServerMessage::Error(ErrorMessage {
                code: "decoder_failed".into(),
                message: "try again".into()
            })
        );
    }

    #[test]
    fn an_unknown_type_decodes_to_unknown_instead_of_failing() {
        let m = ServerMessage::from_json(r#"{"type":"speaker_change","speaker":2}"#).unwrap();
        assert_eq!(
            m,
            ServerMessage::Unknown {
                kind: "speaker_change".into()
            }
        );
        assert_eq!(m.kind(), "speaker_change");
    }

    #[test]
    fn extra_fields_on_known_types_are_ignored() {
        let m = ServerMessage::from_json(
            r#"{"type":"partial","text":"a","start":1,"end":2,"confidence":0.9,"language":"fr"}"#,
        )
        .unwrap();
        assert_eq!(m.kind(), "partial");
    }

    #[test]
    fn malformed_messages_are_invalid_message() {
        for text in [
            "not json",
            "[1,2]",
            r#"{"text":"no type"}"#,
            r#"{"type":7}"#,
            r#"{"type":"partial","start":0,"end":1}"#,
            r#"{"type":"open","sessionId":"x","sampleRate":"16000"}"#,
            r#"{"type":"usage","startedMinutes":-1,"credits":5}"#,
        ] {
            let error = ServerMessage::from_json(text).unwrap_err();
            assert_eq!(error.code(), "invalid_message", "{text}");
        }
    }

    #[test]
    fn an_invalid_message_says_which_field_is_wrong() {
        let detail = |text: &str| match ServerMessage::from_json(text).unwrap_err() {
            RealtimeError::InvalidMessage { detail } => detail,
            other => panic!("not invalid_message: {other:?}"),
        };
        assert_eq!(
            detail(r#"{"type":"partial","start":0,"end":1}"#),
            "partial message: text is missing or not a string"
        );
        assert_eq!(
            detail(r#"{"type":"usage","startedMinutes":1.5,"credits":5}"#),
            "usage message: startedMinutes is missing or not a whole number"
        );
        assert_eq!(detail("[]"), "not a JSON object");
        assert_eq!(detail("{"), "not JSON");
        assert_eq!(
            detail(r#"{"type":null}"#),
            "type is missing or not a string"
        );
    }

    #[test]
    fn a_time_beyond_the_double_range_is_invalid_message() {
        for (name, text) in [
            (
                "start",
                r#"{"type":"final","text":"a","start":1e400,"end":2}"#,
            ),
            (
                "end",
                r#"{"type":"partial","text":"a","start":0,"end":-1e999}"#,
            ),
        ] {
            match ServerMessage::from_json(text).unwrap_err() {
                RealtimeError::InvalidMessage { detail } => {
                    assert!(
                        detail.contains(name) && detail.contains("finite"),
                        "{detail}"
                    );
                }
                other => panic!("not invalid_message: {other:?}"),
            }
        }
        // The largest double is a time (it was read as Infinity when the reader rounded long numbers).
        let m = ServerMessage::from_json(
            r#"{"type":"final","text":"a","start":0,"end":1.7976931348623157e308}"#,
        )
        .unwrap();
        assert!(matches!(m, ServerMessage::Final(t) if t.end == f64::MAX));
    }

    #[test]
    fn server_messages_round_trip_through_json() {
        let messages = [
            ServerMessage::Open(OpenMessage {
                session_id: "s".into(),
                sample_rate: 48_000,
            }),
            ServerMessage::Partial(TranscriptMessage {
                text: "x".into(),
                start: 0.5,
                end: 1.0,
            }),
            ServerMessage::Final(TranscriptMessage {
                text: "y".into(),
                start: 1.0,
                end: 2.0,
            }),
            ServerMessage::Usage(UsageMessage {
                started_minutes: 1,
                credits: 7,
            }),
            ServerMessage::Error(ErrorMessage {
                code: "c".into(),
                message: "m".into(),
            }),
            ServerMessage::Unknown {
                kind: "later".into(),
            },
        ];
        for m in messages {
            let text = m.to_json().unwrap();
            assert_eq!(ServerMessage::from_json(&text).unwrap(), m, "{text}");
            assert_eq!(serde_json::from_str::<ServerMessage>(&text).unwrap(), m);
        }
        let open = ServerMessage::Open(OpenMessage {
            session_id: "s".into(),
            sample_rate: 16_000,
        });
        let value: serde_json::Value = serde_json::from_str(&open.to_json().unwrap()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"type":"open","sessionId":"s","sampleRate":16000})
        );
    }

    #[test]
    fn non_finite_times_cannot_be_encoded() {
        let m = ServerMessage::Final(TranscriptMessage {
            text: String::new(),
            start: f64::NAN,
            end: 1.0,
        });
        assert_eq!(m.to_json().unwrap_err().code(), "invalid_message");
    }

    #[test]
    fn close_codes_map_to_their_errors() {
        assert_eq!(close_error(1000, ""), None);
        assert_eq!(
            close_error(4401, "ticket_used"),
            Some(RealtimeError::TicketUsed)
        );
        assert_eq!(
            close_error(4401, "ticket_expired"),
            Some(RealtimeError::TicketExpired)
        );
        assert_eq!(
            close_error(4401, "ticket_invalid"),
            Some(RealtimeError::TicketInvalid)
        );
        assert_eq!(close_error(4401, "???"), Some(RealtimeError::TicketInvalid));
        assert_eq!(
            close_error(4408, "idle_timeout"),
            Some(RealtimeError::IdleTimeout)
        );
        let dropped = close_error(1006, "").unwrap();
        assert_eq!(dropped.code(), "socket_closed");
        assert!(dropped.is_retryable());
        assert_eq!(
            close_error(1011, "boom"),
            Some(RealtimeError::SocketClosed {
                code: 1011,
                reason: "boom".into()
            })
        );
    }
}
