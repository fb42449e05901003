//! BPF capture filters (tcpdump syntax), compiled and run by libpcap itself: no re-implementation.
//!
//! libpcap is loaded at run time from a path the caller gives (the Python side finds the
//! system's `libpcap.so` or the copy inside the `libpcap` wheel, see reader/bpf.py). An
//! expression is compiled with `pcap_compile` once per link type (on a `pcap_open_dead` handle
//! of that link type) and each record is tested with libpcap's `bpf_filter`.
//!
//! This is the crate's only `unsafe` code: calls into libpcap's C functions. Every pointer
//! passed is valid for the call (a live handle, a program libpcap filled in and frees in
//! `pcap_freecode`, a record's captured bytes with their length as `buflen`, which bounds every
//! read `bpf_filter` makes).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use libloading::Library;

const PCAP_NETMASK_UNKNOWN: u32 = 0xFFFF_FFFF;
const SNAPLEN: c_int = 262_144;

#[repr(C)]
struct BpfProgram {
    bf_len: c_uint,
    bf_insns: *mut c_void,
}

type OpenDead = unsafe extern "C" fn(c_int, c_int) -> *mut c_void;
type Compile = unsafe extern "C" fn(*mut c_void, *mut BpfProgram, *const c_char, c_int, u32) -> c_int;
type GetErr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type Close = unsafe extern "C" fn(*mut c_void);
type FreeCode = unsafe extern "C" fn(*mut BpfProgram);
type Filter = unsafe extern "C" fn(*const c_void, *const u8, c_uint, c_uint) -> c_uint;
type NameToVal = unsafe extern "C" fn(*const c_char) -> c_int;

/// A filter expression and its programs, one per link type, compiled by libpcap.
pub struct Bpf {
    expression: CString,
    programs: HashMap<u32, Box<BpfProgram>>,
    open_dead: OpenDead,
    compile: Compile,
    geterr: GetErr,
    close: Close,
    freecode: FreeCode,
    filter: Filter,
    name_to_val: NameToVal,
    _lib: Library, // keeps the functions above loaded; dropped last
}

impl Bpf {
    /// Load libpcap from `library` and keep `expression` (compiled per link type on first use).
    pub fn new(library: &str, expression: &str) -> Result<Bpf, String> {
        let expression = CString::new(expression).map_err(|_| "a filter expression cannot contain a NUL byte".to_string())?;
        // SAFETY: loading libpcap runs its (trivial) initialisers; the symbols are libpcap's
        // documented functions with these C signatures (pcap/pcap.h, pcap/bpf.h).
        unsafe {
            let lib = Library::new(library).map_err(|e| format!("cannot load {library}: {e}"))?;
            macro_rules! sym {
                ($name:literal, $t:ty) => {
                    *lib.get::<$t>($name).map_err(|e| format!("{library}: {e}"))?
                };
            }
            Ok(Bpf {
                expression,
                programs: HashMap::new(),
                open_dead: sym!(b"pcap_open_dead\0", OpenDead),
                compile: sym!(b"pcap_compile\0", Compile),
                geterr: sym!(b"pcap_geterr\0", GetErr),
                close: sym!(b"pcap_close\0", Close),
                freecode: sym!(b"pcap_freecode\0", FreeCode),
                filter: sym!(b"bpf_filter\0", Filter),
                name_to_val: sym!(b"pcap_datalink_name_to_val\0", NameToVal),
                _lib: lib,
            })
        }
    }

    /// The DLT_ value libpcap's compiler knows a file's LINKTYPE_ value by. They differ for raw
    /// IP (LINKTYPE_RAW 101, and the 12 and 14 some files hold, is DLT_RAW: 12 on Linux, 14 on
    /// OpenBSD) and ATM (100 is DLT_ATM_RFC1483, 11): asked of libpcap by name, as tcpdump's
    /// own mapping would give.
    fn dlt(&self, linktype: u32) -> c_int {
        let name: &[u8] = match linktype {
            101 | 12 | 14 => b"RAW\0",
            100 => b"ATM_RFC1483\0",
            _ => return linktype as c_int,
        };
        // SAFETY: a NUL-terminated name; the function only reads it.
        let v = unsafe { (self.name_to_val)(name.as_ptr() as *const c_char) };
        if v < 0 {
            linktype as c_int
        } else {
            v
        }
    }

