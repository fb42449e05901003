//! The PyO3 face of the flow table, flow stage and RTT sampler (`src/flow/`): `FlowPipeline`,
//! fed one `PacketBatch` a chunk, handing back numpy columns (never per-packet objects): the
//! touched connections' events, facts and RTT samples, and the finished connections' frozen
//! results. `tcpsack_analyze/flowcore.py` turns them into `EventBatch`es and `ConnectionResult`s.

use std::borrow::Cow;

use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::events::{Event, Kind, Placement, MAX_SACK_BLOCKS};
use crate::flow::pipeline::{ChunkOut, ConnResult, Pipeline, Touched, COUNT_FIELDS, NONE};
use crate::flow::table::Delays;
use crate::flow::Batch;
use crate::rtt_sampler::RttSampler;

fn arr<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_vec(py, v)
}

/// A column of `obj` (an attribute holding a numpy array of `T`), flattened.
fn column<'py, T: Element + Clone>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Vec<T>> {
    let a: PyReadonlyArrayDyn<'py, T> = obj.getattr(name)?.extract().map_err(|e| PyValueError::new_err(format!("column {name}: {e}")))?;
    Ok(match a.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => a.as_array().iter().cloned().collect(),
    })
}

fn opt(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

/// The flow table, flow stage and RTT sampler of one capture (src/flow/pipeline.rs).
#[pyclass(module = "tcpsack_analyze._core", unsendable)]
pub struct FlowPipeline {
    inner: Pipeline,
}

#[pymethods]
impl FlowPipeline {
    /// Delays in seconds (flows.py); ``stages``: run the RTT sampler (else the flow stage alone).
    #[new]
    fn new(reuse_silence_s: f64, close_delay_s: f64, abort_delay_s: f64, stages: bool) -> FlowPipeline {
        FlowPipeline { inner: Pipeline::new(Delays::from_s(reuse_silence_s, close_delay_s, abort_delay_s), stages) }
    }

    /// How many connections are live.
    #[getter]
    fn live(&self) -> usize {
        self.inner.live()
    }

    /// Hand on only the events of the connections ``ids`` from now on (None: every one's).
    #[pyo3(signature = (ids=None))]
    fn set_events_for(&mut self, ids: Option<Vec<i64>>) {
        self.inner.set_events_for(ids.map(|v| v.into_iter().collect()));
    }

    /// How many connections were numbered so far.
    #[getter]
    fn connections(&self) -> i64 {
        self.inner.connections()
    }

    /// Where the RTT sample bags of connections created from now on first merge (tests).
    fn set_first_merge(&mut self, n: usize) {
        self.inner.set_first_merge(n);
    }

    /// Bytes the live connections' working state holds in the core.
    fn held_bytes(&self) -> usize {
        self.inner.held_bytes()
    }

    /// Run one ``PacketBatch``; ``backwards``: the record numbers (sorted int64) the analysis
    /// clock counted as going backwards in it. Returns a dict of columns (``flowcore.py``).
    fn feed<'py>(&mut self, py: Python<'py>, batch: &Bound<'py, PyAny>, backwards: PyReadonlyArray1<'py, i64>) -> PyResult<Bound<'py, PyDict>> {
        let opts = batch.getattr("opts")?;
        let (index, ts_ns, ipver, src, dst) =
            (column(batch, "index")?, column(batch, "ts_ns")?, column(batch, "ipver")?, column(batch, "src")?, column(batch, "dst")?);
        let (sport, dport, seq, ack, flags) =
            (column(batch, "sport")?, column(batch, "dport")?, column(batch, "seq")?, column(batch, "ack")?, column(batch, "flags")?);
        let (win, paylen, vlan) = (column(batch, "win")?, column(batch, "paylen")?, column(batch, "vlan")?);
        let (mss, wscale, sack_permitted, tsval) = (column(&opts, "mss")?, column(&opts, "wscale")?, column(&opts, "sack_permitted")?, column(&opts, "tsval")?);
        let (tsecr, nsack, sack, sack_empty) = (column(&opts, "tsecr")?, column(&opts, "nsack")?, column(&opts, "sack")?, column(&opts, "sack_empty")?);
        let back: Cow<[i64]> = match backwards.as_slice() {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(backwards.as_array().to_vec()),
        };
        let b = Batch {
            index: &index,
            ts_ns: &ts_ns,
            ipver: &ipver,
            src: &src,
            dst: &dst,
            sport: &sport,
            dport: &dport,
            seq: &seq,
            ack: &ack,
            flags: &flags,
            win: &win,
            paylen: &paylen,
            vlan: &vlan,
            mss: &mss,
            wscale: &wscale,
            sack_permitted: &sack_permitted,
            tsval: &tsval,
            tsecr: &tsecr,
            nsack: &nsack,
            sack: &sack,
            sack_empty: &sack_empty,
        };
        if !b.consistent() {
            return Err(PyValueError::new_err("the batch's columns differ in length"));
        }
        let inner = &mut self.inner;
        let back = back.as_ref();
        let out = py.detach(move || inner.feed(&b, back));
        chunk_dict(py, out)
    }

    /// The end of the capture: every connection still live, as ``finished`` columns.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let done = self.inner.finish();
        results_dict(py, &done)
    }
}

