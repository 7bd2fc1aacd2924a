//! Prometheus exposition: a `prometheus-client` [`Collector`] that renders the model when asked
//! (by the shared renderer of [`super::cache`], or `dump`), in OpenMetrics or the classic text
//! format, streamed into any `io::Write`.

use std::fmt::Write as _;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelValue, LabelValueEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::families::{collect, Family, Kind, Value};
use crate::model::Model;

const EMPTY: [(&str, &str); 0] = [];

/// Content type of OpenMetrics text.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Content type of the classic Prometheus text format.
pub const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A label value escaped as the exposition formats require (`\\`, `\"`, `\n`).
/// prometheus-client writes label values verbatim, and job descriptions can hold anything.
struct Esc<'a>(&'a str);

impl EncodeLabelValue for Esc<'_> {
    fn encode(&self, enc: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        let s = self.0;
        if memchr::memchr3(b'\\', b'"', b'\n', s.as_bytes()).is_none() {
            return enc.write_str(s);
        }
        for c in s.chars() {
            match c {
                '\\' => enc.write_str("\\\\")?,
                '"' => enc.write_str("\\\"")?,
                '\n' => enc.write_str("\\n")?,
                c => enc.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// Renders the model on every scrape.
#[derive(Debug)]
pub struct ModelCollector {
    model: Arc<Model>,
}

impl ModelCollector {
    /// A collector over `model`.
    pub fn new(model: Arc<Model>) -> Self {
        ModelCollector { model }
    }
}

fn encode_family(f: &Family, enc: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    let ty = match f.kind {
        Kind::Counter => MetricType::Counter,
        Kind::Gauge => MetricType::Gauge,
        Kind::Histogram => MetricType::Histogram,
        Kind::Info => MetricType::Info,
    };
    let mut m = enc.encode_descriptor(f.name, f.help, None, ty)?;
    for sample in &f.samples {
        let labels: Vec<(&str, Esc)> = sample.labels.iter().map(|(k, v)| (*k, Esc(v))).collect();
        if f.kind == Kind::Info {
            m.encode_family(&EMPTY)?.encode_info(&labels)?;
            continue;
        }
        if labels.is_empty() {
            encode_value(&sample.value, f.kind, &mut m)?;
        } else {
            encode_value(&sample.value, f.kind, &mut m.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

fn encode_value(v: &Value, kind: Kind, e: &mut MetricEncoder) -> Result<(), std::fmt::Error> {
    match (v, kind) {
        (Value::Int(v), Kind::Counter) => e.encode_counter::<NoLabelSet, _, u64>(v, None),
        (Value::Float(v), Kind::Counter) => e.encode_counter::<NoLabelSet, _, f64>(v, None),
        (Value::Int(v), _) => e.encode_gauge(&(*v as i64)),
        (Value::Float(v), _) => e.encode_gauge(v),
        (Value::Hist(b, sum, count), _) => {
            // Our buckets are cumulative; prometheus-client accumulates per-bucket counts itself
            // and marks the +Inf bucket with f64::MAX.
            let mut prev = 0;
            let b: Vec<(f64, u64)> = b
                .iter()
                .map(|(le, c)| {
                    let per = c.saturating_sub(prev);
                    prev = *c;
                    (if le.is_finite() { *le } else { f64::MAX }, per)
                })
                .collect();
            e.encode_histogram::<NoLabelSet>(*sum, *count, &b, None)
        }
    }
}

impl Collector for ModelCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in collect(&self.model) {
            encode_family(&f, &mut enc)?;
        }
        Ok(())
    }
}

/// A registry holding the model collector.
pub fn registry(model: Arc<Model>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(ModelCollector::new(model)));
    r
}

/// Which format a scraper asked for, from its `Accept` header.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The encoder refused a value.
    #[error("encoding the exposition failed")]
    Encode,
    /// The output would not take the text.
    #[error("writing the exposition failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Render the registry: OpenMetrics, or classic text when `openmetrics` is false.
pub fn render(registry: &Registry, openmetrics: bool) -> Result<String, RenderError> {
    let mut out = Vec::with_capacity(64 * 1024);
    write(registry, openmetrics, &mut out)?;
    // Everything written is `str` pieces split at line ends, so it is UTF-8.
    String::from_utf8(out).map_err(|_| RenderError::Encode)
}

/// Render the registry into `out` as it is encoded (the text never exists whole, so it can go
/// straight into a compressor); returns the number of bytes written.
pub fn write(
    registry: &Registry,
    openmetrics: bool,
    out: &mut impl std::io::Write,
) -> Result<u64, RenderError> {
    let mut sink = Sink {
        buf: String::with_capacity(CHUNK + 4096),
        classic: (!openmetrics).then(Classic::default),
        conv: String::new(),
        out,
        written: 0,
        err: None,
    };
    let encoded = prometheus_client::encoding::text::encode(&mut sink, registry);
    if let Some(e) = sink.err.take() {
        return Err(e.into());
    }
    encoded.map_err(|_| RenderError::Encode)?;
    sink.flush(true)?;
    Ok(sink.written)
}

/// How much text [`Sink`] gathers before passing it on.
const CHUNK: usize = 64 * 1024;

/// The encoder's `fmt::Write` target: gathers text, converts it to the classic format line by
/// line if asked, and passes it to the output in chunks.
struct Sink<'a, W: std::io::Write> {
    buf: String,
    classic: Option<Classic>,
    conv: String,
    out: &'a mut W,
    written: u64,
    err: Option<std::io::Error>,
}

impl<W: std::io::Write> Sink<'_, W> {
    /// Pass on the gathered text; all of it when `last`, else up to its last complete line
    /// (the classic conversion works on whole lines).
    fn flush(&mut self, last: bool) -> std::io::Result<()> {
        let Some(conv) = &mut self.classic else {
            self.out.write_all(self.buf.as_bytes())?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
            return Ok(());
        };
        let end = if last {
            self.buf.len()
        } else {
            self.buf.rfind('\n').map_or(0, |i| i + 1)
        };
        self.conv.clear();
        for line in self.buf[..end].lines() {
            conv.line(line, &mut self.conv);
        }
        if last {
            conv.finish(&mut self.conv);
        }
        self.out.write_all(self.conv.as_bytes())?;
        self.written += self.conv.len() as u64;
        self.buf.drain(..end);
        Ok(())
    }
}

impl<W: std::io::Write> std::fmt::Write for Sink<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.buf.push_str(s);
        if self.buf.len() >= CHUNK {
            if let Err(e) = self.flush(false) {
                self.err = Some(e);
                return Err(std::fmt::Error);
            }
        }
        Ok(())
    }
}

