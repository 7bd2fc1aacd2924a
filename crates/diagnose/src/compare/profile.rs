//! One run as a comparison reads it ([`Profile`]): its measures as a whole, per job group and
//! description (raw, as the run named them), per stage by its place in its job, its SQL
//! executions by their raw description and order, its settings, capacity and findings.
//!
//! Everything a comparison aligns is keyed by what stays the same between two runs of one
//! application: not Spark's ids, which move.

use std::collections::BTreeMap;

use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::plan::PlanSummary;

use super::shape::Shape;
use crate::advice::RunConf;
use crate::report::AppReport;

/// The measures compared, in [`Measures`] order: name, unit, and whether it is a part of the
/// task time (what the ranked list shares the time difference among).
pub const MEASURES: [(&str, &str, bool); 16] = [
    ("task_seconds", "s", false),
    ("tasks", "", false),
    ("failed_tasks", "", false),
    ("stages", "", false),
    ("gc_seconds", "s", true),
    ("shuffle_fetch_wait_seconds", "s", true),
    ("scheduler_delay_seconds", "s", true),
    ("input_bytes", "B", false),
    ("output_bytes", "B", false),
    ("shuffle_read_bytes", "B", false),
    ("shuffle_write_bytes", "B", false),
    ("spill_bytes", "B", false),
    ("input_rows", "", false),
    ("output_rows", "", false),
    ("shuffle_read_rows", "", false),
    ("shuffle_write_rows", "", false),
];

/// Index of `input_rows`: the four row counts follow, as [`Shape::rows`] holds them.
pub const ROWS: usize = 12;

/// Index of `task_seconds` in [`MEASURES`].
pub const TASK_SECONDS: usize = 0;
/// Index of `tasks`.
pub const TASKS: usize = 1;

/// One value per [`MEASURES`] entry.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measures(pub [f64; MEASURES.len()]);

impl Measures {
    /// A stage attempt's measures.
    pub fn of(s: &StageDetail) -> Measures {
        let t = &s.totals;
        let ms = |v: u64| v as f64 / 1000.0;
        Measures([
            ms(t.run_time_ms),
            (s.tasks.succeeded + s.tasks.failed + s.tasks.killed) as f64,
            s.tasks.failed as f64,
            1.0,
            ms(t.gc_time_ms),
            ms(t.fetch_wait_ms),
            ms(t.scheduler_delay_ms),
            t.input_bytes as f64,
            t.output_bytes as f64,
            t.shuffle_read_bytes as f64,
            t.shuffle_write_bytes as f64,
            t.disk_spilled_bytes as f64,
            0.0,
            0.0,
            0.0,
            0.0,
        ])
    }

    /// `self` plus `o`.
    pub fn add(&mut self, o: &Measures) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

/// A stage's place: its job's order within the job group (by job id) and its position in that
/// job's stage list.
pub type StagePlace = (u32, u32);

/// A job group and description, raw.
pub type GroupId = (String, String);

/// A SQL execution's place: its raw description and its order among the run's executions of
/// that description.
pub type QueryId = (String, u32);

/// One run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Application id.
    pub app_id: String,
    /// Application name.
    pub app_name: String,
    /// Spark's version.
    pub spark_version: String,
    /// Start, epoch ms.
    pub start_ms: Option<i64>,
    /// Start to end, seconds (`None`: no end in the log).
    pub wall_seconds: Option<f64>,
    /// Executors (the most registered at once; the driver in local mode) and their cores each.
    pub executors: Option<u64>,
    /// Cores each executor.
    pub cores: Option<u64>,
    /// Core-seconds the executors held.
    pub core_seconds: f64,
    /// The whole run's measures.
    pub totals: Measures,
    /// The application's Spark properties (`None`: the log had no environment event).
    pub props: Option<BTreeMap<String, String>>,
    /// Job groups and descriptions.
    pub groups: BTreeMap<GroupId, GroupProfile>,
    /// SQL executions.
    pub queries: BTreeMap<QueryId, QueryProfile>,
    /// Findings by kind and where (job group, description), with their count and cost.
    pub findings: BTreeMap<(String, String, String), (u32, f64, String)>,
}

/// A job group and description's part of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupProfile {
    /// Its measures.
    pub m: Measures,
    /// Its jobs.
    pub jobs: u32,
    /// Its stages by place.
    pub stages: BTreeMap<StagePlace, StageProfile>,
}

