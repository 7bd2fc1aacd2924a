//! The set of logs being followed: discovery results merged in by identity, each log polled in
//! turn, file states reported to telemetry.
//!
//! The engine does blocking file I/O and decoding; [`super::run`] drives it from a blocking
//! thread, [`super::ingest_paths`] directly.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::apply::{Applier, LogApp, Out, ReadStats, Warnings};
use super::codec::Codec;
use super::discovery::{self, app_id_from_name, FileId, Found, Part};
use super::fs::{Fs, Root};
use super::positions::{DoneLog, LogPositions};
use super::tailer::{FileTailer, TailState};

/// Raw bytes one file may read per step before the next file's turn.
const FILE_BUDGET: u64 = 8 * 1024 * 1024;
/// Raw bytes all files together may read per step (keeps a step, and so shutdown, short).
const STEP_BUDGET: u64 = 64 * 1024 * 1024;

/// A part of a rolling log, or the one file of a single-file log.
#[derive(Debug)]
struct Tracked {
    tailer: FileTailer,
    compact: bool,
    warnings: Warnings,
    /// The last poll failed with an `io` error (cannot open or read). Retried at every listing,
    /// shown as `error` while it fails, counted once until a poll succeeds again.
    io_failing: bool,
    /// Its size at the last listing.
    len: u64,
}

#[derive(Debug)]
enum Files {
    Single {
        file: Box<Tracked>,
        in_progress: bool,
    },
    Rolling {
        parts: BTreeMap<(u64, bool), Tracked>,
        finished: bool,
    },
}

#[derive(Debug)]
struct Log {
    /// Where it is read from.
    fs: Arc<dyn Fs>,
    path: PathBuf,
    /// Folder it was discovered in, as shown (`None`: given explicitly, never considered
    /// deleted).
    dir: Option<String>,
    files: Files,
    app: LogApp,
    /// No longer listed: read what the open handles still give, then forget it.
    gone: bool,
    /// The rolling folder could not be listed last time (counted once until it can again).
    list_failing: bool,
    warnings: Warnings,
    /// Read since the model was last told the log is delivered (`Observer::app_delivered`).
    undelivered: bool,
    /// Not read: a checkpoint's positions said it was done (`positions.rs`). If it changes, it
    /// is read again from its start.
    resumed: bool,
}

/// Every followed log.
#[derive(Debug, Default)]
pub struct Engine {
    max_line: usize,
    logs: HashMap<FileId, Log>,
    failing_dirs: HashMap<String, String>,
    cursor: usize,
    /// The done logs of a checkpoint: not read again while unchanged.
    resume: Arc<LogPositions>,
}

impl Engine {
    /// An engine that skips lines over `max_line` bytes.
    pub fn new(max_line: usize) -> Engine {
        Engine {
            max_line,
            ..Engine::default()
        }
    }

    /// Resume from a checkpoint's positions: a log found done there, unchanged, is not read.
    pub fn resume_from(&mut self, positions: Arc<LogPositions>) {
        self.resume = positions;
    }

    /// Add every done log (finished, read to its end, delivered) to `into`, by the path shown.
    pub fn done_logs(&self, into: &mut LogPositions) {
        for log in self.logs.values() {
            if let Some(d) = log.done() {
                into.insert(position_key(&log.fs.display(&log.path)), d);
            }
        }
    }

    /// List every folder and merge what it holds; logs of a listed folder that are not there
    /// any more are marked gone.
    pub fn scan(&mut self, dirs: &[Root], out: Out<'_>) {
        for (dir, listed) in list_dirs(dirs, &mut self.failing_dirs, out) {
            if let Some(found) = listed {
                let ids: HashSet<FileId> = found.iter().map(Found::id).collect();
                self.merge(dir, found, &ids, out);
            }
        }
    }

