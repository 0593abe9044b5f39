//! libpcap, loaded at run time.
//!
//! Meerkat compiles BPF filter expressions (`not host 10.0.0.5`) with libpcap's own
//! compiler and can capture through libpcap (`--pcap`), but the build needs no
//! libpcap-dev: the shared library every sensor has (`libpcap.so.0.8` on Debian,
//! `libpcap.so.1` elsewhere) is opened with `dlopen` the first time it is needed, and the
//! few functions used are looked up by name. Without the library, whatever needs it fails
//! with [`LibpcapError::Missing`], which says what to install; everything else works.
//!
//! The binding covers only libpcap's stable C ABI (the functions and structs of
//! `pcap/pcap.h` and `pcap/bpf.h` that have not changed since libpcap 1.0).

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::{Mutex, OnceLock};

/// Library names tried, in order.
pub const LIBRARY_NAMES: [&str; 3] = ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so"];

/// libpcap's `PCAP_NETMASK_UNKNOWN`: `ip broadcast` cannot be compiled with it.
pub const NETMASK_UNKNOWN: u32 = 0xffff_ffff;
/// `PCAP_ERRBUF_SIZE`.
pub const ERRBUF_SIZE: usize = 256;

/// Errors of the libpcap binding.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum LibpcapError {
    #[error(
        "libpcap is not installed (tried {}); install it (Debian: apt-get install libpcap0.8)",
        LIBRARY_NAMES.join(", ")
    )]
    Missing,
    #[error("{library} lacks the function {symbol}")]
    Symbol {
        library: &'static str,
        symbol: &'static str,
    },
}

/// Opaque `pcap_t`.
#[repr(C)]
#[derive(Debug)]
pub struct PcapT {
    _private: [u8; 0],
}

/// `struct bpf_insn`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BpfInsn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// `struct bpf_program`.
#[repr(C)]
#[derive(Debug)]
pub struct BpfProgram {
    pub bf_len: c_uint,
    pub bf_insns: *mut BpfInsn,
}

/// `struct pcap_pkthdr` (Linux: `struct timeval` of two longs).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PktHdr {
    pub ts: libc::timeval,
    pub caplen: u32,
    pub len: u32,
}

/// `struct pcap_stat`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PcapStat {
    pub ps_recv: c_uint,
    pub ps_drop: c_uint,
    pub ps_ifdrop: c_uint,
}

/// The functions Meerkat uses, resolved from the loaded library.
#[derive(Debug)]
pub struct Libpcap {
    pub name: &'static str,
    pub open_dead: unsafe extern "C" fn(c_int, c_int) -> *mut PcapT,
    pub compile:
        unsafe extern "C" fn(*mut PcapT, *mut BpfProgram, *const c_char, c_int, u32) -> c_int,
    pub freecode: unsafe extern "C" fn(*mut BpfProgram),
    pub geterr: unsafe extern "C" fn(*mut PcapT) -> *const c_char,
    pub close: unsafe extern "C" fn(*mut PcapT),
    pub lib_version: unsafe extern "C" fn() -> *const c_char,
    pub offline_filter: unsafe extern "C" fn(*const BpfProgram, *const PktHdr, *const u8) -> c_int,
    pub create: unsafe extern "C" fn(*const c_char, *mut c_char) -> *mut PcapT,
    pub set_snaplen: unsafe extern "C" fn(*mut PcapT, c_int) -> c_int,
    pub set_promisc: unsafe extern "C" fn(*mut PcapT, c_int) -> c_int,
    pub set_timeout: unsafe extern "C" fn(*mut PcapT, c_int) -> c_int,
    pub set_buffer_size: unsafe extern "C" fn(*mut PcapT, c_int) -> c_int,
    pub set_immediate_mode: unsafe extern "C" fn(*mut PcapT, c_int) -> c_int,
    pub activate: unsafe extern "C" fn(*mut PcapT) -> c_int,
    pub setfilter: unsafe extern "C" fn(*mut PcapT, *mut BpfProgram) -> c_int,
    pub setnonblock: unsafe extern "C" fn(*mut PcapT, c_int, *mut c_char) -> c_int,
    pub get_selectable_fd: unsafe extern "C" fn(*mut PcapT) -> c_int,
    pub next_ex: unsafe extern "C" fn(*mut PcapT, *mut *mut PktHdr, *mut *const u8) -> c_int,
    pub stats: unsafe extern "C" fn(*mut PcapT, *mut PcapStat) -> c_int,
    pub datalink: unsafe extern "C" fn(*mut PcapT) -> c_int,
    pub statustostr: unsafe extern "C" fn(c_int) -> *const c_char,
}