fn chunk_dict<'py>(py: Python<'py>, out: ChunkOut) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("row_conn", arr(py, out.row_conn))?;
    d.set_item("row_dir", arr(py, out.row_dir))?;
    d.set_item("touched", touched_dict(py, &out.touched)?)?;
    d.set_item("finished", results_dict(py, &out.finished)?)?;
    Ok(d)
}

/// The touched connections: ``conn``, ``now``, facts as (t, 2) columns, and each direction's
/// events and RTT samples concatenated (connection by connection, a2b then b2a) with offsets
/// (``ev_off``, ``sack_off``, ``rtt_off``: 2t + 1 each; ``sack_row`` counts from its segment).
fn touched_dict<'py>(py: Python<'py>, touched: &[Touched]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let t = touched.len();
    d.set_item("conn", arr(py, touched.iter().map(|x| x.id).collect()))?;
    d.set_item("now", arr(py, touched.iter().map(|x| x.now).collect()))?;
    let facts = |f: &dyn Fn(&crate::events::StreamFacts) -> i64| -> Vec<i64> { touched.iter().flat_map(|x| x.facts.iter().map(f)).collect() };
    d.set_item("mss", arr(py, facts(&|s| s.mss)).reshape([t, 2])?)?;
    d.set_item("seq_anchor", arr(py, facts(&|s| s.seq_anchor)).reshape([t, 2])?)?;
    d.set_item("turnaround_ns", arr(py, facts(&|s| opt(s.turnaround_ns))).reshape([t, 2])?)?;
    d.set_item("receiver_turnaround_ns", arr(py, facts(&|s| opt(s.receiver_turnaround_ns))).reshape([t, 2])?)?;
    let all: Vec<&[Event]> = touched.iter().flat_map(|x| x.events.iter().map(Vec::as_slice)).collect();
    let n: usize = all.iter().map(|e| e.len()).sum();
    let mut ev_off = Vec::with_capacity(2 * t + 1);
    let mut sack_off = Vec::with_capacity(2 * t + 1);
    let (mut kind, mut time_ns, mut index, mut flags) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut start, mut end, mut placement, mut tsval) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut ack, mut win, mut tsecr, mut nsack) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut dup, mut dsack, mut sack_row, mut sack) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
    let (mut off, mut soff) = (0i64, 0i64);
    ev_off.push(0);
    sack_off.push(0);
    for evs in &all {
        let mut local = 0i32;
        for e in evs.iter() {
            kind.push(e.kind as i8);
            time_ns.push(e.time_ns);
            index.push(e.index);
            flags.push(e.flags as i16);
            start.push(e.start);
            end.push(e.end);
            placement.push(e.placement as i8);
            tsval.push(e.tsval);
            ack.push(e.ack);
            win.push(e.win);
            tsecr.push(e.tsecr);
            nsack.push(e.nsack as i8);
            dup.push(e.dup);
            dsack.push(e.dsack);
            if e.nsack > 0 {
                sack_row.push(local);
                local += 1;
                sack.extend(e.sack.iter().flat_map(|&(l, r)| [l, r]));
            } else {
                sack_row.push(-1);
            }
        }
        off += evs.len() as i64;
        soff += local as i64;
        ev_off.push(off);
        sack_off.push(soff);
    }
    let m = sack.len() / (2 * MAX_SACK_BLOCKS);
    d.set_item("ev_off", arr(py, ev_off))?;
    d.set_item("sack_off", arr(py, sack_off))?;
    d.set_item("kind", arr(py, kind))?;
    d.set_item("time_ns", arr(py, time_ns))?;
    d.set_item("index", arr(py, index))?;
    d.set_item("flags", arr(py, flags))?;
    d.set_item("start", arr(py, start))?;
    d.set_item("end", arr(py, end))?;
    d.set_item("placement", arr(py, placement))?;
    d.set_item("tsval", arr(py, tsval))?;
    d.set_item("ack", arr(py, ack))?;
    d.set_item("win", arr(py, win))?;
    d.set_item("tsecr", arr(py, tsecr))?;
    d.set_item("nsack", arr(py, nsack))?;
    d.set_item("dup", arr(py, dup))?;
    d.set_item("dsack", arr(py, dsack))?;
    d.set_item("sack_row", arr(py, sack_row))?;
    d.set_item("sack", arr(py, sack).reshape([m, MAX_SACK_BLOCKS, 2])?)?;
    let rtts: Vec<&Vec<(i64, i64)>> = touched.iter().flat_map(|x| x.rtt.iter()).collect();
    let mut rtt_off = vec![0i64];
    for r in &rtts {
        rtt_off.push(rtt_off[rtt_off.len() - 1] + r.len() as i64);
    }
    d.set_item("rtt_off", arr(py, rtt_off))?;
    d.set_item("rtt_at", arr(py, rtts.iter().flat_map(|r| r.iter().map(|x| x.0)).collect()))?;
    d.set_item("rtt_sample", arr(py, rtts.iter().flat_map(|r| r.iter().map(|x| x.1)).collect()))?;
    Ok(d)
}

