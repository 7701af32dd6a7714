//! The hand-written size, count, duration, list and range parsers never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pglab::measure::units::*;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = parse_size(s);
        let _ = parse_count(s);
        let _ = parse_duration(s);
        let _ = parse_size_list(s);
        let _ = parse_count_list(s);
    }
});
