//! The files of `--state` (the format is [`crate::store`]'s) and of `--agents`: the emulator's only file reads and
//! writes. A snapshot is written whole (temp file, fsync, rename, fsync of the folder); the journal takes one line per
//! write, `fdatasync`ed before the answers whose changes it carries leave.

use crate::state::State;
use crate::store::{clear_changes, journal_path, snapshot_bytes, take_changes, COMPACT_BYTES};
use crate::util::lock;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The open journal.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    bytes: u64,
}

/// Reads a state (snapshot plus journal; missing files: empty state).
///
/// # Errors
/// The files exist but cannot be read or are not the emulator's.
pub fn load_state(path: &Path) -> Result<State, String> {
    let read = |p: &Path| match std::fs::read(p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("--state: cannot read {}: {e}", p.display())),
    };
    let jpath = journal_path(path);
    let snapshot = read(path)?;
    let journal = read(&jpath)?;
    crate::store::decode(
        snapshot.as_deref(),
        journal.as_deref(),
        &path.display().to_string(),
        &jpath.display().to_string(),
    )
    .map_err(|e| format!("--state: {e}"))
}

/// The agent files of `--agents DIR` (`*.json`, by name): `(path, text)` pairs for [`crate::agent_definitions::load`].
///
/// # Errors
/// The folder or a file cannot be read.
pub fn read_agents(dir: Option<&Path>) -> Result<Vec<(String, String)>, String> {
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let rd = std::fs::read_dir(dir).map_err(|e| format!("--agents {}: {e}", dir.display()))?;
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}

/// The durable store of `--state`: the open journal, and whether the next write is a whole snapshot.
pub struct Store {
    snapshot_due: AtomicBool,
    journal: tokio::sync::Mutex<Option<Journal>>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            snapshot_due: AtomicBool::new(false),
            journal: tokio::sync::Mutex::new(None),
        }
    }
}

impl Store {
    /// The next [`Store::persist`] writes a whole snapshot and empties the journal (a clean stop).
    pub fn request_snapshot(&self) {
        self.snapshot_due.store(true, Ordering::SeqCst);
    }

    /// Opens the store at `path`: writes a snapshot of the loaded state (with the signing key) and an empty journal.
    ///
    /// # Errors
    /// The I/O error text.
    pub fn open(&self, path: &Path, state: &Mutex<State>) -> Result<(), String> {
        let j = Journal::create(path, &mut lock(state))?;
        if let Ok(mut slot) = self.journal.try_lock() {
            *slot = Some(j);
        }
        Ok(())
    }

    /// Makes every change so far durable: one journal line with the changed entries, `fdatasync`ed; a snapshot
    /// instead when the journal is large or a write failed. Without a path it only forgets the change marks.
    /// Concurrent callers queue; each returns once its changes are on disk.
    ///
    /// # Errors
    /// The I/O error text.
    pub async fn persist(&self, path: Option<&Path>, state: &Mutex<State>) -> Result<(), String> {
        let Some(path) = path.map(Path::to_path_buf) else {
            clear_changes(&mut lock(state));
            return Ok(());
        };
        let mut slot = self.journal.lock().await;
        let snapshot_due = self.snapshot_due.swap(false, Ordering::SeqCst)
            || slot.as_ref().is_none_or(|j| j.wants_compaction());
        if snapshot_due {
            let bytes = {
                let mut st = lock(state);
                let b = snapshot_bytes(&st);
                clear_changes(&mut st);
                b
            }?;
            let journal = slot.take();
            let (res, journal) = tokio::task::spawn_blocking(move || {
                let mut journal = journal;
                let res =
                    write_snapshot_bytes(&path, &bytes).and_then(|_| match journal.as_mut() {
                        Some(j) => j.truncate(),
                        None => Ok(()),
                    });
                (res, journal)
            })
            .await
            .map_err(|e| e.to_string())?;
            *slot = journal;
            if res.is_err() {
                self.snapshot_due.store(true, Ordering::SeqCst);
            }
            return res;
        }
        let Some(line) = take_changes(&mut lock(state)) else {
            return Ok(());
        };
        let journal = slot.take();
        let (res, journal) = tokio::task::spawn_blocking(move || {
            let mut journal = journal;
            let res = match journal.as_mut() {
                Some(j) => j.append(&line),
                None => Err("no journal".to_string()),
            };
            (res, journal)
        })
        .await
        .map_err(|e| e.to_string())?;
        *slot = journal;
        if res.is_err() {
            // the changes were taken but are not on disk: the next write is a whole snapshot
            self.snapshot_due.store(true, Ordering::SeqCst);
        }
        res
    }
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
    let bytes = snapshot_bytes(st)?;
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
        let back = load_state(&path).unwrap();
        assert_eq!(back.endpoints["whe_a"].url, "https://v2.example/hook");
        // after the truncation, new lines replay over the snapshot
        j.truncate().unwrap();
        st.endpoints.get_mut("whe_a").unwrap().url = "https://v3.example/hook".into();
        j.append(&take_changes(&mut st).unwrap()).unwrap();
        st.endpoints.remove("whe_a");
        st.endpoints
            .insert("whe_b".into(), ep("https://b.example/hook"));
        j.append(&take_changes(&mut st).unwrap()).unwrap();
        let back = load_state(&path).unwrap();
        assert!(!back.endpoints.contains_key("whe_a"), "a removal replays");
        assert_eq!(back.endpoints["whe_b"].url, "https://b.example/hook");
        assert_eq!(back.journal_lsn, st.journal_lsn);
        drop(j);
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(journal_path(&path));
    }
}
