//! `spark-exporter diagnose --review` over a fleet made of the committed event logs (every
//! fixture of `tests/data/eventlogs` and the diagnosis run's three applications) plus renumbered
//! copies of those the tests can re-encode (plain and zstd), some under another application name:
//!
//! - the ranking equals the per-application reports (`diagnose` of each log on its own) summed
//!   by name and by (name, job group), per kind, computed here independently of the review's
//!   code; the worst runs are the runs whose costliest kind costs most;
//! - `--app-name`, `--job-group` and `--since` leave out what they should and nothing else;
//! - a corrupt log is skipped, counted and named, never stops the review;
//! - the JSON validates against the committed review schema;
//! - a History Server review equals its applications' REST reports summed.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::diagnose::report::{AppReport, Kind};
use spark_exporter::diagnose::review::{review, GroupRow, KindCost, Review, ReviewRequest};
use spark_exporter::diagnose::{diagnose, Request};
use support::command::exporter_command;

/// Per kind: findings and summed cost.
type Kinds = BTreeMap<Kind, (u64, f64)>;

/// What the review should say of a name or a (name, group): runs and per-kind sums.
#[derive(Debug, Default)]
struct Want {
    runs: u64,
    kinds: Kinds,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The committed logs a fleet is made of: files and `eventlog_v2_*` folders.
fn sources() -> Vec<PathBuf> {
    let mut out = vec![];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("tests/data/eventlogs"))
        .expect("fixtures")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.push(root().join("tests/data/diagnosis-4.1.1/eventlog"));
    dirs.sort();
    for d in dirs {
        for e in std::fs::read_dir(&d).expect("fixture").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("local-")
                || name.starts_with("app-")
                || name.starts_with("eventlog_v2_")
            {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The text of a plain or zstd log (a rolling folder's parts joined), or `None` for the codecs
/// the tests do not re-encode.
fn text_of(log: &Path) -> Option<String> {
    let files = if log.is_dir() {
        support::eventlog::rolling_parts(log)
    } else {
        vec![log.to_path_buf()]
    };
    let mut text = String::new();
    for f in files {
        let bytes = std::fs::read(&f).expect("log");
        let plain = match f.extension().and_then(|e| e.to_str()) {
            Some("zstd") => zstd::decode_all(&bytes[..]).expect("zstd"),
            None => bytes,
            Some(_) => return None,
        };
        text.push_str(&String::from_utf8(plain).expect("utf-8"));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Some(text)
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for e in std::fs::read_dir(from).expect("dir").flatten() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).expect("copy");
    }
}

/// A fleet folder: every committed log, and `copies` renumbered copies of each plain or zstd
/// one (as plain single-file logs named by their new id; every odd copy renamed
/// `<name>-nightly`). Returns the folder and its logs.
fn fleet(name: &str, copies: usize) -> (PathBuf, Vec<PathBuf>) {
    let dir = root()
        .join("target/tmp")
        .join(format!("review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("fleet dir");
    let mut logs = vec![];
    let mut n = 0u64;
    for src in sources() {
        let to = dir.join(src.file_name().unwrap());
        copy_tree(&src, &to);
        logs.push(to);
        let Some(text) = text_of(&src) else { continue };
        let start: serde_json::Value = text
            .lines()
            .find(|l| l.contains("\"SparkListenerApplicationStart\""))
            .map(|l| serde_json::from_str(l).expect("json"))
            .expect("an application start");
        let (id, app) = (
            start["App ID"].as_str().expect("id").to_string(),
            start["App Name"].as_str().expect("name").to_string(),
        );
        for k in 0..copies {
            n += 1;
            let new_id = format!("local-{:013}", 1_796_100_000_000u64 + n * 7919);
            let mut copy = text.replace(&id, &new_id);
            if k % 2 == 1 {
                copy = copy.replace(&format!("\"{app}\""), &format!("\"{app}-nightly\""));
            }
            let p = dir.join(&new_id);
            std::fs::write(&p, copy).expect("write the copy");
            logs.push(p);
        }
    }
    (dir, logs)
}

/// Each log diagnosed on its own (`diagnose`, in process).
async fn per_app(logs: &[PathBuf]) -> Vec<AppReport> {
    let mut out = vec![];
    for p in logs {
        let req = Request {
            event_logs: vec![p.to_string_lossy().into_owned()],
            ..Request::default()
        };
        let r = diagnose(&Settings::default(), &req)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(r.applications.len(), 1, "{}", p.display());
        out.extend(r.applications);
    }
    out
}

/// The per-application reports summed by name and by (name, group), findings of groups that
/// `group` keeps only (when given).
fn sums(
    apps: &[&AppReport],
    group: Option<&dyn Fn(&str) -> bool>,
) -> (BTreeMap<String, Want>, BTreeMap<(String, String), Want>) {
    let mut names: BTreeMap<String, Want> = BTreeMap::new();
    let mut groups: BTreeMap<(String, String), Want> = BTreeMap::new();
    for a in apps {
        let w = names.entry(a.app_name.clone()).or_default();
        w.runs += 1;
        let mut seen = std::collections::BTreeSet::new();
        for f in &a.findings {
            let g = f.at.job_group.as_deref();
            if let Some(keep) = group {
                if !g.is_some_and(keep) {
                    continue;
                }
            }
            let e = w.kinds.entry(f.kind).or_default();
            e.0 += 1;
            e.1 += f.cost_seconds;
            if let Some(g) = g {
                let gw = groups
                    .entry((a.app_name.clone(), g.to_string()))
                    .or_default();
                if seen.insert(g.to_string()) {
                    gw.runs += 1;
                }
                let e = gw.kinds.entry(f.kind).or_default();
                e.0 += 1;
                e.1 += f.cost_seconds;
            }
        }
    }
    (names, groups)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// `got`'s per-kind rows are `want`, costliest first.
fn same_kinds(got: &[KindCost], want: &Kinds, what: &str) {
    let g: BTreeMap<Kind, (u64, f64)> = got
        .iter()
        .map(|k| (k.kind, (k.findings, k.cost_seconds)))
        .collect();
    assert_eq!(
        g.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: kinds"
    );
    for (k, (n, c)) in want {
        let (gn, gc) = g[k];
        assert_eq!(gn, *n, "{what} {k:?}: findings");
        assert!(close(gc, *c), "{what} {k:?}: cost {gc} != {c}");
    }
    assert!(
        got.windows(2)
            .all(|w| w[0].cost_seconds >= w[1].cost_seconds),
        "{what}: costliest kind first"
    );
    for k in got {
        assert_eq!(k.unit, k.kind.rule().unit, "{what}");
    }
}

/// The costliest kind's cost: the ranking key.
fn top(k: &Kinds) -> f64 {
    k.values().map(|(_, c)| *c).fold(0.0, f64::max)
}

/// `r`'s rows are the sums of `apps` (each name and group once, ranked by their costliest
/// kind), and its worst runs the `n` runs whose costliest kind costs most.
fn assert_ranking(r: &Review, apps: &[&AppReport], group: Option<&dyn Fn(&str) -> bool>, n: usize) {
    let (names, groups) = sums(apps, group);
    let got: Vec<&str> = r.names.iter().map(|x| x.app_name.as_str()).collect();
    let mut want: Vec<&str> = names.keys().map(String::as_str).collect();
    want.sort_by(|a, b| top(&names[*b].kinds).total_cmp(&top(&names[*a].kinds)));
    assert_eq!(
        got.iter().collect::<std::collections::BTreeSet<_>>(),
        want.iter().collect(),
        "names"
    );
    for row in &r.names {
        let w = &names[&row.app_name];
        assert_eq!(row.runs, w.runs, "{}: runs", row.app_name);
        assert_eq!(
            row.findings,
            w.kinds.values().map(|(n, _)| n).sum::<u64>(),
            "{}",
            row.app_name
        );
        same_kinds(&row.kinds, &w.kinds, &row.app_name);
    }
    assert!(
        r.names
            .windows(2)
            .all(|w| top(&names[&w[0].app_name].kinds) >= top(&names[&w[1].app_name].kinds)),
        "names ranked by their costliest kind"
    );
    let got: std::collections::BTreeSet<(String, String)> = r
        .groups
        .iter()
        .map(|g| (g.app_name.clone(), g.job_group.clone()))
        .collect();
    assert_eq!(got, groups.keys().cloned().collect(), "groups");
    for row in &r.groups {
        let key = (row.app_name.clone(), row.job_group.clone());
        let w = &groups[&key];
        assert_eq!(row.runs, w.runs, "{key:?}: runs");
        same_kinds(&row.kinds, &w.kinds, &format!("{key:?}"));
    }
    assert!(
        r.groups.windows(2).all(|w| {
            let k = |g: &GroupRow| top(&groups[&(g.app_name.clone(), g.job_group.clone())].kinds);
            k(&w[0]) >= k(&w[1])
        }),
        "groups ranked by their costliest kind"
    );
    // The worst runs: by the costliest kind of each run, then by id.
    let mut runs: Vec<(f64, &str, &AppReport)> = apps
        .iter()
        .filter_map(|a| {
            let (one, _) = sums(&[*a], group);
            let k = &one[&a.app_name].kinds;
            (!k.is_empty()).then(|| (top(k), a.app_id.as_str(), *a))
        })
        .collect();
    runs.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(y.1)));
    let want: Vec<&str> = runs.iter().take(n).map(|r| r.1).collect();
    let got: Vec<&str> = r.worst_runs.iter().map(|r| r.app_id.as_str()).collect();
    assert_eq!(got, want, "worst runs");
    for run in &r.worst_runs {
        let (_, _, a) = runs.iter().find(|x| x.1 == run.app_id).unwrap();
        assert_eq!(run.app_name, a.app_name);
        assert!(run.top_findings.len() <= 3 && !run.top_findings.is_empty());
        let mut costs: Vec<f64> = a
            .findings
            .iter()
            .filter(|f| group.is_none_or(|keep| f.at.job_group.as_deref().is_some_and(keep)))
            .map(|f| f.cost_seconds)
            .collect();
        costs.sort_by(|x, y| y.total_cmp(x));
        let got: Vec<f64> = run.top_findings.iter().map(|f| f.cost_seconds).collect();
        assert_eq!(
            got,
            costs[..got.len()].to_vec(),
            "{}: its top findings",
            run.app_id
        );
    }
}

fn run_review(args: &[&str]) -> (Review, String) {
    let mut a = vec!["diagnose", "--review", "--format", "json"];
    a.extend_from_slice(args);
    let out = exporter_command(&a, Duration::from_secs(300));
    assert!(out.status.success(), "{args:?}: {}", out.stderr);
    let r: Review = serde_json::from_str(&out.stdout).expect("a review");
    assert_eq!(r.schema_version, 1);
    assert_eq!(r.document, "review");
    (r, out.stdout)
}

#[tokio::test]
async fn the_ranking_is_the_per_application_reports_summed_by_name_and_group() {
    let (dir, logs) = fleet("sums", 2);
    let apps = per_app(&logs).await;
    assert!(apps.len() >= 35, "{} applications", apps.len());
    let all: Vec<&AppReport> = apps.iter().collect();
    let (r, json) = run_review(&["--event-log", dir.to_str().unwrap(), "--top", "7"]);
    assert_eq!(r.counts.listed, logs.len() as u64);
    assert_eq!(r.counts.reviewed, apps.len() as u64);
    assert_eq!(
        (r.counts.failed, r.counts.filtered, r.counts.read_errors),
        (0, 0, 0)
    );
    assert!(r.names.len() >= 4, "several names: {:?}", r.names);
    assert!(r.groups.len() >= 5, "several groups");
    assert_ranking(&r, &all, None, 7);
    support::spark::assert_valid(
        "schemas/diagnose-review.v1.schema.json",
        &json,
        "the review",
    );
    // The text says the same, with the overlap caveat.
    let text = exporter_command(
        &["diagnose", "--review", "--event-log", dir.to_str().unwrap()],
        Duration::from_secs(300),
    );
    assert!(text.status.success(), "{}", text.stderr);
    assert!(text.stdout.contains("never add them up"), "{}", text.stdout);
    assert!(text.stdout.contains(&r.worst_runs[0].app_id));
    for n in &r.names {
        assert!(text.stdout.contains(&n.app_name));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn filters_leave_out_what_they_should_and_a_corrupt_log_is_skipped_and_counted() {
    let (dir, logs) = fleet("filters", 2);
    let apps = per_app(&logs).await;
    // Two corrupt logs: garbage named like a plain log, and a zstd log that is no zstd.
    let garbage = dir.join("local-1796199999999");
    std::fs::write(&garbage, b"\x00\x01 not an event log\n{{{\n").unwrap();
    let bad_zstd = dir.join("local-1796199999998.zstd");
    std::fs::write(&bad_zstd, b"definitely not zstd").unwrap();
    let d = dir.to_str().unwrap();

    // No filter: the corrupt logs are counted and named, the rest reviewed.
    let (r, _) = run_review(&["--event-log", d]);
    assert_eq!(r.counts.listed, logs.len() as u64 + 2);
    assert_eq!(r.counts.reviewed, apps.len() as u64);
    assert_eq!(r.counts.failed, 2, "{:?}", r.failures);
    let named: Vec<&str> = r.failures.iter().map(|f| f.input.as_str()).collect();
    for bad in [&garbage, &bad_zstd] {
        assert!(
            named
                .iter()
                .any(|n| n.ends_with(bad.file_name().unwrap().to_str().unwrap())),
            "{named:?}"
        );
    }
    let all: Vec<&AppReport> = apps.iter().collect();
    assert_ranking(&r, &all, None, 10);

    // --app-name: the names it matches, every run of them.
    let (r, _) = run_review(&["--event-log", d, "--app-name", "^diagnosis-(idle|busy)"]);
    let kept: Vec<&AppReport> = apps
        .iter()
        .filter(|a| {
            a.app_name.starts_with("diagnosis-idle") || a.app_name.starts_with("diagnosis-busy")
        })
        .collect();
    assert!(kept.len() >= 4);
    assert_eq!(r.counts.reviewed, kept.len() as u64);
    assert_eq!(r.counts.filtered, (apps.len() - kept.len()) as u64);
    assert_eq!(r.counts.failed, 2);
    assert_ranking(&r, &kept, None, 10);

    // --job-group: the findings of matching groups only; every run still counted.
    let (r, _) = run_review(&["--event-log", d, "--job-group", "^(skew|spill)"]);
    let keep = |g: &str| g.starts_with("skew") || g.starts_with("spill");
    assert_eq!(r.counts.reviewed, apps.len() as u64);
    assert!(r.groups.iter().all(|g| keep(&g.job_group)) && !r.groups.is_empty());
    assert_ranking(&r, &all, Some(&keep), 10);

    // --since a time: the applications that ended then or later (the logs are all new files,
    // so the applications' own end times decide).
    let mut ends: Vec<i64> = apps.iter().filter_map(|a| a.end_ms).collect();
    ends.sort();
    ends.dedup();
    let cut = ends[ends.len() / 2];
    let since =
        humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(cut as u64))
            .to_string();
    let (r, _) = run_review(&["--event-log", d, "--since", &since]);
    let kept: Vec<&AppReport> = apps
        .iter()
        .filter(|a| a.end_ms.is_none_or(|e| e >= cut))
        .collect();
    assert!(kept.len() < apps.len() && !kept.is_empty());
    assert_eq!(r.source.since_ms, Some(cut));
    assert_eq!(r.counts.reviewed, kept.len() as u64);
    assert_ranking(&r, &kept, None, 10);
    // A duration back from now: every log was written just now, every application ended
    // long before: all left out.
    let (r, _) = run_review(&["--event-log", d, "--since", "1h"]);
    assert_eq!(r.counts.reviewed, 0);
    assert!(r.names.is_empty() && r.worst_runs.is_empty());

    // The review's flags without --review, and bad ones, exit 64 naming each.
    let out = exporter_command(
        &["diagnose", "--event-log", d, "--since", "1d"],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(64), "{}", out.stderr);
    assert!(out.stderr.contains("--review"), "{}", out.stderr);
    let out = exporter_command(
        &[
            "diagnose",
            "--review",
            "--event-log",
            d,
            "--since",
            "yesterday",
            "--app-name",
            "(",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(64), "{}", out.stderr);
    assert!(
        out.stderr.contains("--since") && out.stderr.contains("--app-name"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_history_server_review_is_its_applications_rest_reports_summed() {
    let server = support::diagnosis::replay().await;
    let mut apps = vec![];
    for id in support::diagnosis::apps() {
        let req = Request {
            spark_url: Some(server.url.clone()),
            app_id: Some(id.clone()),
            ..Request::default()
        };
        let mut r = diagnose(&Settings::default(), &req)
            .await
            .expect("REST report");
        apps.push(r.applications.pop().expect("one"));
    }
    let req = ReviewRequest {
        spark_url: Some(server.url.clone()),
        top: 10,
        ..ReviewRequest::default()
    };
    let r = review(&Settings::default(), &req).await.expect("review");
    assert_eq!(r.source.kind, "rest");
    assert_eq!(
        (r.counts.listed, r.counts.reviewed, r.counts.failed),
        (3, 3, 0)
    );
    let all: Vec<&AppReport> = apps.iter().collect();
    assert_ranking(&r, &all, None, 10);
    // A name filter is applied to the listing: the others are not read.
    let req = ReviewRequest {
        app_name: Some(regex::Regex::new("^diagnosis$").unwrap()),
        ..req
    };
    let r = review(&Settings::default(), &req).await.expect("review");
    assert_eq!((r.counts.reviewed, r.counts.filtered), (1, 2));
    let one: Vec<&AppReport> = apps.iter().filter(|a| a.app_name == "diagnosis").collect();
    assert_ranking(&r, &one, None, 10);
}

/// A priced review's exporter output (`--config.file` with `cost`), parsed.
fn priced_review(config: &Path, dir: &Path, format: &str) -> String {
    let out = exporter_command(
        &[
            "--config.file",
            config.to_str().unwrap(),
            "diagnose",
            "--review",
            "--event-log",
            dir.to_str().unwrap(),
            "--format",
            format,
        ],
        Duration::from_secs(300),
    );
    assert!(out.status.success(), "{}", out.stderr);
    out.stdout
}

/// With prices (`cost`), every cost carries its money: each finding's cost times its
/// application's core-hour price / 3600 (the fixtures leave `spark.task.cpus` at 1), the price
/// chosen by `cost.property`'s value and in effect at the application's end; names are ranked
/// by their costliest kind's money; an application no price applies to is counted, with no
/// money. The HTML page of the same review opens in headless Chromium with its charts drawn,
/// fits a laptop's window and prints (`tests/review_page.py`).
#[tokio::test]
async fn priced_costs_carry_their_money_and_the_page_draws_its_charts() {
    let (dir, logs) = fleet("money", 1);
    let apps = per_app(&logs).await;
    // 0.001 a core-second, 0.002 for the applications named "diagnosis", and an entry that is
    // not in effect yet (a later `since` never reprices what ended before it).
    let config = dir.with_extension("prices.yaml");
    std::fs::write(
        &config,
        "cost:\n  currency: EUR\n  property: spark.app.name\n  prices:\n\
         \x20   - {core_hour: 3.6, gib_hour: 0.5}\n\
         \x20   - {core_hour: 100, gib_hour: 1, since: \"2099-01-01T00:00:00Z\"}\n\
         \x20   - {core_hour: 7.2, gib_hour: 0.5, value: diagnosis}\n",
    )
    .unwrap();
    let rate = |name: &str| if name == "diagnosis" { 0.002 } else { 0.001 };
    let r: Review = serde_json::from_str(&priced_review(&config, &dir, "json")).expect("review");
    assert_eq!(r.currency.as_deref(), Some("EUR"));
    assert_eq!(
        (r.counts.reviewed, r.counts.unpriced),
        (apps.len() as u64, 0)
    );
    let mut money: BTreeMap<(String, Kind), f64> = BTreeMap::new();
    for a in &apps {
        for f in &a.findings {
            *money.entry((a.app_name.clone(), f.kind)).or_default() +=
                f.cost_seconds * rate(&a.app_name);
        }
    }
    assert!(money.keys().any(|(n, _)| n == "diagnosis") && money.len() >= 5);
    for row in &r.names {
        for k in &row.kinds {
            let want = money[&(row.app_name.clone(), k.kind)];
            let got = k.money.expect("a priced review's money");
            assert!(
                close(got, want),
                "{} {:?}: {got} != {want}",
                row.app_name,
                k.kind
            );
        }
    }
    let key = |k: &[KindCost]| k.first().map_or(0.0, |k| k.money.unwrap());
    assert!(
        r.names
            .windows(2)
            .all(|w| key(&w[0].kinds) >= key(&w[1].kinds)),
        "names ranked by their costliest kind's money"
    );
    for run in &r.worst_runs {
        for f in &run.top_findings {
            let want = f.cost_seconds * rate(&run.app_name);
            assert!(close(f.money.unwrap(), want), "{}: {f:?}", run.app_id);
        }
        assert!(!run.stages.is_empty(), "{}: its timeline", run.app_id);
        assert!(run
            .stages
            .windows(2)
            .all(|w| w[0].start_ms <= w[1].start_ms));
    }
    let text = priced_review(&config, &dir, "text");
    assert!(
        text.contains("Money in EUR") && text.contains("money"),
        "{text}"
    );

    // Only the "diagnosis" applications have a price: the others are counted, without money.
    std::fs::write(
        &config,
        "cost:\n  currency: EUR\n  property: spark.app.name\n  prices:\n\
         \x20   - {core_hour: 7.2, gib_hour: 0.5, value: diagnosis}\n",
    )
    .unwrap();
    let r: Review = serde_json::from_str(&priced_review(&config, &dir, "json")).expect("review");
    let others = apps.iter().filter(|a| a.app_name != "diagnosis").count();
    assert!(others > 0 && others < apps.len());
    assert_eq!(r.counts.unpriced, others as u64);
    for row in r.names.iter().filter(|n| n.app_name != "diagnosis") {
        assert!(row.kinds.iter().all(|k| k.money == Some(0.0)), "{row:?}");
    }

    // The page, as Chromium draws it.
    let page = dir.with_extension("review.html");
    std::fs::write(&page, priced_review(&config, &dir, "html")).unwrap();
    if support::spark::which("chromium").is_none() {
        support::spark::skip_unless_required("the review page: no chromium on PATH");
    } else {
        let (ok, so) = support::spark::check_page(&page, &["--what-if"]);
        assert!(ok, "{so}");
        assert!(so.contains("\"timeline / time\""), "{so}");
        // The worst run's what-if, its cost in the review's currency.
        assert!(so.contains("\"what-if-cost / EUR\""), "{so}");
    }
    let _ = std::fs::remove_file(&config);
    let _ = std::fs::remove_file(&page);
    let _ = std::fs::remove_dir_all(&dir);
}
