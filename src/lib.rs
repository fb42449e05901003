//! The compiled core of tcpsack-analyze: capture reading (pcap, pcapng, gzip, stdin) and
//! link/IP/TCP decoding, handed to Python as numpy columns (feature `python`).
//!
//! The parsing code is safe Rust, reading bytes through bounds-checked slices; the one module
//! with `unsafe` is `bpf`, the calls into libpcap's C functions for BPF filters.
#![deny(unsafe_code)]

pub mod bpf;
pub mod clock;
pub mod decode;
pub mod error;
pub mod framing;
pub mod options;
pub mod reader;
pub mod source;

#[cfg(feature = "python")]
mod python;
