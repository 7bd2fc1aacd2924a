//! Collectors are one concept (`src/sources/mod.rs`): a source that emits the existing observations
//! is
//! one type implementing `Collector`, run until shutdown or read once like the REST poller and the
//! event-log reader. Here a test-only source, a replay of recorded observations, is both, beside
//! the real event-log collector, and the model counts what it reported once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::model::{AppObs, JobObs, JobStatus, Model, ModelObserver, Observer, Source};
use spark_exporter::sources::eventlog::config::EventLogConfig;
use spark_exporter::sources::eventlog::plugin::EventLogs;
use spark_exporter::sources::{self, BoxFuture, CollectError, Collector};
use spark_exporter::telemetry::Telemetry;
use tokio_util::sync::CancellationToken;

const APP: &str = "app-replay";

/// A source that replays one application with `jobs` succeeded jobs, counting its runs.
struct Replay {
    jobs: u64,
    runs: AtomicUsize,
}

impl Replay {
    fn report(&self, o: &dyn Observer) {
        o.upsert_app(&AppObs {
            app_id: APP.into(),
            name: Some("replayed".into()),
            start_ms: Some(1_000),
            ..Default::default()
        });
        for id in 0..self.jobs {
            o.upsert_job(
                APP,
                &JobObs {
                    job_id: id,
                    job_group: Some("replay".into()),
                    description: Some("a replayed job".into()),
                    status: JobStatus::Succeeded,
                    submission_ms: Some(1_000),
                    completion_ms: Some(2_000),
                    stage_ids: vec![],
                    sql_execution_id: None,
                    tags: vec![],
                    name: None,
                    client_app: None,
                },
            );
        }
        o.app_delivered(APP);
        self.runs.fetch_add(1, Ordering::SeqCst);
    }
}

impl Collector for Replay {
    fn source(&self) -> Source {
        sources::source("rest")
    }
    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()> {
        let me = Arc::new(Replay {
            jobs: self.jobs,
            runs: AtomicUsize::new(0),
        });
        Box::pin(async move {
            // Report, tell the start-up state, then report again each tick until shutdown.
            me.report(&*observer);
            observer.startup_done();
            loop {
                tokio::select! {
                    _ = finish.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(20)) => me.report(&*observer),
                }
            }
        })
    }
    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>> {
        self.report(&*observer);
        Box::pin(async { Ok(()) })
    }
}

fn jobs(m: &Model) -> u64 {
    m.view(|v| {
        v.app(APP)
            .map(|a| a.groups().iter().map(|g| g.jobs[0].1).sum())
            .unwrap_or(0)
    })
}

#[tokio::test]
async fn a_new_source_fills_once_beside_the_event_log_collector() {
    let settings = Arc::new(Settings::default());
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/spark-4.1.1-basic/eventlog"
    );
    let replay = Arc::new(Replay {
        jobs: 3,
        runs: AtomicUsize::new(0),
    });
    let collectors: Vec<Arc<dyn Collector>> = vec![
        Arc::new(
            EventLogs::new(
                &EventLogConfig::of(&settings),
                sources::counting("event_log", telemetry.clone()),
            )
            .paths(vec![log.into()]),
        ),
        replay.clone(),
    ];
    let errors = sources::fill_once(&collectors, &model).await;
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(replay.runs.load(Ordering::SeqCst), 1);
    assert_eq!(jobs(&model), 3);
    // The event log's application is there too, whole.
    let logged = model.view(|v| v.apps().filter(|a| a.id().as_ref() != APP).count());
    assert_eq!(logged, 1);
}

#[tokio::test]
async fn a_new_source_runs_until_shutdown_and_counts_once() {
    let settings = Arc::new(Settings::default());
    let model = Model::new(&settings, Arc::new(Telemetry::default()));
    let collectors: Vec<Arc<dyn Collector>> = vec![Arc::new(Replay {
        jobs: 4,
        runs: AtomicUsize::new(0),
    })];
    let finish = CancellationToken::new();
    let mut tasks = sources::spawn_all(&collectors, &model, &finish);
    // Reported many times over; each job counts once.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(jobs(&model), 4);
    assert!(model.view(|v| v.startup_complete()));
    finish.cancel();
    tokio::time::timeout(Duration::from_secs(5), async {
        while tasks.join_next().await.is_some() {}
    })
    .await
    .expect("the collector stops at shutdown");
    assert_eq!(jobs(&model), 4);
}
