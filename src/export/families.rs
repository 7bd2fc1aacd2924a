//! The model as metric families, built at export time. This neutral form is what both the
//! Prometheus exposition and the OTLP exporter render, so the two can never disagree.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::hist::Hist;
use crate::model::{EpochMs, GroupKey, Model, State, TaskCounts, TaskTotals};
use crate::telemetry::Inner as Tele;

/// Metric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Monotonic; the Prometheus name gets `_total`.
    Counter,
    /// Point-in-time value.
    Gauge,
    /// Cumulative buckets, sum and count.
    Histogram,
    /// Constant 1 with descriptive labels; the Prometheus name gets `_info`.
    Info,
}

/// A sample's value.
#[derive(Debug, Clone)]
pub enum Value {
    /// Integer (counts, bytes).
    Int(u64),
    /// Float (seconds, ratios).
    Float(f64),
    /// Histogram: `(upper bound, cumulative count)` ending with `+Inf`, sum, count.
    Hist(Vec<(f64, u64)>, f64, u64),
}

impl Value {
    /// As a float (histograms give their count).
    pub fn as_f64(&self) -> f64 {
        match self {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Hist(_, _, c) => *c as f64,
        }
    }
}

/// Label pairs of one sample. Shared: the many families of one job group or executor hold the
/// same set, allocated once per export.
pub type Labels = Arc<[(&'static str, Arc<str>)]>;

/// `l` followed by `extra`.
fn plus(l: &[(&'static str, Arc<str>)], extra: &[(&'static str, Arc<str>)]) -> Labels {
    l.iter().chain(extra).cloned().collect()
}

/// One series.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Labels, in a fixed order.
    pub labels: Labels,
    /// Value.
    pub value: Value,
}

/// One metric family.
#[derive(Debug, Clone)]
pub struct Family {
    /// Prometheus name without the `_total` / `_info` suffix (e.g. `spark_jobs`).
    pub name: &'static str,
    /// HELP text.
    pub help: &'static str,
    /// Type.
    pub kind: Kind,
    /// Samples.
    pub samples: Vec<Sample>,
}

struct Out(Vec<Family>);

impl Out {
    fn fam(&mut self, name: &'static str, kind: Kind, help: &'static str) -> &mut Vec<Sample> {
        self.0.push(Family {
            name,
            help,
            kind,
            samples: vec![],
        });
        &mut self.0.last_mut().expect("just pushed").samples
    }
}

fn s(v: &str) -> Arc<str> {
    Arc::from(v)
}

fn hist(h: &Hist) -> Value {
    Value::Hist(h.cumulative(), h.sum, h.count)
}

fn secs(ms: u64) -> Value {
    Value::Float(ms as f64 / 1000.0)
}

/// Build every family from the model and the self-metrics at `now` (epoch ms).
pub fn collect(model: &Model) -> Vec<Family> {
    let now = model.now_ms();
    let tele = model.telemetry().snapshot();
    let mut out = Out(Vec::with_capacity(80));
    model.read(|st| spark_families(st, now, &mut out));
    self_families(&tele, now, &mut out);
    out.0
}

/// Per-group values summed over the stages the model still holds.
#[derive(Default)]
struct Live {
    counts: TaskCounts,
    totals: TaskTotals,
    active_stages: u64,
    active_jobs: u64,
}

fn spark_families(st: &State, now: EpochMs, out: &mut Out) {
    let mut app_info = vec![];
    let mut app_start = vec![];
    let mut app_end = vec![];
    let mut jobs = vec![];
    let mut jobs_active = vec![];
    let mut job_dur = vec![];
    let mut stages = vec![];
    let mut stages_active = vec![];
    let mut stage_dur = vec![];
    let mut stalled = vec![];
    let mut stage_tasks_active = vec![];
    let mut skew = vec![];
    let mut tasks = vec![];
    let mut task_dur = vec![];
    // Task-metric sums: one vector per family, in TASK_SUMS order.
    let mut sums: Vec<Vec<Sample>> = vec![vec![]; TASK_SUMS.len()];
    let mut executors = vec![];
    let mut removed = vec![];
    let mut ex: Vec<Vec<Sample>> = vec![vec![]; EXEC_FAMS.len()];
    let mut sql_total = vec![];
    let mut sql_active = vec![];
    let mut sql_dur = vec![];
    let mut st_batches = vec![];
    let mut st_rows = vec![];
    let mut st_in_rate = vec![];
    let mut st_proc_rate = vec![];
    let mut st_dur = vec![];

    for app in st.apps.values() {
        let base: Labels = Arc::new([("app_id", app.id.clone()), ("app_name", app.name.clone())]);
        let with = |extra: &[(&'static str, Arc<str>)]| -> Labels { plus(&base, extra) };
        app_info.push(Sample {
            labels: with(&[
                ("spark_version", app.spark_version.clone()),
                ("user", app.user.clone()),
            ]),
            value: Value::Int(1),
        });
        if let Some(t) = app.start_ms {
            app_start.push(Sample {
                labels: base.clone(),
                value: secs(t as u64),
            });
        }
        if let Some(t) = app.end_ms {
            app_end.push(Sample {
                labels: base.clone(),
                value: secs(t.max(0) as u64),
            });
        }

        // Live contributions per group.
        let mut live: HashMap<&GroupKey, Live> = HashMap::new();
        for j in app.running_jobs.values() {
            live.entry(&j.group).or_default().active_jobs += 1;
        }
        let mut stage_keys: Vec<_> = app.stages.keys().collect();
        stage_keys.sort();
        for k in stage_keys {
            let sg = &app.stages[k];
            let l = live.entry(&sg.group).or_default();
            let c = sg.counts();
            l.counts.succeeded += c.succeeded;
            l.counts.failed += c.failed;
            l.counts.killed += c.killed;
            l.totals.add(&sg.totals());
            let g = |extra: &[(&'static str, Arc<str>)]| {
                let group = [
                    ("job_group", sg.group.0.clone()),
                    ("job_description", sg.group.1.clone()),
                ];
                plus(&plus(&base, &group), extra)
            };
            let ids = [
                ("stage_id", s(&sg.stage_id.to_string())),
                ("stage_attempt", s(&sg.attempt.to_string())),
            ];
            let active = !sg.status.is_terminal() && !app.ended();
            if active {
                l.active_stages += 1;
                let since = sg
                    .last_task_end_ms
                    .or(sg.submission_ms)
                    .unwrap_or(sg.first_seen_ms)
                    .max(sg.submission_ms.unwrap_or(0));
                let lab = g(&[
                    ids[0].clone(),
                    ids[1].clone(),
                    ("stage_name", sg.name.clone()),
                ]);
                stalled.push(Sample {
                    labels: lab,
                    value: Value::Float(now.saturating_sub(since).max(0) as f64 / 1000.0),
                });
            }
            if active || sg.status.is_terminal() {
                stage_tasks_active.push(Sample {
                    labels: g(&ids),
                    value: Value::Int(if active { sg.running() } else { 0 }),
                });
            }
            if let Some(sum) = sg.summary.filter(|x| x.median_ms > 0.0) {
                skew.push(Sample {
                    labels: g(&ids),
                    value: Value::Float(sum.max_ms / sum.median_ms),
                });
            }
        }
        let mut keys: Vec<&GroupKey> = app.groups.keys().chain(live.keys().copied()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let gl = with(&[
                ("job_group", key.0.clone()),
                ("job_description", key.1.clone()),
            ]);
            let glx = |k: &'static str, v: &'static str| plus(&gl, &[(k, s(v))]);
            let agg = app.groups.get(key);
            let lv = live.get(key);
            for status in ["succeeded", "failed"] {
                let n = agg.and_then(|a| a.jobs.get(status)).copied().unwrap_or(0);
                jobs.push(Sample {
                    labels: glx("status", status),
                    value: Value::Int(n),
                });
            }
            jobs_active.push(Sample {
                labels: gl.clone(),
                value: Value::Int(lv.map_or(0, |l| l.active_jobs)),
            });
            stages_active.push(Sample {
                labels: gl.clone(),
                value: Value::Int(lv.map_or(0, |l| l.active_stages)),
            });
            for status in ["complete", "failed", "skipped"] {
                let n = agg.and_then(|a| a.stages.get(status)).copied().unwrap_or(0);
                stages.push(Sample {
                    labels: glx("status", status),
                    value: Value::Int(n),
                });
            }
            let mut counts = agg.map(|a| a.retired_counts).unwrap_or_default();
            let mut totals = agg.map(|a| a.retired_totals).unwrap_or_default();
            if let Some(l) = lv {
                counts.succeeded += l.counts.succeeded;
                counts.failed += l.counts.failed;
                counts.killed += l.counts.killed;
                totals.add(&l.totals);
            }
            for (status, n) in [
                ("succeeded", counts.succeeded),
                ("failed", counts.failed),
                ("killed", counts.killed),
            ] {
                tasks.push(Sample {
                    labels: glx("status", status),
                    value: Value::Int(n),
                });
            }
            let vals = [
                secs(totals.run_time_ms),
                Value::Float(totals.cpu_time_ns as f64 / 1e9),
                secs(totals.gc_time_ms),
                Value::Int(totals.input_bytes),
                Value::Int(totals.output_bytes),
                Value::Int(totals.shuffle_read_bytes),
                Value::Int(totals.shuffle_write_bytes),
                Value::Int(totals.memory_spilled_bytes),
                Value::Int(totals.disk_spilled_bytes),
            ];
            for (i, v) in vals.into_iter().enumerate() {
                sums[i].push(Sample {
                    labels: gl.clone(),
                    value: v,
                });
            }
            if let Some(a) = agg {
                for (status, h) in &a.job_duration {
                    job_dur.push(Sample {
                        labels: glx("status", status),
                        value: hist(h),
                    });
                }
                for (status, h) in &a.stage_duration {
                    stage_dur.push(Sample {
                        labels: glx("status", status),
                        value: hist(h),
                    });
                }
                if a.task_duration.count > 0 {
                    task_dur.push(Sample {
                        labels: gl.clone(),
                        value: hist(&a.task_duration),
                    });
                }
            }
        }

        // Executors.
        let (mut n_active, mut n_dead) = (0, 0);
        for (id, e) in &app.executors {
            if e.active && !app.ended() {
                n_active += 1;
            } else {
                n_dead += 1;
            }
            let el = with(&[("executor_id", s(id))]);
            let t = e.totals();
            let vals: [Option<Value>; 11] = [
                Some(secs(t.task_time_ms)),
                Some(secs(t.gc_time_ms)),
                Some(Value::Int(t.input_bytes)),
                Some(Value::Int(t.shuffle_read_bytes)),
                Some(Value::Int(t.shuffle_write_bytes)),
                Some(Value::Int(if e.active {
                    e.active_tasks.unwrap_or(e.log_running)
                } else {
                    0
                })),
                e.max_tasks.map(Value::Int),
                e.storage_memory_used_bytes.map(Value::Int),
                e.max_memory_bytes.map(Value::Int),
                e.disk_used_bytes.map(Value::Int),
                None,
            ];
            for (i, v) in vals.into_iter().enumerate() {
                if let Some(v) = v {
                    ex[i].push(Sample {
                        labels: el.clone(),
                        value: v,
                    });
                }
            }
            for (status, n) in [("completed", t.completed_tasks), ("failed", t.failed_tasks)] {
                let l = plus(&el, &[("status", s(status))]);
                ex[EXEC_TASKS].push(Sample {
                    labels: l,
                    value: Value::Int(n),
                });
            }
            for (k, v) in &e.peak_memory {
                let l = plus(&el, &[("type", s(k))]);
                ex[EXEC_PEAK].push(Sample {
                    labels: l,
                    value: Value::Int(*v),
                });
            }
        }
        for (state, n) in [("active", n_active), ("dead", n_dead)] {
            executors.push(Sample {
                labels: with(&[("state", s(state))]),
                value: Value::Int(n),
            });
        }
        for (reason, n) in &app.executors_removed {
            removed.push(Sample {
                labels: with(&[("reason", s(reason))]),
                value: Value::Int(*n),
            });
        }

        // SQL.
        let mut running: HashMap<&Arc<str>, u64> = HashMap::new();
        for q in app.running_sql.values() {
            *running.entry(&q.description).or_default() += 1;
        }
        let mut descs: Vec<&Arc<str>> = app.sql.keys().chain(running.keys().copied()).collect();
        descs.sort();
        descs.dedup();
        for d in descs {
            let dl = with(&[("description", d.clone())]);
            let agg = app.sql.get(d);
            for status in ["completed", "failed"] {
                let l = plus(&dl, &[("status", s(status))]);
                let n = agg.and_then(|a| a.ended.get(status)).copied().unwrap_or(0);
                sql_total.push(Sample {
                    labels: l,
                    value: Value::Int(n),
                });
            }
            sql_active.push(Sample {
                labels: dl.clone(),
                value: Value::Int(running.get(d).copied().unwrap_or(0)),
            });
            if let Some(a) = agg {
                for (status, h) in &a.duration {
                    let l = plus(&dl, &[("status", s(status))]);
                    sql_dur.push(Sample {
                        labels: l,
                        value: hist(h),
                    });
                }
            }
        }

        // Streaming.
        for (q, a) in &app.streaming {
            let ql = with(&[("query", q.clone())]);
            st_batches.push(Sample {
                labels: ql.clone(),
                value: Value::Int(a.batches),
            });
            st_rows.push(Sample {
                labels: ql.clone(),
                value: Value::Int(a.input_rows),
            });
            st_in_rate.push(Sample {
                labels: ql.clone(),
                value: Value::Float(a.input_rows_per_second),
            });
            st_proc_rate.push(Sample {
                labels: ql.clone(),
                value: Value::Float(a.processed_rows_per_second),
            });
            st_dur.push(Sample {
                labels: ql,
                value: hist(&a.batch_duration),
            });
        }
    }

    use Kind::*;
    *out.fam(
        "spark_app",
        Info,
        "Spark application (value 1): id, name, Spark version and user.",
    ) = app_info;
    *out.fam(
        "spark_app_start_time_seconds",
        Gauge,
        "Application start time, seconds since the Unix epoch.",
    ) = app_start;
    *out.fam(
        "spark_app_end_time_seconds",
        Gauge,
        "Application end time (or when its driver disappeared), seconds since the Unix epoch.",
    ) = app_end;
    *out.fam(
        "spark_jobs",
        Counter,
        "Jobs ended, by job group, description and status.",
    ) = jobs;
    *out.fam("spark_jobs_active", Gauge, "Jobs running now.") = jobs_active;
    *out.fam(
        "spark_job_duration_seconds",
        Histogram,
        "Job duration from submission to completion.",
    ) = job_dur;
    *out.fam(
        "spark_stages",
        Counter,
        "Stage attempts ended, by status (complete, failed, skipped).",
    ) = stages;
    *out.fam("spark_stages_active", Gauge, "Stage attempts running now.") = stages_active;
    *out.fam(
        "spark_stage_duration_seconds",
        Histogram,
        "Stage attempt duration from submission to completion.",
    ) = stage_dur;
    *out.fam("spark_stage_stalled_seconds", Gauge, "For each active stage: seconds since one of its tasks last finished, or since submission if none has.") = stalled;
    *out.fam("spark_stage_tasks_active", Gauge, "Tasks running now in this stage attempt (active stages and stages finished within the retention window).") = stage_tasks_active;
    *out.fam(
        "spark_stage_task_skew_ratio",
        Gauge,
        "Longest task duration divided by the median task duration of this stage attempt.",
    ) = skew;
    *out.fam(
        "spark_tasks",
        Counter,
        "Tasks ended, by status (succeeded, failed, killed).",
    ) = tasks;
    *out.fam(
        "spark_task_duration_seconds",
        Histogram,
        "Task duration from launch to finish (from event logs).",
    ) = task_dur;
    for ((name, help), samples) in TASK_SUMS.iter().zip(sums) {
        *out.fam(name, Counter, help) = samples;
    }
    *out.fam(
        "spark_executors",
        Gauge,
        "Executors by state (active, dead), the driver included.",
    ) = executors;
    *out.fam(
        "spark_executor_removed",
        Counter,
        "Executors removed, by normalised reason.",
    ) = removed;
    for ((name, kind, help), samples) in EXEC_FAMS.iter().zip(ex) {
        *out.fam(name, *kind, help) = samples;
    }
    *out.fam(
        "spark_sql_executions",
        Counter,
        "SQL executions ended, by description and status.",
    ) = sql_total;
    *out.fam(
        "spark_sql_executions_active",
        Gauge,
        "SQL executions running now.",
    ) = sql_active;
    *out.fam(
        "spark_sql_execution_duration_seconds",
        Histogram,
        "SQL execution duration.",
    ) = sql_dur;
    *out.fam(
        "spark_streaming_batches",
        Counter,
        "Structured-streaming micro-batches completed.",
    ) = st_batches;
    *out.fam(
        "spark_streaming_input_rows",
        Counter,
        "Rows read by structured-streaming micro-batches.",
    ) = st_rows;
    *out.fam(
        "spark_streaming_input_rows_per_second",
        Gauge,
        "Input rate of the latest micro-batch.",
    ) = st_in_rate;
    *out.fam(
        "spark_streaming_processed_rows_per_second",
        Gauge,
        "Processing rate of the latest micro-batch.",
    ) = st_proc_rate;
    *out.fam(
        "spark_streaming_batch_duration_seconds",
        Histogram,
        "Micro-batch duration (triggerExecution).",
    ) = st_dur;
}

const TASK_SUMS: [(&str, &str); 9] = [
    (
        "spark_task_run_time_seconds",
        "Executor run time of tasks, summed per job group.",
    ),
    (
        "spark_task_cpu_time_seconds",
        "Executor CPU time of tasks, summed per job group.",
    ),
    (
        "spark_task_gc_time_seconds",
        "JVM garbage-collection time of tasks, summed per job group.",
    ),
    (
        "spark_task_input_bytes",
        "Bytes read from input sources by tasks.",
    ),
    (
        "spark_task_output_bytes",
        "Bytes written to outputs by tasks.",
    ),
    (
        "spark_task_shuffle_read_bytes",
        "Shuffle bytes read by tasks (local and remote).",
    ),
    (
        "spark_task_shuffle_write_bytes",
        "Shuffle bytes written by tasks.",
    ),
    (
        "spark_task_memory_spilled_bytes",
        "Bytes spilled from memory by tasks (in-memory size).",
    ),
    (
        "spark_task_disk_spilled_bytes",
        "Bytes spilled to disk by tasks.",
    ),
];

const EXEC_TASKS: usize = 10;
const EXEC_PEAK: usize = 11;
const EXEC_FAMS: [(&str, Kind, &str); 12] = [
    (
        "spark_executor_task_time_seconds",
        Kind::Counter,
        "Sum of the durations of the tasks this executor ran.",
    ),
    (
        "spark_executor_gc_time_seconds",
        Kind::Counter,
        "JVM garbage-collection time of this executor's tasks.",
    ),
    (
        "spark_executor_input_bytes",
        Kind::Counter,
        "Bytes read from input sources by this executor.",
    ),
    (
        "spark_executor_shuffle_read_bytes",
        Kind::Counter,
        "Shuffle bytes read by this executor.",
    ),
    (
        "spark_executor_shuffle_write_bytes",
        Kind::Counter,
        "Shuffle bytes written by this executor.",
    ),
    (
        "spark_executor_active_tasks",
        Kind::Gauge,
        "Tasks running now on this executor.",
    ),
    (
        "spark_executor_max_tasks",
        Kind::Gauge,
        "Task slots of this executor.",
    ),
    (
        "spark_executor_storage_memory_used_bytes",
        Kind::Gauge,
        "Storage memory used by cached blocks.",
    ),
    (
        "spark_executor_max_memory_bytes",
        Kind::Gauge,
        "Storage memory available to this executor.",
    ),
    (
        "spark_executor_disk_used_bytes",
        Kind::Gauge,
        "Disk space used by cached blocks.",
    ),
    (
        "spark_executor_tasks",
        Kind::Counter,
        "Tasks ended on this executor, by status (completed, failed).",
    ),
    (
        "spark_executor_peak_memory_bytes",
        Kind::Gauge,
        "Peak memory of this executor by type (peakMemoryMetrics).",
    ),
];

fn self_families(t: &Tele, now: EpochMs, out: &mut Out) {
    use Kind::*;
    let one = |k: &'static str, v: &str| -> Labels { Arc::new([(k, s(v))]) };
    *out.fam(
        "spark_up",
        Gauge,
        "1 if the last poll of this Spark REST target succeeded.",
    ) =
        t.up.iter()
            .map(|(k, v)| Sample {
                labels: one("target", k),
                value: Value::Int(*v as u64),
            })
            .collect();
    *out.fam("spark_exporter_build", Info, "Exporter build (value 1).") = vec![Sample {
        labels: one("version", env!("CARGO_PKG_VERSION")),
        value: Value::Int(1),
    }];
    *out.fam(
        "spark_exporter_scrape_duration_seconds",
        Gauge,
        "Duration of the last poll of this REST target.",
    ) = t
        .scrape_duration
        .iter()
        .map(|(k, v)| Sample {
            labels: one("target", k),
            value: Value::Float(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_scrape_errors",
        Counter,
        "Failed requests to a REST target, by kind (connect, timeout, http_status, decode, body).",
    ) = t
        .scrape_errors
        .iter()
        .map(|((tg, k), v)| Sample {
            labels: Arc::new([("target", s(tg)), ("kind", s(k))]),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_rest_response_bytes",
        Counter,
        "Response bytes read from a REST target.",
    ) = t
        .rest_bytes
        .iter()
        .map(|(k, v)| Sample {
            labels: one("target", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_rest_requests",
        Counter,
        "Requests made to a REST target.",
    ) = t
        .rest_requests
        .iter()
        .map(|(k, v)| Sample {
            labels: one("target", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_label_overflow",
        Counter,
        "Label values folded into __other__ because the label hit its distinct-value cap.",
    ) = t
        .label_overflow
        .iter()
        .map(|(k, v)| Sample {
            labels: one("label", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_eventlog_bytes",
        Counter,
        "Event-log bytes read (after decompression).",
    ) = vec![Sample {
        labels: Arc::new([]),
        value: Value::Int(t.eventlog_bytes),
    }];
    *out.fam(
        "spark_exporter_eventlog_events",
        Counter,
        "Event-log events read.",
    ) = vec![Sample {
        labels: Arc::new([]),
        value: Value::Int(t.eventlog_events),
    }];
    *out.fam(
        "spark_exporter_eventlog_errors",
        Counter,
        "Event-log problems skipped, by kind.",
    ) = t
        .eventlog_errors
        .iter()
        .map(|(k, v)| Sample {
            labels: one("kind", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_http_errors",
        Counter,
        "Connections or requests to this exporter refused, by kind (connection_limit, tls_handshake, unauthorized).",
    ) = t
        .http_errors
        .iter()
        .map(|(k, v)| Sample {
            labels: one("kind", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_eventlog_files",
        Gauge,
        "Event-log files by tailer state.",
    ) = t
        .eventlog_files
        .iter()
        .map(|(k, v)| Sample {
            labels: one("state", k),
            value: Value::Int(*v),
        })
        .collect();
    *out.fam(
        "spark_exporter_otlp_exports",
        Counter,
        "OTLP export attempts.",
    ) = vec![Sample {
        labels: Arc::new([]),
        value: Value::Int(crate::export::otlp::exports_total()),
    }];
    *out.fam(
        "spark_exporter_otlp_export_failures",
        Counter,
        "Failed OTLP export attempts (refused, timed out, rejected by the collector).",
    ) = vec![Sample {
        labels: Arc::new([]),
        value: Value::Int(crate::export::otlp::export_failures_total()),
    }];
    *out.fam(
        "spark_exporter_eventlog_lag_seconds",
        Gauge,
        "Seconds between now and the newest event read from any event log.",
    ) = t
        .eventlog_newest_event_ms
        .map(|e| {
            vec![Sample {
                labels: Arc::new([]),
                value: Value::Float(now.saturating_sub(e).max(0) as f64 / 1000.0),
            }]
        })
        .unwrap_or_default();
}
