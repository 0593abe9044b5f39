//! The counter schema of each role: the names a role registers on its counter page
//! (`counters-ROLE`, see `meerkat_shm::counters`) and the names every reader looks up.
//!
//! - capture: [`CaptureCounter`] (`capture.packets`, ...), one
//!   [`capture_worker_packets`] per worker, then [`CaptureLiveCounter`] (`capture.live`,
//!   the drops of a live source); page order [`capture_counter_names`].
//! - detect worker N: [`DetectCounters`] (`detect.N.packets`, ...): the fixed
//!   [`DetectCounter`]s, one `detect.N.app_<proto>` per application protocol (flows
//!   whose protocol was detected), and one `detect.N.<event>` per decoder event (its
//!   Suricata name, `detect.N.decoder.ipv4.trunc_pkt`). The protocols and events are the
//!   detect crate's lists, passed in; page order [`detect_counter_names`].
//! - eve-writer: [`EveCounter`] (`eve.batches`, ...) and one [`eve_event_counter`] per
//!   event type (`eve.events.alert`); page order [`eve_writer_counter_names`].
//!
//! Names are part of the control API (`meerkat ctl stats`, Prometheus `/metrics`, EVE
//! `stats` `threads`): renaming one is a breaking change.

/// Declares an enum of counters, its `ALL` list in page order and each one's name, from
/// one list (a counter cannot miss its name or its place).
macro_rules! counter_list {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $var:ident => $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $var,)+
        }

        impl $name {
            /// Every counter, in page order.
            pub const ALL: [$name; [$($text,)+].len()] = [$($name::$var,)+];

            /// The counter's name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$var => $text,)+
                }
            }
        }
    };
}

/// Prefix of the capture role's counter names.
pub const CAPTURE_PREFIX: &str = "capture.";
/// Prefix of the eve-writer's counter names.
pub const EVE_PREFIX: &str = "eve.";
/// Prefix of the detect workers' counter names (`detect.` + index + `.`).
pub const DETECT_PREFIX: &str = "detect.";

counter_list! {
    /// The capture role's counters, whatever its source.
    pub enum CaptureCounter {
        /// Packets written into the rings.
        Packets => "capture.packets",
        /// Bytes (captured lengths) written into the rings.
        Bytes => "capture.bytes",
        /// Capture files opened.
        Files => "capture.files",
        /// Bytes of every input file, as known so far.
        InputBytesTotal => "capture.input_bytes_total",
        /// Bytes of the input files read so far.
        InputBytesDone => "capture.input_bytes_done",
        /// Times capture waited for a full ring (offline inputs).
        RingFullWaits => "capture.ring_full_waits",
        /// Input errors (a truncated or corrupt capture file).
        Errors => "capture.errors",
        /// Directory inputs: checkpoints made.
        Checkpoints => "capture.checkpoints",
        /// Directory inputs: files resumed part way.
        FilesResumed => "capture.files_resumed",
        /// Directory inputs: files skipped as already done.
        FilesSkipped => "capture.files_skipped",
        /// Directory inputs: files deleted once done.
        FilesDeleted => "capture.files_deleted",
        /// Packets not sent again by a capture that replaced a dead one (the rings had
        /// them already).
        ResumeSkipped => "capture.resume_skipped",
        /// Packets the BPF filter refused, where it runs in user space (pcap files,
        /// DPDK, AF_XDP; a filter in the kernel does not count them).
        BpfFiltered => "capture.bpf_filtered",
        /// `outputs.pcap-log`: packets written to pcap files.
        PcapLogPackets => "capture.pcap_log.packets",
        /// `outputs.pcap-log`: bytes written (headers included).
        PcapLogBytes => "capture.pcap_log.bytes",
        /// `outputs.pcap-log`: files opened.
        PcapLogFiles => "capture.pcap_log.files",
        /// `outputs.pcap-log`: write errors (the logging stops at the first).
        PcapLogErrors => "capture.pcap_log.errors",
    }
}

