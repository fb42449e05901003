//! The compiled core of tcpsack-analyze: capture reading (pcap, pcapng, gzip, stdin) and
//! link/IP/TCP decoding, handed to Python as numpy columns (feature `python`).
//!
//! Everything here is safe Rust: the parsing code reads bytes through bounds-checked slices.
#![forbid(unsafe_code)]

pub mod clock;
pub mod decode;
pub mod error;
pub mod framing;
pub mod options;
pub mod reader;
pub mod source;

#[cfg(feature = "python")]
mod python;
