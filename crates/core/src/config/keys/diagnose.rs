//! The `diagnose` section: its keys, one per threshold, and the per-group overrides.

use serde_json::Value;

use crate::config::key::{Key, Set, Uses};
use crate::config::parse::{bytes, duration, ratio, scalar_string, whole, Problems};
use crate::config::settings::Settings;

/// The `diagnose` keys: every threshold (the defaults; each also applies per job group under
/// `diagnose.groups`), then the groups, read last so that they start from the defaults.
pub(crate) const KEYS: &[Key] = &[
    Key::threshold("diagnose.skew_ratio", |t, s| {
        t.skew_ratio = ratio(s, None)?;
        Ok(())
    })
    .doc(
        "`spark-exporter diagnose` (see [diagnose.md](diagnose.md)): a complete stage whose \
        longest task ran at least this many times its median one is skewed ...",
    ),
    Key::threshold("diagnose.skew_min_excess", |t, s| {
        t.skew_min_excess = duration(s)?;
        Ok(())
    })
    .doc("... when its longest task also ran at least this much longer than its median one."),
    Key::threshold("diagnose.spill_min_bytes", |t, s| {
        t.spill_min_bytes = bytes(s)?;
        Ok(())
    })
    .default("`1MiB`")
    .doc(
        "A stage that spilled at least this many bytes to disk spills (a size: bytes, or with \
        `KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB`).",
    ),
    Key::threshold("diagnose.gc_ratio", |t, s| {
        t.gc_ratio = ratio(s, Some(1.0))?;
        Ok(())
    })
    .doc(
        "A stage whose tasks spent at least this share of their run time in GC is under GC \
        pressure (0 to 1) ...",
    ),
    Key::threshold("diagnose.gc_min", |t, s| {
        t.gc_min = duration(s)?;
        Ok(())
    })
    .doc("... when that GC time is at least this."),
    Key::threshold("diagnose.broadcast_max_bytes", |t, s| {
        t.broadcast_max_bytes = bytes(s)?;
        Ok(())
    })
    .default("`10MiB`")
    .doc(
        "A sort-merge or shuffled hash join whose description's smallest shuffle (bytes a stage \
        wrote) is at most this could have been a broadcast (Spark's default \
        `spark.sql.autoBroadcastJoinThreshold`).",
    ),
    Key::threshold("diagnose.min_core_utilization", |t, s| {
        t.min_core_utilization = ratio(s, Some(1.0))?;
        Ok(())
    })
    .doc(
        "An application whose tasks used less than this share of the core time its executors held \
        has idle cores (0 to 1) ...",
    ),
    Key::threshold("diagnose.utilization_min_core_time", |t, s| {
        t.utilization_min_core_time = duration(s)?;
        Ok(())
    })
    .doc("... once at least this much core time (core-seconds, written as a duration) was held."),
    Key::threshold("diagnose.scheduler_delay_ratio", |t, s| {
        t.scheduler_delay_ratio = ratio(s, None)?;
        Ok(())
    })
    .doc(
        "A job group whose tasks' scheduler delay is at least this share of their run time is \
        scheduler-bound ...",
    ),
    Key::threshold("diagnose.scheduler_delay_min", |t, s| {
        t.scheduler_delay_min = duration(s)?;
        Ok(())
    })
    .doc("... when that delay adds up to at least this."),
    Key::threshold("diagnose.locality_remote_ratio", |t, s| {
        t.locality_remote_ratio = ratio(s, Some(1.0))?;
        Ok(())
    })
    .doc(
        "A job group where at least this share of the tasks with a locality preference ran \
        `RACK_LOCAL` or `ANY` has poor locality (0 to 1) ...",
    ),
    Key::threshold("diagnose.locality_min_tasks", |t, s| {
        t.locality_min_tasks = whole(s)? as u64;
        Ok(())
    })
    .doc("... among at least this many such tasks."),
    Key::threshold("diagnose.trigger_ratio", |t, s| {
        t.trigger_ratio = ratio(s, None)?;
        Ok(())
    })
    .doc("A streaming batch longer than this share of its trigger interval is near its budget ..."),
    Key::threshold("diagnose.trigger_over_fraction", |t, s| {
        t.trigger_over_fraction = ratio(s, Some(1.0))?;
        Ok(())
    })
    .doc(
        "... and a query is reported when at least this share of its last 32 batches are (0 to \
        1).",
    ),
    Key::threshold("diagnose.min_cost", |t, s| {
        t.min_cost = duration(s)?;
        Ok(())
    })
    .doc(
        "Findings that explain less time than this are left out (plan changes, partly cached \
        data, locality and streaming findings, which have no such cost, always stay).",
    ),
    Key::tree("diagnose.groups", groups)
        .uses(Uses::DIAGNOSE)
        .default("none")
        .doc(
            "Any of the `diagnose` keys above for one job group (its `job_group` label value; \
             names with dots work): e.g. `diagnose: {groups: {nightly_etl: {skew_ratio: 10}}}`. \
             The other keys of that group keep the values above. Application-wide findings \
             (idle cores, streaming) use the top-level values. Every wrong value or unknown key \
             is named, exit 64.",
        ),
];

/// `diagnose.groups`: per job group, the defaults with some thresholds replaced. Job group
/// names may hold dots, so the groups are read from their table, not by key path.
fn groups(s: &mut Settings, v: &Value) -> Result<(), Problems> {
    let Value::Object(m) = v else {
        return Err("expected a table of job groups".into());
    };
    let mut bad = vec![];
    for (name, table) in m {
        let mut t = s.diagnose.defaults.clone();
        let Value::Object(fields) = table else {
            bad.push((format!(".{name}"), "expected a table of thresholds".into()));
            continue;
        };
        for (k, v) in fields {
            let at = format!(".{name}.{k}");
            let set = KEYS.iter().find_map(|key| match key.set {
                Set::Threshold(f) if key.name.strip_prefix("diagnose.") == Some(k.as_str()) => {
                    Some(f)
                }
                _ => None,
            });
            match (set, scalar_string(v)) {
                (None, _) => bad.push((at, "unknown field".into())),
                (Some(_), None) => bad.push((at, "expected a single value".into())),
                (Some(f), Some(x)) => {
                    if let Err(e) = f(&mut t, &x) {
                        bad.push((at, e));
                    }
                }
            }
        }
        s.diagnose.groups.insert(name.clone(), t);
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Problems(bad))
    }
}
