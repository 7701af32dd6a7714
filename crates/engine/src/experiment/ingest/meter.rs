//! What the clients of one trial count together: rows committed so far (for live progress)
//! and rows per second of the trial (for the decay series).
//!
//! A client does not touch the shared meter per batch: its [`Tally`] adds up locally and
//! passes the sum on when the trial's second changes or `FLUSH_EVERY` has passed, so four
//! clients inserting 15k rows/s each take a shared lock ~100 times a second, not 60,000.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a client holds committed rows back from the shared count (progress is drawn
/// every 100 ms).
const FLUSH_EVERY: Duration = Duration::from_millis(20);

pub(crate) struct Meter {
    start: Instant,
    done: AtomicU64,
    buckets: Mutex<Vec<u64>>,
}

impl Meter {
    /// Start counting now.
    pub(crate) fn new() -> Meter {
        Meter {
            start: Instant::now(),
            done: AtomicU64::new(0),
            buckets: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn start(&self) -> Instant {
        self.start
    }

    /// Record `rows` committed in second `second` of the trial.
    fn add_in(&self, rows: u64, second: usize) {
        self.done.fetch_add(rows, Ordering::Relaxed);
        if let Ok(mut b) = self.buckets.lock() {
            if b.len() <= second {
                b.resize(second + 1, 0);
            }
            b[second] += rows;
        }
    }

    pub(crate) fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Rows/s in each whole second of a trial that lasted `seconds`; the last, partial second
    /// is scaled to a rate and kept only when it lasted at least half a second.
    pub(crate) fn series(&self, seconds: f64) -> Vec<f64> {
        let b = self.buckets.lock().map(|b| b.clone()).unwrap_or_default();
        series_of(&b, seconds)
    }
}

/// One client's count, passed on to the shared [`Meter`] in sums (see the module's note).
/// Its rows reach the meter exactly: the last ones on [`Tally::flush`] (or drop).
pub(crate) struct Tally<'a> {
    meter: &'a Meter,
    second: usize,
    rows: u64,
    since: Instant,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(meter: &'a Meter) -> Tally<'a> {
        Tally {
            meter,
            second: 0,
            rows: 0,
            since: Instant::now(),
        }
    }

    /// Count `rows` committed at `now`.
    pub(crate) fn add(&mut self, rows: u64, now: Instant) {
        let second = now.saturating_duration_since(self.meter.start).as_secs() as usize;
        if second != self.second {
            self.flush();
            self.second = second;
        }
        self.rows += rows;
        if now.saturating_duration_since(self.since) >= FLUSH_EVERY {
            self.flush();
        }
    }

    /// Pass the rows counted so far on to the meter.
    pub(crate) fn flush(&mut self) {
        if self.rows > 0 {
            self.meter.add_in(self.rows, self.second);
            self.rows = 0;
        }
        self.since = Instant::now();
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Default for Meter {
    fn default() -> Self {
        Meter::new()
    }
}

fn series_of(buckets: &[u64], seconds: f64) -> Vec<f64> {
    let whole = seconds.floor().max(0.0) as usize;
    let mut out: Vec<f64> = (0..whole)
        .map(|i| buckets.get(i).copied().unwrap_or(0) as f64)
        .collect();
    let part = seconds - whole as f64;
    if part >= 0.5 {
        out.push(buckets.get(whole).copied().unwrap_or(0) as f64 / part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_scales_the_last_partial_second() {
        assert_eq!(series_of(&[100, 90, 40], 2.5), [100.0, 90.0, 80.0]);
        assert_eq!(series_of(&[100, 90, 10], 2.1), [100.0, 90.0]);
        assert_eq!(series_of(&[5], 0.2), Vec::<f64>::new());
        let m = Meter::new();
        m.add_in(3, 0);
        m.add_in(4, 0);
        assert_eq!(m.done(), 7);
    }

    #[test]
    fn a_tally_lands_every_row_in_its_own_second() {
        let m = Meter::new();
        let s = m.start();
        {
            let mut t = Tally::new(&m);
            t.add(5, s + Duration::from_millis(1));
            t.add(5, s + Duration::from_millis(2));
            t.add(7, s + Duration::from_millis(1_100));
            t.add(1, s + Duration::from_millis(2_300));
            t.add(2, s + Duration::from_millis(2_301));
        }
        assert_eq!(m.done(), 20);
        assert_eq!(m.series(3.0), [10.0, 7.0, 3.0]);
    }
}
