//! Everything the emulator remembers, serializable for `--state`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A map that remembers which keys changed since the last [`Tracked::take_dirty`]: the journal of `--state` writes
/// only those entries (an upsert, or a tombstone for a removed key). Reads go through `Deref`; every mutation goes
/// through a method here, so nothing can change an entry without it being journaled.
#[derive(Debug, Clone)]
pub struct Tracked<V> {
    map: BTreeMap<String, V>,
    dirty: BTreeSet<String>,
}

impl<V> Default for Tracked<V> {
    fn default() -> Self {
        Tracked {
            map: BTreeMap::new(),
            dirty: BTreeSet::new(),
        }
    }
}

impl<V> std::ops::Deref for Tracked<V> {
    type Target = BTreeMap<String, V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<V: Serialize> Serialize for Tracked<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.map.serialize(s)
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Tracked<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Tracked {
            map: BTreeMap::deserialize(d)?,
            dirty: BTreeSet::new(),
        })
    }
}

impl<V> Tracked<V> {
    /// Mutable access to one entry (journaled).
    pub fn get_mut(&mut self, k: &str) -> Option<&mut V> {
        if self.map.contains_key(k) {
            self.dirty.insert(k.to_string());
        }
        self.map.get_mut(k)
    }
    /// Inserts or replaces (journaled).
    pub fn insert(&mut self, k: String, v: V) -> Option<V> {
        self.dirty.insert(k.clone());
        self.map.insert(k, v)
    }
    /// Removes (journaled as a tombstone unless put back before the next write).
    pub fn remove(&mut self, k: &str) -> Option<V> {
        let v = self.map.remove(k);
        if v.is_some() {
            self.dirty.insert(k.to_string());
        }
        v
    }
    /// The entry for `k` (journaled).
    pub fn entry(&mut self, k: String) -> std::collections::btree_map::Entry<'_, String, V> {
        self.dirty.insert(k.clone());
        self.map.entry(k)
    }
    /// Mutable access to every entry: all are journaled; prefer [`Tracked::get_mut`] on the keys that change.
    pub fn values_mut(&mut self) -> std::collections::btree_map::ValuesMut<'_, String, V> {
        self.dirty.extend(self.map.keys().cloned());
        self.map.values_mut()
    }
    /// Keeps the entries `f` accepts (the others are journaled as removed).
    pub fn retain(&mut self, mut f: impl FnMut(&String, &mut V) -> bool) {
        let dirty = &mut self.dirty;
        self.map.retain(|k, v| {
            let keep = f(k, v);
            if !keep {
                dirty.insert(k.clone());
            }
            keep
        });
    }
    /// The keys changed since the last call, with their current value (None: removed).
    pub fn take_dirty(&mut self) -> Vec<(String, Option<&V>)> {
        let keys = std::mem::take(&mut self.dirty);
        keys.into_iter()
            .map(|k| {
                let v = self.map.get(&k);
                (k, v)
            })
            .collect()
    }
    /// How many change marks wait for the next journal write (or, without `--state`, the next clear).
    pub fn marks(&self) -> usize {
        self.dirty.len()
    }
    /// Forgets the change marks.
    pub fn clear_dirty(&mut self) {
        self.dirty.clear();
    }
    /// Applies one journaled change (loading).
    pub fn apply(&mut self, k: String, v: Option<V>) {
        match v {
            Some(v) => {
                self.map.insert(k, v);
            }
            None => {
                self.map.remove(&k);
            }
        }
    }
}

/// Where a run's events go.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum WebhookRef {
    /// An ad hoc URL.
    Url(String),
    /// A saved endpoint id.
    Id(String),
}

/// One event waiting to be (re)delivered.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct PendingEvent {
    /// `evt_` id.
    pub event_id: String,
    /// Event type.
    pub kind: String,
    /// Run or space id.
    pub processing_id: String,
    /// When it happened (unix ms).
    pub occurred_ms: i64,
    /// Payload.
    pub data: Value,
    /// Attempts made so far.
    pub attempts: u32,
}

/// A registered or produced file.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct FileRec {
    /// `file_` id.
    pub id: String,
    /// Owning organization.
    pub org: String,
    /// Display name.
    pub name: String,
    /// MIME type.
    pub mime_type: String,
    /// Content.
    #[serde(with = "crate::util::b64")]
    pub bytes: Vec<u8>,
    /// `awaiting_upload`, `processing`, `ready` (`processing` turns `ready` at `ready_ms`).
    pub status: String,
    /// Creation (unix ms).
    pub created_ms: i64,
    /// When `processing` becomes `ready`.
    pub ready_ms: i64,
    /// Source URL when registered by URL.
    pub source_url: Option<String>,
    /// Upload token when registered by `{name, mimeType}`.
    pub upload_token: Option<String>,
    /// Upload address deadline.
    pub upload_expires_ms: i64,
    /// Run that created it inline (expires with it).
    pub run_id: Option<String>,
}

