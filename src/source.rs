//! Opening a capture: a path or `-` for standard input, plain or gzip-compressed.
//!
//! [`Source`] is a forward-only byte stream with an exact offset in the (decompressed) capture
//! stream, tolerant of short reads: `fill` returns fewer bytes than asked only at the end of
//! the stream. A gzip stream that is truncated or corrupt ends where the decompressor stops:
//! the bytes decompressed before that point are returned and the error is kept, for the format
//! walkers to raise once they have handed out the records before it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, ErrorKind, Read};

use flate2::bufread::GzDecoder;

use crate::error::CaptureError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const READ_BUFFER: usize = 256 * 1024;

/// A capture stream with its offset and the error that cut it short, if any.
pub struct Source {
    inner: Box<dyn Read + Send + Sync>,
    /// True when the stream is gzip-compressed.
    pub compressed: bool,
    /// Bytes handed out so far: the offset of the next byte in the capture stream.
    pub offset: u64,
    /// Set when the stream broke off (see [`Source::fill`]).
    pub error: Option<CaptureError>,
}

impl Source {
    /// Open `path` (`-`: standard input), looking at its first two bytes for the gzip magic.
    pub fn open(path: &str) -> Result<Source, CaptureError> {
        let raw: Box<dyn Read + Send + Sync> = if path == "-" {
            Box::new(io::stdin())
        } else {
            let file = File::open(path).map_err(|e| CaptureError::new(None, format!("cannot open: {}", strerror(&e))))?;
            match file.metadata() {
                Ok(m) if m.is_dir() => return Err(CaptureError::new(None, "cannot open: Is a directory".to_string())),
                _ => {}
            }
            Box::new(file)
        };
        let mut buffered = BufReader::with_capacity(READ_BUFFER, raw);
        let compressed = peek2(&mut buffered) == GZIP_MAGIC;
        let inner: Box<dyn Read + Send + Sync> = if compressed { Box::new(GzMembers::new(buffered)) } else { Box::new(buffered) };
        Ok(Source { inner, compressed, offset: 0, error: None })
    }

    /// A source over bytes in memory (tests, the fuzz targets).
    pub fn from_bytes(data: Vec<u8>) -> Source {
        let mut buffered = BufReader::new(io::Cursor::new(data));
        let compressed = peek2(&mut buffered) == GZIP_MAGIC;
        let inner: Box<dyn Read + Send + Sync> = if compressed { Box::new(GzMembers::new(buffered)) } else { Box::new(buffered) };
        Source { inner, compressed, offset: 0, error: None }
    }

    /// Fill `out` and return how many bytes were read; fewer than asked only at end of stream.
    ///
    /// A read error after some bytes is kept in `error` (returned by the next call); one before
    /// any byte is returned at once.
    pub fn fill(&mut self, out: &mut [u8]) -> Result<usize, CaptureError> {
        let mut buf = Vec::with_capacity(out.len());
        let got = self.append(&mut buf, out.len())?;
        out[..got].copy_from_slice(&buf);
        Ok(got)
    }

    /// Append up to `n` bytes of the stream to `buf` (fewer only at the end of the stream) and
    /// return how many. `buf` grows with what is read: memory is touched only for bytes that
    /// exist (a small capture does not cost a whole chunk). Errors as for [`Source::fill`].
    pub fn append(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<usize, CaptureError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let before = buf.len();
        let result = (&mut self.inner).take(n as u64).read_to_end(buf);
        let got = buf.len() - before;
        if let Err(e) = result {
            let what = if self.compressed { "gzip stream is corrupt or truncated" } else { "read error" };
            let err = CaptureError::new(Some(self.offset + got as u64), format!("{what} ({e})"));
            self.error = Some(err.clone());
            if got == 0 {
                return Err(err);
            }
        }
        self.offset += got as u64;
        Ok(got)
    }
}

/// A gzip stream of one or more members, as gzip(1) and Python's gzip module read it: members
/// are decompressed one after the other, and zero bytes after a member (padding to a block
/// size) are skipped; anything else after a member must be another member (RFC 1952 section
/// 2.2), or it is an error.
struct GzMembers<R: BufRead> {
    member: Option<GzDecoder<R>>,
}

impl<R: BufRead> GzMembers<R> {
    fn new(r: R) -> GzMembers<R> {
        GzMembers { member: Some(GzDecoder::new(r)) }
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else { return Ok(0) };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // the member ended: skip zero padding, then another member or the end
            let mut rest = self.member.take().expect("a member").into_inner();
            loop {
                let avail = rest.fill_buf()?;
                if avail.is_empty() {
                    return Ok(0);
                }
                let zeros = avail.iter().take_while(|&&b| b == 0).count();
                if zeros == 0 {
                    break;
                }
                rest.consume(zeros);
            }
            self.member = Some(GzDecoder::new(rest));
        }
    }
}

/// The first two bytes of the stream, without consuming them (fewer at its very end).
fn peek2<R: Read>(r: &mut BufReader<R>) -> Vec<u8> {
    loop {
        match r.fill_buf() {
            Ok(b) => return b.iter().take(2).copied().collect(),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Vec::new(), // the first read will report it
        }
    }
}

/// The operating system's message for an error, without Rust's "(os error N)" suffix.
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn plain_bytes_read_back() {
        let mut s = Source::from_bytes(b"abcdef".to_vec());
        assert!(!s.compressed);
        let mut out = [0u8; 4];
        assert_eq!(s.fill(&mut out).unwrap(), 4);
        assert_eq!(s.fill(&mut out).unwrap(), 2);
        assert_eq!(s.offset, 6);
    }

    #[test]
    fn gzip_members_concatenated() {
        let mut data = gz(b"hello ");
        data.extend(gz(b"world"));
        let mut s = Source::from_bytes(data);
        assert!(s.compressed);
        let mut out = [0u8; 64];
        let n = s.fill(&mut out).unwrap();
        assert_eq!(&out[..n], b"hello world");
    }

    #[test]
    fn zero_padding_after_a_member_is_skipped_other_bytes_are_an_error() {
        let mut data = gz(b"hello");
        data.extend([0u8; 700]);
        data.extend(gz(b" again"));
        data.extend([0u8; 3]);
        let mut s = Source::from_bytes(data.clone());
        let mut out = [0u8; 64];
        let n = s.fill(&mut out).unwrap();
        assert_eq!((&out[..n], s.error.is_none()), (&b"hello again"[..], true));
        data.extend(b"garbage!");
        let mut s = Source::from_bytes(data);
        let n = s.fill(&mut out).unwrap();
        assert_eq!(&out[..n], b"hello again");
        assert_eq!(s.error.unwrap().offset, Some(11));
    }

    #[test]
    fn truncated_gzip_keeps_the_prefix_and_the_error() {
        let plain: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let data = gz(&plain);
        let mut s = Source::from_bytes(data[..data.len() * 2 / 3].to_vec());
        let mut out = vec![0u8; plain.len()];
        let n = s.fill(&mut out).unwrap();
        assert!(n > 0 && n < plain.len());
        assert_eq!(&out[..n], &plain[..n]);
        let err = s.fill(&mut out).unwrap_err();
        assert_eq!(err.offset, Some(n as u64));
        assert!(err.message.contains("gzip"));
    }
}
