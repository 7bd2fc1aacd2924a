//! Wiring: parse flags and configuration, start the sources, the server, OTLP and the expiry
//! loop, wait for SIGTERM/SIGINT (or, with `lifecycle.exit_when_app_ends`, the application's
//! end), then drain ([`spark_exporter::lifecycle::drain`]) and exit 0.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use spark_exporter::cli::{Cli, Command, EXIT_CONFIG};
use spark_exporter::config::{self, LogFormat, Settings};
use spark_exporter::health::Health;
use spark_exporter::lifecycle::drain::Drain;
use spark_exporter::lifecycle::{ending, Lifecycle};
use spark_exporter::model::Model;
use spark_exporter::sinks::{self, prometheus};
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::sources::{self, Parts};
use spark_exporter::telemetry::Telemetry;
use spark_exporter::webconfig::{self, WebSecurity};
use spark_exporter::{diagnose, server};

use tokio_util::sync::CancellationToken;

/// How long requests in flight may take once the drain has ended.
const IN_FLIGHT_GRACE: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    // A SIGTERM that comes before the handlers are installed waits (blocked, pending) instead
    // of killing the exporter: `run` installs them, then lets it through; the other commands
    // let it through at once.
    signals::defer();
    spark_exporter::alloc::tune();
    // The sources' configuration sections, before any key is read or listed.
    spark_exporter::sources::declare_config();
    let (cli, overrides) = match Cli::parse_from(std::env::args_os()) {
        Ok(c) if matches!(c.0.command, Some(Command::Run) | None) => c,
        Ok(c) => {
            signals::release();
            c
        }
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(EXIT_CONFIG as u8);
        }
    };
    let settings = match config::load(&overrides) {
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
        Some(Command::CheckConfig { format }) => {
            let text = match format.as_str() {
                "json" => serde_json::to_string_pretty(&*settings).unwrap_or_default() + "\n",
                _ => config::print::yaml(&settings),
            };
            out(&text);
            ExitCode::SUCCESS
        }
        Some(Command::Dump {
            event_log,
            openmetrics,
        }) => rt.block_on(dump(
            settings,
            overrides.sets("spark.urls"),
            event_log,
            openmetrics,
        )),
        Some(c @ Command::Diagnose { .. }) => diagnose_command(&rt, settings, c),
        Some(Command::Run) | None => {
            let code = rt.block_on(run(settings, security));
            // The drain bounded every wait; do not wait again for work left behind (a source's
            // last read still running on the blocking pool).
            rt.shutdown_background();
            code
        }
    }
}

