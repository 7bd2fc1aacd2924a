//! The shared handle to the model: the state under one lock, a generation number that changes
//! with every write, the telemetry the rules count into, and the clock. Writes come through
//! [`super::Observer`] ([`super::observer`]), reads through [`super::view`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::obs::EpochMs;
use super::state::State;
use crate::clock::Clock;
use crate::config::Settings;
use crate::telemetry::Telemetry;

/// Shared handle to the model.
pub struct Model {
    state: Mutex<State>,
    /// Bumped by every write, so exporters can tell whether anything changed since a render.
    generation: AtomicU64,
    telemetry: Arc<Telemetry>,
    clock: Clock,
    /// The applications kept, built once from the settings: the collectors ask it too.
    filter: crate::filter::AppFilter,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").finish_non_exhaustive()
    }
}

impl Model {
    /// A new, empty model on the system clock.
    pub fn new(settings: &Settings, telemetry: Arc<Telemetry>) -> Arc<Model> {
        Self::with_clock(settings, telemetry, crate::clock::system())
    }

    /// A new, empty model on the given clock (tests).
    pub fn with_clock(settings: &Settings, telemetry: Arc<Telemetry>, clock: Clock) -> Arc<Model> {
        let filter = crate::filter::AppFilter::new(settings);
        let mut state = State::new(settings, filter.clone());
        state.started_ms = clock();
        Arc::new(Model {
            state: Mutex::new(state),
            generation: AtomicU64::new(0),
            telemetry,
            clock,
            filter,
        })
    }

    /// A model for one diagnosis (`diagnose`): every application keeps its detail (SQL,
    /// executors, streaming queries) whatever `model.summary_level` says, since a diagnosis
    /// reads old applications whole, and every stage attempt's detail is kept as it settles
    /// ([`Self::keep_settled_stages`]).
    pub fn for_diagnosis(settings: &Settings, telemetry: Arc<Telemetry>) -> Arc<Model> {
        let m = Self::new(settings, telemetry);
        m.keep_every_detail();
        m.keep_settled_stages();
        m
    }

    /// From now on no application is summarised, whatever `model.summary_level` says (a
    /// diagnosis, [`Self::for_diagnosis`]).
    pub(crate) fn keep_every_detail(&self) {
        self.write(|s, _, _| s.keep_detail = true)
    }

    /// The applications this model keeps: the collectors ask the same filter before they read
    /// an application, so they read nothing the model would drop.
    pub fn filter(&self) -> &crate::filter::AppFilter {
        &self.filter
    }

    /// The exporter runs `sources`: after a start, an application is served only once each has
    /// given its start-up state for it (`delivery.rs`). Call before the collectors start.
    pub fn expect_sources(&self, sources: &[super::obs::Source]) {
        self.write(|s, t, _| {
            for src in sources {
                s.sources.expect(*src);
            }
            t.set_startup_pending(!s.sources.complete());
        })
    }

    /// The self-metrics sink.
    pub fn telemetry(&self) -> &Arc<Telemetry> {
        &self.telemetry
    }

    /// Current wall-clock time in epoch ms.
    pub fn now_ms(&self) -> EpochMs {
        (self.clock)()
    }

    /// A number that changes whenever the model or the self-metrics change: equal values mean
    /// an export made then shows the same state as one made now (up to the wall clock).
    pub fn generation(&self) -> u64 {
        // Both counters only grow, so their sum changes exactly when either does.
        self.generation
            .load(Ordering::Acquire)
            .wrapping_add(self.telemetry.generation())
    }

