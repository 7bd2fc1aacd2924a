//! Checkpoints: the model's state kept across restarts (`checkpoint.path`).
//!
//! A checkpoint is one file: a header line (JSON: format, version, the fingerprint of the
//! configuration that shapes the model, when and by which exporter it was written, the
//! registry's source names by number), a line of the sources' parts by name (`sources::parts`:
//! each source's read positions, such as the logs read to their end, which a restart does not
//! read again while unchanged), then the model's state as `Model::save_state` writes it (every
//! application kept, summarised ones with
//! their counted-id sets and each series' `_created`; the applications retired or excluded; the
//! names' accumulators). It is written every `checkpoint.interval` and at the end of the drain,
//! atomically: a temporary file beside it, fsync, rename, fsync of the folder, so a crash at any
//! point leaves the previous checkpoint or the new one, never a part.
//!
//! At start, before any source runs, it is read back: a missing file is a first start; a damaged
//! one, one of another version, or one written under another configuration of the model
//! (`Settings::model_fingerprint`) is refused with a log line and
//! `spark_exporter_checkpoint_loads_total{result="refused"}`, and the exporter starts empty. The
//! sources then read everything again: the model's calls are idempotent, keyed by Spark's ids,
//! so what the checkpoint holds is not counted twice, and what happened while the exporter was
//! down is counted once.
//!
//! Positions are taken before the model's state, and a log is done only once everything it said
//! is in the model: the state written always holds at least what the positions say was read.
//!
//! **Versions.** Version 3 keeps the sources by name: the positions line is an object of the
//! sources' parts, and the header lists the registry's names by number (the model's deliveries
//! are kept by number, `model/delivery.rs`: a registry that changed is renumbered at load).
//! Version 2 (release 0.2.0) had the two sources in fixed places: its positions line's `logs`
//! is the event-log source's part, and its numbers are REST then the event log
//! ([`V2_SOURCES`]). Version 1 (0.2.0 before read positions) had no positions line (every log
//! is then read again once). Both are still read; a release reads the previous release's
//! format.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::clock::system_now_ms;
use crate::config::Settings;
use crate::model::Model;
use crate::sources::{Parts, Reshard, REGISTRY};
use crate::telemetry::Telemetry;

mod store;
use store::Store;

/// The header's `format`.
pub const FORMAT: &str = "spark-exporter-checkpoint";
/// The checkpoint format's version: a change that an older exporter cannot read is a new one;
/// each release reads the previous release's.
pub const VERSION: u32 = 3;
/// The oldest version still read.
pub const OLDEST_READ: u32 = 1;
/// The sources of versions 1 and 2, by number (release 0.2.0's two fixed places).
pub const V2_SOURCES: &[&str] = &["rest", "event_log"];

/// The first line of a checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// `Settings::model_fingerprint` of the exporter that wrote it.
    pub fingerprint: String,
    /// When it was written (epoch ms).
    pub written_ms: i64,
    /// `spark-exporter <version> (<revision>)`.
    pub writer: String,
    /// The registry's source names by number (version 3; before, [`V2_SOURCES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

impl Header {
    /// Each of its source numbers as this exporter's registry numbers the same source.
    fn renumbering(&self) -> Vec<Option<usize>> {
        let names: Vec<&str> = if self.sources.is_empty() {
            V2_SOURCES.to_vec()
        } else {
            self.sources.iter().map(String::as_str).collect()
        };
        let now = crate::sources::names();
        names
            .iter()
            .map(|n| now.iter().position(|m| m == n))
            .collect()
    }
}

