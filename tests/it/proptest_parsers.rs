//! Property tests of everything that reads untrusted bytes, the same properties the cargo-fuzz
//! targets in `fuzz/` check, in a short run that is part of the normal test suite:
//! - the event-log line parser never panics, and valid lines of a few generated shapes parse to
//!   exactly the observation they describe;
//! - the codec decoders never panic or over-consume on arbitrary bytes fed in arbitrary pieces,
//!   and valid streams decode to their content in any piece sizes;
//! - REST decoding never panics, any JSON object decodes (leniently) for the per-entity types,
//!   and `parse_time` is consistent.

use proptest::prelude::*;
use serde_json::json;

use spark_exporter::model::{JobStatus, StageStatus, TaskOutcome};
use spark_exporter::sources::eventlog::block::xxh32;
use spark_exporter::sources::eventlog::codec::{Codec, CodecError, Decoder};
use spark_exporter::sources::eventlog::{parse_line, Event};
use spark_exporter::sources::rest::api::{
    ApplicationInfo, ExecutionData, ExecutionPlan, ExecutorSummary, JobData, StageData,
    TaskMetricDistributions,
};
use spark_exporter::sources::rest::convert;

// ---- Event-log lines ----------------------------------------------------------------------

/// A line Spark could have written, damaged by one of a few edits.
fn damaged_line() -> impl Strategy<Value = Vec<u8>> {
    let base = prop_oneof![
        Just(
            r#"{"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":7,"Executor ID":"1","Launch Time":1000,"Finish Time":2000,"Failed":false,"Killed":false},"Task Metrics":{"Executor Run Time":900,"Input Metrics":{"Bytes Read":10},"Shuffle Read Metrics":{"Remote Bytes Read":1,"Local Bytes Read":2}}}"#
        ),
        Just(
            r#"{"Event":"SparkListenerJobStart","Job ID":3,"Submission Time":1000,"Stage IDs":[4,5],"Properties":{"spark.jobGroup.id":"g","spark.job.description":"d","spark.sql.execution.id":"9"}}"#
        ),
        Just(
            r#"{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":4,"Stage Attempt ID":1,"Stage Name":"n","Number of Tasks":3,"Submission Time":1,"Completion Time":2,"Failure Reason":"x"}}"#
        ),
        Just(
            r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate","executionId":2,"physicalPlanDescription":"p","sparkPlanInfo":{"nodeName":"AdaptiveSparkPlan","simpleString":"AdaptiveSparkPlan isFinalPlan=true","children":[{"nodeName":"WholeStageCodegen (1)","simpleString":"w","children":[{"nodeName":"SortMergeJoin(skew=true)","simpleString":"s","children":[{"nodeName":"AQEShuffleRead","simpleString":"r","children":[{"nodeName":"ShuffleQueryStage","simpleString":"q","children":[{"nodeName":"Exchange","simpleString":"e","children":[],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[{"name":"number of coalesced partitions","accumulatorId":7,"metricType":"sum"}]},{"nodeName":"ReusedExchange","simpleString":"x","children":[{"nodeName":"Exchange","simpleString":"e","children":[],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[]}],"metadata":{},"metrics":[]}}"#
        ),
        Just(
            r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates","executionId":2,"accumUpdates":[[7,2],[8,-1]]}"#
        ),
        Just(
            r#"{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{"id":"q","name":null,"batchId":3,"numInputRows":5,"inputRowsPerSecond":"NaN","durationMs":{"triggerExecution":7},"sources":[{"numInputRows":5,"inputRowsPerSecond":1.5}]}}"#
        ),
    ];
    (base, any::<usize>(), any::<u8>(), 0..3u8).prop_map(|(line, at, b, edit)| {
        let mut v = line.as_bytes().to_vec();
        let at = at % v.len();
        match edit {
            0 => v[at] = b,
            1 => v.insert(at, b),
            _ => {
                v.truncate(at);
            }
        }
        v
    })
}

/// Label-like text: anything printable, quotes, backslashes, newlines and non-ASCII included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 _.:-]{0,30}",
        "\\PC{0,20}",
        Just("quote \" backslash \\ newline \n tab \t".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_line_never_panics(line in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_line(&line);
    }

    #[test]
    fn parse_line_never_panics_on_damaged_spark_lines(line in damaged_line()) {
        let _ = parse_line(&line);
    }
}