/// One step of an agent run.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RunTask {
    /// Task id (from the agent).
    pub id: String,
    /// Title.
    pub title: String,
    /// `agent` or `human`.
    pub executor: String,
    /// Ids this step waits for.
    pub depends_on: Vec<String>,
    /// `pending`, `ready`, `in_progress`, `completed`, `skipped`.
    pub status: String,
    /// Summary recorded at close.
    pub summary: Option<String>,
    /// Close time.
    pub completed_ms: Option<i64>,
    /// Work start (agent steps).
    pub started_ms: Option<i64>,
    /// When the agent's work is done (None while held by a `before` gate).
    pub due_ms: Option<i64>,
    /// File produced by the step, if any.
    pub produced_file: Option<String>,
}

/// A sign-off.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RunApproval {
    /// `apr_` id.
    pub id: String,
    /// `before` or `output`.
    pub kind: String,
    /// Action name.
    pub action: String,
    /// Task it gates.
    pub task_id: String,
    /// Request time.
    pub requested_ms: i64,
    /// Why it is asked.
    pub rationale: String,
    /// File ids.
    pub files: Vec<String>,
    /// Proposed inputs.
    pub params: Value,
    /// `pending`, `approved`, `rejected`.
    pub status: String,
    /// Decision time.
    pub decided_ms: Option<i64>,
    /// Decision note.
    pub note: Option<String>,
}

/// Why and since when an agent run is paused (control API only).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Paused {
    /// `model_error` or `system_error`.
    pub reason: String,
    /// Pause time (unix ms): work due dates move by the paused time on resume.
    pub since_ms: i64,
    /// Status to return to on resume.
    pub resume_to: String,
}

/// An agent run.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct AgentRun {
    /// `agr_` id.
    pub id: String,
    /// Organization.
    pub org: String,
    /// Creating key (for `--scope-keys`), never printed.
    pub key: crate::util::Secret,
    /// Agent id.
    pub agent_id: String,
    /// Agent name.
    pub agent_name: String,
    /// Agent version.
    pub agent_version: i64,
    /// Status.
    pub status: String,
    /// Steps.
    pub tasks: Vec<RunTask>,
    /// All approvals (decided ones too).
    pub approvals: Vec<RunApproval>,
    /// Input file ids.
    pub input_files: Vec<String>,
    /// Output file ids.
    pub output_files: Vec<String>,
    /// Closing summary.
    pub result: Option<String>,
    /// Failure `(code, message)`.
    pub error: Option<(String, String)>,
    /// Completed with outstanding work.
    pub incomplete: bool,
    /// Caller metadata.
    pub metadata: Option<Value>,
    /// Event destination.
    pub webhook: Option<WebhookRef>,
    /// Creation.
    pub created_ms: i64,
    /// Deadline.
    pub expires_ms: i64,
    /// When processing began.
    pub started_ms: Option<i64>,
    /// Events not yet delivered.
    pub pending_events: Vec<PendingEvent>,
    /// Set while `paused`.
    #[serde(default)]
    pub paused: Option<Paused>,
    /// Creation order.
    pub seq: u64,
}

/// A capability run.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct CapRun {
    /// Id with its verb prefix.
    pub id: String,
    /// Organization.
    pub org: String,
    /// `extract_run`, `parse_run`, ...
    pub object: String,
    /// `processing`, `processed`, `failed`, `cancelled`, `expired`, `needs_input`.
    pub status: String,
    /// Applied config.
    pub config: Value,
    /// Result, revealed at `done_ms`.
    pub output: Option<Value>,
    /// Failure reported at `done_ms` instead of an output.
    pub error: Option<(String, String)>,
    /// Caller metadata.
    pub metadata: Option<Value>,
    /// Event destination.
    pub webhook: Option<WebhookRef>,
    /// Creation.
    pub created_ms: i64,
    /// When processing finishes.
    pub done_ms: i64,
    /// Purge deadline (None once kept or while a sign envelope is open).
    pub expires_ms: Option<i64>,
    /// ttl seconds asked.
    pub ttl: i64,
    /// Space it was kept into.
    pub space_id: Option<String>,
    /// Files it produced: (output name, file id).
    pub produced: Vec<(String, String)>,
    /// Steps of a pipeline (capability names), for `run.*` events.
    pub steps: Vec<String>,
    /// Sign: signers and envelope state.
    pub envelope: Option<Value>,
    /// Purged by ttl at this time (410, then 404 after the grace window).
    pub purged_ms: Option<i64>,
    /// Deleted explicitly (404, delete stays 204).
    pub deleted: bool,
    /// When it was deleted (its record is dropped [`crate::runs::PURGE_GRACE_MS`] later; None in state files
    /// written before this field: the grace then counts from creation).
    #[serde(default)]
    pub deleted_ms: Option<i64>,
    /// Input file ids (for `file.processed`).
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Input files that could not be read (`file.failed` at the end of processing).
    #[serde(default)]
    pub failed_files: Vec<String>,
    /// Whether the completion events were queued.
    pub finished_events: bool,
    /// Creation order.
    pub seq: u64,
}