/// Why a checkpoint could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read.
    #[error("cannot read the checkpoint {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The first line is not a checkpoint header.
    #[error("{path} is not a spark-exporter checkpoint (no header line)")]
    NotACheckpoint {
        /// The file.
        path: PathBuf,
    },
    /// Another version of the format.
    #[error(
        "{path} is checkpoint version {found}; this exporter reads versions {OLDEST_READ} to \
        {VERSION}"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Written under another configuration of the model.
    #[error(
        "{path} was written under another configuration of the model (fingerprint {found}, now \
         {now}): labels, histogram buckets, summary level, aggregation or shard changed"
    )]
    Fingerprint {
        /// The file.
        path: PathBuf,
        /// Its fingerprint.
        found: String,
        /// This exporter's.
        now: String,
    },
    /// The read positions after the header are damaged.
    #[error("{path}: the read positions are damaged: {source}")]
    Positions {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The model state after the header is damaged.
    #[error("{path}: the model state is damaged: {source}")]
    State {
        /// The file.
        path: PathBuf,
        /// Why.
        source: crate::model::StateError,
    },
    /// The file could not be written.
    #[error("cannot write the checkpoint {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Read the checkpoint of `settings` into `model` (which must be empty: at start, before any
/// source) and the sources' parts into `parts`. `Ok(None)` when checkpoints are off or there
/// is no file yet; on an error the model is unchanged. Counted in `telemetry`. With an
/// object-store checkpoint, call it from a blocking thread of the runtime.
pub fn load(
    settings: &Settings,
    model: &Model,
    parts: &Parts,
    telemetry: &Arc<Telemetry>,
) -> Result<Option<Loaded>, CheckpointError> {
    let Some(base) = &settings.checkpoint.path else {
        return Ok(None);
    };
    let r = Store::of(base, telemetry)
        .map_err(|source| CheckpointError::Read {
            path: base.clone(),
            source,
        })
        .and_then(|(store, name)| load_from(&store, &name, settings, model, parts));
    telemetry.checkpoint_load(match &r {
        Ok(Some(_)) => "loaded",
        Ok(None) => "none",
        Err(_) => "refused",
    });
    r
}

/// What was loaded at start.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// This exporter's own checkpoint.
    Own(Header),
    /// A reshard: the part this shard now owns of every checkpoint the previous shard count
    /// wrote (`count` shards, `files` of them found), newest written at `written_ms`.
    Handover {
        /// The previous shard count.
        count: usize,
        /// Its checkpoints found.
        files: usize,
        /// When the newest of them was written.
        written_ms: i64,
    },
}

impl Loaded {
    /// The header of this exporter's own checkpoint, if that is what was loaded.
    pub fn header(&self) -> Option<&Header> {
        match self {
            Loaded::Own(h) => Some(h),
            Loaded::Handover { .. } => None,
        }
    }
}

/// The file this exporter writes: `checkpoint.path`, or, with `shard.count` above 1,
/// `<checkpoint.path>.<index>-of-<count>` beside it (one file per shard, in a folder all shards
/// may share).
pub fn own_path(settings: &Settings) -> Option<PathBuf> {
    let base = settings.checkpoint.path.as_ref()?;
    let s = settings.shard;
    let name = base.file_name().unwrap_or_default().to_string_lossy();
    Some(base.with_file_name(shard_name(&name, s.index, s.count)))
}

/// The name of shard `index` of `count`'s checkpoint, `name` the configured one's.
fn shard_name(name: &str, index: usize, count: usize) -> String {
    if count <= 1 {
        name.to_string()
    } else {
        format!("{name}.{index}-of-{count}")
    }
}

/// Every shard's checkpoint beside `name` in `store`, as shard count -> index -> name.
fn shard_files(store: &Store, name: &str) -> BTreeMap<usize, BTreeMap<usize, String>> {
    let mut sets: BTreeMap<usize, BTreeMap<usize, String>> = BTreeMap::new();
    for f in store.list().unwrap_or_default() {
        let shard = if f == name {
            Some((0, 1))
        } else {
            f.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('.'))
                .and_then(|rest| rest.split_once("-of-"))
                .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
                .filter(|(i, n)| i < n && *n > 1)
        };
        if let Some((i, n)) = shard {
            sets.entry(n).or_default().insert(i, f);
        }
    }
    sets
}

/// The header of the checkpoint `name`, if there is one.
fn header_of(store: &Store, name: &str) -> Option<Header> {
    let mut r = store.open(name).ok()??;
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    serde_json::from_str::<Header>(line.trim_end())
        .ok()
        .filter(|h| h.format == FORMAT)
}

fn load_from(
    store: &Store,
    name: &str,
    settings: &Settings,
    model: &Model,
    parts: &Parts,
) -> Result<Option<Loaded>, CheckpointError> {
    let loaded = load_any(store, name, settings, model, parts)?;
    if loaded.is_some() {
        forget_unreportable(model, parts);
    }
    Ok(loaded)
}

