//! Any bytes as one event-log line: `parse_line` and `event_name` return (no panic, no abort),
//! and a parsed event's accessors work.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spark_exporter::sources::eventlog::parse_line;
use spark_exporter::sources::eventlog::parser::event_name;

fuzz_target!(|data: &[u8]| {
    let _ = event_name(data);
    match parse_line(data) {
        Ok(Some(ev)) => {
            let _ = ev.time_ms();
        }
        Ok(None) => {}
        Err(e) => {
            let _ = (e.kind(), e.to_string());
        }
    }
});
