"""SACK recovery (RFC 6675, classic and PRR reductions) and k-SACK (paper 004), by hand."""
from __future__ import annotations

from modelkit import SMSS, ack, send, seq

from tcpsack_analyze.models import INFINITE, SenderOptions, State, model_class
from tcpsack_analyze.models.base import SenderModel


def sacked_three(name: str, **options: object) -> SenderModel:
    """Ten segments sent, segment 0 lost, segments 1-3 SACKed by three duplicate ACKs."""
    m = model_class(name)(SMSS, SenderOptions(**options))  # type: ignore[arg-type]
    m.on_send(send(0, 0, count=10))
    for i in range(3):
        m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),)))
    return m


def test_classic_reduction() -> None:
    m = sacked_three("sack", reduction="classic")
    assert m.state is State.RECOVERY and m.board.in_recovery
    assert m.ssthresh == m.cwnd == 5 * SMSS  # RFC 6675 step 4.2: FlightSize / 2
    # 7 un-SACKed segments, segment 0 lost, and its fast retransmission counted from the entry
    # (RFC 6675 step 4.3: HighRxt covers it), so sending it changes nothing
    assert m.pipe == 7 * SMSS and not m.can_send()
    m.on_send(send(103, 0, resent=True))
    assert m.pipe == 7 * SMSS
    m.on_ack(ack(200, 10))  # step (A): RecoveryPoint reached, cwnd = ssthresh; then, as Linux's
    # tcp_cong_control, the ACK's 7 delivered segments count for congestion avoidance: +1
    assert m.state is State.CONGESTION_AVOIDANCE and m.cwnd == 6 * SMSS


def test_prr_lets_the_fast_retransmission_out_then_paces() -> None:
    m = sacked_three("sack")
    # RFC 6937: prr_delivered = 1 SMSS, pipe 6 (before the fast retransmission) > ssthresh 5:
    # sndcnt = ceil(1 * 5 / 10) = 1 SMSS, at least one segment while nothing was sent in recovery
    assert m.ssthresh == 5 * SMSS and m.cwnd == 7 * SMSS
    m.on_send(send(103, 0, resent=True))
    assert m.pipe == m.cwnd and not m.can_send()
    m.on_ack(ack(110, 0, sack=((1, 5),)))  # prr_delivered 2: ceil(2 * 5 / 10) - 1 = 0
    assert m.cwnd == m.pipe == 6 * SMSS
    m.on_ack(ack(200, 10))
    assert m.cwnd == 6 * SMSS and m.state is State.CONGESTION_AVOIDANCE


def test_prr_slow_start_reduction_bound_below_ssthresh() -> None:
    m = sacked_three("sack")
    m.on_send(send(103, 0, resent=True))
    m.on_ack(ack(110, 0, sack=((1, 8),)))  # many delivered: pipe 3 < ssthresh 5
    # PRR-SSRB: sndcnt = min(ssthresh - pipe, max(prr_delivered - prr_out, DeliveredData) + SMSS)
    assert m.pipe == 3 * SMSS and m.cwnd == 5 * SMSS


def test_rack_presumes_every_hole_below_the_highest_sack_lost_in_recovery() -> None:
    m = model_class("sack")(SMSS, SenderOptions(rack=True))
    m.on_send(send(0, 0, count=10))
    m.on_ack(ack(100, 0, sack=((1, 2),)))
    m.on_ack(ack(101, 0, sack=((1, 2), (3, 4))))
    m.on_ack(ack(102, 0, sack=((1, 2), (3, 4), (5, 6))))
    assert m.state is State.RECOVERY
    # 7 un-SACKed segments; IsLost: only segment 0 (three SACKed above it), RACK: 0, 2 and 4
    # (below the highest SACK); plus the fast retransmission of segment 0
    assert m.pipe == 5 * SMSS and m.board.pipe() == 7 * SMSS


def test_ksack_halts_growth_for_one_loss() -> None:
    m = sacked_three("ksack")
    assert m.state is State.RECOVERY and m.cwnd == 10 * SMSS and m.ssthresh == INFINITE
    m.on_ack(ack(200, 10))  # growth unfrozen: slow start goes on
    assert m.state is State.SLOW_START and m.cwnd == 11 * SMSS


def test_ksack_halves_once_for_k_losses_then_again_on_reentry() -> None:
    m = model_class("ksack")(SMSS, SenderOptions(initial_window=12))
    m.on_send(send(0, 0, count=12))
    m.on_ack(ack(100, 0, sack=((1, 2),)))
    m.on_ack(ack(101, 0, sack=((1, 2), (3, 4))))
    m.on_ack(ack(102, 0, sack=((1, 2), (3, 5))))
    assert m.state is State.RECOVERY and m.lookahead_loss() == 1 and m.cwnd == 12 * SMSS  # halt growth
    m.on_ack(ack(103, 0, sack=((1, 2), (3, 6))))  # segment 2 now lost too: k = 2
    assert m.lookahead_loss() == 2 and m.ssthresh == m.cwnd == 6 * SMSS  # k-recovery
    m.on_send(send(104, 0, resent=True))
    m.on_ack(ack(150, 2, sack=((3, 6),)))  # back below k: halt growth
    assert m.lookahead_loss() == 1 and m.cwnd == 6 * SMSS
    m.on_ack(ack(151, 2, sack=((3, 6), (7, 10))))  # segment 6 lost as well: re-entry
    assert m.lookahead_loss() == 2 and m.cwnd == 3 * SMSS and m.ssthresh == 6 * SMSS