/// The applications not kept (excluded, retired) are remembered while a source can still
/// report them: those its loaded part holds (the logs read, the completed applications REST
/// targets listed). The others' logs left the store, or were never read to a position (read
/// again from their start now, which refuses them again if they are refused). Done at load,
/// before any source reads: forgetting an application while its log is being read would let
/// its later events make a new one. So the set, and the checkpoints, stay bounded by what the
/// store holds.
fn forget_unreportable(model: &Model, parts: &Parts) {
    let loaded = parts.all_loaded();
    let ids: Vec<String> = REGISTRY
        .iter()
        .filter_map(|p| loaded.get(p.name()).map(|part| p.reportable(part)))
        .flatten()
        .collect();
    let reportable: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    // An attempt's model key is `{id}/{attempt}`; a log knows its application's id.
    let forgotten = model.forget_excluded(|id| {
        reportable.contains(id)
            || id
                .split_once('/')
                .is_some_and(|(app, _)| reportable.contains(app))
    });
    if forgotten > 0 {
        tracing::info!(
            forgotten,
            "Applications not kept whose logs left the store are forgotten."
        );
    }
}

fn load_any(
    store: &Store,
    name: &str,
    settings: &Settings,
    model: &Model,
    parts: &Parts,
) -> Result<Option<Loaded>, CheckpointError> {
    let own = shard_name(name, settings.shard.index, settings.shard.count);
    let own_written = header_of(store, &own).map(|h| h.written_ms);
    // The newest set written under another shard count, if newer than this shard's own
    // checkpoint: the shards were changed since (a reshard), hand its state over.
    let newest_other = shard_files(store, name)
        .into_iter()
        .filter(|(n, _)| *n != settings.shard.count)
        .filter_map(|(n, files)| {
            let newest = files
                .values()
                .filter_map(|f| header_of(store, f))
                .map(|h| h.written_ms)
                .max()?;
            Some((newest, n, files))
        })
        .max_by_key(|(w, n, _)| (*w, *n));
    match (own_written, newest_other) {
        (_, Some((w, n, files))) if own_written.is_none_or(|o| o < w) => {
            handover(store, settings, n, &files, model, parts)?;
            Ok(Some(Loaded::Handover {
                count: n,
                files: files.len(),
                written_ms: w,
            }))
        }
        _ => Ok(read_into(
            store,
            &own,
            &settings.accepted_model_fingerprints(),
            parts,
            |r, map| model.load_state_renumbered(r, map),
        )?
        .map(Loaded::Own)),
    }
}

/// A reshard: load this shard's part of each of the `count` old shards' `files`; each source
/// hands over its part ([`crate::sources::Plugin::hand_over`]). An old shard's checkpoint that
/// is refused (damaged, another configuration) is skipped, said in the log: what it held is
/// read again.
fn handover(
    store: &Store,
    settings: &Settings,
    count: usize,
    files: &BTreeMap<usize, String>,
    model: &Model,
    parts: &Parts,
) -> Result<(), CheckpointError> {
    let mut per_shard: BTreeMap<usize, BTreeMap<String, serde_json::Value>> = BTreeMap::new();
    for (i, file) in files {
        let mut old = settings.clone();
        old.shard = crate::shard::Shard { index: *i, count };
        let shard_parts = Parts::default();
        match read_into(
            store,
            file,
            &old.accepted_model_fingerprints(),
            &shard_parts,
            |r, map| model.merge_state_renumbered(r, map),
        ) {
            Ok(Some(_)) => {
                per_shard.insert(*i, shard_parts.all_loaded());
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "A previous shard's checkpoint is refused; what it held \
                    is read again.")
            }
        }
    }
    let mine = settings.shard_by_app_id();
    let reshard = Reshard {
        count,
        by_name: settings.model.aggregate_by == crate::config::AggregateBy::AppName,
        mine: &mine,
    };
    let mut merged = BTreeMap::new();
    for p in REGISTRY {
        let of_source: BTreeMap<usize, serde_json::Value> = per_shard
            .iter()
            .filter_map(|(i, parts)| Some((*i, parts.get(p.name())?.clone())))
            .collect();
        if let Some(part) = p.hand_over(&of_source, &reshard) {
            merged.insert(p.name().to_string(), part);
        }
    }
    parts.set_loaded(merged);
    Ok(())
}

