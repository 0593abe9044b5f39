//! Hyperscan as the prefilter: a small binding of our own to the system's libhs (5.x),
//! used when the build found it (`cfg(hyperscan)`, see build.rs).
//!
//! Literal patterns are compiled with `hs_compile_lit_multi` in block mode, caseless
//! where the rule says `nocase`, with `HS_FLAG_SINGLEMATCH` so that each pattern is
//! reported once per scan. The database is immutable and shared; each worker scans with
//! its own scratch space (cloned from a prototype made when the database was built).

use std::ffi::{CStr, c_char, c_int, c_uint, c_ulonglong, c_void};
use std::ptr::NonNull;

#[allow(non_camel_case_types)]
mod ffi {
    use super::*;

    #[repr(C)]
    pub struct hs_database_t {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct hs_scratch_t {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct hs_compile_error_t {
        pub message: *mut c_char,
        pub expression: c_int,
    }
    pub type MatchEventHandler = unsafe extern "C" fn(
        id: c_uint,
        from: c_ulonglong,
        to: c_ulonglong,
        flags: c_uint,
        context: *mut c_void,
    ) -> c_int;

    pub const HS_SUCCESS: c_int = 0;
    pub const HS_FLAG_CASELESS: c_uint = 1;
    pub const HS_FLAG_SINGLEMATCH: c_uint = 8;
    pub const HS_MODE_BLOCK: c_uint = 1;