    /// Merge what a listing of `dir` found (`listed`: every id it found, some of them maybe
    /// merged into another engine): its logs not listed any more are marked gone.
    pub fn merge(&mut self, dir: &Root, found: Vec<Found>, listed: &HashSet<FileId>, out: Out<'_>) {
        let shown = dir.display();
        for f in found {
            self.add(f, &dir.fs, Some(shown.clone()), out);
        }
        for (id, log) in self.logs.iter_mut() {
            if log.dir.as_deref() == Some(shown.as_str()) && !listed.contains(id) {
                log.gone = true;
            }
        }
    }

    /// Add or update one log, found in `fs` (in the folder shown as `dir`, if listed).
    pub fn add(&mut self, found: Found, fs: &Arc<dyn Fs>, dir: Option<String>, out: Out<'_>) {
        let id = found.id();
        let max_line = self.max_line;
        let new = !self.logs.contains_key(&id);
        let log = match found {
            Found::Single {
                path, name, len, ..
            } => {
                let log = self.logs.entry(id).or_insert_with(|| Log {
                    fs: fs.clone(),
                    path: path.clone(),
                    dir: dir.clone(),
                    files: Files::Single {
                        file: Box::new(tracked(fs, &path, id, name.codec, false, max_line)),
                        in_progress: name.in_progress,
                    },
                    app: LogApp::new(app_id_from_name(&name.name)),
                    gone: false,
                    list_failing: false,
                    warnings: Warnings::default(),
                    undelivered: true,
                    resumed: false,
                });
                log.path = path.clone();
                log.gone = false;
                if let Files::Single { file, in_progress } = &mut log.files {
                    *in_progress = name.in_progress;
                    file.tailer.set_path(path);
                    revive(file, len);
                }
                log
            }
            Found::Rolling { path, name, .. } => {
                let log = self.logs.entry(id).or_insert_with(|| Log {
                    fs: fs.clone(),
                    path: path.clone(),
                    dir: dir.clone(),
                    files: Files::Rolling {
                        parts: BTreeMap::new(),
                        finished: false,
                    },
                    app: LogApp::new(app_id_from_name(&name)),
                    gone: false,
                    list_failing: false,
                    warnings: Warnings::default(),
                    undelivered: true,
                    resumed: false,
                });
                log.path = path;
                log.gone = false;
                log.list_parts(max_line, out);
                log
            }
        };
        if new {
            if let Some(done) = self.resume.get(&position_key(&log.fs.display(&log.path))) {
                log.resume(done, out);
            }
        } else if log.resumed
            && log
                .tracked()
                .iter()
                .any(|t| t.tailer.state == TailState::Active)
        {
            log.read_again();
        }
    }

    /// Read from every log, in turn, up to the step budget. Returns the raw bytes read.
    pub fn poll(&mut self, out: Out<'_>, step_budget: Option<u64>) -> u64 {
        let budget = step_budget.unwrap_or(STEP_BUDGET);
        let mut ids: Vec<FileId> = self.logs.keys().copied().collect();
        ids.sort_unstable();
        if !ids.is_empty() {
            let k = self.cursor % ids.len();
            ids.rotate_left(k);
        }
        let mut stats = ReadStats::default();
        let mut total = 0;
        for id in ids {
            if total >= budget {
                break;
            }
            self.cursor += 1;
            let Some(log) = self.logs.get_mut(&id) else {
                continue;
            };
            let n = log.poll(out, &mut stats);
            total += n;
            if log.gone && n == 0 {
                self.logs.remove(&id);
            }
        }
        if stats.bytes > 0 || stats.events > 0 {
            out.telemetry
                .eventlog_read(stats.bytes, stats.events, stats.newest_ms);
        }
        total
    }