/// OpenMetrics to the classic text format, a line at a time: counters and infos are declared
/// under their sample names (`foo_total`, `foo_info`), info becomes gauge, there is no `# UNIT`
/// and no `# EOF`.
#[derive(Default)]
struct Classic {
    /// A `# HELP` line waiting for the `# TYPE` line that says what to rename it to.
    help: Option<String>,
}

impl Classic {
    fn line(&mut self, line: &str, out: &mut String) {
        if let Some(help) = self.help.take() {
            let rest = &help["# HELP ".len()..];
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            if let Some(ty) = line.strip_prefix("# TYPE ") {
                let ty = ty.rsplit(' ').next().unwrap_or("");
                let (suffix, ty) = match ty {
                    "counter" => ("_total", "counter"),
                    "info" => ("_info", "gauge"),
                    t => ("", t),
                };
                let _ = writeln!(out, "# HELP {name}{suffix} {text}");
                let _ = writeln!(out, "# TYPE {name}{suffix} {ty}");
                return;
            }
            let _ = writeln!(out, "# HELP {name} {text}");
        }
        if line == "# EOF" || line.starts_with("# UNIT ") {
            return;
        }
        if line.starts_with("# HELP ") {
            self.help = Some(line.to_string());
            return;
        }
        out.push_str(line);
        out.push('\n');
    }

    fn finish(&mut self, out: &mut String) {
        if let Some(help) = self.help.take() {
            out.push_str(&help);
            out.push('\n');
        }
    }
}

/// OpenMetrics text to the classic text format.
#[cfg(test)]
fn to_classic(om: &str) -> String {
    let mut c = Classic::default();
    let mut out = String::new();
    for line in om.lines() {
        c.line(line, &mut out);
    }
    c.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::model::{JobObs, JobStatus, Source};
    use crate::telemetry::Telemetry;

    #[test]
    fn histograms_and_escaped_labels_render_exactly() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        for (id, secs) in [(0u64, 0.3f64), (1, 2.0), (2, 20000.0)] {
            m.upsert_job(
                Source::Rest,
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
                },
            );
        }
        let text = render(&registry(m), false).expect("render");
        let labels = r#"app_id="a",app_name="",job_group="g\"x",job_description="d\\e\nf",status="succeeded""#;
        for (le, n) in [
            ("0.1", 0),
            ("0.5", 1),
            ("1.0", 1),
            ("2.5", 2),
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
    fn streamed_classic_equals_converting_the_whole_text() {
        // Enough groups for the text to cross many chunk boundaries.
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        for id in 0..2000u64 {
            m.upsert_job(
                Source::Rest,
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
                },
            );
        }
        let reg = registry(m);
        let om = render(&reg, true).expect("render");
        assert!(om.len() > 4 * CHUNK, "{}", om.len());
        assert!(om.ends_with("# EOF\n"));
        let classic = render(&reg, false).expect("render");
        assert_eq!(classic, to_classic(&om));
        let mut sink = Vec::new();
        assert_eq!(
            write(&reg, false, &mut sink).expect("write"),
            classic.len() as u64
        );
    }

    #[test]
    fn classic_renames_counters_and_infos() {
        let om = "# HELP a_jobs Jobs.\n# TYPE a_jobs counter\na_jobs_total{x=\"1\"} 2\n# HELP b Build.\n# TYPE b info\nb_info{v=\"1\"} 1\n# HELP g G.\n# TYPE g gauge\ng 1\n# EOF\n";
        let c = to_classic(om);
        assert_eq!(c, "# HELP a_jobs_total Jobs.\n# TYPE a_jobs_total counter\na_jobs_total{x=\"1\"} 2\n# HELP b_info Build.\n# TYPE b_info gauge\nb_info{v=\"1\"} 1\n# HELP g G.\n# TYPE g gauge\ng 1\n");
    }
}