counter_list! {
    /// The capture role's counters of a live source (AF_PACKET, DPDK): where packets
    /// were lost.
    pub enum CaptureLiveCounter {
        /// 1 once the live source is open and capturing.
        Live => "capture.live",
        SourcePackets => "capture.source.packets",
        SourceBytes => "capture.source.bytes",
        KernelPackets => "capture.kernel_packets",
        KernelDrops => "capture.kernel_drops",
        DpdkImissed => "capture.dpdk.imissed",
        DpdkIerrors => "capture.dpdk.ierrors",
        DpdkRxNombuf => "capture.dpdk.rx_nombuf",
        SourceErrors => "capture.source.errors",
        BacklogPackets => "capture.backlog.packets",
        BacklogDrops => "capture.backlog.drops",
        BacklogDepth => "capture.backlog.depth",
        BacklogHighWater => "capture.backlog.high_water",
        RingFullDrops => "capture.ring_full_drops",
    }
}

impl CaptureLiveCounter {
    /// The counters of packets a live run lost, wherever it happened (kernel or NIC
    /// ring, backlog, worker ring).
    pub const DROPS: [CaptureLiveCounter; 4] = [
        CaptureLiveCounter::KernelDrops,
        CaptureLiveCounter::DpdkImissed,
        CaptureLiveCounter::BacklogDrops,
        CaptureLiveCounter::RingFullDrops,
    ];
}

/// Packets capture wrote into worker `w`'s ring (`capture.worker.W.packets`).
pub fn capture_worker_packets(w: usize) -> String {
    format!("{CAPTURE_PREFIX}worker.{w}.packets")
}

/// Every counter of the capture page of a stack of `workers` workers, in page order.
pub fn capture_counter_names(workers: usize) -> Vec<String> {
    let mut names: Vec<String> = CaptureCounter::ALL
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    names.extend((0..workers).map(capture_worker_packets));
    names.extend(CaptureLiveCounter::ALL.iter().map(|c| c.name().to_string()));
    names
}

counter_list! {
    /// A detect worker's fixed counters, by their name after the `detect.N.` prefix.
    /// The per-protocol flow counters (`app_<proto>`) come between
    /// [`DetectCounter::DefragReassembled`] and [`DetectCounter::AppErrors`] in the page.
    pub enum DetectCounter {
        Packets => "packets",
        Bytes => "bytes",
        Alerts => "alerts",
        /// Events handed to the event stream.
        Events => "events",
        Flows => "flows",
        FlowsActive => "flows_active",
        FlowsEvicted => "flows_evicted",
        InvalidChecksum => "invalid_checksum",
        TcpSessions => "tcp_sessions",
        TcpUntracked => "tcp_untracked",
        TcpGaps => "tcp_gaps",
        Fragments => "fragments",
        DefragReassembled => "defrag_reassembled",
        AppErrors => "app_errors",
        Anomalies => "anomalies",
        RingCorrupt => "ring_corrupt",
        RulesLoaded => "rules_loaded",
        RulesFailed => "rules_failed",
        /// Wall time of the rule load, µs.
        RulesLoadUs => "rules_load_us",
        /// CPU time of the process until its rules were loaded, µs.
        RulesLoadCpuUs => "rules_load_cpu_us",
        /// The highest ring sequence number whose events the eve-writer has all written;
        /// capture's checkpoints wait on it.
        AckedSeq => "acked_seq",
        /// Ruleset generation in use (1 at start, raised by each live reload).
        RulesGeneration => "rules_generation",
        RulesReloads => "rules_reloads",
        /// Ring records skipped at start because the eve-writer already had their events
        /// (a replacement of a worker that died).
        ResumeSkipped => "resume_skipped",
        /// Files logged (`fileinfo` records made).
        Files => "files",
        /// Files logged as TRUNCATED (stream end, a gap, the depth limit).
        FilesTruncated => "files_truncated",
        /// Files logged with at least one digest computed.
        FilesHashed => "files_hashed",
        /// Files logged with their magic.
        FilesMagic => "files_magic",
        /// Files written by the file store.
        FilesStored => "files_stored",
        /// File store I/O errors (Suricata's name).
        FileStoreErrors => "file_store.fs_errors",
        /// Temporary files of the file store open now (Suricata's name).
        FileStoreOpen => "file_store.open_files",
        /// Files the file store gave up because its queue was full (a slow disk).
        FileStoreDropped => "file_store_dropped",
        /// Files that found no room under `file-store.memcap` (failed, not stored).
        FileStoreMemcap => "file_store_memcap",
        /// HTTP byte-range parts not kept aside for `byterange.memcap` (Suricata's
        /// `http.byterange` memcap).
        HttpByterangeMemcap => "http_byterange_memcap",
        /// Packets processed again after a restart to rebuild a dead predecessor's
        /// flows (their events were written already; not in `packets`).
        ReplayedPackets => "replayed_packets",
        /// Live flows whose first packet is out of the replay window now: a
        /// replacement could not rebuild them if this worker died.
        ReplayFlowsOutside => "replay_flows_outside",
        /// Flows a dead predecessor held that this worker could not rebuild (out of
        /// its replay window), since the run started.
        FlowsLostOnRestart => "flows_lost_on_restart",
        /// Checksum validation under `checksum-checks: auto`: 0 still sampling, 1 on,
        /// 2 off (a replacement goes on with its predecessor's decision).
        ChecksumMode => "checksum_mode",
    }
}

