//! The sources' health, as a handle of its own: the collectors write what happened to them (a
//! poll of a REST target answered or not, the event-log folders were listed a first time), and
//! the exporter's control reads it: readiness (`/readyz`) and, in classic mode, the end of an
//! application whose driver went away (`lifecycle.rest_unreachable_after`). The self-metrics
//! ([`crate::telemetry`]) only export; nothing decides from them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::clock::EpochMs;

/// When a REST target last answered, and since when it has not.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Epoch ms of the last successful poll.
    pub last_ok_ms: Option<EpochMs>,
    /// Epoch ms of the first failed poll after the last success (None while it answers).
    pub down_since_ms: Option<EpochMs>,
}

/// The sources' health, shared (`Arc<Health>`) by the collectors that write it and the server
/// and lifecycle that read it. Never held across `.await`.
#[derive(Debug, Default)]
pub struct Health {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Every REST target polled at least once, answered or not.
    targets: BTreeMap<String, Reach>,
    /// The last error of each REST target, since its last success (for the status page).
    target_errors: BTreeMap<String, (EpochMs, String)>,
    /// Each event-log folder as last listed (for the status page).
    folders: BTreeMap<String, SourceState>,
    /// The event-log reader has listed its folders once and read a first step.
    event_logs_listed: bool,
}

/// What a person asks of a source: is it answering, since when, and what went wrong last.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SourceState {
    /// Epoch ms of the last success.
    pub last_ok_ms: Option<EpochMs>,
    /// Epoch ms and text of the last failure, when it failed after its last success.
    pub last_error: Option<(EpochMs, String)>,
}

impl SourceState {
    /// Answering: it succeeded last (`None` before its first attempt).
    pub fn up(&self) -> Option<bool> {
        match (&self.last_ok_ms, &self.last_error) {
            (None, None) => None,
            (_, Some(_)) => Some(false),
            (Some(_), None) => Some(true),
        }
    }
}

/// One source, for the status page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStatus {
    /// `rest` or `event_log`.
    pub kind: &'static str,
    /// The target URL or folder, as configured.
    pub name: String,
    /// Its state.
    pub state: SourceState,
}

impl Health {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        // A poisoned lock only means a writer panicked mid-update; the values stay usable.
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A poll of REST target `target` answered (`ok`) or not, at `at_ms`.
    pub fn polled(&self, target: &str, ok: bool, at_ms: EpochMs) {
        self.with(|i| {
            let r = i.targets.entry(target.to_string()).or_default();
            if ok {
                r.last_ok_ms = Some(at_ms);
                r.down_since_ms = None;
            } else if r.down_since_ms.is_none() {
                r.down_since_ms = Some(at_ms);
            }
        })
    }

    /// Why the last poll of REST target `target` failed (kept until it answers again).
    pub fn rest_error(&self, target: &str, at_ms: EpochMs, error: &str) {
        self.with(|i| {
            i.target_errors
                .insert(target.to_string(), (at_ms, error.to_string()))
        });
    }

    /// Event-log folder `folder` was listed (`error: None`) or could not be, at `at_ms`.
    pub fn folder_listed(&self, folder: &str, error: Option<&str>, at_ms: EpochMs) {
        self.with(|i| {
            let f = i.folders.entry(folder.to_string()).or_default();
            match error {
                None => {
                    f.last_ok_ms = Some(at_ms);
                    f.last_error = None;
                }
                Some(e) => f.last_error = Some((at_ms, e.to_string())),
            }
        })
    }

    /// The sources: each of `rest_targets` (in their order), then the event-log folders as
    /// listed (or, before the first listing, `folders` as configured).
    pub fn sources(&self, rest_targets: &[String], folders: &[String]) -> Vec<SourceStatus> {
        self.with(|i| {
            let mut v = vec![];
            for t in rest_targets {
                let reach = i.targets.get(t).copied().unwrap_or_default();
                let last_error = if reach.down_since_ms.is_some() {
                    i.target_errors
                        .get(t)
                        .cloned()
                        .or_else(|| reach.down_since_ms.map(|at| (at, "no answer".to_string())))
                } else {
                    None
                };
                v.push(SourceStatus {
                    kind: "rest",
                    name: t.clone(),
                    state: SourceState {
                        last_ok_ms: reach.last_ok_ms,
                        last_error,
                    },
                });
            }
            // The folders as the reader shows them once it has listed them; before that, as
            // configured.
            if i.folders.is_empty() {
                for f in folders {
                    v.push(SourceStatus {
                        kind: "event_log",
                        name: f.clone(),
                        state: SourceState::default(),
                    });
                }
            }
            for (f, state) in &i.folders {
                v.push(SourceStatus {
                    kind: "event_log",
                    name: f.clone(),
                    state: state.clone(),
                });
            }
            v
        })
    }

    /// The event-log reader's first discovery pass is done.
    pub fn event_logs_listed(&self) {
        self.with(|i| i.event_logs_listed = true)
    }

    /// How `target` answered so far; `None` before its first poll.
    pub fn reach(&self, target: &str) -> Option<Reach> {
        self.with(|i| i.targets.get(target).copied())
    }

    /// Whether every one of `targets` has been polled at least once, answered or not.
    pub fn polled_all(&self, targets: &[String]) -> bool {
        self.with(|i| targets.iter().all(|t| i.targets.contains_key(t)))
    }

    /// Whether the event-log reader's first discovery pass is done.
    pub fn event_logs_ready(&self) -> bool {
        self.with(|i| i.event_logs_listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_say_up_down_and_why() {
        let h = Health::default();
        let (a, b) = ("http://a:4040".to_string(), "http://b:4040".to_string());
        h.polled(&a, true, 1_000);
        h.polled(&b, false, 2_000);
        h.rest_error(&b, 2_000, "connection refused");
        h.folder_listed("/logs", None, 3_000);
        h.folder_listed("s3://b/logs", Some("no S3 credentials found"), 3_000);
        let s = h.sources(
            &[a.clone(), b.clone(), "http://c".into()],
            &["/logs".into(), "s3://b/logs".into()],
        );
        let up: Vec<Option<bool>> = s.iter().map(|x| x.state.up()).collect();
        assert_eq!(up, [Some(true), Some(false), None, Some(true), Some(false)]);
        assert_eq!(
            s[1].state.last_error,
            Some((2_000, "connection refused".into()))
        );
        // Answering again clears the error.
        h.polled(&b, true, 4_000);
        let s = h.sources(&[b], &[]);
        assert_eq!(s[0].state.up(), Some(true));
        assert_eq!(s[0].state.last_error, None);
    }

    #[test]
    fn a_target_is_down_since_its_first_failure_after_a_success() {
        let h = Health::default();
        let t = "http://driver:4040";
        assert_eq!(h.reach(t), None);
        assert!(!h.polled_all(&[t.to_string()]));
        assert!(h.polled_all(&[]));
        h.polled(t, false, 1);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: None,
                down_since_ms: Some(1)
            })
        );
        assert!(h.polled_all(&[t.to_string()]), "polled, not answered");
        h.polled(t, true, 2);
        h.polled(t, false, 3);
        h.polled(t, false, 4);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: Some(2),
                down_since_ms: Some(3)
            })
        );
        h.polled(t, true, 5);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: Some(5),
                down_since_ms: None
            })
        );
    }

    #[test]
    fn event_logs_are_ready_once_listed() {
        let h = Health::default();
        assert!(!h.event_logs_ready());
        h.event_logs_listed();
        assert!(h.event_logs_ready());
    }
}
