//! Any bytes as a piece of event log: every line is parsed, the events are applied to a model as
//! the tailer does, and the model is rendered as a scrape would. Nothing may panic, and the
//! exposition must render.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use spark_exporter::config::Settings;
use spark_exporter::sources::eventlog::apply::LogApp;
use spark_exporter::sources::eventlog::parse_line;
use spark_exporter::sinks::prometheus;
use spark_exporter::model::Model;
use spark_exporter::telemetry::Telemetry;

fuzz_target!(|data: &[u8]| {
    let settings = Settings::default();
    // A fixed clock, so a crash reproduces.
    let model = Model::with_clock(
        &settings,
        Arc::new(Telemetry::default()),
        Arc::new(|| 1_800_000_000_000),
    );
    let mut app = LogApp::new("local-1".into());
    for line in data.split(|b| *b == b'\n') {
        if let Ok(Some(ev)) = parse_line(line) {
            app.apply(ev, &model.observer(spark_exporter::sources::source("event_log")));
        }
    }
    app.settle(&model.observer(spark_exporter::sources::source("event_log")));
    model.expire(1_800_000_000_000);
    let reg = prometheus::registry(model.clone());
    prometheus::render(&reg, true).expect("OpenMetrics renders");
    prometheus::render(&reg, false).expect("classic text renders");
});
