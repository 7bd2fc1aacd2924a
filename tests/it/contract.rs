//! The contract every source and every sink of the registries passes (issue 53; vector's
//! `run_and_assert_source_compliance`), run through the registries themselves, so a source or a
//! sink added there is checked here, and one without a fixture below fails by name.
//!
//! A source, built by `sources::configured` from settings that name only its fixture:
//! - start-up: it finishes its start-up read and its first round (`/readyz`);
//! - an application delivered: the model serves the fixture's application;
//! - health and status written: every place up on the status page, `spark_exporter_source_up`
//!   1 and `spark_exporter_source_ready` 1;
//! - shutdown honoured: after the finish signal it makes its last pass and returns;
//! - checkpoint round trip: its part names the application as reportable, and a restart from
//!   the part serves the application and publishes the same part again.
//!
//! A sink, started by `sinks::start_all` on a model that holds an application:
//! - the application delivered (scraped from the exposition, received by an OTLP collector);
//! - health and status written: its output up on the status page;
//! - the final state delivered after the flush, and the delivery task returns.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::health::Health;
use spark_exporter::lifecycle::Lifecycle;
use spark_exporter::model::Model;
use spark_exporter::sinks::{self, SinkEnv};
use spark_exporter::sources::eventlog::config::EventLogConfig;
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::sources::{self, Parts, Plugin};
use spark_exporter::telemetry::Telemetry;
use tokio_util::sync::CancellationToken;

use crate::support;
use support::rest::server::FakeSpark;
use support::rest::AppData;

/// The recorded Spark 4.1.1 run's application.
const LOGGED: &str = "local-1795981136444";
/// The fake REST server's application.
const LISTED: &str = "app-contract";

/// Settings that give source `name` only its fixture, the application it delivers, and what
/// keeps the fixture alive.
async fn source_fixture(name: &str) -> (Settings, &'static str, Box<dyn Any + Send>) {
    let mut s = Settings::default();
    SparkConfig::of_mut(&mut s).urls = vec![];
    SparkConfig::of_mut(&mut s).poll_interval = Duration::from_millis(100);
    EventLogConfig::of_mut(&mut s).poll_interval = Duration::from_millis(50);
    // The fixtures' applications ended long ago.
    s.model.app_retention = Duration::from_secs(100 * 365 * 86_400);
    s.checkpoint.path = Some("unused".into());
    match name {
        "rest" => {
            let mut app = AppData::generated(LISTED, 2);
            app.complete(2_000, 2_001);
            let server = FakeSpark::start(vec![app]).await;
            SparkConfig::of_mut(&mut s).urls = vec![server.url.clone()];
            (s, LISTED, Box::new(server))
        }
        "event_log" => {
            let dir = tempfile::tempdir().unwrap();
            let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/spark-4.1.1-basic/eventlog")
                .join(format!("eventlog_v2_{LOGGED}"));
            let dst = dir.path().join(format!("eventlog_v2_{LOGGED}"));
            std::fs::create_dir(&dst).unwrap();
            for f in std::fs::read_dir(&src).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
            }
            EventLogConfig::of_mut(&mut s).dirs = vec![spark_exporter::location::Location::local(
                dir.path().to_path_buf(),
            )];
            (s, LOGGED, Box::new(dir))
        }
        other => panic!("source {other} has no contract fixture: add one in tests/it/contract.rs"),
    }
}