/// `diagnose` (and `diagnose --review`): validate every flag at once, then run it on `rt`.
fn diagnose_command(
    rt: &tokio::runtime::Runtime,
    settings: Arc<Settings>,
    command: Command,
) -> ExitCode {
    let Command::Diagnose {
        event_log,
        app_id,
        format,
        ui_url,
        target_duration,
        fail_on,
        review,
        since,
        app_name,
        job_group,
        top,
        compare,
        baseline_runs,
        force,
    } = command
    else {
        // Only `main`'s `diagnose` arm calls this.
        return ExitCode::from(EXIT_CONFIG as u8);
    };
    let args = DiagnoseArgs {
        format,
        fail_on,
        request: diagnose::Request {
            event_logs: event_log,
            spark_url: SparkConfig::of(&settings).urls.first().cloned(),
            app_id,
            ui_url,
            target_seconds: target_duration
                .as_deref()
                .and_then(|v| humantime::parse_duration(v).ok())
                .map(|d| d.as_secs_f64()),
        },
        target_duration,
        review_flags: since.is_some()
            || app_name.is_some()
            || job_group.is_some()
            || top != REVIEW_TOP,
        review: review.then_some(ReviewArgs {
            since,
            app_name,
            job_group,
            top,
        }),
        compare_flags: baseline_runs != BASELINE_RUNS || force,
        compare: compare.map(|baseline| diagnose::compared::CompareRequest {
            run: diagnose::Request::default(),
            baseline,
            runs: baseline_runs,
            force,
        }),
    };
    match args.validate(&settings) {
        Ok(review) => rt.block_on(run_diagnose(settings, args, review)),
        Err(problems) => {
            eprintln!("spark-exporter diagnose: invalid flags:");
            for p in problems {
                eprintln!("  - {p}");
            }
            ExitCode::from(EXIT_CONFIG as u8)
        }
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

async fn dump(settings: Arc<Settings>, url_flag: bool, paths: Vec<String>, om: bool) -> ExitCode {
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let shot = sources::OneShot {
        paths: &paths,
        urls_given: url_flag,
    };
    let reads = sources::once(&settings, &shot, &telemetry);
    let collectors: Vec<Arc<dyn sources::Collector>> =
        reads.iter().map(|r| r.collector.clone()).collect();
    // Findings as metrics, as the serving exporter counts them.
    let live = diagnose::live::Live::new(&settings.diagnose, &model);
    let errors = sources::fill_once(&collectors, &model).await;
    live.pass(&model);
    for e in &errors {
        tracing::error!(error = %e, "Reading failed.");
    }
    let mut ok = errors.is_empty();
    // Nothing to show is a mistake to say out loud (a wrong folder, the run command's flag):
    // the (empty) exposition is printed, and the exit is 1.
    if ok && model.view(|v| v.apps().next().is_none()) {
        let inputs: Vec<String> = reads.iter().flat_map(|r| r.reads.clone()).collect();
        let hints: String = reads.iter().map(|r| r.hint.as_str()).collect();
        eprintln!(
            "spark-exporter dump: no application found in {}{hints}",
            inputs.join(", ")
        );
        ok = false;
    }
    let registry = prometheus::registry(model).with_created(settings.web.openmetrics_created);
    match prometheus::render(&registry, om) {
        Ok(s) => out(&s),
        Err(_) => return ExitCode::FAILURE,
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Read the checkpoint, if any, into `model` and `parts`, and say what was loaded (on the
/// blocking pool: an object store's requests block).
async fn load_checkpoint(
    settings: &Arc<Settings>,
    model: &Arc<Model>,
    parts: &Arc<Parts>,
    telemetry: &Arc<Telemetry>,
) {
    let (s, m, p, t) = (
        settings.clone(),
        model.clone(),
        parts.clone(),
        telemetry.clone(),
    );
    let loaded =
        tokio::task::spawn_blocking(move || spark_exporter::checkpoint::load(&s, &m, &p, &t)).await;
    let Ok(loaded) = loaded else {
        tracing::warn!("The checkpoint load failed; starting empty.");
        return;
    };
    match loaded {
        Ok(Some(spark_exporter::checkpoint::Loaded::Own(h))) => tracing::info!(
            path = ?spark_exporter::checkpoint::own_path(settings),
            written_ms = h.written_ms,
            writer = %h.writer,
            "Checkpoint loaded."
        ),
        Ok(Some(spark_exporter::checkpoint::Loaded::Handover {
            count,
            files,
            written_ms,
        })) => tracing::info!(
            path = ?settings.checkpoint.path,
            previous_shards = count,
            files,
            written_ms,
            "Checkpoint loaded: this shard's part of the previous shards' checkpoints (a reshard)."
        ),
        Ok(None) if settings.checkpoint.path.is_some() => {
            tracing::info!(path = ?settings.checkpoint.path, "No checkpoint yet; starting empty.")
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "Checkpoint refused; starting empty."),
    }
}

async fn run(settings: Arc<Settings>, security: Arc<WebSecurity>) -> ExitCode {
    let mut signals = signals::Signals::install();
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    // The state kept across restarts, before any source reads (they then read everything
    // again, which counts nothing twice).
    let parts = Parts::new(settings.checkpoint.path.is_some());
    load_checkpoint(&settings, &model, &parts, &telemetry).await;
    let listener = match server::bind(&settings).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "Cannot start the server.");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(
        address = %settings.web.listen_address,
        path = %settings.web.telemetry_path,
        "Serving metrics."
    );
    let lifecycle = Arc::new(Lifecycle::default());
    // Written by the collectors, read by readiness and the application's end.
    let health = Arc::new(Health::default());
    let (finish, flush, stop) = (
        CancellationToken::new(),
        CancellationToken::new(),
        CancellationToken::new(),
    );
    // After a start, an application is served once every source has given its state for it.
    let collectors = sources::configured(&settings, &telemetry, &health, &parts);
    let sources = sources::spawn_all(&collectors, &model, &finish);
    // The sinks: each delivers the model's families its own way until the final state.
    let env = sinks::SinkEnv {
        model: model.clone(),
        lifecycle: lifecycle.clone(),
        handle: Default::default(),
        flush: flush.clone(),
    };
    let delivering = sinks::spawn_all(&settings, &env, &health);
    let mut others = tokio::task::JoinSet::new();
    let handles = server::Handles {
        settings: settings.clone(),
        model: model.clone(),
        health: health.clone(),
        security,
        lifecycle: lifecycle.clone(),
    };
    others.spawn(server::serve(
        listener,
        handles,
        stop.clone(),
        IN_FLIGHT_GRACE,
    ));
    others.spawn(expire_loop(model.clone(), stop.clone()));
    // Findings as metrics: the diagnose rules on this model.
    let live = diagnose::live::Live::new(&settings.diagnose, &model);
    others.spawn(live.clone().run(model.clone(), stop.clone()));
    others.spawn(spark_exporter::checkpoint::run(
        settings.clone(),
        model.clone(),
        parts.clone(),
        telemetry.clone(),
        stop.clone(),
    ));
    let last_checkpoint = (settings.clone(), model.clone(), parts, telemetry.clone());
    let app_end = async {
        if settings.lifecycle.exit_when_app_ends {
            ending::watch(model.clone(), settings.clone(), health, stop.clone()).await
        } else {
            std::future::pending().await
        }
    };
    tokio::select! {
        _ = signals.recv() => tracing::info!(
            grace_period = ?settings.lifecycle.grace_period,
            "Signal received; draining."
        ),
        Some(e) = app_end => tracing::info!(
            reason = %e,
            grace_period = ?settings.lifecycle.grace_period,
            "The application has ended; draining."
        ),
    }
    let drain = Drain {
        lifecycle,
        model,
        config: settings.lifecycle.clone(),
        finish,
        sources,
        flush,
        sinks: delivering,
        stop,
        others,
        findings: Some(live),
    };
    drain.run(signals.recv()).await;
    // The final state, for the next start.
    let (s, m, p, t) = last_checkpoint;
    spark_exporter::checkpoint::write_once(s, m, p, t).await;
    ExitCode::SUCCESS
}

/// `diagnose`'s flags.
struct DiagnoseArgs {
    format: String,
    /// `--target-duration` as given (parsed into the request when valid).
    target_duration: Option<String>,
    fail_on: Vec<String>,
    request: diagnose::Request,
    /// `--review` and its flags.
    review: Option<ReviewArgs>,
    /// A review's flag was given (without `--review`, a mistake).
    review_flags: bool,
    /// `--compare` and its flags (its run filled in from `request` when valid).
    compare: Option<diagnose::compared::CompareRequest>,
    /// A comparison's flag was given (without `--compare`, a mistake).
    compare_flags: bool,
}

/// `--baseline-runs`' default (`src/cli`).
const BASELINE_RUNS: usize = 7;

/// `--top`'s default (`src/cli`).
const REVIEW_TOP: usize = 10;

/// `diagnose --review`'s own flags, as given.
struct ReviewArgs {
    since: Option<String>,
    app_name: Option<String>,
    job_group: Option<String>,
    top: usize,
}

/// `--since`: a duration back from `now_ms` (`7d`) or an RFC 3339 time, as epoch ms.
fn since_ms(v: &str, now_ms: i64) -> Result<i64, String> {
    if let Ok(d) = humantime::parse_duration(v) {
        return Ok(now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    }
    match humantime::parse_rfc3339_weak(v) {
        Ok(t) => t
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "--since: {v:?} is neither a duration (7d, 36h) nor a time (2026-12-01T00:00:00Z)"
        )),
    }
}

impl DiagnoseArgs {
    /// Every wrong flag at once; with `--review`, the review's request.
    fn validate(
        &self,
        settings: &Settings,
    ) -> Result<Option<diagnose::review::ReviewRequest>, Vec<String>> {
        let mut p = vec![];
        if let Some(v) = &self.target_duration {
            if humantime::parse_duration(v).is_err() {
                p.push(format!(
                    "--target-duration: {v:?} is not a duration (20m, 1h 30m)"
                ));
            }
        }
        let review = self.review.as_ref().map(|r| {
            let mut regex = |flag: &str, v: &Option<String>| {
                v.as_ref().and_then(|v| {
                    regex::Regex::new(v)
                        .map_err(|e| p.push(format!("{flag}: {v:?} is not a regex: {e}")))
                        .ok()
                })
            };
            let app_name = regex("--app-name", &r.app_name);
            let job_group = regex("--job-group", &r.job_group);
            let since = r.since.as_ref().and_then(|v| {
                since_ms(v, spark_exporter::clock::system_now_ms())
                    .map_err(|e| p.push(e))
                    .ok()
            });
            diagnose::review::ReviewRequest {
                event_logs: self.request.event_logs.clone(),
                spark_url: self.request.spark_url.clone(),
                since_ms: since,
                app_name,
                job_group,
                top: r.top,
                ui_url: self.request.ui_url.clone(),
                target_seconds: self.request.target_seconds,
            }
        });
        self.validate_compare(&mut p, review.is_some());
        if review.is_none() && self.review_flags {
            p.push("--since, --app-name, --job-group and --top go with --review".into());
        }
        if review.is_some() {
            if self.request.app_id.is_some() {
                p.push("--app-id: a review reads every application; leave it out".into());
            }
            if !self.fail_on.is_empty() {
                p.push("--fail-on: not with --review (a gate is per application)".into());
            }
        }
        match (self.format.as_str(), review.is_some()) {
            ("text" | "json" | "html", _) => {}
            (f, _) => p.push(format!("--format: {f:?} must be text, json or html")),
        }
        for k in &self.fail_on {
            if diagnose::report::Kind::parse(k).is_none() {
                p.push(format!(
                    "--fail-on: {k:?} is not a finding kind ({})",
                    diagnose::report::Kind::ALL.map(|k| k.as_str()).join(", ")
                ));
            }
        }
        if self.request.event_logs.is_empty() {
            match SparkConfig::of(settings).urls.len() {
                0 => p.push("--spark.url: give a driver or History Server, or --event-log".into()),
                1 => {}
                n => p.push(format!("--spark.url: diagnose reads one target, got {n}")),
            }
        }
        if p.is_empty() {
            Ok(review)
        } else {
            Err(p)
        }
    }
}

impl DiagnoseArgs {
    /// `--compare`'s mistakes into `p`.
    fn validate_compare(&self, p: &mut Vec<String>, review: bool) {
        let Some(c) = &self.compare else {
            if self.compare_flags {
                p.push("--baseline-runs and --force go with --compare".into());
            }
            return;
        };
        if review {
            p.push("--compare: not with --review (one run against its baseline)".into());
        }
        if !self.fail_on.is_empty() {
            p.push("--fail-on: not with --compare".into());
        }
        if self.request.event_logs.is_empty() && self.request.app_id.is_none() {
            p.push("--compare with --spark.url: the run's --app-id".into());
        }
        if c.baseline.trim().is_empty() {
            p.push("--compare: give a baseline (previous, a log or folder, or an id)".into());
        }
        if c.runs == 0 {
            p.push("--baseline-runs: at least 1".into());
        }
    }
}

/// Compare, print the comparison, and exit 1 when there is none.
async fn run_compare(
    settings: Arc<Settings>,
    format: &str,
    mut req: diagnose::compared::CompareRequest,
    run: diagnose::Request,
) -> ExitCode {
    req.run = run;
    let c = match diagnose::compared::compared(&settings, &req).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spark-exporter diagnose --compare: {e}");
            return ExitCode::FAILURE;
        }
    };
    match format {
        "json" => match serde_json::to_string_pretty(&c) {
            Ok(s) => out(&format!("{s}\n")),
            Err(_) => return ExitCode::FAILURE,
        },
        "html" => out(&diagnose::compare::render::page(&c)),
        _ => out(&diagnose::compare::render::text(&c)),
    }
    ExitCode::SUCCESS
}

/// Review, print the review, and exit 1 when no input could be listed.
async fn run_review(
    settings: Arc<Settings>,
    format: &str,
    req: diagnose::review::ReviewRequest,
) -> ExitCode {
    let review = match diagnose::review::review(&settings, &req).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("spark-exporter diagnose: {e}");
            return ExitCode::FAILURE;
        }
    };
    if format == "json" {
        match serde_json::to_string_pretty(&review) {
            Ok(s) => out(&format!("{s}\n")),
            Err(_) => return ExitCode::FAILURE,
        }
    } else if format == "html" {
        out(&diagnose::review::render_html(&review));
    } else {
        out(&diagnose::review::render(&review));
    }
    ExitCode::SUCCESS
}

