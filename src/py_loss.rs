//! PyO3 classes of the loss stage: the RFC 6675 scoreboard (`tcpsack_analyze.scoreboard`
//! wraps it with the same Python API as before), the RFC 6298 estimator (`rtt.Rfc6298`) and the
//! loss tracker (`loss/tracker.py` wraps it: event columns in, record columns out).

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::events::{Dir, Event, Kind, Placement, StreamFacts, MAX_SACK_BLOCKS};
use crate::loss::records::{Column, Table, Vocab, NONE};
use crate::loss::tracker::{Horizon, LossResult, LossTracker as CoreTracker, THIN_PACKETS};
use crate::rfc6298::Rfc6298 as CoreRfc6298;
use crate::scoreboard::{AckResult, BoardError, Scoreboard as CoreBoard};

fn board_err(e: BoardError) -> PyErr {
    match e {
        BoardError::Value(m) => PyValueError::new_err(m),
        BoardError::Runtime(m) => PyRuntimeError::new_err(m),
    }
}

/// The ACK's result as a tuple in the field order of `scoreboard.AckResult`.
type AckTuple = (i64, i64, i64, i64, i64, bool, bool, Option<(i64, i64)>, i64, bool, bool);

fn ack_tuple(r: AckResult) -> AckTuple {
    (
        r.high_ack,
        r.newly_acked,
        r.newly_sacked,
        r.sacked_then_acked,
        r.delivered,
        r.cumulative,
        r.duplicate,
        r.dsack,
        r.dup_acks,
        r.loss_detected,
        r.exited_recovery,
    )
}

/// RFC 6675 scoreboard (src/scoreboard.rs); `tcpsack_analyze.scoreboard.Scoreboard` subclasses
/// it to hand back `AckResult` and `NextSegment`.
#[pyclass(module = "tcpsack_analyze._core", subclass)]
pub struct Scoreboard {
    inner: CoreBoard,
}

#[pymethods]
impl Scoreboard {
    #[new]
    #[pyo3(signature = (smss, dup_thresh = 3, start = 0))]
    fn new(smss: i64, dup_thresh: i64, start: i64) -> PyResult<Scoreboard> {
        Ok(Scoreboard { inner: CoreBoard::new(smss, dup_thresh, start).map_err(board_err)? })
    }