/// A saved webhook endpoint.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Endpoint {
    /// `whe_` id.
    pub id: String,
    /// Organization.
    pub org: String,
    /// Target URL.
    pub url: String,
    /// Event filter (None: all types).
    pub events: Option<Vec<String>>,
    /// Paused.
    pub disabled: bool,
    /// Creation.
    pub created_ms: i64,
    /// Creation order.
    pub seq: u64,
}

/// One delivery attempt.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Delivery {
    /// Endpoint id.
    pub endpoint_id: String,
    /// Run id.
    pub processing_id: String,
    /// Event id.
    pub event_id: String,
    /// Event type.
    pub kind: String,
    /// Attempt number (1-based).
    pub attempt: u32,
    /// Receiver status (0: no answer).
    pub response_status: u16,
    /// 2xx.
    pub ok: bool,
    /// Time.
    pub at_ms: i64,
}

/// A saved action (config of extract, redact or fill).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Action {
    /// `act_` id.
    pub id: String,
    /// Organization.
    pub org: String,
    /// `extract`, `redact`, `fill` or `sign`.
    pub capability: String,
    /// Name.
    pub name: String,
    /// Slug derived from the name.
    pub slug: String,
    /// Saved config.
    pub config: Value,
    /// Creation.
    pub created_ms: i64,
}

/// A space runs are kept into.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Space {
    /// `spc_` id.
    pub id: String,
    /// Organization.
    pub org: String,
    /// Name.
    pub name: String,
    /// Creation.
    pub created_ms: i64,
    /// Closing deadline, if any.
    #[serde(default)]
    pub expires_ms: Option<i64>,
    /// Closed after its deadline (its runs and files are gone; `space.expired` was fired).
    #[serde(default)]
    pub closed: bool,
}

/// A realtime session.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RtSession {
    /// `rts_` id.
    pub id: String,
    /// Organization.
    pub org: String,
    /// Single-use ticket (secret).
    pub ticket: crate::util::Secret,
    /// Ticket consumed.
    pub ticket_used: bool,
    /// Sample rate.
    pub sample_rate: u32,
    /// Keep a transcript.
    pub final_pass: bool,
    /// Creation.
    pub created_ms: i64,
    /// Ticket deadline.
    pub expires_ms: i64,
    /// `created`, `connected`, `closed`, `expired`.
    pub status: String,
    /// Credits charged.
    pub credits: u64,
    /// Decoded audio in ms.
    pub audio_ms: u64,
    /// Final segments kept when `final_pass`.
    pub transcript: Vec<Value>,
}

/// The whole state.
#[derive(Serialize, Deserialize, Default, Debug)]
pub struct State {
    /// Signing key secret (kept so `kid` survives a restart).
    #[serde(with = "crate::util::b64", default)]
    pub signing_secret: Vec<u8>,
    /// Sequence counter.
    pub seq: u64,
    /// Last journal line folded into this state (`--state`; see [`crate::store`]).
    #[serde(default)]
    pub journal_lsn: u64,
    /// Files.
    pub files: Tracked<FileRec>,
    /// Agent runs.
    pub agent_runs: Tracked<AgentRun>,
    /// Capability runs.
    pub runs: Tracked<CapRun>,
    /// Webhook endpoints.
    pub endpoints: Tracked<Endpoint>,
    /// Deliveries per endpoint, newest first, at most 50.
    pub deliveries: Tracked<VecDeque<Delivery>>,
    /// `org|scope|key` -> run id.
    pub idempotency: Tracked<String>,
    /// Saved actions.
    pub actions: Tracked<Action>,
    /// Spaces.
    pub spaces: Tracked<Space>,
    /// Realtime sessions.
    pub realtime: Tracked<RtSession>,
    /// Idempotency keys reserved by requests still working (not persisted: a reservation lives in one request).
    #[serde(skip)]
    pub idem_inflight: std::collections::HashMap<String, tokio::sync::watch::Receiver<()>>,
}

impl State {
    /// Next creation order number.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
}

impl State {
    /// Entries held per collection, plus the change marks not yet journaled: what the load check prints next to the
    /// resident memory, so a plateau (or a leak) shows in counts, not only in bytes.
    pub fn sizes(&self) -> Vec<(&'static str, usize)> {
        let marks = self.files.marks()
            + self.agent_runs.marks()
            + self.runs.marks()
            + self.endpoints.marks()
            + self.deliveries.marks()
            + self.idempotency.marks()
            + self.actions.marks()
            + self.spaces.marks()
            + self.realtime.marks();
        vec![
            ("runs", self.runs.len()),
            ("files", self.files.len()),
            ("agent_runs", self.agent_runs.len()),
            ("endpoints", self.endpoints.len()),
            (
                "delivery_rows",
                self.deliveries.values().map(VecDeque::len).sum(),
            ),
            ("idempotency", self.idempotency.len()),
            ("idem_inflight", self.idem_inflight.len()),
            ("actions", self.actions.len()),
            ("spaces", self.spaces.len()),
            ("realtime", self.realtime.len()),
            ("change_marks", marks),
        ]
    }
}