/// Poll `done` every 20 ms for up to 15 s.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let end = tokio::time::Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(tokio::time::Instant::now() < end, "{what}: not within 15 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One run of the source the settings name, from `parts` and the model's `state` (a restart
/// from a checkpoint); the part it published and the model's state at its end.
async fn run_source(
    plugin: &dyn Plugin,
    settings: &Arc<Settings>,
    (parts, state): (&Arc<Parts>, Option<&[u8]>),
    app: &str,
) -> (Option<serde_json::Value>, Vec<u8>) {
    let name = plugin.name();
    let (telemetry, health) = (Arc::new(Telemetry::default()), Arc::new(Health::default()));
    let model = Model::new(settings, telemetry.clone());
    if let Some(state) = state {
        model.load_state(state).unwrap();
    }
    let collectors = sources::configured(settings, &telemetry, &health, parts);
    assert_eq!(collectors.len(), 1, "{name}: one collector for its places");
    assert_eq!(collectors[0].source(), sources::source(name), "{name}");
    let finish = CancellationToken::new();
    let mut tasks = sources::spawn_all(&collectors, &model, &finish);

    eventually(&format!("{name}: start-up read and first round"), || {
        model.view(|v| v.startup_complete()) && sources::ready(settings, &health)
    })
    .await;
    eventually(&format!("{name}: {app} served"), || {
        model.view(|v| v.apps().any(|a| a.id().as_ref() == app))
    })
    .await;

    let places = plugin.places(settings);
    let status = sources::status(settings, &health);
    assert_eq!(status.len(), places.len(), "{name}: {status:?}");
    let seen = telemetry.snapshot();
    for (row, place) in status.iter().zip(&places) {
        assert_eq!((row.title, &row.place), (plugin.title(), place), "{name}");
        assert_eq!(row.state.up(), Some(true), "{name}: {row:?}");
        let key = (name.to_string(), place.clone());
        assert_eq!(seen.source_up.get(&key), Some(&true), "{name}: {key:?}");
    }
    assert_eq!(seen.source_ready.get(name), Some(&true), "{name}");

    finish.cancel();
    tokio::time::timeout(Duration::from_secs(15), async {
        while tasks.join_next().await.is_some() {}
    })
    .await
    .unwrap_or_else(|_| panic!("{name}: did not stop after the finish signal"));
    let mut state = vec![];
    model.save_state(&mut state).unwrap();
    (parts.to_write().remove(name), state)
}

#[tokio::test]
async fn every_source_passes_the_contract() {
    for plugin in sources::REGISTRY {
        let name = plugin.name();
        let (settings, app, _fixture) = source_fixture(name).await;
        let settings = Arc::new(settings);
        let parts = Parts::new(true);
        let (part, state) = run_source(*plugin, &settings, (&parts, None), app).await;
        let part = part.unwrap_or_else(|| panic!("{name}: no checkpoint part"));
        assert!(
            plugin.reportable(&part).iter().any(|a| a == app),
            "{name}: {app} not reportable from {part}"
        );
        // A restart from the checkpoint: the part and the model's state.
        let again = Parts::new(true);
        again.set_loaded([(name.to_string(), part.clone())].into());
        let (part2, _) = run_source(*plugin, &settings, (&again, Some(&state)), app).await;
        assert_eq!(
            part2.as_ref(),
            Some(&part),
            "{name}: the part changed across a restart"
        );
    }
}

/// A model that holds the recorded 4.1.1 run.
async fn filled_model(settings: &Arc<Settings>) -> Arc<Model> {
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(settings, telemetry.clone());
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/spark-4.1.1-basic/eventlog"
    );
    let shot = sources::OneShot {
        paths: &[log.to_string()],
        urls_given: false,
    };
    let reads = sources::once(settings, &shot, &telemetry);
    let collectors: Vec<_> = reads.iter().map(|r| r.collector.clone()).collect();
    assert!(sources::fill_once(&collectors, &model).await.is_empty());
    model
}

/// What keeps a sink's fixture alive, and how to see that the application reached it.
enum SinkFixture {
    Prometheus { port: u16, stop: CancellationToken },
    Otlp(support::otlp::Receiver),
}

impl SinkFixture {
    async fn got(&self, app: &str) -> bool {
        match self {
            SinkFixture::Prometheus { port, .. } => {
                let port = *port;
                let body = tokio::task::spawn_blocking(move || {
                    support::http::http_get(
                        &format!("127.0.0.1:{port}"),
                        "/metrics",
                        Duration::from_secs(5),
                    )
                })
                .await
                .unwrap();
                body.is_ok_and(|(code, b)| code == 200 && String::from_utf8_lossy(&b).contains(app))
            }
            SinkFixture::Otlp(r) => r
                .received()
                .iter()
                .any(|got| format!("{:?}", got.req).contains(app)),
        }
    }
}

