//! The drain: from SIGTERM (or the application's end) to exit.
//!
//! 1. The phase turns [`Phase::Draining`](super::Phase): `/readyz` answers 503, `/healthz` 200,
//!    both with the body `draining`. `/metrics` keeps answering.
//! 2. The sources make their last reads: the event-log tailer discovers new files and reads
//!    every log to its end; each REST target is polled once more (a target that does not answer
//!    has its unfinished applications marked ended at its last good poll).
//! 3. The model is then the final state ([`Phase::Final`](super::Phase)): every scrape waits for
//!    a body rendered from it, and the OTLP exporter sends its final export.
//! 4. The drain ends at the first of: `lifecycle.drain_scrapes` scrapes answered with the final
//!    state, the final OTLP export sent, the grace period (counted from step 1), or a second
//!    SIGTERM/SIGINT. A final OTLP export still under way gets the rest of the grace period.
//! 5. The server stops accepting, lets requests in flight finish, and the process exits 0.
//!
//! Every wait is bounded by the grace period: sources that do not finish their last reads in
//! time are left behind, and the state they reached is the final one.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;

use super::Lifecycle;
use crate::config::LifecycleConfig;
use crate::model::Model;

/// The least time requests in flight get once the drain has ended.
const IN_FLIGHT_MIN: Duration = Duration::from_secs(1);

/// What the drain waits for and tells to stop.
#[derive(Debug)]
pub struct Drain {
    /// The shared phase.
    pub lifecycle: Arc<Lifecycle>,
    /// The model (its generation marks the final state).
    pub model: Arc<Model>,
    /// Grace period and scrape count.
    pub config: LifecycleConfig,
    /// The sources' signal: when cancelled they make their last reads and return.
    pub finish: CancellationToken,
    /// The sources.
    pub sources: JoinSet<()>,
    /// The sinks' signal: the model is the final state, deliver it.
    pub flush: CancellationToken,
    /// The sinks' deliveries.
    pub sinks: crate::sinks::Delivering,
    /// Everything else (server, expiry): cancelled when the drain ends.
    pub stop: CancellationToken,
    /// The tasks `stop` ends.
    pub others: JoinSet<()>,
    /// The diagnose rules, run once more on what the sources' last reads gave.
    pub findings: Option<crate::diagnose::live::Live>,
}

/// Why a drain ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// A sink delivered the final state, as it names that (`Scrapes`:
    /// `lifecycle.drain_scrapes` scrapes showed it; `OtlpSent`: the final OTLP export was sent).
    Delivered(&'static str),
    /// The grace period ran out.
    GracePeriod,
    /// A second signal.
    Interrupted,
}

/// As the log writes it: `ended=Scrapes`.
impl std::fmt::Debug for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Ended::Delivered(how) => how,
            Ended::GracePeriod => "GracePeriod",
            Ended::Interrupted => "Interrupted",
        })
    }
}

impl Drain {
    /// Drain and stop every task. `interrupt` resolves on a second SIGTERM/SIGINT.
    pub async fn run(mut self, interrupt: impl Future<Output = ()>) -> Ended {
        let deadline = Instant::now() + self.config.grace_period;
        tokio::pin!(interrupt);
        self.lifecycle.begin_drain();
        self.finish.cancel();
        let sources = async { while self.sources.join_next().await.is_some() {} };
        let ended = tokio::select! {
            r = timeout_at(deadline, sources) => {
                if r.is_err() {
                    tracing::warn!("The sources did not finish their last reads within the grace \
                        period; exporting what they read.");
                }
                None
            }
            _ = &mut interrupt => Some(Ended::Interrupted),
        };
        if let Some(live) = &self.findings {
            live.pass(&self.model);
        }
        self.lifecycle.reach_final(self.model.generation());
        self.flush.cancel();
        let ended = match ended {
            Some(e) => e,
            None => {
                tracing::info!(
                    scrapes = self.config.drain_scrapes,
                    left_secs = deadline.saturating_duration_since(Instant::now()).as_secs_f64(),
                    "Final state reached; serving it until it is scraped or exported, or the grace \
                        period ends."
                );
                self.wait_final(deadline, &mut interrupt).await
            }
        };
        self.sources.abort_all();
        self.sinks.tasks.abort_all();
        self.stop.cancel();
        let in_flight = deadline
            .saturating_duration_since(Instant::now())
            .max(IN_FLIGHT_MIN);
        let others = async { while self.others.join_next().await.is_some() {} };
        if tokio::time::timeout(in_flight, others).await.is_err() {
            tracing::warn!("Requests in flight did not finish in time.");
        }
        tracing::info!(
            ended = ?ended,
            final_scrapes = self.lifecycle.final_scrapes(),
            "Drained."
        );
        ended
    }

