//! Preset files (TOML, then every parameter through the experiment's parsers) never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = pglab::preset::parse(s, "fuzz.toml", None);
    }
});
