//! The PyO3 face of the flow table, flow stage and RTT sampler (`src/flow/`): `FlowPipeline`,
//! fed one `PacketBatch` a chunk, handing back numpy columns (never per-packet objects): the
//! touched connections' events, facts and RTT samples, and the finished connections' frozen
//! results. `tcpsack_analyze/flowcore.py` turns them into `EventBatch`es and `ConnectionResult`s.

use std::borrow::Cow;
use std::collections::VecDeque;

use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::events::{Event, Kind, Placement, MAX_SACK_BLOCKS};
use crate::flow::pipeline::{ChunkOut, ConnResult, Finishing, Pipeline, Touched, COUNT_FIELDS, NONE};
use crate::flow::table::Delays;
use crate::flow::Batch;
use crate::loss::tracker::Horizon;
use crate::py_loss::result_dict;
use crate::rtt_sampler::RttSampler;

fn arr<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_vec(py, v)
}

/// A column of `obj` (an attribute holding a numpy array of `T`).
fn ro<'py, T: Element>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArrayDyn<'py, T>> {
    obj.getattr(name)?.extract().map_err(|e| PyValueError::new_err(format!("column {name}: {e}")))
}

/// Its values in order: borrowed when the array is contiguous (the decoder's are), else copied.
fn cow<'a, T: Element + Clone>(a: &'a PyReadonlyArrayDyn<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(a.as_array().iter().cloned().collect()),
    }
}

fn opt(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

/// The flow table, flow stage and RTT sampler of one capture (src/flow/pipeline.rs).
#[pyclass(module = "tcpsack_analyze._core")]
pub struct FlowPipeline {
    inner: Pipeline,
    /// finished connections not yet taken (``take_finished``), oldest first, frozen when taken
    done: VecDeque<Finishing>,
}

#[pymethods]
impl FlowPipeline {
    /// Delays in seconds (flows.py); ``stages``: run the RTT sampler (else the flow stage alone).
    #[new]
    fn new(reuse_silence_s: f64, close_delay_s: f64, abort_delay_s: f64, stages: bool) -> FlowPipeline {
        FlowPipeline { inner: Pipeline::new(Delays::from_s(reuse_silence_s, close_delay_s, abort_delay_s), stages), done: VecDeque::new() }
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

    /// The loss trackers of connections created from now on: thin-stream bound, and the D-SACK
    /// horizon as (SRTTs, minimum ns) or None for the core's.
    #[pyo3(signature = (thin_packets, horizon=None))]
    fn set_loss(&mut self, thin_packets: i64, horizon: Option<(i64, i64)>) {
        let horizon = horizon.map_or_else(Horizon::default, |(rtts, min_ns)| Horizon { rtts, min_ns });
        self.inner.set_loss(thin_packets, horizon);
    }

    /// The live loss trackers: ((resends, resent segments, episodes) held as objects, bytes
    /// that grow with outstanding data, resends moved into their tables).
    fn loss_state(&self) -> ((usize, usize, usize), usize, usize) {
        self.inner.loss_state()
    }

    /// Bytes the live connections' working state holds in the core.
    fn held_bytes(&self) -> usize {
        self.inner.held_bytes()
    }

    /// Run one ``PacketBatch``; ``backwards``: the record numbers (sorted int64) the analysis
    /// clock counted as going backwards in it. Returns a dict of columns (``flowcore.py``).
    fn feed<'py>(&mut self, py: Python<'py>, batch: &Bound<'py, PyAny>, backwards: PyReadonlyArray1<'py, i64>) -> PyResult<Bound<'py, PyDict>> {
        let opts = batch.getattr("opts")?;
        let (index, ts_ns, ipver, src, dst) = (ro(batch, "index")?, ro(batch, "ts_ns")?, ro(batch, "ipver")?, ro(batch, "src")?, ro(batch, "dst")?);
        let (sport, dport, seq, ack, flags) = (ro(batch, "sport")?, ro(batch, "dport")?, ro(batch, "seq")?, ro(batch, "ack")?, ro(batch, "flags")?);
        let (win, paylen, vlan) = (ro(batch, "win")?, ro(batch, "paylen")?, ro(batch, "vlan")?);
        let (mss, wscale, sack_permitted, tsval) = (ro(&opts, "mss")?, ro(&opts, "wscale")?, ro(&opts, "sack_permitted")?, ro(&opts, "tsval")?);
        let (tsecr, nsack, sack, sack_empty) = (ro(&opts, "tsecr")?, ro(&opts, "nsack")?, ro(&opts, "sack")?, ro(&opts, "sack_empty")?);
        let b = Batch {
            index: &cow(&index),
            ts_ns: &cow(&ts_ns),
            ipver: &cow(&ipver),
            src: &cow(&src),
            dst: &cow(&dst),
            sport: &cow(&sport),
            dport: &cow(&dport),
            seq: &cow(&seq),
            ack: &cow(&ack),
            flags: &cow(&flags),
            win: &cow(&win),
            paylen: &cow(&paylen),
            vlan: &cow(&vlan),
            mss: &cow(&mss),
            wscale: &cow(&wscale),
            sack_permitted: &cow(&sack_permitted),
            tsval: &cow(&tsval),
            tsecr: &cow(&tsecr),
            nsack: &cow(&nsack),
            sack: &cow(&sack),
            sack_empty: &cow(&sack_empty),
        };
        if !b.consistent() {
            return Err(PyValueError::new_err("the batch's columns differ in length"));
        }
        let mut cols = Columns::default();
        let wants = self.inner.wants_events(); // (else every connection's `wanted` is false)
        let mut out = self.inner.feed(&b, &slice(&backwards), &mut |t| {
            if wants {
                cols.push(t)
            }
        });
        self.done.extend(std::mem::take(&mut out.finished));
        chunk_dict(py, out, cols)
    }

    /// The end of the capture: every connection still live is finished (``take_finished``).
    fn finish(&mut self) {
        let done = self.inner.finish();
        self.done.extend(done);
    }

    /// Up to ``n`` of the finished connections not yet taken, oldest first, as columns (the
    /// finished connections of a chunk, or of the end, go a group at a time, so that their
    /// Python objects need not all exist at once).
    fn take_finished<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyDict>> {
        let k = n.min(self.done.len());
        let group: Vec<ConnResult> = self.done.drain(..k).map(Finishing::result).collect();
        results_dict(py, group)
    }

    /// Drop the finished connections not taken (a caller that reads events only).
    fn discard_finished(&mut self) {
        self.done.clear();
    }
}

