//! The compiled core of tcpsack-analyze: capture reading (pcap, pcapng, gzip, stdin),
//! link/IP/TCP decoding and the per-packet stages behind the event boundary (`events`), handed
//! to Python as numpy columns (feature `python`). The TCP rules the stages share live once:
//! sequence arithmetic (`seq`), ACK judgement (`acks`), the RFC 6298 estimator (`rfc6298`).
//!
//! The parsing code is safe Rust, reading bytes through bounds-checked slices; the one module
//! with `unsafe` is `bpf`, the calls into libpcap's C functions for BPF filters.
#![deny(unsafe_code)]

pub mod acks;
pub mod bpf;
pub mod clock;
pub mod decode;
pub mod error;
pub mod events;
pub mod flow;
pub mod framing;
pub mod ge;
pub mod loss;
pub mod options;
pub mod rangeset;
pub mod reader;
pub mod rfc6298;
pub mod rtt_sampler;
pub mod scoreboard;
pub mod seq;
pub mod source;

#[cfg(feature = "python")]
mod py_flow;
#[cfg(feature = "python")]
mod py_ge;
#[cfg(feature = "python")]
mod py_loss;
#[cfg(feature = "python")]
mod py_rules;
#[cfg(feature = "python")]
mod python;
