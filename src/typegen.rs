//! The TypeScript declarations of the wire types, generated from the Rust types that define them.
//!
//! The types derive `ts_rs::TS` in test builds only (`#[cfg_attr(test, derive(ts_rs::TS))]`), so nothing of the
//! generator reaches the wasm. The generated files are committed (src/wasm/generated/*.d.ts) and included by
//! src/wasm/mod.rs as `typescript_custom_section`s next to the hand-written declarations of what is JS-only
//! (handles, callbacks, classes). [`generated_declarations_are_fresh`] fails when a committed file differs from
//! what the Rust types give; `cargo xtask types` (which runs it with `DOCAUTO_WRITE_TYPES=1`) rewrites them.

use std::path::PathBuf;

use ts_rs::TS;

use crate::realtime::error::RealtimeError;
use crate::webhook::ErrorCode;

/// Set to write the generated files instead of checking them.
const WRITE_ENV: &str = "DOCAUTO_WRITE_TYPES";

const HEADER: &str = "// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.\n";

/// Makes the text of one generated file.
type Generate = fn() -> String;

/// The generated files, relative to the crate root, and what each holds.
const FILES: [(&str, Generate); 5] = [
    ("src/wasm/generated/shared.d.ts", shared),
    ("src/wasm/generated/webhooks.d.ts", webhooks),
    ("src/wasm/generated/realtime.d.ts", realtime),
    ("src/wasm/generated/client.d.ts", client),
    ("src/wasm/generated/testing.d.ts", testing),
];

fn webhooks() -> String {
    [
        HEADER.to_owned(),
        declaration::<crate::webhook::options::VerifierOptions>(),
        union(
            "Stable codes of a failed verification.",
            "WebhookErrorCode",
            &webhook_codes(),
            false,
        ),
    ]
    .join("\n")
}

/// Types of both the API client's answers and the webhook events: every module that has either declares them.
fn shared() -> String {
    [
        HEADER.to_owned(),
        declaration::<crate::client::agent_runs::AgentRunStatus>(),
    ]
    .join("\n")
}

fn realtime() -> String {
    [
        HEADER.to_owned(),
        declaration::<crate::realtime::options::TranscriberOptions>(),
        declaration::<crate::realtime::options::DeviceLostPolicy>(),
        declaration::<crate::realtime::session::Transcript>(),
        declaration::<crate::realtime::usage::Usage>(),
        declaration::<crate::realtime::level::Level>(),
        union(
            "Codes of `RealtimeError`: this client's own, and (open) any code of a service `error` message.",
            "RealtimeErrorCode",
            &realtime_codes(),
            true,
        ),
    ]
    .join("\n")
}

fn testing() -> String {
    [
        HEADER.to_owned(),
        declaration::<crate::webhook::signing::Event<'static>>(),
        declaration::<crate::webhook::signing::SignedEvent>(),
    ]
    .join("\n")
}

fn client() -> String {
    [
        HEADER.to_owned(),
        declaration::<crate::client::options::ClientOptions>(),
        declaration::<crate::client::LogLevel>(),
        declaration::<crate::client::common::Executor>(),
        declaration::<crate::client::runs::RunStatus>(),
        declaration::<crate::client::agent_runs::TaskStatus>(),
        declaration::<crate::client::agents::ApprovalKind>(),
        declaration::<crate::client::agent_runs::AgentRun>(),
        declaration::<crate::client::agent_runs::RunTask>(),
        declaration::<crate::client::agent_runs::RunApproval>(),
        declaration::<crate::client::agent_runs::RunHandle>(),
        declaration::<crate::client::agents::Agent>(),
        declaration::<crate::client::agents::AgentTask>(),
        declaration::<crate::client::agents::AgentAction>(),
        declaration::<crate::client::runs::CapabilityRun>(),
        declaration::<crate::client::runs::ExtractOutput>(),
        declaration::<crate::client::runs::ExtractDocument>(),
        declaration::<crate::client::runs::Citation>(),
        declaration::<crate::client::configs::ConfigCapability>(),
        declaration::<crate::client::configs::SavedConfig>(),
        declaration::<crate::client::files::FileRecord>(),
        declaration::<crate::client::realtime::RealtimeSession>(),
        declaration::<crate::client::agent_runs::AgentRunCreateParams>(),
        declaration::<crate::client::agent_runs::ApproveParams>(),
        declaration::<crate::client::agent_runs::RejectParams>(),
        declaration::<crate::client::agent_runs::CompleteTaskParams>(),
        declaration::<crate::client::runs::RunListParams>(),
        declaration::<crate::client::files::FileCreateParams>(),
        declaration::<crate::client::webhooks::WebhookCreateParams>(),
        declaration::<crate::client::webhooks::WebhookUpdateParams>(),
        declaration::<crate::client::realtime::RealtimeSessionParams>(),
        declaration::<crate::client::configs::ConfigParams>(),
    ]
    .join("\n")
}

