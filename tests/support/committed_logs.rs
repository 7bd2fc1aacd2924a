//! Every committed event log: each file or `eventlog_v2_*` folder under `tests/data` named as
//! Spark names logs (`local-…`, `app-…`, `application_…`), and the 51 MB benchmark log, which is
//! zstd under a name Spark does not write (`.json.zst`) and so is read as a copy named as Spark
//! names zstd logs, in `copies`. Shared by `tests/it/diagnose.rs` and
//! `crates/bench/benches/diagnose-bench.rs`
//! (which includes this file), so it uses std only.

use std::path::{Path, PathBuf};

/// The committed logs under `root/tests/data`, in path order.
pub fn committed_event_logs(root: &Path, copies: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let log = ["local-", "app-", "application_", "eventlog_v2_"]
                .iter()
                .any(|x| name.starts_with(x))
                || name.ends_with(".json.zst");
            if log && !name.ends_with(".json") {
                out.push(p);
            } else if p.is_dir() && name != "rest" && name != "rest-snapshots" {
                walk(&p, out);
            }
        }
    }
    let mut out = vec![];
    walk(&root.join("tests/data"), &mut out);
    for p in &mut out {
        if let Some(stem) = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json.zst"))
        {
            std::fs::create_dir_all(copies).expect("the copies' folder");
            let copy = copies.join(format!("local-{stem}.zstd"));
            std::fs::copy(&*p, &copy).expect("copy the benchmark log");
            *p = copy;
        }
    }
    out
}
