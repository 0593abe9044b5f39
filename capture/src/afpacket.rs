//! AF_PACKET live capture through a TPACKET_V3 memory-mapped RX ring.
//!
//! The kernel writes packets into a ring of `block-size` blocks shared with us; it hands a
//! block over when it is full or `block-timeout` ms after its first packet, by setting the
//! block's status word to `TP_STATUS_USER`. We read every packet of the block in place and
//! give the block back (`TP_STATUS_KERNEL`). While no block is ready we sleep in `poll(2)`,
//! so a busy ring costs no syscall per packet and an idle one no CPU.
//!
//! Several sockets on one interface join a fanout group (`PACKET_FANOUT`) and the kernel
//! spreads packets over them (by flow hash for `cluster_flow`), one capture thread each.
//! When the ring is full the kernel drops and counts; `PACKET_STATISTICS` reads (and
//! resets) those counts, which [`AfPacket::stats`] accumulates.
//!
//! Setup order matters: the socket is created with protocol 0 (it receives nothing yet),
//! then the version, filter and ring are set, and only `bind` with `ETH_P_ALL` starts the
//! flow of packets, so no packet bypasses the filter.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use meerkat_config::{AfPacketIface, ClusterType};

use crate::bpf;
use crate::live::{RxPacket, Source, SourceError, SourceStats};
use meerkat_wire::{LINKTYPE_ETHERNET, LINKTYPE_RAW};

/// Bytes reserved in front of each packet in a block (TPACKET3_HDRLEN, aligned) plus an
/// Ethernet header and a VLAN tag: with the MTU it sizes a "frame" of `ring-size`.
const FRAME_OVERHEAD: usize = libc::TPACKET3_HDRLEN + 14 + 4;
const TPACKET_ALIGNMENT: usize = 16;
/// Largest ring we set up (the kernel refuses much more anyway).
const MAX_RING_BYTES: u64 = 1 << 34;

// Offsets in `struct tpacket_block_desc` / `tpacket_hdr_v1` (linux/if_packet.h).
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST_PKT: usize = 16;
// Offsets in `struct tpacket3_hdr`.
const PKT_NEXT: usize = 0;
const PKT_SEC: usize = 4;
const PKT_NSEC: usize = 8;
const PKT_SNAPLEN: usize = 12;
const PKT_LEN: usize = 16;
const PKT_STATUS: usize = 20;
const PKT_MAC: usize = 24;
const PKT_VLAN_TCI: usize = 32;
const PKT_VLAN_TPID: usize = 36;

fn align_up(n: usize, a: usize) -> usize {
    n.div_ceil(a) * a
}

fn os_err(iface: &str, what: &'static str) -> SourceError {
    SourceError::Os {
        iface: iface.to_string(),
        what,
        source: std::io::Error::last_os_error(),
    }
}

/// The geometry of a TPACKET_V3 ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingGeometry {
    pub block_size: usize,
    pub block_nr: usize,
    pub frame_size: usize,
    pub frame_nr: usize,
}

impl RingGeometry {
    /// Blocks enough for `frames` frames of an `mtu`-byte packet each.
    pub fn new(frames: u32, block_size: u64, mtu: usize, iface: &str) -> Result<Self, SourceError> {
        let frame_size = align_up(FRAME_OVERHEAD + mtu, TPACKET_ALIGNMENT);
        let block_size = usize::try_from(block_size).unwrap_or(usize::MAX);
        if block_size < frame_size {
            return Err(SourceError::Config(format!(
                "af-packet.block-size {block_size} of {iface} is smaller than one frame ({frame_size} bytes for MTU {mtu})"
            )));
        }
        let per_block = block_size / frame_size;
        let block_nr = (frames as usize).div_ceil(per_block).max(2);
        if (block_nr as u64).saturating_mul(block_size as u64) > MAX_RING_BYTES {
            return Err(SourceError::Config(format!(
                "af-packet.ring-size {frames} of {iface} makes a ring over {MAX_RING_BYTES} bytes"
            )));
        }
        Ok(RingGeometry {
            block_size,
            block_nr,
            frame_size,
            frame_nr: block_nr * per_block,
        })
    }