/// The counter names of detect worker `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetectCounters {
    index: usize,
}

impl DetectCounters {
    pub fn new(index: usize) -> DetectCounters {
        DetectCounters { index }
    }

    /// `detect.N.`
    pub fn prefix(&self) -> String {
        format!("{DETECT_PREFIX}{}.", self.index)
    }

    /// `detect.N.<own>`: the full name of a counter named `own` after the prefix.
    pub fn name(&self, own: &str) -> String {
        format!("{DETECT_PREFIX}{}.{own}", self.index)
    }

    /// A fixed counter (`detect.N.packets`).
    pub fn counter(&self, c: DetectCounter) -> String {
        self.name(c.name())
    }

    /// Flows whose application protocol was `proto` (`detect.N.app_http`).
    pub fn app(&self, proto: &str) -> String {
        self.name(&format!("app_{proto}"))
    }

    /// A decoder event by its Suricata name (`detect.N.decoder.ipv4.trunc_pkt`).
    pub fn event(&self, event: &str) -> String {
        self.name(event)
    }

    /// Every counter of the page, in page order: the fixed ones with one `app_<proto>`
    /// per name of `app_protocols` after [`DetectCounter::DefragReassembled`], then one
    /// per decoder event of `decode_events`.
    pub fn names<'a>(
        &self,
        app_protocols: &[&str],
        decode_events: impl IntoIterator<Item = &'a str>,
    ) -> Vec<String> {
        let mut names = Vec::new();
        for c in DetectCounter::ALL {
            names.push(self.counter(c));
            if c == DetectCounter::DefragReassembled {
                names.extend(app_protocols.iter().map(|p| self.app(p)));
            }
        }
        names.extend(decode_events.into_iter().map(|e| self.event(e)));
        names
    }
}

/// Every counter of detect worker `index`'s page: see [`DetectCounters::names`].
pub fn detect_counter_names<'a>(
    index: usize,
    app_protocol_names: &[&str],
    decode_event_names: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    DetectCounters::new(index).names(app_protocol_names, decode_event_names)
}

/// A counter name of a detect worker or of capture's per-worker counters split into the
/// name without the worker index and the index as written: `detect.3.packets` ->
/// (`detect.packets`, `3`), `capture.worker.3.packets` -> (`capture.worker.packets`,
/// `3`); `None` for other names (for a `worker` label, as in Prometheus).
pub fn split_worker(name: &str) -> Option<(String, &str)> {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        ["detect", n, rest @ ..] if n.parse::<u32>().is_ok() => {
            Some((format!("detect.{}", rest.join(".")), *n))
        }
        ["capture", "worker", n, rest @ ..] if n.parse::<u32>().is_ok() => {
            Some((format!("capture.worker.{}", rest.join(".")), *n))
        }
        _ => None,
    }
}

counter_list! {
    /// The eve-writer's own counters.
    pub enum EveCounter {
        Batches => "eve.batches",
        DuplicateBatches => "eve.duplicate_batches",
        EventsIn => "eve.events_in",
        EventsWritten => "eve.events_written",
        UnknownEvents => "eve.unknown_events",
        BadEvents => "eve.bad_events",
        WriteCalls => "eve.write_calls",
        Bytes => "eve.bytes",
        Flushes => "eve.flushes",
        Errors => "eve.errors",
        Reconnects => "eve.reconnects",
        Dropped => "eve.dropped",
        ResentBytes => "eve.resent_bytes",
        /// Bytes held for an output that cannot take them now.
        HeldBytes => "eve.held_bytes",
        Reopens => "eve.reopens",
        StatsRecords => "eve.stats_records",
        FencedBatches => "eve.fenced_batches",
    }
}

