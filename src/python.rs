//! The Python extension module `tcpsack_analyze._core`: the reader, handing out columns.
//!
//! Results cross into Python as numpy arrays, one per column, never as per-packet objects.
//! `tcpsack_analyze/reader/__init__.py` wraps this into `read_capture` and `PacketBatch`.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::bpf::Bpf as CoreBpf;
use crate::clock::{Clock as CoreClock, JUMP_NS, PLAUSIBLE_NS};
use crate::decode::SUPPORTED;
use crate::error::CaptureError;
use crate::reader::Reader as CoreReader;

create_exception!(_core, ReadError, PyException, "A capture cannot be read: args are (offset or None, message).");

create_exception!(_core, BpfError, PyException, "libpcap cannot be loaded or cannot compile the expression: args are (message,).");

fn err(e: CaptureError) -> PyErr {
    ReadError::new_err((e.offset, e.message))
}

fn arr<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_vec(py, v)
}

/// A capture being read chunk by chunk (see src/reader.rs).
#[pyclass(module = "tcpsack_analyze._core")]
struct Reader {
    inner: CoreReader,
}

#[pymethods]
impl Reader {
    /// Open ``path`` (``-``: standard input) and read its file header; raises ReadError.
    #[new]
    fn new(py: Python<'_>, path: &str) -> PyResult<Reader> {
        let path = path.to_string();
        py.detach(move || CoreReader::open(&path)).map(|inner| Reader { inner }).map_err(err)
    }

    /// "pcap" or "pcapng".
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format()
    }

    /// True when the stream is gzip-compressed.
    #[getter]
    fn compressed(&self) -> bool {
        self.inner.compressed()
    }

    /// Index (0-based, over the whole capture) of the current chunk's first record.
    #[getter]
    fn first_index(&self) -> u64 {
        self.inner.first_index
    }

    /// Read the next chunk holding records: True, or False at the end; raises ReadError.
    fn next_chunk(&mut self, py: Python<'_>, chunk_bytes: usize) -> PyResult<bool> {
        let inner = &mut self.inner;
        py.detach(move || inner.next_chunk(chunk_bytes)).map_err(err)
    }

    /// The raw timestamps (ns since the epoch) of every record of the chunk.
    fn timestamps<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        arr(py, self.inner.records.iter().map(|r| r.ts_ns).collect())
    }

    /// (buf, start, caplen, wirelen, linktype, file_offset) of the chunk's records: a copy of the
    /// chunk's bytes and where each record's captured bytes lie in it (for BPF filters and tests).
    #[allow(clippy::type_complexity)]
    fn records<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<u8>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i32>>,
        Bound<'py, PyArray1<i64>>,
    ) {
        let r = &self.inner.records;
        (
            arr(py, self.inner.chunk().to_vec()),
            arr(py, r.iter().map(|x| x.start as i64).collect()),
            arr(py, r.iter().map(|x| x.caplen as i64).collect()),
            arr(py, r.iter().map(|x| x.wirelen as i64).collect()),
            arr(py, r.iter().map(|x| x.linktype as i32).collect()),
            arr(py, r.iter().map(|x| x.file_offset as i64).collect()),
        )
    }

    /// Decode the chunk's TCP packets (only records that pass the BPF filter ``bpf``, when
    /// given): a dict of columns (``row``: the record's position in the chunk) and a dict of
    /// counts. Raises BpfError when the expression does not compile for a link type of the chunk.
    #[pyo3(signature = (bpf=None))]
    fn decode<'py>(&self, py: Python<'py>, bpf: Option<PyRefMut<'py, Bpf>>) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let keep_vec = match bpf {
            Some(mut b) => Some(self.inner.keep(&mut b.inner).map_err(|e| BpfError::new_err((e,)))?),
            None => None,
        };
        let inner = &self.inner;
        let (p, c) = py.detach(move || inner.decode(keep_vec.as_deref()));
        let n = p.len();
        let cols = PyDict::new(py);
        cols.set_item("row", arr(py, p.row))?;
        cols.set_item("ipver", arr(py, p.ipver))?;
        cols.set_item("src", arr(py, p.src).reshape([n, 16])?)?;
        cols.set_item("dst", arr(py, p.dst).reshape([n, 16])?)?;
        for (name, v) in [
            ("sport", p.sport),
            ("dport", p.dport),
            ("seq", p.seq),
            ("ack", p.ack),
            ("flags", p.flags),
            ("win", p.win),
            ("hdrlen", p.hdrlen),
            ("paylen", p.paylen),
            ("mss", p.opts.mss),
            ("wscale", p.opts.wscale),
            ("tsval", p.opts.tsval),
            ("tsecr", p.opts.tsecr),
            ("nsack", p.opts.nsack),
        ] {
            cols.set_item(name, arr(py, v))?;
        }
        cols.set_item("sack", arr(py, p.opts.sack).reshape([n, 4, 2])?)?;
        for (name, v) in [
            ("vlan", p.vlan),
            ("sack_permitted", p.opts.sack_permitted),
            ("sack_empty", p.opts.sack_empty),
            ("truncated", p.opts.truncated),
            ("malformed", p.opts.malformed),
        ] {
            cols.set_item(name, arr(py, v))?;
        }
        let counts = PyDict::new(py);
        counts.set_item("records", c.records)?;
        counts.set_item("unsupported_linktype", c.unsupported_linktype.into_iter().collect::<Vec<_>>())?;
        counts.set_item("non_ip", c.non_ip)?;
        counts.set_item("non_tcp", c.non_tcp)?;
        counts.set_item("ip_fragments", c.ip_fragments)?;
        counts.set_item("truncated_tcp", c.truncated_tcp)?;
        counts.set_item("malformed", c.malformed)?;
        counts.set_item("filtered_out", c.filtered_out)?;
        Ok((cols, counts))
    }
}