// SAFETY: the struct holds only function pointers into a library that stays loaded for
// the life of the process (it is never dlclose'd).
unsafe impl Send for Libpcap {}
// SAFETY: as above; calling the functions is what needs care, not sharing the pointers.
unsafe impl Sync for Libpcap {}

static LIB: OnceLock<Result<Libpcap, LibpcapError>> = OnceLock::new();
/// libpcap's compiler kept global state before 1.8; calls are serialised.
static COMPILE_LOCK: Mutex<()> = Mutex::new(());

/// The loaded library (loaded on the first call).
pub fn get() -> Result<&'static Libpcap, LibpcapError> {
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Whether libpcap can be loaded here (tests that need it skip without it).
pub fn available() -> bool {
    get().is_ok()
}

fn load() -> Result<Libpcap, LibpcapError> {
    for name in LIBRARY_NAMES {
        let Ok(cname) = CString::new(name) else {
            continue;
        };
        // SAFETY: dlopen of a NUL-terminated name; the handle is kept for the process'
        // lifetime (never closed), so resolved functions stay valid.
        let handle = unsafe { libc::dlopen(cname.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            continue;
        }
        return resolve(handle, name);
    }
    Err(LibpcapError::Missing)
}

// The transmutes' target is the type of the field each result is assigned to.
#[allow(clippy::missing_transmute_annotations)]
fn resolve(handle: *mut c_void, library: &'static str) -> Result<Libpcap, LibpcapError> {
    macro_rules! sym {
        ($name:literal) => {{
            let cname = concat!($name, "\0");
            // SAFETY: dlsym on a live handle with a NUL-terminated name.
            let p = unsafe { libc::dlsym(handle, cname.as_ptr() as *const c_char) };
            if p.is_null() {
                return Err(LibpcapError::Symbol {
                    library,
                    symbol: $name,
                });
            }
            // SAFETY: the symbol is the libpcap function of that name, whose C
            // signature is the one of the field this is assigned to (pcap/pcap.h).
            unsafe { std::mem::transmute::<*mut c_void, _>(p) }
        }};
    }
    Ok(Libpcap {
        name: library,
        open_dead: sym!("pcap_open_dead"),
        compile: sym!("pcap_compile"),
        freecode: sym!("pcap_freecode"),
        geterr: sym!("pcap_geterr"),
        close: sym!("pcap_close"),
        lib_version: sym!("pcap_lib_version"),
        offline_filter: sym!("pcap_offline_filter"),
        create: sym!("pcap_create"),
        set_snaplen: sym!("pcap_set_snaplen"),
        set_promisc: sym!("pcap_set_promisc"),
        set_timeout: sym!("pcap_set_timeout"),
        set_buffer_size: sym!("pcap_set_buffer_size"),
        set_immediate_mode: sym!("pcap_set_immediate_mode"),
        activate: sym!("pcap_activate"),
        setfilter: sym!("pcap_setfilter"),
        setnonblock: sym!("pcap_setnonblock"),
        get_selectable_fd: sym!("pcap_get_selectable_fd"),
        next_ex: sym!("pcap_next_ex"),
        stats: sym!("pcap_stats"),
        datalink: sym!("pcap_datalink"),
        statustostr: sym!("pcap_statustostr"),
    })
}

/// A C string from libpcap as an owned string (empty for NULL).
fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: libpcap returns NUL-terminated strings (error buffers, version text).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

impl Libpcap {
    /// libpcap's version line (`libpcap version 1.10.3 (with TPACKET_V3)`).
    pub fn version(&self) -> String {
        // SAFETY: returns a pointer to a static string.
        c_str(unsafe { (self.lib_version)() })
    }

    /// The text of an activation status (`pcap_statustostr`).
    pub fn status_text(&self, status: c_int) -> String {
        // SAFETY: returns a static string or a thread-local buffer, copied at once.
        c_str(unsafe { (self.statustostr)(status) })
    }
}

/// The pcap DLT value of a pcap file LINKTYPE (they differ only for raw IP on Linux,
/// where LINKTYPE_RAW 101 is DLT_RAW 12).
pub fn dlt_of_linktype(link_type: u16) -> c_int {
    match link_type {
        101 => 12,
        other => c_int::from(other),
    }
}

/// Compiles `expr` for packets of `link_type` (a pcap LINKTYPE) with libpcap's optimiser
/// on, as tcpdump does. `Err` holds libpcap's message.
pub fn compile_on_dead(
    lib: &Libpcap,
    expr: &str,
    link_type: u16,
    snaplen: u32,
) -> Result<Vec<BpfInsn>, String> {
    let cexpr = CString::new(expr).map_err(|_| "the expression contains a NUL byte".to_string())?;
    let _guard = COMPILE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let snap = c_int::try_from(snaplen).unwrap_or(c_int::MAX);
    // SAFETY: pcap_open_dead allocates a handle we close below.
    let p = unsafe { (lib.open_dead)(dlt_of_linktype(link_type), snap) };
    if p.is_null() {
        return Err("pcap_open_dead failed".to_string());
    }
    let mut prog = BpfProgram {
        bf_len: 0,
        bf_insns: std::ptr::null_mut(),
    };
    // SAFETY: p is a live handle, prog a struct we own, cexpr NUL-terminated; on success
    // libpcap fills prog with bf_len instructions it allocated, freed by pcap_freecode.
    let r = unsafe { (lib.compile)(p, &mut prog, cexpr.as_ptr(), 1, NETMASK_UNKNOWN) };
    let out = if r != 0 {
        // SAFETY: the handle's error buffer, NUL-terminated, read before the close.
        Err(c_str(unsafe { (lib.geterr)(p) }))
    } else {
        let insns = if prog.bf_insns.is_null() {
            Vec::new()
        } else {
            // SAFETY: libpcap allocated bf_len instructions at bf_insns.
            unsafe { std::slice::from_raw_parts(prog.bf_insns, prog.bf_len as usize) }.to_vec()
        };
        // SAFETY: frees what pcap_compile allocated, once.
        unsafe { (lib.freecode)(&mut prog) };
        Ok(insns)
    };
    // SAFETY: closes the handle opened above; nothing refers to it after.
    unsafe { (lib.close)(p) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_with_the_system_libpcap() {
        let Ok(lib) = get() else {
            eprintln!("skipping compiles_with_the_system_libpcap: libpcap is not installed");
            return;
        };
        assert!(lib.version().contains("libpcap"), "{}", lib.version());
        // `tcpdump -dd ip` on Ethernet: ldh [12]; jeq #0x800; ret #snap; ret #0.
        let p = compile_on_dead(lib, "ip", 1, 262_144).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].code, p[0].k), (0x28, 12));
        assert_eq!((p[1].code, p[1].k), (0x15, 0x800));
        assert_eq!((p[2].code, p[2].k), (0x06, 262_144));
        let e = compile_on_dead(lib, "port 99999", 1, 65535).unwrap_err();
        assert!(e.contains("99999"), "{e}");
        assert!(compile_on_dead(lib, "a\0b", 1, 65535).is_err());
    }
}