/// Finished connections as columns: identity, handshake (``NONE`` for not seen), state,
/// ``counts`` (k, 2, len(COUNT_FIELDS)), and RTT samples (data/ACK and timestamp samples of
/// a2b, then of b2a, concatenated with offsets ``rtt_off``, 4k + 1).
fn results_dict<'py>(py: Python<'py>, done: &[ConnResult]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let k = done.len();
    let ints = |f: &dyn Fn(&ConnResult) -> i64| -> Vec<i64> { done.iter().map(f).collect() };
    d.set_item("id", arr(py, ints(&|c| c.id)))?;
    d.set_item("epoch", arr(py, ints(&|c| c.epoch)))?;
    d.set_item("a_port", arr(py, ints(&|c| c.a_port)))?;
    d.set_item("b_port", arr(py, ints(&|c| c.b_port)))?;
    d.set_item("ipver", arr(py, ints(&|c| c.ipver)))?;
    d.set_item("packets", arr(py, ints(&|c| c.packets)))?;
    d.set_item("vlan_tagged", arr(py, ints(&|c| c.vlan_tagged)))?;
    d.set_item("backwards_timestamps", arr(py, ints(&|c| c.backwards_timestamps)))?;
    d.set_item("syn_ns", arr(py, ints(&|c| opt(c.syn_ns))))?;
    d.set_item("synack_ns", arr(py, ints(&|c| opt(c.synack_ns))))?;
    d.set_item("hs_ack_ns", arr(py, ints(&|c| opt(c.hs_ack_ns))))?;
    d.set_item("window_scale_in_use", arr(py, ints(&|c| c.window_scale_in_use.map_or(-1, i64::from))))?;
    d.set_item("state", done.iter().map(|c| c.state).collect::<Vec<_>>())?;
    d.set_item("a_addr", arr(py, done.iter().flat_map(|c| c.a_addr).collect::<Vec<u8>>()).reshape([k, 16])?)?;
    d.set_item("b_addr", arr(py, done.iter().flat_map(|c| c.b_addr).collect::<Vec<u8>>()).reshape([k, 16])?)?;
    let counts: Vec<i64> = done.iter().flat_map(|c| c.counts.iter().flatten().copied()).collect();
    d.set_item("counts", arr(py, counts).reshape([k, 2, COUNT_FIELDS.len()])?)?;
    let bags: Vec<&Vec<i64>> = done.iter().flat_map(|c| c.rtt.iter().flat_map(|(s, t)| [s, t])).collect();
    let mut rtt_off = vec![0i64];
    for b in &bags {
        rtt_off.push(rtt_off[rtt_off.len() - 1] + b.len() as i64);
    }
    d.set_item("rtt_off", arr(py, rtt_off))?;
    d.set_item("rtt", arr(py, bags.iter().flat_map(|b| b.iter().copied()).collect()))?;
    Ok(d)
}

