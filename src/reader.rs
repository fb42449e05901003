//! Reading a capture chunk by chunk: the records of each chunk, then their decoded TCP packets.
//!
//! A chunk is the unfinished record carried over from the previous chunk plus up to
//! `chunk_bytes` bytes read from the stream, so memory is bounded by the chunk size, not the
//! file size. Errors that make the file unreadable from the start are returned by
//! [`Reader::open`]; errors after some records are returned by the `next_chunk` call after the
//! one that handed out the records before them.

use crate::bpf::Bpf;
use crate::decode::{decode_record, DecodeCounts, Packets};
use crate::error::CaptureError;
use crate::framing::{is_pcap_magic, is_pcapng_magic, Pcap, Pcapng, Record, Walk, PCAP_HEADER};
use crate::source::Source;

enum Format {
    Pcap(Pcap),
    Pcapng(Pcapng),
}

/// A capture being read.
pub struct Reader {
    src: Source,
    format: Format,
    /// The current chunk: records of [`Reader::records`] point into it.
    buf: Vec<u8>,
    /// Bytes of `buf` with data (the rest is spare capacity).
    len: usize,
    /// Where the walk of the current chunk stopped: the start of the next chunk's carry.
    pos: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// Number of records before the current chunk.
    pub first_index: u64,
    /// The records of the current chunk.
    pub records: Vec<Record>,
    /// An error to return once the current chunk's records have been handed out.
    pending: Option<CaptureError>,
    done: bool,
}

impl Reader {
    /// Open the capture at `path` (`-`: standard input) and read its file header.
    pub fn open(path: &str) -> Result<Reader, CaptureError> {
        Reader::from_source(Source::open(path)?)
    }

    /// Read a capture from `src` (a file, stdin, bytes in memory).
    pub fn from_source(mut src: Source) -> Result<Reader, CaptureError> {
        let mut head = [0u8; 4];
        let got = src.fill(&mut head)?;
        if got < 4 {
            if let Some(e) = &src.error {
                return Err(e.clone());
            }
        }
        if got == 0 {
            return Err(CaptureError::at(0, "empty file"));
        }
        let head = &head[..got];
        let (format, buf, base) = if is_pcap_magic(head) {
            let mut hdr = vec![0u8; PCAP_HEADER];
            hdr[..4].copy_from_slice(head);
            let n = 4 + src.fill(&mut hdr[4..])?;
            if let Some(e) = &src.error {
                return Err(e.clone());
            }
            if n < PCAP_HEADER {
                return Err(CaptureError::at(n as u64, "truncated pcap file header"));
            }
            let pcap = Pcap::from_header(&hdr);
            if !crate::decode::is_supported(pcap.linktype) {
                // one link type for the whole file: none of its records could be decoded
                return Err(CaptureError::at(20, format!("unsupported link type {} in the pcap file header", pcap.linktype)));
            }
            (Format::Pcap(pcap), Vec::new(), PCAP_HEADER as u64)
        } else if is_pcapng_magic(head) {
            (Format::Pcapng(Pcapng::default()), head.to_vec(), 0)
        } else {
            let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
            return Err(CaptureError::at(0, format!("not a pcap or pcapng capture (starts with bytes {hex})")));
        };
        let len = buf.len();
        Ok(Reader { src, format, buf, len, pos: 0, base, first_index: 0, records: Vec::new(), pending: None, done: false })
    }

