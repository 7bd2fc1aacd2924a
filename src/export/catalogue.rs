//! The metric catalogue: every exported family, declared once.
//!
//! An entry holds the family's Prometheus name, type, help and documentation, its labels, its
//! OTLP form (name, unit, instrument, value scale, constant attributes), since which version it
//! exists and whether it is stable, whether its value follows the wall clock, and how its
//! samples are read from the model ([`super::read`]). Everything else comes from this table:
//! the Prometheus text and OpenMetrics ([`super::prometheus`]), OTLP ([`super::otlp`]), the
//! `docs/metrics.md`'s metric reference and `docs/otlp.md` (`super::docs`, kept current by tests),
//! and the
//! stability check (`tests/data/stable-metrics.txt`).
//!
//! Adding a metric is one entry here plus the model data it reads.
//!
//! OTLP names: where the OTel Collector's `apachesparkreceiver` has a metric with the same
//! meaning (per executor totals, per stage-attempt active tasks), its name, unit scale and
//! instrument are reused ([`Metric::rx`]), so dashboards built for the receiver work; our
//! job-group aggregates have no equivalent there and get names of our own. Units are UCUM.

use super::read::*;
use super::sample::{plus1, Kind, Value};

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

/// Attribute type on the OTLP wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// String.
    Str,
    /// Integer (falls back to a string if the label is not a number).
    Int,
}

/// A family's OTLP form.
#[derive(Debug, Clone, Copy)]
pub struct Otlp {
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
    /// Labels named otherwise in this family than [`ATTRIBUTES`] names them (a label whose
    /// meaning differs here).
    pub renames: &'static [(&'static str, &'static str)],
    /// True when name and unit come from the Collector's `apachesparkreceiver`.
    pub receiver: bool,
}

/// Whether dashboards and alerts may rely on a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    /// Name, type and labels change only through a deprecation (`DEPRECATED`).
    Stable,
    /// May change in any release.
    Experimental,
}

/// The labels every sample of a family starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `app_id, app_name`.
    App,
    /// Application and `job_group, job_description`.
    Group,
    /// Group and `stage_id, stage_attempt`.
    Stage,
    /// Application and `executor_id`.
    Executor,
    /// Application and `description` (SQL).
    Sql,
    /// `app_name` and the SQL labels, without `app_id`: one series across an application's
    /// runs (plan fingerprints).
    SqlName,
    /// Application and `query` (streaming).
    Query,
    /// `target` (a REST URL).
    Target,
    /// `store` (an object store: `s3://bucket`).
    Store,
    /// None: the exporter process itself.
    Process,
}

impl Scope {
    /// The label names, in order.
    pub fn labels(self) -> &'static [&'static str] {
        const APP: &[&str] = &["app_id", "app_name"];
        const GROUP: &[&str] = &["app_id", "app_name", "job_group", "job_description"];
        match self {
            Scope::App => APP,
            Scope::Group => GROUP,
            Scope::Stage => &[
                "app_id",
                "app_name",
                "job_group",
                "job_description",
                "stage_id",
                "stage_attempt",
            ],
            Scope::Executor => &["app_id", "app_name", "executor_id"],
            Scope::Sql => &["app_id", "app_name", "job_group", "description"],
            Scope::SqlName => &["app_name", "job_group", "description"],
            Scope::Query => &["app_id", "app_name", "query"],
            Scope::Target => &["target"],
            Scope::Store => &["store"],
            Scope::Process => &[],
        }
    }
}

/// A label beyond the scope's, with its values where they are a fixed set.
#[derive(Debug, Clone, Copy)]
pub struct Label {
    /// Name.
    pub name: &'static str,
    /// Every value it takes, when they are a small fixed set (documentation).
    pub values: &'static [&'static str],
}

const fn l(name: &'static str, values: &'static [&'static str]) -> Label {
    Label { name, values }
}

/// One metric family.
#[derive(Clone, Copy)]
pub struct Metric {
    /// Prometheus name without the `_total` / `_info` suffix.
    pub name: &'static str,
    /// Prometheus type.
    pub kind: Kind,
    /// HELP text.
    pub help: &'static str,
    /// Longer meaning for `docs/metrics.md` (Markdown); empty: the help text.
    pub doc: &'static str,
    /// Labels every sample starts with.
    pub scope: Scope,
    /// Labels after the scope's.
    pub labels: &'static [Label],
    /// OTLP form.
    pub otlp: Otlp,
    /// The exporter version that first exported it.
    pub since: &'static str,
    /// Stability promise.
    pub stability: Stability,
    /// Its value follows the wall clock (masked when comparing expositions).
    pub clock_derived: bool,
    /// How its samples are read.
    pub read: Read,
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metric")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Metric {
    /// A stable metric since 0.1.0 with no labels beyond its scope.
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        name: &'static str,
        kind: Kind,
        scope: Scope,
        help: &'static str,
        otlp_name: &'static str,
        unit: &'static str,
        instrument: Instrument,
        read: Read,
    ) -> Metric {
        Metric {
            name,
            kind,
            help,
            doc: "",
            scope,
            labels: &[],
            otlp: Otlp {
                name: otlp_name,
                unit,
                instrument,
                scale: Scale::One,
                extra: &[],
                renames: &[],
                receiver: false,
            },
            since: "0.1.0",
            stability: Stability::Stable,
            clock_derived: false,
            read,
        }
    }
    /// With labels after the scope's.
    pub const fn labels(mut self, labels: &'static [Label]) -> Metric {
        self.labels = labels;
        self
    }
    /// With a `docs/metrics.md` meaning longer than the help.
    pub const fn doc(mut self, doc: &'static str) -> Metric {
        self.doc = doc;
        self
    }
    /// OTLP name and unit as the Collector's `apachesparkreceiver`.
    pub const fn rx(mut self) -> Metric {
        self.otlp.receiver = true;
        self
    }
    /// Seconds sent as whole milliseconds over OTLP.
    pub const fn ms(mut self) -> Metric {
        self.otlp.scale = Scale::SecondsToMillis;
        self
    }
    /// Constant OTLP attributes.
    pub const fn attrs(mut self, extra: &'static [(&'static str, &'static str)]) -> Metric {
        self.otlp.extra = extra;
        self
    }
    /// OTLP attribute names of its own for some labels (string attributes).
    pub const fn renames(mut self, renames: &'static [(&'static str, &'static str)]) -> Metric {
        self.otlp.renames = renames;
        self
    }
    /// Its value follows the wall clock.
    pub const fn clock(mut self) -> Metric {
        self.clock_derived = true;
        self
    }
    /// Stable, first exported in `since`.
    pub const fn since(mut self, since: &'static str) -> Metric {
        self.since = since;
        self
    }
    /// Experimental, first exported in `since`.
    pub const fn experimental(mut self, since: &'static str) -> Metric {
        self.stability = Stability::Experimental;
        self.since = since;
        self
    }
    /// The name Prometheus shows (`_total` for counters, `_info` for infos).
    pub fn prometheus_name(&self) -> String {
        format!("{}{}", self.name, self.kind.suffix())
    }
    /// Every label name, in order (histograms add `le` in front of these).
    pub fn label_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.scope
            .labels()
            .iter()
            .copied()
            .chain(self.labels.iter().map(|l| l.name))
    }
}

/// A stable family or label that was renamed or removed, and what replaces it.
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
#[derive(Debug, Clone, Copy)]
pub struct Deprecation {
    /// The Prometheus name as it was (with suffix).
    pub name: &'static str,
    /// The label, when only a label went (`None`: the whole family).
    pub label: Option<&'static str>,
    /// What to use instead.
    pub replacement: &'static str,
    /// The version that dropped it.
    pub since: &'static str,
}

/// Renamed or removed stable families and labels. A stable family or label may leave the
/// catalogue only with an entry here (the stability test holds the catalogue to
/// `tests/data/stable-metrics.txt`).
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub const DEPRECATED: &[Deprecation] = &[];

/// Label renames for OTLP; labels not listed keep their name and are strings.
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
    ("strategy", "spark.sql.join.strategy", AttrType::Str),
    ("operator", "spark.streaming.operator", AttrType::Str),
    ("phase", "spark.streaming.phase", AttrType::Str),
    ("source", "spark.streaming.source", AttrType::Str),
    ("status", "result", AttrType::Str),
    ("target", "url.full", AttrType::Str),
    ("kind", "error.type", AttrType::Str),
    ("store", "spark_exporter.store", AttrType::Str),
    ("op", "spark_exporter.store.operation", AttrType::Str),
    ("rdd_id", "spark.rdd.id", AttrType::Int),
    ("rdd_name", "spark.rdd.name", AttrType::Str),
    ("currency", "spark.cost.currency", AttrType::Str),
    ("resource", "spark.cost.resource", AttrType::Str),
];

/// The OTLP name and type of a label.
pub fn attribute(label: &'static str) -> (&'static str, AttrType) {
    ATTRIBUTES
        .iter()
        .find(|(l, _, _)| *l == label)
        .map_or((label, AttrType::Str), |(_, n, t)| (*n, *t))
}

