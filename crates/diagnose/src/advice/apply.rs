//! Advice applied to an application's report: each finding's, consolidated to one value per
//! property per scope, and the paste-able block.

use std::collections::BTreeMap;

use super::cx::Cx;
use super::kinds;
use super::spark;
use super::types::{CodeChange, RunConf, Scope, SettingChange};
use crate::report::{AppReport, Finding, Kind};

/// Each finding's advice and the application's settings, in place: every finding of `app` gets
/// its suggestions and code changes, consolidated so that a property has one value per scope
/// (the greatest of a broadcast threshold, else the costliest finding's), and `app.settings`
/// gets that value once, with the findings it serves.
pub fn advise(app: &mut AppReport, run: &RunConf) {
    for i in 0..app.findings.len() {
        let advice = kinds::advise(&Cx {
            run,
            finding: &app.findings[i],
            what_if: app.what_if.as_ref(),
        });
        let f = &mut app.findings[i];
        f.suggestions = advice.settings;
        f.code = advice.code;
    }
    app.settings = consolidate(&mut app.findings);
}

/// How two values of one property in one scope become one.
fn merged(key: &str, a: &str, b: &str) -> Option<String> {
    if key.ends_with("BroadcastJoinThreshold") {
        return match (spark::bytes(a), spark::bytes(b)) {
            (Some(x), Some(y)) => Some(if x >= y { a } else { b }.to_string()),
            _ => None,
        };
    }
    None
}

/// One value per (scope, job group, property): see [`advise`]. Findings come most costly first,
/// so the first value of a property is its costliest finding's.
fn consolidate(findings: &mut [Finding]) -> Vec<SettingChange> {
    type Slot = (Scope, Option<String>, String);
    let mut out: BTreeMap<Slot, SettingChange> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        for s in &f.suggestions {
            let slot = (s.scope, s.job_group.clone(), s.key.clone());
            let e = out.entry(slot).or_insert_with(|| SettingChange {
                key: s.key.clone(),
                to_try: s.to_try.clone(),
                ran_with: s.ran_with.clone(),
                origin: s.origin,
                scope: s.scope,
                job_group: s.job_group.clone(),
                findings: vec![],
            });
            if let Some(v) = merged(&s.key, &e.to_try, &s.to_try) {
                e.to_try = v;
            }
            if !e.findings.contains(&i) {
                e.findings.push(i);
            }
        }
    }
    // Every finding shows the one value its slot has.
    for f in findings.iter_mut() {
        for s in &mut f.suggestions {
            if let Some(e) = out.get(&(s.scope, s.job_group.clone(), s.key.clone())) {
                s.to_try = e.to_try.clone();
            }
        }
    }
    out.into_values().collect()
}

/// The application's advice as text a user pastes: `--conf` lines and a SparkApplication's
/// `sparkConf:` map for the application's settings, `spark.conf.set(...)` lines per job group,
/// and the code changes per finding. Empty when there is nothing to change.
pub fn paste_block(app: &AppReport) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let whole: Vec<&SettingChange> = app
        .settings
        .iter()
        .filter(|s| s.scope == Scope::Application)
        .collect();
    if !whole.is_empty() {
        o.push_str("Settings to try for the application (spark-submit):\n");
        for s in &whole {
            let _ = writeln!(o, "  --conf {}={}", s.key, s.to_try);
        }
        o.push_str("The same as a SparkApplication's spec:\n  sparkConf:\n");
        for s in &whole {
            let _ = writeln!(o, "    \"{}\": \"{}\"", s.key, s.to_try);
        }
    }
    let mut groups: BTreeMap<&str, Vec<&SettingChange>> = BTreeMap::new();
    for s in app.settings.iter().filter(|s| s.scope == Scope::JobGroup) {
        groups
            .entry(s.job_group.as_deref().unwrap_or(""))
            .or_default()
            .push(s);
    }
    for (g, settings) in groups {
        let _ = writeln!(
            o,
            "Session settings for job group \"{g}\" (before its queries):"
        );
        for s in settings {
            let _ = writeln!(o, "  spark.conf.set(\"{}\", \"{}\")", s.key, s.to_try);
        }
    }
    let code: Vec<(&Finding, &CodeChange)> = app
        .findings
        .iter()
        .flat_map(|f| f.code.iter().map(move |c| (f, c)))
        .collect();
    if !code.is_empty() {
        o.push_str("Changes to the code:\n");
        for (f, c) in code {
            let g = f.at.job_group.as_deref().unwrap_or("");
            let _ = writeln!(o, "  [{}] group \"{g}\": {}", f.kind.as_str(), c.change);
        }
    }
    o
}

/// The kinds an advisor covers, for the docs and a test that every kind is listed.
pub fn advised_kinds() -> &'static [(Kind, &'static str)] {
    kinds::COVERED
}

/// The advice tables of `docs/diagnose.md`: what each kind's advisor names, then every setting
/// advice may name with Spark's default and who it is for.
pub fn doc_tables() -> (String, String) {
    use std::fmt::Write;
    let mut kinds = String::from("| Kind | What it suggests |\n|---|---|\n");
    for (k, what) in kinds::COVERED {
        let _ = writeln!(kinds, "| `{}` | {what} |", k.as_str());
    }
    let mut settings = String::from("| Setting | Spark's default | Set for |\n|---|---|---|\n");
    for k in spark::KNOWN {
        let _ = writeln!(
            settings,
            "| `{}` | {} | {} |",
            k.key,
            k.default.map_or("unset".into(), |d| format!("`{d}`")),
            if k.session {
                "a job group (`spark.conf.set`), or the application"
            } else {
                "the application (`--conf`)"
            }
        );
    }
    (kinds, settings)
}