/// Read the checkpoint `name` of `store`: the sources' parts into `parts`, its model state
/// through `state` (a load, or a reshard's merge, given how to renumber the sources). `Ok(None)`
/// if there is none.
fn read_into(
    store: &Store,
    name: &str,
    fingerprints: &[String],
    parts: &Parts,
    state: impl FnOnce(&mut dyn BufRead, &[Option<usize>]) -> Result<(), crate::model::StateError>,
) -> Result<Option<Header>, CheckpointError> {
    let path = store.shown(name);
    let rerr = |source| CheckpointError::Read {
        path: path.clone(),
        source,
    };
    let Some(mut r) = store.open(name).map_err(rerr)? else {
        return Ok(None);
    };
    let mut line = String::new();
    r.read_line(&mut line).map_err(rerr)?;
    let header: Header = serde_json::from_str(line.trim_end())
        .ok()
        .filter(|h: &Header| h.format == FORMAT)
        .ok_or_else(|| CheckpointError::NotACheckpoint { path: path.clone() })?;
    if !(OLDEST_READ..=VERSION).contains(&header.version) {
        return Err(CheckpointError::Version {
            path,
            found: header.version,
        });
    }
    if !fingerprints.contains(&header.fingerprint) {
        return Err(CheckpointError::Fingerprint {
            path,
            found: header.fingerprint,
            now: fingerprints.first().cloned().unwrap_or_default(),
        });
    }
    let mut read_parts = BTreeMap::new();
    if header.version >= 2 {
        line.clear();
        r.read_line(&mut line).map_err(rerr)?;
        read_parts =
            serde_json::from_str(line.trim_end()).map_err(|source| CheckpointError::Positions {
                path: path.clone(),
                source,
            })?;
    }
    if header.version == 2 {
        // 0.2.0 called the event-log source's part `logs`.
        if let Some(logs) = read_parts.remove("logs") {
            read_parts.insert("event_log".to_string(), logs);
        }
    }
    state(&mut r, &header.renumbering()).map_err(|source| CheckpointError::State {
        path: path.clone(),
        source,
    })?;
    parts.set_loaded(read_parts);
    Ok(Some(header))
}

/// Write the sources' `parts` and `model`'s state to the checkpoint of `settings`, atomically; the
/// bytes
/// written. `Ok(0)` when checkpoints are off. With an object-store checkpoint, call it from a
/// blocking thread of the runtime.
pub fn save(
    settings: &Settings,
    model: &Model,
    parts: &Parts,
    telemetry: &Arc<Telemetry>,
) -> Result<u64, CheckpointError> {
    let (Some(base), Some(path)) = (&settings.checkpoint.path, own_path(settings)) else {
        return Ok(0);
    };
    let werr = |source| CheckpointError::Write {
        path: path.clone(),
        source,
    };
    let (store, name) = Store::of(base, telemetry).map_err(werr)?;
    let name = shard_name(&name, settings.shard.index, settings.shard.count);
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        fingerprint: settings.model_fingerprint(),
        written_ms: system_now_ms(),
        writer: format!(
            "spark-exporter {} ({})",
            env!("CARGO_PKG_VERSION"),
            env!("SE_BUILD_REVISION")
        ),
        sources: crate::sources::names()
            .into_iter()
            .map(String::from)
            .collect(),
    };
    let positions = parts.to_write();
    store
        .write(&name, |w| {
            serde_json::to_writer(&mut *w, &header)?;
            w.write_all(b"\n")?;
            // The positions first: the model's state taken after them holds at least what
            // they say.
            serde_json::to_writer(&mut *w, &positions)?;
            w.write_all(b"\n")?;
            model
                .save_state(&mut *w)
                .map_err(|e| std::io::Error::other(e.to_string()))
        })
        .map_err(|source| CheckpointError::Write {
            path: store.shown(&name),
            source,
        })
}

/// Write one checkpoint, counted and logged; on the blocking pool (it serialises the model and
/// syncs the disk).
pub async fn write_once(
    settings: Arc<Settings>,
    model: Arc<Model>,
    parts: Arc<Parts>,
    telemetry: Arc<Telemetry>,
) {
    if settings.checkpoint.path.is_none() {
        return;
    }
    let s = settings.clone();
    let t = telemetry.clone();
    let r = tokio::task::spawn_blocking(move || save(&s, &model, &parts, &t)).await;
    match r {
        Ok(Ok(bytes)) => {
            telemetry.checkpoint_write("ok");
            tracing::debug!(bytes, "Checkpoint written.");
        }
        Ok(Err(e)) => {
            telemetry.checkpoint_write("error");
            tracing::warn!(error = %e, "Cannot write the checkpoint; the next attempt is in one \
                interval.");
        }
        Err(e) => {
            telemetry.checkpoint_write("error");
            tracing::warn!(error = %e, "The checkpoint task failed.");
        }
    }
}

