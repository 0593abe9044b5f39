//! Puts frames on the wire of an interface as fast as the kernel takes them: an AF_PACKET
//! socket and `sendmmsg(2)`, a batch of frames per system call.
//!
//! This is the traffic source of the live-capture tests, the micro-burst harness and the
//! capture-rate benchmark (on a veth pair in a network namespace they create). It is not
//! used by the capture role.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::live::SourceError;

/// Frames handed to the kernel per `sendmmsg` call.
pub const BATCH: usize = 1024;

/// What [`Sender::send`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SendStats {
    /// Frames the kernel accepted.
    pub sent: u64,
    /// `sendmmsg` calls.
    pub calls: u64,
    /// Calls that found the socket's buffer full and were repeated.
    pub retries: u64,
}

/// An AF_PACKET socket bound to one interface, for sending.
#[derive(Debug)]
pub struct Sender {
    fd: OwnedFd,
    iface: String,
}

fn os_err(iface: &str, what: &'static str) -> SourceError {
    SourceError::Os {
        iface: iface.to_string(),
        what,
        source: std::io::Error::last_os_error(),
    }
}

impl Sender {
    /// Opens a sending socket on `iface` (in the calling thread's network namespace).
    pub fn open(iface: &str) -> Result<Sender, SourceError> {
        let cname = CString::new(iface)
            .map_err(|_| SourceError::Config(format!("interface name `{iface}` has a NUL")))?;
        // SAFETY: cname is a valid C string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(SourceError::NoInterface(iface.to_string()));
        }
        // SAFETY: plain socket(2); protocol 0 = this socket receives nothing.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(os_err(iface, "create the AF_PACKET socket"));
        }
        // SAFETY: a fresh descriptor that we own from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // Skip the qdisc layer: frames go straight to the driver, as fast as it takes them.
        let one: libc::c_int = 1;
        // SAFETY: passes an int we own, with its size.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_QDISC_BYPASS,
                &one as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        // Room for a whole batch of large frames in the socket buffer.
        let sndbuf: libc::c_int = 16 << 20;
        // SAFETY: as above.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUFFORCE,
                &sndbuf as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        // SAFETY: sockaddr_ll is plain old data.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: binds our socket to an address we own, with its size. Protocol 0 keeps
        // the socket from receiving.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(os_err(iface, "bind the sending socket"));
        }
        Ok(Sender {
            fd,
            iface: iface.to_string(),
        })
    }

    /// Sends every frame, in order, `BATCH` per system call. A frame the interface refuses
    /// (too long for its MTU) is an error naming it.
    pub fn send(&mut self, frames: &[&[u8]]) -> Result<SendStats, SourceError> {
        let mut st = SendStats::default();
        let mut iov: Vec<libc::iovec> = Vec::with_capacity(BATCH);
        // SAFETY: mmsghdr is plain old data; all-zero is valid (no name, no control).
        let mut msgs: Vec<libc::mmsghdr> =
            (0..BATCH).map(|_| unsafe { std::mem::zeroed() }).collect();
        for chunk in frames.chunks(BATCH) {
            iov.clear();
            iov.extend(chunk.iter().map(|f| libc::iovec {
                iov_base: f.as_ptr() as *mut libc::c_void,
                iov_len: f.len(),
            }));
            let mut done = 0;
            while done < chunk.len() {
                for (m, v) in msgs.iter_mut().zip(&mut iov[done..]) {
                    m.msg_hdr.msg_iov = v as *mut libc::iovec;
                    m.msg_hdr.msg_iovlen = 1;
                    m.msg_len = 0;
                }
                let n = chunk.len() - done;
                // SAFETY: msgs[..n] point at iovecs over frames that live for the call.
                let r =
                    unsafe { libc::sendmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
                st.calls += 1;
                if r < 0 {
                    let e = std::io::Error::last_os_error();
                    match e.raw_os_error() {
                        Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) => {
                            st.retries += 1;
                            std::thread::yield_now();
                            continue;
                        }
                        _ => {
                            return Err(SourceError::Os {
                                iface: self.iface.clone(),
                                what: if e.raw_os_error() == Some(libc::EMSGSIZE) {
                                    "send a frame longer than the MTU"
                                } else {
                                    "send"
                                },
                                source: e,
                            });
                        }
                    }
                }
                done += r as usize;
                st.sent += r as u64;
            }
        }
        Ok(st)
    }
}
