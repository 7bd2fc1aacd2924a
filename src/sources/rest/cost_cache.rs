//! The reads behind the cost and cache metrics: `/environment` once per application (for its
//! `spark.task.cpus`), and `/storage/rdd` at every poll of an unfinished application and once
//! for a finished one (it lists only the cached datasets, without their distribution: small).
//!
//! No other metric needs them, so a failure here (404 from a server without the endpoint, an
//! error status, a body that is not the expected JSON) is logged and counted in
//! `spark_exporter_scrape_errors_total` but does not fail the poll; only an unreachable target
//! (connect, timeout) does, as for every request.

use serde::de::DeserializeOwned;

use super::api::{ApplicationEnvironmentInfo, RddStorageInfo};
use super::client::{Client, ClientError};
use super::convert;
use crate::model::Observer;

/// Answers read from `/environment` (404 included) before it is given up for the application:
/// the first answer settles it; errors are retried at the next polls, this many in all.
pub const ENVIRONMENT_TRIES: u8 = 3;

/// What the cost and cache reads remember about one application.
#[derive(Debug, Default)]
pub struct Extras {
    /// `/environment` tries so far; at [`ENVIRONMENT_TRIES`], or once answered, no more.
    env_tries: u8,
    /// A failure was logged at `warn` already (later ones go to `debug`).
    warned: bool,
}

impl Extras {
    /// Read `/environment` (until it answered or ran out of tries) and `/storage/rdd` of the
    /// application at `base`, reporting to `observer`.
    pub async fn poll(
        &mut self,
        c: &Client,
        base: &str,
        app_id: &str,
        observer: &dyn Observer,
    ) -> Result<(), ClientError> {
        if self.env_tries < ENVIRONMENT_TRIES {
            self.env_tries += 1;
            let path = format!("{base}/environment");
            match self
                .soft::<ApplicationEnvironmentInfo>(c, &path, app_id)
                .await?
            {
                Some(Some(env)) => {
                    self.env_tries = ENVIRONMENT_TRIES;
                    observer.set_app_props(app_id, &convert::app_props_obs(&env));
                }
                // 404: a server without the endpoint; Spark's default applies.
                Some(None) => self.env_tries = ENVIRONMENT_TRIES,
                None => {}
            }
        }
        let path = format!("{base}/storage/rdd");
        if let Some(Some(list)) = self.soft::<Vec<RddStorageInfo>>(c, &path, app_id).await? {
            observer.set_rdds(app_id, &convert::rdd_obs(&list));
        }
        Ok(())
    }

    /// GET `path`: `Some(answer)` (`Some(None)` for 404), or `None` after a failure that is
    /// logged and counted; `Err` only when the target is unreachable.
    async fn soft<T: DeserializeOwned>(
        &mut self,
        c: &Client,
        path: &str,
        app_id: &str,
    ) -> Result<Option<Option<T>>, ClientError> {
        match c.get_opt::<T>(path).await {
            Ok(v) => Ok(Some(v)),
            Err(e @ (ClientError::Connect { .. } | ClientError::Timeout { .. })) => Err(e),
            Err(e) => {
                let kind = e.kind();
                c.count_error(kind);
                if std::mem::replace(&mut self.warned, true) {
                    tracing::debug!(app_id, kind, error = %e, "Optional REST read failed again");
                } else {
                    tracing::warn!(app_id, kind, error = %e, "Optional REST read failed; its \
                        metrics wait");
                }
                Ok(None)
            }
        }
    }
}