/// The entry of a family, by name without suffix.
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub fn lookup(name: &str) -> Option<&'static Metric> {
    CATALOGUE.iter().find(|m| m.name == name)
}

const IN: &[(&str, &str)] = &[("direction", "in")];
const OUT: &[(&str, &str)] = &[("direction", "out")];
const JOB_STATUS: &[Label] = &[l("status", &["succeeded", "failed"])];
const STAGE_STATUS: &[Label] = &[l("status", &["complete", "failed", "skipped"])];
const TASK_STATUS: &[Label] = &[l("status", &["succeeded", "failed", "killed"])];
const ANY_STATUS: &[Label] = &[l("status", &[])];
const SQL_STATUS: &[Label] = &[l("status", &["completed", "failed"])];
const RDD: &[Label] = &[l("rdd_id", &[]), l("rdd_name", &[])];
/// The kinds are the diagnose rules' own lists (one declaration per rule, in its registry).
const FINDING: &[Label] = &[
    l("kind", crate::diagnose::rules::FINDING_KINDS),
    l("job_group", &[]),
    l("job_description", &[]),
];
/// `kind` of a finding is no error type (its name for the exporter's error counters).
const FINDING_ATTRS: &[(&str, &str)] = &[("kind", "spark.diagnosis.kind")];
/// A finding's money: its labels and the currency.
const FINDING_MONEY: &[Label] = &[
    l("kind", crate::diagnose::rules::FINDING_KINDS),
    l("job_group", &[]),
    l("job_description", &[]),
    l("currency", &[]),
];
const CORES: &[(&str, &str)] = &[("resource", "cores")];
const MEMORY: &[(&str, &str)] = &[("resource", "memory")];
const WINDOW_FINDING: &[Label] = &[
    l("kind", crate::diagnose::rules::WINDOW_FINDING_KINDS),
    l("job_group", &[]),
    l("job_description", &[]),
    l("query", &[]),
];

use crate::model::plan::{AQE, EXCHANGES, STRATEGIES};
use Instrument::{Counter as C, Gauge as G, Histogram as H, UpDownCounter as U};
use Kind::{Counter, Gauge, Histogram, Info};
use Scope::{App, Executor, Group, Process, Query, Sql, SqlName, Stage, Store, Target};

