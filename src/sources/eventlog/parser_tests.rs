//! Parser tests, on lines copied from logs Spark 4.1.1 and 3.5.5 wrote (shortened where noted).

use super::*;

fn one(line: &str) -> Event {
    parse_line(line.as_bytes()).unwrap().expect("an event")
}

const TASK_END: &str = r#"{"Event":"SparkListenerTaskEnd","Stage ID":3,"Stage Attempt ID":1,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":17,"Index":1,"Attempt":0,"Partition ID":1,"Launch Time":1795981145989,"Executor ID":"driver","Host":"192.0.2.2","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":1795981146372,"Failed":false,"Killed":false,"Accumulables":[{"ID":80,"Name":"number of output rows","Update":"500","Value":"500","Internal":true,"Count Failed Values":true,"Metadata":"sql"}]},"Task Executor Metrics":{"JVMHeapMemory":0},"Task Metrics":{"Executor Deserialize Time":178,"Executor Run Time":124,"Executor CPU Time":24952218,"Result Size":5712,"JVM GC Time":7,"Memory Bytes Spilled":11,"Disk Bytes Spilled":13,"Shuffle Read Metrics":{"Remote Blocks Fetched":0,"Remote Bytes Read":100,"Local Bytes Read":23,"Push Based Shuffle":{"Merged Remote Bytes Read":0}},"Shuffle Write Metrics":{"Shuffle Bytes Written":55,"Shuffle Write Time":-1,"Shuffle Records Written":0},"Input Metrics":{"Bytes Read":1000,"Records Read":500},"Output Metrics":{"Bytes Written":9,"Records Written":0},"Updated Blocks":[]}}"#;

#[test]
fn task_end_reads_ids_times_and_metrics() {
    let Event::TaskEnd(t) = one(TASK_END) else {
        panic!()
    };
    assert_eq!((t.stage_id, t.attempt, t.task_id), (3, 1, 17));
    assert_eq!(t.executor_id, "driver");
    assert_eq!(t.outcome, TaskOutcome::Succeeded);
    assert_eq!(t.finish_ms - t.launch_ms, 383);
    let m = t.metrics;
    assert_eq!(
        (m.run_time_ms, m.cpu_time_ns, m.gc_time_ms),
        (124, 24952218, 7)
    );
    assert_eq!((m.input_bytes, m.output_bytes), (1000, 9));
    assert_eq!((m.shuffle_read_bytes, m.shuffle_write_bytes), (123, 55));
    assert_eq!((m.memory_spilled_bytes, m.disk_spilled_bytes), (11, 13));
}

#[test]
fn failed_and_killed_tasks() {
    let failed = r#"{"Event":"SparkListenerTaskEnd","Stage ID":11,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"ExceptionFailure","Class Name":"org.apache.spark.api.python.PythonException","Description":"bad record 13","Stack Trace":[],"Accumulator Updates":[]},"Task Info":{"Task ID":25,"Launch Time":5,"Executor ID":"driver","Finish Time":9,"Failed":true,"Killed":false,"Accumulables":[]}}"#;
    let Event::TaskEnd(t) = one(failed) else {
        panic!()
    };
    assert_eq!(t.outcome, TaskOutcome::Failed);
    assert_eq!(t.metrics, TaskTotals::default());
    let killed = r#"{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task End Reason":{"Reason":"TaskKilled","Kill Reason":"stage cancelled"},"Task Info":{"Task ID":2,"Launch Time":5,"Executor ID":"3","Finish Time":0,"Failed":false,"Killed":true}}"#;
    let Event::TaskEnd(t) = one(killed) else {
        panic!()
    };
    assert_eq!(t.outcome, TaskOutcome::Killed);
    assert_eq!(
        t.finish_ms, 5,
        "a zero finish time never gives a negative duration"
    );
}

