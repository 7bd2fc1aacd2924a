//! The rendered exposition, shared by every scrape.
//!
//! Rendering a large application's model takes tens of milliseconds; a hundred scrapers each
//! rendering their own copy would queue behind each other and hold a copy of the text each. So
//! one renderer thread renders each format that is being scraped, gzip-compressed, and every
//! scrape is handed the newest body, unless it is too old:
//!
//! - a body is served if it is at most `web.max_staleness` old (1 s by default), or at most
//!   [`MAX_AGE_UNCHANGED`] old and rendered from the model (and self-metrics) as they were when
//!   the scrape arrived, or newer;
//! - otherwise the scrape waits for the next render, which it asks for; concurrent scrapes share
//!   that one render;
//! - while a format is being scraped (within [`ACTIVE_FOR`]), the renderer keeps its body
//!   fresh on its own: after a change, once ten render-times have passed (a tick, 100 ms, for a
//!   small model) and at most half `max_staleness` later, so scrapes rarely wait and bodies are
//!   usually far fresher than the bound.
//!
//! With `max_staleness` zero every scrape sees every change made before it arrived; scrapes
//! that arrive while the model keeps changing then wait for a render.
//!
//! Only the gzip bytes are kept (a 7.5 MB exposition is 0.3 MB of gzip), with the length of the
//! text; the HTTP server decides per scrape whether to send them as they are or inflate them as
//! they are sent. The renderer is one long-lived thread, so the allocator's per-thread caches
//! stay as few as the threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::write::GzEncoder;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Registry;
use crate::model::Model;

/// A body this old is served if nothing changed since it was rendered (only wall-clock derived
/// values, such as how long a stage has been stalled, can then be behind).
pub const MAX_AGE_UNCHANGED: Duration = Duration::from_secs(5);
/// The renderer refreshes a format on its own while it was scraped within this time.
pub const ACTIVE_FOR: Duration = Duration::from_secs(600);
/// How often the renderer looks for changes.
const TICK: Duration = Duration::from_millis(100);
/// gzip level for an exposition of ordinary size: the smallest body for what it costs (a
/// sidecar's few MB of text in tens of ms; level 1 was ~70 % bigger, which cost more per scrape
/// than it saved per render, BENCHMARKS.md "Scrape load").
const GZIP_LEVEL: u32 = 6;
/// gzip level once the text passes [`LARGE_TEXT`] (a fleet's exposition): zlib-rs's fast
/// strategy compresses 56 MB of text in about a third of level 6's time for a body ~30 %
/// bigger; a render there takes hundreds of ms, a scrape's transfer a few.
const GZIP_LEVEL_LARGE: u32 = 2;
/// Text length (bytes) from which the previous render of a format picks [`GZIP_LEVEL_LARGE`].
const LARGE_TEXT: u64 = 16 << 20;

/// What the previous render of a format measured, to size and pace the next.
#[derive(Clone, Copy, Default)]
struct Last {
    /// gzip length.
    gzip: usize,
    /// Text length.
    text: u64,
}

impl Last {
    fn level(self) -> u32 {
        if self.text >= LARGE_TEXT {
            GZIP_LEVEL_LARGE
        } else {
            GZIP_LEVEL
        }
    }
}

/// The two formats, as slot indexes.
const FORMATS: [bool; 2] = [false, true];

/// One rendered exposition.
#[derive(Debug)]
pub struct Rendered {
    /// The text, gzip-compressed; empty if the render failed.
    pub gzip: Bytes,
    /// Length of the text.
    pub len: u64,
    /// False if the render failed.
    pub ok: bool,
    /// [`Model::generation`] before the render read the model.
    generation: u64,
    /// When the render started.
    at: Instant,
    /// How long it took.
    took: Duration,
}

