//! When the followed application has ended, for `lifecycle.exit_when_app_ends` (a classic
//! sidecar container, which nothing stops once the driver is gone).
//!
//! The application has ended when any of these holds:
//! - Spark said so: its `ApplicationEnd` is in the event log, or a REST target lists it
//!   completed;
//! - every REST target answered at least once and has been unreachable since for
//!   `lifecycle.rest_unreachable_after` (a driver that died without writing its end).
//!
//! "The followed application" is every application not ended, or that started or ended after the
//! exporter started; logs of applications already finished when the exporter started (an
//! event-log folder shared with earlier runs) are not waited for, and cannot end it. This is
//! decided afresh at each look, from Spark's own times, not from what was seen first: a log read
//! in pieces shows its application running until its `ApplicationEnd` is read, and that must not
//! make an old application the followed one.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::clock::EpochMs;
use crate::config::Settings;
use crate::health::Health;
use crate::model::Model;

/// How often [`watch`] looks.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// Why the application counts as ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Spark reported the end of every followed application (event log or REST).
    Reported {
        /// The applications.
        apps: Vec<String>,
    },
    /// Every REST target has been unreachable for the configured time after a success.
    Unreachable {
        /// Seconds since the first target went down.
        for_secs: u64,
    },
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Reported { apps } => write!(f, "Spark reported the end of {}", apps.join(", ")),
            Ending::Unreachable { for_secs } => {
                write!(f, "the REST targets have been unreachable for {for_secs} s")
            }
        }
    }
}

/// What [`Watcher::check`] compares with.
#[derive(Debug)]
pub struct Watcher {
    /// When the exporter started (epoch ms).
    started_ms: EpochMs,
}

impl Watcher {
    /// A watcher for an exporter started at `started_ms`.
    pub fn new(started_ms: EpochMs) -> Watcher {
        Watcher { started_ms }
    }

    /// Has the followed application ended, as of `now_ms`, by what the model holds and how the
    /// REST targets answered (`health`)?
    pub fn check(
        &self,
        model: &Model,
        settings: &Settings,
        health: &Health,
        now_ms: EpochMs,
    ) -> Option<Ending> {
        let started = self.started_ms;
        let (apps, all_reported) = model.view(|v| {
            let mut apps = vec![];
            let mut all = true;
            for a in v.apps() {
                let followed = a.end_ms().is_none_or(|e| e >= started)
                    || a.start_ms().is_some_and(|s| s >= started);
                if followed {
                    apps.push(a.id().to_string());
                    all &= a.ended_by_spark();
                }
            }
            (apps, all)
        });
        if !apps.is_empty() && all_reported {
            return Some(Ending::Reported { apps });
        }
        unreachable_for(settings, health, now_ms)
            .filter(|d| *d >= settings.lifecycle.rest_unreachable_after)
            .map(|d| Ending::Unreachable {
                for_secs: d.as_secs(),
            })
    }
}