/// What ts-rs writes for `#[serde(flatten)] extra: Map<String, Value>` (the fields this version does not know).
const FLATTENED_MAP: &str = "({ [key in string]?: number | string | boolean | Array<JsonValue> | \
                             { [key in string]?: JsonValue } | null })";

/// `export type Name = ...;` with the type's doc comment, one member per line. The fields a response may have
/// beyond the known ones become an index signature of `unknown`: the type says it is open, and the known members
/// keep their own types (an intersection with ts-rs's JSON mapped type would blur them).
fn declaration<T: TS>() -> String {
    let mut out = T::docs().unwrap_or_default();
    out.push_str("export ");
    let decl = T::decl().replace(FLATTENED_MAP, "{ [key: string]: unknown }");
    out.push_str(&pretty(&decl));
    out
}

/// A union of string literals; `open`: any other string is accepted too (`string & {}` keeps the literals
/// suggested by editors).
fn union(docs: &str, name: &str, members: &[String], open: bool) -> String {
    let mut out = format!("/** {docs} */\nexport type {name} =\n");
    for member in members {
        out.push_str(&format!("  | \"{member}\"\n"));
    }
    if open {
        out.push_str("  | (string & {})\n");
    }
    out.pop();
    out.push_str(";\n");
    out
}

/// Lays ts-rs's members out one per line, indented by depth, `;` after each: the members of the declared object
/// and of inline objects that span lines (struct types, whose members carry doc comments); one-line inline
/// object types, generics and doc comments are kept as they are.
fn pretty(decl: &str) -> String {
    let mut split = String::new();
    // Open brackets: the bracket, and whether its contents span lines.
    let mut open: Vec<(char, bool)> = Vec::new();
    let mut prev = ' ';
    let (mut comment, mut string, mut skip_spaces) = (false, false, false);
    for c in decl.chars() {
        if skip_spaces && c == ' ' {
            continue;
        }
        skip_spaces = false;
        if c == '\n' {
            if let Some(top) = open.last_mut() {
                top.1 = true;
            }
        }
        if comment {
            comment = !(prev == '*' && c == '/');
        } else if string {
            string = !(c == '"' && prev != '\\');
        } else {
            match c {
                '*' if prev == '/' => comment = true,
                '"' => string = true,
                '{' | '[' | '(' | '<' => open.push((c, false)),
                '}' => {
                    if let Some(('{', true)) = open.pop() {
                        if !split.ends_with('\n') {
                            split.push('\n');
                        }
                    }
                }
                ']' | ')' => {
                    open.pop();
                }
                '>' if prev != '=' => {
                    open.pop();
                }
                ',' if matches!(open.last(), Some(('{', multiline)) if *multiline || open.len() == 1) =>
                {
                    split.push_str(";\n");
                    skip_spaces = true;
                    prev = c;
                    continue;
                }
                _ => {}
            }
        }
        split.push(c);
        prev = c;
    }
    let mut out = String::new();
    let mut depth = 0usize;
    for line in split.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
        let closes_first = line.starts_with('}');
        if closes_first {
            depth = depth.saturating_sub(1);
        }
        out.push_str(&"  ".repeat(depth));
        out.push_str(line);
        out.push('\n');
        let opens = line.matches('{').count();
        let closes = line.matches('}').count() - usize::from(closes_first);
        depth = (depth + opens).saturating_sub(closes);
    }
    out
}

