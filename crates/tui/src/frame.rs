//! Drawing one frame for a terminal that may be at the end of a slow SSH link: each frame is
//! wrapped in synchronized output (DEC mode 2026, so the terminal shows it whole, never half
//! drawn; terminals without the mode ignore it), and every byte written is counted so that
//! the cost of the UI on the wire is a number, not a guess (logged at exit, and measured by
//! `cargo bench --bench terminal_bytes`).

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::{Frame, Terminal};

/// After a key or a resize the next frame may follow this soon (the UI answers at once).
pub(crate) const KEY_FRAME: Duration = Duration::from_millis(50);
/// Background changes (progress, readings, the spinner) are drawn at most this often: a
/// progress view polled ten times a second does not need ten frames a second over SSH.
pub(crate) const BACKGROUND_FRAME: Duration = Duration::from_millis(250);

/// When to draw: only after something changed, and no sooner than the pace allows.
#[derive(Debug, Default, Clone)]
pub struct Pacer {
    last: Option<Instant>,
    dirty: bool,
    urgent: bool,
}

impl Pacer {
    /// Something changed; `urgent` when the user did it (a key, a resize).
    pub fn changed(&mut self, urgent: bool) {
        self.dirty = true;
        self.urgent |= urgent;
    }

    /// When the next frame is due (None: nothing to draw).
    pub fn due(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(self.last.map_or_else(Instant::now, |t| t + self.pace()))
    }

    /// Whether to draw at `now`.
    pub(crate) fn ready(&self, now: Instant) -> bool {
        self.dirty && self.last.is_none_or(|t| t + self.pace() <= now)
    }

    fn pace(&self) -> Duration {
        if self.urgent {
            KEY_FRAME
        } else {
            BACKGROUND_FRAME
        }
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.last = Some(now);
        self.dirty = false;
        self.urgent = false;
    }

    pub(crate) fn first(&self) -> bool {
        self.last.is_none()
    }
}

/// A writer that counts what passes through it.
pub struct Counted<W> {
    inner: W,
    bytes: ByteCount,
}

/// The count of a [`Counted`] writer, readable while the terminal owns the writer.
#[derive(Debug, Clone, Default)]
pub struct ByteCount(Arc<AtomicU64>);

impl ByteCount {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<W> Counted<W> {
    /// The writer, and a handle to read its count.
    pub fn new(inner: W) -> (Counted<W>, ByteCount) {
        let bytes = ByteCount::default();
        (
            Counted {
                inner,
                bytes: bytes.clone(),
            },
            bytes,
        )
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes.0.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A terminal whose output is counted.
pub type CountedTerminal<W> = Terminal<CrosstermBackend<Counted<W>>>;

/// Draw one frame; with `synchronized`, between DEC 2026 begin and end marks.
pub fn draw<W: Write>(
    term: &mut CountedTerminal<W>,
    synchronized: bool,
    render: impl FnOnce(&mut Frame),
) -> io::Result<()> {
    if synchronized {
        queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    }
    term.draw(render)?;
    if synchronized {
        execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_draw_at_once_and_background_changes_are_paced() {
        let mut p = Pacer::default();
        assert_eq!(p.due(), None);
        p.changed(false);
        let t0 = Instant::now();
        assert!(p.ready(t0), "the first frame is drawn at once");
        p.drawn(t0);
        p.changed(false);
        assert!(!p.ready(t0 + Duration::from_millis(100)));
        assert!(p.ready(t0 + BACKGROUND_FRAME));
        p.changed(true);
        assert!(
            p.ready(t0 + KEY_FRAME),
            "a key does not wait for the background pace"
        );
        p.drawn(t0 + KEY_FRAME);
        assert_eq!(p.due(), None);
    }
    use ratatui::widgets::Paragraph;
    use std::sync::Mutex;

    /// A shared buffer, to see what went out.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn frames_are_wrapped_and_counted() {
        let out = Shared::default();
        let (w, count) = Counted::new(out.clone());
        let mut t = Terminal::with_options(
            CrosstermBackend::new(w),
            ratatui::TerminalOptions {
                viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, 20, 2)),
            },
        )
        .unwrap();
        draw(&mut t, true, |f| {
            f.render_widget(Paragraph::new("hello"), f.area())
        })
        .unwrap();
        let bytes = out.0.lock().unwrap().clone();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.starts_with("\x1b[?2026h"), "{text:?}");
        assert!(text.ends_with("\x1b[?2026l"), "{text:?}");
        assert!(text.contains("hello"));
        assert_eq!(count.get(), bytes.len() as u64);
        // The same frame again changes nothing on screen: only a few control bytes go out.
        let before = count.get();
        draw(&mut t, false, |f| {
            f.render_widget(Paragraph::new("hello"), f.area())
        })
        .unwrap();
        assert!(count.get() - before < 40, "{}", count.get() - before);
    }
}