fn slice<'a, T: Element + Copy>(a: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(a.as_array().to_vec()),
    }
}

/// (ACK times, samples) of a batch, None when it has none.
type Samples<'py> = Option<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)>;

/// The RTT sampler of one direction (src/rtt_sampler.rs), fed a direction's events a batch at
/// a time as the columns of an ``EventBatch`` (``rtt.RttSampler`` wraps it).
#[pyclass(module = "tcpsack_analyze._core", name = "RttSampler", unsendable)]
pub struct PyRttSampler {
    inner: RttSampler,
}

#[pymethods]
impl PyRttSampler {
    #[new]
    fn new() -> PyRttSampler {
        PyRttSampler { inner: RttSampler::new() }
    }

    /// Account one batch (its ``kind``, ``time_ns``, ``index``, ``placement``, ``end``,
    /// ``tsval``, ``ack`` and ``tsecr`` columns); returns its data/ACK samples as (ACK times,
    /// samples) by time, or None.
    #[allow(clippy::too_many_arguments)]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        kind: PyReadonlyArray1<'py, i8>,
        time_ns: PyReadonlyArray1<'py, i64>,
        index: PyReadonlyArray1<'py, i64>,
        placement: PyReadonlyArray1<'py, i8>,
        end: PyReadonlyArray1<'py, i64>,
        tsval: PyReadonlyArray1<'py, i64>,
        ack: PyReadonlyArray1<'py, i64>,
        tsecr: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Samples<'py>> {
        let (kind, time_ns, index, placement) = (slice(&kind), slice(&time_ns), slice(&index), slice(&placement));
        let (end, tsval, ack, tsecr) = (slice(&end), slice(&tsval), slice(&ack), slice(&tsecr));
        let n = kind.len();
        if [time_ns.len(), index.len(), placement.len(), end.len(), tsval.len(), ack.len(), tsecr.len()].iter().any(|&m| m != n) {
            return Err(PyValueError::new_err("the event columns differ in length"));
        }
        let mut events = Vec::with_capacity(n);
        for i in 0..n {
            let placement = Placement::from_i8(placement[i]).ok_or_else(|| PyValueError::new_err(format!("placement {}", placement[i])))?;
            let mut e = if kind[i] == Kind::Send as i8 {
                Event::send(time_ns[i], index[i], -1, end[i], 0, tsval[i], placement)
            } else {
                Event::ack(time_ns[i], index[i], ack[i], &[], false, false, -1, tsecr[i], 0)
            };
            e.placement = placement;
            events.push(e);
        }
        let out = self.inner.feed(&events);
        if out.is_empty() {
            return Ok(None);
        }
        Ok(Some((arr(py, out.iter().map(|x| x.0).collect()), arr(py, out.iter().map(|x| x.1).collect()))))
    }

    /// Every data/ACK sample so far (ns).
    fn samples<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        arr(py, self.inner.samples.to_vec())
    }

    /// Every timestamp sample so far (ns).
    fn ts_samples<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        arr(py, self.inner.ts_samples.to_vec())
    }
}

/// Register the classes and constants of this file on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FlowPipeline>()?;
    m.add_class::<PyRttSampler>()?;
    m.add("COUNT_FIELDS", COUNT_FIELDS.to_vec())?;
    m.add("COUNT_NONE", NONE)?;
    Ok(())
}
