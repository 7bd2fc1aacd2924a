//! The one table from Prometheus families to OTLP metrics: OpenTelemetry names (dotted, unit in
//! the unit field, labels as attributes), and the attribute renames.
//!
//! Where the OTel Collector's `apachesparkreceiver` has a metric with the same meaning (per
//! executor totals, per stage-attempt active tasks), its name, unit scale and instrument are
//! reused, so dashboards built for the receiver work; our job-group aggregates have no equivalent
//! there (its `spark.job.*` and `spark.stage.*` metrics are per job id / stage id) and get names
//! of our own. Units are UCUM (`By`, `s`, `ms`, `{task}`). `docs/otlp.md` is generated from these
//! tables ([`markdown`]) and a test keeps the two equal.

use crate::export::families::Kind;

/// How a family is sent over OTLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instrument {
    /// Monotonic sum (cumulative or delta, per the temporality setting).
    Counter,
    /// Non-monotonic sum, always cumulative (a count of things that exist now).
    UpDownCounter,
    /// Point-in-time value.
    Gauge,
    /// Explicit-bucket histogram (cumulative or delta).
    Histogram,
}

impl Instrument {
    /// Name used in the documentation table.
    pub fn as_str(self) -> &'static str {
        match self {
            Instrument::Counter => "counter",
            Instrument::UpDownCounter => "updowncounter",
            Instrument::Gauge => "gauge",
            Instrument::Histogram => "histogram",
        }
    }
}

/// Value conversion from the Prometheus value to the OTLP value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Same value.
    One,
    /// Seconds (float) to whole milliseconds (integer), where the receiver counts in `ms`.
    SecondsToMillis,
}

/// One family's OTLP form.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    /// Family name as in [`crate::export::families`] (no `_total` / `_info`).
    pub family: &'static str,
    /// Prometheus type of the family (decides the `_total` / `_info` suffix).
    pub prom_kind: Kind,
    /// OTLP metric name.
    pub name: &'static str,
    /// UCUM unit.
    pub unit: &'static str,
    /// OTLP instrument.
    pub instrument: Instrument,
    /// Value conversion.
    pub scale: Scale,
    /// Constant attributes added to every point (two families sharing one OTLP metric).
    pub extra: &'static [(&'static str, &'static str)],
    /// True when name and unit come from the Collector's `apachesparkreceiver`.
    pub receiver: bool,
}

const fn m(
    family: &'static str,
    prom_kind: Kind,
    name: &'static str,
    unit: &'static str,
    instrument: Instrument,
) -> Mapping {
    Mapping {
        family,
        prom_kind,
        name,
        unit,
        instrument,
        scale: Scale::One,
        extra: &[],
        receiver: false,
    }
}

const fn rx(mut x: Mapping) -> Mapping {
    x.receiver = true;
    x
}

const fn ms(mut x: Mapping) -> Mapping {
    x.scale = Scale::SecondsToMillis;
    x
}

const fn with(mut x: Mapping, extra: &'static [(&'static str, &'static str)]) -> Mapping {
    x.extra = extra;
    x
}

const IN: &[(&str, &str)] = &[("direction", "in")];
const OUT: &[(&str, &str)] = &[("direction", "out")];

use Instrument::{Counter as C, Gauge as G, Histogram as H, UpDownCounter as U};
use Kind::{Counter as PC, Gauge as PG, Histogram as PH, Info as PI};