    #[link(name = "hs")]
    unsafe extern "C" {
        pub fn hs_compile_lit_multi(
            expressions: *const *const c_char,
            flags: *const c_uint,
            ids: *const c_uint,
            lens: *const usize,
            elements: c_uint,
            mode: c_uint,
            platform: *const c_void,
            db: *mut *mut hs_database_t,
            error: *mut *mut hs_compile_error_t,
        ) -> c_int;
        pub fn hs_free_compile_error(error: *mut hs_compile_error_t) -> c_int;
        pub fn hs_free_database(db: *mut hs_database_t) -> c_int;
        pub fn hs_alloc_scratch(db: *const hs_database_t, scratch: *mut *mut hs_scratch_t)
        -> c_int;
        pub fn hs_clone_scratch(src: *const hs_scratch_t, dest: *mut *mut hs_scratch_t) -> c_int;
        pub fn hs_free_scratch(scratch: *mut hs_scratch_t) -> c_int;
        pub fn hs_scan(
            db: *const hs_database_t,
            data: *const c_char,
            length: c_uint,
            flags: c_uint,
            scratch: *mut hs_scratch_t,
            on_event: MatchEventHandler,
            context: *mut c_void,
        ) -> c_int;
    }
}

/// Numbers databases so that a scratch space knows which ones it was grown for.
static NEXT_DB: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A compiled Hyperscan database with the rule owners of each pattern id.
#[derive(Debug)]
pub struct HsDb {
    db: NonNull<ffi::hs_database_t>,
    /// Unique number of this database in the process.
    index: usize,
    /// A scratch space big enough for this database, cloned by each worker.
    prototype: NonNull<ffi::hs_scratch_t>,
    owners: Vec<Vec<u32>>,
    /// Length of the longest pattern.
    max_len: usize,
}

// SAFETY: a Hyperscan database is immutable after compilation and may be used by many
// threads at once; the prototype scratch is only read (cloned) after construction.
unsafe impl Send for HsDb {}
// SAFETY: as above.
unsafe impl Sync for HsDb {}

impl Drop for HsDb {
    fn drop(&mut self) {
        // SAFETY: both were allocated by libhs for this value and are freed once.
        unsafe {
            ffi::hs_free_scratch(self.prototype.as_ptr());
            ffi::hs_free_database(self.db.as_ptr());
        }
    }
}

/// A worker's scratch space.
#[derive(Debug, Default)]
pub struct HsScratch {
    s: Option<NonNull<ffi::hs_scratch_t>>,
    /// Databases (by index) the scratch has been grown for: growing is only done once
    /// per database, not per scan.
    ready: Vec<bool>,
}

// SAFETY: a scratch space is used by one thread at a time (the worker that owns it).
unsafe impl Send for HsScratch {}

impl Drop for HsScratch {
    fn drop(&mut self) {
        if let Some(s) = self.s {
            // SAFETY: allocated by libhs for this value, freed once.
            unsafe {
                ffi::hs_free_scratch(s.as_ptr());
            }
        }
    }
}

impl HsScratch {
    /// Grows the scratch for `db` the first time it is used with it.
    fn ensure(&mut self, db: &HsDb) -> Option<NonNull<ffi::hs_scratch_t>> {
        if self.ready.get(db.index).copied().unwrap_or(false) {
            return self.s;
        }
        match self.s {
            None => {
                let mut out: *mut ffi::hs_scratch_t = std::ptr::null_mut();
                // SAFETY: cloning the database's prototype into a fresh scratch.
                let r = unsafe { ffi::hs_clone_scratch(db.prototype.as_ptr(), &mut out) };
                if r != ffi::HS_SUCCESS {
                    return None;
                }
                self.s = NonNull::new(out);
            }
            Some(s) => {
                let mut p = s.as_ptr();
                // SAFETY: growing our scratch for another database; libhs may reallocate
                // and update the pointer.
                let r = unsafe { ffi::hs_alloc_scratch(db.db.as_ptr(), &mut p) };
                if r != ffi::HS_SUCCESS {
                    return None;
                }
                self.s = NonNull::new(p);
            }
        }
        if self.ready.len() <= db.index {
            self.ready.resize(db.index + 1, false);
        }
        self.ready[db.index] = self.s.is_some();
        self.s
    }
}

struct Ctx<'a> {
    owners: &'a [Vec<u32>],
    out: &'a mut Vec<u32>,
}

unsafe extern "C" fn on_match(
    id: c_uint,
    _from: c_ulonglong,
    _to: c_ulonglong,
    _flags: c_uint,
    context: *mut c_void,
) -> c_int {
    // SAFETY: `context` is the `Ctx` passed to hs_scan by `scan`, alive for the call.
    let ctx = unsafe { &mut *(context as *mut Ctx<'_>) };
    if let Some(o) = ctx.owners.get(id as usize) {
        ctx.out.extend_from_slice(o);
    }
    0
}

impl HsDb {
    /// Compiles literal `patterns` (bytes, caseless, owners).
    pub fn build(patterns: &[(Vec<u8>, bool, Vec<u32>)]) -> Result<HsDb, String> {
        let ptrs: Vec<*const c_char> = patterns
            .iter()
            .map(|p| p.0.as_ptr() as *const c_char)
            .collect();
        let lens: Vec<usize> = patterns.iter().map(|p| p.0.len()).collect();
        let flags: Vec<c_uint> = patterns
            .iter()
            .map(|p| ffi::HS_FLAG_SINGLEMATCH | if p.1 { ffi::HS_FLAG_CASELESS } else { 0 })
            .collect();
        let ids: Vec<c_uint> = (0..patterns.len() as c_uint).collect();
        let mut db: *mut ffi::hs_database_t = std::ptr::null_mut();
        let mut err: *mut ffi::hs_compile_error_t = std::ptr::null_mut();
        // SAFETY: the arrays have `patterns.len()` elements and outlive the call; libhs
        // copies what it needs into the database.
        let r = unsafe {
            ffi::hs_compile_lit_multi(
                ptrs.as_ptr(),
                flags.as_ptr(),
                ids.as_ptr(),
                lens.as_ptr(),
                patterns.len() as c_uint,
                ffi::HS_MODE_BLOCK,
                std::ptr::null(),
                &mut db,
                &mut err,
            )
        };
        if r != ffi::HS_SUCCESS {
            let msg = if err.is_null() {
                format!("hyperscan error {r}")
            } else {
                // SAFETY: libhs returned a compile error with a NUL-terminated message;
                // we free it after copying.
                unsafe {
                    let m = CStr::from_ptr((*err).message)
                        .to_string_lossy()
                        .into_owned();
                    ffi::hs_free_compile_error(err);
                    m
                }
            };
            return Err(msg);
        }
        let db = NonNull::new(db).ok_or("hyperscan returned no database")?;
        let mut scratch: *mut ffi::hs_scratch_t = std::ptr::null_mut();
        // SAFETY: allocating a scratch space for the new database.
        let r = unsafe { ffi::hs_alloc_scratch(db.as_ptr(), &mut scratch) };
        let Some(prototype) = NonNull::new(scratch).filter(|_| r == ffi::HS_SUCCESS) else {
            // SAFETY: freeing the database we just compiled.
            unsafe { ffi::hs_free_database(db.as_ptr()) };
            return Err(format!("hyperscan scratch allocation failed ({r})"));
        };
        Ok(HsDb {
            db,
            index: NEXT_DB.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            prototype,
            owners: patterns.iter().map(|p| p.2.clone()).collect(),
            max_len: patterns.iter().map(|p| p.0.len()).max().unwrap_or(0),
        })
    }

    pub fn patterns(&self) -> usize {
        self.owners.len()
    }

    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Appends the owners of every pattern found in `hay`.
    pub fn scan(&self, hay: &[u8], scratch: &mut HsScratch, out: &mut Vec<u32>) {
        let Some(s) = scratch.ensure(self) else {
            return;
        };
        let len = hay.len().min(u32::MAX as usize) as c_uint;
        let mut ctx = Ctx {
            owners: &self.owners,
            out,
        };
        // SAFETY: database and scratch are valid; the data pointer and length describe
        // `hay`; the callback only touches `ctx`, which lives across the call.
        unsafe {
            ffi::hs_scan(
                self.db.as_ptr(),
                hay.as_ptr() as *const c_char,
                len,
                0,
                s.as_ptr(),
                on_match,
                &mut ctx as *mut Ctx<'_> as *mut c_void,
            );
        }
    }
}