    #[getter]
    fn smss(&self) -> i64 {
        self.inner.smss()
    }
    #[setter]
    fn set_smss(&mut self, value: i64) -> PyResult<()> {
        self.inner.set_smss(value).map_err(board_err)
    }
    #[getter]
    fn dup_thresh(&self) -> i64 {
        self.inner.dup_thresh
    }
    #[getter]
    fn high_ack(&self) -> i64 {
        self.inner.high_ack()
    }
    #[getter]
    fn high_data(&self) -> i64 {
        self.inner.high_data()
    }
    #[getter]
    fn high_rxt(&self) -> i64 {
        self.inner.high_rxt()
    }
    #[getter]
    fn rescue_rxt(&self) -> Option<i64> {
        self.inner.rescue_rxt()
    }
    #[getter]
    fn recovery_point(&self) -> Option<i64> {
        self.inner.recovery_point()
    }
    #[getter]
    fn in_recovery(&self) -> bool {
        self.inner.in_recovery()
    }
    #[getter]
    fn dup_acks(&self) -> i64 {
        self.inner.dup_acks()
    }
    #[getter]
    fn high_sack(&self) -> Option<i64> {
        self.inner.high_sack()
    }
    #[getter]
    fn sacked_bytes(&self) -> i64 {
        self.inner.sacked_bytes()
    }
    #[getter]
    fn outstanding(&self) -> i64 {
        self.inner.outstanding()
    }
    #[getter]
    fn can_enter_recovery(&self) -> bool {
        self.inner.can_enter_recovery()
    }
    #[getter]
    fn lost_below(&mut self) -> i64 {
        self.inner.lost_below()
    }
    #[getter]
    fn recovery_start_time(&self) -> Option<f64> {
        self.inner.recovery_start_time
    }
    #[getter]
    fn last_ack_time(&self) -> Option<f64> {
        self.inner.last_ack_time
    }
    #[getter]
    fn last_send_time(&self) -> Option<f64> {
        self.inner.last_send_time
    }
    fn sacked_within(&self, start: i64, end: i64) -> i64 {
        self.inner.sacked_within(start, end)
    }
    /// The SACKed ranges above the cumulative ACK, in order (a list).
    fn sacked_ranges(&self) -> Vec<(i64, i64)> {
        self.inner.sacked_ranges()
    }
    fn holes(&self) -> Vec<(i64, i64)> {
        self.inner.holes()
    }
    fn is_lost(&mut self, seq: i64) -> bool {
        self.inner.is_lost(seq)
    }
    #[pyo3(signature = (lost_below = None))]
    fn pipe(&mut self, lost_below: Option<i64>) -> i64 {
        self.inner.pipe(lost_below)
    }
    fn pipe_segments(&mut self) -> i64 {
        self.inner.pipe_segments()
    }
    /// NextSeg() as (start, end, rule) or None.
    #[pyo3(signature = (available_new_data = 0, send_window_end = None))]
    fn _next_seg(&mut self, available_new_data: i64, send_window_end: Option<i64>) -> Option<(i64, i64, u8)> {
        self.inner.next_seg(available_new_data, send_window_end).map(|n| (n.start, n.end, n.rule))
    }
    #[pyo3(signature = (seq, end, now, retransmission = None, *, rescue = false))]
    fn on_send(&mut self, seq: i64, end: i64, now: f64, retransmission: Option<bool>, rescue: bool) -> PyResult<()> {
        self.inner.on_send(seq, end, now, retransmission, rescue).map_err(board_err)
    }
    /// on_ack as a tuple in the field order of `AckResult`.
    fn _on_ack(&mut self, cum_ack: i64, sack_blocks: Vec<(i64, i64)>, now: f64) -> AckTuple {
        ack_tuple(self.inner.on_ack(cum_ack, &sack_blocks, now))
    }
    fn update(&mut self, cum_ack: i64, sack_blocks: Vec<(i64, i64)>) -> (i64, i64) {
        self.inner.update(cum_ack, &sack_blocks)
    }
    fn relay_sacked(&mut self, start: i64) {
        self.inner.relay_sacked(start)
    }
    fn enter_recovery(&mut self, now: f64) -> PyResult<Option<(i64, i64)>> {
        self.inner.enter_recovery(now).map_err(board_err)
    }
    #[pyo3(signature = (now, expunge_sack = true))]
    fn on_rto(&mut self, now: f64, expunge_sack: bool) {
        self.inner.on_rto(now, expunge_sack)
    }
}

/// SRTT and RTTVAR of RFC 6298 section 2 (src/rfc6298.rs), floats in the unit of the samples.
#[pyclass(module = "tcpsack_analyze._core", name = "Rfc6298", eq)]
#[derive(Clone, PartialEq)]
pub struct PyRfc6298 {
    inner: CoreRfc6298,
}

