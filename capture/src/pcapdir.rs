//! Directory inputs (`meerkat run -r DIR`, patterns, `--pcap-file-continuous`): every
//! capture file is processed exactly once, whatever it is renamed to, and a restart
//! continues where the last run stopped.
//!
//! The scanner (`meerkat-scanner`) finds the files and knows each by its identity; the
//! registry (`pcap-registry.json` in the log directory by default) records per identity
//! the bytes and packets done, whether the file is done, a digest of the processed bytes,
//! and its alert count. Files are read in (mtime, name) order. In continuous mode the
//! directories are looked at every `pcap-file.poll-interval`, and a file is read once it
//! has not been modified for `pcap-file.delay` (or at once when it was renamed or
//! chmod'ed after its last write, which is how writers put a finished file in place).
//!
//! # Checkpoints: what "done" means
//!
//! A packet handed to a ring is not processed yet: the rings are private to a run, and a
//! `kill -9` loses what they hold. A worker's events are not written yet either until the
//! eve-writer acknowledges them (it does once the bytes are handed to the OS). So the
//! registry records file offset `O` only when:
//!
//! 1. capture has stopped handing packets on (the checkpoint is a pause);
//! 2. every worker has acknowledged every packet capture handed it before `O`: each worker
//!    publishes, in its counter page, the highest ring sequence number whose events the
//!    eve-writer has all written (`detect.N.acked_seq`; see detect's `sink.rs`), and
//!    capture waits until that reaches the last sequence number it sent that worker;
//! 3. then, with nothing in flight, the length of each EVE output is taken, and
//!    `(file progress, output lengths)` is committed to the registry in one atomic write.
//!
//! Checkpoints are made at the end of each file and every `scanner.checkpoint-interval`
//! within one. At that moment the outputs hold exactly the events of the work recorded
//! as done, nothing more. A run marks the registry *open* while it works and the
//! supervisor marks it *closed* after a clean end; a run that died leaves it open, and the
//! next `meerkat run` with that registry cuts each output back to its length at the last
//! checkpoint ([`recover`]) before anything starts: the events written after it belong to
//! work that will be done again. So after a `kill -9` and a restart, no file is redone,
//! the partial file resumes at the record after the checkpoint, and the alerts equal
//! those of one clean pass.
//!
//! Limits: flows (and so flow records and flow state such as reassembled streams) that
//! span the kill point start fresh on the restart; an output rotated or replaced between
//! the crash and the restart is left alone (a warning says so); `delete-when-done` deletes
//! a file only once it is committed as done; the registry survives the death of any
//! process, not a power cut (its appends are not fsync'ed, nor is eve.json, by choice:
//! see the scanner's `registry` module).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use meerkat_config::{Config, DeleteWhenDone, ScannerIdentity};
use meerkat_scanner::glob::{escape, is_pattern};
use meerkat_scanner::registry::{RollBack, roll_back, unix_secs};
use meerkat_scanner::{
    Change, Entry, FileId, FileInfo, Identity, OutputMark, Registry, RunState, RunStatus,
    ScanConfig, Scanner, Stat, Window, processed_digest,
};
use meerkat_shm::CounterReader;

use meerkat_runtime::counters::{DetectCounter, DetectCounters};
use meerkat_runtime::{Role, counters_path};

use crate::{CaptureError, FeedEnd, FeedError, Feeder, PcapError, Reader};

