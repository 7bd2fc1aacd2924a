//! The settings a review sums per application name: each setting the runs' diagnoses suggested
//! (one value per property per scope in a run, [`crate::advice::SettingChange`]), with the runs
//! it was suggested in and the cost of the findings it serves, so a fleet's owner sees which
//! settings are most worth changing.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::advice::Scope;
use crate::report::{AppReport, Finding};

/// A setting suggested for an application name's runs, summed over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NameSetting {
    /// The property.
    pub key: String,
    /// Who it is for: the application, or one job group's queries.
    pub scope: Scope,
    /// The job group, when `scope` is `job_group`.
    pub job_group: Option<String>,
    /// The value to try: the one suggested in the run whose findings it serves cost the most.
    pub to_try: String,
    /// The values the runs had where it was suggested (each once, at most 5; `null`: unset).
    pub ran_with: Vec<Option<String>>,
    /// Runs it was suggested in.
    pub runs: u64,
    /// Findings it serves, over those runs.
    pub findings: u64,
    /// The unit of `cost_seconds` (the findings' kinds').
    pub unit: String,
    /// The cost of the findings it serves, summed over the runs, seconds of `unit`.
    #[schemars(range(min = 0))]
    pub cost_seconds: f64,
    /// That cost in money (`currency`), an estimate; `null` without prices.
    #[schemars(range(min = 0))]
    pub money: Option<f64>,
}

/// Most values of `ran_with` listed.
const RAN_WITH_LISTED: usize = 5;

type Slot = (String, Scope, Option<String>, String);

#[derive(Debug, Default)]
struct Acc {
    runs: u64,
    findings: u64,
    cost: f64,
    money: f64,
    best: (f64, String),
    ran_with: Vec<Option<String>>,
}

/// The settings of one application name being folded.
#[derive(Debug, Default)]
pub struct SettingsAcc(BTreeMap<Slot, Acc>);

impl SettingsAcc {
    /// Fold one run's settings in; `money` prices a finding.
    pub fn fold(&mut self, a: &AppReport, money: &dyn Fn(&Finding) -> f64) {
        for s in &a.settings {
            // A setting serves findings of one unit at most in practice; keyed by unit so
            // that costs of different units are never summed.
            let mut by_unit: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
            for f in s.findings.iter().filter_map(|i| a.findings.get(*i)) {
                by_unit.entry(f.kind.rule().unit).or_default().push(f);
            }
            for (unit, fs) in by_unit {
                let slot = (
                    s.key.clone(),
                    s.scope,
                    s.job_group.clone(),
                    unit.to_string(),
                );
                let e = self.0.entry(slot).or_default();
                let cost: f64 = fs.iter().map(|f| f.cost_seconds).sum();
                e.runs += 1;
                e.findings += fs.len() as u64;
                e.cost += cost;
                e.money += fs.iter().map(|f| money(f)).sum::<f64>();
                if e.best.1.is_empty() || cost > e.best.0 {
                    e.best = (cost, s.to_try.clone());
                }
                if e.ran_with.len() < RAN_WITH_LISTED && !e.ran_with.contains(&s.ran_with) {
                    e.ran_with.push(s.ran_with.clone());
                }
            }
        }
    }

    /// The settings, the costliest first (by money in a priced review).
    pub fn finish(self, priced: bool) -> Vec<NameSetting> {
        let mut v: Vec<NameSetting> = self
            .0
            .into_iter()
            .map(|((key, scope, job_group, unit), a)| NameSetting {
                key,
                scope,
                job_group,
                to_try: a.best.1,
                ran_with: a.ran_with,
                runs: a.runs,
                findings: a.findings,
                unit,
                cost_seconds: a.cost,
                money: priced.then_some(a.money),
            })
            .collect();
        let key = |s: &NameSetting| s.money.unwrap_or(s.cost_seconds);
        v.sort_by(|a, b| {
            key(b)
                .total_cmp(&key(a))
                .then_with(|| (&a.key, &a.job_group).cmp(&(&b.key, &b.job_group)))
        });
        v
    }
}
