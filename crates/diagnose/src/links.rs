//! Links into the Spark UI: a live driver serves its pages at its root, a History Server under
//! `/history/<app id>`.

/// Where one application's UI pages are, if anywhere.
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// The UI's base URL, without a trailing slash.
    base: Option<String>,
    /// A History Server (pages under `/history/<app id>`), not a live driver.
    history: bool,
}

impl Links {
    /// No UI known (an event log read without `--ui-url`).
    pub fn none() -> Links {
        Links::default()
    }

    /// The UI at `base`: a History Server when `history`, else a live driver.
    pub fn at(base: &str, history: bool) -> Links {
        Links {
            base: Some(base.trim_end_matches('/').to_string()).filter(|b| !b.is_empty()),
            history,
        }
    }

    /// Page `path` (relative, such as `executors/`) of application `app_id`.
    pub fn page(&self, app_id: &str, path: &str) -> Option<String> {
        let b = self.base.as_ref()?;
        Some(if self.history {
            format!("{b}/history/{app_id}/{path}")
        } else {
            format!("{b}/{path}")
        })
    }

    /// The page of stage attempt `id`.`attempt`.
    pub fn stage(&self, app_id: &str, id: u64, attempt: u32) -> Option<String> {
        self.page(app_id, &format!("stages/stage/?id={id}&attempt={attempt}"))
    }

    /// The page of SQL execution `id`.
    pub fn sql(&self, app_id: &str, id: u64) -> Option<String> {
        self.page(app_id, &format!("SQL/execution/?id={id}"))
    }
}

/// Which UI the applications of a diagnosis link to.
#[derive(Debug, Clone)]
pub enum Ui {
    /// None known.
    None,
    /// The REST target read: a live driver for a running application, a History Server for
    /// an ended one (a driver no longer serves once its application ended).
    Target(String),
    /// A History Server (`--ui-url` with event logs).
    History(String),
}

impl Ui {
    /// The links of an application, `ended` or not.
    pub fn links(&self, ended: bool) -> Links {
        match self {
            Ui::None => Links::none(),
            Ui::Target(u) => Links::at(u, ended),
            Ui::History(u) => Links::at(u, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_and_history_pages() {
        let live = Links::at("http://driver:4040/", false);
        assert_eq!(
            live.stage("app-1", 3, 0).as_deref(),
            Some("http://driver:4040/stages/stage/?id=3&attempt=0")
        );
        let hs = Links::at("http://hs:18080", true);
        assert_eq!(
            hs.sql("app-1", 7).as_deref(),
            Some("http://hs:18080/history/app-1/SQL/execution/?id=7")
        );
        assert_eq!(Links::none().page("app-1", "executors/"), None);
    }
}
