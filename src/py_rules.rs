//! The shared TCP rules for the Python code that still applies them one value at a time:
//! duplicate ACK and D-SACK (`src/acks.rs`; the replay simulator) and 32-bit sequence
//! arithmetic (`src/seq.rs`; the lab and truth read raw sequence numbers).
//! `tcpsack_analyze.acks` and `tcpsack_analyze.seqspace` are these functions, so each rule has
//! one implementation.

use pyo3::prelude::*;

use crate::{acks, seq};

/// ``a - b`` modulo 2**32, as a signed number in [-2**31, 2**31).
#[pyfunction]
fn signed_diff(a: i64, b: i64) -> i64 {
    seq::signed_diff(a, b)
}

/// ``a + b`` as the 32-bit number on the wire (``b`` may be negative, or a relative offset).
#[pyfunction]
fn wire_add(a: i64, b: i64) -> i64 {
    seq::wire_add(a, b)
}

/// How far ``a`` lies ahead of ``b``: ``a - b`` modulo 2**32, in [0, 2**32).
#[pyfunction]
fn wire_sub(a: i64, b: i64) -> i64 {
    seq::wire_sub(a, b)
}

/// Whether the first SACK block of an ACK reports a duplicate (RFC 2883 section 4): ``l0, r0``
/// the first block, ``l1, r1`` the second (read only when ``nsack > 1``).
#[pyfunction]
fn dsack_first_block(ack: i64, nsack: usize, l0: i64, r0: i64, l1: i64, r1: i64) -> bool {
    let blocks = [(l0, r0), (l1, r1)];
    acks::dsack_first_block(ack, &blocks[..nsack.min(2)])
}

/// Whether an ACK is a duplicate ACK (RFC 5681 section 2, RFC 6675 section 2).
#[pyfunction]
fn duplicate_ack(pure: bool, same_ack: bool, outstanding: bool, same_window: bool, new_sack: bool) -> bool {
    acks::duplicate_ack(pure, same_ack, outstanding, same_window, new_sack)
}

/// Register the rules in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dsack_first_block, m)?)?;
    m.add_function(wrap_pyfunction!(duplicate_ack, m)?)?;
    m.add_function(wrap_pyfunction!(signed_diff, m)?)?;
    m.add_function(wrap_pyfunction!(wire_add, m)?)?;
    m.add_function(wrap_pyfunction!(wire_sub, m)?)?;
    m.add("SEQ_MOD", seq::MOD)?;
    m.add("SEQ_HALF", seq::HALF)?;
    Ok(())
}
