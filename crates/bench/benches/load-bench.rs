//! Scrape-load and cardinality bench: fills a real [`Model`] to the scale of a large application
//! through the same calls the sources make, serves it with the real server, and measures.
//!
//! Modes (one per process, so the RSS read from `/proc` belongs to one role):
//! - `serve`: fill, print the shape (series, body bytes, one render's time), then serve with
//!   [`server::bind`] + [`server::serve`] as `main.rs` does until SIGINT/SIGTERM, while a task
//!   keeps changing the model like a REST poller (`--churn-ms`). Load it with `wrk`
//!   (`scripts/load-bench.sh`) or with the `scrape` mode.
//! - `render`: fill, then time each part of one scrape in-process (build the families, encode
//!   OpenMetrics, the classic format, straight into gzip as the server's renderer does).
//! - `scrape`: `--connections` concurrent keep-alive clients against `--url` for `--secs`,
//!   closed loop (`--interval-ms 0`) or one scrape per client per interval; prints latency
//!   percentiles and errors.
//! - `bomb`: `--descriptions` distinct job descriptions (words, no digits) into one application;
//!   prints RSS before and after and what was folded into `__other__`.
//!
//! A `harness = false` bench target, not part of the shipped crate: `scripts/load-bench.sh` runs
//! it (BENCHMARKS.md), or `cargo bench -p spark-exporter-bench --bench load-bench -- MODE
//! [OPTIONS]`.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use spark_exporter::config::Settings;
use spark_exporter::export::families::collect;
use spark_exporter::model::*;
use spark_exporter::server;
use spark_exporter::sinks::prometheus;
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::telemetry::Telemetry;
use tokio_util::sync::CancellationToken;

/// Counts the bytes the process holds on the heap (to tell the model's size from the
/// allocator's retained pages in RSS); the cost is two relaxed atomic adds per allocation.
struct Counting;

