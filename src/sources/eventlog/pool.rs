//! Several [`Engine`]s read in parallel, one per core: a log belongs to one engine (by its
//! identity), folders are listed once for all of them, and each step polls every engine on its own
//! thread. Reading (I/O, decompression, JSON) runs in parallel; the model's updates still take
//! its one lock, in whatever order the engines reach it, which is safe because every update is
//! keyed by Spark's ids (see `crate::model`). A cold start over many applications so uses every
//! core (BENCHMARKS.md, "Cold start over many applications").

use std::collections::{HashMap, HashSet};

use super::apply::Out;
use super::discovery::{app_id_from_name, FileId, Found};
use super::engine::{empty_counts, list_dirs, Engine};
use super::fs::Root;
use super::positions::LogPositions as Positions;
use crate::filter::AppFilter;

/// Engines reading in parallel.
#[derive(Debug)]
pub struct Pool {
    shards: Vec<Engine>,
    failing_dirs: HashMap<String, String>,
    /// The engine each log belongs to, for good, and the weight it added to that engine's load.
    assigned: HashMap<FileId, (usize, u64)>,
    /// Bytes (as first listed; a rolling folder counts [`ROLLING_WEIGHT`]) given to each engine.
    load: Vec<u64>,
    /// The applications this exporter reads, asked by the id a log's name gives and the log's
    /// last modification (`model.max_app_age`): a log the model would drop is not read at all.
    filter: AppFilter,
}

/// What a rolling folder weighs when it is assigned (its parts are not listed yet): one part.
const ROLLING_WEIGHT: u64 = 128 * 1024 * 1024;

fn weight(f: &Found) -> u64 {
    match f {
        Found::Single { len, .. } => *len,
        Found::Rolling { .. } => ROLLING_WEIGHT,
    }
}

impl Pool {
    /// `threads` engines (at least one) that skip lines over `max_line` bytes.
    pub fn new(threads: usize, max_line: usize) -> Pool {
        Pool {
            shards: (0..threads.max(1)).map(|_| Engine::new(max_line)).collect(),
            failing_dirs: HashMap::new(),
            assigned: HashMap::new(),
            load: vec![0; threads.max(1)],
            filter: AppFilter::default(),
        }
    }

    /// Read only the logs `filter` lets through (the model's filter; every log by default).
    pub fn with_filter(mut self, filter: AppFilter) -> Pool {
        self.filter = filter;
        self
    }

    /// Whether `found` is a log of an application this exporter follows.
    fn owns(&self, found: &Found) -> bool {
        let name = match found {
            Found::Single { name, .. } => name.name.as_str(),
            Found::Rolling { name, .. } => name.as_str(),
        };
        self.filter.reads_log(
            &app_id_from_name(name),
            found.modified_ms(),
            crate::clock::system_now_ms(),
        )
    }