def test_sack_model_emulates_sack_from_dupacks_without_sack_blocks() -> None:
    m = model_class("sack")(SMSS, SenderOptions(reduction="classic"))
    m.on_send(send(0, 0, count=10))
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    assert m.state is State.RECOVERY and m.pipe == 7 * SMSS  # as if segments 1-3 were SACKed


def test_linux_ssthresh_halves_cwnd_in_whole_segments() -> None:
    m = sacked_three("sack", ssthresh_from="cwnd", reduction="classic", initial_window=11)
    assert m.ssthresh == 5 * SMSS  # tcp_reno_ssthresh: snd_cwnd >> 1 = 11 >> 1 packets


def test_emulated_sack_after_a_partial_ack_leaves_the_new_hole_open() -> None:
    """A receiver that never SACKs: each duplicate ACK stands for one segment beyond the hole
    (Linux's tcp_add_reno_sack). Segments 0 and 4 lost, 1-3 and 5-9 arrive: 8 duplicate ACKs.
    The partial ACK of segments 0-3 (after the fast retransmission) leaves 8 - 3 = 5 segments
    counted beyond the new hole at segment 4 (tcp_remove_reno_sacks), laid out from segment 5:
    segment 4 is not taken for delivered, and it is lost (IsLost: 5 SACKed segments above it)."""
    m = model_class("sack")(SMSS, SenderOptions())
    m.on_send(send(0, 0, count=10))
    for i in range(8):
        m.on_ack(ack(100 + i, 0, dup=True))
    assert m.state is State.RECOVERY and m.board.sacked_bytes == 8 * SMSS
    m.on_send(send(108, 0, resent=True))
    m.on_ack(ack(200, 4))  # partial ACK
    b = m.board
    assert m.state is State.RECOVERY and b.high_ack == seq(4)
    assert b.sacked_within(seq(4), seq(5)) == 0 and list(b.sacked_ranges()) == [(seq(5), seq(10))]
    assert b.is_lost(seq(4)) and m.pipe == 0  # 4 lost, 5-9 counted delivered
    m.on_send(send(201, 4, resent=True))
    m.on_ack(ack(300, 10))  # full ACK: recovery ends and the emulated count is forgotten
    assert m.state is not State.RECOVERY and m.board.sacked_bytes == 0


def test_emulated_sack_is_forgotten_when_an_ack_ends_the_rto_state() -> None:
    m = model_class("sack")(SMSS, SenderOptions(expunge_sack_on_rto=False))
    m.on_send(send(0, 0, count=10))
    m.on_ack(ack(100, 0, dup=True))
    m.on_ack(ack(101, 0, dup=True))
    m.on_timeout(1_500 * 1_000_000)
    assert m.state is State.LOSS and m.board.sacked_bytes == 2 * SMSS  # kept across the RTO (Linux)
    m.on_send(send(1_500, 0, resent=True))
    m.on_ack(ack(1_600, 1))  # tcp_process_loss: snd_una advanced, tcp_reset_reno_sack
    assert m.board.sacked_bytes == 0


def test_ns3_emulated_sack_kept_the_head_marked_lost_and_recovery_on_one_dupack() -> None:
    """ns-3 without SACK (bookkeeping="ns3", TcpTxBuffer): two duplicate ACKs mark segments 1 and
    2 SACKed (limited transmit, AddRenoSack); a cumulative ACK of segments 0-1 removes the mark
    on 1 and lands on 2, which ns-3 unmarks, marks lost (MarkHeadAsLost) and replaces by a mark
    on 3 (DiscardUpTo). The next duplicate ACK starts recovery at once (IsLost(HighACK + 1)),
    with ssthresh from ns-3's BytesInFlight: 8 outstanding less 2 emulated = 6, halved. The
    Linux emulation needs three duplicate ACKs."""
    m = model_class("sack")(SMSS, SenderOptions.ns3())
    m.on_send(send(0, 0, count=10))
    m.on_ack(ack(100, 0, dup=True))
    m.on_ack(ack(101, 0, dup=True))
    m.on_ack(ack(110, 2))
    assert m.head_marked_lost and list(m.board.sacked_ranges()) == [(seq(3), seq(4))]
    assert m.state is not State.RECOVERY
    m.on_ack(ack(111, 2, dup=True))
    assert m.state is State.RECOVERY and m.ssthresh == 3 * SMSS
    linux = model_class("sack")(SMSS, SenderOptions())
    linux.on_send(send(0, 0, count=10))
    for t, n, dup in ((100, 0, True), (101, 0, True), (110, 2, False), (111, 2, True)):
        linux.on_ack(ack(t, n, dup=dup))
    assert linux.state is not State.RECOVERY and not linux.head_marked_lost