fn chunk_dict<'py>(py: Python<'py>, out: ChunkOut, cols: Columns) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("row_conn", arr(py, out.row_conn))?;
    d.set_item("row_dir", arr(py, out.row_dir))?;
    let cols = if out.wanted.iter().all(|&w| w) { cols } else { cols.select(&out.wanted) };
    let ids = out.touched.iter().zip(&out.wanted).filter(|(_, &w)| w).map(|(&id, _)| id).collect();
    d.set_item("touched", cols.into_dict(py, ids)?)?;
    Ok(d)
}

/// The touched connections of a chunk as columns, filled one connection at a time: ``conn``,
/// ``now``, facts as (t, 2) columns, and each direction's events and RTT samples concatenated
/// (connection by connection, a2b then b2a) with offsets (``ev_off``, ``sack_off``,
/// ``rtt_off``: 2t + 1 each; ``sack_row`` counts from its segment).
struct Columns {
    now: Vec<i64>,
    mss: Vec<i64>,
    seq_anchor: Vec<i64>,
    turnaround: Vec<i64>,
    receiver_turnaround: Vec<i64>,
    ev_off: Vec<i64>,
    sack_off: Vec<i64>,
    rtt_off: Vec<i64>,
    kind: Vec<i8>,
    time_ns: Vec<i64>,
    index: Vec<i64>,
    flags: Vec<i16>,
    start: Vec<i64>,
    end: Vec<i64>,
    placement: Vec<i8>,
    tsval: Vec<i64>,
    ack: Vec<i64>,
    win: Vec<i64>,
    tsecr: Vec<i64>,
    nsack: Vec<i8>,
    dup: Vec<bool>,
    dsack: Vec<bool>,
    sack_row: Vec<i32>,
    sack: Vec<i64>,
    rtt_at: Vec<i64>,
    rtt_sample: Vec<i64>,
}

