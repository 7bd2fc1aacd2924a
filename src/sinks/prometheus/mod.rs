//! Prometheus exposition: the catalogue's families written straight into any `io::Write`, in
//! OpenMetrics 1.0 or the classic text format 0.0.4, each with its own naming rules.
//!
//! - OpenMetrics: a counter family `x` is declared as `# TYPE x counter` with samples
//!   `x_total`; an info family `x` as `# TYPE x info` with samples `x_info`; the text ends with
//!   `# EOF`.
//! - Classic: families are declared under their sample names (`x_total`, `x_info`) and an info
//!   is a gauge; no `# EOF`.
//!
//! Label values are escaped as both formats require (`\\`, `\"`, `\n`); HELP texts come from the
//! catalogue and hold none of those characters (a test checks). Numbers are written as the
//! `prometheus-client` crate wrote them before this module replaced it: integers with `itoa`,
//! floats with `dtoa` (shortest round-trip form, `1.0` rather than `1`), so expositions stay
//! byte-for-byte what they were.
//!
//! - `cache`: one render shared by concurrent scrapes, gzip-compressed once.
//! - [`plugin`]: the sink's registry entry.

pub(crate) mod cache;
pub mod plugin;

use std::io::Write;
use std::sync::Arc;

use crate::export::families::{collect, Family, Kind, Value};
use crate::export::sample::SampleLabels;
use crate::model::Model;

/// Content type of OpenMetrics text.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Content type of the classic Prometheus text format.
pub const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What is rendered: the model, read through the catalogue at render time.
#[derive(Debug, Clone)]
pub struct Registry {
    model: Arc<Model>,
    created: bool,
}

/// The registry of `model`.
pub fn registry(model: Arc<Model>) -> Registry {
    Registry {
        model,
        created: false,
    }
}

