"""Open-loop inference on hand-made conversations: what each model permits, in words."""
from __future__ import annotations

from modelkit import SMSS, ack, send

from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.models import SenderOptions
from tcpsack_analyze.models.infer import infer_direction, run_model, sender_mss

RFC = SenderOptions.rfc()


def texts(name: str, events: list, options: SenderOptions = RFC) -> list[str]:  # type: ignore[type-arg]
    return [v.text for v in run_model(name, EventBatch.of(events), SMSS, options).violations]


def test_sends_beyond_cwnd() -> None:
    assert texts("reno", [send(0, 0, count=14)]) == ["sent 3 segments beyond cwnd"]
    assert texts("reno", [send(0, 0, count=10)]) == []


def test_early_fast_retransmit() -> None:
    conv = [send(0, 0, count=10), ack(100, 0, dup=True), send(101, 0, resent=True)]
    assert texts("reno", conv) == ["retransmitted after 1 dupACK"]
    conv3 = [send(0, 0, count=10), *(ack(100 + i, 0, dup=True) for i in range(3)), send(104, 0, resent=True)]
    assert texts("reno", conv3) == []


def test_rack_explains_a_retransmission_below_sacked_data() -> None:
    conv = [send(0, 0, count=10), ack(100, 0, sack=((1, 2),), dup=True), send(101, 0, resent=True)]
    assert texts("sack", conv) == ["retransmitted after 1 dupACK"]
    assert texts("sack", conv, SenderOptions(rack=True)) == []


def test_early_timeout_and_missing_backoff() -> None:
    early = [send(0, 0), send(500, 0, resent=True)]
    assert texts("reno", early) == ["retransmitted 500 ms before the RTO expired, with no dupACK"]
    no_backoff = [send(0, 0), send(1000, 0, resent=True), send(2000, 0, resent=True)]
    assert texts("reno", no_backoff) == ["no backoff on the second RTO"]
    backoff = [send(0, 0), send(1000, 0, resent=True), send(3000, 0, resent=True)]
    assert texts("reno", backoff) == []
    linear = SenderOptions(thin_linear_timeouts=True)
    assert texts("reno", no_backoff, linear) == []


def test_ns3_resends_a_head_it_marked_lost_and_refast_retransmits_it() -> None:
    """ns-3 without SACK: a cumulative ACK landing on an emulated SACKed segment marks the new
    head lost and ns-3 resends it at once, in Open; the next duplicate ACK starts recovery and the
    head goes again as its fast retransmission (ns-3's "other" then "fast" resends of
    tests/data/ns3). bookkeeping="ns3" explains both; the Linux emulation neither."""
    conv = [send(0, 0, count=10), ack(100, 0, dup=True), ack(101, 0, dup=True), ack(110, 2),
            send(110, 2, resent=True), ack(120, 2, dup=True), send(120, 2, resent=True)]
    assert texts("sack", conv, SenderOptions.ns3()) == []
    assert texts("sack", conv) == [  # the model follows the first into an RTO: the second needs a backed-off one
        "retransmitted 1000 ms before the RTO expired, with no dupACK",
        "retransmitted the same segment again 1990 ms before the RTO expired, with no dupACK"]


def test_tail_loss_probe() -> None:
    conv = [send(0, 0, tsval=0), ack(100, 1, tsecr=0), send(110, 1, count=3), send(320, 3, resent=True)]
    assert texts("sack", conv, SenderOptions(tlp=True)) == []
    assert texts("sack", conv) == ["retransmitted 790 ms before the RTO expired, with no dupACK"]


def test_run_records_one_row_per_ack() -> None:
    conv = [send(0, 0, count=4), ack(100, 2), ack(101, 4)]
    run = run_model("reno", EventBatch.of(conv), SMSS, RFC)
    assert run.cwnd.tolist() == [11 * SMSS, 12 * SMSS] and run.flight.tolist() == [2 * SMSS, 0]
    assert run.sends == 1 and run.conformance == 1.0
    frame = run.frame(SMSS)
    assert list(frame["cwnd_segments"]) == [11.0, 12.0] and list(frame["state"]) == ["slow_start"] * 2


def test_ranking_and_verdict() -> None:
    # a sender that halves its window on loss and then sends 7 segments: Reno-like, not CUBIC-like
    conv = [send(0, 0, count=10), *(ack(100 + i, 0, dup=True) for i in range(3)), send(104, 0, resent=True),
            ack(200, 10), send(201, 10, count=5)]
    inf = infer_direction(EventBatch.of(conv), SMSS, ["reno", "tahoe"], RFC)
    assert [r.model for r in inf.runs] == ["reno", "tahoe"]
    assert inf.best is not None and inf.best.model == "reno" and inf.confidence == 1.0
    assert inf.verdict == "reno (confidence 1.00)"
    assert inf.naive_segments is not None


def test_directions_where_no_model_can_run() -> None:
    only_acks = EventBatch.of([ack(0, 0)])
    assert infer_direction(only_acks, SMSS, ["reno"]).verdict == "no data sent in this direction: no model can run"
    one_way = EventBatch.of([send(0, 0, count=3)])
    inf = infer_direction(one_way, SMSS, ["reno"])
    assert inf.status.startswith("no ACKs") and inf.best is None and inf.runs == ()


def test_sender_mss_is_the_common_payload() -> None:
    batch = EventBatch.of([send(0, 0, count=1), send(1, 1, count=1), send(2, 2, count=3)])
    assert sender_mss(batch, 1460) == SMSS  # the 3-segment send is TSO
    assert sender_mss(EventBatch.of([ack(0, 0)])) == 0


def test_sender_section() -> None:
    from tcpsack_analyze.models.section import sender_section

    conv = [send(0, 0, count=10), *(ack(100 + i, 0, dup=True) for i in range(3)), send(104, 0, resent=True),
            ack(200, 10), send(201, 10, count=5)]
    sec = sender_section(infer_direction(EventBatch.of(conv), SMSS, ["reno", "tahoe"], RFC))
    assert sec.best == "reno" and sec.verdict == "reno (confidence 1.00)" and sec.conformance == 1.0
    assert sec.cwnd_segments == {"min": 5.0, "median": 9.0, "max": 10.0} and sec.recoveries == 1  # 10 10 8 5
    assert sec.to_dict()["schema_version"] == 1
    none = sender_section(infer_direction(EventBatch.of([send(0, 0)]), SMSS, ["reno"]))
    assert none.best is None and none.verdict.startswith("no ACKs") and none.cwnd_segments is None


def test_one_window_violation_per_run_of_sends_with_the_largest_excess() -> None:
    conv = [send(0, 0, count=12), send(1, 12, count=2), send(2, 0, resent=True), send(3, 14, count=3)]
    run = run_model("reno", EventBatch.of(conv), SMSS, RFC)
    # 12 then 14 segments against cwnd 10: one violation, the largest excess (14 - 10 - 1);
    # the early retransmission keeps its own text; the send after it joins the same run
    assert [v.text for v in run.violations] == [
        "sent 3 segments beyond cwnd", "retransmitted 998 ms before the RTO expired, with no dupACK"]
    assert run.nonconforming == 4
