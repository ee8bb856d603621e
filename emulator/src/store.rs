//! `--state FILE`: a snapshot plus an append-only journal, so every answer that changed state leaves only after the
//! change is on disk, at a cost proportional to the change (not to the whole state).
//!
//! - `FILE` is a snapshot: the whole state as JSON (the format of the earlier whole-file `--state`, so old files
//!   load). It is written at start, at a clean stop, and when the journal grows past [`COMPACT_BYTES`] (temp file,
//!   fsync, rename, fsync of the folder), after which the journal is emptied.
//! - `FILE.journal` holds one JSON object per line, one line per write: for each collection the entries changed
//!   since the previous write (`{"runs": {"par_…": {…} | null}, …, "seq": n}`; `null` removes). A line is appended and
//!   `fdatasync`ed before the answers whose changes it carries leave (concurrent requests share one write).
//! - Loading reads the snapshot, then replays the journal (entries are whole objects). Each line carries a journal
//!   sequence number (`lsn`) and the snapshot records the last one it holds, so lines already in the snapshot (a
//!   crash between a compaction's rename and the journal's truncation) are skipped. A torn last line (a crash
//!   during an append, never acknowledged) is dropped; a bad line followed by good ones is a start error.
//!
//! This module is the format, pure (it builds and reads the bytes); the files themselves are written and read by the
//! native host (`host::native::files`: [`crate::host::Journal`], [`crate::host::load_state`]). The wasm build has no
//! files: it takes a snapshot in at start and hands one out (`snapshot()`), in this same format.
//!
//! Why a journal rather than SQLite: the state is one in-memory map per collection already, every change goes
//! through [`crate::state::Tracked`], and a journal of those changes needs no new dependency and no C build; the
//! SQLite route (`rusqlite` with `bundled`) would compile SQLite's C amalgamation on every fresh CI machine and
//! still need the same change tracking.

use crate::state::{State, Tracked};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Journal size that triggers a compaction (a new snapshot, an empty journal).
pub const COMPACT_BYTES: u64 = 64 * 1024 * 1024;

/// The journal path of a state file.
pub fn journal_path(state: &Path) -> PathBuf {
    let mut s = state.as_os_str().to_owned();
    s.push(".journal");
    PathBuf::from(s)
}

fn changes<V: Serialize>(out: &mut Map<String, Value>, name: &str, t: &mut Tracked<V>) {
    let dirty = t.take_dirty();
    if dirty.is_empty() {
        return;
    }
    let m: Map<String, Value> = dirty
        .into_iter()
        .map(|(k, v)| {
            let v = v
                .and_then(|v| serde_json::to_value(v).ok())
                .unwrap_or(Value::Null);
            (k, v)
        })
        .collect();
    out.insert(name.into(), Value::Object(m));
}

/// The changes since the last call as one journal line (None: nothing changed). Call with the state lock held.
pub fn take_changes(st: &mut State) -> Option<Vec<u8>> {
    let mut out = Map::new();
    changes(&mut out, "files", &mut st.files);
    changes(&mut out, "agent_runs", &mut st.agent_runs);
    changes(&mut out, "runs", &mut st.runs);
    changes(&mut out, "endpoints", &mut st.endpoints);
    changes(&mut out, "deliveries", &mut st.deliveries);
    changes(&mut out, "idempotency", &mut st.idempotency);
    changes(&mut out, "actions", &mut st.actions);
    changes(&mut out, "spaces", &mut st.spaces);
    changes(&mut out, "realtime", &mut st.realtime);
    if out.is_empty() {
        return None;
    }
    st.journal_lsn += 1;
    out.insert("lsn".into(), st.journal_lsn.into());
    out.insert("seq".into(), st.seq.into());
    let mut line = serde_json::to_vec(&Value::Object(out)).ok()?;
    line.push(b'\n');
    Some(line)
}