/// Longest wait for the workers to acknowledge a checkpoint while running.
const CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest wait for the last checkpoint when stopping (the supervisor's grace is 10 s).
const STOP_CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(8);
/// Granularity of waits on a stop request.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Whether the inputs are handled here: a directory, a pattern, continuous mode, or
/// `delete-when-done` (a file is deleted only once a checkpoint says it is done, which
/// needs the registry even for a single file).
pub fn applies(config: &Config, inputs: &[PathBuf]) -> bool {
    config.pcap_file.continuous
        || config.pcap_file.delete_when_done != DeleteWhenDone::No
        || inputs
            .iter()
            .any(|i| i.is_dir() || i.to_str().is_some_and(|s| !i.exists() && is_pattern(s)))
}

fn identity(config: &Config) -> (Identity, Window) {
    let identity = match config.scanner.identity {
        ScannerIdentity::Native => Identity::Native,
        ScannerIdentity::Fingerprint => Identity::Fingerprint,
    };
    let window = Window {
        offset: config.scanner.fingerprint.offset.bytes(),
        length: config.scanner.fingerprint.length.bytes(),
    };
    (identity, window)
}

/// The scanner's settings for these inputs. An input that exists is taken literally
/// (wildcard characters in its name escaped); one that does not is a pattern.
pub fn scan_config(config: &Config, inputs: &[PathBuf]) -> Result<ScanConfig, CaptureError> {
    let mut patterns = Vec::with_capacity(inputs.len());
    for i in inputs {
        let s = i.to_str().ok_or_else(|| CaptureError::Open {
            path: i.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a directory or pattern input must be UTF-8",
            ),
        })?;
        patterns.push(if i.exists() { escape(s) } else { s.to_string() });
    }
    let (identity, window) = identity(config);
    let mut cfg = ScanConfig::new(patterns);
    cfg.excludes.clone_from(&config.scanner.exclude);
    cfg.recursive = config.pcap_file.recursive;
    cfg.identity = identity;
    cfg.window = window;
    cfg.forget_after = config.scanner.forget_after.duration();
    Ok(cfg)
}

fn open_registry(config: &Config) -> Result<Registry, CaptureError> {
    let (identity, window) = identity(config);
    let reg = Registry::open(&config.registry_path(), identity, window)?;
    for note in &reg.notes {
        tracing::warn!("{note}");
    }
    Ok(reg)
}

/// The EVE outputs' identities and lengths now.
fn output_marks(config: &Config) -> Result<Vec<OutputMark>, CaptureError> {
    let mut marks = Vec::new();
    for path in config.eve_paths() {
        match OutputMark::of(&path) {
            Ok(Some(m)) => marks.push(m),
            Ok(None) => {}
            Err(source) => {
                return Err(CaptureError::Output {
                    what: "cannot stat output",
                    path,
                    source,
                });
            }
        }
    }
    Ok(marks)
}