impl Registry {
    /// With `created`, OpenMetrics output has a `_created` sample (when the series started
    /// counting, epoch seconds) for every counter and histogram (`web.openmetrics_created`).
    pub fn with_created(mut self, created: bool) -> Registry {
        self.created = created;
        self
    }
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The output would not take the text.
    #[error("writing the exposition failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Render the model: OpenMetrics, or classic text when `openmetrics` is false.
pub fn render(registry: &Registry, openmetrics: bool) -> Result<String, RenderError> {
    let mut out = Vec::with_capacity(64 * 1024);
    write(registry, openmetrics, &mut out)?;
    // Every piece written is a `str`.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}

/// Render the model into `out` as it is written (the text never exists whole, so it can go
/// straight into a compressor); returns the number of bytes written.
pub fn write(
    registry: &Registry,
    openmetrics: bool,
    out: &mut impl Write,
) -> Result<u64, RenderError> {
    let families = collect(&registry.model);
    write_with(&families, openmetrics && registry.created, openmetrics, out)
}

/// How much text is gathered before it is passed on.
const CHUNK: usize = 64 * 1024;

/// Write `families` into `out`; returns the number of bytes written.
pub fn write_families(
    families: &[Family],
    openmetrics: bool,
    out: &mut impl Write,
) -> Result<u64, RenderError> {
    write_with(families, false, openmetrics, out)
}

fn write_with(
    families: &[Family],
    created: bool,
    openmetrics: bool,
    out: &mut impl Write,
) -> Result<u64, RenderError> {
    let mut w = Writer {
        buf: Vec::with_capacity(CHUNK + 4096),
        out,
        written: 0,
        created,
    };
    for f in families {
        w.family(f, openmetrics)?;
    }
    if openmetrics {
        w.put(b"# EOF\n");
    }
    w.flush()?;
    Ok(w.written)
}

struct Writer<'a, W: Write> {
    buf: Vec<u8>,
    out: &'a mut W,
    written: u64,
    /// Write `_created` samples (OpenMetrics only).
    created: bool,
}

impl<W: Write> Writer<'_, W> {
    fn put(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    fn family(&mut self, f: &Family, openmetrics: bool) -> std::io::Result<()> {
        let (declared, ty) = if openmetrics {
            ("", f.kind.openmetrics_type())
        } else {
            (f.kind.suffix(), f.kind.classic_type())
        };
        for (head, text) in [("# HELP ", f.help), ("# TYPE ", ty)] {
            self.put(head.as_bytes());
            self.put(f.name.as_bytes());
            self.put(declared.as_bytes());
            self.put(b" ");
            self.put(text.as_bytes());
            self.put(b"\n");
        }
        let created = self.created && matches!(f.kind, Kind::Counter | Kind::Histogram);
        for s in &f.samples {
            self.sample(f, &s.labels, &s.value);
            if created && s.created_ms > 0 {
                self.name(f.name, "_created");
                self.labels(None, &s.labels);
                self.float(s.created_ms as f64 / 1000.0);
            }
            if self.buf.len() >= CHUNK {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn sample(&mut self, f: &Family, labels: &SampleLabels, value: &Value) {
        match (f.kind, value) {
            (Kind::Info, _) => {
                self.name(f.name, "_info");
                // An info sample always carries braces, even with no labels.
                self.put(b"{");
                self.pairs(labels);
                self.put(b"} 1\n");
            }
            (_, Value::Hist(buckets, sum, count)) => {
                self.name(f.name, "_sum");
                self.labels(None, labels);
                self.float(*sum);
                self.name(f.name, "_count");
                self.labels(None, labels);
                self.int(*count);
                for (le, n) in buckets {
                    self.name(f.name, "_bucket");
                    let le = if le.is_finite() {
                        Le::Bound(*le)
                    } else {
                        Le::Inf
                    };
                    self.labels(Some(le), labels);
                    self.int(*n);
                }
            }
            (kind, v) => {
                self.name(f.name, if kind == Kind::Counter { "_total" } else { "" });
                self.labels(None, labels);
                match (kind, v) {
                    (Kind::Counter, Value::Int(n)) => self.int(*n),
                    // Gauges were written as i64 (a value past i64::MAX shows negative).
                    (_, Value::Int(n)) => self.signed(*n as i64),
                    (_, v) => self.float(v.as_f64()),
                }
            }
        }
    }

    fn name(&mut self, name: &str, suffix: &str) {
        self.put(name.as_bytes());
        self.put(suffix.as_bytes());
    }

    fn labels(&mut self, le: Option<Le>, labels: &SampleLabels) {
        if le.is_none() && labels.is_empty() {
            return;
        }
        self.put(b"{");
        if let Some(le) = le {
            self.put(b"le=\"");
            match le {
                Le::Inf => self.put(b"+Inf"),
                Le::Bound(b) => self.put(dtoa::Buffer::new().format(b).as_bytes()),
            }
            self.put(b"\"");
            if !labels.is_empty() {
                self.put(b",");
            }
        }
        self.pairs(labels);
        self.put(b"}");
    }

    fn pairs(&mut self, labels: &SampleLabels) {
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                self.put(b",");
            }
            self.put(k.as_bytes());
            self.put(b"=\"");
            self.escaped(v);
            self.put(b"\"");
        }
    }

    fn escaped(&mut self, v: &str) {
        let bytes = v.as_bytes();
        if memchr::memchr3(b'\\', b'"', b'\n', bytes).is_none() {
            self.put(bytes);
            return;
        }
        for &b in bytes {
            match b {
                b'\\' => self.put(b"\\\\"),
                b'"' => self.put(b"\\\""),
                b'\n' => self.put(b"\\n"),
                b => self.buf.push(b),
            }
        }
    }

    fn int(&mut self, n: u64) {
        self.put(b" ");
        self.put(itoa::Buffer::new().format(n).as_bytes());
        self.put(b"\n");
    }

    fn signed(&mut self, n: i64) {
        self.put(b" ");
        self.put(itoa::Buffer::new().format(n).as_bytes());
        self.put(b"\n");
    }

    fn float(&mut self, v: f64) {
        self.put(b" ");
        self.put(dtoa::Buffer::new().format(v).as_bytes());
        self.put(b"\n");
    }
}

#[derive(Clone, Copy)]
enum Le {
    Bound(f64),
    Inf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::export::catalogue::CATALOGUE;
    use crate::model::{JobObs, JobStatus, Observer};
    use crate::telemetry::Telemetry;

    #[test]
    fn histograms_and_escaped_labels_render_exactly() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        for (id, secs) in [(0u64, 0.3f64), (1, 2.0), (2, 20000.0)] {
            m.observer(crate::sources::source("rest")).upsert_job(
                "a",
                &JobObs {
                    job_id: id,
                    job_group: Some("g\"x".into()),
                    description: Some("d\\e\nf".into()),
                    status: JobStatus::Succeeded,
                    submission_ms: Some(1_000),
                    completion_ms: Some(1_000 + (secs * 1000.0) as i64),
                    stage_ids: vec![],
                    sql_execution_id: None,
                    tags: vec![],
                    name: None,
                    client_app: None,
                },
            );
        }
        let text = render(&registry(m), false).expect("render");
        let labels = r#"app_id="a",app_name="",job_group="g\"x",job_description="d\\e\nf",status="succeeded""#;
        for (le, n) in [
            ("0.1", 0),
            ("0.5", 1),
            ("1.0", 1),
            ("2.0", 2),
            ("14400.0", 2),
            ("+Inf", 3),
        ] {
            let line = format!("spark_job_duration_seconds_bucket{{le=\"{le}\",{labels}}} {n}\n");
            assert!(text.contains(&line), "missing {line} in\n{text}");
        }
        assert!(text.contains(&format!("spark_job_duration_seconds_count{{{labels}}} 3\n")));
        assert!(text.contains(&format!(
            "spark_job_duration_seconds_sum{{{labels}}} 20002.3\n"
        )));
        assert!(text.contains(&format!("spark_jobs_total{{{labels}}} 3\n")));
    }

    #[test]
    fn large_expositions_are_written_in_chunks_and_counted() {
        // Enough groups for the text to cross many chunk boundaries.
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        for id in 0..2000u64 {
            m.observer(crate::sources::source("rest")).upsert_job(
                &format!("app-{}", id % 50),
                &JobObs {
                    job_id: id,
                    job_group: Some(format!("group {}", id % 7)),
                    description: Some(format!("load \"t{}\"", id % 5)),
                    status: JobStatus::Succeeded,
                    submission_ms: Some(1_000),
                    completion_ms: Some(2_000 + id as i64),
                    stage_ids: vec![],
                    sql_execution_id: None,
                    tags: vec![],
                    name: None,
                    client_app: None,
                },
            );
        }
        let reg = registry(m);
        let om = render(&reg, true).expect("render");
        assert!(om.len() > 4 * CHUNK, "{}", om.len());
        assert!(om.ends_with("# EOF\n"));
        let classic = render(&reg, false).expect("render");
        assert!(!classic.contains("# EOF"));
        let mut sink = Vec::new();
        let n = write(&reg, false, &mut sink).expect("write");
        assert_eq!(n, sink.len() as u64, "counted what it wrote");
        // A second render: the process's own CPU and memory (`process_*`) may have moved.
        let steady = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("process_"))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(steady(&String::from_utf8_lossy(&sink)), steady(&classic));
    }