/// Drops the change marks (after a snapshot, which holds everything; or without `--state`).
pub fn clear_changes(st: &mut State) {
    st.files.clear_dirty();
    st.agent_runs.clear_dirty();
    st.runs.clear_dirty();
    st.endpoints.clear_dirty();
    st.deliveries.clear_dirty();
    st.idempotency.clear_dirty();
    st.actions.clear_dirty();
    st.spaces.clear_dirty();
    st.realtime.clear_dirty();
}

fn apply_one<V: DeserializeOwned>(t: &mut Tracked<V>, v: Option<&Value>) -> Result<(), String> {
    let Some(Value::Object(m)) = v else {
        return Ok(());
    };
    for (k, x) in m {
        if x.is_null() {
            t.apply(k.clone(), None);
        } else {
            let v = serde_json::from_value(x.clone()).map_err(|e| e.to_string())?;
            t.apply(k.clone(), Some(v));
        }
    }
    Ok(())
}

fn apply(st: &mut State, rec: &Value) -> Result<(), String> {
    apply_one(&mut st.files, rec.get("files"))?;
    apply_one(&mut st.agent_runs, rec.get("agent_runs"))?;
    apply_one(&mut st.runs, rec.get("runs"))?;
    apply_one(&mut st.endpoints, rec.get("endpoints"))?;
    apply_one(&mut st.deliveries, rec.get("deliveries"))?;
    apply_one(&mut st.idempotency, rec.get("idempotency"))?;
    apply_one(&mut st.actions, rec.get("actions"))?;
    apply_one(&mut st.spaces, rec.get("spaces"))?;
    apply_one(&mut st.realtime, rec.get("realtime"))?;
    if let Some(seq) = rec.get("seq").and_then(Value::as_u64) {
        st.seq = st.seq.max(seq);
    }
    if let Some(lsn) = rec.get("lsn").and_then(Value::as_u64) {
        st.journal_lsn = st.journal_lsn.max(lsn);
    }
    Ok(())
}

/// The JSON of a whole state: the snapshot format.
///
/// # Errors
/// Serialization failed (it does not for these types).
pub fn snapshot_bytes(st: &State) -> Result<Vec<u8>, String> {
    serde_json::to_vec(st).map_err(|e| e.to_string())
}

/// A state from a snapshot and a journal (`None`: missing, an empty state / nothing to replay). `snapshot_name` and
/// `journal_name` name them in errors.
///
/// # Errors
/// A snapshot or a journal line (other than a torn last one) that is not the emulator's.
pub fn decode(
    snapshot: Option<&[u8]>,
    journal: Option<&[u8]>,
    snapshot_name: &str,
    journal_name: &str,
) -> Result<State, String> {
    let mut st = match snapshot {
        Some(bytes) => serde_json::from_slice::<State>(bytes)
            .map_err(|e| format!("{snapshot_name} is not an emulator state file: {e}"))?,
        None => State::default(),
    };
    let lines: Vec<&[u8]> = journal
        .unwrap_or_default()
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let since = st.journal_lsn;
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_slice::<Value>(line) {
            Ok(rec) => {
                // lines already folded into the snapshot (a crash between a compaction's rename and the
                // journal's truncation) are skipped: replaying them would bring back older versions
                if rec.get("lsn").and_then(Value::as_u64).unwrap_or(0) <= since {
                    continue;
                }
                apply(&mut st, &rec).map_err(|e| format!("{journal_name} line {}: {e}", i + 1))?;
            }
            // a crash during an append leaves a torn last line: it was never acknowledged
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => {
                return Err(format!(
                    "{journal_name} line {} is not a journal entry: {e}",
                    i + 1
                ))
            }
        }
    }
    clear_changes(&mut st);
    Ok(st)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changed_writes_nothing() {
        let mut st = State::default();
        assert!(take_changes(&mut st).is_none());
        st.idempotency.insert("k".into(), "agr_1".into());
        let line = take_changes(&mut st).unwrap();
        assert!(line.ends_with(b"\n"));
        assert!(take_changes(&mut st).is_none(), "marks are taken once");
    }
}