/// Before a run starts its roles: if the last run with this registry died, cuts each
/// output back to its length at that run's last checkpoint (see the module doc), and
/// closes the registry's run. `uses_registry` says whether this run will use it (if not,
/// a registry held by another run is left alone).
pub fn recover(config: &Config, uses_registry: bool) -> Result<Vec<RollBack>, CaptureError> {
    let path = config.registry_path();
    if !Registry::exists(&path) {
        return Ok(Vec::new());
    }
    let mut reg = match open_registry(config) {
        Ok(r) => r,
        Err(CaptureError::Registry(meerkat_scanner::RegistryError::Locked { .. }))
            if !uses_registry =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    if reg.run().status != RunStatus::Open {
        return Ok(Vec::new());
    }
    let mut done = Vec::new();
    for mark in reg.run().outputs.clone() {
        let r = roll_back(&mark).map_err(|source| CaptureError::Output {
            what: "cannot roll back output",
            path: mark.path.clone(),
            source,
        })?;
        done.push(r);
    }
    reg.commit(Vec::new(), Vec::new(), Some(RunState::default()))?;
    Ok(done)
}

/// After a clean end of a run (every role exited, the outputs flushed): the outputs hold
/// exactly the work the registry records. Returns whether there was an open run.
pub fn close_run(config: &Config) -> Result<bool, CaptureError> {
    let path = config.registry_path();
    if !Registry::exists(&path) {
        return Ok(false);
    }
    let mut reg = open_registry(config)?;
    if reg.run().status != RunStatus::Open {
        return Ok(false);
    }
    reg.commit(Vec::new(), Vec::new(), Some(RunState::default()))?;
    Ok(true)
}

/// The workers' acknowledgements, read from their counter pages.
struct Acks {
    runtime: PathBuf,
    workers: usize,
}

impl Acks {
    fn read(&self, w: usize, counter: DetectCounter) -> Option<u64> {
        CounterReader::open(&counters_path(&self.runtime, Role::Detect(w)))
            .ok()?
            .get(&DetectCounters::new(w).counter(counter))
    }

    /// Waits until each worker `w` has acknowledged sequence number `last_sent[w]`.
    fn wait(&self, last_sent: &[u64], timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(50);
        let mut w = 0;
        while w < self.workers {
            let want = last_sent.get(w).copied().unwrap_or(0);
            if want == 0
                || self
                    .read(w, DetectCounter::AckedSeq)
                    .is_some_and(|a| a >= want)
            {
                w += 1;
                continue;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        true
    }

    /// Alerts raised so far by all workers.
    fn alerts(&self) -> u64 {
        (0..self.workers)
            .filter_map(|w| self.read(w, DetectCounter::Alerts))
            .sum()
    }
}

/// One directory-input run.
struct Run<'a> {
    config: &'a Config,
    feeder: &'a mut Feeder,
    stop: &'a AtomicBool,
    registry: Registry,
    scanner: Scanner,
    acks: Acks,
    /// Workers' alert total at the last checkpoint.
    alerts_base: u64,
    /// Files that failed with an I/O error, at the version that failed (retried when
    /// they change).
    failed: HashMap<FileId, Stat>,
    /// Unreadable paths already warned about.
    warned: HashSet<PathBuf>,
    first_scan: bool,
}

/// How processing one file ended.
enum FileEnd {
    Done,
    Stopped,
    Skipped,
}

/// Reads directory inputs until they are done (or, in continuous mode, until stopped).
pub(crate) fn run(
    config: &Config,
    inputs: &[PathBuf],
    feeder: &mut Feeder,
    stop: &AtomicBool,
) -> Result<(), CaptureError> {
    let runtime = config
        .runtime_dir
        .clone()
        .ok_or(CaptureError::NoRuntimeDir)?;
    let mut registry = open_registry(config)?;
    let mut scanner = Scanner::new(scan_config(config, inputs)?)?;
    scanner.restore(registry.entries().map(Entry::restored));
    // From here until the supervisor closes it, the outputs may get events of work not
    // yet recorded: a death rolls them back to these lengths (or a later checkpoint's).
    registry.commit(
        Vec::new(),
        Vec::new(),
        Some(RunState {
            status: RunStatus::Open,
            outputs: output_marks(config)?,
        }),
    )?;
    tracing::info!(
        registry = %registry.path().display(),
        files = registry.len(),
        identity = scanner.identity().name(),
        continuous = config.pcap_file.continuous,
        "pcap directory mode"
    );
    let workers = feeder.producers.len();
    let acks = Acks { runtime, workers };
    let mut run = Run {
        alerts_base: acks.alerts(),
        config,
        feeder,
        stop,
        registry,
        scanner,
        acks,
        failed: HashMap::new(),
        warned: HashSet::new(),
        first_scan: true,
    };
    run.main_loop()
}

impl Run<'_> {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn main_loop(&mut self) -> Result<(), CaptureError> {
        let continuous = self.config.pcap_file.continuous;
        let poll = self.config.pcap_file.poll_interval.duration();
        loop {
            if self.stopping() {
                self.feeder.summary.stopped = true;
                return Ok(());
            }
            self.scan()?;
            let todo = self.eligible();
            let remaining: u64 = todo
                .iter()
                .map(|f| {
                    let done = self.registry.get(f.id).map_or(0, |e| e.bytes_done);
                    f.stat.size.saturating_sub(done)
                })
                .sum();
            self.feeder
                .counters
                .total
                .set(self.feeder.done_before + remaining);
            for f in todo {
                match self.process(&f)? {
                    FileEnd::Stopped => {
                        self.feeder.summary.stopped = true;
                        return Ok(());
                    }
                    FileEnd::Done | FileEnd::Skipped => {}
                }
            }
            if !continuous {
                return Ok(());
            }
            let until = Instant::now() + poll;
            while Instant::now() < until {
                if self.stopping() {
                    self.feeder.summary.stopped = true;
                    return Ok(());
                }
                std::thread::sleep(STOP_POLL.min(until.saturating_duration_since(Instant::now())));
            }
        }
    }

    /// Looks at the inputs and brings the registry's entries up to date.
    fn scan(&mut self) -> Result<(), CaptureError> {
        let report = self.scanner.scan();
        let mut seen_unreadable = HashSet::new();
        for u in &report.unreadable {
            seen_unreadable.insert(u.path.clone());
            if self.warned.insert(u.path.clone()) {
                tracing::warn!(
                    "cannot read {}: {} (its files keep their state until it can be read)",
                    u.path.display(),
                    u.error
                );
            }
        }
        self.warned.retain(|p| seen_unreadable.contains(p));
        let mut put: HashMap<FileId, Entry> = HashMap::new();
        let mut del = Vec::new();
        let now = unix_secs(SystemTime::now());
        for change in &report.changes {
            tracing::debug!(?change, "scan");
            let id = match change {
                Change::Created { id }
                | Change::Grown { id, .. }
                | Change::Renamed { id, .. }
                | Change::Truncated { id, .. }
                | Change::Deleted { id, .. } => *id,
                Change::Forgotten { id } => {
                    if self.registry.get(*id).is_some() {
                        del.push(*id);
                    }
                    continue;
                }
            };
            let Some(mut e) = put.remove(&id).or_else(|| self.registry.get(id).cloned()) else {
                continue; // never worked on: nothing recorded
            };
            match change {
                Change::Deleted { .. } => e.gone_since = Some(now),
                Change::Truncated { from, to, .. } => {
                    if e.bytes_done > 0 {
                        tracing::warn!(
                            file = %e.path.display(),
                            "truncated or rewritten ({from} -> {to} bytes): reading it again from the start"
                        );
                    }
                    e.restart();
                }
                Change::Grown { .. } => {
                    e.done = false;
                    e.error = None;
                }
                _ => {}
            }
            if let Some(info) = self.scanner.file(id)
                && !matches!(change, Change::Deleted { .. })
            {
                e.update_from(info);
            }
            put.insert(id, e);
        }
        let mut put: Vec<Entry> = put.into_values().collect();
        put.sort_by_key(|e| e.id);
        self.registry.commit(put, del, None)?;
        if self.first_scan {
            self.first_scan = false;
            if self.scanner.files().next().is_none() && !self.config.pcap_file.continuous {
                tracing::warn!("the inputs hold no files");
            }
            let skipped = self
                .scanner
                .files()
                .filter(|f| self.registry.get(f.id).is_some_and(|e| e.done))
                .count() as u64;
            if skipped > 0 {
                tracing::info!(
                    "{skipped} files already done (registry {})",
                    self.registry.path().display()
                );
            }
            self.feeder.counters.files_skipped.set(skipped);
        }
        Ok(())
    }

    /// Present files not done, in (mtime, path) order; in continuous mode only those
    /// that are complete (not modified for `delay`, or put in place after their last
    /// write).
    fn eligible(&self) -> Vec<FileInfo> {
        let continuous = self.config.pcap_file.continuous;
        let delay =
            i64::try_from(self.config.pcap_file.delay.duration().as_nanos()).unwrap_or(i64::MAX);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        let mut v: Vec<FileInfo> = self
            .scanner
            .files()
            .filter(|f| !self.registry.get(f.id).is_some_and(|e| e.done))
            .filter(|f| {
                !self
                    .failed
                    .get(&f.id)
                    .is_some_and(|s| s.same_version(&f.stat))
            })
            .filter(|f| {
                !continuous
                    || now.saturating_sub(f.stat.mtime_ns) >= delay
                    || f.stat.ctime_ns > f.stat.mtime_ns
            })
            .cloned()
            .collect();
        v.sort_by(|a, b| {
            (a.stat.mtime_ns, a.path.as_os_str()).cmp(&(b.stat.mtime_ns, b.path.as_os_str()))
        });
        v
    }

    /// Reads one file from where it was left, with checkpoints.
    fn process(&mut self, info: &FileInfo) -> Result<FileEnd, CaptureError> {
        if self.stopping() {
            return Ok(FileEnd::Stopped);
        }
        let path = info.path.clone();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) => {
                // Gone or replaced since the scan: the next scan will tell.
                tracing::debug!(file = %path.display(), "cannot open: {e}");
                return Ok(FileEnd::Skipped);
            }
        };
        let opened = match file.metadata() {
            Ok(m) => Stat::from_metadata(&m),
            Err(_) => return Ok(FileEnd::Skipped),
        };
        if opened.inode() != info.stat.inode() {
            return Ok(FileEnd::Skipped);
        }
        let digest_file = file.try_clone().map_err(|source| CaptureError::Open {
            path: path.clone(),
            source,
        })?;
        let mut entry = self
            .registry
            .get(info.id)
            .cloned()
            .unwrap_or_else(|| Entry::new(info));
        entry.update_from(info);
        if entry.bytes_done > 0 {
            let same = processed_digest(&digest_file, entry.bytes_done)
                .ok()
                .is_some_and(|d| Some(d) == entry.digest);
            if !same {
                tracing::warn!(
                    file = %path.display(),
                    "the {} bytes processed before are not the same any more: reading it again from the start",
                    entry.bytes_done
                );
                entry.restart();
            }
        }
        let mut reader = match Reader::new(file) {
            Ok(r) => r,
            Err(e) => return self.bad_file(entry, &path, e),
        };
        if entry.bytes_done > 0 {
            if let Err(e) = reader.skip_to(entry.bytes_done) {
                return self.bad_file(entry, &path, e);
            }
            self.feeder.counters.files_resumed.add(1);
            tracing::info!(file = %path.display(), offset = entry.bytes_done, packets_done = entry.packets_done, "resuming");
        } else {
            tracing::info!(file = %path.display(), pcapng = reader.is_pcapng(), "reading");
        }
        let start_offset = entry.bytes_done;
        self.feeder.begin_file(&path);
        let interval = self.config.scanner.checkpoint_interval.duration();
        let end = loop {
            let packets_before = self.feeder.summary.packets;
            let res = self
                .feeder
                .feed(&mut reader, self.stop, Some(Instant::now() + interval));
            entry.packets_done += self.feeder.summary.packets - packets_before;
            entry.bytes_done = reader.offset();
            self.feeder.sync(entry.bytes_done - start_offset);
            match res {
                Ok(FeedEnd::Deadline) => {
                    if !self.checkpoint(&mut entry, &digest_file)? {
                        return Ok(FileEnd::Stopped);
                    }
                }
                Ok(FeedEnd::Eof) => {
                    entry.done = true;
                    entry.error = None;
                    break FileEnd::Done;
                }
                Ok(FeedEnd::Stopped) => break FileEnd::Stopped,
                Err(FeedError::Pcap(e)) => {
                    self.record_error(&mut entry, &path, &e);
                    break FileEnd::Done;
                }
                Err(FeedError::Filter(e)) => {
                    // The filter cannot apply to this file's link type: the file is done
                    // with that error, as a corrupt one.
                    self.feeder
                        .input_error(format_args!("{}: {e}", path.display()));
                    entry.done = true;
                    entry.error = Some(e.to_string());
                    break FileEnd::Done;
                }
                Err(FeedError::Ring(e)) => return Err(CaptureError::Ring(e)),
            }
        };
        if self.config.scanner.identity == ScannerIdentity::Native
            && entry.fingerprint.is_none()
            && entry.bytes_done > 0
        {
            // What the content looked like: tells inode reuse from growth later.
            let window = self.scanner.window();
            if let Ok(r) = window.read(&digest_file, &mut Vec::new(), &[]) {
                entry.fingerprint = Some(r.fingerprint);
                self.scanner.set_fingerprint(info.id, r.fingerprint);
            }
        }
        let committed = self.checkpoint(&mut entry, &digest_file)?;
        self.feeder.done_before += entry.bytes_done - start_offset;
        self.feeder.summary.files += u64::from(matches!(end, FileEnd::Done));
        if committed && entry.done {
            self.delete_if_wanted(&entry);
        }
        Ok(if committed { end } else { FileEnd::Stopped })
    }

    /// A file that is not a capture file, or is corrupt, at the start or resume point.
    fn bad_file(
        &mut self,
        mut entry: Entry,
        path: &Path,
        e: PcapError,
    ) -> Result<FileEnd, CaptureError> {
        if let PcapError::Io { .. } = e {
            tracing::warn!(file = %path.display(), "{e}; retrying when it changes");
            self.failed.insert(entry.id, entry.stat);
            return Ok(FileEnd::Skipped);
        }
        self.record_error(&mut entry, path, &e);
        // Nothing was handed on: nothing to wait for.
        self.registry.commit(vec![entry], Vec::new(), None)?;
        Ok(FileEnd::Done)
    }

    fn record_error(&mut self, entry: &mut Entry, path: &Path, e: &PcapError) {
        let continuous = self.config.pcap_file.continuous;
        match e {
            // A file that ends in the middle of a record may still be written to: what
            // is there is done, the rest is read when it grows.
            PcapError::Truncated { offset } if continuous => {
                tracing::info!(file = %path.display(), offset, "ends in a partial record; reading on when it grows");
                entry.bytes_done = entry.bytes_done.min(*offset);
                entry.done = true;
                entry.error = None;
                return;
            }
            PcapError::Io { .. } => {
                self.failed.insert(entry.id, entry.stat);
            }
            _ => {}
        }
        self.feeder
            .input_error(format_args!("{}: {e}", path.display()));
        entry.done = !matches!(e, PcapError::Io { .. });
        entry.error = Some(e.to_string());
    }

    /// Waits until everything handed on is acknowledged, then commits `entry` with the
    /// outputs' lengths (see the module doc). Returns false if the workers did not
    /// acknowledge in time while stopping (nothing is committed then).
    fn checkpoint(&mut self, entry: &mut Entry, file: &File) -> Result<bool, CaptureError> {
        self.feeder.publish_all();
        let timeout = if self.stopping() {
            STOP_CHECKPOINT_TIMEOUT
        } else {
            CHECKPOINT_TIMEOUT
        };
        if !self.acks.wait(&self.feeder.last_sent, timeout) {
            let secs = timeout.as_secs();
            if self.stopping() {
                tracing::warn!(
                    file = %entry.path.display(),
                    "stopping: the workers did not acknowledge the last checkpoint within {secs} s; \
                     the next run redoes the work since the previous one"
                );
                return Ok(false);
            }
            return Err(CaptureError::Output {
                what: "checkpoint not acknowledged by the detect workers within the timeout for",
                path: entry.path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::TimedOut),
            });
        }
        let alerts = self.acks.alerts();
        entry.alerts += alerts.saturating_sub(self.alerts_base);
        self.alerts_base = alerts;
        entry.digest = processed_digest(file, entry.bytes_done).ok();
        let outputs = output_marks(self.config)?;
        self.registry.commit(
            vec![entry.clone()],
            Vec::new(),
            Some(RunState {
                status: RunStatus::Open,
                outputs,
            }),
        )?;
        self.feeder.counters.checkpoints.add(1);
        Ok(true)
    }

    /// `delete-when-done`, once the file is committed as done.
    fn delete_if_wanted(&mut self, entry: &Entry) {
        let delete = match self.config.pcap_file.delete_when_done {
            DeleteWhenDone::No => false,
            DeleteWhenDone::Yes => entry.error.is_none(),
            DeleteWhenDone::NonAlerts => entry.error.is_none() && entry.alerts == 0,
        };
        if !delete {
            return;
        }
        // Only the file that was processed (not another one renamed to its name since).
        let same = std::fs::metadata(&entry.path)
            .is_ok_and(|m| Stat::from_metadata(&m).inode() == entry.stat.inode());
        if !same {
            return;
        }
        match std::fs::remove_file(&entry.path) {
            Ok(()) => {
                self.feeder.counters.files_deleted.add(1);
                tracing::info!(file = %entry.path.display(), alerts = entry.alerts, "deleted (delete-when-done)");
            }
            Err(e) => tracing::warn!(file = %entry.path.display(), "cannot delete: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_inputs_use_the_scanner() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("one.pcap");
        std::fs::write(&file, b"x").unwrap();
        let mut c = Config::default();
        assert!(!applies(&c, std::slice::from_ref(&file)));
        assert!(applies(&c, &[d.path().to_path_buf()]));
        assert!(applies(&c, &[d.path().join("*.pcap")]));
        c.pcap_file.delete_when_done = DeleteWhenDone::NonAlerts;
        assert!(applies(&c, std::slice::from_ref(&file)));
        c.pcap_file.delete_when_done = DeleteWhenDone::No;
        c.pcap_file.continuous = true;
        assert!(applies(&c, &[file]));
    }

    #[test]
    fn existing_paths_are_literal_others_patterns() {
        let d = tempfile::tempdir().unwrap();
        let odd = d.path().join("caps[1]");
        std::fs::create_dir(&odd).unwrap();
        let mut c = Config::default();
        c.pcap_file.recursive = true;
        c.scanner.identity = ScannerIdentity::Native;
        let cfg = scan_config(&c, &[odd.clone(), d.path().join("x/*.pcap")]).unwrap();
        assert_eq!(cfg.inputs[0], format!("{}/caps\\[1]", d.path().display()));
        assert_eq!(cfg.inputs[1], format!("{}/x/*.pcap", d.path().display()));
        assert!(cfg.recursive);
        assert_eq!(cfg.identity, Identity::Native);
        assert_eq!(cfg.window.length, 4096);
        assert_eq!(cfg.excludes, [".*", "*.tmp", "*.part"]);
    }

    #[test]
    fn recover_cuts_outputs_of_a_dead_run_only() {
        let d = tempfile::tempdir().unwrap();
        let c = Config {
            default_log_dir: d.path().to_path_buf(),
            ..Default::default()
        };
        let eve = d.path().join("eve.json");
        std::fs::write(&eve, b"{\"a\":1}\n").unwrap();
        // No registry: nothing to do.
        assert!(recover(&c, true).unwrap().is_empty());
        {
            let (identity, window) = identity(&c);
            let mut reg = Registry::open(&c.registry_path(), identity, window).unwrap();
            reg.commit(
                Vec::new(),
                Vec::new(),
                Some(RunState {
                    status: RunStatus::Open,
                    outputs: output_marks(&c).unwrap(),
                }),
            )
            .unwrap();
        }
        // The run died after writing more.
        std::fs::write(&eve, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let r = recover(&c, true).unwrap();
        assert_eq!(
            r,
            vec![RollBack::Truncated {
                path: eve.clone(),
                removed: 8
            }]
        );
        assert_eq!(std::fs::read(&eve).unwrap(), b"{\"a\":1}\n");
        // Closed now: a second recovery leaves the file alone.
        std::fs::write(&eve, b"{\"a\":1}\n{\"c\":3}\n").unwrap();
        assert!(recover(&c, true).unwrap().is_empty());
        assert!(!close_run(&c).unwrap());
    }
}