    #[test]
    fn classic_renames_counters_and_infos() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        let classic = render(&registry(m.clone()), false).expect("render");
        let om = render(&registry(m), true).expect("render");
        assert!(classic.contains(
            "# HELP spark_exporter_build_info Exporter build (value 1): \
            version, git revision and Rust compiler.\n# TYPE spark_exporter_build_info \
            gauge\nspark_exporter_build_info{version="
        ));
        assert!(om.contains(
            "# HELP spark_exporter_build Exporter build (value 1): version, git \
            revision and Rust compiler.\n# TYPE spark_exporter_build \
            info\nspark_exporter_build_info{version="
        ));
        assert!(classic.contains(
            "# TYPE spark_exporter_eventlog_events_total \
            counter\nspark_exporter_eventlog_events_total 0\n"
        ));
        assert!(om.contains(
            "# TYPE spark_exporter_eventlog_events \
            counter\nspark_exporter_eventlog_events_total 0\n"
        ));
    }

    #[test]
    fn created_samples_only_in_openmetrics_and_only_when_asked() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        let with = registry(m.clone()).with_created(true);
        let om = render(&with, true).expect("render");
        // A counter gets its `_created` right after its value, with the same labels.
        let at = om
            .find("spark_exporter_eventlog_events_total 0\nspark_exporter_eventlog_events_created ")
            .expect("counter _created");
        assert!(at > 0);
        assert!(
            !om.contains("spark_exporter_build_created"),
            "not for an info"
        );
        assert!(
            !om.contains("spark_exporter_eventlog_lag_seconds_created"),
            "not for a gauge"
        );
        assert!(
            !render(&with, false).expect("render").contains("_created"),
            "never classic"
        );
        assert!(
            !render(&registry(m), true)
                .expect("render")
                .contains("_created"),
            "off by default"
        );
    }

    #[test]
    fn help_texts_need_no_escaping_in_either_format() {
        for m in CATALOGUE {
            assert!(
                !m.help.contains(['\\', '\n', '"']),
                "{}: HELP text would need escaping",
                m.name
            );
        }
    }
}