static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        let live = LIVE.fetch_add(l.size() as u64, Ordering::Relaxed) + l.size() as u64;
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: same layout as asked.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        LIVE.fetch_sub(l.size() as u64, Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` with this layout.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new: usize) -> *mut u8 {
        let live = if new >= l.size() {
            LIVE.fetch_add((new - l.size()) as u64, Ordering::Relaxed) + (new - l.size()) as u64
        } else {
            LIVE.fetch_sub((l.size() - new) as u64, Ordering::Relaxed) - (l.size() - new) as u64
        };
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { std::alloc::System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes held now and at most so far, in MiB.
fn heap_mib() -> (f64, f64) {
    let m = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
    (m(&LIVE), m(&PEAK))
}

/// The application every mode fills.
const APP_ID: &str = "spark-5f0c3a8d2e0b4e1c9a7e3b2d1c0f9e8a";

/// Words for group names and descriptions: no digits, so the default rewrite rules (numbers,
/// dates, hex) leave them alone and every combination is its own label value.
const WORDS: [&str; 64] = [
    "orders",
    "customers",
    "revenue",
    "refunds",
    "ledger",
    "invoices",
    "payments",
    "carts",
    "sessions",
    "clicks",
    "ratings",
    "reviews",
    "stock",
    "prices",
    "shipments",
    "returns",
    "vendors",
    "regions",
    "stores",
    "coupons",
    "loyalty",
    "churn",
    "fraud",
    "risk",
    "margin",
    "forecast",
    "budget",
    "payroll",
    "tickets",
    "alerts",
    "devices",
    "sensors",
    "routes",
    "drivers",
    "fleet",
    "weather",
    "tariffs",
    "claims",
    "policies",
    "quotes",
    "leads",
    "accounts",
    "contracts",
    "partners",
    "catalog",
    "search",
    "profiles",
    "segments",
    "campaigns",
    "emails",
    "surveys",
    "audits",
    "balances",
    "transfers",
    "loans",
    "rates",
    "metrics",
    "events",
    "logs",
    "traces",
    "users",
    "teams",
    "projects",
    "assets",
];

/// `peakMemoryMetrics` keys of a Spark 3.5 / 4.x executor (the model keeps the `...Memory` ones).
const PEAK_KEYS: [&str; 23] = [
    "JVMHeapMemory",
    "JVMOffHeapMemory",
    "OnHeapExecutionMemory",
    "OffHeapExecutionMemory",
    "OnHeapStorageMemory",
    "OffHeapStorageMemory",
    "OnHeapUnifiedMemory",
    "OffHeapUnifiedMemory",
    "DirectPoolMemory",
    "MappedPoolMemory",
    "ProcessTreeJVMVMemory",
    "ProcessTreeJVMRSSMemory",
    "ProcessTreePythonVMemory",
    "ProcessTreePythonRSSMemory",
    "ProcessTreeOtherVMemory",
    "ProcessTreeOtherRSSMemory",
    "MinorGCCount",
    "MinorGCTime",
    "MajorGCCount",
    "MajorGCTime",
    "TotalGCTime",
    "ConcurrentGCCount",
    "ConcurrentGCTime",
];

#[derive(Parser)]
#[command(about = "Scrape-load and cardinality bench for spark-exporter")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

/// Scale of the filled application.
#[derive(clap::Args, Clone, Copy)]
struct Scale {
    /// Stage attempts retained (active or finished within the retention window).
    #[arg(long, default_value_t = 2000)]
    stages: u64,
    /// Executors (the driver comes on top).
    #[arg(long, default_value_t = 500)]
    executors: u64,
    /// Job groups, each with its own description.
    #[arg(long, default_value_t = 200)]
    groups: u64,
    /// Finished jobs per group whose stages have already retired into the group counters.
    #[arg(long, default_value_t = 20)]
    history: u64,
    /// Task-end events per stage (event-log source; fills the task-duration histograms).
    #[arg(long, default_value_t = 20)]
    tasks_per_stage: u64,
}

#[derive(Subcommand)]
enum Mode {
    /// Fill the model and serve it with the real server until SIGINT/SIGTERM.
    Serve {
        #[command(flatten)]
        scale: Scale,
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:9899")]
        addr: SocketAddr,
        /// Re-apply the active stages and executors this often, as a REST poller does (0: never).
        #[arg(long, default_value_t = 5000)]
        churn_ms: u64,
        /// The server's `web.max_staleness`, in ms.
        #[arg(long, default_value_t = 1000)]
        max_staleness_ms: u64,
    },
    /// Fill the model and time the parts of one scrape in-process.
    Render {
        #[command(flatten)]
        scale: Scale,
        /// Renders per measurement.
        #[arg(long, default_value_t = 20)]
        iters: u32,
        /// Write one OpenMetrics body here.
        #[arg(long)]
        dump: Option<std::path::PathBuf>,
        /// Only render with the real code path (`openmetrics` or `classic`), for profilers.
        #[arg(long)]
        only: Option<String>,
    },
    /// Concurrent scrapers against a URL.
    Scrape {
        /// URL to GET.
        #[arg(long, default_value = "http://127.0.0.1:9899/metrics")]
        url: String,
        /// Concurrent clients (each on its own keep-alive connection).
        #[arg(long, default_value_t = 100)]
        connections: usize,
        /// Test length, seconds.
        #[arg(long, default_value_t = 60)]
        secs: u64,
        /// Time between one client's scrapes (0: next scrape as soon as the last one ends).
        #[arg(long, default_value_t = 0)]
        interval_ms: u64,
        /// Offer gzip (`Accept-Encoding: gzip`), as Prometheus does. Each client unpacks and
        /// checks its first body only (unpacking every one would load the shared cores).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        gzip: bool,
    },
    /// Distinct job descriptions into one application; RSS before and after.
    Bomb {
        /// Distinct descriptions (one job each).
        #[arg(long, default_value_t = 100_000)]
        descriptions: u64,
    },
}

/// `VmHWM` and `VmRSS` of this process, MiB.
fn rss_mib() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (get("VmHWM:"), get("VmRSS:"))
}

/// Label-safe name for `i`: words only, distinct for distinct `i`.
fn words(mut i: u64, n: usize) -> String {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(WORDS[(i % 64) as usize]);
        i /= 64;
    }
    out.join(" ")
}

/// A model clock the bench can move forward (to age stages past their retention).
struct Clock(AtomicI64);

impl Clock {
    fn now(&self) -> EpochMs {
        system_now_ms() + self.0.load(Ordering::Relaxed)
    }
    fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::Relaxed);
    }
}

fn totals(tasks: u64, k: u64) -> TaskTotals {
    TaskTotals {
        run_time_ms: tasks * 1_800 + k,
        cpu_time_ns: tasks * 1_500_000_000 + k,
        gc_time_ms: tasks * 40,
        input_bytes: (tasks * 64) << 20,
        output_bytes: (tasks * 8) << 20,
        shuffle_read_bytes: (tasks * 16) << 20,
        shuffle_write_bytes: (tasks * 16) << 20,
        memory_spilled_bytes: (k % 7) << 20,
        disk_spilled_bytes: (k % 5) << 20,
        ..Default::default()
    }
}

struct Filler {
    model: Arc<Model>,
    clock: Arc<Clock>,
    scale: Scale,
    next_job: u64,
    next_stage: u64,
    next_task: u64,
}

impl Filler {
    fn group(&self, g: u64) -> (String, String) {
        (
            format!("etl {}", words(g, 2)),
            format!("Load {} into the {}", words(g, 2), words(g * 7 + 3, 2)),
        )
    }

    fn job(&mut self, g: u64, status: JobStatus, stage_ids: &[u64]) -> u64 {
        let (group, desc) = self.group(g);
        let now = self.clock.now();
        let job = JobObs {
            job_id: self.next_job,
            job_group: Some(group),
            description: Some(desc),
            status,
            submission_ms: Some(now - 60_000),
            completion_ms: status
                .is_terminal()
                .then_some(now - ((g % 50) * 1000) as i64),
            stage_ids: stage_ids.to_vec(),
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        };
        self.model
            .observer(spark_exporter::sources::source("rest"))
            .upsert_job(APP_ID, &job);
        self.next_job += 1;
        job.job_id
    }

    fn stage(&self, id: u64, status: StageStatus, g: u64, tasks_done: u64) {
        let now = self.clock.now();
        let obs = StageObs {
            stage_id: id,
            attempt: 0,
            status,
            name: Some(format!(
                "{} at {}.py:{}",
                WORDS[(id % 64) as usize],
                "job",
                10
            )),
            job_group: None,
            description: Some(self.group(g).1),
            num_tasks: Some(200),
            active_tasks: Some(if status == StageStatus::Active { 16 } else { 0 }),
            submission_ms: Some(now - 30_000),
            completion_ms: status.is_terminal().then_some(now - 1_000),
            task_counts: Some(TaskCounts {
                succeeded: tasks_done,
                failed: id % 3,
                killed: 0,
            }),
            totals: Some(totals(tasks_done, id)),
        };
        self.model
            .observer(spark_exporter::sources::source("rest"))
            .upsert_stage(APP_ID, &obs);
    }

    fn tasks(&mut self, stage: u64) {
        let now = self.clock.now();
        for i in 0..self.scale.tasks_per_stage {
            let t = TaskEndObs {
                stage_id: stage,
                attempt: 0,
                task_id: self.next_task,
                executor_id: (self.next_task % self.scale.executors.max(1)).to_string(),
                outcome: if i % 97 == 0 {
                    TaskOutcome::Failed
                } else {
                    TaskOutcome::Succeeded
                },
                launch_ms: now - 5_000 - (i as i64 * 37) % 4_000,
                finish_ms: now,
                metrics: totals(1, i),
                locality: None,
            };
            self.model
                .observer(spark_exporter::sources::source("event_log"))
                .task_end(APP_ID, &t);
            self.next_task += 1;
        }
    }

    /// One job of `per_job` stages in group `g`, run to its end (or left running with its
    /// first stage active).
    fn run_job(&mut self, g: u64, per_job: u64, finish: bool) {
        let ids: Vec<u64> = (self.next_stage..self.next_stage + per_job).collect();
        self.next_stage += per_job;
        let id = self.job(g, JobStatus::Running, &ids);
        for (k, s) in ids.iter().enumerate() {
            self.stage(*s, StageStatus::Active, g, 50);
            self.tasks(*s);
            if finish || k + 1 < ids.len() {
                self.stage(*s, StageStatus::Complete, g, 200);
                self.model
                    .observer(spark_exporter::sources::source("rest"))
                    .set_task_summary(
                        APP_ID,
                        *s,
                        0,
                        TaskSummaryObs {
                            median_ms: 900.0,
                            max_ms: 900.0 + (*s % 40) as f64 * 100.0,
                            ended: true,
                            of_duration: true,
                        },
                    );
            }
        }
        if finish {
            let status = if id.is_multiple_of(23) {
                JobStatus::Failed
            } else {
                JobStatus::Succeeded
            };
            self.next_job -= 1;
            self.job(g, status, &ids);
        }
    }

    fn executors(&self, churn: u64) {
        let now = self.clock.now();
        for e in 0..=self.scale.executors {
            let id = if e == self.scale.executors {
                "driver".to_string()
            } else {
                e.to_string()
            };
            let dead = e % 25 == 24;
            let obs = ExecutorObs {
                executor_id: id,
                active: Some(!dead),
                remove_reason: dead.then(|| "Executor decommission.".to_string()),
                add_ms: Some(now - 3_600_000),
                remove_ms: dead.then_some(now - 60_000),
                max_tasks: Some(4),
                total_cores: Some(4),
                active_tasks: Some(if dead { 0 } else { 3 }),
                completed_tasks: Some(1_000 + churn),
                failed_tasks: Some(e % 4),
                task_time_ms: Some(3_600_000 + churn),
                gc_time_ms: Some(60_000),
                input_bytes: Some(10 << 30),
                shuffle_read_bytes: Some(2 << 30),
                shuffle_write_bytes: Some(2 << 30),
                storage_memory_used_bytes: Some(512 << 20),
                max_memory_bytes: Some(8 << 30),
                disk_used_bytes: Some(0),
                peak_memory: PEAK_KEYS
                    .iter()
                    .map(|k| (k.to_string(), (4 << 30) + churn))
                    .collect(),
                resource_profile_id: Some(0),
            };
            self.model
                .observer(spark_exporter::sources::source("rest"))
                .upsert_executor(APP_ID, &obs);
        }
    }

    /// History that has retired, then the retained stages; returns the active stage ids.
    fn fill(&mut self) -> Vec<(u64, u64)> {
        let s = self.scale;
        let now = self.clock.now();
        self.model
            .observer(spark_exporter::sources::source("rest"))
            .upsert_app(&AppObs {
                app_id: APP_ID.into(),
                name: Some("nightly warehouse load".into()),
                spark_version: Some("4.1.1".into()),
                user: Some("spark".into()),
                start_ms: Some(now - 3 * 3_600_000),
                end_ms: None,
                exit_code: None,
            });
        self.executors(0);
        // Finished jobs whose stages have since retired into their group's counters.
        for _ in 0..s.history {
            for g in 0..s.groups {
                self.run_job(g, 3, true);
            }
        }
        self.clock.advance(3_600_000);
        self.model.expire(self.clock.now());
        // Retained: per group, finished jobs of three stages, and one running job whose last
        // stage is active, `stages` in all.
        let per_group = (s.stages / s.groups.max(1)).max(1);
        let mut active = vec![];
        for g in 0..s.groups {
            let mut left = per_group;
            while left > 3 {
                self.run_job(g, 3, true);
                left -= 3;
            }
            let first = self.next_stage;
            self.run_job(g, left, false);
            active.push((first + left - 1, g));
        }
        // SQL executions with their own descriptions.
        for q in 0..200u64 {
            self.model
                .observer(spark_exporter::sources::source("rest"))
                .upsert_sql(
                    APP_ID,
                    &SqlObs {
                        execution_id: q,
                        description: Some(format!("select {} from warehouse", words(q % 50, 2))),
                        status: if q % 10 == 9 {
                            SqlStatus::Running
                        } else {
                            SqlStatus::Completed
                        },
                        submission_ms: Some(now),
                        duration_ms: Some(1_000 + q * 50),
                        job_ids: vec![],
                    },
                );
        }
        active
    }
}

/// The filled model, its settings, its clock and the active `(stage, group)` pairs.
type Built = (Arc<Model>, Arc<Settings>, Arc<Clock>, Vec<(u64, u64)>);

fn build(scale: Scale) -> Built {
    let mut settings = Settings::default();
    SparkConfig::of_mut(&mut settings).urls.clear();
    let clock = Arc::new(Clock(AtomicI64::new(0)));
    let c = clock.clone();
    let model = Model::with_clock(
        &settings,
        Arc::new(Telemetry::default()),
        Arc::new(move || c.now()),
    );
    let mut f = Filler {
        model: model.clone(),
        clock: clock.clone(),
        scale,
        next_job: 0,
        next_stage: 0,
        next_task: 0,
    };
    let t = Instant::now();
    let active = f.fill();
    let (hwm, rss) = rss_mib();
    let retained = model.view(|v| v.apps().map(|a| a.stage_count()).sum::<usize>());
    eprintln!(
        "filled in {:.1}s: stages_retained={retained} active_stages={} executors={} groups={} \
         jobs={} task_ends={} rss_mib={rss:.1} hwm_mib={hwm:.1} heap_mib={:.1}",
        t.elapsed().as_secs_f64(),
        active.len(),
        scale.executors,
        scale.groups,
        f.next_job,
        f.next_task,
        heap_mib().0,
    );
    (model, Arc::new(settings), clock, active)
}

/// Counts bytes and lines written to it, keeping none (so describing the exposition does not
/// leave a 7.5 MB string's worth of freed memory in the process whose RSS is measured).
#[derive(Default)]
struct Count {
    bytes: u64,
    lines: u64,
    comments: u64,
    at_line_start: bool,
}

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            if self.at_line_start && b == b'#' {
                self.comments += 1;
            }
            self.at_line_start = b == b'\n';
            self.lines += u64::from(self.at_line_start);
        }
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn describe(model: &Arc<Model>) {
    let series: usize = collect(model).iter().map(|f| f.samples.len()).sum();
    let reg = prometheus::registry(model.clone());
    let count = |om| {
        let mut c = Count {
            at_line_start: true,
            ..Count::default()
        };
        let t = Instant::now();
        let _ = prometheus::write(&reg, om, &mut c);
        (c, t.elapsed())
    };
    let (om, one) = count(true);
    let (classic, _) = count(false);
    eprintln!(
        "exposition: families={} series={series} lines={} openmetrics_bytes={} classic_bytes={} \
         one_render_ms={:.1}",
        classic.comments / 2,
        om.lines - om.comments,
        om.bytes,
        classic.bytes,
        one.as_secs_f64() * 1e3,
    );
}

/// Keeps the model changing while it is scraped: what one REST poll does every interval.
async fn churn(model: Arc<Model>, clock: Arc<Clock>, active: Vec<(u64, u64)>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    let mut n = 0u64;
    loop {
        tick.tick().await;
        n += 1;
        let f = Filler {
            model: model.clone(),
            clock: clock.clone(),
            scale: Scale {
                stages: 0,
                executors: 500,
                groups: 0,
                history: 0,
                tasks_per_stage: 0,
            },
            next_job: 0,
            next_stage: 0,
            next_task: 0,
        };
        for (s, g) in &active {
            f.stage(*s, StageStatus::Active, *g, 50 + n);
        }
        f.executors(n);
    }
}

fn time_ms(iters: u32, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut n = 0;
    let t = Instant::now();
    for _ in 0..iters {
        n = std::hint::black_box(f());
    }
    (t.elapsed().as_secs_f64() * 1e3 / f64::from(iters), n)
}

fn render_mode(scale: Scale, iters: u32, dump: Option<std::path::PathBuf>, only: Option<String>) {
    let (model, _, _, _) = build(scale);
    let reg = prometheus::registry(model.clone());
    if let Some(format) = only {
        let om = format == "openmetrics";
        let (ms, _) = time_ms(iters, || {
            prometheus::render(&reg, om).map_or(0, |s| s.len())
        });
        println!("render: {format}_ms={ms:.2}");
        return;
    }
    describe(&model);
    if let Some(p) = dump {
        let _ = std::fs::write(p, prometheus::render(&reg, true).unwrap_or_default());
    }
    let (lock_ms, _) = time_ms(iters, || {
        model.view(|v| v.apps().map(|a| a.stage_count()).sum())
    });
    let (before, _) = heap_mib();
    let fams = collect(&model);
    let families_mib = heap_mib().0 - before;
    drop(fams);
    let (collect_ms, _) = time_ms(iters, || collect(&model).len());
    let (om_ms, om_len) = time_ms(iters, || {
        prometheus::render(&reg, true).map_or(0, |s| s.len())
    });
    let (classic_ms, _) = time_ms(iters, || {
        prometheus::render(&reg, false).map_or(0, |s| s.len())
    });
    // What the server's renderer does: encode straight into gzip.
    let gz = |om: bool, level: u32| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        let _ = prometheus::write(&reg, om, &mut e);
        e.finish().map_or(0, |v| v.len())
    };
    let (gz1_ms, gz1_len) = time_ms(iters, || gz(true, 1));
    let (gz1_classic_ms, _) = time_ms(iters, || gz(false, 1));
    let (gz6_ms, gz6_len) = time_ms(iters, || gz(true, 6));
    let (hwm, rss) = rss_mib();
    println!(
        "render: collect_ms={collect_ms:.2} openmetrics_ms={om_ms:.2} classic_ms={classic_ms:.2} \
         gzip1_openmetrics_ms={gz1_ms:.2} gzip1_classic_ms={gz1_classic_ms:.2} \
         gzip6_openmetrics_ms={gz6_ms:.2} lock_only_ms={lock_ms:.4} openmetrics_bytes={om_len} \
         gzip1_bytes={gz1_len} gzip6_bytes={gz6_len} families_heap_mib={families_mib:.1} \
         rss_mib={rss:.1} hwm_mib={hwm:.1}"
    );
}

async fn serve_mode(scale: Scale, addr: SocketAddr, churn_ms: u64, max_staleness_ms: u64) {
    let (model, settings, clock, active) = build(scale);
    describe(&model);
    let mut settings = (*settings).clone();
    settings.web.listen_address = addr;
    settings.web.max_staleness = Duration::from_millis(max_staleness_ms);
    let settings = Arc::new(settings);
    let listener = match server::bind(&settings).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("load-bench: {e}");
            std::process::exit(1);
        }
    };
    let shutdown = CancellationToken::new();
    if churn_ms > 0 {
        tokio::spawn(churn(
            model.clone(),
            clock,
            active,
            Duration::from_millis(churn_ms),
        ));
    }
    let handles = server::Handles {
        settings,
        model: model.clone(),
        health: Arc::default(),
        security: Arc::new(spark_exporter::webconfig::WebSecurity::open()),
        lifecycle: Arc::new(spark_exporter::lifecycle::Lifecycle::default()),
    };
    let srv = tokio::spawn(server::serve(
        listener,
        handles,
        shutdown.clone(),
        Duration::from_secs(2),
    ));
    let (hwm, rss) = rss_mib();
    println!(
        "serving http://{addr}/metrics pid={} rss_mib={rss:.1} hwm_mib={hwm:.1}",
        std::process::id()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {},
        _ = tokio::signal::ctrl_c() => {},
    }
    shutdown.cancel();
    let _ = srv.await;
    let (hwm, rss) = rss_mib();
    println!("stopped rss_mib={rss:.1} hwm_mib={hwm:.1}");
}

async fn scrape_mode(url: String, connections: usize, secs: u64, interval_ms: u64, gzip: bool) {
    let errors = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..connections {
        let (url, errors, bytes) = (url.clone(), errors.clone(), bytes.clone());
        tasks.spawn(async move {
            let http = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .expect("client");
            let mut lat = vec![];
            // Spread the clients over one interval, as independent scrapers would be.
            if interval_ms > 0 {
                let off = interval_ms * i as u64 / connections as u64;
                tokio::time::sleep(Duration::from_millis(off)).await;
            }
            let mut tick = tokio::time::interval(Duration::from_millis(interval_ms.max(1)));
            while Instant::now() < deadline {
                if interval_ms > 0 {
                    tick.tick().await;
                }
                let t = Instant::now();
                let mut req = http.get(&url);
                if gzip {
                    req = req.header("accept-encoding", "gzip");
                }
                let r = req
                    .header(
                        "accept",
                        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
                    )
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status().is_success() => match r.bytes().await {
                        Ok(b) => {
                            lat.push(t.elapsed());
                            bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
                            if lat.len() == 1 && !whole_exposition(&b, gzip) {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(_) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    },
                    _ => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            lat
        });
    }
    let mut all = vec![];
    while let Some(r) = tasks.join_next().await {
        all.extend(r.unwrap_or_default());
    }
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "scrape: connections={connections} secs={secs} interval_ms={interval_ms} gzip={gzip} requests={} \
         errors={} req_per_s={:.1} mb_per_s={:.1} p50_ms={:.2} p90_ms={:.2} p99_ms={:.2} max_ms={:.2}",
        all.len(),
        errors.load(Ordering::Relaxed),
        all.len() as f64 / secs as f64,
        bytes.load(Ordering::Relaxed) as f64 / 1e6 / secs as f64,
        pct(0.5),
        pct(0.9),
        pct(0.99),
        all.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
    );
}

/// True if `body` (gzip when `gzip`) is a complete OpenMetrics exposition.
fn whole_exposition(body: &[u8], gzip: bool) -> bool {
    use std::io::Read;
    let mut text = Vec::new();
    let read = if gzip {
        flate2::read::GzDecoder::new(body).read_to_end(&mut text)
    } else {
        text.extend_from_slice(body);
        Ok(body.len())
    };
    read.is_ok() && text.ends_with(b"# EOF\n")
}

fn bomb_mode(descriptions: u64) {
    let settings = Settings::default();
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let (hwm0, rss0) = rss_mib();
    let t = Instant::now();
    for id in 0..descriptions {
        let mut job = JobObs {
            job_id: id,
            job_group: Some("adhoc".into()),
            description: Some(format!("Explore {}", words(id, 4))),
            status: JobStatus::Running,
            submission_ms: Some(1_000),
            completion_ms: None,
            stage_ids: vec![],
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        };
        model
            .observer(spark_exporter::sources::source("event_log"))
            .upsert_job(APP_ID, &job);
        job.status = JobStatus::Succeeded;
        job.completion_ms = Some(2_000);
        model
            .observer(spark_exporter::sources::source("event_log"))
            .upsert_job(APP_ID, &job);
    }
    let secs = t.elapsed().as_secs_f64();
    let (hwm1, rss1) = rss_mib();
    let fams = collect(&model);
    let jobs = fams
        .iter()
        .find(|f| f.name == "spark_jobs")
        .map_or(0, |f| f.samples.len());
    let overflow: BTreeMap<_, _> = telemetry.snapshot().label_overflow;
    let body = prometheus::render(&prometheus::registry(model.clone()), true).unwrap_or_default();
    let (hwm2, rss2) = rss_mib();
    println!(
        "bomb: descriptions={descriptions} secs={secs:.2} spark_jobs_series={jobs} \
         label_overflow={overflow:?} body_bytes={} rss_before_mib={rss0:.1} \
         rss_after_mib={rss1:.1} rss_after_scrape_mib={rss2:.1} hwm_mib={:.1}",
        body.len(),
        hwm0.max(hwm1).max(hwm2),
    );
}

fn main() {
    let cli = Cli::parse_from(common::args_or_usage(
        "usage: load-bench serve|render|scrape|bomb [OPTIONS] (--help: the options; \
         scripts/load-bench.sh and BENCHMARKS.md run it)",
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match cli.mode {
        Mode::Serve {
            scale,
            addr,
            churn_ms,
            max_staleness_ms,
        } => rt.block_on(serve_mode(scale, addr, churn_ms, max_staleness_ms)),
        Mode::Render {
            scale,
            iters,
            dump,
            only,
        } => render_mode(scale, iters, dump, only),
        Mode::Scrape {
            url,
            connections,
            secs,
            interval_ms,
            gzip,
        } => rt.block_on(scrape_mode(url, connections, secs, interval_ms, gzip)),
        Mode::Bomb { descriptions } => bomb_mode(descriptions),
    }
}