/// A stage (all its attempts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageProfile {
    /// Its id in this run.
    pub stage_id: u64,
    /// Its name.
    pub name: String,
    /// Its measures.
    pub m: Measures,
    /// Its longest successful task over its median (`None`: not known).
    pub skew: Option<f64>,
}

/// A SQL execution.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryProfile {
    /// Its id in this run.
    pub execution_id: u64,
    /// The job group its jobs ran in (raw).
    pub group: String,
    /// Its final plan's summary.
    pub plan: Option<PlanSummary>,
    /// Its session settings that differ from the application's (`modifiedConfigs`).
    pub settings: BTreeMap<String, String>,
}

impl Profile {
    /// The profile of the run `report` diagnosed, from its stage attempts, what was recorded of
    /// its jobs and SQL executions, and its configuration.
    pub fn of(report: &AppReport, stages: &[StageDetail], shape: &Shape, conf: &RunConf) -> Self {
        let mut p = Profile {
            app_id: report.app_id.clone(),
            app_name: report.app_name.clone(),
            spark_version: report.spark_version.clone(),
            start_ms: report.start_ms,
            wall_seconds: match (report.start_ms, report.end_ms) {
                (Some(s), Some(e)) if e >= s => Some((e - s) as f64 / 1000.0),
                _ => None,
            },
            executors: report.what_if.as_ref().map(|w| w.executors),
            cores: report.what_if.as_ref().map(|w| w.cores),
            core_seconds: report.summary.allocated_core_seconds,
            props: conf.app.clone(),
            ..Profile::default()
        };
        // Each stage's job (the first that lists it) and place.
        let mut order: BTreeMap<GroupId, u32> = BTreeMap::new();
        let mut place: BTreeMap<u64, (GroupId, StagePlace)> = BTreeMap::new();
        for job in shape.jobs.values() {
            let key = (job.group.clone(), shape.description_of(job));
            let n = order.entry(key.clone()).or_default();
            let at = *n;
            *n += 1;
            p.groups.entry(key.clone()).or_default().jobs += 1;
            for (i, s) in job.stages.iter().enumerate() {
                place
                    .entry(*s)
                    .or_insert_with(|| (key.clone(), (at, i as u32)));
            }
        }
        for s in stages {
            let mut m = Measures::of(s);
            if let Some(rows) = shape.rows.get(&(s.stage_id, s.attempt)) {
                for (i, r) in rows.iter().enumerate() {
                    m.0[ROWS + i] = *r as f64;
                }
            }
            p.totals.add(&m);
            let (key, at) = place
                .get(&s.stage_id)
                .cloned()
                .unwrap_or_else(|| (GroupId::default(), (u32::MAX, s.stage_id as u32)));
            let g = p.groups.entry(key).or_default();
            g.m.add(&m);
            let st = g.stages.entry(at).or_insert_with(|| StageProfile {
                stage_id: s.stage_id,
                name: s.name.to_string(),
                ..StageProfile::default()
            });
            st.m.add(&m);
            if let Some((longest, median)) = s.longest_median_ms.filter(|(_, m)| *m > 0.0) {
                st.skew = Some(st.skew.unwrap_or(0.0).max(longest / median));
            }
        }
        p.queries = queries(shape, conf);
        for f in &report.findings {
            let at = &f.at;
            let key = (
                f.kind.as_str().to_string(),
                at.job_group.clone().unwrap_or_default(),
                at.description.clone().unwrap_or_default(),
            );
            let e = p.findings.entry(key).or_insert((0, 0.0, f.title.clone()));
            e.0 += 1;
            e.1 += f.cost_seconds;
        }
        p
    }
}

/// The SQL executions of `shape` by raw description and order, each with its job group (its
/// first job's), plan and session settings.
fn queries(shape: &Shape, conf: &RunConf) -> BTreeMap<QueryId, QueryProfile> {
    let mut group_of: BTreeMap<u64, &str> = BTreeMap::new();
    for j in shape.jobs.values() {
        if let Some(e) = j.sql {
            group_of.entry(e).or_insert(&j.group);
        }
    }
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (id, q) in &shape.sql {
        let n = seen.entry(&q.description).or_default();
        out.insert(
            (q.description.clone(), *n),
            QueryProfile {
                execution_id: *id,
                group: group_of.get(id).map(|g| g.to_string()).unwrap_or_default(),
                plan: q.plan,
                settings: conf.sql.get(id).cloned().unwrap_or_default(),
            },
        );
        *n += 1;
    }
    out
}
