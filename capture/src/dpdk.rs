//! A DPDK port as a live packet source (cargo feature `dpdk`).
//!
//! Our own small binding: the C shim `dpdk/shim.c` (compiled by `build.rs` against
//! `pkg-config libdpdk`) turns DPDK's inline fast path into plain functions, and this
//! module calls them. One RX queue, polled in bursts of `burst-size` by the capture
//! thread; each burst is handed on (copied into the backlog or the rings) and its mbufs
//! are freed at once, so the mempool only needs to cover the RX descriptors.
//!
//! Counters: the port's `imissed` (dropped by the NIC for lack of RX descriptors: the
//! hardware ring overflowed), `ierrors` and `rx_nombuf`, read once per stats interval.
//!
//! Without a NIC and without hugepages, EAL `--no-huge -m 256 --no-pci --no-shconf
//! --file-prefix=X --vdev net_pcap0,rx_pcap=FILE` replays a pcap file through the same
//! path (with the file's timestamps), and `--vdev net_af_packet0,iface=veth1` reads a
//! Linux interface.

use std::ffi::{CString, c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use meerkat_config::DpdkIface;

use crate::live::{RxPacket, Source, SourceError, SourceStats};
use meerkat_wire::LINKTYPE_ETHERNET;

/// Opaque `struct rte_mbuf`.
#[repr(C)]
struct Mbuf {
    _private: [u8; 0],
}

unsafe extern "C" {
    fn mk_dpdk_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    fn mk_dpdk_strerror(err: c_int) -> *const c_char;
    fn mk_dpdk_port_open(
        name: *const c_char,
        nb_rxd: u16,
        pool_size: u32,
        cache_size: u32,
        mtu: u32,
        promisc: c_int,
        port_out: *mut u16,
        ts_usec: *mut c_int,
        err: *mut c_char,
        errlen: usize,
    ) -> c_int;
    fn mk_dpdk_rx(port: u16, bufs: *mut *mut Mbuf, n: u16) -> u16;
    fn mk_dpdk_mbuf(
        m: *const Mbuf,
        data_len: *mut u32,
        pkt_len: *mut u32,
        nb_segs: *mut u16,
        ts: *mut u64,
        has_ts: *mut c_int,
    ) -> *const u8;
    fn mk_dpdk_copy(m: *const Mbuf, dst: *mut u8, cap: u32) -> u32;
    fn mk_dpdk_free(bufs: *mut *mut Mbuf, n: u16);
    fn mk_dpdk_stats(
        port: u16,
        ipackets: *mut u64,
        imissed: *mut u64,
        ierrors: *mut u64,
        nombuf: *mut u64,
    ) -> c_int;
    fn mk_dpdk_close(port: u16);
}

/// EAL can be initialised once per process.
static EAL_UP: AtomicBool = AtomicBool::new(false);

fn strerror(e: c_int) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local NUL-terminated
    // string, valid at least until the next call on this thread.
    unsafe { std::ffi::CStr::from_ptr(mk_dpdk_strerror(e)) }
        .to_string_lossy()
        .into_owned()
}

/// Initialises DPDK's EAL with `params` (as on a command line, without the program name).
pub fn init_eal(params: &[String]) -> Result<(), SourceError> {
    if EAL_UP.swap(true, Ordering::SeqCst) {
        return Err(SourceError::Dpdk(
            "the EAL is already initialised in this process".to_string(),
        ));
    }
    let mut owned = vec![CString::new("meerkat").map_err(|e| SourceError::Dpdk(e.to_string()))?];
    for p in params {
        owned.push(CString::new(p.as_str()).map_err(|_| {
            SourceError::Dpdk(format!("dpdk.eal-params `{p}` contains a NUL byte"))
        })?);
    }
    // EAL keeps pointers into argv (and may permute it), so the strings live for the
    // rest of the process.
    let owned: &'static mut [CString] = Vec::leak(owned);
    let argv: &'static mut [*mut c_char] = Vec::leak(
        owned
            .iter()
            .map(|s| s.as_ptr() as *mut c_char)
            .chain(std::iter::once(std::ptr::null_mut()))
            .collect(),
    );
    // SAFETY: argc matches the non-NULL entries of a NULL-terminated argv of valid
    // C strings that outlive the process' use of them (leaked above).
    let r = unsafe { mk_dpdk_init((argv.len() - 1) as c_int, argv.as_mut_ptr()) };
    if r < 0 {
        return Err(SourceError::Dpdk(format!(
            "EAL initialisation with `{}` failed: {}",
            params.join(" "),
            strerror(-r)
        )));
    }
    Ok(())
}