/// Ids Spark writes as a Java `int`, and values it writes as a `long` (what a real log holds).
const INT: std::ops::RangeInclusive<u64> = 0..=i32::MAX as u64;
const LONG: std::ops::RangeInclusive<u64> = 0..=i64::MAX as u64;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn task_end_lines_round_trip(
        stage in INT, attempt in 0..=i32::MAX as u32, task in LONG,
        exec in text(), launch in 0i64..4_000_000_000_000, took in 0i64..100_000_000,
        reason in prop_oneof![Just("Success"), Just("TaskKilled"), Just("ExceptionFailure")],
        run in LONG, cpu in LONG, input in LONG, remote in LONG, local in LONG,
    ) {
        let line = json!({
            "Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": attempt,
            "Task End Reason": {"Reason": reason},
            "Task Info": {"Task ID": task, "Executor ID": exec, "Launch Time": launch,
                          "Finish Time": launch + took, "Failed": reason == "ExceptionFailure",
                          "Killed": false},
            "Task Metrics": {"Executor Run Time": run, "Executor CPU Time": cpu,
                             "Input Metrics": {"Bytes Read": input},
                             "Shuffle Read Metrics": {"Remote Bytes Read": remote,
                                                      "Local Bytes Read": local}},
        });
        let Ok(Some(Event::TaskEnd(t))) = parse_line(line.to_string().as_bytes()) else {
            panic!("not a task end: {line}");
        };
        prop_assert_eq!((t.stage_id, t.attempt, t.task_id), (stage, attempt, task));
        prop_assert_eq!(&t.executor_id, &exec);
        prop_assert_eq!((t.launch_ms, t.finish_ms), (launch, launch + took));
        let outcome = match reason {
            "Success" => TaskOutcome::Succeeded,
            "TaskKilled" => TaskOutcome::Killed,
            _ => TaskOutcome::Failed,
        };
        prop_assert_eq!(t.outcome, outcome);
        prop_assert_eq!((t.metrics.run_time_ms, t.metrics.cpu_time_ns), (run, cpu));
        prop_assert_eq!(t.metrics.input_bytes, input);
        prop_assert_eq!(t.metrics.shuffle_read_bytes, remote.saturating_add(local));
    }

    #[test]
    fn job_start_lines_round_trip(
        job in INT, at in proptest::option::of(0i64..4_000_000_000_000),
        stages in proptest::collection::vec(INT, 0..8),
        group in proptest::option::of(text()), desc in proptest::option::of(text()),
        sql in proptest::option::of(LONG),
    ) {
        let mut props = serde_json::Map::new();
        if let Some(g) = &group { props.insert("spark.jobGroup.id".into(), json!(g)); }
        if let Some(d) = &desc { props.insert("spark.job.description".into(), json!(d)); }
        if let Some(s) = sql { props.insert("spark.sql.execution.id".into(), json!(s.to_string())); }
        let line = json!({"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": at,
                          "Stage IDs": stages, "Properties": props});
        let Ok(Some(Event::JobStart { job: j, .. })) = parse_line(line.to_string().as_bytes()) else {
            panic!("not a job start: {line}");
        };
        prop_assert_eq!(j.job_id, job);
        prop_assert_eq!(j.status, JobStatus::Running);
        prop_assert_eq!(j.submission_ms, at);
        prop_assert_eq!(&j.stage_ids, &stages);
        prop_assert_eq!(&j.job_group, &group);
        prop_assert_eq!(&j.description, &desc);
        prop_assert_eq!(j.sql_execution_id, sql);
    }

    #[test]
    fn stage_lines_round_trip(
        stage in INT, attempt in 0..=i32::MAX as u32, name in text(),
        tasks in INT, sub in 0i64..4_000_000_000_000, took in 0i64..1_000_000,
        failure in proptest::option::of(text()), submitted in any::<bool>(),
        desc in proptest::option::of(text()),
    ) {
        let event = if submitted { "SparkListenerStageSubmitted" } else { "SparkListenerStageCompleted" };
        let mut info = json!({"Stage ID": stage, "Stage Attempt ID": attempt, "Stage Name": name,
                              "Number of Tasks": tasks, "Submission Time": sub,
                              "Completion Time": sub + took});
        if let Some(f) = &failure { info["Failure Reason"] = json!(f); }
        let line = json!({"Event": event, "Stage Info": info,
                          "Properties": {"spark.job.description": desc}});
        let s = match parse_line(line.to_string().as_bytes()) {
            Ok(Some(Event::StageSubmitted(s, _))) if submitted => s,
            Ok(Some(Event::StageCompleted(s, _))) if !submitted => s,
            other => panic!("{line} gave {other:?}"),
        };
        let status = match (submitted, &failure) {
            (true, _) => StageStatus::Active,
            (false, Some(_)) => StageStatus::Failed,
            (false, None) => StageStatus::Complete,
        };
        prop_assert_eq!((s.stage_id, s.attempt, s.status), (stage, attempt, status));
        prop_assert_eq!(s.name.as_deref(), Some(name.as_str()));
        prop_assert_eq!(s.num_tasks, Some(tasks));
        prop_assert_eq!(s.submission_ms, Some(sub));
        prop_assert_eq!(s.completion_ms, (!submitted).then_some(sub + took));
        prop_assert_eq!(&s.description, &desc);
    }
}