    /// Run `f` on the state under the lock (the read view).
    pub(super) fn read<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&g)
    }

    pub(super) fn write<R>(&self, f: impl FnOnce(&mut State, &Telemetry, EpochMs) -> R) -> R {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.write_locked(g, f)
    }

    /// [`Self::write`] if the lock is free now; `None` (and `f` not run) if another thread
    /// holds it.
    pub(super) fn try_write<R>(
        &self,
        f: impl FnOnce(&mut State, &Telemetry, EpochMs) -> R,
    ) -> Option<R> {
        let g = match self.state.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        Some(self.write_locked(g, f))
    }

    fn write_locked<R>(
        &self,
        mut g: std::sync::MutexGuard<'_, State>,
        f: impl FnOnce(&mut State, &Telemetry, EpochMs) -> R,
    ) -> R {
        let now = self.now_ms();
        g.now_ms = now;
        let r = f(&mut g, &self.telemetry, now);
        // Bumped under the lock, after the change: a reader that sees the new number and then
        // takes the lock sees the change.
        self.generation.fetch_add(1, Ordering::Release);
        r
    }

    /// From now on, keep the detail of every stage attempt that settles (`details.rs`) until
    /// [`Self::take_settled_stages`] takes it: what the diagnose rules read of an attempt, at the
    /// moment it is complete.
    pub fn keep_settled_stages(&self) {
        self.write(|s, _, _| {
            s.settled.get_or_insert_with(Vec::new);
        })
    }

    /// The stage attempts settled since the last call, as `(application key, detail)` in the
    /// order they settled (none unless [`Self::keep_settled_stages`] was called).
    pub fn take_settled_stages(&self) -> Vec<(String, super::details::StageDetail)> {
        // Nothing settled changes nothing: no write, so the next scrape's render stays cached.
        if self.read(|s| s.settled.as_ref().is_none_or(Vec::is_empty)) {
            return vec![];
        }
        self.write(|s, _, _| s.settled.as_mut().map(std::mem::take).unwrap_or_default())
    }

    /// Write the model's state out as one value (versioned JSON, see `serial.rs`): every
    /// application's summary and detail, the names' accumulators, the applications not kept.
    pub fn save_state(&self, w: impl std::io::Write) -> Result<(), super::serial::StateError> {
        self.read(|s| {
            let v = super::serial::StateRef {
                version: super::serial::STATE_VERSION,
                started_ms: s.started_ms,
                apps: &s.apps,
                names: &s.names,
                excluded: &s.excluded,
                retired: &s.retired,
            };
            serde_json::to_writer(w, &v).map_err(super::serial::StateError::from)
        })
    }

    /// Replace the model's state with one written by [`Self::save_state`] (with the same
    /// configuration: what the configuration gives is not stored). On an error the model is
    /// left as it was.
    pub fn load_state(&self, r: impl std::io::Read) -> Result<(), super::serial::StateError> {
        self.load_state_renumbered(r, &[])
    }

    /// [`Self::load_state`] of a state whose sources are numbered otherwise: each source `n`
    /// of it is `map[n]` here (a checkpoint written under another registry of sources); a
    /// source no longer registered is dropped from every application's deliveries. An empty
    /// map, or one that maps each number to itself, keeps the numbers.
    pub fn load_state_renumbered(
        &self,
        r: impl std::io::Read,
        map: &[Option<usize>],
    ) -> Result<(), super::serial::StateError> {
        let v = super::serial::StateValue::read(r)?.renumbered(map);
        self.write(|s, _, _| {
            s.started_ms = v.started_ms;
            s.apps = v.apps.into_iter().collect();
            s.names = v.names;
            s.excluded = v.excluded;
            s.retired = v.retired;
        });
        Ok(())
    }

    /// Forget the applications not kept (excluded, retired) that no source can report again:
    /// those `reportable` says no longer are (their logs left the store, a History Server no
    /// longer lists them). Keeps the set, and so checkpoints, bounded by what the sources hold.
    /// Returns how many were forgotten.
    pub fn forget_excluded(&self, reportable: impl Fn(&str) -> bool) -> usize {
        self.write(|s, _, _| {
            let before = s.excluded.len();
            s.excluded.retain(|id| reportable(id));
            let State {
                excluded, retired, ..
            } = s;
            retired.retain(|id| excluded.contains(id));
            before - s.excluded.len()
        })
    }

    /// A reshard: add this shard's part of a state another shard wrote (same configuration of
    /// the model otherwise): its applications this shard owns (by id, or by name in name mode),
    /// its names this shard owns, and every application it retired (never counted again here).
    /// Called for each old shard's state, on a model that loaded nothing else; where two states
    /// hold the same application (never, unless the old shards overlapped), the first stays.
    pub fn merge_state(&self, r: impl std::io::Read) -> Result<(), super::serial::StateError> {
        self.merge_state_renumbered(r, &[])
    }

    /// [`Self::merge_state`] of a state whose sources are numbered otherwise (see
    /// [`Self::load_state_renumbered`]).
    pub fn merge_state_renumbered(
        &self,
        r: impl std::io::Read,
        map: &[Option<usize>],
    ) -> Result<(), super::serial::StateError> {
        let v = super::serial::StateValue::read(r)?.renumbered(map);
        self.write(|s, _, _| {
            if v.started_ms != 0 && (s.started_ms == 0 || v.started_ms < s.started_ms) {
                s.started_ms = v.started_ms;
            }
            for (id, app) in v.apps {
                if s.filter.owns(&id, &app.summary.name) {
                    s.apps.entry(id).or_insert(app);
                }
            }
            for (name, agg) in v.names {
                if s.filter.owns_name(&name) {
                    s.names.entry(name).or_insert(agg);
                }
            }
            for id in v.retired {
                if s.filter.owns_id(&id) && !s.apps.contains_key(&*id) {
                    s.excluded.insert(id.clone());
                    s.retired.insert(id);
                }
            }
        });
        Ok(())
    }

    /// Drop what has aged out: finished applications, finished stages' per-stage series (their
    /// totals fold into their job group), dead executors. Called periodically.
    pub fn expire(&self, now_ms: EpochMs) {
        // Most runs change nothing: only a change may make the next scrape render again.
        let now = self.now_ms();
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.now_ms = now;
        let before = g.shape();
        g.expire(now_ms, &self.telemetry);
        if g.shape() != before {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }
    /// Apply every held stage observation whose job is still unknown (end of a one-shot poll).
    pub fn flush_pending(&self) {
        self.write(|s, t, now| s.flush_orphans(EpochMs::MAX, t, now))
    }
}
