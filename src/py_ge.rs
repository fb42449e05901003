//! The Gilbert-Elliott fits (src/ge.rs) for Python: loss sequences in as one bool column with
//! offsets, the estimates and fits out as columns (`tcpsack_analyze/loss/patterns.py` builds its
//! `GilbertElliott` objects from them).

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::ge::{self, Model, MAX_ITERATIONS, MIN_FIT_SEGMENTS, START_MARGIN, TOLERANCE};

/// The sequences `lost[offsets[i]:offsets[i + 1]]`, checked.
fn cut<'a>(lost: &'a [bool], offsets: &[i64]) -> PyResult<Vec<&'a [bool]>> {
    if offsets.first().is_some_and(|&o| o != 0) || offsets.last().is_some_and(|&o| o as usize != lost.len()) || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(PyValueError::new_err("offsets must rise from 0 to the length of lost"));
    }
    Ok(offsets.windows(2).map(|w| &lost[w[0] as usize..w[1] as usize]).collect())
}

/// The columns of `models` (one per sequence, None where there is none) into `out`, their names
/// prefixed; `found` says which sequences have one.
fn columns(py: Python<'_>, out: &Bound<'_, PyDict>, prefix: &str, models: &[Option<Model>]) -> PyResult<()> {
    let take = |f: fn(&Model) -> f64| models.iter().map(|m| m.as_ref().map_or(f64::NAN, f)).collect::<Vec<f64>>();
    out.set_item(format!("{prefix}found"), PyArray1::from_vec(py, models.iter().map(Option::is_some).collect()))?;
    out.set_item(format!("{prefix}p"), PyArray1::from_vec(py, take(|m| m.p)))?;
    out.set_item(format!("{prefix}r"), PyArray1::from_vec(py, take(|m| m.r)))?;
    out.set_item(format!("{prefix}loss_good"), PyArray1::from_vec(py, take(|m| m.loss_good)))?;
    out.set_item(format!("{prefix}loss_bad"), PyArray1::from_vec(py, take(|m| m.loss_bad)))?;
    out.set_item(format!("{prefix}log_likelihood"), PyArray1::from_vec(py, take(|m| m.log_likelihood)))?;
    let iterations = models.iter().map(|m| m.map_or(0, |m| i64::from(m.iterations))).collect();
    out.set_item(format!("{prefix}iterations"), PyArray1::from_vec(py, iterations))?;
    out.set_item(format!("{prefix}converged"), PyArray1::from_vec(py, models.iter().map(|m| m.is_some_and(|m| m.converged)).collect()))?;
    Ok(())
}

/// The simple Gilbert estimate (columns ``gilbert_*``) and, with ``fit``, the Baum-Welch fit
/// (columns ``fit_*``) of every sequence ``lost[offsets[i]:offsets[i + 1]]``; each column has
/// one row per sequence, ``*found`` False (and the floats NaN) where there is none. Each
/// sequence is fitted on its own (src/ge.rs), without the GIL.
#[pyfunction]
#[pyo3(signature = (lost, offsets, fit=true, max_iterations=MAX_ITERATIONS, tolerance=TOLERANCE))]
fn gilbert_elliott<'py>(
    py: Python<'py>,
    lost: PyReadonlyArray1<'py, bool>,
    offsets: PyReadonlyArray1<'py, i64>,
    fit: bool,
    max_iterations: u32,
    tolerance: f64,
) -> PyResult<Bound<'py, PyDict>> {
    if max_iterations < 1 {
        return Err(PyValueError::new_err(format!("max_iterations must be at least 1, not {max_iterations}")));
    }
    let (lost, offsets) = (lost.as_slice()?, offsets.as_slice()?);
    let sequences = cut(lost, offsets)?;
    let (estimates, fits) = py.detach(|| {
        let estimates: Vec<Option<Model>> = sequences.iter().map(|s| ge::gilbert_estimate(s)).collect();
        let fits: Vec<Option<Model>> = if fit { sequences.iter().map(|s| ge::fit(s, max_iterations, tolerance)).collect() } else { Vec::new() };
        (estimates, fits)
    });
    let out = PyDict::new(py);
    columns(py, &out, "gilbert_", &estimates)?;
    if fit {
        columns(py, &out, "fit_", &fits)?;
    }
    Ok(out)
}

/// Add the functions and constants to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gilbert_elliott, m)?)?;
    m.add("GE_MIN_FIT_SEGMENTS", MIN_FIT_SEGMENTS)?;
    m.add("GE_MAX_ITERATIONS", MAX_ITERATIONS)?;
    m.add("GE_TOLERANCE", TOLERANCE)?;
    m.add("GE_START_MARGIN", START_MARGIN)?;
    Ok(())
}
