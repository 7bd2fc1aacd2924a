//! Wiring: parse flags and configuration, start the sources, the server and the expiry loop,
//! wait for SIGTERM/SIGINT, then drain under a timeout.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use spark_exporter::cli::{Cli, Command, EXIT_CONFIG};
use spark_exporter::config::{self, LogFormat, Settings};
use spark_exporter::export::{otlp, prometheus};
use spark_exporter::model::{Model, Source};
use spark_exporter::telemetry::Telemetry;
use spark_exporter::webconfig::{self, WebSecurity};
use spark_exporter::{eventlog, server, spark};

use tokio_util::sync::CancellationToken;

/// How long in-flight work may take after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(EXIT_CONFIG as u8);
        }
    };
    let settings = match config::load(&cli.overrides()) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("spark-exporter: {e}");
            return ExitCode::from(EXIT_CONFIG as u8);
        }
    };
    let security = match &settings.web.config_file {
        None => Arc::new(WebSecurity::open()),
        Some(p) => match webconfig::load(p) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                eprintln!("spark-exporter: {e}");
                return ExitCode::from(EXIT_CONFIG as u8);
            }
        },
    };
    if let Err(e) = otlp::settings(&settings.otlp) {
        eprintln!("spark-exporter: {e}");
        return ExitCode::from(EXIT_CONFIG as u8);
    }
    init_logging(&settings);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("spark-exporter: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Some(Command::CheckConfig) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&*settings).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Some(Command::Dump {
            event_log,
            openmetrics,
        }) => rt.block_on(dump(settings, &cli.spark_url, event_log, openmetrics)),
        Some(Command::Run) | None => rt.block_on(run(settings, security)),
    }
}

fn init_logging(s: &Settings) {
    let filter =
        tracing_subscriber::EnvFilter::try_new(format!("{},hyper=warn,reqwest=warn", s.log.level))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match s.log.format {
        LogFormat::Json => b.json().init(),
        LogFormat::Logfmt => b.with_ansi(false).init(),
    }
}

async fn dump(
    settings: Arc<Settings>,
    url_flags: &[String],
    paths: Vec<std::path::PathBuf>,
    om: bool,
) -> ExitCode {
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let mut ok = true;
    if !paths.is_empty() {
        let observer = model.observer(Source::EventLog);
        if let Err(e) = eventlog::ingest_paths(&paths, &settings, &observer, &telemetry) {
            tracing::error!(error = %e, "Reading the event logs failed.");
            ok = false;
        }
    }
    // With --event-log only, do not also poll the default UI URL.
    if (paths.is_empty() || !url_flags.is_empty()) && !settings.spark.urls.is_empty() {
        let observer = Arc::new(model.observer(Source::Rest));
        if let Err(e) = spark::poll_once(settings.clone(), observer, telemetry).await {
            tracing::error!(error = %e, "Polling failed.");
            ok = false;
        }
    }
    model.flush_pending();
    match prometheus::render(&prometheus::registry(model), om) {
        Ok(s) => print!("{s}"),
        Err(_) => return ExitCode::FAILURE,
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn run(settings: Arc<Settings>, security: Arc<WebSecurity>) -> ExitCode {
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let listener = match server::bind(&settings).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "Cannot start the server.");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(address = %settings.web.listen_address, path = %settings.web.telemetry_path, "Serving metrics.");
    let shutdown = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(server::serve(
        listener,
        settings.clone(),
        model.clone(),
        security,
        shutdown.clone(),
        SHUTDOWN_GRACE,
    ));
    if !settings.spark.urls.is_empty() {
        tasks.spawn(spark::run(
            settings.clone(),
            Arc::new(model.observer(Source::Rest)),
            telemetry.clone(),
            shutdown.clone(),
        ));
    }
    if !settings.event_log.dirs.is_empty() {
        tasks.spawn(eventlog::run(
            settings.clone(),
            Arc::new(model.observer(Source::EventLog)),
            telemetry.clone(),
            shutdown.clone(),
        ));
    }
    tasks.spawn(otlp::run(
        settings.clone(),
        model.clone(),
        telemetry.clone(),
        shutdown.clone(),
    ));
    tasks.spawn(expire_loop(model.clone(), shutdown.clone()));
    wait_for_signal().await;
    tracing::info!("Shutting down.");
    shutdown.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        tracing::warn!("Tasks did not stop within the grace period.");
    }
    ExitCode::SUCCESS
}

async fn expire_loop(model: Arc<Model>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => model.expire(model.now_ms()),
        }
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = tokio::signal::ctrl_c() => {},
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