#[test]
fn job_start_and_end() {
    let start = r#"{"Event":"SparkListenerJobStart","Job ID":4,"Submission Time":1796009908063,"Stage Infos":[{"Stage ID":6,"Stage Name":"count at <stdin>:1"},{"Stage ID":5,"Stage Name":"map at <stdin>:1","RDD Info":[]}],"Stage IDs":[5,6],"Properties":{"spark.rdd.scope":"{\"id\":\"1\"}","spark.job.description":"Load numbers 2026-01-01","spark.jobGroup.id":"etl_load","spark.job.tags":"a,b","spark.sql.execution.id":"12"}}"#;
    let Event::JobStart { job, .. } = one(start) else {
        panic!()
    };
    assert_eq!(job.job_id, 4);
    assert_eq!(job.stage_ids, vec![5, 6]);
    assert_eq!(job.job_group.as_deref(), Some("etl_load"));
    assert_eq!(job.description.as_deref(), Some("Load numbers 2026-01-01"));
    assert_eq!(job.sql_execution_id, Some(12));
    assert_eq!(job.status, JobStatus::Running);
    assert_eq!(job.tags, vec!["a", "b"]);
    assert_eq!(
        job.name.as_deref(),
        Some("count at <stdin>:1"),
        "the last stage's name"
    );
    // Without "Stage IDs" (old logs) the ids come from "Stage Infos".
    let old = r#"{"Event":"SparkListenerJobStart","Job ID":1,"Stage Infos":[{"Stage ID":2}]}"#;
    let Event::JobStart { job, .. } = one(old) else {
        panic!()
    };
    assert_eq!(job.stage_ids, vec![2]);
    assert_eq!(job.job_group, None);

    let ok = r#"{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":1795981146401,"Job Result":{"Result":"JobSucceeded"}}"#;
    let failed = r#"{"Event":"SparkListenerJobEnd","Job ID":7,"Completion Time":1,"Job Result":{"Exception":{"Message":"Job aborted: \"x\" }{ ]\n\tat a.B(C.java:1)","Stack Trace":[{"Declaring Class":"a.B"}]},"Result":"JobFailed"}}"#;
    let no_time = r#"{"Event":"SparkListenerJobEnd","Job ID":8,"Completion Time":null,"Job Result":{"Result":"JobSucceeded"}}"#;
    for (line, want) in [
        (ok, (0, true, Some(1795981146401))),
        (failed, (7, false, Some(1))),
        (no_time, (8, true, None)),
    ] {
        let Event::JobEnd {
            job_id,
            succeeded,
            completion_ms,
        } = one(line)
        else {
            panic!("not a job end: {line}")
        };
        assert_eq!((job_id, succeeded, completion_ms), want, "{line}");
    }
}

#[test]
fn stages_submitted_completed_failed() {
    let sub = r#"{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":2,"Stage Attempt ID":0,"Stage Name":"collect at x.py:1","Number of Tasks":4,"RDD Info":[{"RDD ID":1}],"Parent IDs":[1],"Details":"","Submission Time":100,"Accumulables":[],"Resource Profile Id":0},"Properties":{"spark.jobGroup.id":"g","spark.job.description":"d"}}"#;
    let Event::StageSubmitted(s, rdds) = one(sub) else {
        panic!()
    };
    assert_eq!(
        (s.stage_id, s.attempt, s.status),
        (2, 0, StageStatus::Active)
    );
    assert_eq!((s.num_tasks, s.submission_ms), (Some(4), Some(100)));
    assert_eq!(
        (s.job_group.as_deref(), s.description.as_deref()),
        (Some("g"), Some("d"))
    );
    assert_eq!(s.name.as_deref(), Some("collect at x.py:1"));
    assert!(rdds.is_empty(), "no storage level: not persisted");
    let done = r#"{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":2,"Stage Attempt ID":0,"Number of Tasks":4,"Submission Time":100,"Completion Time":150,"Accumulables":[]}}"#;
    let Event::StageCompleted(s, _) = one(done) else {
        panic!()
    };
    assert_eq!(
        (s.status, s.completion_ms),
        (StageStatus::Complete, Some(150))
    );
    let failed = r#"{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":11,"Stage Attempt ID":0,"Completion Time":150,"Failure Reason":"Job aborted due to stage failure"}}"#;
    let Event::StageCompleted(s, _) = one(failed) else {
        panic!()
    };
    assert_eq!(s.status, StageStatus::Failed);
    // The rows it read and wrote, from its internal accumulables (a SQL metric's string value
    // and other names are not counted).
    let rows = r#"{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":3,"Stage Attempt ID":1,"Completion Time":150,"Accumulables":[{"ID":1,"Name":"shuffle records written","Value":"32"},{"ID":2,"Name":"internal.metrics.shuffle.write.recordsWritten","Value":32},{"ID":3,"Name":"internal.metrics.input.recordsRead","Value":1000},{"ID":4,"Name":"internal.metrics.shuffle.read.recordsRead","Value":7},{"ID":5,"Name":"internal.metrics.output.recordsWritten","Value":5},{"ID":6,"Name":"internal.metrics.executorRunTime","Value":99}]}}"#;
    let Event::StageCompleted(_, r) = one(rows) else {
        panic!()
    };
    assert_eq!(
        (
            r.stage_id,
            r.attempt,
            r.input,
            r.output,
            r.shuffle_read,
            r.shuffle_write
        ),
        (3, 1, 1000, 5, 7, 32)
    );
}

