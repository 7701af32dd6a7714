//! Progress on stderr for the headless commands: one line rewritten in place on a terminal
//! (at most ten times a second), plain lines otherwise, so a log stays readable.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The live line and whether it is on screen.
pub struct StderrLine {
    pub tty: bool,
    live: bool,
    last_draw: Option<Instant>,
}

impl StderrLine {
    pub fn new() -> StderrLine {
        StderrLine {
            tty: std::io::stderr().is_terminal(),
            live: false,
            last_draw: None,
        }
    }

    /// Take the live line off the screen.
    pub fn clear(&mut self) {
        if self.live {
            eprint!("\r\x1b[2K");
            self.live = false;
        }
    }

    /// A line that stays.
    pub fn line(&mut self, s: &str) {
        self.clear();
        eprintln!("{s}");
    }

    /// Whether the live line may be redrawn now (on a terminal, 100 ms after the last).
    pub fn due(&self) -> bool {
        self.tty
            && self
                .last_draw
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(100))
    }

    /// Redraw the live line (cut to 160 characters) when it is due.
    pub fn draw(&mut self, s: &str) {
        if !self.due() {
            return;
        }
        self.last_draw = Some(Instant::now());
        let s: String = s.chars().take(160).collect();
        eprint!("\r\x1b[2K{s}");
        self.live = true;
    }
}

impl Default for StderrLine {
    fn default() -> Self {
        StderrLine::new()
    }
}
