//! What an advisor reads: the run's configuration seen from one finding, and the value each
//! setting had for it.

use super::spark;
use super::types::{Origin, RunConf, Scope, Suggestion};
use crate::report::Finding;

/// What an advisor reads: the run's configuration, seen from one finding.
pub struct Cx<'a> {
    /// The run's configuration.
    pub run: &'a RunConf,
    /// The finding.
    pub finding: &'a Finding,
    /// The run predicted on other executor counts, when it could be.
    pub what_if: Option<&'a crate::whatif::WhatIf>,
}

impl Cx<'_> {
    /// The SQL executions the finding's settings come from: its own, its stage's, or its job
    /// group's, latest first.
    pub fn executions(&self) -> Vec<u64> {
        let at = &self.finding.at;
        if let Some(e) = at.execution_id.or_else(|| {
            at.stage_id
                .and_then(|s| self.run.stage_execution.get(&s).copied())
        }) {
            return vec![e];
        }
        at.job_group
            .as_ref()
            .and_then(|g| self.run.group_executions.get(g))
            .map(|s| s.iter().rev().copied().collect())
            .unwrap_or_default()
    }

    /// The value of `key` the finding's queries ran with, and where it came from: their session
    /// settings, else the application's, else Spark's default (assumed when the log had no
    /// environment event).
    pub fn value(&self, key: &str) -> (Option<String>, Origin, Option<u64>) {
        for e in self.executions() {
            if let Some(v) = self.run.sql.get(&e).and_then(|m| m.get(key)) {
                return (Some(v.clone()), Origin::SqlExecution, Some(e));
            }
        }
        let default = spark::known(key)
            .and_then(|k| k.default)
            .map(str::to_string);
        match &self.run.app {
            Some(props) => match props.get(key) {
                Some(v) => (Some(v.clone()), Origin::Application, None),
                None => (default, Origin::SparkDefault, None),
            },
            None => (default, Origin::Assumed, None),
        }
    }

    /// A suggestion to set `key` to `to_try`, for the finding's job group when it is a SQL
    /// session setting and the finding has one, else for the application.
    pub fn set(&self, key: &str, to_try: String, basis: String) -> Suggestion {
        let (ran_with, origin, execution_id) = self.value(key);
        let group = self.finding.at.job_group.clone();
        let session = spark::known(key).is_some_and(|k| k.session) && group.is_some();
        Suggestion {
            key: key.into(),
            ran_with,
            origin,
            execution_id,
            to_try,
            scope: if session {
                Scope::JobGroup
            } else {
                Scope::Application
            },
            job_group: if session { group } else { None },
            basis,
        }
    }

    /// The finding's number `name`, 0 when it has none.
    pub fn number(&self, name: &str) -> f64 {
        self.finding.numbers.get(name).copied().unwrap_or(0.0)
    }
}