impl Default for Columns {
    fn default() -> Columns {
        Columns {
            now: Vec::new(),
            mss: Vec::new(),
            seq_anchor: Vec::new(),
            turnaround: Vec::new(),
            receiver_turnaround: Vec::new(),
            ev_off: vec![0],
            sack_off: vec![0],
            rtt_off: vec![0],
            kind: Vec::new(),
            time_ns: Vec::new(),
            index: Vec::new(),
            flags: Vec::new(),
            start: Vec::new(),
            end: Vec::new(),
            placement: Vec::new(),
            tsval: Vec::new(),
            ack: Vec::new(),
            win: Vec::new(),
            tsecr: Vec::new(),
            nsack: Vec::new(),
            dup: Vec::new(),
            dsack: Vec::new(),
            sack_row: Vec::new(),
            sack: Vec::new(),
            rtt_at: Vec::new(),
            rtt_sample: Vec::new(),
        }
    }
}

impl Columns {
    fn push(&mut self, t: &Touched) {
        self.now.push(t.now);
        for d in 0..2 {
            let f = &t.facts[d];
            self.mss.push(f.mss);
            self.seq_anchor.push(f.seq_anchor);
            self.turnaround.push(opt(f.turnaround_ns));
            self.receiver_turnaround.push(opt(f.receiver_turnaround_ns));
            self.events(&t.events[d]);
            self.rtt(&t.rtt[d]);
        }
    }

    fn events(&mut self, evs: &[Event]) {
        let mut local = 0i32;
        for e in evs {
            self.kind.push(e.kind as i8);
            self.time_ns.push(e.time_ns);
            self.index.push(e.index);
            self.flags.push(e.flags as i16);
            self.start.push(e.start);
            self.end.push(e.end);
            self.placement.push(e.placement as i8);
            self.tsval.push(e.tsval);
            self.ack.push(e.ack);
            self.win.push(e.win);
            self.tsecr.push(e.tsecr);
            self.nsack.push(e.nsack as i8);
            self.dup.push(e.dup);
            self.dsack.push(e.dsack);
            if e.nsack > 0 {
                self.sack_row.push(local);
                local += 1;
                self.sack.extend(e.sack.iter().flat_map(|&(l, r)| [l, r]));
            } else {
                self.sack_row.push(-1);
            }
        }
        self.ev_off.push(self.kind.len() as i64);
        self.sack_off.push(self.sack_off[self.sack_off.len() - 1] + local as i64);
    }

    fn rtt(&mut self, samples: &[(i64, i64)]) {
        self.rtt_at.extend(samples.iter().map(|x| x.0));
        self.rtt_sample.extend(samples.iter().map(|x| x.1));
        self.rtt_off.push(self.rtt_at.len() as i64);
    }

    /// Only the connections marked in `wanted` (in the order pushed).
    fn select(self, wanted: &[bool]) -> Columns {
        let mut out = Columns::default();
        for (t, _) in wanted.iter().enumerate().filter(|(_, &w)| w) {
            out.now.push(self.now[t]);
            for d in 0..2 {
                let k = 2 * t + d;
                out.mss.push(self.mss[k]);
                out.seq_anchor.push(self.seq_anchor[k]);
                out.turnaround.push(self.turnaround[k]);
                out.receiver_turnaround.push(self.receiver_turnaround[k]);
                let (lo, hi) = (self.ev_off[k] as usize, self.ev_off[k + 1] as usize);
                out.kind.extend_from_slice(&self.kind[lo..hi]);
                out.time_ns.extend_from_slice(&self.time_ns[lo..hi]);
                out.index.extend_from_slice(&self.index[lo..hi]);
                out.flags.extend_from_slice(&self.flags[lo..hi]);
                out.start.extend_from_slice(&self.start[lo..hi]);
                out.end.extend_from_slice(&self.end[lo..hi]);
                out.placement.extend_from_slice(&self.placement[lo..hi]);
                out.tsval.extend_from_slice(&self.tsval[lo..hi]);
                out.ack.extend_from_slice(&self.ack[lo..hi]);
                out.win.extend_from_slice(&self.win[lo..hi]);
                out.tsecr.extend_from_slice(&self.tsecr[lo..hi]);
                out.nsack.extend_from_slice(&self.nsack[lo..hi]);
                out.dup.extend_from_slice(&self.dup[lo..hi]);
                out.dsack.extend_from_slice(&self.dsack[lo..hi]);
                out.sack_row.extend_from_slice(&self.sack_row[lo..hi]);
                out.ev_off.push(out.kind.len() as i64);
                let width = 2 * MAX_SACK_BLOCKS;
                let (slo, shi) = (self.sack_off[k] as usize, self.sack_off[k + 1] as usize);
                out.sack.extend_from_slice(&self.sack[width * slo..width * shi]);
                out.sack_off.push(out.sack_off[out.sack_off.len() - 1] + (shi - slo) as i64);
                let (rlo, rhi) = (self.rtt_off[k] as usize, self.rtt_off[k + 1] as usize);
                out.rtt(&self.rtt_at[rlo..rhi].iter().copied().zip(self.rtt_sample[rlo..rhi].iter().copied()).collect::<Vec<_>>());
            }
        }
        out
    }

