//! Sharding (`shard.index`, `shard.count`): three exporters over one folder of real Spark logs
//! export every application exactly once between them, each with exactly the series the
//! unsharded exporter has for it; a shard count of 2 splits the same folder differently, still
//! without overlap. Bad shard settings exit 64; a StatefulSet pod takes its ordinal from
//! `HOSTNAME`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use support::command::exporter_command;
use support::exposition::parse_exposition;
use support::EXPORTER;

/// Every committed fixture log, side by side in one folder (17 applications).
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut logs: Vec<std::path::PathBuf> =
        vec![root.join("spark-4.1.1-basic/eventlog/eventlog_v2_local-1795981136444")];
    for fixture in std::fs::read_dir(root.join("eventlogs")).expect("fixtures") {
        for e in std::fs::read_dir(fixture.expect("entry").path()).expect("fixture") {
            let p = e.expect("entry").path();
            if p.file_name().is_some_and(|n| n != "counts.json") {
                logs.push(p);
            }
        }
    }
    for p in logs {
        let to = dir.path().join(p.file_name().expect("name"));
        if p.is_dir() {
            std::fs::create_dir(&to).expect("mkdir");
            for f in std::fs::read_dir(&p).expect("rolling") {
                let f = f.expect("part").path();
                std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
            }
        } else {
            std::fs::copy(&p, &to).expect("copy");
        }
    }
    dir
}

/// `app_id` -> its sample lines (application series only: the exporter's own metrics differ).
fn by_app(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in parse_exposition(text) {
        let app = s.label("app_id").to_string();
        if !app.is_empty() {
            out.entry(app)
                .or_default()
                .insert(format!("{} {}", s.id(), s.value));
        }
    }
    out
}

fn dump(
    dir: &std::path::Path,
    shard: Option<(usize, usize)>,
) -> BTreeMap<String, BTreeSet<String>> {
    let d = dir.to_str().expect("utf-8");
    let (i, n) = shard
        .map(|(i, n)| (i.to_string(), n.to_string()))
        .unwrap_or_default();
    let mut args = vec!["dump", "--spark.url=", "--event-log", d];
    if shard.is_some() {
        args.extend(["--shard.index", &i, "--shard.count", &n]);
    }
    let out = exporter_command(&args, Duration::from_secs(60));
    assert!(out.status.success(), "{args:?}: {}", out.stderr);
    by_app(&out.stdout)
}

#[test]
fn shards_export_every_application_exactly_once() {
    let dir = folder();
    let all = dump(dir.path(), None);
    assert_eq!(all.len(), 17, "one application per fixture log");
    for count in [3, 2] {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for index in 0..count {
            let part = dump(dir.path(), Some((index, count)));
            assert!(
                !part.is_empty() || count > 10,
                "shard {index}/{count} is empty"
            );
            for (app, series) in part {
                assert_eq!(
                    Some(&series),
                    all.get(&app),
                    "{app}: shard {index}/{count} differs"
                );
                *seen.entry(app).or_default() += 1;
            }
        }
        assert_eq!(
            seen.keys().collect::<Vec<_>>(),
            all.keys().collect::<Vec<_>>(),
            "{count} shards: the union is every application"
        );
        assert!(
            seen.values().all(|n| *n == 1),
            "{count} shards overlap: {seen:?}"
        );
    }
}

#[test]
fn bad_shard_settings_exit_64_and_a_statefulset_pod_takes_its_ordinal() {
    let check = |args: &[&str], host: Option<&str>| {
        let mut c = Command::new(EXPORTER);
        c.args(["check-config", "--format=json"]).args(args);
        match host {
            Some(h) => c.env("HOSTNAME", h),
            None => c.env_remove("HOSTNAME"),
        };
        c.output().expect("run")
    };
    let o = check(&["--shard.count", "3", "--shard.index", "3"], None);
    assert_eq!(o.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard.index: 3 is not below"));
    let o = check(&["--shard.count", "3"], None);
    assert_eq!(
        o.status.code(),
        Some(64),
        "no index and no StatefulSet name"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard.index: not set"));
    let o = check(&["--shard.count", "3"], Some("spark-exporter-fleet-2"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(cfg["shard"], serde_json::json!({"index": 2, "count": 3}));
}