impl Rendered {
    /// [`Model::generation`] before this render read the model: the body shows every change
    /// made before then.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A render that failed (answered with a 500) at `at`.
    fn failed(generation: u64, at: Instant) -> Rendered {
        Rendered {
            gzip: Bytes::new(),
            len: 0,
            ok: false,
            generation,
            at,
            took: at.elapsed(),
        }
    }

    /// May this body answer a scrape that arrived at `arrival`, when the model was at
    /// `generation`?
    fn serves(&self, generation: u64, arrival: Instant, max_staleness: Duration) -> bool {
        let age = arrival.saturating_duration_since(self.at);
        age <= max_staleness || (self.generation >= generation && age <= MAX_AGE_UNCHANGED)
    }
}

struct Slot {
    body: watch::Sender<Option<Arc<Rendered>>>,
    /// Milliseconds since `Inner::epoch` of the last scrape (0: never).
    last_scrape_ms: AtomicU64,
}

struct Inner {
    model: Arc<Model>,
    registry: Registry,
    slots: [Slot; 2],
    max_staleness: Duration,
    epoch: Instant,
    /// Render requests: slot index and when it was asked.
    requests: mpsc::Sender<(usize, Instant)>,
}

/// Handle to the shared exposition; cheap to clone.
#[derive(Clone)]
pub struct Exposition {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Exposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposition").finish_non_exhaustive()
    }
}

impl Exposition {
    /// Start the renderer thread; it ends on `shutdown`. `created`: OpenMetrics bodies carry
    /// `_created` samples (see [`super::Registry::with_created`]).
    pub fn start(
        model: Arc<Model>,
        max_staleness: Duration,
        created: bool,
        shutdown: CancellationToken,
    ) -> Exposition {
        let (tx, rx) = mpsc::channel();
        let inner = Arc::new(Inner {
            registry: crate::sinks::prometheus::registry(model.clone()).with_created(created),
            model,
            slots: FORMATS.map(|_| Slot {
                body: watch::Sender::new(None),
                last_scrape_ms: AtomicU64::new(0),
            }),
            max_staleness,
            epoch: Instant::now(),
            requests: tx,
        });
        let worker = inner.clone();
        let spawned = std::thread::Builder::new()
            .name("exposition".into())
            .spawn(move || {
                worker.run(&rx, &shutdown);
                // Requests fail from now on; wake whoever waits so they see that.
                drop(rx);
                for slot in &worker.slots {
                    slot.body.send_modify(|_| {});
                }
            });
        if let Err(e) = spawned {
            // Scrapes will get 503s; say why once.
            tracing::error!(error = %e, "Cannot start the exposition renderer thread.");
        }
        Exposition { inner }
    }

    /// The body for a scrape of `openmetrics` (or classic) text arriving now; `None` if the
    /// renderer is gone (shutting down).
    pub async fn get(&self, openmetrics: bool) -> Option<Arc<Rendered>> {
        self.get_within(openmetrics, self.inner.max_staleness).await
    }

    /// As [`Exposition::get`], with `max_staleness` instead of the configured bound (zero: a
    /// body that shows every change made before the scrape arrived, as the drain needs).
    pub async fn get_within(
        &self,
        openmetrics: bool,
        max_staleness: Duration,
    ) -> Option<Arc<Rendered>> {
        let i = usize::from(openmetrics);
        let slot = &self.inner.slots[i];
        let arrival = Instant::now();
        let ms = arrival.duration_since(self.inner.epoch).as_millis() as u64;
        slot.last_scrape_ms.store(ms.max(1), Ordering::Relaxed);
        let generation = self.inner.generation();
        let mut rx = slot.body.subscribe();
        loop {
            if let Some(r) = rx.borrow_and_update().as_ref() {
                if r.serves(generation, arrival, max_staleness) {
                    return Some(r.clone());
                }
            }
            if self.inner.requests.send((i, arrival)).is_err() {
                return None;
            }
            // Woken by the next render, or by the renderer ending (then the send above fails).
            if rx.changed().await.is_err() {
                return None;
            }
        }
    }
}

