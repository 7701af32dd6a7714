//! A tmux server of a test's own (`-L`), so no one else's sessions are touched: the real
//! binary in a real terminal, its screen read as a user sees it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    /// A session `e2e` of `w`×`h` running `script` in a shell.
    pub fn start(tag: &str, w: u16, h: u16, script: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("pglab-e2e-{}-{tag}", std::process::id()),
        };
        let (w, h) = (w.to_string(), h.to_string());
        let out = tmux.cmd(&["new-session", "-d", "-s", "e2e", "-x", &w, "-y", &h, script]);
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    /// Wait until the screen satisfies `ok`; the last screen either way.
    pub fn wait_for(&self, what: &str, timeout: Duration, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

pub fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// True (after saying so, or failing under CI) when tmux is not installed.
pub fn tmux_missing() -> bool {
    if Command::new("tmux").arg("-V").output().is_err() {
        crate::common::skip_or_fail(
            "tmux is not installed (apt-get install tmux); the TUI end-to-end test did not run",
        );
        return true;
    }
    false
}
