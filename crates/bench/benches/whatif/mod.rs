//! `diagnose-bench whatif [LOG...]`: the what-if simulation timed on its own (issue 51's target:
//! a 10,005-task log simulated in well under a second).
//!
//! Each log is read once into the record `diagnose` keeps for the what-if
//! (`spark_exporter::diagnose::recorded_runs`); then `whatif::predict` (the replay on the run's
//! own executors, every executor count from a quarter to four times its own, dynamic allocation)
//! runs [`RUNS`] times per application and the best and median count. By default: the 51 MB
//! benchmark log's 10,005 tasks put on two one-core executors (below: the log ran in local
//! mode, where only the replay applies), the TPC-H fixture and the what-if fixture. Exits 1
//! when an application's best is over [`LIMIT_MS`].

use std::path::{Path, PathBuf};
use std::time::Instant;

use spark_exporter::config::Settings;
use spark_exporter::diagnose::{recorded_runs, whatif};

/// Timed predictions per application.
const RUNS: usize = 20;
/// "Well under a second": a quarter of one, per application.
const LIMIT_MS: f64 = 250.0;

/// Time the what-if of every application in `logs` (default: see the module); prints a table.
pub fn bench(root: &Path, logs: Vec<PathBuf>) {
    let logs = if logs.is_empty() {
        vec![
            two_executors(root),
            root.join("tests/data/tpch-4.1.1/eventlog"),
            root.join("tests/data/whatif-4.1.1/eventlog"),
        ]
    } else {
        logs
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut over = vec![];
    println!("| log | application | tasks | simulations | best ms | median ms |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for log in &logs {
        let paths = vec![log.to_string_lossy().into_owned()];
        let runs = rt
            .block_on(recorded_runs(&Settings::default(), &paths))
            .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        for (id, record, props) in runs {
            let s = whatif::Settings {
                props: props.as_ref(),
                ..whatif::Settings::default()
            };
            let tasks: usize = record.stages.values().map(|s| s.tasks.len()).sum();
            let mut times = vec![];
            let mut sims = 0;
            for _ in 0..RUNS {
                let t = Instant::now();
                let w = whatif::predict(&record, &s);
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                // The replay, each fixed count and dynamic allocation.
                sims = w.map_or(0, |w| 1 + w.rows.len() + usize::from(w.dynamic.is_some()));
            }
            times.sort_by(f64::total_cmp);
            let name = log.strip_prefix(root).unwrap_or(log).display();
            println!(
                "| {name} | {id} | {tasks} | {sims} | {:.2} | {:.2} |",
                times[0],
                times[RUNS / 2]
            );
            if times[0] > LIMIT_MS {
                over.push(format!("{name} {id}"));
            }
        }
    }
    if over.is_empty() {
        println!("\ndiagnose-bench whatif: met (every application within {LIMIT_MS} ms)");
    } else {
        eprintln!(
            "diagnose-bench whatif: over {LIMIT_MS} ms: {}",
            over.join(", ")
        );
        std::process::exit(1);
    }
}

/// The benchmark log (`tests/data/bench/eventlog-10k-tasks.json.zst`, a real local-mode run on
/// two cores) with its tasks on two one-core executors instead of the driver, written once under
/// `target/diagnose-bench/`: each task keeps its launch and finish and goes to the first
/// executor free at its launch, so the record is the run's own, on executors.
fn two_executors(root: &Path) -> PathBuf {
    let out = root.join("target/diagnose-bench/eventlog-10k-tasks-2-executors.json");
    if out.exists() {
        return out;
    }
    let src = root.join("tests/data/bench/eventlog-10k-tasks.json.zst");
    let text = String::from_utf8(
        zstd::decode_all(&std::fs::read(&src).expect("the benchmark log")[..]).expect("zstd"),
    )
    .expect("utf-8");
    let mut events: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // Each task's slot: the first free at its launch (the run had two cores, so two suffice).
    let mut spans: Vec<(i64, i64, i64)> = events
        .iter()
        .filter(|e| e["Event"] == "SparkListenerTaskEnd")
        .map(|e| {
            let t = &e["Task Info"];
            let n = |k: &str| t[k].as_i64().unwrap_or(0);
            (n("Launch Time"), n("Finish Time"), n("Task ID"))
        })
        .collect();
    spans.sort_unstable();
    let mut free = [i64::MIN; 2];
    let mut slot = std::collections::HashMap::new();
    for (launch, finish, id) in spans {
        let i = (0..free.len())
            .find(|i| free[*i] <= launch)
            .unwrap_or_else(|| (0..free.len()).min_by_key(|i| free[*i]).unwrap_or(0));
        free[i] = finish;
        slot.insert(id, i + 1);
    }
    for e in &mut events {
        let kind = e["Event"].as_str().unwrap_or_default().to_string();
        if kind == "SparkListenerTaskStart" || kind == "SparkListenerTaskEnd" {
            let id = e["Task Info"]["Task ID"].as_i64().unwrap_or(0);
            let exec = slot.get(&id).copied().unwrap_or(1).to_string();
            e["Task Info"]["Executor ID"] = exec.into();
        }
    }
    let at = events
        .iter()
        .position(|e| e["Event"] == "SparkListenerExecutorAdded")
        .expect("the driver's executor event");
    let driver = events[at].clone();
    for n in ["1", "2"] {
        let mut x = driver.clone();
        x["Executor ID"] = n.into();
        x["Executor Info"]["Total Cores"] = 1.into();
        events.insert(at + 1, x);
    }
    let mut body = String::new();
    for e in &events {
        body.push_str(&e.to_string());
        body.push('\n');
    }
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("target/diagnose-bench");
    std::fs::write(&out, body).expect("write the log");
    out
}