/// Every family, in the order of the exposition.
#[rustfmt::skip]
pub const METRICS: &[Mapping] = &[
    m("spark_app", PI, "spark.application.info", "1", G),
    m("spark_app_start_time_seconds", PG, "spark.application.start_time", "s", G),
    m("spark_app_end_time_seconds", PG, "spark.application.end_time", "s", G),
    m("spark_jobs", PC, "spark.job.result", "{job}", C),
    m("spark_jobs_active", PG, "spark.job.active", "{job}", U),
    m("spark_job_duration_seconds", PH, "spark.job.duration", "s", H),
    m("spark_stages", PC, "spark.stage.result", "{stage}", C),
    m("spark_stages_active", PG, "spark.stage.active", "{stage}", U),
    m("spark_stage_duration_seconds", PH, "spark.stage.duration", "s", H),
    m("spark_stage_stalled_seconds", PG, "spark.stage.stalled_time", "s", G),
    rx(m("spark_stage_tasks_active", PG, "spark.stage.task.active", "{task}", U)),
    m("spark_stage_task_skew_ratio", PG, "spark.stage.task.skew", "1", G),
    m("spark_tasks", PC, "spark.task.result", "{task}", C),
    m("spark_task_duration_seconds", PH, "spark.task.duration", "s", H),
    m("spark_task_run_time_seconds", PC, "spark.task.run_time", "s", C),
    m("spark_task_cpu_time_seconds", PC, "spark.task.cpu_time", "s", C),
    m("spark_task_gc_time_seconds", PC, "spark.task.gc_time", "s", C),
    with(m("spark_task_input_bytes", PC, "spark.task.io.size", "By", C), IN),
    with(m("spark_task_output_bytes", PC, "spark.task.io.size", "By", C), OUT),
    with(m("spark_task_shuffle_read_bytes", PC, "spark.task.shuffle.io.size", "By", C), IN),
    with(m("spark_task_shuffle_write_bytes", PC, "spark.task.shuffle.io.size", "By", C), OUT),
    m("spark_task_memory_spilled_bytes", PC, "spark.task.memory.spilled", "By", C),
    m("spark_task_disk_spilled_bytes", PC, "spark.task.disk.spilled", "By", C),
    m("spark_executors", PG, "spark.executor.count", "{executor}", U),
    m("spark_executor_removed", PC, "spark.executor.removed", "{executor}", C),
    rx(ms(m("spark_executor_task_time_seconds", PC, "spark.executor.time", "ms", C))),
    rx(ms(m("spark_executor_gc_time_seconds", PC, "spark.executor.gc_time", "ms", C))),
    rx(m("spark_executor_input_bytes", PC, "spark.executor.input_size", "By", C)),
    rx(with(m("spark_executor_shuffle_read_bytes", PC, "spark.executor.shuffle.io.size", "By", C), IN)),
    rx(with(m("spark_executor_shuffle_write_bytes", PC, "spark.executor.shuffle.io.size", "By", C), OUT)),
    rx(m("spark_executor_active_tasks", PG, "spark.executor.task.active", "{task}", U)),
    rx(m("spark_executor_max_tasks", PG, "spark.executor.task.limit", "{task}", U)),
    rx(m("spark_executor_storage_memory_used_bytes", PG, "spark.executor.memory.usage", "By", U)),
    m("spark_executor_max_memory_bytes", PG, "spark.executor.memory.limit", "By", U),
    rx(m("spark_executor_disk_used_bytes", PG, "spark.executor.disk.usage", "By", U)),
    rx(m("spark_executor_tasks", PC, "spark.executor.task.result", "{task}", C)),
    m("spark_executor_peak_memory_bytes", PG, "spark.executor.memory.peak", "By", G),
    m("spark_sql_executions", PC, "spark.sql.execution.result", "{execution}", C),
    m("spark_sql_executions_active", PG, "spark.sql.execution.active", "{execution}", U),
    m("spark_sql_execution_duration_seconds", PH, "spark.sql.execution.duration", "s", H),
    m("spark_streaming_batches", PC, "spark.streaming.batches", "{batch}", C),
    m("spark_streaming_input_rows", PC, "spark.streaming.input.rows", "{row}", C),
    m("spark_streaming_input_rows_per_second", PG, "spark.streaming.input.rate", "{row}/s", G),
    m("spark_streaming_processed_rows_per_second", PG, "spark.streaming.processed.rate", "{row}/s", G),
    m("spark_streaming_batch_duration_seconds", PH, "spark.streaming.batch.duration", "s", H),
    m("spark_up", PG, "spark_exporter.target.up", "1", G),
    m("spark_exporter_build", PI, "spark_exporter.build.info", "1", G),
    m("spark_exporter_scrape_duration_seconds", PG, "spark_exporter.scrape.duration", "s", G),
    m("spark_exporter_scrape_errors", PC, "spark_exporter.scrape.errors", "{error}", C),
    m("spark_exporter_rest_response_bytes", PC, "spark_exporter.rest.response.size", "By", C),
    m("spark_exporter_rest_requests", PC, "spark_exporter.rest.requests", "{request}", C),
    m("spark_exporter_label_overflow", PC, "spark_exporter.label.overflow", "{value}", C),
    m("spark_exporter_eventlog_bytes", PC, "spark_exporter.eventlog.read.size", "By", C),
    m("spark_exporter_eventlog_events", PC, "spark_exporter.eventlog.events", "{event}", C),
    m("spark_exporter_eventlog_errors", PC, "spark_exporter.eventlog.errors", "{error}", C),
    m("spark_exporter_http_errors", PC, "spark_exporter.http.errors", "{error}", C),
    m("spark_exporter_eventlog_files", PG, "spark_exporter.eventlog.files", "{file}", U),
    m("spark_exporter_eventlog_lag_seconds", PG, "spark_exporter.eventlog.lag", "s", G),
    m("spark_exporter_otlp_exports", PC, "spark_exporter.otlp.exports", "{export}", C),
    m("spark_exporter_otlp_export_failures", PC, "spark_exporter.otlp.export.failures", "{export}", C),
];