def test_ns3_emulated_sack_survives_the_end_of_recovery_and_goes_on_an_rto() -> None:
    """ns-3 keeps its emulated count when recovery ends (no tcp_reset_reno_sack), resets it on an
    RTO (ResetRenoSack) and adds none for duplicate ACKs in the RTO state (DupAck returns)."""
    m = model_class("sack")(SMSS, SenderOptions.ns3())
    m.on_send(send(0, 0, count=10))
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    assert m.state is State.RECOVERY and m.ssthresh == 3500  # (10 - 3) / 2 segments
    m.on_send(send(103, 0, resent=True))
    m.on_send(send(104, 10, count=3))  # new data while in recovery
    for i in range(9):  # 12 duplicate ACKs in all: segments 1-12 marked
        m.on_ack(ack(110 + i, 0, dup=True))
    assert m.board.sacked_bytes == 12 * SMSS
    # full ACK of 0-10 (recover = 10): 11 and 12 keep their marks, the head's (11) moves on to
    # the next segment, of which there is none: one mark left, on 12, and the head marked lost
    m.on_ack(ack(200, 11))
    assert m.state is not State.RECOVERY and m.head_marked_lost
    assert list(m.board.sacked_ranges()) == [(seq(12), seq(13))]
    m.on_timeout(2_000 * 1_000_000)
    assert m.state is State.LOSS and m.board.sacked_bytes == 0 and not m.head_marked_lost
    m.on_ack(ack(2_100, 11, dup=True))
    assert m.board.sacked_bytes == 0 and m.state is State.LOSS


def test_ns3_prr_counts_a_segment_more_per_duplicate_ack() -> None:
    """ns-3's TcpPrrRecovery, called from DupAck with isDupAck: DeliveredData is the octets the
    ACK SACKs plus one segment while prr_delivered < RecoverFS (ns-3's pipe at entry, 6
    segments here: 10 less 3 SACKed less 0, lost). Ten segments, 0 lost, SACKs for 1-3 start
    recovery (ssthresh 3, half that pipe), 0 is resent; SACKs for 4, 5, 6: prr_delivered 2, 3, 4 segments by RFC 6937, 3, 5, 7 by ns-3, and
    cwnd = pipe + ceil(prr_delivered * ssthresh / RecoverFS) - prr_out."""
    seen = {}
    for bookkeeping in ("rfc", "ns3"):
        m = model_class("sack")(SMSS, SenderOptions(ssthresh_from="pipe", bookkeeping=bookkeeping))
        m.on_send(send(0, 0, count=10))
        for i in range(3):
            m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),)))
        m.on_send(send(103, 0, resent=True))
        seen[bookkeeping] = []
        for i in range(3, 6):
            m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),)))
            seen[bookkeeping].append(m.cwnd)
    def cwnd(pipe: int, delivered: int) -> int:
        return pipe - (-delivered * 3000 // 6000) - 1000

    assert seen["rfc"] == [cwnd(6000, 2000), cwnd(5000, 3000), cwnd(4000, 4000)]
    assert seen["ns3"] == [cwnd(6000, 3000), cwnd(5000, 5000), cwnd(4000, 7000)]


def test_ns3_restarts_the_timer_on_the_first_partial_ack_only() -> None:
    """ns-3's NewAck(ack, m_isFirstPartialAck): in recovery only the first partial ACK restarts
    the retransmission timer (RFC 6582's Impatient variant), so a long run of partial ACKs ends
    in an RTO; the RFCs' sender restarts it on every ACK of new data (RFC 6298 5.3)."""
    deadlines = {}
    for bookkeeping in ("rfc", "ns3"):
        m = model_class("sack")(SMSS, SenderOptions(bookkeeping=bookkeeping))
        m.on_send(send(0, 0, count=10))
        for i in range(3):  # 0, 4 and 8 lost; 1-3, 5-7 and 9 SACKed
            m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),)))
        m.on_ack(ack(103, 0, sack=((1, 4), (5, 8), (9, 10))))
        assert m.state is State.RECOVERY
        m.on_ack(ack(200, 4, sack=((5, 8), (9, 10))))  # partial ACKs: 0 repaired, then 4
        first = m.rto_deadline_ns
        m.on_ack(ack(300, 8, sack=((9, 10),)))
        assert m.state is State.RECOVERY
        deadlines[bookkeeping] = (first, m.rto_deadline_ns)
    assert deadlines["ns3"][1] == deadlines["ns3"][0]
    assert deadlines["rfc"][1] == deadlines["rfc"][0] + 100 * 1_000_000