    pub fn bytes(&self) -> usize {
        self.block_size * self.block_nr
    }
}

/// An interface's facts needed before capturing.
fn ifreq(fd: i32, iface: &str, request: libc::c_ulong) -> Result<libc::ifreq, SourceError> {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(iface.as_bytes()) {
        *dst = *src as libc::c_char;
    }
    // SAFETY: the request is one of SIOCGIFHWADDR/SIOCGIFMTU, which read ifr_name and write
    // into the ifreq we own; the name is NUL-terminated (at most 15 bytes, checked by
    // config validation and by if_nametoindex before).
    let r = unsafe { libc::ioctl(fd, request as _, &mut req) };
    if r < 0 {
        return Err(os_err(iface, "ioctl on the interface"));
    }
    Ok(req)
}

fn setsockopt<T>(
    fd: i32,
    level: i32,
    name: i32,
    value: &T,
    iface: &str,
    what: &'static str,
) -> Result<(), SourceError> {
    // SAFETY: `value` points to a live T of the size we pass; the kernel copies it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(os_err(iface, what));
    }
    Ok(())
}

/// The memory-mapped ring, unmapped on drop.
struct Ring {
    base: NonNull<u8>,
    len: usize,
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly what mmap returned; nothing borrows the ring once its
        // owner is dropped.
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len);
        }
    }
}

/// One AF_PACKET socket with its RX ring.
pub struct AfPacket {
    // Field order: the ring is unmapped before the socket is closed.
    ring: Ring,
    fd: OwnedFd,
    geometry: RingGeometry,
    /// Next block to read.
    current: usize,
    iface: String,
    ifindex: i32,
    link_type: u16,
    /// Scratch space to put a VLAN tag the kernel took off back into a frame.
    vlan_scratch: Vec<u8>,
    /// Frames with offsets outside their block (never seen from a sane kernel).
    bad_frames: u64,
}

// SAFETY: the ring mapping is owned by this value alone and used by one thread at a time
// (the capture thread the source is moved to).
unsafe impl Send for AfPacket {}

impl std::fmt::Debug for AfPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacket")
            .field("iface", &self.iface)
            .field("geometry", &self.geometry)
            .finish()
    }
}

impl AfPacket {
    /// Opens the `threads` sockets of `cfg.interface`, each with its own ring, joined in
    /// one fanout group when there is more than one.
    pub fn open_group(cfg: &AfPacketIface) -> Result<Vec<AfPacket>, SourceError> {
        let n = cfg.threads();
        let mut socks = Vec::with_capacity(n);
        for _ in 0..n {
            socks.push(AfPacket::open(cfg)?);
        }
        if n > 1 {
            let mode = match cfg.cluster_type {
                ClusterType::ClusterFlow | ClusterType::ClusterRollover => libc::PACKET_FANOUT_HASH,
                ClusterType::ClusterCpu => libc::PACKET_FANOUT_CPU,
                ClusterType::ClusterQm => libc::PACKET_FANOUT_QM,
                ClusterType::ClusterRoundRobin => libc::PACKET_FANOUT_LB,
                ClusterType::ClusterRandom => libc::PACKET_FANOUT_RND,
            };
            let flags = if cfg.defrag && mode == libc::PACKET_FANOUT_HASH {
                libc::PACKET_FANOUT_FLAG_DEFRAG
            } else {
                0
            };
            let arg: libc::c_int = (u32::from(cfg.cluster_id) | ((mode | flags) << 16)) as i32;
            for s in &socks {
                setsockopt(
                    s.fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    libc::PACKET_FANOUT,
                    &arg,
                    &cfg.interface,
                    "join the fanout group (af-packet.cluster-id in use by another program?)",
                )?;
            }
        }
        Ok(socks)
    }