    /// The engine of `found`: the one it was given to, or (first sight) the least loaded, so a
    /// cold start over many logs spreads the bytes evenly.
    fn shard_of(&mut self, found: &Found) -> usize {
        if let Some((i, _)) = self.assigned.get(&found.id()) {
            return *i;
        }
        let (i, _) = self
            .load
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| **l)
            .unwrap_or((0, &0));
        let w = weight(found).max(1);
        self.load[i] += w;
        self.assigned.insert(found.id(), (i, w));
        i
    }

    /// Forget the assignments of logs their engine has dropped (deleted and read to the end).
    fn forget_dropped(&mut self) {
        let (shards, load) = (&self.shards, &mut self.load);
        self.assigned.retain(|id, (i, w)| {
            let kept = shards[*i].follows(id);
            if !kept {
                load[*i] = load[*i].saturating_sub(*w);
            }
            kept
        });
    }

    /// The folders (as shown) that could not be listed last time, with why.
    /// Resume from a checkpoint's positions (see `positions.rs`).
    pub fn resume_from(&mut self, p: std::sync::Arc<Positions>) {
        for e in &mut self.shards {
            e.resume_from(p.clone());
        }
    }

    /// Every done log of every engine.
    pub fn done_logs(&self) -> Positions {
        let mut p = Positions::new();
        for e in &self.shards {
            e.done_logs(&mut p);
        }
        p
    }

    pub fn failing_dirs(&self) -> &HashMap<String, String> {
        &self.failing_dirs
    }

    /// List every folder once and hand each log to its engine.
    pub fn scan(&mut self, dirs: &[Root], out: Out<'_>) {
        let mut failing = std::mem::take(&mut self.failing_dirs);
        let listings = list_dirs(dirs, &mut failing, out);
        self.failing_dirs = failing;
        for (dir, listed) in listings {
            let Some(mut found) = listed else { continue };
            found.retain(|f| self.owns(f));
            let ids: HashSet<FileId> = found.iter().map(Found::id).collect();
            // Biggest first, so the least-loaded assignment balances well.
            found.sort_by_key(|f| std::cmp::Reverse(weight(f)));
            let mut parts: HashMap<usize, Vec<Found>> = HashMap::new();
            for f in found {
                parts.entry(self.shard_of(&f)).or_default().push(f);
            }
            for (i, e) in self.shards.iter_mut().enumerate() {
                e.merge(dir, parts.remove(&i).unwrap_or_default(), &ids, out);
            }
        }
        self.forget_dropped();
    }

    /// Add one log (given explicitly, never considered deleted) to its engine.
    pub fn add(&mut self, found: Found, root: &Root, out: Out<'_>) {
        if !self.owns(&found) {
            return;
        }
        let i = self.shard_of(&found);
        self.shards[i].add(found, &root.fs, None, out);
    }

    /// One step of every engine, in parallel; returns the raw bytes read.
    pub fn poll(&mut self, out: Out<'_>) -> u64 {
        if let [one] = self.shards.as_mut_slice() {
            return one.poll(out, None);
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = self
                .shards
                .iter_mut()
                .map(|e| s.spawn(move || e.poll(out, None)))
                .collect();
            // A panicking engine loses its step (the caller starts over), not the others'.
            handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
        })
    }

    /// Post-mortem: settle every log's application id (not of files that held no event).
    pub fn settle_all(&mut self, out: Out<'_>) {
        for e in &mut self.shards {
            e.settle_all(out);
        }
    }

    /// The logs, as shown, that held no Spark event (after [`Pool::settle_all`]).
    pub fn not_event_logs(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .shards
            .iter()
            .flat_map(|e| e.not_event_logs())
            .collect();
        v.sort();
        v
    }

    /// Report file counts by state, all engines together.
    pub fn report(&self, out: Out<'_>) {
        let mut counts = empty_counts();
        for e in &self.shards {
            e.count_files(&mut counts);
        }
        out.telemetry.set_eventlog_files(counts);
    }

    /// Logs followed.
    pub fn len(&self) -> usize {
        self.shards.iter().map(Engine::len).sum()
    }

    /// Whether no log is followed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::eventlog::discovery::parse_single_name;

    fn log(app: &str, modified_ms: Option<i64>) -> Found {
        Found::Single {
            path: app.into(),
            id: (0, 0),
            name: parse_single_name(app).expect("a log name"),
            len: 1,
            modified_ms,
        }
    }

    #[test]
    fn logs_older_than_max_app_age_are_not_read() {
        let now = crate::clock::system_now_ms();
        let mut s = crate::config::Settings::default();
        s.model.max_app_age = Some(std::time::Duration::from_secs(3600));
        let p = Pool::new(1, 1024).with_filter(AppFilter::new(&s));
        assert!(p.owns(&log("local-1", Some(now - 60_000))));
        assert!(!p.owns(&log("local-2", Some(now - 7_200_000))));
        assert!(p.owns(&log("local-3", None)), "no time known: read");
        let all = Pool::new(1, 1024);
        assert!(all.owns(&log("local-2", Some(now - 7_200_000))));
    }
}
