//! The only module that touches the terminal: raw mode, the alternate screen, reading keys,
//! and putting everything back on exit, on error and on panic.

use std::io::{self, IsTerminal, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{Event, EventStream, KeyEventKind};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::frame::{ByteCount, Counted};
use super::msg::Msg;

/// The UI's terminal; every byte it writes is counted ([`super::frame`]).
pub(crate) type Tui = Terminal<CrosstermBackend<Counted<Stdout>>>;

/// True while the terminal is in raw mode on the alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The terminal is gone (its other end closed): writes fail with EIO or a broken pipe.
pub(crate) fn is_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe || e.raw_os_error() == Some(libc::EIO)
}

/// Both ends of the terminal are a terminal (the UI cannot work over a pipe).
pub(crate) fn is_interactive() -> bool {
    io::stdin().is_terminal() && io::stdout().is_terminal()
}

/// The terminal in UI mode; dropping it restores the terminal.
pub(crate) struct TerminalGuard {
    /// Dropped by hand: ratatui's own drop prints to stderr when it cannot show the cursor,
    /// and printing to the stderr of a terminal that is gone panics (and aborts, leaving the
    /// sandbox running).
    pub terminal: std::mem::ManuallyDrop<Tui>,
    /// Bytes written to the terminal so far.
    pub bytes: ByteCount,
}

impl TerminalGuard {
    pub(crate) fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let (out, bytes) = Counted::new(io::stdout());
        let setup = execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)
            .and_then(|_| Terminal::new(CrosstermBackend::new(out)));
        match setup {
            Ok(terminal) => Ok(TerminalGuard {
                terminal: std::mem::ManuallyDrop::new(terminal),
                bytes,
            }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    pub(crate) fn size(&self) -> (u16, u16) {
        self.terminal
            .size()
            .map(|s| (s.width, s.height))
            .unwrap_or((80, 24))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
        if self.terminal.show_cursor().is_ok() {
            // SAFETY: dropped once, here, and never used again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.terminal) };
        }
        // Otherwise the terminal is gone: leave it undropped (the process is ending) rather
        // than let ratatui print about it to a dead stderr.
    }
}

/// Leave the alternate screen, show the cursor, back to cooked mode. Safe to call twice.
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
        let _ = disable_raw_mode();
    }
}

/// Where a panic's backtrace goes while the UI has the screen (pglab's log file).
static LOG_FILE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Name the log file the panic sentence points to.
pub(crate) fn set_log_file(path: std::path::PathBuf) {
    let _ = LOG_FILE.set(path);
}

/// While the UI has the screen nothing is printed over it: a panic's message and backtrace go
/// to the log. A panic on a task (a run, a probe) ends that task only, and the UI says so in
/// its pane (the run "stopped without a result"); the terminal stays as the UI set it. A panic
/// of the UI itself (the main thread) restores the terminal first, then says one sentence.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !ACTIVE.load(Ordering::SeqCst) {
                previous(info);
                return;
            }
            let backtrace = std::backtrace::Backtrace::force_capture();
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("unnamed");
            tracing::error!("panic on thread {name}: {info}\n{backtrace}");
            if name == "main" {
                restore();
                eprintln!("{}", panic_sentence(info.location(), LOG_FILE.get()));
            }
        }));
    });
}

/// The one line a panic of the UI leaves on the terminal.
fn panic_sentence(
    at: Option<&std::panic::Location<'_>>,
    log: Option<&std::path::PathBuf>,
) -> String {
    let at = at
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    let log = log
        .map(|p| format!("the details are in {}", p.display()))
        .unwrap_or_else(|| "the details are in pglab's log".into());
    format!(
        "pglab stopped on an internal error{at} (a bug: please report it); the terminal is restored and {log}"
    )
}

/// A line shown while the UI waits before it takes the screen ("starting the sandbox…"),
/// erased once the wait is over: the terminal the UI leaves behind keeps nothing of it.
pub(crate) struct Announcement {
    tty: bool,
}

/// Say `text` on stderr until [`Announcement::clear`]. On a terminal the line has no newline,
/// so that clearing can take it back; elsewhere (a log file) it is an ordinary line.
pub(crate) fn announce(text: &str) -> Announcement {
    let tty = io::stderr().is_terminal();
    let _ = write_announcement(&mut io::stderr(), text, tty);
    Announcement { tty }
}

impl Announcement {
    /// Erase the line (on a terminal; a log keeps it).
    pub(crate) fn clear(self) {
        let _ = write_clear(&mut io::stderr(), self.tty);
    }
}

fn write_announcement(w: &mut impl io::Write, text: &str, tty: bool) -> io::Result<()> {
    if tty {
        write!(w, "{text}")?;
    } else {
        writeln!(w, "{text}")?;
    }
    w.flush()
}

/// Back to the start of the line and erase it.
fn write_clear(w: &mut impl io::Write, tty: bool) -> io::Result<()> {
    if tty {
        write!(w, "\r\x1b[2K")?;
        w.flush()?;
    }
    Ok(())
}

/// Keys and resizes, as messages.
pub(crate) struct Input {
    events: EventStream,
}

impl Default for Input {
    fn default() -> Self {
        Input::new()
    }
}

impl Input {
    pub(crate) fn new() -> Input {
        Input {
            events: EventStream::new(),
        }
    }

    /// The next key or resize; None when the terminal is gone.
    pub(crate) async fn next(&mut self) -> Option<io::Result<Msg>> {
        loop {
            match self.events.next().await? {
                Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                    return Some(Ok(Msg::Key(k)));
                }
                Ok(Event::Resize(w, h)) => return Some(Ok(Msg::Resize(w, h))),
                Ok(_) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a terminal shows on its last line after `bytes`: the text after the last line
    /// break, with carriage returns and "erase line" applied.
    fn last_line(bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        let line = text.rsplit('\n').next().unwrap_or("").to_string();
        let mut shown = String::new();
        for part in line.split('\r') {
            shown = part.replace("\x1b[2K", "");
        }
        shown
    }

    #[test]
    fn the_wait_line_is_gone_when_the_ui_leaves() {
        let mut out = Vec::new();
        write_announcement(&mut out, "starting the sandbox…", true).unwrap();
        assert_eq!(last_line(&out), "starting the sandbox…");
        write_clear(&mut out, true).unwrap();
        assert_eq!(last_line(&out), "", "{out:?}");
        assert!(!out.contains(&b'\n'), "no line break to take back");
        // Not a terminal: an ordinary line, kept.
        let mut log = Vec::new();
        write_announcement(&mut log, "starting the sandbox…", false).unwrap();
        write_clear(&mut log, false).unwrap();
        assert_eq!(String::from_utf8(log).unwrap(), "starting the sandbox…\n");
    }
}