/// Every webhook error code, in declaration order ([`ErrorCode::all`]).
fn webhook_codes() -> Vec<String> {
    ErrorCode::all().map(|c| c.as_str().to_owned()).collect()
}

/// Every code of the client's own realtime errors (a service `error` keeps the service's code, so the union is
/// open): the `match` makes a new variant a compile error here.
fn realtime_codes() -> Vec<String> {
    use RealtimeError::*;
    let detail = String::new;
    let next = |error: Option<&RealtimeError>| match error {
        None => Some(MicrophoneDenied),
        Some(MicrophoneDenied) => Some(NoAudioDevice),
        Some(NoAudioDevice) => Some(TicketUsed),
        Some(TicketUsed) => Some(TicketInvalid),
        Some(TicketInvalid) => Some(TicketExpired),
        Some(TicketExpired) => Some(SocketClosed {
            code: 1006,
            reason: detail(),
        }),
        Some(SocketClosed { .. }) => Some(UnsupportedAudioFormat { detail: detail() }),
        Some(UnsupportedAudioFormat { .. }) => Some(ReconnectFailed { attempts: 0 }),
        Some(ReconnectFailed { .. }) => Some(IdleTimeout),
        Some(IdleTimeout) => Some(InvalidMessage { detail: detail() }),
        Some(InvalidMessage { .. }) => Some(InvalidOptions {
            path: detail(),
            detail: detail(),
        }),
        Some(InvalidOptions { .. }) => Some(InvalidState { detail: "" }),
        Some(InvalidState { .. }) => Some(OpenTimeout),
        Some(OpenTimeout) => Some(ConnectionSilent),
        Some(ConnectionSilent) => Some(DeviceLost),
        Some(DeviceLost) => Some(AudioNotAllowed),
        Some(AudioNotAllowed) => Some(Disposed),
        Some(Disposed) | Some(Service { .. }) => None,
    };
    std::iter::successors(next(None), |e| next(Some(e)))
        .map(|e| e.code().to_owned())
        .collect()
}

fn crate_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

#[test]
fn generated_declarations_are_fresh() {
    let write = std::env::var_os(WRITE_ENV).is_some();
    let mut stale = Vec::new();
    for (relative, generate) in FILES {
        let path = crate_path(relative);
        let want = generate();
        if write {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).unwrap();
            }
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(relative);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated TypeScript declarations {stale:?}: run `cargo xtask types` and commit them"
    );
}

#[test]
fn flattened_fields_are_an_index_signature_of_unknown() {
    for (relative, generate) in FILES {
        assert!(!generate().contains("& ({ [key in string]"), "{relative}");
    }
}

#[test]
fn every_error_code_is_listed_once() {
    for codes in [webhook_codes(), realtime_codes()] {
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), codes.len(), "{codes:?}");
    }
    assert_eq!(webhook_codes().len(), 21);
    assert_eq!(realtime_codes().len(), 17);
}

#[test]
fn pretty_puts_one_member_per_line() {
    let decl = "type A = { \n/**\n * Doc, {a}.\n */\na?: string, b: { c: number, }, \
                d: Record<string, () => number>, e: \"x,y\", f: { \n/**\n * F.\n */\ng: string, h: number, }, };";
    assert_eq!(
        pretty(decl),
        "type A = {\n  /**\n   * Doc, {a}.\n   */\n  a?: string;\n  b: { c: number, };\n  \
         d: Record<string, () => number>;\n  e: \"x,y\";\n  f: {\n    /**\n     * F.\n     */\n    \
         g: string;\n    h: number;\n  };\n};\n"
    );
}