#[pymethods]
impl PyRfc6298 {
    #[new]
    #[pyo3(signature = (srtt = None, rttvar = None))]
    fn new(srtt: Option<f64>, rttvar: Option<f64>) -> PyRfc6298 {
        PyRfc6298 { inner: CoreRfc6298 { srtt, rttvar } }
    }
    #[getter]
    fn srtt(&self) -> Option<f64> {
        self.inner.srtt
    }
    #[setter]
    fn set_srtt(&mut self, v: Option<f64>) {
        self.inner.srtt = v;
    }
    #[getter]
    fn rttvar(&self) -> Option<f64> {
        self.inner.rttvar
    }
    #[setter]
    fn set_rttvar(&mut self, v: Option<f64>) {
        self.inner.rttvar = v;
    }
    /// Fold one measurement in: 2.2 for the first, 2.3 for the others (RTTVAR first).
    fn update(&mut self, r: f64) {
        self.inner.update(r)
    }
    /// Fold measurements in, in order; returns the largest SRTT reached on the way (-1.0 for none).
    fn update_all(&mut self, samples: Vec<f64>) -> f64 {
        self.inner.update_all(samples)
    }
    /// RTO = SRTT + max(G, K * RTTVAR), kept within [minimum, maximum]; None before a sample.
    #[pyo3(signature = (granularity, minimum = 0.0, maximum = f64::INFINITY))]
    fn rto(&self, granularity: f64, minimum: f64, maximum: f64) -> Option<f64> {
        self.inner.rto(granularity, minimum, maximum)
    }
    fn __repr__(&self) -> String {
        let f = |v: Option<f64>| v.map_or("None".to_string(), |x| format!("{x:?}"));
        format!("Rfc6298(srtt={}, rttvar={})", f(self.inner.srtt), f(self.inner.rttvar))
    }
}

fn vocab_name(v: Vocab) -> &'static str {
    match v {
        Vocab::Trigger => "trigger",
        Vocab::Spurious => "spurious",
        Vocab::EpisodeEnd => "episode_end",
        Vocab::Where => "where",
        Vocab::Cause => "cause",
    }
}

/// A table as {field: column}: int32 or int64 arrays (the type's minimum for None), bool arrays, (vocabulary,
/// int8 codes) for enums (-1 for None), (vocabulary, int8 codes, uint32 list ends) for lists
/// of them, lists of str for text.
fn table_dict<'py>(py: Python<'py>, t: Table) -> PyResult<Option<Bound<'py, PyDict>>> {
    if t.len == 0 {
        // most directions of a capture of many connections have no record of a kind: nothing
        // to build (None: an empty table)
        return Ok(None);
    }
    let d = PyDict::new(py);
    for (name, col) in t.names.iter().zip(t.columns) {
        match col {
            Column::Int(v) => {
                // int32 (its minimum for None) when every value fits, as loss/table.py keeps them
                let narrow = v.iter().all(|&x| x == NONE || (x > i32::MIN as i64 && x <= i32::MAX as i64));
                if narrow {
                    let v32: Vec<i32> = v.iter().map(|&x| if x == NONE { i32::MIN } else { x as i32 }).collect();
                    d.set_item(name, PyArray1::from_vec(py, v32))?
                } else {
                    d.set_item(name, PyArray1::from_vec(py, v))?
                }
            }
            Column::Bool(v) => d.set_item(name, PyArray1::from_vec(py, v))?,
            Column::Code(voc, v) => d.set_item(name, (vocab_name(voc), PyArray1::from_vec(py, v)))?,
            Column::Codes(voc, v, ends) => d.set_item(name, (vocab_name(voc), PyArray1::from_vec(py, v), PyArray1::from_vec(py, ends)))?,
            Column::Text(v) => d.set_item(name, PyList::new(py, v)?)?,
        }
    }
    Ok(Some(d))
}

/// The loss tracker of one direction (src/loss/tracker.rs); `loss.tracker.LossTracker` wraps it.
#[pyclass(module = "tcpsack_analyze._core", name = "LossTracker")]
pub struct PyLossTracker {
    inner: Option<CoreTracker>,
}

impl PyLossTracker {
    fn tracker(&mut self) -> PyResult<&mut CoreTracker> {
        self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("the loss tracker has finished"))
    }
}

#[pymethods]
impl PyLossTracker {
    #[new]
    /// `dsack_rtts`, `dsack_min_horizon_ns`: the D-SACK horizon's parameters (None: the defaults).
    #[pyo3(signature = (d, thin_packets = THIN_PACKETS, dsack_rtts = None, dsack_min_horizon_ns = None))]
    fn new(d: u8, thin_packets: i64, dsack_rtts: Option<i64>, dsack_min_horizon_ns: Option<i64>) -> PyResult<PyLossTracker> {
        let dir = match d {
            0 => Dir::A2B,
            1 => Dir::B2A,
            _ => return Err(PyValueError::new_err(format!("direction must be 0 or 1, got {d}"))),
        };
        let default = Horizon::default();
        let horizon = Horizon { rtts: dsack_rtts.unwrap_or(default.rtts), min_ns: dsack_min_horizon_ns.unwrap_or(default.min_ns) };
        Ok(PyLossTracker { inner: Some(CoreTracker::with_horizon(dir, thin_packets, horizon)) })
    }