    /// Post-mortem: every log is as complete as it will get; settle application ids.
    ///
    /// A log that held no Spark event at all is not an event log (a stray file, a text file
    /// named by mistake): it is not an application, and is counted (`not_event_log`), warned
    /// about and listed by [`Engine::not_event_logs`].
    pub fn settle_all(&mut self, out: Out<'_>) {
        for log in self.logs.values_mut() {
            if log.app.settled() {
                continue;
            }
            if log.app.events() == 0 {
                let file = log.fs.display(&log.path);
                tracing::warn!(file = %file, "Not a Spark event log (no event in it); skipped.");
                out.telemetry.eventlog_error("not_event_log");
                continue;
            }
            log.app.settle(out.observer);
            out.observer.app_delivered(log.app.app_id());
        }
    }

    /// The logs, as shown, that held no Spark event (after [`Engine::settle_all`]).
    pub fn not_event_logs(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .logs
            .values()
            .filter(|l| !l.app.settled() && l.app.events() == 0)
            .map(|l| l.fs.display(&l.path))
            .collect();
        v.sort();
        v
    }

    /// Report file counts by state (`active`, `finished`, `error`).
    pub fn report(&self, out: Out<'_>) {
        let mut counts = empty_counts();
        self.count_files(&mut counts);
        out.telemetry.set_eventlog_files(counts);
    }

    /// Add this engine's file counts by state to `counts`.
    pub fn count_files(&self, counts: &mut BTreeMap<String, u64>) {
        for log in self.logs.values() {
            for t in log.tracked() {
                let k = match t.tailer.state {
                    TailState::Active => "active",
                    TailState::Done => "finished",
                    TailState::Failed => "error",
                };
                *counts.entry(k.to_string()).or_default() += 1;
            }
        }
    }

    /// Whether the log `id` is followed.
    pub fn follows(&self, id: &FileId) -> bool {
        self.logs.contains_key(id)
    }

    /// Number of logs followed.
    pub fn len(&self) -> usize {
        self.logs.len()
    }

    /// Whether no log is followed.
    pub fn is_empty(&self) -> bool {
        self.logs.is_empty()
    }
}

/// File counts at zero for every state.
pub fn empty_counts() -> BTreeMap<String, u64> {
    ["active", "finished", "error"]
        .iter()
        .map(|s| (s.to_string(), 0))
        .collect()
}

/// List every folder in `dirs`: what each holds, or `None` if it cannot be listed (counted and
/// logged when it starts failing; `failing` remembers which do, with their error). Sets each
/// store's `up`.
pub fn list_dirs<'d>(
    dirs: &'d [Root],
    failing: &mut HashMap<String, String>,
    out: Out<'_>,
) -> Vec<(&'d Root, Option<Vec<Found>>)> {
    dirs.iter()
        .map(|dir| {
            let shown = dir.display();
            let listed = discovery::scan_to(&*dir.fs, &dir.path, dir.depth);
            if let Some(store) = dir.fs.store() {
                out.telemetry.set_store_up(store, listed.is_ok());
            }
            match listed {
                Ok(found) => {
                    if failing.remove(&shown).is_some() {
                        tracing::info!(dir = %shown, "Event-log folder readable again.");
                    }
                    (dir, Some(found))
                }
                Err(e) => {
                    if failing.insert(shown.clone(), e.to_string()).is_none() {
                        out.telemetry.eventlog_error("io");
                        tracing::warn!(dir = %shown, error = %e, "Cannot list event-log folder.");
                    }
                    (dir, None)
                }
            }
        })
        .collect()
}

fn tracked(
    fs: &Arc<dyn Fs>,
    path: &Path,
    id: FileId,
    codec: Codec,
    compact: bool,
    max_line: usize,
) -> Tracked {
    let tailer = FileTailer::new(fs.clone(), path.to_path_buf(), id, codec, max_line);
    Tracked {
        tailer,
        compact,
        warnings: Warnings::default(),
        io_failing: false,
        len: 0,
    }
}