/// Attribute type on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// String.
    Str,
    /// Integer (falls back to a string if the label is not a number).
    Int,
}

/// Label renames; labels not listed keep their name and are strings.
pub const ATTRIBUTES: &[(&str, &str, AttrType)] = &[
    ("app_id", "spark.application.id", AttrType::Str),
    ("app_name", "spark.application.name", AttrType::Str),
    ("spark_version", "spark.version", AttrType::Str),
    ("user", "user.name", AttrType::Str),
    ("job_group", "spark.job.group", AttrType::Str),
    ("job_description", "spark.job.description", AttrType::Str),
    ("stage_id", "spark.stage.id", AttrType::Int),
    ("stage_attempt", "spark.stage.attempt.id", AttrType::Int),
    ("stage_name", "spark.stage.name", AttrType::Str),
    ("executor_id", "spark.executor.id", AttrType::Str),
    (
        "description",
        "spark.sql.execution.description",
        AttrType::Str,
    ),
    ("query", "spark.streaming.query", AttrType::Str),
    ("status", "result", AttrType::Str),
    ("target", "url.full", AttrType::Str),
    ("kind", "error.type", AttrType::Str),
];

/// The mapping of a family, if it has one.
pub fn lookup(family: &str) -> Option<&'static Mapping> {
    METRICS.iter().find(|m| m.family == family)
}

/// The OTLP name and type of a label.
pub fn attribute(label: &'static str) -> (&'static str, AttrType) {
    ATTRIBUTES
        .iter()
        .find(|(l, _, _)| *l == label)
        .map_or((label, AttrType::Str), |(_, n, t)| (*n, *t))
}

/// The name Prometheus shows for a family.
pub fn prometheus_name(m: &Mapping) -> String {
    match m.prom_kind {
        Kind::Counter => format!("{}_total", m.family),
        Kind::Info => format!("{}_info", m.family),
        Kind::Gauge | Kind::Histogram => m.family.to_string(),
    }
}

/// The two Markdown tables of `docs/otlp.md` (metrics, then attributes).
pub fn markdown() -> String {
    let mut s = String::from(
        "| Prometheus name | OTLP name | unit | type | notes |\n|---|---|---|---|---|\n",
    );
    for x in METRICS {
        let mut notes = vec![];
        if x.receiver {
            notes.push("as `apachesparkreceiver`".to_string());
        }
        if x.scale == Scale::SecondsToMillis {
            notes.push("value × 1000, integer".to_string());
        }
        for (k, v) in x.extra {
            notes.push(format!("`{k}={v}`"));
        }
        s.push_str(&format!(
            "| `{}` | `{}` | `{}` | {} | {} |\n",
            prometheus_name(x),
            x.name,
            x.unit,
            x.instrument.as_str(),
            notes.join(", ")
        ));
    }
    s.push_str("\n| Prometheus label | OTLP attribute | type |\n|---|---|---|\n");
    for (l, n, t) in ATTRIBUTES {
        let t = match t {
            AttrType::Str => "string",
            AttrType::Int => "int",
        };
        s.push_str(&format!("| `{l}` | `{n}` | {t} |\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::export::families::collect;
    use crate::model::Model;
    use crate::telemetry::Telemetry;
    use std::sync::Arc;

    #[test]
    fn every_family_is_mapped_with_its_type() {
        let model = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        for f in collect(&model) {
            let Some(m) = lookup(f.name) else {
                panic!(
                    "family {} has no OTLP mapping in src/export/otlp/mapping.rs",
                    f.name
                )
            };
            assert_eq!(m.prom_kind, f.kind, "{}", f.name);
            let ok = match f.kind {
                Kind::Histogram => m.instrument == Instrument::Histogram,
                Kind::Counter => m.instrument == Instrument::Counter,
                Kind::Gauge | Kind::Info => {
                    matches!(m.instrument, Instrument::Gauge | Instrument::UpDownCounter)
                }
            };
            assert!(
                ok,
                "{}: {:?} cannot carry {:?}",
                f.name, m.instrument, f.kind
            );
        }
    }

    #[test]
    fn metrics_sharing_a_name_agree_and_differ_by_attribute() {
        for a in METRICS {
            for b in METRICS
                .iter()
                .filter(|b| b.name == a.name && b.family != a.family)
            {
                assert_eq!(
                    (a.unit, a.instrument, a.scale),
                    (b.unit, b.instrument, b.scale)
                );
                assert_ne!(a.extra, b.extra, "{} and {}", a.family, b.family);
            }
        }
    }

    #[test]
    fn docs_table_is_current() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/otlp.md"))
            .expect("docs/otlp.md");
        assert!(
            doc.contains(&markdown()),
            "docs/otlp.md is out of date; paste the tables printed below into it:\n{}",
            markdown()
        );
    }
}