/// Write a checkpoint every `checkpoint.interval` until `stop` (the last one, at the end of the
/// drain, is the lifecycle's).
pub async fn run(
    settings: Arc<Settings>,
    model: Arc<Model>,
    parts: Arc<Parts>,
    telemetry: Arc<Telemetry>,
    stop: CancellationToken,
) {
    if settings.checkpoint.path.is_none() {
        return;
    }
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(settings.checkpoint.interval) => {}
        }
        write_once(
            settings.clone(),
            model.clone(),
            parts.clone(),
            telemetry.clone(),
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `Settings::model_fingerprint` of 0.2.0's default configuration (before issue 49).
    const PREVIOUS_DEFAULT_FINGERPRINT: &str = "c5349e2d";

    fn settings(dir: &Path) -> Settings {
        let mut s = Settings::default();
        s.checkpoint.path = Some(dir.join("state.ckpt"));
        s
    }

    /// The model's state as written, as JSON.
    fn state_of(m: &Model) -> serde_json::Value {
        let mut out = Vec::new();
        m.save_state(&mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn a_checkpoint_reads_back_and_a_changed_configuration_refuses_it() {
        let d = tempfile::tempdir().unwrap();
        let s = settings(d.path());
        let t = Arc::new(Telemetry::default());
        let m = Model::new(&s, t.clone());
        let p = Parts::new(true);
        // No file: a first start.
        assert!(load(&s, &m, &p, &t).unwrap().is_none());
        let n = save(&s, &m, &p, &t).unwrap();
        assert!(n > 0);
        let back = Model::new(&s, t.clone());
        let l = load(&s, &back, &p, &t).unwrap().expect("a checkpoint");
        assert_eq!(l.header().unwrap().fingerprint, s.model_fingerprint());
        // Another summary level shapes the model otherwise: refused, named.
        let mut other = s.clone();
        other.model.summary_level = crate::config::SummaryLevel::Full;
        let e = load(&other, &Model::new(&other, t.clone()), &p, &t).unwrap_err();
        assert!(
            e.to_string().contains("another configuration of the model"),
            "{e}"
        );
        // Damaged: refused.
        std::fs::write(
            s.checkpoint.path.as_ref().unwrap(),
            "{\"format\":\"nope\"}\n",
        )
        .unwrap();
        let e = load(&s, &Model::new(&s, t.clone()), &p, &t).unwrap_err();
        assert!(matches!(e, CheckpointError::NotACheckpoint { .. }), "{e}");
        let snap = t.snapshot();
        assert_eq!(snap.checkpoint_loads.get("none"), Some(&1));
        assert_eq!(snap.checkpoint_loads.get("loaded"), Some(&1));
        assert_eq!(snap.checkpoint_loads.get("refused"), Some(&2));
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    /// A checkpoint written under the previous default rewrite rules (every number folded) is
    /// still read while the rules are the defaults; one written under rules of the user's own is
    /// refused as before.
    #[test]
    fn a_checkpoint_under_the_previous_default_rules_is_read() {
        let d = tempfile::tempdir().unwrap();
        let s = settings(d.path());
        let t = Arc::new(Telemetry::default());
        let mut before = s.clone();
        before.labels.rewrite_rules = crate::config::previous_default_rewrite_rules();
        // What 0.2.0 wrote with its default configuration.
        let mut plain = Settings::default();
        plain.labels.rewrite_rules = before.labels.rewrite_rules.clone();
        assert_eq!(plain.model_fingerprint(), PREVIOUS_DEFAULT_FINGERPRINT);
        assert_ne!(before.model_fingerprint(), s.model_fingerprint());
        save(
            &before,
            &Model::new(&before, t.clone()),
            &Parts::new(true),
            &t,
        )
        .unwrap();
        let l = load(&s, &Model::new(&s, t.clone()), &Parts::new(true), &t)
            .unwrap()
            .expect("read under the new defaults");
        assert_eq!(l.header().unwrap().fingerprint, before.model_fingerprint());
        let mut own = s.clone();
        own.labels.rewrite_rules.pop();
        let e = load(&own, &Model::new(&own, t.clone()), &Parts::new(true), &t).unwrap_err();
        assert!(matches!(e, CheckpointError::Fingerprint { .. }), "{e}");
    }

    /// Release N+1 reads release N's format: a version-1 checkpoint (no positions line) loads,
    /// with no positions (every log is read again once).
    #[test]
    fn a_version_1_checkpoint_is_read() {
        let d = tempfile::tempdir().unwrap();
        let s = settings(d.path());
        let t = Arc::new(Telemetry::default());
        let m = Model::new(&s, t.clone());
        let state = serde_json::to_vec(&state_of(&m)).unwrap();
        let header = Header {
            format: FORMAT.into(),
            version: 1,
            fingerprint: s.model_fingerprint(),
            written_ms: 1,
            writer: "spark-exporter 0.2.0 (before positions)".into(),
            sources: vec![],
        };
        let mut v1 = serde_json::to_vec(&header).unwrap();
        v1.push(b'\n');
        v1.extend_from_slice(&state);
        std::fs::write(s.checkpoint.path.as_ref().unwrap(), v1).unwrap();
        let p = Parts::new(true);
        let h = load(&s, &Model::new(&s, t.clone()), &p, &t).unwrap();
        assert_eq!(h.and_then(|h| h.header().map(|h| h.version)), Some(1));
        assert!(p.all_loaded().is_empty());
        // Written back as the current version, with the sources' parts.
        let (logs, rest) = parts_holding("local-1", "app-1");
        p.publish("event_log", logs.clone());
        p.publish("rest", rest);
        save(&s, &m, &p, &t).unwrap();
        let back = Parts::new(true);
        let h = load(&s, &Model::new(&s, t.clone()), &back, &t).unwrap();
        let h = h.and_then(|h| h.header().cloned()).unwrap();
        assert_eq!(
            (h.version, h.sources),
            (VERSION, vec!["rest".into(), "event_log".into()])
        );
        assert_eq!(back.loaded("event_log"), Some(logs.to_json()));
        assert_eq!(back.loaded("rest").unwrap()["http://hs:18080"]["app-1"], 7);
    }

    /// The event-log part with one done log of `logged`, the REST part with the completed
    /// application `listed` of one History Server.
    fn parts_holding(
        logged: &str,
        listed: &str,
    ) -> (Arc<dyn crate::sources::Part>, Arc<dyn crate::sources::Part>) {
        use crate::sources::eventlog::positions::{DoneLog, LogPart, LogPositions};
        let mut logs = LogPositions::new();
        logs.insert(
            format!("/logs/{logged}"),
            DoneLog {
                app_id: logged.into(),
                files: vec![(0, false, 10)],
                open: None,
            },
        );
        let rest = crate::sources::rest::positions::RestPart::default();
        rest.publish("http://hs:18080", [(listed.to_string(), 7)].into());
        (Arc::new(LogPart(Arc::new(logs))), Arc::new(rest))
    }

    /// What the model does not keep is remembered only while a source can report it again:
    /// at load, the excluded and retired applications whose logs left the store (and that no
    /// History Server lists) are forgotten.
    #[test]
    fn excluded_applications_are_bounded_by_what_the_sources_hold() {
        let d = tempfile::tempdir().unwrap();
        let s = settings(d.path());
        let t = Arc::new(Telemetry::default());
        let m = Model::new(&s, t.clone());
        let mut v = state_of(&m);
        v["excluded"] = serde_json::json!(["gone-1", "in-store", "listed"]);
        v["retired"] = serde_json::json!(["gone-1", "in-store"]);
        m.load_state(serde_json::to_vec(&v).unwrap().as_slice())
            .unwrap();
        let p = Parts::new(true);
        let (logs, rest) = parts_holding("in-store", "listed");
        p.publish("event_log", logs);
        p.publish("rest", rest);
        save(&s, &m, &p, &t).unwrap();
        // Written as it is: nothing is forgotten while the exporter runs.
        assert_eq!(state_of(&m)["excluded"].as_array().map(Vec::len), Some(3));
        let back = Model::new(&s, t.clone());
        load(&s, &back, &Parts::new(true), &t).unwrap();
        let after = state_of(&back);
        assert_eq!(after["excluded"], serde_json::json!(["in-store", "listed"]));
        assert_eq!(after["retired"], serde_json::json!(["in-store"]));
    }
}
