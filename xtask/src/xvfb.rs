//! An X display of our own for WebKit: WebKitGTK has no headless mode, so its MiniBrowser runs on an Xvfb server
//! that this starts on a free display number and stops (by its own PID) when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Debian's `xvfb` (installed by `cargo xtask install`).
pub const XVFB: &str = "/usr/bin/Xvfb";

/// A running Xvfb server; `name` is its display (`:N`), for `DISPLAY`.
pub struct Display {
    child: Child,
    pub name: String,
}

impl Display {
    /// Starts Xvfb with `-displayfd 1`: it takes the first free display number and prints it once it accepts
    /// clients.
    pub fn start() -> Result<Display, String> {
        let mut child = Command::new(XVFB)
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x1024x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {XVFB}: {e}"))?;
        let Some(out) = child.stdout.take() else {
            let _ = child.kill();
            return Err("Xvfb: no stdout".into());
        };
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let number = rx
            .recv_timeout(Duration::from_secs(20))
            .ok()
            .map(|line| line.trim().to_owned())
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        match number {
            Some(n) => Ok(Display {
                child,
                name: format!(":{n}"),
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err("Xvfb did not report a display in 20 s".into())
            }
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