    /// One batch of events as the columns of an EventBatch (``sack`` flattened: 8 values a row).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, time_ns, index, start, end, placement, tsval, ack, tsecr, nsack, dup, dsack, sack_row, sack, now, mss, seq_anchor, turnaround_ns, receiver_turnaround_ns, rtt_t, rtt_v))]
    fn feed(
        &mut self,
        kind: PyReadonlyArray1<'_, i8>,
        time_ns: PyReadonlyArray1<'_, i64>,
        index: PyReadonlyArray1<'_, i64>,
        start: PyReadonlyArray1<'_, i64>,
        end: PyReadonlyArray1<'_, i64>,
        placement: PyReadonlyArray1<'_, i8>,
        tsval: PyReadonlyArray1<'_, i64>,
        ack: PyReadonlyArray1<'_, i64>,
        tsecr: PyReadonlyArray1<'_, i64>,
        nsack: PyReadonlyArray1<'_, i8>,
        dup: PyReadonlyArray1<'_, bool>,
        dsack: PyReadonlyArray1<'_, bool>,
        sack_row: PyReadonlyArray1<'_, i32>,
        sack: PyReadonlyArray1<'_, i64>,
        now: i64,
        mss: i64,
        seq_anchor: i64,
        turnaround_ns: Option<i64>,
        receiver_turnaround_ns: Option<i64>,
        rtt_t: PyReadonlyArray1<'_, i64>,
        rtt_v: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<()> {
        let (kind, time_ns, index, start, end) = (kind.as_slice()?, time_ns.as_slice()?, index.as_slice()?, start.as_slice()?, end.as_slice()?);
        let (placement, tsval, ack, tsecr, nsack) = (placement.as_slice()?, tsval.as_slice()?, ack.as_slice()?, tsecr.as_slice()?, nsack.as_slice()?);
        let (dup, dsack, sack_row, sack) = (dup.as_slice()?, dsack.as_slice()?, sack_row.as_slice()?, sack.as_slice()?);
        let n = kind.len();
        for len in [
            time_ns.len(),
            index.len(),
            start.len(),
            end.len(),
            placement.len(),
            tsval.len(),
            ack.len(),
            tsecr.len(),
            nsack.len(),
            dup.len(),
            dsack.len(),
            sack_row.len(),
        ] {
            if len != n {
                return Err(PyValueError::new_err("event columns of different lengths"));
            }
        }
        let mut events = Vec::with_capacity(n);
        for i in 0..n {
            let mut blocks = [(0i64, 0i64); MAX_SACK_BLOCKS];
            let k = (nsack[i].max(0) as usize).min(MAX_SACK_BLOCKS);
            if k > 0 {
                let row = sack_row[i];
                let base = usize::try_from(row).map_err(|_| PyValueError::new_err("an ACK with SACK blocks and no SACK row"))? * 2 * MAX_SACK_BLOCKS;
                if base + 2 * k > sack.len() {
                    return Err(PyValueError::new_err("SACK row out of range"));
                }
                for (b, block) in blocks.iter_mut().enumerate().take(k) {
                    *block = (sack[base + 2 * b], sack[base + 2 * b + 1]);
                }
            }
            let place = Placement::from_i8(placement[i]).ok_or_else(|| PyValueError::new_err(format!("unknown placement {}", placement[i])))?;
            let mut e = if kind[i] == Kind::Send as i8 {
                Event::send(time_ns[i], index[i], start[i], end[i], 0, tsval[i], place)
            } else {
                Event::ack(time_ns[i], index[i], ack[i], &blocks[..k], dsack[i], dup[i], -1, tsecr[i], 0)
            };
            e.placement = place;
            events.push(e);
        }
        let (rt, rv) = (rtt_t.as_slice()?, rtt_v.as_slice()?);
        let rtt: Vec<(i64, i64)> = rt.iter().copied().zip(rv.iter().copied()).collect();
        let facts = StreamFacts { mss, seq_anchor, turnaround_ns, receiver_turnaround_ns };
        self.tracker()?.feed(&events, now, &facts, &rtt);
        Ok(())
    }

    /// Records still held as objects: (resends, resent segments, episodes).
    fn live_records(&mut self) -> PyResult<(usize, usize, usize)> {
        Ok(self.tracker()?.live_records())
    }

    /// Bytes of the state that grows with the data outstanding (first transmissions, RTT queue).
    fn held_bytes(&mut self) -> PyResult<usize> {
        Ok(self.tracker()?.held_bytes())
    }

    /// Resends moved into their table so far.
    fn moved_retransmissions(&mut self) -> PyResult<usize> {
        Ok(self.tracker()?.moved_retransmissions())
    }

    /// Close what is open and hand back the result as a dict of columns and scalars.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.inner.take().ok_or_else(|| PyRuntimeError::new_err("the loss tracker has finished"))?;
        result_dict(py, t.finish())
    }
}