#[test]
fn application_and_executors() {
    let start = r#"{"Event":"SparkListenerApplicationStart","App Name":"acceptance-basic","App ID":"local-1795981136444","Timestamp":1795981135073,"User":"root"}"#;
    let Event::AppStart { app, attempt_id } = one(start) else {
        panic!()
    };
    assert_eq!(app.app_id, "local-1795981136444");
    assert_eq!(
        (app.name.as_deref(), app.user.as_deref()),
        (Some("acceptance-basic"), Some("root"))
    );
    assert_eq!((app.start_ms, attempt_id), (Some(1795981135073), None));
    let end = r#"{"Event":"SparkListenerApplicationEnd","Timestamp":1795981163935,"ExitCode":0}"#;
    assert!(matches!(
        one(end),
        Event::AppEnd {
            end_ms: 1795981163935,
            exit_code: Some(0)
        }
    ));
    let end35 = r#"{"Event":"SparkListenerApplicationEnd","Timestamp":1795981163935}"#;
    assert!(matches!(
        one(end35),
        Event::AppEnd {
            exit_code: None,
            ..
        }
    ));
    let log = r#"{"Event":"SparkListenerLogStart","Spark Version":"3.5.5"}"#;
    assert!(matches!(one(log), Event::LogStart { spark_version } if spark_version == "3.5.5"));

    let added = r#"{"Event":"SparkListenerExecutorAdded","Timestamp":1795981136581,"Executor ID":"driver","Executor Info":{"Host":"192.0.2.2","Total Cores":2,"Log Urls":{},"Attributes":{},"Resources":{},"Resource Profile Id":0}}"#;
    let Event::Executor(e) = one(added) else {
        panic!()
    };
    assert_eq!(
        (e.executor_id.as_str(), e.active, e.max_tasks),
        ("driver", Some(true), Some(2))
    );
    assert_eq!(e.add_ms, Some(1795981136581));
    let removed = r#"{"Event":"SparkListenerExecutorRemoved","Timestamp":9,"Executor ID":"3","Removed Reason":"Container killed by YARN"}"#;
    let Event::Executor(e) = one(removed) else {
        panic!()
    };
    assert_eq!((e.active, e.remove_ms), (Some(false), Some(9)));
    assert_eq!(e.remove_reason.as_deref(), Some("Container killed by YARN"));
}

#[test]
fn sql_executions() {
    let start = r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":0,"rootExecutionId":0,"description":"report for eu","details":"x","physicalPlanDescription":"== Plan ==","sparkPlanInfo":{"nodeName":"X","children":[]},"time":1796009912000,"modifiedConfigs":{},"jobTags":[]}"#;
    let Event::SqlStart {
        execution_id,
        description,
        time_ms,
        ..
    } = one(start)
    else {
        panic!()
    };
    assert_eq!(
        (execution_id, description.as_deref(), time_ms),
        (0, Some("report for eu"), Some(1796009912000))
    );
    let ok = r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":0,"time":1796009912903,"errorMessage":""}"#;
    assert!(matches!(
        one(ok),
        Event::SqlEnd {
            execution_id: 0,
            error: None,
            ..
        }
    ));
    let old = r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":3,"time":5}"#;
    assert!(matches!(
        one(old),
        Event::SqlEnd {
            execution_id: 3,
            error: None,
            ..
        }
    ));
    let failed = r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":2,"time":1,"errorMessage":"Job aborted due to stage failure"}"#;
    assert!(matches!(one(failed), Event::SqlEnd { error: Some(_), .. }));
}

#[test]
fn streaming_progress_sums_sources() {
    let line = r#"{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{"id":"30da8717-02c7-4daf-834e-cbe80891e152","runId":"5971e8c3","name":"rate_fixture","timestamp":"2026-11-30T03:38:35.474Z","batchId":2,"batchDuration":380,"durationMs":{"triggerExecution":377,"addBatch":107},"eventTime":{},"stateOperators":[],"sources":[{"description":"Rate","numInputRows":10,"inputRowsPerSecond":20.0,"processedRowsPerSecond":"NaN","metrics":{}},{"numInputRows":5,"inputRowsPerSecond":1.5,"processedRowsPerSecond":3.0}],"sink":{"description":"NoopTable"}}}"#;
    let Event::StreamingProgress(p) = one(line) else {
        panic!()
    };
    assert_eq!(p.query_id, "30da8717-02c7-4daf-834e-cbe80891e152");
    assert_eq!(
        (p.name.as_deref(), p.batch_id, p.num_input_rows),
        (Some("rate_fixture"), 2, 15)
    );
    assert_eq!(
        (p.input_rows_per_second, p.processed_rows_per_second),
        (21.5, 3.0)
    );
    assert_eq!(p.batch_duration_ms, 377);
    let unnamed = r#"{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{"id":"q","name":null,"batchId":0,"numInputRows":7,"inputRowsPerSecond":1.0,"processedRowsPerSecond":2.0,"durationMs":{}}}"#;
    let Event::StreamingProgress(p) = one(unnamed) else {
        panic!()
    };
    assert_eq!(
        (p.name, p.num_input_rows, p.batch_duration_ms),
        (None, 7, 0)
    );
}