    /// Opens one socket on `cfg.interface` with a TPACKET_V3 ring.
    pub fn open(cfg: &AfPacketIface) -> Result<AfPacket, SourceError> {
        let iface = cfg.interface.as_str();
        let cname = CString::new(iface).map_err(|_| {
            SourceError::Config(format!("interface name `{iface}` contains a NUL byte"))
        })?;
        // SAFETY: cname is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(SourceError::NoInterface(iface.to_string()));
        }
        // SAFETY: plain socket(2) call; the returned descriptor is owned below.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EPERM) {
                return Err(SourceError::Permission(iface.to_string()));
            }
            return Err(SourceError::Os {
                iface: iface.to_string(),
                what: "create the AF_PACKET socket",
                source: e,
            });
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let sfd = fd.as_raw_fd();

        let hw = ifreq(sfd, iface, libc::SIOCGIFHWADDR)?;
        // SAFETY: SIOCGIFHWADDR filled the ifru_hwaddr member.
        let arphrd = unsafe { hw.ifr_ifru.ifru_hwaddr.sa_family };
        let link_type = match arphrd {
            libc::ARPHRD_ETHER | libc::ARPHRD_LOOPBACK => LINKTYPE_ETHERNET,
            libc::ARPHRD_NONE | libc::ARPHRD_TUNNEL | libc::ARPHRD_TUNNEL6 | libc::ARPHRD_PPP => {
                LINKTYPE_RAW
            }
            other => return Err(SourceError::LinkType(iface.to_string(), other)),
        };
        let mtu_req = ifreq(sfd, iface, libc::SIOCGIFMTU)?;
        // SAFETY: SIOCGIFMTU filled the ifru_mtu member.
        let mtu = unsafe { mtu_req.ifr_ifru.ifru_mtu }.max(68) as usize;
        let geometry = RingGeometry::new(cfg.ring_size, cfg.block_size.bytes(), mtu, iface)?;

        let version: libc::c_int = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
        setsockopt(
            sfd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            &version,
            iface,
            "select TPACKET_V3",
        )?;
        if let Some(text) = &cfg.bpf_filter {
            let prog =
                bpf::compile(text, link_type).map_err(|e| SourceError::Config(e.to_string()))?;
            let mut insns: Vec<libc::sock_filter> = prog
                .iter()
                .map(|i| libc::sock_filter {
                    code: i.code,
                    jt: i.jt,
                    jf: i.jf,
                    k: i.k,
                })
                .collect();
            let fprog = libc::sock_fprog {
                len: insns.len() as u16,
                filter: insns.as_mut_ptr(),
            };
            setsockopt(
                sfd,
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                &fprog,
                iface,
                "attach the BPF filter (the kernel refused the program)",
            )?;
        }
        let req = libc::tpacket_req3 {
            tp_block_size: geometry.block_size as u32,
            tp_block_nr: geometry.block_nr as u32,
            tp_frame_size: geometry.frame_size as u32,
            tp_frame_nr: geometry.frame_nr as u32,
            tp_retire_blk_tov: cfg.block_timeout,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(
            sfd,
            libc::SOL_PACKET,
            libc::PACKET_RX_RING,
            &req,
            iface,
            "set up the RX ring",
        )?;
        // SAFETY: maps the ring the kernel just allocated for this socket, with the size
        // it was given; the result is checked against MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                geometry.bytes(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                sfd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(os_err(iface, "map the RX ring"));
        }
        let ring = Ring {
            base: NonNull::new(base as *mut u8).ok_or_else(|| os_err(iface, "map the RX ring"))?,
            len: geometry.bytes(),
        };

        // SAFETY: sockaddr_ll is plain old data; all-zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: binds our socket to a sockaddr_ll we own, with its size.
        let r = unsafe {
            libc::bind(
                sfd,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(os_err(iface, "bind to the interface"));
        }
        if !cfg.disable_promisc {
            // Membership is per socket and ends when the socket closes, so the interface
            // goes back to its own promiscuity setting after us.
            let mreq = libc::packet_mreq {
                mr_ifindex: ifindex as i32,
                mr_type: libc::PACKET_MR_PROMISC as u16,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            setsockopt(
                sfd,
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                &mreq,
                iface,
                "enable promiscuous mode",
            )?;
        }
        let mut s = AfPacket {
            ring,
            fd,
            geometry,
            current: 0,
            iface: iface.to_string(),
            ifindex: ifindex as i32,
            link_type,
            vlan_scratch: vec![0; geometry.block_size + 4],
            bad_frames: 0,
        };
        // Counts since the socket was created are ours; start from zero anyway.
        let _ = s.read_kernel_stats();
        Ok(s)
    }

    pub fn geometry(&self) -> RingGeometry {
        self.geometry
    }

    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    fn block_ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: i < block_nr, so the offset stays inside the mapping.
        unsafe { self.ring.base.as_ptr().add(i * self.geometry.block_size) }
    }

    fn block_status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the status word is a 4-aligned u32 inside block i, shared with the
        // kernel, which is exactly what an atomic models.
        unsafe { &*(self.block_ptr(i).add(BLOCK_STATUS) as *const AtomicU32) }
    }

    fn read_kernel_stats(&mut self) -> Result<(u64, u64), SourceError> {
        // SAFETY: tpacket_stats_v3 is plain old data.
        let mut st: libc::tpacket_stats_v3 = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: the kernel writes at most `len` bytes into `st`, which we own.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut st as *mut libc::tpacket_stats_v3 as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            return Err(os_err(&self.iface, "read PACKET_STATISTICS"));
        }
        // tp_packets counts every packet that reached the socket, dropped ones included.
        Ok((u64::from(st.tp_packets), u64::from(st.tp_drops)))
    }

    /// Reads the packets of one ready block, then gives it back to the kernel.
    fn read_block<F: FnMut(RxPacket<'_>)>(&mut self, f: &mut F) -> usize {
        let bs = self.geometry.block_size;
        // SAFETY: the block is ours (status TP_STATUS_USER, acquire-loaded by the caller)
        // until we store TP_STATUS_KERNEL below; the kernel does not write it meanwhile.
        let block: &[u8] = unsafe { std::slice::from_raw_parts(self.block_ptr(self.current), bs) };
        let rd = |at: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(block.get(at..at + 4)?.try_into().ok()?))
        };
        let rd16 = |at: usize| -> Option<u16> {
            Some(u16::from_ne_bytes(block.get(at..at + 2)?.try_into().ok()?))
        };
        let num = rd(BLOCK_NUM_PKTS).unwrap_or(0) as usize;
        let mut off = rd(BLOCK_FIRST_PKT).unwrap_or(0) as usize;
        let mut n = 0;
        for _ in 0..num {
            let hdr = (|| {
                Some((
                    rd(off + PKT_NEXT)? as usize,
                    rd(off + PKT_SEC)?,
                    rd(off + PKT_NSEC)?,
                    rd(off + PKT_SNAPLEN)? as usize,
                    rd(off + PKT_LEN)?,
                    rd(off + PKT_STATUS)?,
                    rd16(off + PKT_MAC)? as usize,
                    rd(off + PKT_VLAN_TCI)?,
                    rd16(off + PKT_VLAN_TPID)?,
                ))
            })();
            let Some((next, sec, nsec, snap, len, status, mac, tci, tpid)) = hdr else {
                self.bad_frames += 1;
                break;
            };
            let Some(data) = block.get(off + mac..off + mac + snap) else {
                self.bad_frames += 1;
                break;
            };
            let ts_ns = u64::from(sec) * 1_000_000_000 + u64::from(nsec);
            let vlan = status & libc::TP_STATUS_VLAN_VALID != 0
                && self.link_type == LINKTYPE_ETHERNET
                && data.len() >= 12;
            if vlan {
                // The kernel (or the NIC) took the 802.1Q tag off; put it back so the
                // workers see the frame as it was on the wire.
                let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 && tpid != 0 {
                    tpid
                } else {
                    0x8100
                };
                let total = data.len() + 4;
                if let Some(buf) = self.vlan_scratch.get_mut(..total) {
                    buf[..12].copy_from_slice(&data[..12]);
                    buf[12..14].copy_from_slice(&tpid.to_be_bytes());
                    buf[14..16].copy_from_slice(&(tci as u16).to_be_bytes());
                    buf[16..].copy_from_slice(&data[12..]);
                    f(RxPacket {
                        ts_ns,
                        origlen: len + 4,
                        data: &self.vlan_scratch[..total],
                    });
                }
            } else {
                f(RxPacket {
                    ts_ns,
                    origlen: len,
                    data,
                });
            }
            n += 1;
            if next == 0 {
                break;
            }
            off += next;
        }
        self.block_status(self.current)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.current = (self.current + 1) % self.geometry.block_nr;
        n
    }
}