    /// Compile the expression for `linktype` (once); libpcap's message when it does not compile.
    pub fn program(&mut self, linktype: u32) -> Result<(), String> {
        if self.programs.contains_key(&linktype) {
            return Ok(());
        }
        let mut prog = Box::new(BpfProgram { bf_len: 0, bf_insns: std::ptr::null_mut() });
        // SAFETY: the handle is checked for NULL and closed after use; pcap_compile fills `prog`
        // (kept in a Box, freed with pcap_freecode in Drop); pcap_geterr's string lives until
        // pcap_close and is copied before.
        unsafe {
            let handle = (self.open_dead)(self.dlt(linktype), SNAPLEN);
            if handle.is_null() {
                return Err(format!("libpcap cannot open a handle of link type {linktype}"));
            }
            let rc = (self.compile)(handle, &mut *prog, self.expression.as_ptr(), 1, PCAP_NETMASK_UNKNOWN);
            let result = if rc != 0 { Err(CStr::from_ptr((self.geterr)(handle)).to_string_lossy().into_owned()) } else { Ok(()) };
            (self.close)(handle);
            result?;
        }
        self.programs.insert(linktype, prog);
        Ok(())
    }

    /// Whether the record with captured bytes `data` (of `wirelen` bytes on the wire) of link type
    /// `linktype` passes the filter; libpcap's message when the expression does not compile for
    /// that link type.
    pub fn matches(&mut self, linktype: u32, data: &[u8], wirelen: u32) -> Result<bool, String> {
        self.program(linktype)?;
        let prog = &self.programs[&linktype];
        // SAFETY: a program libpcap compiled; `data` is valid for `data.len()` bytes, the buflen
        // that bounds bpf_filter's reads.
        Ok(unsafe { (self.filter)(prog.bf_insns, data.as_ptr(), wirelen, data.len() as c_uint) } != 0)
    }
}

impl Drop for Bpf {
    fn drop(&mut self) {
        for prog in self.programs.values_mut() {
            // SAFETY: each program was filled by pcap_compile and is freed once.
            unsafe { (self.freecode)(&mut **prog) };
        }
    }
}

// SAFETY: the programs are owned by this value and only read by bpf_filter, which keeps no
// state; libpcap's compile functions are called through `&mut self` only.
unsafe impl Send for Bpf {}
unsafe impl Sync for Bpf {}

#[cfg(test)]
mod tests {
    use super::*;

    fn libpcap() -> Option<Bpf> {
        ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so"].iter().find_map(|l| Bpf::new(l, "tcp port 80").ok())
    }

    #[test]
    fn libpcap_compiles_and_runs_the_expression() {
        let Some(mut bpf) = libpcap() else {
            eprintln!("libpcap not found: skipped");
            return;
        };
        let mut ip = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        ip.extend([0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bpf.matches(101, &ip, 40), Ok(true)); // LINKTYPE_RAW, compiled as DLT_RAW
        assert_eq!(bpf.matches(12, &ip, 40), Ok(true));
        ip[23] = 81;
        assert_eq!(bpf.matches(101, &ip, 40), Ok(false));
        assert_eq!(bpf.matches(101, &ip[..10], 40), Ok(false)); // cut: libpcap's bounds say no
        let mut ether = vec![0u8; 12];
        ether.extend([0x08, 0x00]);
        ether.extend(&ip);
        ether[14 + 23] = 80;
        assert_eq!(bpf.matches(1, &ether, 54), Ok(true));
        let mut bad = Bpf::new("libpcap.so.0.8", "tcp and and").or_else(|_| Bpf::new("libpcap.so", "tcp and and")).unwrap();
        assert!(bad.program(1).unwrap_err().contains("syntax error"));
    }
}