/// Decide at a listing whether a file that is not followed any more is followed again:
/// - a finished file whose size no longer matches what was read changed on disk (it grew, or
///   shrank and will be read from the start);
/// - a file that could not be opened or read is tried again at every listing;
/// - a stream that cannot be decoded any further only once it was rewritten (shrank below what
///   was read); more bytes appended to it could not be decoded either.
fn revive(t: &mut Tracked, len: u64) {
    t.len = len;
    t.tailer.hint_size(len);
    let offset = t.tailer.offset();
    let again = match t.tailer.state {
        TailState::Active => false,
        TailState::Done => len != offset,
        TailState::Failed => t.io_failing || len < offset,
    };
    if again {
        t.tailer.state = TailState::Active;
    }
}

impl Log {
    fn tracked(&self) -> Vec<&Tracked> {
        match &self.files {
            Files::Single { file, .. } => vec![file],
            Files::Rolling { parts, .. } => parts.values().collect(),
        }
    }

    fn tracked_mut(&mut self) -> Vec<&mut Tracked> {
        match &mut self.files {
            Files::Single { file, .. } => vec![file],
            Files::Rolling { parts, .. } => parts.values_mut().collect(),
        }
    }

    /// Its files as `[index, compacted, bytes read]`.
    fn read_sizes(&self) -> Vec<(u64, bool, u64)> {
        match &self.files {
            Files::Single { file, .. } => vec![(0, false, file.tailer.offset())],
            Files::Rolling { parts, .. } => parts
                .iter()
                .map(|((i, c), t)| (*i, *c, t.tailer.offset()))
                .collect(),
        }
    }

    /// Its entry in the read positions: done (finished, every file read to its end, none
    /// failing, its application settled and delivered), or, being written, where reading can go
    /// on and the parsing state there (every file at a resume point: uncompressed, or read to
    /// its end). `None`: a restart reads it from its start.
    fn done(&self) -> Option<DoneLog> {
        let finished = match &self.files {
            Files::Single { in_progress, .. } => !*in_progress,
            Files::Rolling { finished, .. } => *finished,
        };
        let read = self
            .tracked()
            .iter()
            .all(|t| t.tailer.state == TailState::Done && !t.io_failing);
        if self.gone || !self.app.settled() {
            return None;
        }
        if finished && read && !self.undelivered {
            return Some(DoneLog {
                app_id: self.app.app_id().to_string(),
                files: self.read_sizes(),
                open: None,
            });
        }
        let at = match &self.files {
            Files::Single { file, .. } => vec![(0, false, resume_point(file)?)],
            Files::Rolling { parts, .. } => parts
                .iter()
                .map(|((i, c), t)| Some((*i, *c, resume_point(t)?)))
                .collect::<Option<Vec<_>>>()?,
        };
        Some(DoneLog {
            app_id: self.app.app_id().to_string(),
            files: at.iter().map(|(i, c, r)| (*i, *c, r.raw)).collect(),
            open: Some(super::positions::OpenLog {
                files: at,
                state: self.app.state()?,
            }),
        })
    }

    /// A checkpoint has a position for this log, just found. Done: if it is unchanged
    /// (finished, the same files of the same sizes), take it as read, delivered to the model.
    /// Being written: if every file it read is there, at least as long, read on from there
    /// with the parsing state it kept.
    fn resume(&mut self, done: &DoneLog, out: Out<'_>) {
        if self
            .tracked()
            .iter()
            .any(|t| t.tailer.state != TailState::Active)
        {
            return;
        }
        if let Some(open) = &done.open {
            self.resume_open(done, open, out);
            return;
        }
        let finished = match &self.files {
            Files::Single { in_progress, .. } => !*in_progress,
            Files::Rolling { finished, .. } => *finished,
        };
        let listed = self.listed_sizes();
        let same = listed.len() == done.files.len()
            && listed.iter().zip(&done.files).all(|(l, d)| {
                // A skipped compacted part was not read: only its presence matters.
                l.0 == d.0 && l.1 == d.1 && (l.2 == d.2 || (l.1 && d.2 == 0))
            });
        if !finished || !same {
            return;
        }
        for (t, (_, _, read)) in self.tracked_mut().into_iter().zip(&done.files) {
            t.tailer.resume_done(*read);
        }
        self.app = LogApp::resumed(self.app.name_id(), &done.app_id);
        self.resumed = true;
        self.undelivered = false;
        out.observer.app_delivered(&done.app_id);
    }

