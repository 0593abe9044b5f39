//! `outputs.pcap-log` with `conditional: all`: the packets handed to the workers,
//! written to pcap files by the capture role, as Suricata's pcap-log writes them
//! (classic pcap, microsecond timestamps, snaplen 262144, the packets' link type).
//!
//! Why the capture role: with `conditional: all` every packet is logged, and capture is
//! the one process that has every packet in hand already, in order; writing there keeps
//! the detect workers' path untouched. The cost is one buffered copy per packet (a
//! [`BufWriter`] of [`BUFFER_SIZE`], so one `write(2)` per MiB, none per packet).
//! `conditional: alerts`/`tag` need to know which flows alerted, which only the detect
//! workers know; the config refuses them for now (see `meerkat_config::pcap_log`).
//!
//! Files, as Suricata 8 names them (the time is that of the file's first packet):
//! - `mode: normal`: one file at a time for all workers, `<dir>/<filename>.<sec>` (or
//!   `.<sec>.<usec>` with `ts-format: usec`);
//! - `mode: multi`: one file per worker, `<dir>/<filename>` with `%n` replaced by the
//!   worker's number (from 1), `%t` by the time, `%i` by the capture process id.
//!
//! A file is closed and the next one opened when the next packet would take it past
//! `limit`; with `max-files`, the oldest file is deleted when one more is opened, as a
//! ring. A file name taken already (two files started in one second) gets `.1`, `.2`
//! ... rather than overwriting it. A write error stops the logging (counted, logged
//! once); the capture itself goes on.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use meerkat_config::pcap_log::{PcapLogMode, TsFormat};
use meerkat_config::{Config, PcapLog};

use crate::bpf::{BpfError, UserFilter};

/// The write buffer of each open file.
pub const BUFFER_SIZE: usize = 1 << 20;
/// The snapshot length written in each file's header (Suricata's).
pub const SNAPLEN: u32 = 262_144;
/// Bytes of a classic pcap file header.
const FILE_HEADER: u64 = 24;
/// Bytes of a classic pcap record header.
const RECORD_HEADER: u64 = 16;
/// Most `.N` suffixes tried to find a free file name.
const MAX_NAME_TRIES: u32 = 1000;

/// Errors of setting pcap-log up.
#[derive(Debug, thiserror::Error)]
pub enum PcapLogError {
    #[error("outputs.pcap-log.dir {}: {source}", .dir.display())]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("outputs.pcap-log.bpf-filter: {0}")]
    Filter(#[from] BpfError),
}

/// What pcap-log wrote so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcapLogStats {
    pub packets: u64,
    pub bytes: u64,
    pub files: u64,
    pub errors: u64,
}

struct Slot {
    out: Option<BufWriter<File>>,
    written: u64,
    link_type: u16,
}

/// The pcap-log writer of one capture role.
pub struct PcapLogger {
    cfg: PcapLog,
    dir: PathBuf,
    limit: u64,
    /// One (normal mode) or one per worker (multi).
    slots: Vec<Slot>,
    /// The files opened, oldest first (for `max-files`).
    opened: VecDeque<PathBuf>,
    filter: Option<UserFilter>,
    stats: PcapLogStats,
    /// A write failed: nothing more is written.
    failed: bool,
}