/// Settings that turn sink `name` on, with its fixture.
async fn sink_fixture(
    name: &str,
    model_settings: impl FnOnce(&mut Settings),
) -> (Settings, SinkFixture) {
    let port = support::files::free_port();
    let mut tree = serde_json::json!({
        "web": {"listen_address": format!("127.0.0.1:{port}")},
        "lifecycle": {"drain_scrapes": 1},
    });
    let fixture = match name {
        "prometheus" => SinkFixture::Prometheus {
            port,
            stop: CancellationToken::new(),
        },
        "otlp" => {
            let r = support::otlp::Receiver::start(support::otlp::Proto::Grpc, false).await;
            tree["otlp"] = serde_json::json!({
                "endpoint": r.endpoint(),
                "protocol": "grpc",
                "interval": "200ms",
            });
            SinkFixture::Otlp(r)
        }
        other => panic!("sink {other} has no contract fixture: add one in tests/it/contract.rs"),
    };
    spark_exporter::sources::declare_config();
    let mut s = spark_exporter::config::from_value_and_env(&tree, &|_| None).unwrap();
    model_settings(&mut s);
    (s, fixture)
}

#[tokio::test]
async fn every_sink_passes_the_contract() {
    for sink in sinks::REGISTRY {
        let name = sink.name();
        let (settings, fixture) =
            sink_fixture(name, |s| SparkConfig::of_mut(s).urls = vec![]).await;
        let settings = Arc::new(settings);
        let place = sink
            .place(&settings)
            .unwrap_or_else(|| panic!("{name}: off"));
        let model = filled_model(&settings).await;
        let (health, lifecycle) = (Arc::new(Health::default()), Arc::new(Lifecycle::default()));
        // The exposition is answered by the server.
        if let SinkFixture::Prometheus { stop, .. } = &fixture {
            let listener = spark_exporter::server::bind(&settings).await.unwrap();
            let handles = spark_exporter::server::Handles {
                settings: settings.clone(),
                model: model.clone(),
                health: health.clone(),
                security: Arc::new(spark_exporter::webconfig::WebSecurity::open()),
                lifecycle: lifecycle.clone(),
            };
            tokio::spawn(spark_exporter::server::serve(
                listener,
                handles,
                stop.clone(),
                Duration::from_secs(1),
            ));
        }
        let env = SinkEnv {
            model: model.clone(),
            lifecycle: lifecycle.clone(),
            handle: Default::default(),
            flush: CancellationToken::new(),
        };
        let mut started = sinks::start_all(&settings, &env, &health);
        let at = started
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}: not started"));
        let mine = started.swap_remove(at);
        assert_eq!(mine.final_delivery, sink.final_delivery());
        let delivered = tokio::spawn(mine.running.delivered);

        // The application delivered.
        let end = tokio::time::Instant::now() + Duration::from_secs(15);
        while !fixture.got(LOGGED).await {
            assert!(
                tokio::time::Instant::now() < end,
                "{name}: {LOGGED} never delivered"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Health and status written.
        let row = sinks::status(&settings, &health)
            .into_iter()
            .find(|r| r.title == sink.title())
            .unwrap_or_else(|| panic!("{name}: not on the status page"));
        assert_eq!(row.place, place);
        eventually(&format!("{name}: its output up"), || {
            sinks::status(&settings, &health)
                .iter()
                .any(|r| r.title == sink.title() && r.state.up() == Some(true))
        })
        .await;

        // The final state delivered after the flush, and the task returns.
        lifecycle.begin_drain();
        lifecycle.reach_final(model.generation());
        env.flush.cancel();
        if matches!(fixture, SinkFixture::Prometheus { .. }) {
            assert!(fixture.got(LOGGED).await, "{name}: the final scrape");
        }
        let sent = tokio::time::timeout(Duration::from_secs(15), delivered)
            .await
            .unwrap_or_else(|_| panic!("{name}: the final delivery did not end"))
            .unwrap();
        assert!(sent, "{name}: the final state was not delivered");
        if let SinkFixture::Prometheus { stop, .. } = &fixture {
            stop.cancel();
        }
    }
}