    /// Its files as the listing gives them: `[index, compacted, size]`.
    fn listed_sizes(&self) -> Vec<(u64, bool, u64)> {
        match &self.files {
            Files::Single { file, .. } => vec![(0, false, file.len)],
            Files::Rolling { parts, .. } => {
                parts.iter().map(|((i, c), t)| (*i, *c, t.len)).collect()
            }
        }
    }

    /// Resume a log being written at `done`'s positions with `state`: every file it had read
    /// must be listed, at least that long; files it had not seen (later parts) are read from
    /// their start.
    fn resume_open(&mut self, done: &DoneLog, open: &super::positions::OpenLog, out: Out<'_>) {
        let listed = self.listed_sizes();
        let fits = done.files.iter().all(|d| {
            listed
                .iter()
                .any(|l| l.0 == d.0 && l.1 == d.1 && l.2 >= d.2)
        });
        if !fits {
            return;
        }
        let keyed: Vec<((u64, bool), &mut Tracked)> = match &mut self.files {
            Files::Single { file, .. } => vec![((0, false), &mut **file)],
            Files::Rolling { parts, .. } => parts.iter_mut().map(|(k, t)| (*k, t)).collect(),
        };
        for (key, t) in keyed {
            if let Some((_, _, at)) = open.files.iter().find(|d| (d.0, d.1) == key) {
                if let Err(e) = t.tailer.resume_at(at) {
                    out.telemetry.eventlog_error("codec");
                    tracing::warn!(file = %t.tailer.display(), error = %e, "Cannot create a \
                        decoder.");
                    t.tailer.state = TailState::Failed;
                }
            }
        }
        self.app = LogApp::from_state(self.app.name_id(), open.state.clone());
        self.undelivered = true;
    }

    /// A resumed log changed: read it again from its start, with fresh parsing state.
    fn read_again(&mut self) {
        tracing::info!(file = %self.fs.display(&self.path), "A log the checkpoint had read \
            changed; reading it again.");
        self.resumed = false;
        self.undelivered = true;
        self.app = LogApp::new(self.app.name_id().to_string());
        for t in self.tracked_mut() {
            t.tailer.restart();
        }
    }

    /// Refresh a rolling log's parts and status (skipped once it has ended and every part is read
    /// or cannot be decoded further; a part that could not be read is retried).
    fn list_parts(&mut self, max_line: usize, out: Out<'_>) {
        let Files::Rolling { parts, finished } = &mut self.files else {
            return;
        };
        let settled = |t: &Tracked| t.tailer.state != TailState::Active && !t.io_failing;
        if *finished && parts.values().all(settled) {
            return;
        }
        let listing = match discovery::list_rolling(&*self.fs, &self.path) {
            Ok(l) => l,
            Err(e) => {
                if !std::mem::replace(&mut self.list_failing, true) {
                    let file = self.fs.display(&self.path);
                    self.warnings.report(out.telemetry, &file, "io", &e);
                }
                return;
            }
        };
        if std::mem::take(&mut self.list_failing) {
            tracing::info!(dir = %self.fs.display(&self.path), "Rolling event-log folder readable \
                again.");
        }
        *finished = listing.finished;
        for Part {
            path,
            id,
            name,
            len,
        } in listing.parts
        {
            let fs = &self.fs;
            let t = parts
                .entry((name.index, name.compact))
                .or_insert_with(|| tracked(fs, &path, id, name.codec, name.compact, max_line));
            t.tailer.set_path(path);
            revive(t, len);
        }
    }

