//! One value per key — the test file that asks (`#[track_caller]` on the asking function), or
//! the test that asks — made on first use and kept until the test binary exits.

use std::collections::HashMap;
use std::sync::{Mutex, Once, OnceLock};

pub struct PerFile<T: 'static> {
    cells: Mutex<Option<HashMap<String, &'static OnceLock<T>>>>,
    at_exit: Once,
}

impl<T: Send + Sync> PerFile<T> {
    pub const fn new() -> PerFile<T> {
        PerFile {
            cells: Mutex::new(None),
            at_exit: Once::new(),
        }
    }

    /// The value of `key`, made by `make` the first time; `stop` runs at the binary's exit
    /// (registered once) and reaches every value through [`PerFile::all`]. Two files make
    /// theirs side by side; two asking for one key wait for the one value.
    pub fn get(&self, key: &str, stop: extern "C" fn(), make: impl FnOnce() -> T) -> &'static T {
        self.at_exit.call_once(|| unsafe {
            libc::atexit(stop);
        });
        let cell: &'static OnceLock<T> = {
            // A test that panicked while holding the map left it whole: it only inserts.
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            cells
                .get_or_insert_with(HashMap::new)
                .entry(key.to_string())
                .or_insert_with(|| Box::leak(Box::new(OnceLock::new())))
        };
        cell.get_or_init(make)
    }

    /// Every value made so far.
    pub fn all(&self) -> Vec<&'static T> {
        let cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        cells
            .iter()
            .flat_map(|m| m.values().filter_map(|c| c.get()))
            .collect()
    }
}