/// Events of EVE type `event_type` written (`eve.events.alert`).
pub fn eve_event_counter(event_type: &str) -> String {
    format!("{EVE_PREFIX}events.{event_type}")
}

/// The counters of each network output of the eve-writer (`eve.output.N.<name>`).
pub const EVE_OUTPUT_COUNTERS: &[&str] = &[
    "sent",
    "acked",
    "spooled",
    "spooled_bytes",
    "replayed",
    "dropped",
    "resent",
    "lag",
    "errors",
];

/// Counter `name` (one of [`EVE_OUTPUT_COUNTERS`]) of the eve-writer's output `n`.
pub fn eve_output_counter(n: usize, name: &str) -> String {
    format!("{EVE_PREFIX}output.{n}.{name}")
}

/// Every counter of the eve-writer's network output `n`.
pub fn eve_output_counter_names(n: usize) -> Vec<String> {
    EVE_OUTPUT_COUNTERS
        .iter()
        .map(|c| eve_output_counter(n, c))
        .collect()
}

/// Every counter of the eve-writer's page, in page order: [`EveCounter::ALL`], then one
/// per EVE type of `event_types`.
pub fn eve_writer_counter_names(event_types: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = EveCounter::ALL
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    names.extend(event_types.iter().map(|t| eve_event_counter(t)));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_page() {
        let n = capture_counter_names(2);
        assert_eq!(n[0], "capture.packets");
        assert_eq!(n[11], "capture.resume_skipped");
        let k = CaptureCounter::ALL.len();
        assert_eq!(n[k - 1], "capture.pcap_log.errors");
        assert_eq!(
            n[k..k + 2],
            ["capture.worker.0.packets", "capture.worker.1.packets"]
        );
        assert_eq!(n[k + 2], "capture.live");
        assert_eq!(
            n.last().map(String::as_str),
            Some("capture.ring_full_drops")
        );
        assert_eq!(n.len(), k + 2 + CaptureLiveCounter::ALL.len());
        assert_eq!(k, 17);
    }

    #[test]
    fn detect_page_takes_the_protocols_and_events_it_is_given() {
        let n = detect_counter_names(1, &["http", "dns"], ["decoder.ipv4.trunc_pkt"]);
        let at = |s: &str| n.iter().position(|x| x == s).unwrap();
        assert_eq!(n[0], "detect.1.packets");
        assert_eq!(
            at("detect.1.app_http"),
            at("detect.1.defrag_reassembled") + 1
        );
        assert_eq!(at("detect.1.app_dns"), at("detect.1.app_http") + 1);
        assert_eq!(at("detect.1.app_errors"), at("detect.1.app_dns") + 1);
        assert_eq!(
            n.last().map(String::as_str),
            Some("detect.1.decoder.ipv4.trunc_pkt")
        );
        assert_eq!(n.len(), DetectCounter::ALL.len() + 3);
        let d = DetectCounters::new(7);
        assert_eq!(
            d.counter(DetectCounter::RulesLoaded),
            "detect.7.rules_loaded"
        );
        assert_eq!(d.prefix(), "detect.7.");
    }

    #[test]
    fn eve_writer_page() {
        let n = eve_writer_counter_names(&["alert", "flow"]);
        assert_eq!(n[0], "eve.batches");
        assert_eq!(n[n.len() - 2..], ["eve.events.alert", "eve.events.flow"]);
    }

    #[test]
    fn worker_index_is_split_off() {
        assert_eq!(
            split_worker("detect.3.packets"),
            Some(("detect.packets".to_string(), "3"))
        );
        assert_eq!(
            split_worker("detect.0.decoder.ipv4.trunc_pkt"),
            Some(("detect.decoder.ipv4.trunc_pkt".to_string(), "0"))
        );
        assert_eq!(
            split_worker("capture.worker.1.packets"),
            Some(("capture.worker.packets".to_string(), "1"))
        );
        assert_eq!(split_worker("capture.packets"), None);
        assert_eq!(split_worker("detect.x.packets"), None);
        assert_eq!(split_worker("eve.events.alert"), None);
    }
}