#[test]
fn streaming_progress_reads_watermark_state_phases_and_sources() {
    // Spark 4.1.1 (tests/data/streaming-4.1.1), abridged: before the first watermark Spark
    // reports the epoch, which is no watermark.
    let first = r#"{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{"id":"1a8d25d9-1b6e-4b84-90af-3bc3c0da28ec","runId":"05ee1333-6b6a-4ea8-99d9-c7b84cb67ef4","name":"windowed_counts","timestamp":"2026-12-01T01:03:28.344Z","batchId":0,"batchDuration":4663,"durationMs":{"triggerExecution":4662,"queryPlanning":1633,"getBatch":2,"commitOffsets":98,"latestOffset":0,"addBatch":2737,"walCommit":149},"eventTime":{"watermark":"1970-01-01T00:00:00.000Z"},"stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":0,"numRowsUpdated":0,"memoryUsedBytes":480,"numRowsDroppedByWatermark":0,"customMetrics":{"stateOnCurrentVersionSizeBytes":192}}],"sources":[{"description":"RateStreamV2[rowsPerSecond=20, rampUpTimeSeconds=0, numPartitions=2","startOffset":null,"endOffset":"0","numInputRows":0,"inputRowsPerSecond":0.0,"processedRowsPerSecond":0.0,"metrics":{}}],"sink":{"description":"NoopTable","numOutputRows":0}}}"#;
    let Event::StreamingProgress(p) = one(first) else {
        panic!()
    };
    assert_eq!(p.start_ms, Some(1_796_087_008_344));
    assert_eq!((p.watermark_ms, p.event_time_max_ms), (None, None));
    assert_eq!(p.phases_ms.len(), 7);
    assert!(p.phases_ms.contains(&("commitOffsets".to_string(), 98)));
    let op = &p.state_operators[0];
    assert_eq!(
        (op.name.as_str(), op.rows_total, op.memory_bytes),
        ("stateStoreSave", 0, 480)
    );
    assert!(p.sources[0]
        .description
        .starts_with("RateStreamV2[rowsPerSecond=20"));
    let later = first
        .replace(r#""batchId":0"#, r#""batchId":24"#)
        .replace(
            r#"{"watermark":"1970-01-01T00:00:00.000Z"}"#,
            r#"{"min":"2026-12-01T01:03:54.046Z","avg":"2026-12-01T01:03:54.521Z","watermark":"2026-12-01T01:03:51.996Z","max":"2026-12-01T01:03:54.996Z"}"#,
        );
    let Event::StreamingProgress(p) = one(&later) else {
        panic!()
    };
    let w = p.watermark_ms.expect("a watermark");
    assert_eq!(p.event_time_max_ms.map(|m| m - w), Some(3_000));
}

#[test]
fn ignored_unknown_and_broken_lines() {
    assert!(parse_line(b"").unwrap().is_none());
    assert!(parse_line(b"  \r").unwrap().is_none());
    assert!(
        parse_line(br#"{"Event":"SparkListenerBlockManagerAdded","Stage ID":0}"#)
            .unwrap()
            .is_none()
    );
    // A task start without its Task Info is an error, not silently a start.
    assert!(parse_line(br#"{"Event":"SparkListenerTaskStart","Stage ID":0}"#).is_err());
    let Some(Event::TaskStart(t)) = parse_line(
        br#"{"Event":"SparkListenerTaskStart","Stage ID":4,"Stage Attempt ID":1,"Task Info":{"Task ID":17,"Index":0,"Executor ID":"2","Launch Time":1}}"#,
    )
    .unwrap() else {
        panic!("expected a task start")
    };
    assert_eq!(
        (t.stage_id, t.attempt, t.task_id, t.executor_id.as_str()),
        (4, 1, 17, "2")
    );
    assert!(parse_line(
        br#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveSQLMetricUpdates"}"#
    )
    .unwrap()
    .is_none());
    let e = parse_line(br#"{"Event":"com.example.MyEvent","x":1}"#).unwrap_err();
    assert_eq!(e.kind(), "unknown_event");
    for bad in [
        &br#"{"Event":"SparkListenerTaskEnd","Stage ID":3,"Task Info":{"Task"#[..],
        br#"{"Event":"SparkListenerJobEnd","Job ID":"x"}"#,
        br#"{"Event":"SparkListenerJobEnd","Completion Time":1}"#,
        b"not json",
        b"{\"Event\":\"SparkListenerExecutorRemoved\",\"Executor ID\":\"\xff\xfe\"}",
        b"[1,2]",
    ] {
        let e = parse_line(bad).unwrap_err();
        assert_eq!(e.kind(), "parse", "{e}");
    }
}

#[test]
fn event_key_need_not_come_first() {
    let line =
        r#"{"Job ID":1,"Event":"SparkListenerJobEnd","Job Result":{"Result":"JobSucceeded"}}"#;
    assert!(matches!(
        one(line),
        Event::JobEnd {
            job_id: 1,
            succeeded: true,
            ..
        }
    ));
    let spaced =
        r#"{"Event": "SparkListenerJobEnd", "Job ID": 2, "Job Result": {"Result": "JobFailed"}}"#;
    assert!(matches!(
        one(spaced),
        Event::JobEnd {
            job_id: 2,
            succeeded: false,
            ..
        }
    ));
}

#[test]
fn task_end_fast_path_and_full_scan_agree_on_odd_shapes() {
    let spark = br#"{"Event":"SparkListenerTaskEnd","Stage ID":2,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":9,"Executor ID":"1","Launch Time":100,"Finish Time":350,"Failed":false,"Killed":false,"Accumulables":[{"ID":1,"Name":"x","Update":"\"Task Metrics\":{\"Executor Run Time\":999}","Value":"]}"}]},"Task Executor Metrics":{"JVMHeapMemory":1},"Task Metrics":{"Executor Run Time":200,"JVM GC Time":7,"Shuffle Read Metrics":{"Remote Bytes Read":3,"Local Bytes Read":4}}}"#;
    // The same members in another order: only the full scan can read it.
    let reordered = br#"{"Event":"SparkListenerTaskEnd","Task Metrics":{"Executor Run Time":200,"JVM GC Time":7,"Shuffle Read Metrics":{"Remote Bytes Read":3,"Local Bytes Read":4}},"Stage ID":2,"Stage Attempt ID":0,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":9,"Executor ID":"1","Launch Time":100,"Finish Time":350,"Failed":false,"Killed":false,"Accumulables":[]}}"#;
    // No metrics at all (some failures): zero metrics, not an error.
    let bare = br#"{"Event":"SparkListenerTaskEnd","Stage ID":2,"Stage Attempt ID":0,"Task End Reason":{"Reason":"ExceptionFailure"},"Task Info":{"Task ID":10,"Executor ID":"1","Launch Time":100,"Finish Time":350,"Failed":true,"Killed":false,"Accumulables":[]}}"#;
    // A member after `Task Metrics`: the fast path reads the metrics, sees the line go on, and
    // the full scan starts over (nothing counted twice).
    let trailing = String::from_utf8(spark.to_vec())
        .unwrap()
        .replace("}}}", "}},\"Extra\":[1]}");
    for line in [&spark[..], &reordered[..], trailing.as_bytes()] {
        let Some(Event::TaskEnd(t)) = parse_line(line).unwrap() else {
            panic!("task end expected")
        };
        assert_eq!((t.task_id, t.stage_id, t.executor_id.as_str()), (9, 2, "1"));
        assert_eq!(t.metrics.run_time_ms, 200, "not the decoy inside a string");
        assert_eq!(t.metrics.gc_time_ms, 7);
        assert_eq!(t.metrics.shuffle_read_bytes, 7);
        assert_eq!(t.finish_ms - t.launch_ms, 250);
    }
    let Some(Event::TaskEnd(t)) = parse_line(bare).unwrap() else {
        panic!("task end expected")
    };
    assert_eq!(t.outcome, TaskOutcome::Failed);
    assert_eq!(t.metrics, TaskTotals::default());
    // A line cut inside Accumulables is an error, never a task with made-up metrics.
    assert!(parse_line(&spark[..200]).is_err());
}

/// A task end with what a diagnosis reads: locality, getting-result time, deserialization,
/// result serialization, fetch wait and peak execution memory (Spark 4.1.1's member order).
const TASK_END_DIAG: &str = r#"{"Event":"SparkListenerTaskEnd","Stage ID":4,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":31,"Index":0,"Attempt":0,"Partition ID":0,"Launch Time":1000,"Executor ID":"1","Host":"192.0.2.3","Locality":"NODE_LOCAL","Speculative":false,"Getting Result Time":1363,"Finish Time":1383,"Failed":false,"Killed":false,"Accumulables":[{"ID":1,"Name":"x","Update":"\"Locality\":\"ANY\"","Value":"1"}]},"Task Executor Metrics":{"JVMHeapMemory":1},"Task Metrics":{"Executor Deserialize Time":178,"Executor Deserialize CPU Time":1,"Executor Run Time":124,"Executor CPU Time":2,"Peak Execution Memory":65536,"Peak On Heap Execution Memory":65536,"Result Size":5712,"JVM GC Time":0,"Result Serialization Time":9,"Memory Bytes Spilled":0,"Disk Bytes Spilled":0,"Shuffle Read Metrics":{"Remote Blocks Fetched":2,"Local Blocks Fetched":1,"Fetch Wait Time":31,"Remote Bytes Read":100,"Local Bytes Read":23,"Push Based Shuffle":{"Merged Remote Bytes Read":0}},"Shuffle Write Metrics":{"Shuffle Bytes Written":0,"Shuffle Write Time":0,"Shuffle Records Written":0},"Input Metrics":{"Bytes Read":0,"Records Read":0},"Output Metrics":{"Bytes Written":0,"Records Written":0},"Updated Blocks":[]}}"#;

#[test]
fn task_end_reads_locality_and_diagnosis_metrics() {
    // Task Metrics first: only the full scan reads it; both must agree.
    let (head, metrics) =
        TASK_END_DIAG.split_at(TASK_END_DIAG.find(r#","Task Executor Metrics""#).unwrap());
    let reordered = format!(
        r#"{{"Event":"SparkListenerTaskEnd",{},{}}}"#,
        &metrics[1..metrics.len() - 1],
        &head[r#"{"Event":"SparkListenerTaskEnd","#.len()..]
    );
    for line in [TASK_END_DIAG, reordered.as_str()] {
        let Event::TaskEnd(t) = one(line) else {
            panic!()
        };
        assert_eq!(
            t.locality,
            Some(Locality::NodeLocal),
            "not the decoy in a string"
        );
        let m = t.metrics;
        assert_eq!((m.deserialize_ms, m.fetch_wait_ms), (178, 31));
        assert_eq!(m.peak_execution_memory_bytes, 65536);
        assert_eq!(m.shuffle_read_bytes, 123);
        // Spark UI: duration 383 - run 124 - deserialize 178 - result serialization 9 -
        // getting result (1383 - 1363 = 20).
        assert_eq!(m.scheduler_delay_ms, 52);
    }
}

#[test]
fn locality_values_and_scheduler_delay_edges() {
    let with = |locality: &str| TASK_END_DIAG.replace(r#""NODE_LOCAL""#, locality);
    for (v, want) in [
        ("PROCESS_LOCAL", Locality::ProcessLocal),
        ("RACK_LOCAL", Locality::RackLocal),
        ("NO_PREF", Locality::NoPref),
        ("ANY", Locality::Any),
        ("SOMEWHERE_NEW", Locality::Other),
    ] {
        let Event::TaskEnd(t) = one(&with(&format!("\"{v}\""))) else {
            panic!()
        };
        assert_eq!(t.locality, Some(want), "{v}");
    }
    // No locality member: none counted.
    let Event::TaskEnd(t) = one(&TASK_END_DIAG.replace(r#""Locality":"NODE_LOCAL","#, "")) else {
        panic!()
    };
    assert_eq!(t.locality, None);
    // Not getting a result (Getting Result Time 0): the whole rest is delay.
    let Event::TaskEnd(t) = one(&TASK_END_DIAG.replace(
        r#""Getting Result Time":1363"#,
        r#""Getting Result Time":0"#,
    )) else {
        panic!()
    };
    assert_eq!(t.metrics.scheduler_delay_ms, 72);
    // Parts larger than the duration: 0, never negative.
    let Event::TaskEnd(t) =
        one(&TASK_END_DIAG.replace(r#""Executor Run Time":124"#, r#""Executor Run Time":999"#))
    else {
        panic!()
    };
    assert_eq!(t.metrics.scheduler_delay_ms, 0);
    // A task end without metrics has no scheduler delay (the Spark UI shows 0).
    let bare = r#"{"Event":"SparkListenerTaskEnd","Stage ID":2,"Stage Attempt ID":0,"Task End Reason":{"Reason":"ExecutorLostFailure"},"Task Info":{"Task ID":10,"Executor ID":"1","Launch Time":100,"Locality":"ANY","Finish Time":350,"Failed":true,"Killed":false,"Accumulables":[]},"Task Metrics":null}"#;
    let Event::TaskEnd(t) = one(bare) else {
        panic!()
    };
    assert_eq!(t.metrics, TaskTotals::default());
    assert_eq!(t.locality, Some(Locality::Any));
}

// --- Cost and cached data (lines shaped as Spark 4.1.1 writes them, shortened) ---

#[test]
fn executor_cores_and_task_cpus() {
    let added = r#"{"Event":"SparkListenerExecutorAdded","Timestamp":1795981136581,"Executor ID":"1","Executor Info":{"Host":"192.0.2.2","Total Cores":4,"Log Urls":{},"Attributes":{},"Resources":{},"Resource Profile Id":0}}"#;
    let Event::Executor(e) = one(added) else {
        panic!()
    };
    assert_eq!((e.total_cores, e.add_ms), (Some(4), Some(1795981136581)));
    let env = r#"{"Event":"SparkListenerEnvironmentUpdate","JVM Information":{"Java Version":"17"},"Spark Properties":{"spark.master":"local-cluster[2,1,1024]","spark.task.cpus":"2","spark.app.name":"x"},"Hadoop Properties":{},"System Properties":{},"Metrics Properties":{},"Classpath Entries":{"/a.jar":"System Classpath"}}"#;
    let Event::AppProps(p) = one(env) else {
        panic!()
    };
    assert_eq!(p.task_cpus, Some(2));
    let unset = r#"{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{"spark.master":"local[2]"}}"#;
    let Event::AppProps(p) = one(unset) else {
        panic!()
    };
    assert_eq!(p.task_cpus, None);
    let props = p.properties.expect("every property");
    assert_eq!(
        props.get("spark.master").map(String::as_str),
        Some("local[2]")
    );
    assert_eq!(e.resource_profile_id, Some(0));
}

#[test]
fn resource_profiles_give_executor_memory_requests() {
    // Spark 4.1.1 local-cluster, then one with spark.executor.memoryOverhead and PySpark memory
    // set.
    let added = r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":0,"Executor Resource Requests":{"memory":{"Resource Name":"memory","Amount":512,"Discovery Script":"","Vendor":""},"offHeap":{"Resource Name":"offHeap","Amount":0,"Discovery Script":"","Vendor":""}},"Task Resource Requests":{"cpus":{"Resource Name":"cpus","Amount":1.0}}}"#;
    let Event::AppProps(p) = one(added) else {
        panic!()
    };
    assert_eq!(
        p.profiles,
        [ResourceProfileObs {
            id: 0,
            memory_mib: Some(512),
            off_heap_mib: Some(0),
            ..Default::default()
        }]
    );
    assert_eq!((p.task_cpus, p.properties), (None, None));
    let set = r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":3,"Executor Resource Requests":{"cores":{"Resource Name":"cores","Amount":4},"memory":{"Resource Name":"memory","Amount":4096},"memoryOverhead":{"Resource Name":"memoryOverhead","Amount":1024},"offHeap":{"Resource Name":"offHeap","Amount":2048},"pyspark.memory":{"Resource Name":"pyspark.memory","Amount":512},"gpu":{"Resource Name":"gpu","Amount":1}}}"#;
    let Event::AppProps(p) = one(set) else {
        panic!()
    };
    assert_eq!(
        p.profiles,
        [ResourceProfileObs {
            id: 3,
            memory_mib: Some(4096),
            overhead_mib: Some(1024),
            off_heap_mib: Some(2048),
            pyspark_mib: Some(512),
        }]
    );
    // A wrong shape is a typed error (counted by the tailer), never a panic.
    for bad in [
        r#"{"Event":"SparkListenerResourceProfileAdded"}"#,
        r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":-1}"#,
        r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":0,"Executor Resource Requests":{"memory":{"Amount":"a lot"}}}"#,
    ] {
        assert!(parse_line(bad.as_bytes()).is_err(), "{bad}");
    }
    // A negative or fractional amount is left out.
    let odd = r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":1,"Executor Resource Requests":{"memory":{"Amount":-5},"offHeap":{"Amount":1e300}}}"#;
    let Event::AppProps(p) = one(odd) else {
        panic!()
    };
    assert_eq!(
        (p.profiles[0].memory_mib, p.profiles[0].off_heap_mib),
        (None, None)
    );
}

#[test]
fn persisted_rdds_blocks_and_unpersist() {
    let sub = r#"{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":4,"Stage Attempt ID":0,"Stage Name":"count at <stdin>:1","Number of Tasks":2,"RDD Info":[{"RDD ID":12,"Name":"In-memory table t","Scope":"{\"id\":\"3\",\"name\":\"InMemoryTableScan\"}","Callsite":"count at <stdin>:1","Parent IDs":[11],"Storage Level":{"Use Disk":true,"Use Memory":true,"Use Off Heap":false,"Deserialized":true,"Replication":1},"Barrier":false,"DeterministicLevel":"DETERMINATE","Number of Partitions":2,"Number of Cached Partitions":0,"Memory Size":0,"Disk Size":0},{"RDD ID":11,"Name":"MapPartitionsRDD","Callsite":"x","Parent IDs":[],"Storage Level":{"Use Disk":false,"Use Memory":false,"Use Off Heap":false,"Deserialized":false,"Replication":1},"Barrier":false,"Number of Partitions":2,"Number of Cached Partitions":0,"Memory Size":0,"Disk Size":0}],"Parent IDs":[],"Details":"","Submission Time":100,"Accumulables":[],"Resource Profile Id":0},"Properties":{}}"#;
    let Event::StageSubmitted(_, rdds) = one(sub) else {
        panic!()
    };
    assert_eq!(
        rdds,
        [RddInfoObs {
            rdd_id: 12,
            name: "In-memory table t".into(),
            partitions: 2
        }],
        "only the RDD stored somewhere"
    );
    let block = r#"{"Event":"SparkListenerBlockUpdated","Block Updated Info":{"Block Manager ID":{"Executor ID":"0","Host":"192.0.2.2","Port":40453},"Block ID":"rdd_12_1","Storage Level":{"Use Disk":false,"Use Memory":true,"Use Off Heap":false,"Deserialized":true,"Replication":1},"Memory Size":4328,"Disk Size":0}}"#;
    let Event::BlockUpdated(b) = one(block) else {
        panic!()
    };
    assert_eq!(
        b,
        BlockObs {
            rdd_id: 12,
            partition: 1,
            executor_id: "0".into(),
            memory_bytes: 4328,
            disk_bytes: 0,
            stored: true
        }
    );
    // Removed: a level with neither memory nor disk, the old sizes kept for Spark's deltas.
    let removed = block.replace(r#""Use Memory":true"#, r#""Use Memory":false"#);
    let Event::BlockUpdated(b) = one(&removed) else {
        panic!()
    };
    assert_eq!((b.stored, b.memory_bytes, b.disk_bytes), (false, 0, 0));
    // Broadcast pieces are not RDD blocks.
    let broadcast = block.replace("rdd_12_1", "broadcast_3_piece0");
    assert!(parse_line(broadcast.as_bytes()).unwrap().is_none());
    let odd = block.replace("rdd_12_1", "rdd_x_1");
    assert!(parse_line(odd.as_bytes()).unwrap().is_none());
    let unpersist = r#"{"Event":"SparkListenerUnpersistRDD","RDD ID":12}"#;
    assert!(matches!(
        one(unpersist),
        Event::RddUnpersisted { rdd_id: 12 }
    ));
}

/// Every plain or zstd event log under `tests/data` (Spark 3.3 to 4.3), as lines.
fn fixture_lines() -> Vec<Vec<u8>> {
    fn walk(dir: &std::path::Path, out: &mut Vec<Vec<u8>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                walk(&path, out);
                continue;
            }
            let text = if name.ends_with(".zstd") {
                zstd::stream::decode_all(std::fs::File::open(&path).unwrap()).unwrap()
            } else if (name.starts_with("local-") || name.starts_with("events_"))
                && !name.contains('.')
            {
                std::fs::read(&path).unwrap()
            } else {
                continue;
            };
            out.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        &mut out,
    );
    out
}

/// Job starts, stage events and SQL starts and ends are read through `scan::pick` (the members
/// their serde types
/// read, then serde): on every such line Spark wrote in the fixtures, the same event as serde
/// reading the whole line.
#[test]
fn picked_events_are_those_of_the_whole_line() {
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for line in fixture_lines() {
        let Ok(name) = event_name(&line) else {
            continue;
        };
        let whole = match name.as_ref() {
            "SparkListenerStageSubmitted" | "SparkListenerStageCompleted" => stage(
                serde_json::from_slice(&line).unwrap(),
                name == "SparkListenerStageSubmitted",
            ),
            "SparkListenerJobStart" => job_start(serde_json::from_slice(&line).unwrap()),
            SQL_START | SQL_END => {
                let s: json::SqlEvent = serde_json::from_slice(&line).unwrap();
                let picked = parse_line(&line).unwrap().unwrap();
                let (id, time, other) = match picked {
                    Event::SqlStart {
                        execution_id,
                        time_ms,
                        description,
                        tags,
                        ..
                    } => (execution_id, time_ms, format!("{description:?} {tags:?}")),
                    Event::SqlEnd {
                        execution_id,
                        time_ms,
                        error,
                    } => (execution_id, time_ms, format!("{error:?}")),
                    e => panic!("{e:?}"),
                };
                let whole = if name == SQL_START {
                    format!("{:?} {:?}", s.description, s.job_tags.unwrap_or_default())
                } else {
                    format!("{:?}", s.error.filter(|e| !e.is_empty()))
                };
                assert_eq!((id, time, other), (s.execution_id, s.time, whole));
                *seen.entry("sql").or_default() += 1;
                continue;
            }
            _ => continue,
        };
        *seen
            .entry(if name.contains("Stage") {
                "stage"
            } else {
                "job"
            })
            .or_default() += 1;
        let picked = parse_line(&line).unwrap().unwrap();
        assert_eq!(format!("{picked:?}"), format!("{whole:?}"));
    }
    // The fixtures hold hundreds of each, cached RDDs and failed stages among them.
    assert!(
        seen["stage"] > 200 && seen["job"] > 100 && seen["sql"] > 100,
        "{seen:?}"
    );
}

/// `SparkListenerStageExecutorMetrics` (Spark 4.1.1 with `spark.eventLog.logStageExecutorMetrics`
/// and `spark.executor.processTreeMetrics.enabled`): an executor's peaks over a stage attempt,
/// every whole-number metric kept; a metric that is not one is left out, not an error.
#[test]
fn stage_executor_metrics_give_the_peaks() {
    let line = r#"{"Event":"SparkListenerStageExecutorMetrics","Executor ID":"1","Stage ID":32,"Stage Attempt ID":0,"Executor Metrics":{"JVMHeapMemory":386263040,"JVMOffHeapMemory":104857600,"ProcessTreeJVMRSSMemory":869269504,"ProcessTreePythonRSSMemory":0,"TotalGCTime":785,"Odd":"x"}}"#;
    let Event::StagePeaks(p) = one(line) else {
        panic!()
    };
    assert_eq!(
        (p.stage_id, p.attempt, p.executor_id.as_str()),
        (32, 0, "1")
    );
    assert!(p.metrics.contains(&("JVMHeapMemory".into(), 386263040)));
    assert!(p
        .metrics
        .contains(&("ProcessTreeJVMRSSMemory".into(), 869269504)));
    assert!(!p.metrics.iter().any(|(k, _)| k == "Odd"));
}