/// Diagnose (or, with `review`, review), print the report, and exit 1 when nothing could be
/// diagnosed, 3 when a `--fail-on` kind was found.
async fn run_diagnose(
    settings: Arc<Settings>,
    args: DiagnoseArgs,
    review: Option<diagnose::review::ReviewRequest>,
) -> ExitCode {
    if let Some(req) = review {
        return run_review(settings, &args.format, req).await;
    }
    if let Some(req) = args.compare.clone() {
        return run_compare(settings, &args.format, req, args.request.clone()).await;
    }
    let report = match diagnose::diagnose(&settings, &args.request).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("spark-exporter diagnose: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.format == "json" {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => out(&format!("{s}\n")),
            Err(_) => return ExitCode::FAILURE,
        }
    } else if args.format == "html" {
        out(&diagnose::app_html::render_app_html(&report));
    } else {
        out(&diagnose::text::render(&report));
    }
    let gate = report
        .applications
        .iter()
        .flat_map(|a| &a.findings)
        .any(|f| args.fail_on.iter().any(|k| k == f.kind.as_str()));
    if gate {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// Write to stdout; a reader that went away (`| head`) is no error worth a panic.
fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|()| o.flush());
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

/// The exporter's signals: SIGTERM and SIGINT (Ctrl-C).
mod signals {
    /// Block SIGTERM and SIGINT in this thread and the threads it starts, so one that arrives
    /// before [`Signals::install`] stays pending instead of ending the process.
    pub fn defer() {
        #[cfg(unix)]
        set_mask(libc::SIG_BLOCK);
    }

