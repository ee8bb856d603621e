//! Process helpers: run a child with a deadline, echo and capture its output, kill its whole tree.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The repository root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// A temporary folder of one `cargo xtask test` or `cargo xtask bench` run: the `TMPDIR` of every process the run
/// starts, removed with whatever is left in it when the run ends. Browsers and miniflare leave folders in the
/// temporary directory when they are killed or when their disposal runs after the process that asked for it has
/// exited: a few runs had left about 170 `org.chromium.Chromium.*` and 60 `miniflare-*` folders in /tmp. Under the
/// system's temporary directory by a short name (`docauto-<pid>`): PulseAudio and Chromium put Unix sockets in the
/// folders they make there, and a socket's path holds about 100 bytes.
pub struct RunTmp {
    /// The folder, until the run leaves it.
    dir: Option<PathBuf>,
    /// `TMPDIR` before the run, given back when it leaves.
    outer: Option<OsString>,
}

impl RunTmp {
    /// Makes the folder and sets `TMPDIR` to it for this process and its children. When the folder cannot be made,
    /// says so and leaves `TMPDIR` as it is.
    pub fn enter() -> Self {
        let outer = std::env::var_os("TMPDIR");
        let dir = std::env::temp_dir().join(format!("docauto-{}", std::process::id()));
        match std::fs::create_dir_all(&dir) {
            Ok(()) => {
                std::env::set_var("TMPDIR", &dir);
                Self {
                    dir: Some(dir),
                    outer,
                }
            }
            Err(e) => {
                println!(
                    "xtask: cannot make {}: {e}; the run keeps the system's temporary directory",
                    dir.display()
                );
                Self { dir: None, outer }
            }
        }
    }

    /// Gives `TMPDIR` back and removes the folder (also done when dropped). Says so if the removal failed.
    pub fn leave(&mut self) {
        let Some(dir) = self.dir.take() else {
            return;
        };
        match &self.outer {
            Some(outer) => std::env::set_var("TMPDIR", outer),
            None => std::env::remove_var("TMPDIR"),
        }
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            if dir.exists() {
                println!("xtask: cannot remove {}: {e}", dir.display());
            }
        }
    }
}

impl Drop for RunTmp {
    fn drop(&mut self) {
        self.leave();
    }
}

/// What a finished child left behind.
pub struct Finished {
    /// `Some(code)` when it exited, `None` when killed by a signal or by our deadline.
    pub code: Option<i32>,
    /// True when the deadline killed it.
    pub timed_out: bool,
    /// Everything it printed on stdout and stderr, interleaved by line.
    pub output: String,
}

impl Finished {
    /// Exited with status 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Prints a step banner.
pub fn step(msg: &str) {
    let now = Instant::now();
    let previous = LAST_STEP.lock().ok().and_then(|mut last| last.replace(now));
    if let Some(started) = previous {
        println!("    ({} s)", now.duration_since(started).as_secs());
    }
    println!("==> {msg}");
}

/// When the last [`step`] began: each step prints how long the one before it took, so a run's log shows where its
/// time went.
static LAST_STEP: Mutex<Option<Instant>> = Mutex::new(None);

/// Runs `cmd` with a deadline; echoes its output line by line (when `echo`) and captures it.
pub fn run_capture(cmd: &mut Command, limit: Duration, echo: bool) -> Result<Finished, String> {
    let shown = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let buf = Arc::new(Mutex::new(String::new()));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(pump(out, Arc::clone(&buf), echo));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(pump(err, Arc::clone(&buf), echo));
    }
    let (code, timed_out) = wait_deadline(&mut child, limit);
    for r in readers {
        let _ = r.join();
    }
    if timed_out {
        println!("xtask: {shown} killed after {} s", limit.as_secs());
    }
    let output = buf.lock().map(|s| s.clone()).unwrap_or_default();
    Ok(Finished {
        code,
        timed_out,
        output,
    })
}

/// Runs `cmd` with inherited stdout/stderr and a deadline; Ok(()) only on exit status 0.
pub fn run(cmd: &mut Command, limit: Duration) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    cmd.stdin(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let (code, timed_out) = wait_deadline(&mut child, limit);
    if timed_out {
        return Err(format!("{shown} killed after {} s", limit.as_secs()));
    }
    match code {
        Some(0) => Ok(()),
        other => Err(format!("{shown} failed (exit {other:?})")),
    }
}

fn pump<R: Read + Send + 'static>(
    src: R,
    buf: Arc<Mutex<String>>,
    echo: bool,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut reader = BufReader::new(src);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    if echo {
                        print!("{text}");
                    }
                    if let Ok(mut b) = buf.lock() {
                        b.push_str(&text);
                    }
                }
            }
        }
    })
}

/// Waits for `child` until `limit`; on expiry kills it and all its descendants.
fn wait_deadline(child: &mut Child, limit: Duration) -> (Option<i32>, bool) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (status.code(), false),
            Ok(None) => {}
            Err(_) => return (None, false),
        }
        if start.elapsed() >= limit {
            kill_tree(child.id());
            let _ = child.kill();
            let _ = child.wait();
            return (None, true);
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Kills `pid` and every process descending from it (found through /proc).
pub fn kill_tree(pid: u32) {
    let mut all = vec![pid];
    let mut i = 0;
    while let Some(&p) = all.get(i) {
        all.extend(children_of(p));
        i += 1;
    }
    for p in all.iter().rev() {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(child) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Format: pid (comm) state ppid ...; comm may contain spaces, so split after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// True when `program --version`-like `args` prints output containing `needle`.
pub fn output_contains(program: &Path, args: &[&str], needle: &str) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(needle))
        .unwrap_or(false)
}

/// Reads a `key = "value"` line of the `[package]` table of the root Cargo.toml.
pub fn package_field(key: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    let mut in_package = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
            continue;
        }
        if in_package {
            if let Some(v) = quoted_value(t, key) {
                return Ok(v);
            }
        }
    }
    Err(format!("Cargo.toml [package] has no {key}"))
}

/// The exact version of the `wasm-bindgen` dependency (the `=` stripped) from the root Cargo.toml.
pub fn wasm_bindgen_version() -> Result<String, String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    for line in text.lines() {
        let t = line.trim();
        let Some(rest) = t.strip_prefix("wasm-bindgen") else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('=') {
            continue;
        }
        let v = if rest.contains('{') {
            rest.split("version")
                .nth(1)
                .and_then(|r| quoted_value(&format!("version{r}"), "version"))
        } else {
            quoted_value(t, "wasm-bindgen")
        };
        if let Some(v) = v {
            return Ok(v.trim_start_matches('=').to_string());
        }
    }
    Err("Cargo.toml pins no wasm-bindgen version".into())
}

fn quoted_value(line: &str, key: &str) -> Option<String> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    rest.get(..end).map(str::to_string)
}