/// Largest burst asked of the port.
const MAX_BURST: usize = 512;

/// One started DPDK port with one RX queue.
pub struct DpdkPort {
    port: u16,
    name: String,
    burst: u16,
    /// The port stamps packets in µs since the epoch (net_pcap).
    ts_usec: bool,
    bufs: Box<[*mut Mbuf; MAX_BURST]>,
    /// Scratch for the rare multi-segment packet.
    scratch: Vec<u8>,
    last: (u64, u64, u64),
    /// The BPF filter, run on each packet of a burst before it is handed on.
    filter: Option<crate::bpf::Program>,
    /// Packets the filter refused since the last `stats`.
    filtered: u64,
}

// SAFETY: the port's queue is polled by one thread at a time (the thread the source is
// moved to); mbuf pointers never leave it.
unsafe impl Send for DpdkPort {}

impl std::fmt::Debug for DpdkPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpdkPort")
            .field("port", &self.port)
            .field("name", &self.name)
            .finish()
    }
}

fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl DpdkPort {
    /// Initialises the EAL with `eal_params` and starts port `cfg.interface`, with the
    /// BPF filter `filter` (pcap syntax or `tcpdump -dd` output).
    pub fn open(
        eal_params: &[String],
        cfg: &DpdkIface,
        filter: Option<&str>,
    ) -> Result<DpdkPort, SourceError> {
        let filter = filter
            .map(|f| crate::bpf::user_space(f, LINKTYPE_ETHERNET))
            .transpose()
            .map_err(|e| SourceError::Config(e.to_string()))?;
        init_eal(eal_params)?;
        let name = CString::new(cfg.interface.as_str()).map_err(|_| {
            SourceError::Config(format!("dpdk port name `{}` contains a NUL", cfg.interface))
        })?;
        let mut port = 0u16;
        let mut ts_usec: c_int = 0;
        let mut err = [0 as c_char; 256];
        // SAFETY: all pointers are to locals that outlive the call; `err` has the length
        // we pass and the shim NUL-terminates what it writes (snprintf).
        let r = unsafe {
            mk_dpdk_port_open(
                name.as_ptr(),
                cfg.rx_descriptors,
                cfg.mempool_size,
                cfg.mempool_cache_size,
                cfg.mtu,
                c_int::from(cfg.promisc),
                &mut port,
                &mut ts_usec,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if r != 0 {
            // SAFETY: the shim wrote a NUL-terminated message into `err`.
            let msg = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy();
            return Err(SourceError::Dpdk(msg.into_owned()));
        }
        tracing::info!(
            port = cfg.interface,
            id = port,
            rx_descriptors = cfg.rx_descriptors,
            mempool = cfg.mempool_size,
            pcap_timestamps = ts_usec != 0,
            "DPDK port started"
        );
        Ok(DpdkPort {
            port,
            name: cfg.interface.clone(),
            burst: cfg.burst_size.min(MAX_BURST as u16),
            ts_usec: ts_usec != 0,
            bufs: Box::new([std::ptr::null_mut(); MAX_BURST]),
            scratch: vec![0; 64 * 1024],
            last: (0, 0, 0),
            filter,
            filtered: 0,
        })
    }
}

impl Drop for DpdkPort {
    fn drop(&mut self) {
        // SAFETY: stops and closes the port we started; no mbuf of it is held.
        unsafe { mk_dpdk_close(self.port) };
    }
}

impl Source for DpdkPort {
    fn link_type(&self) -> u16 {
        LINKTYPE_ETHERNET
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn recv<F: FnMut(RxPacket<'_>)>(
        &mut self,
        timeout: Duration,
        mut f: F,
    ) -> Result<usize, SourceError> {
        let deadline = std::time::Instant::now() + timeout;
        let mut idle_spins = 0u32;
        loop {
            // SAFETY: `bufs` has room for MAX_BURST >= burst pointers; the port and queue
            // 0 were set up by open and are polled by this thread only.
            let n = unsafe { mk_dpdk_rx(self.port, self.bufs.as_mut_ptr(), self.burst) };
            if n > 0 {
                let now = wall_clock_ns();
                let filtered_before = self.filtered;
                for &m in &self.bufs[..usize::from(n)] {
                    let (mut dlen, mut plen, mut segs, mut ts, mut has_ts) =
                        (0u32, 0u32, 0u16, 0u64, 0);
                    // SAFETY: `m` is an mbuf the port just handed us, not yet freed.
                    let ptr = unsafe {
                        mk_dpdk_mbuf(m, &mut dlen, &mut plen, &mut segs, &mut ts, &mut has_ts)
                    };
                    let ts_ns = if self.ts_usec && has_ts != 0 {
                        ts.saturating_mul(1000)
                    } else {
                        now
                    };
                    if segs <= 1 {
                        // SAFETY: the first segment holds data_len bytes at ptr, valid until
                        // the mbuf is freed below (after `f` returns).
                        let data = unsafe { std::slice::from_raw_parts(ptr, dlen as usize) };
                        if let Some(p) = &self.filter
                            && !p.matches(data, plen)
                        {
                            self.filtered += 1;
                            continue;
                        }
                        f(RxPacket {
                            ts_ns,
                            origlen: plen,
                            data,
                        });
                    } else {
                        // SAFETY: copies at most scratch.len() bytes of the mbuf chain into
                        // our buffer.
                        let got = unsafe {
                            mk_dpdk_copy(m, self.scratch.as_mut_ptr(), self.scratch.len() as u32)
                        } as usize;
                        let data = &self.scratch[..got];
                        if let Some(p) = &self.filter
                            && !p.matches(data, plen)
                        {
                            self.filtered += 1;
                            continue;
                        }
                        f(RxPacket {
                            ts_ns,
                            origlen: plen,
                            data,
                        });
                    }
                }
                // SAFETY: frees exactly the n mbufs received; none is referenced after.
                unsafe { mk_dpdk_free(self.bufs.as_mut_ptr(), n) };
                // Packets handed on (the filter's refusals are counted apart).
                return Ok(usize::from(n) - (self.filtered - filtered_before) as usize);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(0);
            }
            // A poll-mode driver has nothing to sleep on: spin briefly for latency, then
            // back off so an idle port does not burn a core.
            idle_spins += 1;
            if idle_spins < 1000 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    fn stats(&mut self) -> Result<SourceStats, SourceError> {
        // ipackets is read too (the shim's signature), but packets are counted as received.
        let (mut ip, mut miss, mut err, mut nombuf) = (0u64, 0u64, 0u64, 0u64);
        // SAFETY: writes four u64 we own.
        let r = unsafe { mk_dpdk_stats(self.port, &mut ip, &mut miss, &mut err, &mut nombuf) };
        if r != 0 {
            return Err(SourceError::Dpdk(format!(
                "rte_eth_stats_get({}): {}",
                self.name,
                strerror(-r)
            )));
        }
        let _ = ip;
        let (lmiss, lerr, lnombuf) = self.last;
        self.last = (miss, err, nombuf);
        Ok(SourceStats {
            imissed: miss.saturating_sub(lmiss),
            ierrors: err.saturating_sub(lerr),
            nombuf: nombuf.saturating_sub(lnombuf),
            filtered: std::mem::take(&mut self.filtered),
            ..Default::default()
        })
    }
}
