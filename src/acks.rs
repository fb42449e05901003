//! The rules that judge an ACK (DOMAIN.md section 3): D-SACK and duplicate ACK, once in the
//! core. Sequence numbers are unwrapped (`seq.rs`), so comparisons are plain.

/// Whether the first SACK block of an ACK reports a duplicate (a D-SACK).
///
/// RFC 2883 section 4 (and Linux's `tcp_check_dsack`): the first block starts below the ACK's
/// own cumulative ACK, or a second block exists and contains it. `blocks` are the ACK's SACK
/// blocks `(left, right)` in the option's order.
#[inline]
pub fn dsack_first_block(ack: i64, blocks: &[(i64, i64)]) -> bool {
    match blocks {
        [] => false,
        [(l0, _)] => *l0 < ack,
        [(l0, r0), (l1, r1), ..] => *l0 < ack || (l1 <= l0 && r0 <= r1),
    }
}

/// Whether an ACK is a duplicate ACK (DOMAIN.md section 3).
///
/// RFC 5681 section 2: it carries no data and no SYN/FIN/RST (`pure`), acknowledges the same
/// number as the receiver's previous ACK (`same_ack`) while data is outstanding
/// (`outstanding`), and advertises the same window (`same_window`); RFC 6675 section 2 also
/// counts it when it carries SACK information other than a D-SACK (`new_sack`).
#[inline]
pub fn duplicate_ack(pure: bool, same_ack: bool, outstanding: bool, same_window: bool, new_sack: bool) -> bool {
    pure && same_ack && outstanding && (same_window || new_sack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsack() {
        assert!(!dsack_first_block(100, &[]));
        assert!(dsack_first_block(100, &[(50, 60)]));
        assert!(!dsack_first_block(100, &[(150, 160)]));
        assert!(dsack_first_block(100, &[(150, 160), (140, 170)]));
        assert!(!dsack_first_block(100, &[(150, 160), (170, 180)]));
    }

    #[test]
    fn dupack() {
        assert!(duplicate_ack(true, true, true, true, false));
        assert!(duplicate_ack(true, true, true, false, true));
        assert!(!duplicate_ack(true, true, true, false, false));
        assert!(!duplicate_ack(false, true, true, true, true));
        assert!(!duplicate_ack(true, true, false, true, true));
    }
}