// ---- Codecs -----------------------------------------------------------------------------------

const CODECS: [Codec; 5] = [
    Codec::Plain,
    Codec::Zstd,
    Codec::Lz4,
    Codec::Snappy,
    Codec::Lzf,
];

/// Offer `data` to a decoder in pieces of `sizes` (cycled) with output budgets `budgets`
/// (cycled), as the tailer does: keep what was not consumed, skip bad blocks, stop at a fatal
/// error. Returns the output and whether an error was seen.
fn decode_pieces(codec: Codec, data: &[u8], sizes: &[usize], budgets: &[usize]) -> (Vec<u8>, bool) {
    let mut d = Decoder::new(codec).expect("decoder");
    let (mut pending, mut out, mut pos, mut errors) = (Vec::new(), Vec::new(), 0, false);
    let (mut i, mut j) = (0, 0);
    loop {
        if pos < data.len() {
            let n = sizes[i % sizes.len()].clamp(1, data.len() - pos);
            i += 1;
            pending.extend_from_slice(&data[pos..pos + n]);
            pos += n;
        }
        loop {
            let budget = budgets[j % budgets.len()].max(1);
            j += 1;
            let before = out.len();
            let used = match d.decode(&pending, &mut out, before.saturating_add(budget)) {
                Ok(n) => n,
                Err(CodecError::BadBlock { consumed, .. }) => {
                    errors = true;
                    assert!(consumed > 0);
                    consumed
                }
                Err(CodecError::Fatal { .. }) => return (out, true),
            };
            assert!(
                used <= pending.len(),
                "consumed {used} of {}",
                pending.len()
            );
            pending.drain(..used);
            if used == 0 && out.len() == before {
                break;
            }
        }
        if pos >= data.len() {
            return (out, errors);
        }
    }
}

fn lz4_stream(data: &[u8], block: usize) -> Vec<u8> {
    let level = (block.next_power_of_two().trailing_zeros() as u8).saturating_sub(10);
    let mut out = Vec::new();
    for chunk in data.chunks(block) {
        let c = lz4_flex::block::compress(chunk);
        out.extend_from_slice(b"LZ4Block");
        out.push(0x20 | level);
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(&(xxh32(chunk, 0x9747_b28c) & 0x0fff_ffff).to_le_bytes());
        out.extend_from_slice(&c);
    }
    out.extend_from_slice(b"LZ4Block");
    out.push(0x10 | level);
    out.extend_from_slice(&[0; 12]);
    out
}

