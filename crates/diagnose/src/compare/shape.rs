//! What a comparison reads of a run beside the model: each job's raw job group and description
//! (before the label rules rewrite them), its SQL execution and its stages in the job's order,
//! each SQL execution's raw description and final plan, and the rows each stage attempt read and
//! wrote. `diagnose` records it while it reads
//! an event log; the long-running model keeps none of it.

use std::collections::BTreeMap;

use spark_exporter_core::model::plan::PlanSummary;

/// One run's jobs and SQL executions, by Spark's ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// Jobs by id.
    pub jobs: BTreeMap<u64, JobShape>,
    /// SQL executions by id.
    pub sql: BTreeMap<u64, SqlShape>,
    /// The rows each completed stage attempt read and wrote: input, output, shuffle read,
    /// shuffle write.
    pub rows: BTreeMap<(u64, u32), [u64; 4]>,
}

/// A job as it was submitted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobShape {
    /// Its job group as attributed (job group, tag or call site), before rewriting; empty: none.
    pub group: String,
    /// Its `spark.job.description`, before rewriting; empty: none (then its SQL execution's).
    pub description: String,
    /// Its SQL execution (`spark.sql.execution.id`).
    pub sql: Option<u64>,
    /// Its stages, as the job lists them (skipped ones too).
    pub stages: Vec<u64>,
}

/// A SQL execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SqlShape {
    /// Its description, before rewriting.
    pub description: String,
    /// Its final plan's summary (joins, exchanges, adaptive numbers, fingerprint).
    pub plan: Option<PlanSummary>,
}

impl Shape {
    /// A job's group, description, execution and stages, as far as known.
    pub fn job(
        &mut self,
        id: u64,
        group: Option<&str>,
        description: Option<&str>,
        sql: Option<u64>,
        stages: &[u64],
    ) {
        let j = self.jobs.entry(id).or_default();
        if let Some(g) = group.filter(|g| !g.is_empty()) {
            j.group = g.to_string();
        }
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            j.description = d.to_string();
        }
        j.sql = sql.or(j.sql);
        if !stages.is_empty() {
            j.stages = stages.to_vec();
        }
    }

    /// A SQL execution's description.
    pub fn sql(&mut self, id: u64, description: Option<&str>) {
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            self.sql.entry(id).or_default().description = d.to_string();
        }
    }

    /// A SQL execution's final plan.
    pub fn plan(&mut self, id: u64, plan: PlanSummary) {
        self.sql.entry(id).or_default().plan = Some(plan);
    }

    /// The description a job is grouped under: its own, else its SQL execution's.
    pub fn description_of(&self, job: &JobShape) -> String {
        if !job.description.is_empty() {
            return job.description.clone();
        }
        job.sql
            .and_then(|e| self.sql.get(&e))
            .map(|q| q.description.clone())
            .unwrap_or_default()
    }
}