/// A direction's `LossResult` as the dict `loss.tracker.result_of` reads (also for the results of
/// the trackers the flow pipeline runs, src/py_flow.rs).
pub(crate) fn result_dict<'py>(py: Python<'py>, r: LossResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("retransmissions", table_dict(py, r.retransmissions)?)?;
    d.set_item("fills", table_dict(py, r.fills)?)?;
    d.set_item("episodes", table_dict(py, r.episodes)?)?;
    d.set_item("incidents", table_dict(py, r.incidents)?)?;
    d.set_item("lost", table_dict(py, r.lost)?)?;
    d.set_item("transmissions", r.transmissions)?;
    d.set_item("lost_flags", PyArray1::from_vec(py, r.lost_flags))?;
    d.set_item("lost_times", PyArray1::from_vec(py, r.lost_times))?;
    d.set_item("lost_records", PyArray1::from_vec(py, r.lost_records))?;
    d.set_item("thin_ns", r.thin_ns)?;
    d.set_item("busy_ns", r.busy_ns)?;
    d.set_item("network_duplicates", r.network_duplicates)?;
    d.set_item("reorderings", r.reorderings)?;
    d.set_item("srtt_full_ns", r.srtt_full_ns)?;
    d.set_item("rtd_samples_ns", PyArray1::from_vec(py, r.rtd_samples_ns))?;
    d.set_item("rto_rtd_samples_ns", PyArray1::from_vec(py, r.rto_rtd_samples_ns))?;
    Ok(d)
}

/// The sender-state transition table (src/loss/states.rs) as (state, kind, input, next
/// state, episode end or None) of names: `loss/states.py` builds `TRANSITIONS` from it.
#[pyfunction]
fn transitions() -> Vec<(&'static str, &'static str, &'static str, &'static str, Option<&'static str>)> {
    use crate::loss::states::{Input, TRANSITIONS};
    TRANSITIONS
        .iter()
        .map(|(s, what, next, ended)| {
            let (kind, name) = match what {
                Input::Resend(t) => ("trigger", t.name()),
                Input::Event(e) => ("event", e.name()),
            };
            (s.name(), kind, name, next.name(), ended.map(|e| e.name()))
        })
        .collect()
}

/// Register the loss stage's classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scoreboard>()?;
    m.add_class::<PyRfc6298>()?;
    m.add_class::<PyLossTracker>()?;
    m.add_function(wrap_pyfunction!(transitions, m)?)?;
    m.add("THIN_PACKETS", THIN_PACKETS)?;
    Ok(())
}
