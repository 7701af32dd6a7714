//! Test-only fault injection: with `PGLAB_FAULT=<point>` in its environment, pglab panics at
//! that point, so tests can show that every path — a panic included — puts a server back.
//! Honoured only in builds with the `fixtures` feature (the test and bench builds); in the
//! product [`point`] does nothing.
//!
//! Points: `after-whatif-change` (a what-if run has just changed the sandbox's settings),
//! `query-interleaved-trial` (a query run has timed a trial with candidate indexes hidden),
//! `tui-key` (the TUI's main thread has read a key).

/// Panic here when `PGLAB_FAULT` names this point (test builds only).
#[inline]
pub fn point(name: &str) {
    #[cfg(feature = "fixtures")]
    if std::env::var("PGLAB_FAULT").is_ok_and(|v| v == name) {
        panic!("PGLAB_FAULT={name}: a panic planted by a test");
    }
    #[cfg(not(feature = "fixtures"))]
    let _ = name;
}
