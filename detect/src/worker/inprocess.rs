//! The worker in the calling process: for tests, examples and benchmarks.

use super::*;

/// A detect worker run inside this process, its events kept in memory: the same packet
/// path as the detect role, without rings or the eve-writer (tests, benchmarks).
pub struct InProcess {
    w: Worker,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("packets", &self.w.x.stats.packets)
            .field("flows", &self.w.flows.len())
            .finish_non_exhaustive()
    }
}

/// What an in-process run produced.
#[derive(Debug, Default)]
pub struct InProcessResult {
    pub packets: u64,
    pub alerts: u64,
    pub events: Vec<Event>,
}

impl InProcess {
    /// A worker with `engine`, per-host state kept locally. `config`'s app-layer
    /// sections must load (as every config loaded with `meerkat_app::config::resolve`
    /// does): this harness for tests and benchmarks does not report config errors.
    pub fn new(config: &Config, engine: Engine) -> InProcess {
        let registry = app::Registry::from_config(config)
            .expect("InProcess is given a config whose app-layer sections load");
        let mut w = Worker::new(
            config,
            registry,
            0,
            engine,
            DetectState::default(),
            Out::Collect(Vec::new()),
            FileSource::Local(Vec::new()),
        );
        // No ring: nothing to keep for a replacement.
        w.x.replay.disable();
        InProcess { w }
    }

    /// Names capture file `index` (1-based), for the packets whose `PacketMeta::file` is
    /// that index (`pcap_filename`).
    pub fn name_file(&mut self, index: u32, name: &str) {
        if let FileSource::Local(v) = &mut self.w.x.files
            && let Some(i) = (index as usize).checked_sub(1)
        {
            if v.len() <= i {
                v.resize(i + 1, String::new());
            }
            v[i] = name.to_string();
        }
    }

    /// Processes one packet (flows time out by packet time, as in the detect role).
    pub fn packet(&mut self, meta: &PacketMeta, data: &[u8]) {
        self.w.packet(meta, data, (0, 0));
    }

    /// Ends every flow and returns what was produced.
    pub fn finish(mut self) -> InProcessResult {
        self.w.drain();
        let events = match std::mem::replace(&mut self.w.x.sink, Out::Collect(Vec::new())) {
            Out::Collect(v) => v,
            Out::Grpc(_) => Vec::new(),
        };
        InProcessResult {
            packets: self.w.x.stats.packets,
            alerts: self.w.x.stats.alerts,
            events,
        }
    }

    /// Runs a whole pcap or pcapng file through a fresh worker.
    pub fn run_pcap(
        config: &Config,
        engine: Engine,
        path: &std::path::Path,
    ) -> Result<InProcessResult, meerkat_wire::pcap::PcapError> {
        let file = std::fs::File::open(path)
            .map_err(|source| meerkat_wire::pcap::PcapError::Io { offset: 0, source })?;
        let mut reader = meerkat_wire::pcap::Reader::new(file)?;
        let mut run = InProcess::new(config, engine);
        run.name_file(1, &path.to_string_lossy());
        let mut seq = 0u64;
        while let Some(p) = reader.next_packet()? {
            seq += 1;
            let meta = PacketMeta {
                ts_ns: p.ts_ns,
                seq,
                origlen: p.origlen,
                link_type: p.link_type,
                iface: p.iface,
                file: 1,
            };
            run.packet(&meta, p.data);
        }
        Ok(run.finish())
    }

    /// Runs Ethernet frames `(capture time in ns, bytes)` through a fresh worker, numbered
    /// from 1 as a capture file's packets are (for traffic built in memory).
    pub fn run_frames<'a>(
        config: &Config,
        engine: Engine,
        frames: impl IntoIterator<Item = (u64, &'a [u8])>,
    ) -> InProcessResult {
        let mut run = InProcess::new(config, engine);
        for (seq, (ts_ns, data)) in (1..).zip(frames) {
            let meta = PacketMeta {
                ts_ns,
                seq,
                origlen: u32::try_from(data.len()).unwrap_or(u32::MAX),
                link_type: decode::LINKTYPE_ETHERNET,
                iface: 0,
                file: 0,
            };
            run.packet(&meta, data);
        }
        run.finish()
    }
}
