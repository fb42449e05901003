//! The event boundary in the core: what one direction of a connection did, as a stream of
//! events (the contract is written out in `tcpsack_analyze/events.py`; this is the same
//! contract, one row per event, as the flow stage hands it to the stages behind it).
//!
//! Sequence numbers are unwrapped to 64 bits relative to the sender's ISN (the SYN is 0, the
//! first data byte 1); times are ns on the analysis clock. A column that does not apply to a
//! row's kind holds -1 (`start`, `end`, `tsval` of an ACK; `ack`, `win`, `tsecr` of a send),
//! `Placement::None` or false/0, exactly as `EventBatch` does.

/// At most 4 SACK blocks fit in the option space (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP header flags (RFC 9293 section 3.1).
pub mod flags {
    pub const FIN: u16 = 0x01;
    pub const SYN: u16 = 0x02;
    pub const RST: u16 = 0x04;
    pub const PSH: u16 = 0x08;
    pub const ACK: u16 = 0x10;
}

/// A direction of a connection, named by its data sender (`events.Dir`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Dir {
    A2B = 0,
    B2A = 1,
}

/// What an event is (`events.Kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum Kind {
    Send = 0,
    Ack = 1,
}

/// Where a send's payload falls in the sequence space (`events.Placement`, same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum Placement {
    None = -1,
    New = 0,
    Rexmit = 1,
    Fill = 2,
    Gap = 3,
    Probe = 4,
}

impl Placement {
    /// From the value `events.Placement` uses; None for anything else.
    pub fn from_i8(v: i8) -> Option<Placement> {
        Some(match v {
            -1 => Placement::None,
            0 => Placement::New,
            1 => Placement::Rexmit,
            2 => Placement::Fill,
            3 => Placement::Gap,
            4 => Placement::Probe,
            _ => return None,
        })
    }
}

/// One event of a direction's stream: a send of the data sender or an ACK of the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    pub time_ns: i64,
    /// record number in the capture (0-based)
    pub index: i64,
    pub flags: u16,
    /// payload `[start, end)` of a send
    pub start: i64,
    pub end: i64,
    pub placement: Placement,
    /// TSval of a send (-1 without the timestamp option)
    pub tsval: i64,
    /// cumulative ACK of an ACK
    pub ack: i64,
    /// advertised receive window in bytes (scaled when window scaling is in use)
    pub win: i64,
    /// TSecr of an ACK (-1 without the timestamp option)
    pub tsecr: i64,
    /// how many of `sack` are meaningful
    pub nsack: u8,
    /// a duplicate ACK (DOMAIN.md section 3, `acks::duplicate_ack`)
    pub dup: bool,
    /// the first SACK block reports a duplicate (RFC 2883, `acks::dsack_first_block`)
    pub dsack: bool,
    pub sack: [(i64, i64); MAX_SACK_BLOCKS],
}

impl Event {
    /// A send with every ACK column at its "does not apply" value.
    pub fn send(time_ns: i64, index: i64, start: i64, end: i64, flags: u16, tsval: i64, placement: Placement) -> Event {
        Event {
            kind: Kind::Send,
            time_ns,
            index,
            flags,
            start,
            end,
            placement,
            tsval,
            ack: -1,
            win: -1,
            tsecr: -1,
            nsack: 0,
            dup: false,
            dsack: false,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    /// An ACK with every send column at its "does not apply" value; at most
    /// `MAX_SACK_BLOCKS` of `blocks` are kept.
    #[allow(clippy::too_many_arguments)]
    pub fn ack(time_ns: i64, index: i64, ack: i64, blocks: &[(i64, i64)], dsack: bool, dup: bool, win: i64, tsecr: i64, flags: u16) -> Event {
        let mut sack = [(0, 0); MAX_SACK_BLOCKS];
        let n = blocks.len().min(MAX_SACK_BLOCKS);
        sack[..n].copy_from_slice(&blocks[..n]);
        Event {
            kind: Kind::Ack,
            time_ns,
            index,
            flags,
            start: -1,
            end: -1,
            placement: Placement::None,
            tsval: -1,
            ack,
            win,
            tsecr,
            nsack: n as u8,
            dup,
            dsack,
            sack,
        }
    }

    #[inline]
    pub fn is_send(&self) -> bool {
        self.kind == Kind::Send
    }

    #[inline]
    pub fn is_ack(&self) -> bool {
        self.kind == Kind::Ack
    }

    /// A send whose payload the loss rules read: placed, not a probe, not a bare SYN/FIN
    /// (`EventBatch.is_data`).
    #[inline]
    pub fn is_data(&self) -> bool {
        self.kind == Kind::Send && !matches!(self.placement, Placement::None | Placement::Probe)
    }

    /// The SACK blocks of an ACK, in the option's order.
    #[inline]
    pub fn blocks(&self) -> &[(i64, i64)] {
        &self.sack[..self.nsack as usize]
    }
}

/// What the flow stage knows of a direction besides its events, as of the end of a batch
/// (`events.StreamFacts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamFacts {
    /// the receiver's MSS option, else the largest payload seen so far (0: none yet)
    pub mss: i64,
    /// the raw 32-bit sequence number of relative 0
    pub seq_anchor: i64,
    /// capture point -> data sender -> capture point (handshake)
    pub turnaround_ns: Option<i64>,
    /// capture point -> receiver -> capture point (handshake)
    pub receiver_turnaround_ns: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_data() {
        let s = Event::send(1, 0, 1, 101, flags::ACK, -1, Placement::New);
        assert!(s.is_send() && s.is_data());
        assert!(!Event::send(1, 0, 0, 0, flags::SYN, -1, Placement::None).is_data());
        assert!(!Event::send(1, 0, 1, 2, 0, -1, Placement::Probe).is_data());
        let a = Event::ack(2, 1, 101, &[(201, 301)], false, true, 65535, -1, flags::ACK);
        assert!(a.is_ack() && !a.is_data());
        assert_eq!(a.blocks(), &[(201, 301)]);
        assert_eq!(a.start, -1);
    }
}
