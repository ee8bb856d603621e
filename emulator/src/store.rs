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
//! Why a journal rather than SQLite: the state is one in-memory map per collection already, every change goes
//! through [`crate::state::Tracked`], and a journal of those changes needs no new dependency and no C build; the
//! SQLite route (`rusqlite` with `bundled`) would compile SQLite's C amalgamation on every fresh CI machine and
//! still need the same change tracking.

use crate::state::{State, Tracked};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Journal size that triggers a compaction (a new snapshot, an empty journal).
pub const COMPACT_BYTES: u64 = 64 * 1024 * 1024;

/// The journal path of a state file.
pub fn journal_path(state: &Path) -> PathBuf {
    let mut s = state.as_os_str().to_owned();
    s.push(".journal");
    PathBuf::from(s)
}

/// The open journal.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    bytes: u64,
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

/// Loads the snapshot and replays the journal (missing files: empty state).
///
/// # Errors
/// A snapshot or a journal line (other than a torn last one) that is not the emulator's.
pub fn load(path: &Path) -> Result<State, String> {
    let mut st = match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<State>(&bytes).map_err(|e| {
            format!(
                "--state: {} is not an emulator state file: {e}",
                path.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::default(),
        Err(e) => return Err(format!("--state: cannot read {}: {e}", path.display())),
    };
    let jpath = journal_path(path);
    let bytes = match std::fs::read(&jpath) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("--state: cannot read {}: {e}", jpath.display())),
    };
    let lines: Vec<&[u8]> = bytes
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
                apply(&mut st, &rec)
                    .map_err(|e| format!("--state: {} line {}: {e}", jpath.display(), i + 1))?;
            }
            // a crash during an append leaves a torn last line: it was never acknowledged
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => {
                return Err(format!(
                    "--state: {} line {} is not a journal entry: {e}",
                    jpath.display(),
                    i + 1
                ))
            }
        }
    }
    clear_changes(&mut st);
    Ok(st)
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

impl Journal {
    /// Writes a snapshot of `st` and opens an empty journal next to it.
    ///
    /// # Errors
    /// The I/O error text.
    pub fn create(path: &Path, st: &mut State) -> Result<Journal, String> {
        write_snapshot(path, st)?;
        let jpath = journal_path(path);
        // append mode: every write goes to the end, also after `truncate` (a plain write handle would keep its old
        // offset and leave a hole of zero bytes at the start of the emptied journal)
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&jpath)
            .map_err(|e| format!("--state: cannot open {}: {e}", jpath.display()))?;
        file.set_len(0)
            .and_then(|_| file.sync_all())
            .map_err(|e| format!("--state: cannot sync {}: {e}", jpath.display()))?;
        sync_dir(&jpath);
        Ok(Journal {
            path: jpath,
            file,
            bytes: 0,
        })
    }

    /// Appends one line and makes it durable.
    ///
    /// # Errors
    /// The I/O error text.
    pub fn append(&mut self, line: &[u8]) -> Result<(), String> {
        self.file
            .write_all(line)
            .and_then(|_| self.file.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        self.bytes += line.len() as u64;
        Ok(())
    }

    /// Whether the journal should be compacted.
    pub fn wants_compaction(&self) -> bool {
        self.bytes >= COMPACT_BYTES
    }

    /// Empties the journal after a snapshot holds everything it had.
    ///
    /// # Errors
    /// The I/O error text.
    pub fn truncate(&mut self) -> Result<(), String> {
        self.file
            .set_len(0)
            .and_then(|_| self.file.sync_all())
            .map_err(|e| format!("cannot truncate {}: {e}", self.path.display()))?;
        self.bytes = 0;
        Ok(())
    }
}

/// Writes the whole state as the snapshot (temp file, fsync, rename, fsync of the folder).
///
/// # Errors
/// The I/O error text.
pub fn write_snapshot(path: &Path, st: &mut State) -> Result<(), String> {
    let bytes = serde_json::to_vec(&*st).map_err(|e| e.to_string())?;
    clear_changes(st);
    write_snapshot_bytes(path, &bytes)
}

/// Writes prepared snapshot bytes (temp file, fsync, rename, fsync of the folder).
///
/// # Errors
/// The I/O error text.
pub fn write_snapshot_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    res.map_err(|e| format!("cannot write state file {}: {e}", path.display()))?;
    sync_dir(path);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::state::Endpoint;

    fn ep(url: &str) -> Endpoint {
        Endpoint {
            id: "whe_a".into(),
            org: "org_demo".into(),
            url: url.into(),
            events: None,
            disabled: false,
            created_ms: 0,
            seq: 1,
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "docauto-emu-store-{}-{name}.json",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_file(journal_path(&p));
        p
    }

    /// A compaction snapshots changes that were never journaled; if the process dies before the journal is emptied,
    /// replaying the journal's older lines over that snapshot must not bring back older versions.
    #[test]
    fn journal_lines_already_in_the_snapshot_are_skipped() {
        let path = tmp("lsn");
        let mut st = State::default();
        let mut j = Journal::create(&path, &mut st).unwrap();
        st.endpoints
            .insert("whe_a".into(), ep("https://v1.example/hook"));
        j.append(&take_changes(&mut st).unwrap()).unwrap();
        st.endpoints.get_mut("whe_a").unwrap().url = "https://v2.example/hook".into();
        // compaction: snapshot (holds v2, never journaled), then a crash before the journal is emptied
        write_snapshot(&path, &mut st).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.endpoints["whe_a"].url, "https://v2.example/hook");
        // after the truncation, new lines replay over the snapshot
        j.truncate().unwrap();
        st.endpoints.get_mut("whe_a").unwrap().url = "https://v3.example/hook".into();
        j.append(&take_changes(&mut st).unwrap()).unwrap();
        st.endpoints.remove("whe_a");
        st.endpoints
            .insert("whe_b".into(), ep("https://b.example/hook"));
        j.append(&take_changes(&mut st).unwrap()).unwrap();
        let back = load(&path).unwrap();
        assert!(!back.endpoints.contains_key("whe_a"), "a removal replays");
        assert_eq!(back.endpoints["whe_b"].url, "https://b.example/hook");
        assert_eq!(back.journal_lsn, st.journal_lsn);
    }

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