    /// Serve the final state until the first end condition.
    async fn wait_final(
        &mut self,
        deadline: Instant,
        interrupt: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Ended {
        let mut pushing: Vec<bool> = self.sinks.names.iter().map(|(_, push)| *push).collect();
        let ended = loop {
            tokio::select! {
                Some(done) = self.sinks.tasks.join_next() => {
                    let Ok((i, delivered)) = done else { continue };
                    pushing[i] = false;
                    if delivered {
                        break Ended::Delivered(self.sinks.names[i].0);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => break Ended::GracePeriod,
                _ = interrupt.as_mut() => break Ended::Interrupted,
            }
        };
        // A final push under way may still use the rest of the grace period.
        while ended != Ended::Interrupted && pushing.contains(&true) {
            match timeout_at(deadline, self.sinks.tasks.join_next()).await {
                Ok(Some(Ok((i, _)))) => pushing[i] = false,
                Ok(Some(Err(_))) => {}
                Ok(None) | Err(_) => break,
            }
        }
        ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::lifecycle::Phase;
    use crate::telemetry::Telemetry;

    /// A drain whose single source takes `source_secs` to finish its last reads, with the
    /// Prometheus sink (`scrapes` of the final state end it) and a push sink that answers `otlp`
    /// `secs` after the flush (none, with `None`).
    fn drain(source_secs: u64, otlp: Option<(u64, bool)>, scrapes: usize) -> Drain {
        let settings = Settings::default();
        let model = Model::new(&settings, Arc::new(Telemetry::default()));
        let mut config = settings.lifecycle.clone();
        config.grace_period = Duration::from_secs(25);
        config.drain_scrapes = scrapes;
        let (finish, flush, stop) = (
            CancellationToken::new(),
            CancellationToken::new(),
            CancellationToken::new(),
        );
        let mut sources = JoinSet::new();
        let f = finish.clone();
        sources.spawn(async move {
            f.cancelled().await;
            tokio::time::sleep(Duration::from_secs(source_secs)).await;
        });
        let lifecycle = Arc::new(Lifecycle::default());
        let mut settings = settings;
        settings.lifecycle = config.clone();
        let env = crate::sinks::SinkEnv {
            model: model.clone(),
            lifecycle: lifecycle.clone(),
            handle: Default::default(),
            flush: flush.clone(),
        };
        let prometheus: &dyn crate::sinks::Sink = &crate::sinks::prometheus::plugin::SINK;
        let running = prometheus.start(&Arc::new(settings), env);
        let mut sinks = JoinSet::new();
        let delivered = running.delivered;
        sinks.spawn(async move { (0, delivered.await) });
        let mut sink_names = vec![(prometheus.final_delivery(), running.push)];
        if let Some((secs, sent)) = otlp {
            let fl = flush.clone();
            sinks.spawn(async move {
                fl.cancelled().await;
                tokio::time::sleep(Duration::from_secs(secs)).await;
                (1, sent)
            });
            sink_names.push(("OtlpSent", true));
        }
        let mut others = JoinSet::new();
        let s = stop.clone();
        others.spawn(async move { s.cancelled().await });
        Drain {
            lifecycle,
            model,
            config,
            finish,
            sources,
            flush,
            sinks: crate::sinks::Delivering {
                tasks: sinks,
                names: sink_names,
            },
            stop,
            others,
            findings: None,
        }
    }

    /// Scrape once a second from the start, as a scraper would, with bodies of the current
    /// model generation.
    fn scraper(l: Arc<Lifecycle>, m: Arc<Model>) {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                l.scrape_served(m.generation());
            }
        });
    }

    #[tokio::test(start_paused = true)]
    async fn ends_after_the_first_scrape_of_the_final_state() {
        let d = drain(3, None, 1);
        let (l, m) = (d.lifecycle.clone(), d.model.clone());
        scraper(l.clone(), m);
        let t0 = Instant::now();
        let ended = d.run(std::future::pending()).await;
        assert_eq!(ended, Ended::Delivered("Scrapes"));
        assert_eq!(l.phase(), Phase::Final);
        assert_eq!(
            l.final_scrapes(),
            1,
            "scrapes during the last reads do not count"
        );
        assert_eq!(
            t0.elapsed(),
            Duration::from_secs(4),
            "3 s of reads, then the next scrape"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_final_otlp_export_ends_it_without_scrapes() {
        let d = drain(1, Some((2, true)), 1);
        let t0 = Instant::now();
        assert_eq!(
            d.run(std::future::pending()).await,
            Ended::Delivered("OtlpSent")
        );
        assert_eq!(t0.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_final_export_waits_for_a_scrape_or_the_grace_period() {
        let d = drain(1, Some((2, false)), 1);
        let t0 = Instant::now();
        assert_eq!(d.run(std::future::pending()).await, Ended::GracePeriod);
        assert_eq!(t0.elapsed(), Duration::from_secs(25));
    }

    #[tokio::test(start_paused = true)]
    async fn a_final_export_under_way_is_waited_for_after_the_scrapes() {
        let d = drain(0, Some((10, true)), 0);
        let t0 = Instant::now();
        assert_eq!(
            d.run(std::future::pending()).await,
            Ended::Delivered("Scrapes")
        );
        assert_eq!(
            t0.elapsed(),
            Duration::from_secs(10),
            "the export got its time"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn sources_that_do_not_finish_are_left_at_the_grace_period() {
        let d = drain(3600, None, 1);
        let (l, m) = (d.lifecycle.clone(), d.model.clone());
        scraper(l.clone(), m);
        let t0 = Instant::now();
        assert_eq!(d.run(std::future::pending()).await, Ended::GracePeriod);
        assert!(
            t0.elapsed() <= Duration::from_secs(26),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(l.phase(), Phase::Final);
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_signal_ends_it_at_once() {
        let d = drain(3600, None, 1);
        let t0 = Instant::now();
        let ended = d.run(tokio::time::sleep(Duration::from_secs(2))).await;
        assert_eq!(ended, Ended::Interrupted);
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    }
}
