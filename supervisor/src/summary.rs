//! What the supervisor reads from the roles' counter pages: progress on a terminal while
//! the run goes, and the end-of-run summary (the line on stdout and `--summary-json`).

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use meerkat_runtime::counters::{
    CaptureCounter, CaptureLiveCounter, DetectCounter, DetectCounters, EveCounter,
    eve_event_counter,
};
use meerkat_runtime::{Role, counters_path};
use meerkat_shm::CounterReader;

use crate::stack::Stack;

/// The EVE type of alerts (`eve.events.alert`).
const ALERT_TYPE: &str = "alert";

/// A counter of `role`'s page (0 when the page or the counter is not there).
fn counter(runtime: &Path, role: Role, name: &str) -> u64 {
    CounterReader::open(&counters_path(runtime, role))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

/// A counter of the capture role.
pub(crate) fn capture(runtime: &Path, name: &str) -> u64 {
    counter(runtime, Role::Capture, name)
}

/// A counter of detect worker `w`.
pub(crate) fn detect(runtime: &Path, w: usize, c: DetectCounter) -> u64 {
    counter(runtime, Role::Detect(w), &DetectCounters::new(w).counter(c))
}

/// Alerts the current eve-writer wrote.
fn writer_alerts(runtime: &Path) -> u64 {
    counter(runtime, Role::EveWriter, &eve_event_counter(ALERT_TYPE))
}

/// Whether capture reads a live source.
pub(crate) fn live(runtime: &Path) -> bool {
    capture(runtime, CaptureLiveCounter::Live.name()) == 1
}

/// Packets a live run lost, wherever it happened (kernel or NIC ring, backlog, worker
/// ring).
fn live_drops(runtime: &Path) -> u64 {
    CaptureLiveCounter::DROPS
        .iter()
        .map(|c| capture(runtime, c.name()))
        .sum()
}

/// Progress on a terminal: input done of total, packets/s, alerts so far.
#[derive(Debug)]
pub(crate) struct Progress {
    on: bool,
    last: Instant,
    last_packets: u64,
    drawn: bool,
}

impl Progress {
    pub(crate) fn new(quiet: bool) -> Progress {
        Progress {
            on: !quiet && std::io::stderr().is_terminal(),
            last: Instant::now(),
            last_packets: 0,
            drawn: false,
        }
    }

    pub(crate) fn tick(&mut self, runtime: &Path) {
        if !self.on || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        if live(runtime) {
            let packets = capture(runtime, CaptureCounter::Packets.name());
            let rate = (packets - self.last_packets.min(packets)) as f64
                / self.last.elapsed().as_secs_f64().max(1e-3);
            self.last = Instant::now();
            self.last_packets = packets;
            eprint!(
                "\r\x1b[2K[live] {} packets ({:.0}/s), {} dropped, {} alerts",
                packets,
                rate,
                live_drops(runtime),
                writer_alerts(runtime)
            );
            self.drawn = true;
            return;
        }
        let done = capture(runtime, CaptureCounter::InputBytesDone.name());
        let total = capture(runtime, CaptureCounter::InputBytesTotal.name()).max(1);
        let packets = capture(runtime, CaptureCounter::Packets.name());
        let alerts = writer_alerts(runtime);
        let rate = (packets - self.last_packets.min(packets)) as f64
            / self.last.elapsed().as_secs_f64().max(1e-3);
        self.last = Instant::now();
        self.last_packets = packets;
        eprint!(
            "\r\x1b[2K[{:>3}%] {:.1} of {:.1} MB, {} packets ({:.0}/s), {} alerts",
            done * 100 / total,
            done as f64 / 1e6,
            total as f64 / 1e6,
            packets,
            rate,
            alerts
        );
        self.drawn = true;
    }

    pub(crate) fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }
}

/// Input totals of the capture runs that ended.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CaptureTotals {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) errors: u64,
}

impl CaptureTotals {
    /// Adds the page of the capture run that just ended.
    pub(crate) fn add_ended_run(&mut self, rt: &Path) {
        self.packets += capture(rt, CaptureCounter::Packets.name());
        self.bytes += capture(rt, CaptureCounter::Bytes.name());
        self.errors += capture(rt, CaptureCounter::Errors.name());
    }
}

/// What the eve-writers that were replaced had written: a restarted writer starts a
/// fresh counter page, and the run's summary counts every incarnation.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WriterTotals {
    alerts: u64,
    events: u64,
    /// Pid of the last page added (a writer that died before making its page leaves the
    /// previous one, which must not count twice).
    last_pid: u32,
}

impl WriterTotals {
    /// Adds the page of the writer that just died, before its successor replaces it.
    pub(crate) fn add_dead_page(&mut self, rt: &Path) {
        let Ok(page) = CounterReader::open(&counters_path(rt, Role::EveWriter)) else {
            return;
        };
        if page.pid() == self.last_pid {
            return;
        }
        self.last_pid = page.pid();
        self.alerts += page.get(&eve_event_counter(ALERT_TYPE)).unwrap_or(0);
        self.events += page.get(EveCounter::EventsWritten.name()).unwrap_or(0);
    }
}

