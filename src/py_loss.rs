//! PyO3 classes of the loss stage: the RFC 6675 scoreboard (`tcpsack_analyze.scoreboard`
//! wraps it with the same Python API as before), the RFC 6298 estimator (`rtt.Rfc6298`) and the
//! loss tracker (`loss/tracker.py` wraps it: event columns in, record columns out).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

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

/// Register the loss stage's classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scoreboard>()?;
    m.add_class::<PyRfc6298>()?;
    Ok(())
}
