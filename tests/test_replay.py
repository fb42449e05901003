"""The closed-loop replay: receiver, loss processes, sender, simulator, capture-level API and CLI."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path as FsPath

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from modelkit import ack, send
from tcpbuild import Conversation

from tcpsack_analyze.cli import main
from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.models import SenderOptions, model_class
from tcpsack_analyze.replay.capture import replay_capture
from tcpsack_analyze.replay.loss import LossSpec, ObservedLoss, lost_copies, parse
from tcpsack_analyze.replay.path import IN_ORDER_ACKS_MIN, acks_every_segment
from tcpsack_analyze.replay.receiver import Receiver
from tcpsack_analyze.replay.sender import Application, Sender
from tcpsack_analyze.replay.simulate import Path
from tcpsack_analyze.replay.whatif import replay_model, replay_models

ROOT = FsPath(__file__).resolve().parent.parent
RENO = str(ROOT / "sample_traces/lab_reno_sack_bursty/sender.pcap")
MS = 1_000_000
SMSS = 1000


# ------------------------------------------------------------------ receiver

def test_receiver_delays_acks_and_sacks_above_a_hole() -> None:
    r = Receiver(1, delack_ns=40 * MS)
    assert r.on_segment(1, 1001, 7, 0) is None  # the first in-order segment waits
    assert r.timer_ns == 40 * MS
    a = r.on_segment(1001, 2001, 8, 1)
    assert a is not None and (a.ack, a.sack, a.tsecr) == (2001, (), 8)  # every second segment
    a = r.on_segment(3001, 4001, 9, 2)  # above a hole: at once, with SACK, echoing the last in-order TSval
    assert a is not None and (a.ack, a.sack, a.tsecr) == (2001, ((3001, 4001),), 8)
    a = r.on_segment(2001, 3001, 10, 3)  # fills the hole: at once
    assert a is not None and (a.ack, a.sack, a.tsecr) == (4001, (), 10)
    assert r.on_segment(5001, 6001, 11, 4) is not None
    assert r.on_segment(1, 1001, 12, 5) is not None  # a duplicate: at once
    assert r.on_segment(4001, 5001, 13, 6) is not None
    assert r.on_segment(6001, 7001, 14, 7) is None
    assert r.on_timer(7 + 39 * MS) is None and r.on_timer(7 + 40 * MS) is not None


def test_receiver_without_sack_or_delay() -> None:
    r = Receiver(1, sack=False, delayed=False)
    a = r.on_segment(1, 101, None, 0)
    assert a is not None and a.ack == 101
    a = r.on_segment(201, 301, None, 1)
    assert a is not None and (a.ack, a.sack) == (101, ())


# ------------------------------------------------------------------ loss processes

def test_parse_loss() -> None:
    assert parse("observed") == LossSpec("observed") and parse("ge").kind == "ge"
    assert parse("random:0.05") == LossSpec("random", p=0.05)
    assert parse("bursty:0.01,3") == LossSpec("bursty", p=0.01, burst=3) == parse("bursty:0.01:3")
    for bad in ("random:2", "bursty:0.01,2.5", "bursty:0.01", "uniform:0.1", "random:x"):
        with pytest.raises(ValueError):
            parse(bad)


def test_observed_losses_by_octet_and_copy() -> None:
    # the original of [1001, 2001) and its first resend were lost, and the original of [5001, 6001)
    lost = lost_copies(np.array([1000, 1000, 5000]), np.array([2000, 2000, 6000]), np.array([True, False, True]), first=0)
    assert lost == ((1001, 2001, 0), (1001, 2001, 1), (5001, 6001, 0))
    m = ObservedLoss(lost)
    fates = [m.drop_segment(1, 1001), m.drop_segment(1001, 2001), m.drop_segment(1001, 2001),
             m.drop_segment(1001, 2001), m.drop_segment(5001, 6001), m.drop_segment(5501, 6501)]
    assert fates == [False, True, True, False, True, False]  # [5501, 6501): half of it only


def test_loss_spec_is_fresh_and_seeded() -> None:
    spec = LossSpec("bursty", p=0.05, burst=3)
    a = [spec.make(3).drop() for _ in range(200)]
    b = [spec.make(3).drop() for _ in range(200)]
    assert a == b
    one = spec.make(3)
    assert [one.drop() for _ in range(200)] != [spec.make(4).drop() for _ in range(200)]


# ------------------------------------------------------------------ simulator

PATH = Path(50 * MS, rate_Bps=250_000, queue=30, window=64_000)


def test_deterministic_for_a_seed() -> None:
    loss = LossSpec("random", p=0.03)
    a = replay_model("sack", PATH, SMSS, 300_000, loss, seed=7)
    b = replay_model("sack", PATH, SMSS, 300_000, loss, seed=7)
    c = replay_model("sack", PATH, SMSS, 300_000, loss, seed=8)
    assert a.outcome == b.outcome and a.trace.drops == b.trace.drops
    assert np.array_equal(a.trace.events.time_ns, b.trace.events.time_ns)
    assert a.trace.drops != c.trace.drops


def test_no_loss_every_model_finishes_at_the_bottleneck_rate() -> None:
    deep = dataclasses.replace(PATH, queue=None)  # room for the whole window: no drop at all
    for run in replay_models(["tahoe", "reno", "newreno", "sack", "ksack", "cubic"], deep, SMSS, 500_000, LossSpec("none")):
        o = run.outcome
        assert o.finished and o.octets == 500_000 and o.retransmissions == 0 and o.timeouts == 0, run.model
        assert 0.8 * 250_000 < o.throughput_Bps <= 250_000, run.model  # slow start, then the link


def test_drop_tail_queue_drops_in_slow_start() -> None:
    run = replay_model("sack", PATH, SMSS, 500_000, LossSpec("none"))
    assert "queue" in run.trace.drops and "loss" not in run.trace.drops
    assert run.outcome.lost == run.trace.drops.count("queue")  # the tracker sees each drop


def test_a_burst_of_three_sack_recovers_reno_times_out() -> None:
    """Paper 000's point in one window: three losses in a row. The SACK sender resends the three
    in one recovery, no timeout; Reno leaves recovery on the first partial ACK and needs the timer."""
    lost = ((20_001, 21_001, 0), (21_001, 22_001, 0), (22_001, 23_001, 0))
    path = Path(50 * MS, window=16_000)
    sack = replay_model("sack", path, SMSS, 60_000, LossSpec.observed(lost)).outcome
    reno = replay_model("reno", path, SMSS, 60_000, LossSpec.observed(lost)).outcome
    assert (sack.retransmissions, sack.timeouts, sack.lost) == (3, 0, 3)
    assert reno.timeouts >= 1 and reno.duration_s > sack.duration_s + 0.5


def test_lost_retransmission_is_lost_again_by_position() -> None:
    lost = ((5_001, 6_001, 0), (5_001, 6_001, 1))
    o = replay_model("sack", Path(50 * MS), SMSS, 30_000, LossSpec.observed(lost)).outcome
    assert o.lost == 2 and o.timeouts == 1  # the resend lost too: only the timer repairs it (RFC 6675 5.1)


def test_sack_model_with_a_receiver_that_does_not_sack_never_stalls() -> None:
    """Found by the property below: blocks a SACK model emulated from duplicate ACKs covered the
    hole after a partial ACK, and only an RTO (go-back-N, which skips real SACK blocks only)
    ended the transfer. Emulated blocks are now laid out again above the new hole after a
    partial ACK (Scoreboard.relay_sacked, as Linux's tcp_remove_reno_sacks): the second loss
    is repaired in the same recovery, without a timeout."""
    run = replay_model("sack", Path(1 * MS, sack=False, delayed_acks=False), 536, 19_297, LossSpec("random", p=0.125),
                       options=SenderOptions.linux(), seed=0)
    o = run.outcome
    assert o.finished and o.lost == 2 and o.timeouts == 0 and o.slow_starts == 1 and o.episodes == 1


def test_bundling_resends_carry_the_outstanding_data() -> None:
    """Paper 001 section 4.3.2 (Linux's tcp_retrans_collapse): the resend of a lost small segment
    carries the segments sent after it, up to SMSS; without bundling it repeats the segment."""
    app = Application(400, write=100, interval_ns=1 * MS)  # four 100-octet segments, 1 ms apart
    lost = LossSpec.observed(((1, 101, 0),))
    for bundle, end in ((True, 401), (False, 101)):
        run = replay_model("reno", Path(100 * MS, delayed_acks=False), 1448, app, lost, bundle=bundle)
        ev = run.trace.events
        resent = [(int(ev.start[i]), int(ev.end[i])) for i in np.flatnonzero(ev.is_send) if ev.placement[i] == 1]
        assert resent[0] == (1, end) and run.outcome.finished and run.outcome.timeouts == 0


def test_thin_application_and_rescue() -> None:
    app = Application(4_000, write=400, interval_ns=250 * MS)
    assert [app.available(t * MS) for t in (0, 249, 250, 10_000)] == [400, 400, 800, 4_000]
    assert app.next_write_ns(0) == 250 * MS and app.next_write_ns(10_000 * MS) is None
    o = replay_model("sack", Path(100 * MS), SMSS, app, LossSpec("none")).outcome
    assert o.finished and 2.25 < o.duration_s < 2.6  # the last write at 2.25 s, then its RTT


def test_initial_ssthresh_option() -> None:
    from tcpsack_analyze.models import model_class

    m = model_class("reno")(SMSS, dataclasses.replace(SenderOptions.rfc(), initial_ssthresh=8 * SMSS, initial_window=10))
    assert m.ssthresh == 8 * SMSS and m.state.value == "congestion_avoidance"


# ------------------------------------------------------------------ a capture

def test_replay_capture_observed_losses() -> None:
    r = replay_capture(RENO, ["sack", "reno"])
    a2b, b2a = r.directions
    assert a2b.status == "ok" and b2a.status.startswith("no data sent in this direction")
    obs = a2b.observed
    assert obs is not None and obs.finished and obs.retransmissions == 39
    assert a2b.fit is not None and a2b.fit.path.sack and a2b.fit.smss == 1448 and a2b.fit.octets == 2_000_000
    sack, reno = (run.outcome for run in a2b.runs)
    assert sack.lost >= 39 and sack.timeouts == 0  # the same 39 holes (more segments where sizes differ)
    assert reno.timeouts > 0 and reno.throughput_Bps < sack.throughput_Bps
    df = r.frame()
    assert list(df["label"]) == ["observed", "sack", "reno"] and set(df["direction"]) == {"a2b"}
    inc = r.incidents_df()  # recovery time per incident, observed and each model
    per = inc.groupby("label")["recovery_ms"]
    for row in df.itertuples():
        assert per.count()[row.label] > 0
        assert abs(per.mean()[row.label] - row.recovery_mean_ms) < 1e-6 and abs(per.max()[row.label] - row.recovery_max_ms) < 1e-6


def test_receiver_side_thin_stream_and_fitted_ge() -> None:
    """Near the receiver the base RTT takes the turnaround to the sender; a thin stream keeps its
    pace with the observed application; ``ge`` replays the report's Gilbert-Elliott fit."""
    d = replay_capture(str(ROOT / "sample_traces/lab_receiver_side/receiver.pcap"), ["sack"]).directions[0]
    assert d.vantage == "near receiver" and d.fit is not None and d.fit.path.rtt_ns > 45 * MS
    # no queue in the RTT samples, and an ACK clock of 70 MB/s, over 100 x the transfer's goodput:
    # the capture host's timing, no link
    assert "turnaround to the sender" in d.fit.notes[0] and d.fit.path.rate_Bps is None
    thin = replay_capture(str(ROOT / "sample_traces/lab_thin_stream/sender.pcap"), ["reno"], app="observed").directions[0]
    assert thin.observed is not None and thin.fit is not None and thin.fit.smss == 100
    o = thin.runs[0].outcome
    assert o.finished and abs(o.duration_s - thin.observed.duration_s) < 0.05 * thin.observed.duration_s  # the app's pace
    ge = replay_capture(RENO, ["sack"], loss="ge", seed=3).directions[0]
    assert ge.loss.startswith("Gilbert-Elliott fitted to the capture") and ge.runs[0].outcome.lost > 0


def test_one_way_capture_says_so(tmp_path: FsPath) -> None:
    c = Conversation()
    c.send("a", 0.0, 0, flags="S")
    c.send("b", 0.05, 0, 1, flags="SA")
    c.send("a", 0.1, 1, 1)
    for k in range(5):
        c.send("a", 0.1 + k * 0.001, 1 + k * 100, 1, flags="PA", length=100)
    path = tmp_path / "oneway.pcap"
    c.write(path)
    d = replay_capture(str(path), ["sack"]).directions[0]
    assert d.status.startswith("no ACKs") or d.status.startswith("no RTT"), d.status
    r = CliRunner().invoke(main, ["replay", str(path), "--model", "sack"])
    assert r.exit_code == 0 and "conn 0 a2b" in r.output and ("no ACKs" in r.output or "no RTT" in r.output)


# ------------------------------------------------------------------ CLI

def test_cli_text_json_and_table(tmp_path: FsPath) -> None:
    r = CliRunner().invoke(main, ["replay", RENO, "--model", "sack", "--loss", "bursty:0.01,3", "--seed", "2"])
    assert r.exit_code == 0, r.output
    assert "loss: bursty, P' = 0.01, b = 3" in r.output and "  observed " in r.output and "  sack " in r.output
    r = CliRunner().invoke(main, ["replay", RENO, "--model", "sack", "--model", "test_models_base:Fixed", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["schema"] == "tcpsack-analyze/replay" and doc["schema_version"] == 1
    assert [t["label"] for t in doc["directions"][0]["transfers"]] == ["observed", "sack", "Fixed"]
    table = tmp_path / "t.csv"
    table.write_text("keep me")
    r = CliRunner().invoke(main, ["replay", RENO, "--model", "sack", "--table", str(table)])
    assert r.exit_code == 2 and "exists" in r.output and table.read_text() == "keep me"
    r = CliRunner().invoke(main, ["replay", RENO, "--model", "sack", "--table", str(table), "--force"])
    assert r.exit_code == 0 and table.read_text().startswith("conn,direction,label")


def test_cli_bad_input(tmp_path: FsPath) -> None:
    r = CliRunner().invoke(main, ["replay", RENO, "--loss", "random:7"])
    assert r.exit_code == 2 and "--loss" in r.output
    r = CliRunner().invoke(main, ["replay", RENO, "--model", "bbr"])
    assert r.exit_code == 2 and "unknown model" in r.output
    r = CliRunner().invoke(main, ["replay", "-"])
    assert r.exit_code == 2 and "stdin" in r.output
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all")
    r = CliRunner().invoke(main, ["replay", str(junk)])
    assert r.exit_code == 1 and r.output.startswith("error: ") and "Traceback" not in r.output


# ------------------------------------------------------------------ properties

@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["tahoe", "reno", "newreno", "sack", "ksack", "cubic"]),
    p=st.floats(0.0, 0.15),
    seed=st.integers(0, 2**31),
    octets=st.integers(1, 120_000),
    smss=st.sampled_from([536, 1448]),
    rtt_ms=st.integers(1, 300),
    sack=st.booleans(),
    delayed=st.booleans(),
    queue=st.sampled_from([None, 2, 20]),
    linux=st.booleans(),
)
def test_every_run_delivers_everything_and_repeats(model, p, seed, octets, smss, rtt_ms, sack, delayed, queue, linux) -> None:  # type: ignore[no-untyped-def]
    """Whatever the model, path and losses: the transfer completes, its ACKs never go back, SACK
    blocks lie above the cumulative ACK (at most 3, only from a SACK receiver), every dropped
    octet arrives in another copy, and the same inputs give the same run."""
    path = Path(rtt_ms * MS, rate_Bps=None if queue is None else 125_000, queue=queue, sack=sack, delayed_acks=delayed)
    opts = SenderOptions.linux() if linux else SenderOptions.rfc()
    run = replay_model(model, path, smss, octets, LossSpec("random", p=p), options=opts, seed=seed)
    o, ev = run.outcome, run.trace.events
    assert o.finished and o.octets == octets
    acks = ev.ack[ev.is_ack]
    assert (np.diff(acks) >= 0).all() and acks[-1] == octets + 1
    for i in np.flatnonzero(ev.is_ack).tolist():
        blocks = ev.blocks(i)
        assert len(blocks) <= 3 and (sack or not blocks)
        assert all(ev.ack[i] < lo < hi for lo, hi in blocks)
    sends = np.flatnonzero(ev.is_send)
    assert len(run.trace.drops) == sends.size
    # every dropped octet arrives in another copy (a dropped needless resend, such as a rescue
    # retransmission of a segment that had arrived, needs no repair)
    start, end = ev.start[sends], ev.end[sends]
    arrived = np.array([d is None for d in run.trace.drops])
    for k in np.flatnonzero(~arrived).tolist():
        assert (arrived & (start <= start[k]) & (end > start[k])).any(), (k, int(start[k]))
    again = replay_model(model, path, smss, octets, LossSpec("random", p=p), options=opts, seed=seed)
    assert again.outcome == o and again.trace.drops == run.trace.drops


def test_the_docs_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/replay.md's Python block runs as written (from the repository's root)."""
    import re

    doc = ROOT / "docs" / "replay.md"
    block = next(b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), re.DOTALL) if "replay_capture" in b)
    monkeypatch.chdir(ROOT)
    scope: dict[str, object] = {}
    exec(compile(block, str(doc), "exec"), scope)  # noqa: S102 - our own documentation
    runs = scope["runs"]
    assert [x.model for x in runs] == ["reno", "sack"]  # type: ignore[attr-defined]


def test_the_receivers_ack_pattern_is_read_from_its_in_order_acks() -> None:
    """A receiver that delays ACKs covers two segments with most in-order ACKs, one that does not
    covers one; duplicate ACKs (sent at once by both for out-of-order data) do not count, nor do
    the jumps of a repaired hole. Too few in-order ACKs: no verdict."""
    def stream(step: int, n: int, dups: int = 0) -> EventBatch:
        events = [send(0, 0, count=n * step)]
        events += [ack(100 + i, 0, dup=True) for i in range(dups)]
        events += [ack(200 + i, (i + 1) * step) for i in range(n)]
        return EventBatch.of(events)

    assert acks_every_segment(stream(2, 30, dups=40), 1000) == (False, 0.0)
    assert acks_every_segment(stream(1, 30), 1000) == (True, 1.0)
    assert acks_every_segment(stream(1, IN_ORDER_ACKS_MIN - 1), 1000) is None


def test_ns3_bookkeeping_resends_the_head_on_every_partial_ack() -> None:
    """ns-3's ProcessAck calls DoRetransmit on a partial ACK, SACK or not: the replay's sender
    resends the new head at once with bookkeeping="ns3". With the RFCs' (emulated SACK, one
    duplicate ACK's segment above the new hole) the head is not yet lost and waits."""
    starts = {}
    for name, opts in (("rfc", SenderOptions()), ("ns3", SenderOptions.ns3())):
        sender = Sender(model_class("sack")(SMSS, opts), Application(20 * SMSS))
        sender.transmit(0)
        for i in range(3):  # segment 0 lost: three duplicate ACKs, fast retransmit
            sender.on_ack(ack(100 + i, 0, dup=True))
            sender.transmit((100 + i) * MS)
        sender.on_ack(ack(200, 4))  # partial ACK: segment 4 lost too
        starts[name] = [s.start for s in sender.transmit(200 * MS)]
    assert starts == {"rfc": [], "ns3": [1 + 4 * SMSS]}