    pub fn format(&self) -> &'static str {
        match self.format {
            Format::Pcap(_) => "pcap",
            Format::Pcapng(_) => "pcapng",
        }
    }

    pub fn compressed(&self) -> bool {
        self.src.compressed
    }

    /// The bytes of the current chunk (records' `start` and `caplen` index into it).
    pub fn chunk(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Read the next chunk that holds at least one record: Ok(true) when there is one (in
    /// [`Reader::records`]), Ok(false) at the end of the capture, or the error that stopped it.
    pub fn next_chunk(&mut self, chunk_bytes: usize) -> Result<bool, CaptureError> {
        self.first_index += self.records.len() as u64;
        self.records.clear();
        loop {
            if let Some(e) = self.pending.take() {
                self.done = true;
                return Err(e);
            }
            if self.done {
                return Ok(false);
            }
            // carry the unfinished record to the front (unless it is there already: a record
            // longer than a chunk grows in place, not by copies), then read after it
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.len, 0);
                self.base += self.pos as u64;
            }
            let kept = self.len - self.pos;
            self.pos = 0;
            self.buf.truncate(kept);
            let got = match self.src.append(&mut self.buf, chunk_bytes.max(1)) {
                Ok(got) => got,
                Err(e) => {
                    self.len = kept;
                    self.done = true;
                    return Err(e);
                }
            };
            let eof = got < chunk_bytes.max(1);
            self.len = kept + got;
            let data = &self.buf[..self.len];
            let walk: Walk = match &mut self.format {
                Format::Pcap(p) => p.walk(data, self.base, &mut self.records),
                Format::Pcapng(p) => p.walk(data, self.base, &mut self.records),
            };
            self.pos = walk.pos;
            if let Some(e) = walk.error {
                self.pending = Some(e);
            } else if eof {
                self.done = true;
                let leftover = self.len - self.pos;
                if let Some(e) = &self.src.error {
                    // a gzip stream broke off: that is where the capture ends
                    self.pending = Some(e.clone());
                } else if leftover > 0 {
                    let unit = match self.format {
                        Format::Pcap(_) => Pcap::unit(leftover),
                        Format::Pcapng(_) => "pcapng block",
                    };
                    let at = self.base + self.pos as u64;
                    self.pending = Some(CaptureError::at(at, format!("file ends in the middle of a {unit} (truncated capture)")));
                }
            }
            if !self.records.is_empty() {
                return Ok(true);
            }
        }
    }

    /// Which records of the current chunk pass the BPF filter `bpf` (libpcap's verdicts), or
    /// libpcap's message when the expression does not compile for a link type of the chunk.
    pub fn keep(&self, bpf: &mut Bpf) -> Result<Vec<bool>, String> {
        let data = self.chunk();
        self.records.iter().map(|r| bpf.matches(r.linktype, &data[r.start..r.start + r.caplen], r.wirelen)).collect()
    }

    /// Decode the TCP packets of the current chunk's records (only those where `keep` is true,
    /// when given: a BPF filter's verdicts).
    pub fn decode(&self, keep: Option<&[bool]>) -> (Packets, DecodeCounts) {
        let mut out = Packets::with_capacity(self.records.len());
        let mut counts = DecodeCounts { records: self.records.len() as u64, ..Default::default() };
        let data = self.chunk();
        for (i, r) in self.records.iter().enumerate() {
            if let Some(k) = keep {
                if !k.get(i).copied().unwrap_or(false) {
                    counts.filtered_out += 1;
                    continue;
                }
            }
            decode_record(&data[r.start..r.start + r.caplen], r.wirelen, r.linktype, i as i64, &mut out, &mut counts);
        }
        (out, counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap(records: &[(&[u8], u32)], linktype: u32) -> Vec<u8> {
        let mut d = Vec::new();
        {
            let v = 0xA1B2_C3D4u32;
            d.extend(v.to_le_bytes());
        }
        d.extend(2u16.to_le_bytes());
        d.extend(4u16.to_le_bytes());
        d.extend([0; 8]);
        d.extend(65535u32.to_le_bytes());
        d.extend(linktype.to_le_bytes());
        for (i, (data, wl)) in records.iter().enumerate() {
            for v in [i as u32 + 1, 0, data.len() as u32, *wl] {
                d.extend(v.to_le_bytes());
            }
            d.extend(*data);
        }
        d
    }

    fn ip_tcp() -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 44, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        p.extend([0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x10, 0, 0, 0, 0, 0]);
        p.extend([0; 4]);
        p
    }

    fn read_all(data: Vec<u8>, chunk: usize) -> (usize, Vec<u64>, Option<CaptureError>) {
        let mut r = match Reader::from_source(Source::from_bytes(data)) {
            Ok(r) => r,
            Err(e) => return (0, vec![], Some(e)),
        };
        let mut n = 0;
        let mut offsets = vec![];
        loop {
            match r.next_chunk(chunk) {
                Ok(true) => {
                    let (p, c) = r.decode(None);
                    assert_eq!(c.records as usize, r.records.len());
                    n += p.len();
                    offsets.extend(r.records.iter().map(|x| x.file_offset));
                }
                Ok(false) => return (n, offsets, None),
                Err(e) => return (n, offsets, Some(e)),
            }
        }
    }

    #[test]
    fn any_chunk_size_reads_the_same() {
        let p = ip_tcp();
        let data = pcap(&[(&p, 44), (&p, 44), (&p[..30], 44), (&p, 44)], 101);
        for chunk in [1, 7, 16, 60, 1 << 20] {
            let (n, offsets, err) = read_all(data.clone(), chunk);
            assert_eq!((n, err), (3, None), "chunk {chunk}");
            assert_eq!(offsets, vec![24, 84, 144, 190]);
        }
    }

    #[test]
    fn every_truncation_point_reports_the_prefix() {
        let p = ip_tcp();
        let data = pcap(&[(&p, 44), (&p, 44)], 101);
        for cut in 0..data.len() {
            let (n, _, err) = read_all(data[..cut].to_vec(), 50);
            match cut {
                0 => assert_eq!(err.unwrap().message, "empty file"),
                1..=23 => assert!(err.is_some()),
                24 | 84 => assert_eq!((n, err), ((cut - 24) / 60, None)),
                _ => {
                    let e = err.unwrap();
                    let whole = (cut - 24) / 60;
                    assert_eq!(n, whole);
                    assert_eq!(e.offset, Some(24 + 60 * whole as u64));
                    let unit = if (cut - 24) % 60 < 16 { "record header" } else { "record data" };
                    assert!(e.message.contains(unit), "{cut}: {}", e.message);
                }
            }
        }
    }

    #[test]
    fn not_a_capture_and_unsupported_linktype() {
        let e = read_all(b"hello world".to_vec(), 10).2.unwrap();
        assert!(e.message.contains("68656c6c"));
        let e = read_all(pcap(&[], 147), 10).2.unwrap();
        assert_eq!(e.offset, Some(20));
    }
}