impl Inner {
    /// Changes whenever anything the exposition shows may have (model, self-metrics, OTLP
    /// counters; all only grow, so the sum changes exactly when one of them does).
    fn generation(&self) -> u64 {
        self.model.generation()
    }

    /// The renderer thread: render what scrapes ask for, and keep scraped formats fresh.
    fn run(&self, rx: &mpsc::Receiver<(usize, Instant)>, shutdown: &CancellationToken) {
        let mut asked: [Option<Instant>; 2] = [None, None];
        let mut last = [Last::default(); 2];
        while !shutdown.is_cancelled() {
            match rx.recv_timeout(TICK) {
                Ok((i, at)) => asked[i] = Some(asked[i].map_or(at, |a| a.min(at))),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            while let Ok((i, at)) = rx.try_recv() {
                asked[i] = Some(asked[i].map_or(at, |a| a.min(at)));
            }
            let now = Instant::now();
            let generation = self.generation();
            for (i, slot) in self.slots.iter().enumerate() {
                let current = slot.body.borrow().clone();
                let wanted = match (asked[i].take(), &current) {
                    // Asked for, and nothing rendered since the scrape arrived.
                    (Some(at), Some(r)) => {
                        r.at < at || !r.serves(generation, now, self.max_staleness)
                    }
                    (Some(_), None) => true,
                    (None, Some(r)) => self.active(slot, now) && self.stale(r, generation, now),
                    (None, None) => false,
                };
                if wanted {
                    // A bug in rendering must not end the thread (every later scrape would
                    // fail): it gives a failed body, a 500, and the next scrape tries again.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.render(FORMATS[i], &mut last[i])
                    }))
                    .unwrap_or_else(|_| {
                        tracing::error!("Rendering the exposition panicked.");
                        Rendered::failed(0, Instant::now())
                    });
                    slot.body.send_replace(Some(Arc::new(r)));
                }
            }
        }
    }

    /// True while the format in `slot` is being scraped.
    fn active(&self, slot: &Slot, now: Instant) -> bool {
        let last = slot.last_scrape_ms.load(Ordering::Relaxed);
        let now_ms = now.duration_since(self.epoch).as_millis() as u64;
        last > 0 && now_ms.saturating_sub(last) <= ACTIVE_FOR.as_millis() as u64
    }

    /// True if `r` should be replaced before a scrape has to wait for it.
    fn stale(&self, r: &Rendered, generation: u64, now: Instant) -> bool {
        let age = now.saturating_duration_since(r.at);
        // After a change, refresh as soon as rendering stays under a tenth of the renderer's
        // time: within a tick for a small model, every ~350 ms for a 7.5 MB exposition, and
        // never later than half the allowed staleness.
        let after_change = (r.took * 10).clamp(TICK, (self.max_staleness / 2).max(TICK));
        (r.generation != generation && age >= after_change)
            || age + self.max_staleness.max(TICK) >= MAX_AGE_UNCHANGED
    }

    fn render(&self, openmetrics: bool, last: &mut Last) -> Rendered {
        let at = Instant::now();
        let generation = self.generation();
        let level = last.level();
        let mut gz = GzEncoder::new(
            Vec::with_capacity(last.gzip + last.gzip / 8),
            flate2::Compression::new(level),
        );
        let result = super::write(&self.registry, openmetrics, &mut gz)
            .and_then(|len| Ok((len, gz.finish()?)));
        match result {
            Ok((len, gzip)) => {
                *last = Last {
                    gzip: gzip.len(),
                    text: len,
                };
                tracing::trace!(
                    openmetrics,
                    len,
                    level,
                    gzip = gzip.len(),
                    ms = at.elapsed().as_secs_f64() * 1000.0,
                    "Rendered the exposition."
                );
                Rendered {
                    gzip: Bytes::from(gzip),
                    len,
                    ok: true,
                    generation,
                    at,
                    took: at.elapsed(),
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "Rendering the exposition failed.");
                Rendered::failed(generation, at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::model::{JobObs, JobStatus, Observer};
    use crate::telemetry::Telemetry;
    use std::io::Read;

    fn job(m: &Arc<Model>, id: u64) {
        m.observer(crate::sources::source("rest")).upsert_job(
            "app",
            &JobObs {
                job_id: id,
                job_group: Some("g".into()),
                description: None,
                status: JobStatus::Succeeded,
                submission_ms: Some(1),
                completion_ms: Some(2),
                stage_ids: vec![],
                sql_execution_id: None,
                tags: vec![],
                name: None,
                client_app: None,
            },
        );
    }

    async fn text(e: &Exposition, om: bool) -> String {
        let r = e.get(om).await.expect("renderer runs");
        assert!(r.ok);
        let mut body = String::new();
        flate2::read::GzDecoder::new(&r.gzip[..])
            .read_to_string(&mut body)
            .expect("decodes");
        assert_eq!(body.len() as u64, r.len);
        body
    }

    #[test]
    fn a_large_text_is_compressed_at_the_fast_level() {
        let at = |text| Last { gzip: 0, text }.level();
        // The first render of a format knows no size: the ordinary level.
        assert_eq!(Last::default().level(), GZIP_LEVEL);
        assert_eq!(at(LARGE_TEXT - 1), GZIP_LEVEL);
        assert_eq!(at(LARGE_TEXT), GZIP_LEVEL_LARGE);
        const { assert!(GZIP_LEVEL_LARGE < GZIP_LEVEL) };
    }

    #[tokio::test]
    async fn serves_what_a_direct_render_gives_and_sees_changes_at_once() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        job(&m, 0);
        let stop = CancellationToken::new();
        let e = Exposition::start(m.clone(), Duration::from_secs(1), false, stop.clone());
        let reg = crate::sinks::prometheus::registry(m.clone());
        // Other tests in this process push OTLP and move its process-wide counters; the
        // process's CPU and memory (`process_*`) move between two renders.
        let own = |t: String| -> String {
            t.lines()
                .filter(|l| !l.starts_with("spark_exporter_otlp") && !l.starts_with("process_"))
                .collect()
        };
        for om in [true, false] {
            assert_eq!(
                own(text(&e, om).await),
                own(crate::sinks::prometheus::render(&reg, om).expect("renders"))
            );
        }
        // A scrape a max_staleness after a change sees it.
        job(&m, 1);
        tokio::time::sleep(Duration::from_millis(1050)).await;
        let t = text(&e, false).await;
        assert!(
            t.contains("spark_jobs_total{app_id=\"app\",app_name=\"\",job_group=\"g\",job_description=\"\",status=\"succeeded\"} 2"),
            "{t}"
        );
        stop.cancel();
    }

    #[tokio::test]
    async fn with_no_staleness_every_scrape_sees_every_earlier_change() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        let stop = CancellationToken::new();
        let e = Exposition::start(m.clone(), Duration::ZERO, false, stop.clone());
        for id in 0..20u64 {
            job(&m, id);
            let t = text(&e, true).await;
            let want = format!("status=\"succeeded\"}} {}\n", id + 1);
            assert!(
                t.lines()
                    .any(|l| l.starts_with("spark_jobs_total{")
                        && l.ends_with(&want[..want.len() - 1])),
                "after job {id}:\n{t}"
            );
        }
        stop.cancel();
    }

    #[tokio::test]
    async fn concurrent_scrapes_share_one_body() {
        let m = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
        job(&m, 0);
        let stop = CancellationToken::new();
        let e = Exposition::start(m, Duration::from_secs(1), false, stop.clone());
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let e = e.clone();
            set.spawn(async move { e.get(true).await.expect("body") });
        }
        let bodies: Vec<_> = set.join_all().await;
        let first = Arc::as_ptr(&bodies[0]);
        assert!(bodies.iter().all(|b| Arc::as_ptr(b) == first));
        stop.cancel();
    }
}
