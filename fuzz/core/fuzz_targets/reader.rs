//! The compiled reader and decoder on arbitrary bytes: a capture (pcap, pcapng, gzip) read in
//! chunks of a size the input chooses, every chunk decoded; or, with a leading 0xFF, one frame
//! of a link type the input chooses. Nothing may panic, hang or read out of bounds, and what
//! is read must be consistent (records inside their chunk, counts adding up).
#![no_main]

use _core::decode::{decode_record, DecodeCounts, Packets, SUPPORTED};
use _core::reader::Reader;
use _core::source::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() >= 3 && data[0] == 0xFF {
        let lt = SUPPORTED[data[1] as usize % SUPPORTED.len()];
        let mut out = Packets::default();
        let mut counts = DecodeCounts::default();
        decode_record(&data[3..], data[2] as u32 * 64, lt, 0, &mut out, &mut counts);
        assert!(out.len() + (counts.non_ip + counts.non_tcp + counts.truncated_tcp + counts.malformed) as usize >= 1 || counts.ip_fragments == 1);
        return;
    }
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize * 37;
    let Ok(mut reader) = Reader::from_source(Source::from_bytes(data.to_vec())) else { return };
    let mut records = 0u64; // over the whole capture (gzip may hold more records than its length suggests)
    while let Ok(true) = reader.next_chunk(chunk) {
        let len = reader.chunk().len();
        for r in &reader.records {
            assert!(r.start + r.caplen <= len);
        }
        let (packets, counts) = reader.decode(None);
        assert_eq!(counts.records as usize, reader.records.len());
        assert!(packets.len() <= reader.records.len());
        assert_eq!(packets.src.len(), 16 * packets.len());
        assert_eq!(reader.first_index, records);
        records += counts.records;
    }
});