    /// Let through what [`defer`] held back (a command with no handlers: the default action).
    pub fn release() {
        #[cfg(unix)]
        set_mask(libc::SIG_UNBLOCK);
    }

    #[cfg(unix)]
    fn set_mask(how: libc::c_int) {
        // SAFETY: sigemptyset/sigaddset fill a local sigset_t; pthread_sigmask only changes this
        // thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::pthread_sigmask(how, &set, std::ptr::null_mut());
        }
    }

    /// SIGTERM and SIGINT, as streams.
    pub struct Signals {
        #[cfg(unix)]
        term: Option<tokio::signal::unix::Signal>,
        #[cfg(unix)]
        int: Option<tokio::signal::unix::Signal>,
    }

    impl Signals {
        /// Install the handlers, then let through what [`defer`] held back (delivered to them).
        pub fn install() -> Signals {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let s = Signals {
                    term: signal(SignalKind::terminate()).ok(),
                    int: signal(SignalKind::interrupt()).ok(),
                };
                release();
                s
            }
            #[cfg(not(unix))]
            Signals {}
        }

        /// The next SIGTERM or SIGINT.
        pub async fn recv(&mut self) {
            #[cfg(unix)]
            {
                async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
                    match s {
                        Some(s) => {
                            s.recv().await;
                        }
                        None => std::future::pending().await,
                    }
                }
                tokio::select! {
                    _ = next(&mut self.term) => {},
                    _ = next(&mut self.int) => {},
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}