/// A BPF filter expression compiled and run by libpcap (src/bpf.rs).
#[pyclass(module = "tcpsack_analyze._core")]
struct Bpf {
    inner: CoreBpf,
}

#[pymethods]
impl Bpf {
    /// Load libpcap from ``library`` for ``expression``; raises BpfError when it cannot be loaded.
    #[new]
    fn new(library: &str, expression: &str) -> PyResult<Bpf> {
        CoreBpf::new(library, expression).map(|inner| Bpf { inner }).map_err(|e| BpfError::new_err((e,)))
    }

    /// Compile the expression for ``linktype`` (once); raises BpfError with libpcap's message.
    fn program(&mut self, linktype: u32) -> PyResult<()> {
        self.inner.program(linktype).map_err(|e| BpfError::new_err((e,)))
    }
}

/// The analysis clock (src/clock.rs): raw timestamps in, analysis times out, batch by batch.
#[pyclass(module = "tcpsack_analyze._core")]
struct Clock {
    inner: CoreClock,
}

#[pymethods]
impl Clock {
    #[new]
    fn new() -> Clock {
        Clock { inner: CoreClock::new() }
    }

    /// The analysis times (int64 ns) of one batch of raw timestamps (int64 ns), in capture order.
    fn advance<'py>(&mut self, py: Python<'py>, raw: PyReadonlyArray1<'py, i64>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let out = match raw.as_slice() {
            Ok(s) => self.inner.advance(s),
            Err(_) => self.inner.advance(&raw.as_array().to_vec()),
        };
        Ok(arr(py, out))
    }

    /// Positions (int64) in the latest batch of the records counted as going backwards.
    fn marks<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        arr(py, self.inner.marks.clone())
    }

    /// (backwards, largest_backward_ns, absurd, jumps, largest_jump_ns) so far.
    fn counts(&self) -> (u64, i64, u64, u64, i64) {
        let c = &self.inner.counts;
        (c.backwards, c.largest_backward_ns, c.absurd, c.jumps, c.largest_jump_ns)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Reader>()?;
    m.add_class::<Clock>()?;
    m.add_class::<Bpf>()?;
    m.add("BpfError", m.py().get_type::<BpfError>())?;
    m.add("PLAUSIBLE_NS", PLAUSIBLE_NS)?;
    m.add("JUMP_NS", JUMP_NS)?;
    m.add("ReadError", m.py().get_type::<ReadError>())?;
    m.add("SUPPORTED_LINKTYPES", SUPPORTED.to_vec())?;
    crate::py_flow::register(m)?;
    crate::py_loss::register(m)?;
    crate::py_ge::register(m)?;
    crate::py_rules::register(m)?;
    Ok(())
}
