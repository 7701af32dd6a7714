//! What the clients of one trial count together: rows committed so far (for live progress)
//! and rows per second of the trial (for the decay series).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub struct Meter {
    start: Instant,
    done: AtomicU64,
    buckets: Mutex<Vec<u64>>,
}

impl Meter {
    /// Start counting now.
    pub fn new() -> Meter {
        Meter {
            start: Instant::now(),
            done: AtomicU64::new(0),
            buckets: Mutex::new(Vec::new()),
        }
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    /// Record `rows` committed just now.
    pub fn add(&self, rows: u64) {
        self.done.fetch_add(rows, Ordering::Relaxed);
        let second = self.start.elapsed().as_secs() as usize;
        if let Ok(mut b) = self.buckets.lock() {
            if b.len() <= second {
                b.resize(second + 1, 0);
            }
            b[second] += rows;
        }
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Rows/s in each whole second of a trial that lasted `seconds`; the last, partial second
    /// is scaled to a rate and kept only when it lasted at least half a second.
    pub fn series(&self, seconds: f64) -> Vec<f64> {
        let b = self.buckets.lock().map(|b| b.clone()).unwrap_or_default();
        series_of(&b, seconds)
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
        m.add(3);
        m.add(4);
        assert_eq!(m.done(), 7);
    }
}