impl std::fmt::Debug for PcapLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapLogger")
            .field("dir", &self.dir)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl PcapLogger {
    /// The logger of `config`'s enabled pcap-log output for `workers` workers, `None`
    /// when there is none. The directory is created if missing.
    pub fn new(config: &Config, workers: usize) -> Result<Option<PcapLogger>, PcapLogError> {
        let Some(cfg) = config.pcap_log() else {
            return Ok(None);
        };
        let dir = cfg
            .dir
            .clone()
            .unwrap_or_else(|| config.default_log_dir.clone());
        std::fs::create_dir_all(&dir).map_err(|source| PcapLogError::Dir {
            dir: dir.clone(),
            source,
        })?;
        let filter = cfg
            .bpf_filter
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(UserFilter::new)
            .transpose()?;
        let n = match cfg.mode {
            PcapLogMode::Normal => 1,
            PcapLogMode::Multi => workers.max(1),
        };
        Ok(Some(PcapLogger {
            limit: cfg.limit_bytes(),
            cfg: cfg.clone(),
            dir,
            slots: (0..n)
                .map(|_| Slot {
                    out: None,
                    written: 0,
                    link_type: 0,
                })
                .collect(),
            opened: VecDeque::new(),
            filter,
            stats: PcapLogStats::default(),
            failed: false,
        }))
    }

    /// What was written so far.
    pub fn stats(&self) -> PcapLogStats {
        self.stats
    }

    /// Logs one packet that went to worker `worker`.
    #[inline]
    pub fn log(&mut self, worker: usize, link_type: u16, ts_ns: u64, origlen: u32, data: &[u8]) {
        if self.failed {
            return;
        }
        if let Some(f) = &mut self.filter {
            // A link type the filter cannot be compiled for is not logged.
            if !f.accepts(link_type, data, origlen).unwrap_or(false) {
                return;
            }
        }
        let s = if self.slots.len() == 1 {
            0
        } else {
            worker % self.slots.len()
        };
        if let Err(e) = self.write(s, link_type, ts_ns, origlen, data) {
            self.stats.errors += 1;
            self.failed = true;
            tracing::error!(dir = %self.dir.display(), error = %e, "pcap-log: write failed; pcap logging stops");
            for slot in &mut self.slots {
                slot.out = None;
            }
        }
    }

    fn write(
        &mut self,
        s: usize,
        link_type: u16,
        ts_ns: u64,
        origlen: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let caplen = data.len().min(SNAPLEN as usize);
        let need = RECORD_HEADER + caplen as u64;
        let slot = &self.slots[s];
        if slot.out.is_none() || slot.link_type != link_type || slot.written + need > self.limit {
            self.rotate(s, link_type, ts_ns)?;
        }
        let slot = &mut self.slots[s];
        let Some(out) = slot.out.as_mut() else {
            return Ok(());
        };
        let sec = (ts_ns / 1_000_000_000) as u32;
        let usec = ((ts_ns % 1_000_000_000) / 1000) as u32;
        let mut hdr = [0u8; RECORD_HEADER as usize];
        hdr[0..4].copy_from_slice(&sec.to_le_bytes());
        hdr[4..8].copy_from_slice(&usec.to_le_bytes());
        hdr[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        hdr[12..16].copy_from_slice(&origlen.max(caplen as u32).to_le_bytes());
        out.write_all(&hdr)?;
        out.write_all(&data[..caplen])?;
        slot.written += need;
        self.stats.packets += 1;
        self.stats.bytes += need;
        Ok(())
    }

    #[cold]
    fn rotate(&mut self, s: usize, link_type: u16, ts_ns: u64) -> io::Result<()> {
        if let Some(mut old) = self.slots[s].out.take() {
            old.flush()?;
        }
        if let Some(max) = self.cfg.max_files {
            while self.opened.len() >= max as usize {
                if let Some(oldest) = self.opened.pop_front() {
                    match std::fs::remove_file(&oldest) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        let path = self.free_name(&self.file_name(s, ts_ns))?;
        let f = File::create(&path)?;
        let mut out = BufWriter::with_capacity(BUFFER_SIZE, f);
        let mut hdr = [0u8; FILE_HEADER as usize];
        hdr[0..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        hdr[4..6].copy_from_slice(&2u16.to_le_bytes());
        hdr[6..8].copy_from_slice(&4u16.to_le_bytes());
        hdr[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        hdr[20..24].copy_from_slice(&u32::from(link_type).to_le_bytes());
        out.write_all(&hdr)?;
        tracing::debug!(path = %path.display(), "pcap-log: new file");
        self.opened.push_back(path);
        self.stats.files += 1;
        self.stats.bytes += FILE_HEADER;
        let slot = &mut self.slots[s];
        slot.out = Some(out);
        slot.written = FILE_HEADER;
        slot.link_type = link_type;
        Ok(())
    }

    /// The name of slot `s`'s next file, started by a packet of time `ts_ns`.
    fn file_name(&self, s: usize, ts_ns: u64) -> PathBuf {
        let sec = ts_ns / 1_000_000_000;
        let usec = (ts_ns % 1_000_000_000) / 1000;
        let t = match self.cfg.ts_format {
            TsFormat::Sec => sec.to_string(),
            TsFormat::Usec => format!("{sec}.{usec:06}"),
        };
        let name = match self.cfg.mode {
            PcapLogMode::Normal => format!("{}.{t}", self.cfg.filename),
            PcapLogMode::Multi => {
                let mut out = String::new();
                let mut chars = self.cfg.filename.chars();
                while let Some(c) = chars.next() {
                    if c != '%' {
                        out.push(c);
                        continue;
                    }
                    match chars.next() {
                        Some('n') => out.push_str(&(s + 1).to_string()),
                        Some('i') => out.push_str(&std::process::id().to_string()),
                        Some('t') => out.push_str(&t),
                        // The config refuses any other.
                        Some(o) => {
                            out.push('%');
                            out.push(o);
                        }
                        None => out.push('%'),
                    }
                }
                out
            }
        };
        self.dir.join(name)
    }

    fn free_name(&self, want: &Path) -> io::Result<PathBuf> {
        let taken = |p: &Path| self.opened.iter().any(|o| o == p) || p.exists();
        if !taken(want) {
            return Ok(want.to_path_buf());
        }
        for k in 1..=MAX_NAME_TRIES {
            let mut s = want.as_os_str().to_owned();
            s.push(format!(".{k}"));
            let p = PathBuf::from(s);
            if !taken(&p) {
                return Ok(p);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free file name near {}", want.display()),
        ))
    }

    /// Writes out what is buffered (at the end of a run).
    pub fn flush(&mut self) {
        if self.failed {
            return;
        }
        for slot in &mut self.slots {
            if let Some(out) = &mut slot.out
                && let Err(e) = out.flush()
            {
                self.stats.errors += 1;
                self.failed = true;
                tracing::error!(error = %e, "pcap-log: write failed; pcap logging stops");
                break;
            }
        }
    }
}

/// The pcap-log counters on the capture role's page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PcapLogCounters {
    packets: meerkat_shm::CounterRef,
    bytes: meerkat_shm::CounterRef,
    files: meerkat_shm::CounterRef,
    errors: meerkat_shm::CounterRef,
}

impl PcapLogCounters {
    pub(crate) fn new(page: &meerkat_shm::CounterPage) -> PcapLogCounters {
        use meerkat_runtime::counters::CaptureCounter as C;
        PcapLogCounters {
            packets: page.expect(C::PcapLogPackets.name()),
            bytes: page.expect(C::PcapLogBytes.name()),
            files: page.expect(C::PcapLogFiles.name()),
            errors: page.expect(C::PcapLogErrors.name()),
        }
    }

    pub(crate) fn set(&self, s: PcapLogStats) {
        self.packets.set(s.packets);
        self.bytes.set(s.bytes);
        self.files.set(s.files);
        self.errors.set(s.errors);
    }
}

impl Drop for PcapLogger {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_config::de::ByteSize;

    fn config(dir: &Path, p: PcapLog) -> Config {
        let mut c = Config {
            default_log_dir: dir.to_path_buf(),
            ..Default::default()
        };
        c.outputs.push(meerkat_config::Output {
            eve_log: None,
            pcap_log: Some(PcapLog { enabled: true, ..p }),
            file_store: None,
        });
        c
    }

    fn read_back(path: &Path) -> Vec<(u64, u32, Vec<u8>)> {
        let mut r = crate::Reader::new(File::open(path).unwrap()).unwrap();
        let mut out = Vec::new();
        while let Some(p) = r.next_packet().unwrap() {
            assert_eq!(p.link_type, 1);
            out.push((p.ts_ns, p.origlen, p.data.to_vec()));
        }
        out
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn normal_mode_writes_what_the_reader_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let c = config(d.path(), PcapLog::default());
        let mut l = PcapLogger::new(&c, 4).unwrap().unwrap();
        let t0 = 1_705_312_800_123_456_000u64;
        let pkts: Vec<(u64, u32, Vec<u8>)> = (0..50u64)
            .map(|i| {
                (
                    t0 + i * 1000,
                    100 + i as u32,
                    vec![i as u8; 60 + i as usize],
                )
            })
            .collect();
        for (i, (ts, orig, data)) in pkts.iter().enumerate() {
            l.log(i % 4, 1, *ts, *orig, data);
        }
        drop(l);
        assert_eq!(files(d.path()), ["log.pcap.1705312800"]);
        assert_eq!(read_back(&d.path().join("log.pcap.1705312800")), pkts);
    }

    #[test]
    fn multi_mode_rotates_and_keeps_max_files() {
        let d = tempfile::tempdir().unwrap();
        let c = config(
            d.path(),
            PcapLog {
                filename: "log.%n.%t.pcap".to_string(),
                mode: PcapLogMode::Multi,
                limit: ByteSize::mib(4),
                max_files: Some(3),
                ts_format: TsFormat::Usec,
                ..Default::default()
            },
        );
        let mut l = PcapLogger::new(&c, 2).unwrap().unwrap();
        // Records of 256 KiB (the snaplen): 15 fit in a 4 MiB file. 40 for worker 0,
        // one for worker 1.
        let big = vec![7u8; SNAPLEN as usize];
        let t0 = 1_000_000_000_000_000_000u64;
        l.log(1, 1, t0, 60, &[1u8; 60]);
        for i in 0..40u64 {
            l.log(0, 1, t0 + (i + 1) * 1_000_000_000, big.len() as u32, &big);
        }
        let st = l.stats();
        drop(l);
        // Worker 0 opened files at its packets 1, 16 and 31; with worker 1's, 4 files
        // were opened and the oldest (worker 1's) deleted.
        assert_eq!(st.files, 4);
        assert_eq!(st.packets, 41);
        assert_eq!(
            files(d.path()),
            [
                "log.1.1000000001.000000.pcap",
                "log.1.1000000016.000000.pcap",
                "log.1.1000000031.000000.pcap",
            ]
        );
        let first = read_back(&d.path().join("log.1.1000000001.000000.pcap"));
        assert_eq!(first.len(), 15);
        assert!(
            std::fs::metadata(d.path().join("log.1.1000000001.000000.pcap"))
                .unwrap()
                .len()
                <= 4 << 20
        );
        let last = read_back(&d.path().join("log.1.1000000031.000000.pcap"));
        assert_eq!(last.len(), 10);
        assert_eq!(last[0].2, big);
    }

    #[test]
    fn filter_and_taken_names() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("log.pcap.5"), b"someone else's").unwrap();
        let c = config(
            d.path(),
            PcapLog {
                // A compiled program, so that the test needs no libpcap: `ip` on
                // Ethernet (`tcpdump -dd ip`).
                bpf_filter: Some(
                    "{ 0x28, 0, 0, 0x0000000c }, { 0x15, 0, 1, 0x00000800 },
                     { 0x6, 0, 0, 0x00040000 }, { 0x6, 0, 0, 0x00000000 },"
                        .to_string(),
                ),
                ..Default::default()
            },
        );
        let mut l = PcapLogger::new(&c, 1).unwrap().unwrap();
        let mut v4 = vec![0u8; 60];
        v4[12] = 0x08;
        let mut arp = v4.clone();
        arp[13] = 0x06;
        l.log(0, 1, 5_000_000_000, 60, &v4);
        l.log(0, 1, 5_000_000_001, 60, &arp);
        drop(l);
        assert_eq!(files(d.path()), ["log.pcap.5", "log.pcap.5.1"]);
        assert_eq!(
            std::fs::read(d.path().join("log.pcap.5")).unwrap(),
            b"someone else's"
        );
        assert_eq!(read_back(&d.path().join("log.pcap.5.1")).len(), 1);
    }
}
