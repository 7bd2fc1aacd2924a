//! What the catalogue's readers read: the model's read view, labelled, once per export.
//!
//! Each application's groups, stages, executors, SQL descriptions and streaming queries are
//! taken from the view once, with their label sets built once and shared by every family that
//! reads them; then each catalogue entry reads its samples from these rows.

use std::sync::Arc;

use super::sample::{plus, plus1, Labels};
use crate::model::view::{AppView, ExecutorView, GroupView, ModelView, SqlView, StageView};
use crate::model::{EpochMs, StreamAgg};
use crate::telemetry::TelemetrySnapshot;

/// Everything one export reads.
pub struct Ctx<'a> {
    /// Wall-clock time of the export (epoch ms).
    pub now: EpochMs,
    /// Applications, in id order.
    pub apps: Vec<AppRows<'a>>,
    /// The exporter's own metrics.
    pub tele: &'a TelemetrySnapshot,
    /// The exporter process's resources (`process_*`), read once per export.
    pub process: crate::process::Stats,
}

/// One stage attempt with its label sets.
pub struct StageRow<'a> {
    /// The view.
    pub stage: StageView<'a>,
    /// Application, group, `stage_id` and `stage_attempt`.
    pub labels: Labels,
}

/// One application's labelled rows.
pub struct AppRows<'a> {
    /// The view.
    pub app: AppView<'a>,
    /// `app_id`, `app_name`.
    pub base: Labels,
    /// Job groups with application and group labels.
    pub groups: Vec<(Labels, GroupView<'a>)>,
    /// Stage attempts.
    pub stages: Vec<StageRow<'a>>,
    /// Executors with application and `executor_id` labels.
    pub executors: Vec<(Labels, ExecutorView<'a>)>,
    /// SQL descriptions with application and `description` labels.
    pub sql: Vec<(Labels, SqlView<'a>)>,
    /// Streaming queries with application and `query` labels.
    pub streams: Vec<(Labels, &'a StreamAgg)>,
}

fn group_labels(base: &Labels, key: &(Arc<str>, Arc<str>)) -> Labels {
    plus(
        base,
        &[
            ("job_group", key.0.clone()),
            ("job_description", key.1.clone()),
        ],
    )
}

impl<'a> Ctx<'a> {
    /// The rows of every application in `view`.
    pub fn new(view: &ModelView<'a>, now: EpochMs, tele: &'a TelemetrySnapshot) -> Ctx<'a> {
        Self::of(view.apps(), now, tele)
    }

    /// The rows of `apps` (runs, or names' states across runs).
    pub fn of(
        apps: impl Iterator<Item = AppView<'a>>,
        now: EpochMs,
        tele: &'a TelemetrySnapshot,
    ) -> Ctx<'a> {
        Ctx {
            now,
            apps: apps.map(|app| AppRows::new(app, now)).collect(),
            tele,
            process: crate::process::read(),
        }
    }
}

impl<'a> AppRows<'a> {
    fn new(app: AppView<'a>, now: EpochMs) -> AppRows<'a> {
        // A name's series across runs have no `app_id` (`model.aggregate_by: app_name`).
        // Per run, `attempt_id` follows `app_id` whenever Spark reports an attempt (YARN gives
        // `1` from the start, so the label is never added later).
        let base: Labels = if app.by_name() {
            Arc::new([("app_name", app.name().clone())])
        } else if let Some(attempt) = app.attempt() {
            Arc::new([
                ("app_id", app.id().clone()),
                ("attempt_id", attempt.clone()),
                ("app_name", app.name().clone()),
            ])
        } else {
            Arc::new([
                ("app_id", app.id().clone()),
                ("app_name", app.name().clone()),
            ])
        };
        let groups = app
            .groups()
            .into_iter()
            .map(|g| (group_labels(&base, g.key), g))
            .collect();
        let stages = app
            .stages(now)
            .into_iter()
            .map(|stage| {
                let ids = [
                    ("job_group", stage.group.0.clone()),
                    ("job_description", stage.group.1.clone()),
                    ("stage_id", Arc::from(stage.stage_id.to_string())),
                    ("stage_attempt", Arc::from(stage.attempt.to_string())),
                ];
                StageRow {
                    labels: plus(&base, &ids),
                    stage,
                }
            })
            .collect();
        let executors = app
            .executors()
            .into_iter()
            .map(|e| (plus1(&base, "executor_id", e.id), e))
            .collect();
        let sql = app
            .sql()
            .into_iter()
            .map(|q| {
                let ids = [
                    ("job_group", Arc::from(q.job_group)),
                    ("description", q.description.clone()),
                ];
                (plus(&base, &ids), q)
            })
            .collect();
        let streams = app
            .streaming()
            .map(|(q, a)| (plus(&base, &[("query", q.clone())]), a))
            .collect();
        AppRows {
            app,
            base,
            groups,
            stages,
            executors,
            sql,
            streams,
        }
    }
}
