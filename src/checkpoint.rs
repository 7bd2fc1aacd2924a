//! Checkpoints: the model's state kept across restarts (`checkpoint.path`).
//!
//! A checkpoint is one file: a header line (JSON: format, version, the fingerprint of the
//! configuration that shapes the model, when and by which exporter it was written), then the
//! model's state as `Model::save_state` writes it (every application kept, summarised ones with
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
//! down is counted once. Read positions are not kept yet (every log is read from its start).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::clock::system_now_ms;
use crate::config::Settings;
use crate::model::Model;
use crate::telemetry::Telemetry;

/// The header's `format`.
pub const FORMAT: &str = "spark-exporter-checkpoint";
/// The checkpoint format's version: a change that an older exporter cannot read is a new one;
/// each release reads the previous release's.
pub const VERSION: u32 = 1;

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
    #[error("{path} is checkpoint version {found}; this exporter reads version {VERSION}")]
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
/// source). `Ok(None)` when checkpoints are off or there is no file yet; on an error the model
/// is unchanged. Counted in `telemetry`.
pub fn load(
    settings: &Settings,
    model: &Model,
    telemetry: &Telemetry,
) -> Result<Option<Header>, CheckpointError> {
    let Some(path) = &settings.checkpoint.path else {
        return Ok(None);
    };
    let r = read(path, &settings.model_fingerprint(), model);
    telemetry.checkpoint_load(match &r {
        Ok(Some(_)) => "loaded",
        Ok(None) => "none",
        Err(_) => "refused",
    });
    r
}

fn read(path: &Path, fingerprint: &str, model: &Model) -> Result<Option<Header>, CheckpointError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CheckpointError::Read {
                path: path.into(),
                source,
            })
        }
    };
    let mut r = BufReader::new(file);
    let mut line = String::new();
    r.read_line(&mut line)
        .map_err(|source| CheckpointError::Read {
            path: path.into(),
            source,
        })?;
    let header: Header = serde_json::from_str(line.trim_end())
        .ok()
        .filter(|h: &Header| h.format == FORMAT)
        .ok_or_else(|| CheckpointError::NotACheckpoint { path: path.into() })?;
    if header.version != VERSION {
        return Err(CheckpointError::Version {
            path: path.into(),
            found: header.version,
        });
    }
    if header.fingerprint != fingerprint {
        return Err(CheckpointError::Fingerprint {
            path: path.into(),
            found: header.fingerprint,
            now: fingerprint.into(),
        });
    }
    model
        .load_state(r)
        .map_err(|source| CheckpointError::State {
            path: path.into(),
            source,
        })?;
    Ok(Some(header))
}

/// Write `model`'s state to the checkpoint of `settings`, atomically; the bytes written.
/// `Ok(0)` when checkpoints are off.
pub fn save(settings: &Settings, model: &Model) -> Result<u64, CheckpointError> {
    let Some(path) = &settings.checkpoint.path else {
        return Ok(0);
    };
    let werr = |source| CheckpointError::Write {
        path: path.clone(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "checkpoint".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
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
    };
    let written = (|| -> std::io::Result<u64> {
        let f = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer(&mut w, &header)?;
        w.write_all(b"\n")?;
        model
            .save_state(&mut w)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        let n = f.metadata()?.len();
        drop(f);
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable once the folder is.
        std::fs::File::open(&dir)?.sync_all()?;
        Ok(n)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(werr)
}

/// Write one checkpoint, counted and logged; on the blocking pool (it serialises the model and
/// syncs the disk).
pub async fn write_once(settings: Arc<Settings>, model: Arc<Model>, telemetry: Arc<Telemetry>) {
    if settings.checkpoint.path.is_none() {
        return;
    }
    let s = settings.clone();
    let r = tokio::task::spawn_blocking(move || save(&s, &model)).await;
    match r {
        Ok(Ok(bytes)) => {
            telemetry.checkpoint_write("ok");
            tracing::debug!(bytes, "Checkpoint written.");
        }
        Ok(Err(e)) => {
            telemetry.checkpoint_write("error");
            tracing::warn!(error = %e, "Cannot write the checkpoint; the next attempt is in one interval.");
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
        write_once(settings.clone(), model.clone(), telemetry.clone()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(dir: &Path) -> Settings {
        let mut s = Settings::default();
        s.checkpoint.path = Some(dir.join("state.ckpt"));
        s
    }

    #[test]
    fn a_checkpoint_reads_back_and_a_changed_configuration_refuses_it() {
        let d = tempfile::tempdir().unwrap();
        let s = settings(d.path());
        let t = Arc::new(Telemetry::default());
        let m = Model::new(&s, t.clone());
        // No file: a first start.
        assert!(load(&s, &m, &t).unwrap().is_none());
        let n = save(&s, &m).unwrap();
        assert!(n > 0);
        let back = Model::new(&s, t.clone());
        let h = load(&s, &back, &t).unwrap().expect("a header");
        assert_eq!(h.fingerprint, s.model_fingerprint());
        // Another summary level shapes the model otherwise: refused, named.
        let mut other = s.clone();
        other.model.summary_level = crate::config::SummaryLevel::Full;
        let e = load(&other, &Model::new(&other, t.clone()), &t).unwrap_err();
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
        let e = load(&s, &Model::new(&s, t.clone()), &t).unwrap_err();
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
}