/// What a run did, for the summary line and `--summary-json`.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    packets: u64,
    alerts: u64,
    events: u64,
    bytes: u64,
    input_errors: u64,
    wall_s: f64,
    rules_loaded: u64,
    rules_failed: u64,
    /// Wall time of the slowest worker's rule load.
    rules_load_s: f64,
    /// CPU of every role minus the workers' rule loading.
    packet_path_cpu_s: f64,
    /// Per role: (name, cpu s, peak RSS kB).
    roles: Vec<(String, f64, u64)>,
}

impl Summary {
    pub(crate) fn collect(
        rt: &Path,
        stack: &Stack,
        workers: usize,
        wall: Duration,
        input: CaptureTotals,
        writers: WriterTotals,
    ) -> Summary {
        let mut s = Summary {
            packets: input.packets,
            bytes: input.bytes,
            alerts: writers.alerts + writer_alerts(rt),
            events: writers.events + counter(rt, Role::EveWriter, EveCounter::EventsWritten.name()),
            input_errors: input.errors,
            wall_s: wall.as_secs_f64(),
            ..Default::default()
        };
        let mut load_cpu_us = 0;
        for w in 0..workers {
            load_cpu_us += detect(rt, w, DetectCounter::RulesLoadCpuUs);
            let load_s = detect(rt, w, DetectCounter::RulesLoadUs) as f64 / 1e6;
            s.rules_load_s = s.rules_load_s.max(load_s);
            if w == 0 {
                s.rules_loaded = detect(rt, w, DetectCounter::RulesLoaded);
                s.rules_failed = detect(rt, w, DetectCounter::RulesFailed);
            }
        }
        let total_cpu_us: u64 = stack.slots.iter().map(|r| r.usage.cpu_us).sum();
        s.packet_path_cpu_s = total_cpu_us.saturating_sub(load_cpu_us) as f64 / 1e6;
        s.roles = stack
            .slots
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.usage.cpu_us as f64 / 1e6,
                    r.usage.max_rss_kb,
                )
            })
            .collect();
        s
    }

    /// The one line `meerkat run` prints at the end.
    pub(crate) fn line(&self, rt: &Path, eve: &str, uses_registry: bool, restarts: u32) -> String {
        let mut line = format!(
            "meerkat: {} packets, {} alerts, {} events in {:.2} s (packet path {:.2} CPU s); EVE: {eve}",
            self.packets, self.alerts, self.events, self.wall_s, self.packet_path_cpu_s
        );
        if uses_registry {
            let files = capture(rt, CaptureCounter::Files.name());
            let resumed = capture(rt, CaptureCounter::FilesResumed.name());
            let skipped = capture(rt, CaptureCounter::FilesSkipped.name());
            line.push_str(&format!(
                "; {files} files read ({resumed} resumed), {skipped} already done"
            ));
        }
        if restarts > 0 {
            line.push_str(&format!("; {restarts} role restarts"));
        }
        if self.input_errors > 0 {
            line.push_str(&format!(
                " ({} input file errors, see the log)",
                self.input_errors
            ));
        }
        if live(rt) {
            let c = |n: CaptureLiveCounter| capture(rt, n.name());
            line.push_str(&format!(
                "; live: {} received, dropped {} (kernel {}, nic {}, backlog {}, ring full {}), backlog high-water {}",
                c(CaptureLiveCounter::SourcePackets),
                live_drops(rt),
                c(CaptureLiveCounter::KernelDrops),
                c(CaptureLiveCounter::DpdkImissed),
                c(CaptureLiveCounter::BacklogDrops),
                c(CaptureLiveCounter::RingFullDrops),
                c(CaptureLiveCounter::BacklogHighWater),
            ));
        }
        line
    }

    pub(crate) fn to_json(&self) -> String {
        let roles: Vec<serde_json::Value> = self
            .roles
            .iter()
            .map(|(n, cpu, rss)| serde_json::json!({"role": n, "cpu_s": cpu, "max_rss_kb": rss}))
            .collect();
        serde_json::json!({
            "packets": self.packets,
            "bytes": self.bytes,
            "alerts": self.alerts,
            "events": self.events,
            "input_errors": self.input_errors,
            "wall_s": self.wall_s,
            "rules_loaded": self.rules_loaded,
            "rules_failed": self.rules_failed,
            "rules_load_s": self.rules_load_s,
            "packet_path_cpu_s": self.packet_path_cpu_s,
            "total_max_rss_kb": self.roles.iter().map(|r| r.2).sum::<u64>(),
            "roles": roles,
        })
        .to_string()
    }
}