    /// Read what this log has; returns raw bytes read.
    /// Read what is new, up to the budgets; once the log is at its end (its last part's last
    /// complete line), tell the model the application is delivered.
    fn poll(&mut self, out: Out<'_>, stats: &mut ReadStats) -> u64 {
        let (n, eof) = self.read(out, stats);
        self.undelivered |= n > 0;
        if eof && self.undelivered && self.app.settled() {
            self.undelivered = false;
            out.observer.app_delivered(self.app.app_id());
        }
        n
    }

    /// Bytes read, and whether every file of the log is at its end.
    fn read(&mut self, out: Out<'_>, stats: &mut ReadStats) -> (u64, bool) {
        let Log {
            files, app, gone, ..
        } = self;
        match files {
            Files::Single { file, in_progress } => {
                let complete = !*in_progress || *gone;
                let (n, _, eof) = poll_one(file, complete, app, out, stats);
                (n, eof)
            }
            Files::Rolling { parts, finished } => {
                let keys: Vec<(u64, bool)> = parts.keys().copied().collect();
                // A compacted part N repeats parts 1..=N: skip it once any of those was read.
                let first_started = parts
                    .iter()
                    .filter(|(_, t)| {
                        !t.compact && (t.tailer.offset() > 0 || t.tailer.state != TailState::Active)
                    })
                    .map(|(k, _)| k.0)
                    .min();
                let mut total = 0;
                let mut eof = true;
                for (i, key) in keys.iter().enumerate() {
                    let later_exists = i + 1 < keys.len();
                    let Some(t) = parts.get_mut(key) else {
                        continue;
                    };
                    if t.compact
                        && t.tailer.offset() == 0
                        && first_started.is_some_and(|s| s <= key.0)
                    {
                        t.tailer.state = TailState::Done;
                    }
                    if t.tailer.state != TailState::Active {
                        continue;
                    }
                    let (n, at_end, part_eof) =
                        poll_one(t, later_exists || *finished || *gone, app, out, stats);
                    total += n;
                    if !at_end {
                        eof = part_eof && !later_exists;
                        break;
                    }
                }
                (total, eof)
            }
        }
    }
}

/// A log's key in the read positions: the path shown, without `.inprogress` (Spark renames a
/// single-file log when the application ends: a log read while being written is still found
/// after the rename).
fn position_key(shown: &str) -> String {
    shown
        .strip_suffix(".inprogress")
        .unwrap_or(shown)
        .to_string()
}

/// Where reading of `t` can go on after a restart, if known (see `FileTailer::resume_point`).
fn resume_point(t: &Tracked) -> Option<crate::sources::eventlog::ResumeAt> {
    if t.io_failing || t.tailer.state == TailState::Failed {
        return None;
    }
    t.tailer.resume_point()
}

/// Poll one file; a `complete` file is finished at its end. Returns (raw bytes, reached the end
/// of a complete file or failed, so the next part may go, at the end of what the file holds).
fn poll_one(
    t: &mut Tracked,
    complete: bool,
    app: &mut LogApp,
    out: Out<'_>,
    stats: &mut ReadStats,
) -> (u64, bool, bool) {
    if t.tailer.state != TailState::Active {
        return (0, true, true);
    }
    let file = t.tailer.display();
    let mut sink = Applier::new(app, out, &file, stats, &mut t.warnings);
    match t.tailer.poll(FILE_BUDGET, &mut sink) {
        Ok(p) => {
            if t.io_failing && t.tailer.is_open() {
                t.io_failing = false;
                tracing::info!(file, "Event-log file readable again.");
            }
            if p.eof && complete {
                t.tailer.finish(&mut sink);
                (p.raw_bytes, true, true)
            } else {
                (p.raw_bytes, false, p.eof)
            }
        }
        Err(e) => {
            // An unreadable file is retried at every listing: count (and log) it when it starts
            // failing, not at every retry.
            let io = e.kind() == "io";
            if !(io && t.io_failing) {
                sink.warnings.report(out.telemetry, &file, e.kind(), &e);
            }
            t.io_failing = io;
            t.tailer.state = TailState::Failed;
            t.tailer.close();
            (0, true, true)
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
