//! Prometheus exposition: a `prometheus-client` [`Collector`] that renders the model at scrape
//! time, in OpenMetrics or (on request) the classic text format.

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

/// Render the registry: OpenMetrics, or classic text when `openmetrics` is false.
pub fn render(registry: &Registry, openmetrics: bool) -> Result<String, std::fmt::Error> {
    let mut s = String::with_capacity(64 * 1024);
    prometheus_client::encoding::text::encode(&mut s, registry)?;
    if openmetrics {
        return Ok(s);
    }
    Ok(to_classic(&s))
}

/// OpenMetrics to the classic text format: counters and infos are declared under their sample
/// names (`foo_total`, `foo_info`), info becomes gauge, and there is no `# EOF`.
fn to_classic(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut lines = om.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let ty_line = lines.peek().copied().unwrap_or("");
            let ty = ty_line
                .strip_prefix("# TYPE ")
                .and_then(|t| t.rsplit(' ').next())
                .unwrap_or("");
            let (name, ty) = match ty {
                "counter" => (format!("{name}_total"), "counter"),
                "info" => (format!("{name}_info"), "gauge"),
                t => (name.to_string(), t),
            };
            let _ = writeln!(out, "# HELP {name} {help}");
            if ty_line.starts_with("# TYPE ") {
                lines.next();
                let _ = writeln!(out, "# TYPE {name} {ty}");
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
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
    fn classic_renames_counters_and_infos() {
        let om = "# HELP a_jobs Jobs.\n# TYPE a_jobs counter\na_jobs_total{x=\"1\"} 2\n# HELP b Build.\n# TYPE b info\nb_info{v=\"1\"} 1\n# HELP g G.\n# TYPE g gauge\ng 1\n# EOF\n";
        let c = to_classic(om);
        assert_eq!(c, "# HELP a_jobs_total Jobs.\n# TYPE a_jobs_total counter\na_jobs_total{x=\"1\"} 2\n# HELP b_info Build.\n# TYPE b_info gauge\nb_info{v=\"1\"} 1\n# HELP g G.\n# TYPE g gauge\ng 1\n");
    }
}