/// Every family, in the order of the exposition. One entry a family: name, type, scope, help,
/// OTLP name, unit and instrument, reader; then labels, documentation and OTLP details.
#[rustfmt::skip]
pub const CATALOGUE: &[Metric] = &[
    Metric::new("spark_app", Info, App, "Spark application (value 1): id, name, Spark version and \
        user.", "spark.application.info", "1", G,
        |c, o| per_app(c, o, |a| Some((super::sample::plus(&a.base, &[("spark_version", a.app
            .spark_version().clone()), ("user", a.app.user().clone())]), Value::Int(1)))))
        .labels(&[l("spark_version", &[]), l("user", &[])])
        .doc("Always 1; one per application."),
    Metric::new("spark_app_start_time_seconds", Gauge, App, "Application start time, seconds since \
        the Unix epoch.", "spark.application.start_time", "s", G,
        |c, o| per_app(c, o, |a| a.app.start_ms().map(|t| (a.base.clone(), secs(t as u64)))))
        .doc("Application start, Unix seconds."),
    Metric::new("spark_app_end_time_seconds", Gauge, App, "Application end time (or when its \
        driver disappeared), seconds since the Unix epoch.", "spark.application.end_time", "s", G,
        |c, o| per_app(c, o, |a| a.app.end_ms().map(|t| (a.base.clone(), secs(t.max(0) as u64)))))
        .doc("Application end (or when its driver disappeared), Unix seconds."),
    Metric::new("spark_app_runs", Counter, App, "Application runs ended, by outcome: succeeded \
        (exit code 0), failed (another exit code), unknown (no exit code: Spark before 4.0, the \
        REST API, or a driver that vanished).", "spark.application.runs", "{run}", C,
        |c, o| per_app_by(c, o, "status", |a| a.app.runs()))
        .labels(&[l("status", &["succeeded", "failed", "unknown"])])
        .doc("Runs ended, by outcome. Per run (`app_id`): 0 or 1. Per name (`model.aggregate_by: \
            app_name`): the runs that ended since the exporter started.")
        .experimental("0.2.0"),
    Metric::new("spark_app_run_duration_seconds", Histogram, App, "Durations of the runs of an \
        application name, start to end (model.aggregate_by: app_name \
        only).", "spark.application.run.duration", "s", H,
        |c, o| per_app(c, o, |a| a.app.run_duration().map(|h| (a.base.clone(), hist(h)))))
        .doc("Run durations per application name, with `model.aggregate_by: app_name` (absent per \
            run: use the start and end times). Buckets as `spark_app_run_core_seconds`'s, 2^(k/4) \
            s for k = 0 to 93 (1 s to 115 days, each bound 2^(1/4) ≈ 1.19 times the one before), \
            not `histograms.duration_buckets`: a quantile read from it is within 19 % of the true \
            one. See *Runs that regress*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_run_core_seconds", Histogram, App, "Core-seconds allocated to each run \
        of an application name, on buckets 2^(1/4) apart from 1 to 1e7 (model.aggregate_by: \
        app_name only).", "spark.application.run.core_time", "s", H,
        |c, o| per_app(c, o, |a| a.app.run_cost().map(|h| (a.base.clone(), hist(h)))))
        .doc("Per application name, with `model.aggregate_by: app_name`, one observation per \
            counted run: the core-seconds its executors were allocated (its final \
            `spark_executor_core_seconds_allocated_total`, see *Cost*). Buckets 2^(k/4) for k = 0 \
            to 93 (1 to 9.97e6 core-seconds, each bound 2^(1/4) ≈ 1.19 times the one before; 95 \
            series per name with `+Inf`): a quantile read from it, such as the 7-day median of the \
            rule `spark_app_name:run_core_seconds:history_median`, lies in the same bucket as the \
            true one, so within 19 % of it (runs above 9.97e6 core-seconds, 2,770 core-hours, are \
            in `+Inf`, and a quantile there reads 9.97e6). Absent per run. See *Runs that \
            regress*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_last_run_duration_seconds", Gauge, App, "Duration of the application \
        name's counted run that ended last, Spark's start to end (model.aggregate_by: app_name \
        only).", "spark.application.last_run.duration", "s", G,
        |c, o| per_app(c, o, |a| a.app.last_run().and_then(|r| r.duration_seconds).map(|v| (a.base
            .clone(), Value::Float(v)))))
        .doc("Per application name, with `model.aggregate_by: app_name`: the duration (Spark's \
            start to end) of the counted run that ended last. Set when a run ends, kept when it \
            leaves the model and in checkpoints; absent until a run ended since the exporter \
            started (or its checkpoint's), and absent per run. See *Runs that regress*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_last_run_core_seconds", Gauge, App, "Core-seconds allocated to the \
        application name's counted run that ended last (model.aggregate_by: app_name \
        only).", "spark.application.last_run.core_time", "s", G,
        |c, o| per_app(c, o, |a| a.app.last_run().map(|r| (a.base.clone(), Value::Float(r
            .core_seconds)))))
        .doc("Per application name, with `model.aggregate_by: app_name`: the core-seconds \
            allocated to the counted run that ended last (its observation in \
            `spark_app_run_core_seconds`). Set when a run ends, like \
            `spark_app_last_run_duration_seconds`. See *Runs that regress*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_last_run_cost", Gauge, App, "Money the application name's counted run \
        that ended last cost, cores and memory (model.aggregate_by: app_name and cost.prices \
        only).", "spark.application.last_run.cost", "{currency}", G,
        |c, o| per_app_money(c, o, |a| a.app.last_run().and_then(|r| r.money).map(|m| [(&[][..],
            m)])))
        .labels(&[l("currency", &[])])
        .doc("Per application name, with `model.aggregate_by: app_name` and prices: the \
            `spark_app_cost_total` (both resources) of the counted run that ended last, beside \
            `spark_app_last_run_core_seconds`. Absent without prices. See *Money*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_last_run_end_timestamp_seconds", Gauge, App, "End of the application \
        name's counted run that ended last, seconds since the Unix epoch (model.aggregate_by: \
        app_name only).", "spark.application.last_run.end_time", "s", G,
        |c, o| per_app(c, o, |a| a.app.last_run().map(|r| (a.base.clone(), Value::Float(r
            .end_seconds)))))
        .doc("Per application name, with `model.aggregate_by: app_name`: when the counted run that \
            ended last ended (Spark's clock, Unix seconds): the run the other \
            `spark_app_last_run_*` gauges describe, so `time() - \
            spark_app_last_run_end_timestamp_seconds` says how long ago they were set. See *Runs \
            that regress*.")
        .experimental("0.2.0"),
    Metric::new("spark_jobs", Counter, Group, "Jobs ended, by job group, description and \
        status.", "spark.job.result", "{job}", C,
        |c, o| per_group_status(c, o, |g| g.jobs))
        .labels(JOB_STATUS)
        .doc("Jobs ended."),
    Metric::new("spark_jobs_active", Gauge, Group, "Jobs running \
        now.", "spark.job.active", "{job}", U,
        |c, o| per_group(c, o, |g| Value::Int(g.active_jobs))),
    Metric::new("spark_job_duration_seconds", Histogram, Group, "Job duration from submission to \
        completion.", "spark.job.duration", "s", H,
        |c, o| per_group_hists(c, o, |g| g.job_duration))
        .labels(ANY_STATUS),
    Metric::new("spark_stages", Counter, Group, "Stage attempts ended, by status (complete, \
        failed, skipped).", "spark.stage.result", "{stage}", C,
        |c, o| per_group_status(c, o, |g| g.stages))
        .labels(STAGE_STATUS)
        .doc("Stage attempts ended."),
    Metric::new("spark_stages_active", Gauge, Group, "Stage attempts running \
        now.", "spark.stage.active", "{stage}", U,
        |c, o| per_group(c, o, |g| Value::Int(g.active_stages))),
    Metric::new("spark_stage_duration_seconds", Histogram, Group, "Stage attempt duration from \
        submission to completion.", "spark.stage.duration", "s", H,
        |c, o| per_group_hists(c, o, |g| g.stage_duration))
        .labels(ANY_STATUS),
    Metric::new("spark_stage_stalled_seconds", Gauge, Stage, "For each active stage: seconds since \
        one of its tasks last finished, or since submission if none \
        has.", "spark.stage.stalled_time", "s", G,
        |c, o| per_stage(c, o, |s| s.stage.stalled_seconds.map(|v| (plus1(&s.labels, "stage_name",
            s.stage.name), Value::Float(v)))))
        .labels(&[l("stage_name", &[])])
        .clock()
        .doc("Per active stage: seconds since one of its tasks last finished (or since \
            submission). For stuck-stage alerts."),
    Metric::new("spark_stage_tasks_active", Gauge, Stage, "Tasks running now in this stage attempt \
        (active stages only).", "spark.stage.task.active", "{task}", U,
        |c, o| per_stage(c, o, |s| s.stage.active.then(|| (s.labels.clone(), Value::Int(s.stage
            .running_tasks)))))
        .rx()
        .doc("Running tasks, for active stages only: a finished stage's series ends with it \
            (finished stages count in `spark_tasks_total` and `spark_stages_total`)."),
    Metric::new("spark_stage_task_skew_ratio", Gauge, Stage, "Longest task duration divided by the \
        median task duration of this stage attempt (active stages, and finished ones worth a \
        look).", "spark.stage.task.skew", "1", G,
        |c, o| per_stage(c, o, |s| s.stage.skew_ratio.map(|r| (s.labels.clone(), Value::Float(r)))))
        .doc("Longest task duration / median (REST task summary, fetched only for active and \
            just-finished stages), for active stages and, within `model.stage_retention`, finished \
            ones worth a look: failed; skewed (ratio at least `model.stage_skew_ratio`, 5, and the \
            longest task at least `model.stage_skew_min_duration`, 10 s); or among the \
            application's `model.max_finished_stages` (20) longest. At most \
            `model.max_finished_stages` finished stages per application keep their per-stage \
            series, failed first, then skewed, then longest; the others count only in their job \
            group's series. To count skewed stages over time, use the `spark_stage_skew_ratio` \
            histogram (every complete stage, both sources)."),
    Metric::new("spark_stage_skew_ratio", Histogram, Group, "Longest task duration divided by the \
        median task duration of each complete stage attempt, observed once per \
        attempt.", "spark.stage.skew_ratio", "1", H,
        |c, o| per_group_opt(c, o, |g| g.skew_ratio.map(hist)))
        .doc("Per job group, one observation per complete stage attempt: its longest successful \
            task's duration over its median one, with the quantiles of Spark's own `taskSummary` \
            (successful tasks' durations sorted, the value at index `min(floor(q × n), n − 1)`: \
            the median of 4 tasks is the 3rd). From the event log (exact, from the attempt's task \
            ends; at most 200,000 tasks per attempt) or from REST (the attempt's final \
            `taskSummary?quantiles=0.5,1.0`), whichever gives it first; an attempt counts once. \
            Buckets 1, 1.25, 1.5, 2, 3, 5, 10, 20, 50. Failed attempts, and attempts whose median \
            task took 0 ms, are not observed. Unlike `spark_stage_task_skew_ratio` (a gauge per \
            stage attempt, for active stages and a few finished ones worth a look, gone after \
            `model.stage_retention`), this keeps every finished stage in a few series per group: \
            `increase(spark_stage_skew_ratio_count[…]) - \
            increase(spark_stage_skew_ratio_bucket{le=\"5.0\"}[…])` is how many stages of a group \
            were skewed more than 5x (bounds are written `1.0`, `5.0`, …, as Prometheus 3 stores \
            them). REST gives it for the stages the exporter sees end and, on a first read, those \
            that ended within `model.stage_retention`; read a History Server's older applications \
            from their event logs.")
        .experimental("0.2.0"),
    Metric::new("spark_tasks", Counter, Group, "Tasks ended, by status (succeeded, failed, \
        killed).", "spark.task.result", "{task}", C,
        |c, o| per_group_status(c, o, |g| [("succeeded", g.tasks.succeeded), ("failed", g.tasks
            .failed), ("killed", g.tasks.killed)]))
        .labels(TASK_STATUS)
        .doc("Tasks ended."),
    Metric::new("spark_task_duration_seconds", Histogram, Group, "Task duration from launch to \
        finish (from event logs).", "spark.task.duration", "s", H,
        |c, o| for a in &c.apps { for (lb, g) in &a.groups { if let Some(h) = g.task_duration { o
            .push(super::sample::Sample { labels: lb.clone().into(), value: hist(h), created_ms: a
            .app.created_ms() }) } } })
        .doc("Exact task durations (event logs only)."),
    Metric::new("spark_task_run_time_seconds", Counter, Group, "Executor run time of tasks, summed \
        per job group.", "spark.task.run_time", "s", C,
        |c, o| per_group(c, o, |g| secs(g.totals.run_time_ms)))
        .doc("Executor run time of tasks."),
    Metric::new("spark_task_cpu_time_seconds", Counter, Group, "Executor CPU time of tasks, summed \
        per job group.", "spark.task.cpu_time", "s", C,
        |c, o| per_group(c, o, |g| Value::Float(g.totals.cpu_time_ns as f64 / 1e9)))
        .doc("Executor CPU time of tasks."),
    Metric::new("spark_task_gc_time_seconds", Counter, Group, "JVM garbage-collection time of \
        tasks, summed per job group.", "spark.task.gc_time", "s", C,
        |c, o| per_group(c, o, |g| secs(g.totals.gc_time_ms)))
        .doc("JVM GC time of tasks."),
    Metric::new("spark_task_input_bytes", Counter, Group, "Bytes read from input sources by \
        tasks.", "spark.task.io.size", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.input_bytes)))
        .attrs(IN)
        .doc("Bytes read from inputs."),
    Metric::new("spark_task_output_bytes", Counter, Group, "Bytes written to outputs by \
        tasks.", "spark.task.io.size", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.output_bytes)))
        .attrs(OUT)
        .doc("Bytes written to outputs."),
    Metric::new("spark_task_shuffle_read_bytes", Counter, Group, "Shuffle bytes read by tasks \
        (local and remote).", "spark.task.shuffle.io.size", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.shuffle_read_bytes)))
        .attrs(IN)
        .doc("Shuffle bytes read (local + remote)."),
    Metric::new("spark_task_shuffle_write_bytes", Counter, Group, "Shuffle bytes written by \
        tasks.", "spark.task.shuffle.io.size", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.shuffle_write_bytes)))
        .attrs(OUT)
        .doc("Shuffle bytes written."),
    Metric::new("spark_task_memory_spilled_bytes", Counter, Group, "Bytes spilled from memory by \
        tasks (in-memory size).", "spark.task.memory.spilled", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.memory_spilled_bytes)))
        .doc("Bytes spilled from memory."),
    Metric::new("spark_task_disk_spilled_bytes", Counter, Group, "Bytes spilled to disk by \
        tasks.", "spark.task.disk.spilled", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.disk_spilled_bytes)))
        .doc("Bytes spilled to disk."),
    Metric::new("spark_task_locality", Counter, Group, "Tasks ended, by locality level \
        (PROCESS_LOCAL, NODE_LOCAL, RACK_LOCAL, NO_PREF, ANY, other; from event \
        logs).", "spark.task.locality", "{task}", C,
        |c, o| per_group_by(c, o, "locality", |g| g.locality.into_iter()
            .flat_map(|l| crate::model::Locality::ALL.iter().zip(l).map(|(k, n)| (k.label(), n)))))
        .labels(&[l("locality", &["PROCESS_LOCAL", "NODE_LOCAL", "RACK_LOCAL", "NO_PREF", "ANY",
            "other"])])
        .doc("Tasks ended (any outcome), by the locality level Spark's scheduler launched them at \
            (`Task Info`.`Locality`; an unknown level counts as `other`). Event logs only: REST \
            gives per-task locality only in task lists, which the exporter never reads. Many `ANY` \
            or `RACK_LOCAL` tasks where `PROCESS_LOCAL`/`NODE_LOCAL` is expected: data read over \
            the network (see `spark.locality.wait`).")
        .experimental("0.2.0"),
    Metric::new("spark_task_scheduler_delay_seconds", Counter, Group, "Scheduler delay of tasks as \
        the Spark UI computes it, summed per job group (from event \
        logs).", "spark.task.scheduler_delay", "s", C,
        |c, o| per_group_opt(c, o, |g| (g.from_log || g.totals.scheduler_delay_ms > 0)
            .then(|| secs(g.totals.scheduler_delay_ms))))
        .doc("Scheduler delay, summed over tasks (any outcome with metrics): per task, as the \
            Spark UI's `AppStatusUtils.schedulerDelay`, its duration less executor run time, \
            deserialization, result serialization and the time spent getting its result, at least \
            0. Event logs only (REST has no stage total of it); no series for applications only \
            REST reports on.")
        .experimental("0.2.0"),
    Metric::new("spark_task_deserialize_time_seconds", Counter, Group, "Executor deserialization \
        time of tasks, summed per job group.", "spark.task.deserialize_time", "s", C,
        |c, o| per_group(c, o, |g| secs(g.totals.deserialize_ms)))
        .doc("Time executors spent deserializing tasks (`Executor Deserialize Time`; REST \
            `executorDeserializeTime`).")
        .experimental("0.2.0"),
    Metric::new("spark_task_shuffle_fetch_wait_seconds", Counter, Group, "Time tasks waited for \
        shuffle blocks, summed per job group.", "spark.task.shuffle.fetch_wait_time", "s", C,
        |c, o| per_group(c, o, |g| secs(g.totals.fetch_wait_ms)))
        .doc("Time tasks blocked waiting for remote shuffle blocks (`Fetch Wait Time`; REST \
            `shuffleFetchWaitTime`).")
        .experimental("0.2.0"),
    Metric::new("spark_task_peak_execution_memory_bytes", Counter, Group, "Peak execution memory \
        of tasks, summed over tasks per job group.", "spark.task.peak_execution_memory", "By", C,
        |c, o| per_group(c, o, |g| Value::Int(g.totals.peak_execution_memory_bytes)))
        .doc("The sum over tasks of each task's peak execution memory (`Peak Execution Memory`: \
            memory of shuffles, aggregations and joins), which is what Spark's REST stage \
            `peakExecutionMemory` reports too. Not a peak itself: divide by `spark_tasks_total` \
            for the mean peak per task.")
        .experimental("0.2.0"),
    Metric::new("spark_executors", Gauge, App, "Executors by state (active, dead), the driver \
        included.", "spark.executor.count", "{executor}", U,
        |c, o| per_app_by(c, o, "state", |a| a.app.executor_states().into_iter().flatten()))
        .labels(&[l("state", &["active", "dead"])])
        .doc("Executors (the driver included). Dead ones are kept for \
            `model.dead_executor_retention`."),
    Metric::new("spark_connect_jobs", Counter, App, "Spark Connect jobs ended, by client \
        application, user and status.", "spark.connect.job.result", "{job}", C,
        per_connect_client)
        .labels(&[l("client_app", &[]), l("user", &[]), l("status", &["succeeded", "failed"])])
        .doc("Spark Connect jobs ended, by the client's application name (`spark.app.name` of its \
            session, which only event logs record) and, with `labels.connect_user`, the Connect \
            user (else empty). Event logs only.")
        .experimental("0.2.0"),
    Metric::new("spark_executor_removed", Counter, App, "Executors removed, by normalised \
        reason.", "spark.executor.removed", "{executor}", C,
        |c, o| per_app_by(c, o, "reason", |a| a.app.executors_removed()))
        .labels(&[l("reason", &["killed_by_driver", "heartbeat_timeout", "decommissioned",
            "exited", "lost", "other"])])
        .doc("Executors removed."),
    Metric::new("spark_executor_task_time_seconds", Counter, Executor, "Sum of the durations of \
        the tasks this executor ran.", "spark.executor.time", "ms", C,
        |c, o| per_executor(c, o, |e| Some(secs(e.totals.task_time_ms()))))
        .rx().ms()
        .doc("Sum of task durations on the executor. For `executor_id=\"driver\"` Spark's REST API \
            reports the driver's uptime instead, and we report what Spark reports."),
    Metric::new("spark_executor_gc_time_seconds", Counter, Executor, "JVM garbage-collection time \
        of this executor's tasks.", "spark.executor.gc_time", "ms", C,
        |c, o| per_executor(c, o, |e| Some(secs(e.totals.gc_time_ms()))))
        .rx().ms()
        .doc("GC time of the executor's tasks (for the driver, Spark's REST API reports the driver \
            JVM's total GC time)."),
    Metric::new("spark_executor_input_bytes", Counter, Executor, "Bytes read from input sources by \
        this executor.", "spark.executor.input_size", "By", C,
        |c, o| per_executor(c, o, |e| Some(Value::Int(e.totals.input_bytes()))))
        .rx()
        .doc("Input bytes."),
    Metric::new("spark_executor_shuffle_read_bytes", Counter, Executor, "Shuffle bytes read by \
        this executor.", "spark.executor.shuffle.io.size", "By", C,
        |c, o| per_executor(c, o, |e| Some(Value::Int(e.totals.shuffle_read_bytes()))))
        .rx().attrs(IN),
    Metric::new("spark_executor_shuffle_write_bytes", Counter, Executor, "Shuffle bytes written by \
        this executor.", "spark.executor.shuffle.io.size", "By", C,
        |c, o| per_executor(c, o, |e| Some(Value::Int(e.totals.shuffle_write_bytes()))))
        .rx().attrs(OUT),
    Metric::new("spark_executor_active_tasks", Gauge, Executor, "Tasks running now on this \
        executor.", "spark.executor.task.active", "{task}", U,
        |c, o| per_executor(c, o, |e| Some(Value::Int(e.running_tasks))))
        .rx(),
    Metric::new("spark_executor_max_tasks", Gauge, Executor, "Task slots of this \
        executor.", "spark.executor.task.limit", "{task}", U,
        |c, o| per_executor(c, o, |e| e.max_tasks.map(Value::Int)))
        .rx(),
    Metric::new("spark_executor_storage_memory_used_bytes", Gauge, Executor, "Storage memory used \
        by cached blocks.", "spark.executor.memory.usage", "By", U,
        |c, o| per_executor(c, o, |e| e.storage_memory_used_bytes.map(Value::Int)))
        .rx(),
    Metric::new("spark_executor_max_memory_bytes", Gauge, Executor, "Storage memory available to \
        this executor.", "spark.executor.memory.limit", "By", U,
        |c, o| per_executor(c, o, |e| e.max_memory_bytes.map(Value::Int))),
    Metric::new("spark_executor_disk_used_bytes", Gauge, Executor, "Disk space used by cached \
        blocks.", "spark.executor.disk.usage", "By", U,
        |c, o| per_executor(c, o, |e| e.disk_used_bytes.map(Value::Int)))
        .rx(),
    Metric::new("spark_executor_tasks", Counter, Executor, "Tasks ended on this executor, by \
        status (completed, failed).", "spark.executor.task.result", "{task}", C,
        |c, o| per_executor_by(c, o, "status", |e| [("completed", e.totals.completed_tasks()),
            ("failed", e.totals.failed_tasks())]))
        .labels(&[l("status", &["completed", "failed"])])
        .rx()
        .doc("Tasks ended on the executor."),
    Metric::new("spark_executor_peak_memory_bytes", Gauge, Executor, "Peak memory of this executor \
        by type (peakMemoryMetrics).", "spark.executor.memory.peak", "By", G,
        |c, o| per_executor_by(c, o, "type", |e| e.peak_memory.iter().map(|(k, v)| (k.as_str(),
            *v))))
        .labels(&[l("type", &[])])
        .doc("Peak memory per `peakMemoryMetrics` key that is a memory size (`JVMHeapMemory`, \
            `OnHeapStorageMemory`, …)."),
    Metric::new("spark_executor_core_seconds_allocated", Counter, App, "Core-seconds held by the \
        application's executors: each executor's lifetime (added to removed, else to the \
        application's end, else to the latest time the application is known to run) times its \
        cores.", "spark.executor.core.allocated_time", "s", C,
        |c, o| per_app(c, o, |a| Some((a.base.clone(), Value::Float(a.app.cost()
            .allocated_core_seconds())))))
        .clock()
        .doc("Core-seconds the application's executors held: Σ over executors of (removal time, \
            else the application's end, else the application's clock − add time) × cores, from \
            REST `/allexecutors` (`addTime`, `removeTime`, `totalCores`) or the event log \
            (`SparkListenerExecutorAdded` `Total Cores`, `SparkListenerExecutorRemoved`). The \
            application's clock is the latest time it is known to run: each REST poll that lists \
            it running, the newest event read from its log; so it grows with the wall clock while \
            executors live, and never goes back. Executors without cores do not count: a \
            cluster-mode driver runs no task (Spark reports 0 cores for it); in local mode the \
            driver is the executor and counts with its cores. See *Cost*.")
        .experimental("0.2.0"),
    Metric::new("spark_executor_memory_gib_seconds_allocated", Counter, App, "GiB-seconds of \
        memory held by the application's executors: each executor's lifetime (as for \
        spark_executor_core_seconds_allocated) times the memory its container holds (heap + \
        overhead + off-heap + PySpark memory of its resource profile; in local mode the driver's \
        memory).", "spark.executor.memory.allocated_time", "GiBy.s", C,
        |c, o| per_app(c, o, |a| Some((a.base.clone(), Value::Float(a.app.cost()
            .memory_gib_seconds())))))
        .clock()
        .doc("GiB-seconds (GiB = 1024 MiB) the application's executors held: Σ over executors of \
            the lifetime `spark_executor_core_seconds_allocated_total` counts (only executors with \
            cores) × the MiB its resource profile asks for: heap (`memory`) + `memoryOverhead` + \
            `offHeap` + `pyspark.memory`, from the event log's `SparkListenerResourceProfileAdded` \
            (`Executor Resource Requests`) and each executor's `Resource Profile Id`, or REST \
            `/environment` `resourceProfiles` and `/allexecutors` `resourceProfileId`. Spark lists \
            `memoryOverhead` only when `spark.executor.memoryOverhead` is set; else Spark's own \
            rule gives it: max(`spark.executor.minMemoryOverhead`, 384 MiB unless set, \
            `spark.executor.memoryOverheadFactor` × heap, 0.10 unless set). In local mode \
            (`spark.master` `local`, `local[…]`) the driver is the only executor: \
            `spark.driver.memory` (1 GiB unless set), no overhead. 0 until the application's \
            properties are read. See *Money*.")
        .experimental("0.2.0"),
    Metric::new("spark_app_cost", Counter, App, "What the application's executors cost in money, \
        by resource (cores, memory), at the configured prices in effect when they were held \
        (cost.prices; absent without).", "spark.application.cost", "{currency}", C,
        |c, o| per_app_money(c, o, |a| a.app.cost().money.map(|m| [(CORES, m.cores), (MEMORY, m
            .memory)])))
        .labels(&[l("currency", &[]), l("resource", &["cores", "memory"])])
        .clock()
        .doc("`resource=\"cores\"`: Σ over the executors' lifetimes cut at each price's `since`, \
            core-seconds × `core_hour` / 3600 of the price in effect; `resource=\"memory\"`: \
            GiB-seconds × `gib_hour` / 3600 the same way: \
            `spark_executor_core_seconds_allocated_total` and \
            `spark_executor_memory_gib_seconds_allocated_total` in money, at the prices of when \
            the resources were held (`cost.prices`, `cost.currency`, `cost.property`). Absent \
            without prices, and for an application no price entry applies to. See *Money*.")
        .experimental("0.2.0"),
    Metric::new("spark_executor_idle_core_seconds", Gauge, App, "Core-seconds allocated but not \
        used by tasks: allocated minus tasks' executor run time times spark.task.cpus, at least \
        0.", "spark.executor.core.idle_time", "s", G,
        |c, o| per_app(c, o, |a| Some((a.base.clone(), Value::Float(a.app.cost()
            .idle_core_seconds())))))
        .clock()
        .doc("`spark_executor_core_seconds_allocated_total` minus the sum of \
            `spark_task_core_seconds_used_total` over the application's job groups, at least 0: \
            cores held (and paid for) while no task ran on them. A gauge: a running task's time \
            counts only when it ends, so the value can drop. See *Cost*.")
        .experimental("0.2.0"),
    Metric::new("spark_task_core_seconds_used", Counter, Group, "Core-seconds tasks used: executor \
        run time of tasks times spark.task.cpus, summed per job \
        group.", "spark.task.core.used_time", "s", C,
        |c, o| per_group_app(c, o, |a, g| Value::Float(g.totals.run_time_ms.saturating_mul(a.app
            .task_cpus()) as f64 / 1000.0)))
        .doc("`spark_task_run_time_seconds_total` × `spark.task.cpus` (1 unless set; event log \
            `SparkListenerEnvironmentUpdate`, REST `/environment`, read once). Stage-level \
            resource profiles are not considered. See *Cost*.")
        .experimental("0.2.0"),
    Metric::new("spark_rdd_cached_fraction", Gauge, App, "Fraction of a cached dataset's \
        partitions that are cached (numCachedPartitions / \
        numPartitions).", "spark.rdd.cached.fraction", "1", G,
        |c, o| per_rdd(c, o, |r| Value::Float(r.cached_fraction)))
        .labels(RDD)
        .doc("Cached partitions / partitions of each dataset with at least one cached partition: \
            REST `/storage/rdd`, or the event log's block updates \
            (`spark.eventLog.logBlockUpdates.enabled`). `rdd_name` is the first line of Spark's \
            RDD name (`In-memory table t` for `cacheTable`, the plan's first line for \
            `df.cache()`), length-capped. An unpersisted dataset's series go. See *Cached data*.")
        .experimental("0.2.0"),
    Metric::new("spark_rdd_memory_bytes", Gauge, App, "Bytes of a cached dataset in memory (every \
        replica).", "spark.rdd.memory.usage", "By", U,
        |c, o| per_rdd(c, o, |r| Value::Int(r.memory_bytes)))
        .labels(RDD)
        .doc("Bytes of the dataset cached in memory (on and off heap), every replica \
            (`memoryUsed`).")
        .experimental("0.2.0"),
    Metric::new("spark_rdd_disk_bytes", Gauge, App, "Bytes of a cached dataset on disk (every \
        replica).", "spark.rdd.disk.usage", "By", U,
        |c, o| per_rdd(c, o, |r| Value::Int(r.disk_bytes)))
        .labels(RDD)
        .doc("Bytes of the dataset cached on disk, every replica (`diskUsed`).")
        .experimental("0.2.0"),
    Metric::new("spark_sql_executions", Counter, Sql, "SQL executions ended, by description and \
        status.", "spark.sql.execution.result", "{execution}", C,
        per_sql_status)
        .labels(SQL_STATUS)
        .doc("SQL executions ended."),
    Metric::new("spark_sql_executions_active", Gauge, Sql, "SQL executions running \
        now.", "spark.sql.execution.active", "{execution}", U,
        |c, o| per_sql(c, o, |q| Value::Int(q.running))),
    Metric::new("spark_sql_execution_duration_seconds", Histogram, Sql, "SQL execution \
        duration.", "spark.sql.execution.duration", "s", H,
        per_sql_hists)
        .labels(ANY_STATUS),
    Metric::new("spark_sql_plans", Counter, Sql, "SQL executions ended whose final plan was \
        read.", "spark.sql.plans", "{execution}", C,
        |c, o| per_sql_plan(c, o, |p| p.plans()))
        .doc("SQL executions ended whose final plan was read (REST `/sql/{id}?details=true`, or \
            the event log's last plan): the count behind the plan families below (see *SQL \
            plans*).")
        .experimental("0.2.0"),
    Metric::new("spark_sql_joins", Counter, Sql, "Join nodes in the final plans of ended SQL \
        executions, by strategy.", "spark.sql.joins", "{join}", C,
        |c, o| per_sql_plan_by(c, o, "strategy", &STRATEGIES, |p| p.joins()))
        .labels(&[l("strategy", &STRATEGIES)])
        .doc("Join nodes in the final plans of ended SQL executions, by strategy; `other`: any \
            other node whose name ends in `Join` (Photon, RAPIDS, Gluten, streaming joins). Each \
            node once, suffixes such as `(skew=true)` stripped (see *SQL plans*).")
        .experimental("0.2.0"),
    Metric::new("spark_sql_skew_joins", Counter, Sql, "Join nodes adaptive execution split for \
        skew (skew=true) in the final plans of ended SQL \
        executions.", "spark.sql.joins.skew", "{join}", C,
        |c, o| per_sql_plan(c, o, |p| p.skew_joins()))
        .doc("Join nodes adaptive execution split for skew (`SortMergeJoin(skew=true)`) in final \
            plans; they count in `spark_sql_joins_total` too.")
        .experimental("0.2.0"),
    Metric::new("spark_sql_exchanges", Counter, Sql, "Exchange nodes in the final plans of ended \
        SQL executions, by type (shuffle, broadcast).", "spark.sql.exchanges", "{exchange}", C,
        |c, o| per_sql_plan_by(c, o, "type", &EXCHANGES, |p| p.exchanges()))
        .labels(&[l("type", &EXCHANGES)])
        .doc("Exchange nodes in final plans: `shuffle` (`Exchange`), `broadcast` \
            (`BroadcastExchange`). A reused exchange is one node (`ReusedExchange` does not \
            count).")
        .experimental("0.2.0"),
    Metric::new("spark_sql_aqe_partitions", Counter, Sql, "Partitions adaptive execution changed \
        in ended SQL executions, by type (coalesced, skewed, \
        skew_splits).", "spark.sql.aqe.partitions", "{partition}", C,
        |c, o| per_sql_plan_by(c, o, "type", &AQE, |p| p.aqe()))
        .labels(&[l("type", &AQE)])
        .doc("What adaptive execution did, from the final plans' `AQEShuffleRead` metrics: \
            `coalesced` (`number of coalesced partitions`: partitions read as one of several \
            shuffle partitions), `skewed` (`number of skewed partitions`), `skew_splits` (`number \
            of skewed partition splits`).")
        .experimental("0.2.0"),
    Metric::new("spark_sql_plan_fingerprint", Gauge, SqlName, "48-bit hash of the shape of the \
        latest ended execution's final plan, per application name, job group and \
        description.", "spark.sql.plan.fingerprint", "1", G,
        per_sql_fingerprint)
        .doc("Hash of the shape of the final plan of the latest ended execution with these labels, \
            over every run of the application name the exporter holds (its latest run's); no \
            `app_id`, so `changes()` spans runs and a plan change between runs shows. Where \
            several queries (raw job group and description, before rewriting: a report run for \
            several dates, or queries folded into `__other__`) share the labels, the latest plan \
            of each counts: their one shape's hash when they plan alike, else a hash of their \
            distinct shapes, so the value changes when a query's plan does, not when another query \
            ran last. Equal from REST and event logs (see *SQL plans*).")
        .experimental("0.2.0"),
    Metric::new("spark_diagnosis_findings", Counter, App, "Diagnosis findings counted once final: \
        a stage's when its attempt completes, an application's (no job group) and its SQL \
        descriptions' when it has ended and its sources delivered it (each kind's level: \
        docs/diagnose.md).", "spark.diagnosis.findings", "{finding}", C,
        |c, o| per_finding(c, o, false, |t| Value::Int(t.findings)))
        .labels(FINDING)
        .renames(FINDING_ATTRS)
        .doc("The findings of `spark-exporter diagnose`, by the same rules and thresholds \
            (`diagnose.*`), run by the serving exporter on its own model: once an application has \
            ended and its logs are read to the end, its series equal `diagnose --format json` of \
            it (with REST, the kinds REST gives). In name mode, the runs' findings summed per \
            name. The window kinds are in `spark_diagnosis_window_findings`; each kind's level is \
            in `docs/diagnose.md`. See *Findings as metrics*.")
        .experimental("0.2.0"),
    Metric::new("spark_diagnosis_cost_seconds", Counter, App, "Time the final diagnosis findings \
        explain, seconds, in each kind's unit (task-seconds, a stage's longest task over its \
        median, idle core-seconds: docs/diagnose.md). Costs overlap across kinds: never sum over \
        kind.", "spark.diagnosis.cost", "s", C,
        |c, o| per_finding(c, o, false, |t| Value::Float(t.cost_seconds)))
        .labels(FINDING)
        .renames(FINDING_ATTRS)
        .doc("Each kind's formula is in `docs/diagnose.md`; a kind without a cost there counts 0. \
            Costs of different kinds overlap (a skewed stage that spills counts under both kinds): \
            sum over anything but `kind`, never over it. See *Findings as metrics*.")
        .experimental("0.2.0"),
    Metric::new("spark_diagnosis_cost", Counter, App, "Money the final diagnosis findings explain, \
        an estimate: their cost in seconds times spark.task.cpus (but for a cost in core-seconds \
        already) times the core-hour price / 3600 in effect when they were counted (cost.prices; \
        absent without). Never sum over kind.", "spark.diagnosis.money", "{currency}", C,
        per_finding_money)
        .labels(FINDING_MONEY)
        .renames(FINDING_ATTRS)
        .doc("An estimate: `spark_diagnosis_cost_seconds_total` × `spark.task.cpus` (task-seconds \
            to core-seconds; a cost in core-seconds is taken as it is) × `core_hour` / 3600, the \
            core-hour price in effect at the application's end (its latest time while it runs) \
            when each finding was counted. It prices core time only (no memory), and only what the \
            finding's formula measures. Absent without prices. See *Money*.")
        .experimental("0.2.0"),
    Metric::new("spark_diagnosis_window_findings", Gauge, App, "Window diagnosis findings of the \
        latest evaluation, per job group or streaming query (docs/diagnose.md); re-evaluated every \
        second while the application runs, its last evaluation once it has ended. Per run \
        only.", "spark.diagnosis.window.findings", "{finding}", G,
        |c, o| per_finding(c, o, true, |t| Value::Int(t.findings)))
        .labels(WINDOW_FINDING)
        .renames(FINDING_ATTRS)
        .experimental("0.2.0"),
    Metric::new("spark_diagnosis_window_cost_seconds", Gauge, App, "Time the window diagnosis \
        findings explain, seconds, in each kind's unit (docs/diagnose.md); a kind without a cost \
        counts 0. Per run only.", "spark.diagnosis.window.cost", "s", G,
        |c, o| per_finding(c, o, true, |t| Value::Float(t.cost_seconds)))
        .labels(WINDOW_FINDING)
        .renames(FINDING_ATTRS)
        .experimental("0.2.0"),
    Metric::new("spark_streaming_batches", Counter, Query, "Structured-streaming micro-batches \
        completed.", "spark.streaming.batches", "{batch}", C,
        |c, o| per_stream(c, o, |s| Value::Int(s.batches())))
        .doc("Structured-streaming micro-batches (event logs)."),
    Metric::new("spark_streaming_input_rows", Counter, Query, "Rows read by structured-streaming \
        micro-batches.", "spark.streaming.input.rows", "{row}", C,
        |c, o| per_stream(c, o, |s| Value::Int(s.input_rows()))),
    Metric::new("spark_streaming_input_rows_per_second", Gauge, Query, "Input rate of the latest \
        micro-batch.", "spark.streaming.input.rate", "{row}/s", G,
        |c, o| per_stream(c, o, |s| Value::Float(s.input_rows_per_second()))),
    Metric::new("spark_streaming_processed_rows_per_second", Gauge, Query, "Processing rate of the \
        latest micro-batch.", "spark.streaming.processed.rate", "{row}/s", G,
        |c, o| per_stream(c, o, |s| Value::Float(s.processed_rows_per_second()))),
    Metric::new("spark_streaming_batch_duration_seconds", Histogram, Query, "Micro-batch duration \
        (triggerExecution).", "spark.streaming.batch.duration", "s", H,
        |c, o| per_stream(c, o, |s| hist(s.batch_duration()))),
    Metric::new("spark_streaming_batch_phase_seconds", Counter, Query, "Time micro-batches spent \
        per durationMs phase (addBatch, commitOffsets, ...; triggerExecution is the whole \
        batch).", "spark.streaming.batch.phase.duration", "s", C,
        |c, o| per_stream_by(c, o, "phase", |s| s.phases_ms().iter().map(|(k, ms)| (k, secs(*ms)))))
        .labels(&[l("phase", &[])])
        .doc("Seconds of micro-batches per `durationMs` phase, summed over batches: every key \
            Spark writes (`addBatch`, `commitOffsets`, `getBatch`, `latestOffset`, \
            `queryPlanning`, `walCommit`, … vary by version and source; `triggerExecution` is the \
            whole batch), at most 32 per query, then `__other__`.")
        .experimental("0.2.0"),
    Metric::new("spark_streaming_watermark_seconds", Gauge, Query, "Event-time watermark of the \
        latest micro-batch, Unix seconds (queries with \
        withWatermark).", "spark.streaming.watermark", "s", G,
        |c, o| per_stream_opt(c, o, |s| s.watermark_ms().map(|w| Value::Float(w as f64 / 1000.0))))
        .doc("Event-time watermark of the latest micro-batch, Unix seconds. Only queries with \
            `withWatermark`, from the first batch that set one (Spark reports the epoch before): \
            no series otherwise.")
        .experimental("0.2.0"),
    Metric::new("spark_streaming_watermark_lag_seconds", Gauge, Query, "Newest event time \
        (eventTime.max) minus the watermark, of the latest micro-batch that read \
        rows.", "spark.streaming.watermark.lag", "s", G,
        |c, o| per_stream_opt(c, o, |s| s.watermark_lag_s().map(Value::Float)))
        .doc("`eventTime.max` minus `eventTime.watermark` of the latest micro-batch that had both. \
            An empty batch (no `max`) keeps the value of the last batch with rows; no watermark: \
            no series.")
        .experimental("0.2.0"),
    Metric::new("spark_streaming_state_rows", Gauge, Query, "Rows in a stateful operator's state \
        (numRowsTotal, latest micro-batch).", "spark.streaming.state.rows", "{row}", U,
        |c, o| per_stream_by(c, o, "operator", |s| s.operators().iter().map(|(k, op)| (k,
            Value::Int(op.rows_total())))))
        .labels(&[l("operator", &[])])
        .doc("Rows in the state of each stateful operator (`numRowsTotal` of the latest batch); \
            `operator` is Spark's `operatorName` (`stateStoreSave`, `dedupe`, `symmetricHashJoin`, \
            …), a repeated one numbered (`stateStoreSave#2`).")
        .experimental("0.2.0"),
    Metric::new("spark_streaming_state_memory_bytes", Gauge, Query, "Memory used by a stateful \
        operator's state (memoryUsedBytes, latest \
        micro-batch).", "spark.streaming.state.memory", "By", U,
        |c, o| per_stream_by(c, o, "operator", |s| s.operators().iter().map(|(k, op)| (k,
            Value::Int(op.memory_bytes())))))
        .labels(&[l("operator", &[])])
        .experimental("0.2.0"),
    Metric::new("spark_streaming_state_rows_dropped_by_watermark", Counter, Query, "Rows a \
        stateful operator dropped as later than the watermark (numRowsDroppedByWatermark, \
        summed).", "spark.streaming.state.rows.dropped", "{row}", C,
        |c, o| per_stream_by(c, o, "operator", |s| s.operators().iter().map(|(k, op)| (k,
            Value::Int(op.dropped_by_watermark())))))
        .labels(&[l("operator", &[])])
        .experimental("0.2.0"),
    Metric::new("spark_streaming_source_input_rows", Counter, Query, "Rows read per source \
        (sources[].numInputRows, summed).", "spark.streaming.source.input.rows", "{row}", C,
        |c, o| per_stream_by(c, o, "source", |s| s.sources().iter().map(|(k, v)| (k, Value::Int(v
            .input_rows())))))
        .labels(&[l("source", &[])])
        .doc("Rows read per source, summed over batches; `source` is the source's `description` \
            after the rewrite rules and the length cap (`KafkaV2[Subscribe[orders]]`), at most 32 \
            per query.")
        .experimental("0.2.0"),
    Metric::new("spark_streaming_source_input_rows_per_second", Gauge, Query, "Input rate of a \
        source in the latest micro-batch.", "spark.streaming.source.input.rate", "{row}/s", G,
        |c, o| per_stream_by(c, o, "source", |s| s.sources().iter().filter_map(|(k, v)| v
            .input_rows_per_second().map(|r| (k, Value::Float(r))))))
        .labels(&[l("source", &[])])
        .experimental("0.2.0"),
    Metric::new("spark_streaming_source_processed_rows_per_second", Gauge, Query, "Processing rate \
        of a source in the latest \
        micro-batch.", "spark.streaming.source.processed.rate", "{row}/s", G,
        |c, o| per_stream_by(c, o, "source", |s| s.sources().iter().filter_map(|(k, v)| v
            .processed_rows_per_second().map(|r| (k, Value::Float(r))))))
        .labels(&[l("source", &[])])
        .experimental("0.2.0"),
    Metric::new("spark_streaming_trigger_interval_seconds", Gauge, Query, "The query's trigger \
        interval: configured (streaming.trigger_intervals) or inferred from batch start \
        times.", "spark.streaming.trigger.interval", "s", G,
        |c, o| per_stream_by(c, o, "from", |s| s.trigger_interval()
            .map(|t| match t { crate::model::TriggerInterval::Configured(v) => ("configured",
            Value::Float(v)), crate::model::TriggerInterval::Inferred(v) => ("inferred",
            Value::Float(v)) })))
        .labels(&[l("from", &["configured", "inferred"])])
        .doc("The trigger interval: `from=\"configured\"` (`streaming.trigger_intervals`), else \
            `from=\"inferred\"`: the smallest spacing of two on-schedule batch starts among the \
            last 32 batches, to 10 ms (see *Structured Streaming*). No series while neither is \
            known (a query always behind its trigger, `Trigger.AvailableNow`).")
        .experimental("0.2.0"),
    Metric::new("spark_up", Gauge, Target, "1 if the last poll of this Spark REST target \
        succeeded.", "spark_exporter.target.up", "1", G,
        |c, o| per_key(c, o, "target", &c.tele.up, |v: bool| Value::Int(v as u64))),
    Metric::new("spark_exporter_build", Info, Process, "Exporter build (value 1): version, git \
        revision and Rust compiler.", "spark_exporter.build.info", "1", G,
        |c, o| o.push(super::sample::Sample { labels: [("version", env!("CARGO_PKG_VERSION")
            .into()), ("revision", env!("SE_BUILD_REVISION").into()), ("rust_version",
            env!("SE_BUILD_RUSTC").into())].into(), value: Value::Int(1), created_ms: c.tele
            .started_ms }))
        .labels(&[l("version", &[]), l("revision", &[]), l("rust_version", &[])])
        .doc("Always 1. `version` is the crate's, `revision` the git commit it was built from \
            (`unknown` outside a git checkout), `rust_version` the compiler's (`rustc \
            --version`)."),
    Metric::new("process_cpu_seconds", Counter, Process, "Total user and system CPU time spent in \
        seconds.", "process.cpu.time", "s", C,
        |c, o| process(c, o, c.process.cpu_seconds.map(Value::Float)))
        .clock()
        .doc("User and system CPU time of the exporter process (`/proc/self/stat`), as the \
            Prometheus client libraries define it. Linux only.")
        .since("0.2.0"),
    Metric::new("process_resident_memory_bytes", Gauge, Process, "Resident memory size in \
        bytes.", "process.memory.usage", "By", G,
        |c, o| process(c, o, c.process.resident_bytes.map(Value::Int)))
        .clock()
        .doc("Resident set size of the exporter process (`/proc/self/stat`, pages × page size).")
        .since("0.2.0"),
    Metric::new("process_virtual_memory_bytes", Gauge, Process, "Virtual memory size in \
        bytes.", "process.memory.virtual", "By", G,
        |c, o| process(c, o, c.process.virtual_bytes.map(Value::Int)))
        .clock()
        .doc("Virtual memory size of the exporter process.")
        .since("0.2.0"),
    Metric::new("process_open_fds", Gauge, Process, "Number of open file \
        descriptors.", "process.open_file_descriptor.count", "{file_descriptor}", G,
        |c, o| process(c, o, c.process.open_fds.map(Value::Int)))
        .clock()
        .doc("Open file descriptors of the exporter process (`/proc/self/fd`).")
        .since("0.2.0"),
    Metric::new("process_max_fds", Gauge, Process, "Maximum number of open file \
        descriptors.", "process.open_file_descriptor.limit", "{file_descriptor}", G,
        |c, o| process(c, o, c.process.max_fds.map(Value::Int)))
        .clock()
        .doc("The soft limit on open file descriptors (`/proc/self/limits`).")
        .since("0.2.0"),
    Metric::new("process_start_time_seconds", Gauge, Process, "Start time of the process since \
        unix epoch in seconds.", "process.start_time", "s", G,
        |c, o| process(c, o, c.process.start_time_seconds.map(Value::Float)))
        .clock()
        .doc("When the exporter process started (seconds since the epoch): a restart shows as a \
            change of this value, and `changes(process_start_time_seconds[1h])` counts restarts.")
        .since("0.2.0"),
    Metric::new("process_threads", Gauge, Process, "Number of OS threads in the \
        process.", "process.thread.count", "{thread}", G,
        |c, o| process(c, o, c.process.threads.map(Value::Int)))
        .clock()
        .doc("OS threads of the exporter process.")
        .since("0.2.0"),
    Metric::new("spark_exporter_scrape_duration_seconds", Gauge, Target, "Duration of the last \
        poll of this REST target.", "spark_exporter.scrape.duration", "s", G,
        |c, o| per_key(c, o, "target", &c.tele.scrape_duration, Value::Float))
        .clock()
        .doc("Duration of the last poll."),
    Metric::new("spark_exporter_scrape_errors", Counter, Target, "Failed requests to a REST \
        target, by kind (connect, timeout, http_status, decode, \
        body).", "spark_exporter.scrape.errors", "{error}", C,
        |c, o| for ((t, k), v) in &c.tele.scrape_errors { o
            .push(super::sample::Sample { labels: [("target", t.as_str().into()), ("kind", k
            .as_str().into())].into(), value: Value::Int(*v), created_ms: c.tele.started_ms }) })
        .labels(&[l("kind", &["connect", "timeout", "http_status", "decode", "body"])])
        .doc("Failed requests."),
    Metric::new("spark_exporter_rest_apps_skipped", Gauge, Target, "Applications the last listing \
        of this REST target held (running, or ended within model.app_retention) that \
        spark.app_limit left out.", "spark_exporter.rest.apps.skipped", "{application}", G,
        |c, o| per_key(c, o, "target", &c.tele.rest_apps_skipped, Value::Int))
        .doc("Applications the last listing of this target held (running, or ended within \
            `model.app_retention`, matching the filters and this shard) that `spark.app_limit` \
            left out; 0 when every one is followed. A gauge: what is left out now. Raise \
            `spark.app_limit` to follow them.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_startup_complete", Gauge, Process, "1 once every source has given \
        its start-up state (every event log present at start read, each REST target polled once); \
        applications are served only once complete for \
        them.", "spark_exporter.startup.complete", "1", G,
        |c, o| single(c, o, Value::Int(u64::from(!c.tele.startup_pending))))
        .doc("1 once every source the exporter runs has finished its start-up read: each REST \
            target polled once (answered or not), every event log present at start read to its \
            last complete event. Until then an application is served only once each source has \
            given its state for it, so a restart never serves a lower count than before \
            (`/readyz?complete` answers 200 from then on).")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_source_up", Gauge, Process, "1 if the source's last read of this \
        place (a REST target, an event-log folder) succeeded.", "spark_exporter.source.up", "1", G,
        |c, o| for ((source, place), up) in &c.tele.source_up { o
            .push(super::sample::Sample { labels: [("source", source.as_str().into()), ("place",
            place.as_str().into())].into(), value: Value::Int(u64::from(*up)), created_ms: c.tele
            .started_ms }) })
        .labels(&[l("source", &[]), l("place", &[])])
        .doc("1 if the last read of the place succeeded, 0 if it failed (a REST target that does \
            not answer, a folder or bucket that cannot be listed); no series before its first \
            read. Every source has it, by the registry's name (`rest`, `event_log`); `place` is \
            the target URL or the folder as configured.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_source_ready", Gauge, Process, "1 once the source has finished its \
        first round (every REST target polled, the event-log folders \
        listed).", "spark_exporter.source.ready", "1", G,
        |c, o| per_key(c, o, "source", &c.tele.source_ready, |v: bool| Value::Int(u64::from(v))))
        .labels(&[l("source", &[])])
        .doc("0 from start for every source the exporter runs, 1 once it has finished its first \
            round; `/readyz` answers 200 once every source is 1.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_rest_response_bytes", Counter, Target, "Response bytes read from a \
        REST target.", "spark_exporter.rest.response.size", "By", C,
        |c, o| per_key(c, o, "target", &c.tele.rest_bytes, Value::Int)),
    Metric::new("spark_exporter_rest_requests", Counter, Target, "Requests made to a REST \
        target.", "spark_exporter.rest.requests", "{request}", C,
        |c, o| per_key(c, o, "target", &c.tele.rest_requests, Value::Int)),
    Metric::new("spark_exporter_label_overflow", Counter, Process, "Label values folded into \
        __other__ because the label hit its distinct-value \
        cap.", "spark_exporter.label.overflow", "{value}", C,
        |c, o| per_key(c, o, "label", &c.tele.label_overflow, Value::Int))
        .labels(&[l("label", &[])])
        .doc("Label values folded into `__other__`."),
    Metric::new("spark_exporter_eventlog_bytes", Counter, Process, "Event-log bytes read (after \
        decompression).", "spark_exporter.eventlog.read.size", "By", C,
        |c, o| single(c, o, Value::Int(c.tele.eventlog_bytes))),
    Metric::new("spark_exporter_eventlog_events", Counter, Process, "Event-log events \
        read.", "spark_exporter.eventlog.events", "{event}", C,
        |c, o| single(c, o, Value::Int(c.tele.eventlog_events))),
    Metric::new("spark_exporter_eventlog_errors", Counter, Process, "Event-log problems skipped, \
        by kind.", "spark_exporter.eventlog.errors", "{error}", C,
        |c, o| per_key(c, o, "kind", &c.tele.eventlog_errors, Value::Int))
        .labels(&[l("kind", &[])])
        .doc("Event-log problems skipped (corrupt line, codec error, line too long, I/O, …)."),
    Metric::new("spark_exporter_http_errors", Counter, Process, "Connections or requests to this \
        exporter refused, by kind (connection_limit, rate_limit, tls_handshake, tls_reload, \
        unauthorized).", "spark_exporter.http.errors", "{error}", C,
        |c, o| per_key(c, o, "kind", &c.tele.http_errors, Value::Int))
        .labels(&[l("kind", &["connection_limit", "rate_limit", "tls_handshake", "tls_reload",
            "unauthorized"])])
        .doc("Connections or requests to the exporter refused: `connection_limit` (more than 256 \
            open: the newest are closed at once), `rate_limit` (over the web config's \
            `rate_limit`: answered 429), `tls_handshake` (failed or over 10 s; includes client \
            certificates without an allowed SAN), `tls_reload` (a changed certificate or key file \
            could not be loaded: the previous pair is still served), `unauthorized` (missing or \
            wrong basic-auth credentials). Clients that take over 10 s to send a request's \
            headers, or stay idle that long between requests, are disconnected without counting."),
    Metric::new("spark_exporter_eventlog_files", Gauge, Process, "Event-log files by tailer \
        state.", "spark_exporter.eventlog.files", "{file}", U,
        |c, o| per_key(c, o, "state", &c.tele.eventlog_files, Value::Int))
        .labels(&[l("state", &[])]),
    Metric::new("spark_exporter_checkpoint_writes", Counter, Process, "Checkpoints written (result \
        ok) or not (error).", "spark_exporter.checkpoint.writes", "{write}", C,
        |c, o| per_key(c, o, "result", &c.tele.checkpoint_writes, Value::Int))
        .labels(&[l("result", &["ok", "error"])])
        .doc("Checkpoints written (`ok`) or that could not be (`error`, logged): every \
            `checkpoint.interval` and at the end of the drain.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_checkpoint_loads", Counter, Process, "The checkpoint read at \
        start: loaded, none (no file) or refused (damaged, another version or another \
        configuration).", "spark_exporter.checkpoint.loads", "{load}", C,
        |c, o| per_key(c, o, "result", &c.tele.checkpoint_loads, Value::Int))
        .labels(&[l("result", &["loaded", "none", "refused"])])
        .doc("The checkpoint read at start: `loaded`; `none` (no file yet); `refused` (damaged, of \
            an unknown version, or written under another configuration of the model: the exporter \
            started empty, and the log says why).")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_otlp_exports", Counter, Process, "OTLP export \
        attempts.", "spark_exporter.otlp.exports", "{export}", C,
        |c, o| single(c, o, Value::Int(c.tele.otlp_exports))),
    Metric::new("spark_exporter_otlp_export_failures", Counter, Process, "Failed OTLP export \
        attempts (refused, timed out, rejected by the \
        collector).", "spark_exporter.otlp.export.failures", "{export}", C,
        |c, o| single(c, o, Value::Int(c.tele.otlp_export_failures))),
    Metric::new("spark_exporter_store_up", Gauge, Store, "1 if the last listing of this object \
        store (event logs on S3, GCS or Azure) succeeded.", "spark_exporter.store.up", "1", G,
        |c, o| per_key(c, o, "store", &c.tele.store_up, |v: bool| Value::Int(v as u64)))
        .doc("1 if the last listing of the object store succeeded; 0 for wrong credentials, a \
            missing bucket, an unreachable store.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_store_requests", Counter, Store, "HTTP requests to an object \
        store, by operation (list, head, get, other); retries \
        included.", "spark_exporter.store.requests", "{request}", C,
        |c, o| for ((s, op), v) in &c.tele.store_requests { o
            .push(super::sample::Sample { labels: [("store", s.as_str().into()), ("op", op.as_str()
            .into())].into(), value: Value::Int(*v), created_ms: c.tele.started_ms }) })
        .labels(&[l("op", &["list", "head", "get", "other"])])
        .doc("HTTP requests to the store, each retry counted.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_store_response_bytes", Counter, Store, "Response bytes read from \
        an object store.", "spark_exporter.store.response.size", "By", C,
        |c, o| per_key(c, o, "store", &c.tele.store_bytes, Value::Int))
        .experimental("0.2.0"),
    Metric::new("spark_exporter_store_errors", Counter, Store, "Failed requests to an object \
        store, by kind (HTTP status such as 503; connect, timeout, request, interrupted, decode, \
        other; read: a GET that failed after its retries; changed: an object that changed since \
        its size was asked); each retry counted.", "spark_exporter.store.errors", "{error}", C,
        |c, o| for ((s, k), v) in &c.tele.store_errors { o
            .push(super::sample::Sample { labels: [("store", s.as_str().into()), ("kind", k
            .as_str().into())].into(), value: Value::Int(*v), created_ms: c.tele.started_ms }) })
        .labels(&[l("kind", &[])])
        .doc("Failed requests, retried or not: object_store's retries show here.")
        .experimental("0.2.0"),
    Metric::new("spark_exporter_eventlog_lag_seconds", Gauge, Process, "Seconds between now and \
        the newest event read from any event log.", "spark_exporter.eventlog.lag", "s", G,
        |c, o| if let Some(e) = c.tele.eventlog_newest_event_ms { single(c, o, Value::Float(c.now
            .saturating_sub(e).max(0) as f64 / 1000.0)) })
        .clock()
        .doc("Seconds between now and the newest event read."),
];
