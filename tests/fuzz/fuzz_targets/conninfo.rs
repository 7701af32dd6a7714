//! The hand-written conninfo parser (URL and key=value) never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let env: std::collections::BTreeMap<&str, &str> = Default::default();
        let _ = pglab::server::conninfo::resolve(Some(s), &env);
    }
});