impl Source for AfPacket {
    fn link_type(&self) -> u16 {
        self.link_type
    }

    fn name(&self) -> &str {
        &self.iface
    }

    fn recv<F: FnMut(RxPacket<'_>)>(
        &mut self,
        timeout: Duration,
        mut f: F,
    ) -> Result<usize, SourceError> {
        let ready = |s: &Self| {
            s.block_status(s.current).load(Ordering::Acquire) & libc::TP_STATUS_USER != 0
        };
        if !ready(self) {
            if timeout.is_zero() {
                return Ok(0);
            }
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN | libc::POLLERR,
                revents: 0,
            };
            // SAFETY: one pollfd we own.
            let r = unsafe { libc::poll(&mut pfd, 1, timeout.as_millis().min(60_000) as i32) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(SourceError::Os {
                        iface: self.iface.clone(),
                        what: "poll the socket",
                        source: e,
                    });
                }
            }
            if pfd.revents & libc::POLLERR != 0 {
                // The interface went away or the socket broke: report, do not spin.
                let mut err: libc::c_int = 0;
                let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                // SAFETY: reads SO_ERROR into an int we own.
                unsafe {
                    libc::getsockopt(
                        self.fd.as_raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_ERROR,
                        &mut err as *mut libc::c_int as *mut libc::c_void,
                        &mut len,
                    );
                }
                if err != 0 {
                    return Err(SourceError::Os {
                        iface: self.iface.clone(),
                        what: "receive",
                        source: std::io::Error::from_raw_os_error(err),
                    });
                }
            }
            if !ready(self) {
                return Ok(0);
            }
        }
        // Up to a whole ring of blocks per call keeps the loop tight during bursts while
        // still returning regularly to refresh counters.
        let mut n = 0;
        for _ in 0..self.geometry.block_nr {
            if !ready(self) {
                break;
            }
            n += self.read_block(&mut f);
        }
        Ok(n)
    }

    fn stats(&mut self) -> Result<SourceStats, SourceError> {
        let (packets, drops) = self.read_kernel_stats()?;
        let bad = std::mem::take(&mut self.bad_frames);
        Ok(SourceStats {
            kernel_packets: packets,
            kernel_drops: drops,
            errors: bad,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_follows_ring_size_in_frames() {
        let g = RingGeometry::new(1024, 32768, 1500, "x").unwrap();
        // (TPACKET3_HDRLEN 68 + 18 + 1500) aligned to 16 = 1600 bytes; 20 per block.
        assert_eq!(g.frame_size, 1600);
        assert_eq!(g.block_nr, 52);
        assert_eq!(g.frame_nr, 1040);
        let small = RingGeometry::new(1, 4096, 1500, "x").unwrap();
        assert_eq!(small.block_nr, 2);
        let e = RingGeometry::new(1024, 4096, 9000, "veth1").unwrap_err();
        assert!(e.to_string().contains("block-size 4096 of veth1"), "{e}");
    }

    #[test]
    fn missing_interface_is_a_clear_error() {
        let cfg = AfPacketIface {
            interface: "nosuchif0".to_string(),
            ..Default::default()
        };
        let e = AfPacket::open(&cfg).unwrap_err();
        assert!(e.to_string().contains("nosuchif0"), "{e}");
    }
}