    fn into_dict<'py>(self, py: Python<'py>, ids: Vec<i64>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let t = ids.len();
        d.set_item("conn", arr(py, ids))?;
        d.set_item("now", arr(py, self.now))?;
        d.set_item("mss", arr(py, self.mss).reshape([t, 2])?)?;
        d.set_item("seq_anchor", arr(py, self.seq_anchor).reshape([t, 2])?)?;
        d.set_item("turnaround_ns", arr(py, self.turnaround).reshape([t, 2])?)?;
        d.set_item("receiver_turnaround_ns", arr(py, self.receiver_turnaround).reshape([t, 2])?)?;
        let m = self.sack.len() / (2 * MAX_SACK_BLOCKS);
        d.set_item("ev_off", arr(py, self.ev_off))?;
        d.set_item("sack_off", arr(py, self.sack_off))?;
        d.set_item("kind", arr(py, self.kind))?;
        d.set_item("time_ns", arr(py, self.time_ns))?;
        d.set_item("index", arr(py, self.index))?;
        d.set_item("flags", arr(py, self.flags))?;
        d.set_item("start", arr(py, self.start))?;
        d.set_item("end", arr(py, self.end))?;
        d.set_item("placement", arr(py, self.placement))?;
        d.set_item("tsval", arr(py, self.tsval))?;
        d.set_item("ack", arr(py, self.ack))?;
        d.set_item("win", arr(py, self.win))?;
        d.set_item("tsecr", arr(py, self.tsecr))?;
        d.set_item("nsack", arr(py, self.nsack))?;
        d.set_item("dup", arr(py, self.dup))?;
        d.set_item("dsack", arr(py, self.dsack))?;
        d.set_item("sack_row", arr(py, self.sack_row))?;
        d.set_item("sack", arr(py, self.sack).reshape([m, MAX_SACK_BLOCKS, 2])?)?;
        d.set_item("rtt_off", arr(py, self.rtt_off))?;
        d.set_item("rtt_at", arr(py, self.rtt_at))?;
        d.set_item("rtt_sample", arr(py, self.rtt_sample))?;
        Ok(d)
    }
}

/// Finished connections as columns: identity, handshake (``NONE`` for not seen), state,
/// ``counts`` (k, 2, len(COUNT_FIELDS)), and RTT samples (data/ACK and timestamp samples of
/// a2b, then of b2a, concatenated with offsets ``rtt_off``, 4k + 1).
fn results_dict<'py>(py: Python<'py>, mut done: Vec<ConnResult>) -> PyResult<Bound<'py, PyDict>> {
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
    let loss = PyList::empty(py);
    for c in done.iter_mut() {
        match c.loss.take() {
            Some([a, b]) => loss.append((result_dict(py, a)?, result_dict(py, b)?))?,
            None => loss.append(py.None())?,
        }
    }
    d.set_item("loss", loss)?;
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
#[pyclass(module = "tcpsack_analyze._core", name = "RttSampler")]
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