fn snappy_stream(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = b"\x82SNAPPY\0".to_vec();
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for chunk in data.chunks(block) {
        let c = snap::raw::Encoder::new()
            .compress_vec(chunk)
            .expect("snappy");
        out.extend_from_slice(&(c.len() as i32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out
}

/// LZF chunks: stored, and "compressed" as literal runs (control byte < 32).
fn lzf_stream(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, chunk) in data.chunks(block.min(0xffff)).enumerate() {
        if k % 2 == 0 {
            out.extend_from_slice(b"ZV\0");
            out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            out.extend_from_slice(chunk);
        } else {
            let mut c = Vec::new();
            for run in chunk.chunks(32) {
                c.push(run.len() as u8 - 1);
                c.extend_from_slice(run);
            }
            if c.len() > 0xffff {
                out.extend_from_slice(b"ZV\0");
                out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
                out.extend_from_slice(chunk);
                continue;
            }
            out.extend_from_slice(b"ZV\x01");
            out.extend_from_slice(&(c.len() as u16).to_be_bytes());
            out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            out.extend_from_slice(&c);
        }
    }
    out
}

fn encode(codec: Codec, data: &[u8], block: usize) -> Vec<u8> {
    match codec {
        Codec::Plain => data.to_vec(),
        Codec::Zstd => zstd::stream::encode_all(data, 1).expect("zstd"),
        Codec::Lz4 => lz4_stream(data, block),
        Codec::Snappy => snappy_stream(data, block),
        Codec::Lzf => lzf_stream(data, block),
    }
}

fn sizes() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..5000, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn codecs_never_panic_on_arbitrary_bytes(
        codec in 0..5usize, data in proptest::collection::vec(any::<u8>(), 0..3000),
        sizes in sizes(), budgets in sizes(),
    ) {
        let _ = decode_pieces(CODECS[codec], &data, &sizes, &budgets);
    }

    #[test]
    fn codecs_never_panic_on_arbitrary_bytes_after_a_valid_header(
        codec in 0..5usize, data in proptest::collection::vec(any::<u8>(), 0..3000),
        sizes in sizes(), budgets in sizes(),
    ) {
        let mut stream = match CODECS[codec] {
            Codec::Snappy => b"\x82SNAPPY\0\0\0\0\x01\0\0\0\x01".to_vec(),
            Codec::Lz4 => b"LZ4Block\x26".to_vec(),
            Codec::Lzf => b"ZV\x01".to_vec(),
            Codec::Zstd => vec![0x28, 0xb5, 0x2f, 0xfd],
            Codec::Plain => vec![],
        };
        stream.extend_from_slice(&data);
        let _ = decode_pieces(CODECS[codec], &stream, &sizes, &budgets);
    }

    #[test]
    fn valid_streams_decode_in_any_pieces(
        codec in 0..5usize,
        lines in proptest::collection::vec("[ -~]{0,200}", 0..60),
        block in 16usize..4096, sizes in sizes(), budgets in sizes(),
    ) {
        let codec = CODECS[codec];
        let text: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
        let stream = encode(codec, &text, block);
        let (out, errors) = decode_pieces(codec, &stream, &sizes, &budgets);
        prop_assert!(!errors);
        prop_assert_eq!(out, text);
    }

    #[test]
    fn damaged_streams_never_panic(
        codec in 0..5usize, text in proptest::collection::vec(any::<u8>(), 1..4000),
        block in 16usize..2048, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        sizes in sizes(), budgets in sizes(),
    ) {
        let codec = CODECS[codec];
        let mut stream = encode(codec, &text, block);
        for (at, b) in flips {
            let n = stream.len();
            stream[at % n] ^= b | 1;
        }
        let (out, _) = decode_pieces(codec, &stream, &sizes, &budgets);
        // Damage can drop blocks but never invent much output.
        prop_assert!(out.len() <= text.len() + (1 << 20));
    }
}

// ---- REST decoding -------------------------------------------------------------------------

/// Arbitrary JSON values, a few levels deep.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number)),
        "\\PC{0,12}".prop_map(serde_json::Value::from),
        prop_oneof![
            Just("2026-11-29T19:39:20.198GMT"),
            Just("1969-12-31T23:59:59.999GMT"),
            Just("RUNNING"),
            Just("SUCCEEDED"),
            Just("FAILED"),
            Just("COMPLETE"),
            Just("ACTIVE"),
            Just("SKIPPED"),
            Just("PENDING"),
            Just("-1"),
            Just("12.5"),
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The fields the API types read, so generated objects hit them.
const KEYS: &[&str] = &[
    "id",
    "name",
    "status",
    "description",
    "jobId",
    "jobGroup",
    "stageIds",
    "submissionTime",
    "completionTime",
    "stageId",
    "attemptId",
    "numTasks",
    "numActiveTasks",
    "numCompleteTasks",
    "numFailedTasks",
    "numKilledTasks",
    "executorRunTime",
    "executorCpuTime",
    "jvmGcTime",
    "inputBytes",
    "outputBytes",
    "shuffleReadBytes",
    "shuffleWriteBytes",
    "memoryBytesSpilled",
    "diskBytesSpilled",
    "isActive",
    "removeReason",
    "addTime",
    "removeTime",
    "maxTasks",
    "activeTasks",
    "completedTasks",
    "failedTasks",
    "totalDuration",
    "totalGCTime",
    "totalInputBytes",
    "totalShuffleRead",
    "totalShuffleWrite",
    "memoryUsed",
    "maxMemory",
    "diskUsed",
    "peakMemoryMetrics",
    "nodes",
    "edges",
    "duration",
    "quantiles",
];

fn api_object() -> impl Strategy<Value = serde_json::Value> {
    proptest::collection::vec((proptest::sample::select(KEYS), json_value()), 0..12).prop_map(
        |kv| serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rest_decoding_never_panics(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = serde_json::from_slice::<Vec<ApplicationInfo>>(&body);
        let _ = serde_json::from_slice::<Vec<JobData>>(&body);
        let _ = serde_json::from_slice::<Vec<StageData>>(&body);
        let _ = serde_json::from_slice::<Vec<ExecutorSummary>>(&body);
        let _ = serde_json::from_slice::<Vec<ExecutionData>>(&body);
        let _ = serde_json::from_slice::<TaskMetricDistributions>(&body);
        if let Ok(p) = serde_json::from_slice::<ExecutionPlan>(&body) {
            let _ = convert::sql_plan_obs(&p);
        }
        let _ = convert::parse_time(&String::from_utf8_lossy(&body));
    }

    /// The API types are lenient: any object decodes (a wrong value degrades that field only),
    /// and converting it never panics.
    #[test]
    fn any_object_decodes_leniently(obj in api_object()) {
        let body = serde_json::to_vec(&json!([obj])).expect("serialises");
        let jobs: Vec<JobData> = serde_json::from_slice(&body).expect("JobData");
        let stages: Vec<StageData> = serde_json::from_slice(&body).expect("StageData");
        let execs: Vec<ExecutorSummary> = serde_json::from_slice(&body).expect("ExecutorSummary");
        let sql: Vec<ExecutionData> = serde_json::from_slice(&body).expect("ExecutionData");
        let dist: TaskMetricDistributions =
            serde_json::from_value(obj.clone()).expect("TaskMetricDistributions");
        let _ = convert::job_obs(&jobs[0]);
        let _ = convert::stage_obs(&stages[0]);
        let _ = convert::executor_obs(&execs[0]);
        let _ = convert::sql_obs(&sql[0]);
        let _ = convert::task_summary_obs(&dist, true);
        let plan: ExecutionPlan = serde_json::from_value(obj.clone()).expect("ExecutionPlan");
        let _ = convert::sql_plan_obs(&plan);
        if let Ok(apps) = serde_json::from_slice::<Vec<ApplicationInfo>>(&body) {
            let _ = convert::app_obs(&apps[0]);
        }
    }

    /// `parse_time` agrees with itself: one more millisecond or second is exactly that much later,
    /// and the suffixes Spark and others use give the same instant.
    #[test]
    fn parse_time_is_consistent(
        y in 1971i64..9999, mo in 1i64..=12, d in 1i64..=28, h in 0i64..24, mi in 0i64..60,
        s in 0i64..59, ms in 0i64..999,
    ) {
        let t = |s: i64, ms: i64, suffix: &str| {
            convert::parse_time(&format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}{suffix}"))
        };
        let base = t(s, ms, "GMT").expect("valid time");
        prop_assert_eq!(t(s, ms + 1, "GMT"), Some(base + 1));
        prop_assert_eq!(t(s + 1, ms, "GMT"), Some(base + 1000));
        prop_assert_eq!(t(s, ms, "Z"), Some(base));
        prop_assert_eq!(t(s, ms, "+00:00"), Some(base));
    }
}

#[test]
fn parse_time_anchor() {
    assert_eq!(
        convert::parse_time("2026-11-29T19:39:20.198GMT"),
        Some(1_795_981_160_198)
    );
}