/// How long every place of every status source (REST targets: a source of
/// [`crate::model::Feed::Status`] in the registry) has been unreachable after answering at least
/// once; `None` if there is none, or one answers, or one never did.
fn unreachable_for(settings: &Settings, health: &Health, now_ms: EpochMs) -> Option<Duration> {
    let mut newest_down: Option<EpochMs> = None;
    let live = crate::sources::REGISTRY
        .iter()
        .filter(|p| p.feed() == crate::model::Feed::Status)
        .flat_map(|p| {
            p.places(settings)
                .into_iter()
                .map(|place| (p.name(), place))
        });
    for (source, place) in live {
        let r = health.place(source, &place)?;
        r.last_ok_ms?;
        let down = r.down_since_ms?;
        newest_down = Some(newest_down.map_or(down, |d| d.max(down)));
    }
    let ms = now_ms.saturating_sub(newest_down?).max(0);
    Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// Wait until the followed application has ended; `None` if `stop` comes first.
pub async fn watch(
    model: Arc<Model>,
    settings: Arc<Settings>,
    health: Arc<Health>,
    stop: CancellationToken,
) -> Option<Ending> {
    let w = Watcher::new(model.now_ms());
    let mut tick = tokio::time::interval(CHECK_EVERY);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tick.tick() => {}
        }
        if let Some(e) = w.check(&model, &settings, &health, model.now_ms()) {
            return Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::obs::AppObs;
    use crate::model::Observer;
    use crate::sources::rest::config::SparkConfig;
    use crate::telemetry::Telemetry;

    fn setup(urls: &[&str]) -> (Arc<Model>, Settings) {
        let mut s = Settings::default();
        SparkConfig::of_mut(&mut s).urls = urls.iter().map(|u| u.to_string()).collect();
        let m = Model::new(&s, Arc::new(Telemetry::default()));
        (m, s)
    }

    fn app(id: &str, start: i64, end: Option<i64>) -> AppObs {
        AppObs {
            app_id: id.into(),
            start_ms: Some(start),
            end_ms: end,
            ..AppObs::default()
        }
    }

    #[test]
    fn ends_when_spark_reports_the_end_of_the_followed_app() {
        let (m, s) = setup(&[]);
        let t = Health::default();
        let w = Watcher::new(1_000);
        assert_eq!(w.check(&m, &s, &t, 1_500), None, "nothing known yet");
        let o = m.observer(crate::sources::source("event_log"));
        // A log of an earlier run, finished before the exporter started: not followed.
        o.upsert_app(&app("old", 100, Some(200)));
        assert_eq!(
            w.check(&m, &s, &t, 1_500),
            None,
            "an old finished log ends nothing"
        );
        o.upsert_app(&app("cur", 900, None));
        assert_eq!(w.check(&m, &s, &t, 2_000), None, "running");
        o.upsert_app(&app("cur", 900, Some(3_000)));
        assert_eq!(
            w.check(&m, &s, &t, 3_100),
            Some(Ending::Reported {
                apps: vec!["cur".into()]
            })
        );
    }

    #[test]
    fn an_old_log_read_in_pieces_ends_nothing() {
        // The first piece of an old log shows its application running; the next piece has its
        // end, long before the exporter started. That end is not the followed application's.
        let (m, s) = setup(&[]);
        let t = Health::default();
        let w = Watcher::new(10_000);
        let o = m.observer(crate::sources::source("event_log"));
        o.upsert_app(&app("old", 100, None));
        assert_eq!(
            w.check(&m, &s, &t, 10_500),
            None,
            "running, as far as known"
        );
        o.upsert_app(&app("old", 100, Some(200)));
        assert_eq!(
            w.check(&m, &s, &t, 11_000),
            None,
            "ended before the exporter"
        );
        // An application ending after the exporter started is followed, wherever it started.
        o.upsert_app(&app("long", 50, None));
        o.upsert_app(&app("long", 50, Some(12_000)));
        assert_eq!(
            w.check(&m, &s, &t, 12_100),
            Some(Ending::Reported {
                apps: vec!["long".into()]
            })
        );
    }

    #[test]
    fn an_app_that_started_after_the_exporter_counts_even_if_first_seen_ended() {
        let (m, s) = setup(&[]);
        let t = Health::default();
        let w = Watcher::new(1_000);
        m.observer(crate::sources::source("event_log"))
            .upsert_app(&app("quick", 1_200, Some(1_400)));
        assert!(w.check(&m, &s, &t, 1_500).is_some());
    }

    #[test]
    fn a_vanished_driver_is_not_a_reported_end() {
        let (m, s) = setup(&["http://driver:4040"]);
        let t = Health::default();
        let w = Watcher::new(1_000);
        let o = m.observer(crate::sources::source("rest"));
        o.upsert_app(&app("cur", 1_100, None));
        assert_eq!(w.check(&m, &s, &t, 1_200), None);
        o.app_gone("cur", 5_000);
        assert_eq!(w.check(&m, &s, &t, 6_000), None, "gone is not reported");
        // Unreachable since 5 s after a success: ends after rest_unreachable_after (60 s).
        t.answered("rest", "http://driver:4040", 4_000);
        t.failed("rest", "http://driver:4040", 5_000, "no answer");
        assert_eq!(w.check(&m, &s, &t, 64_999), None);
        assert_eq!(
            w.check(&m, &s, &t, 65_000),
            Some(Ending::Unreachable { for_secs: 60 })
        );
    }

    #[test]
    fn a_target_that_never_answered_never_ends_it() {
        let (m, s) = setup(&["http://a:4040", "http://b:4040"]);
        let t = Health::default();
        let w = Watcher::new(0);
        t.failed("rest", "http://a:4040", 0, "no answer");
        assert_eq!(w.check(&m, &s, &t, 1_000_000), None, "never answered");
        t.answered("rest", "http://a:4040", 1);
        t.failed("rest", "http://a:4040", 2, "no answer");
        assert_eq!(w.check(&m, &s, &t, 1_000_000), None, "b is not known down");
        t.answered("rest", "http://b:4040", 1);
        assert_eq!(w.check(&m, &s, &t, 1_000_000), None, "b answers");
    }
}
