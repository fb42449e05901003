"""The figures draw what the analysis found: each kind rendered on sample captures, its
matplotlib artists (found by ``gid``) compared with the report, the loss records and the events."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tcpsack_analyze import truth as truth_mod
from tcpsack_analyze.events import Dir
from tcpsack_analyze.loss.patterns import GilbertElliott
from tcpsack_analyze.plots import bursts, cwnd, load, rtd, throughput, timeseq
from tcpsack_analyze.plots.decimate import envelope, m4, union_per_column
from tcpsack_analyze.plots.kernel import flow_of
from tcpsack_analyze.plots.source import PlotError

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"
SACK = SAMPLES / "lab_reno_sack_bursty"
THIN = SAMPLES / "lab_thin_stream"
NOSACK = SAMPLES / "lab_reno_nosack_bursty"
RECEIVER = SAMPLES / "lab_receiver_side" / "receiver.pcap"
ARKIME = ROOT / "tests" / "data" / "public" / "arkime_wireshark_retrans.pcap"

_cache: dict[tuple[str, int | None, str | None], object] = {}


def loaded(path: Path, conn: int | None = None, direction: str | None = None):
    key = (str(path), conn, direction)
    if key not in _cache:
        _cache[key] = load(str(path), conn, direction)
    return _cache[key]


def artist(fig, gid: str):
    """The one artist of ``fig`` with this gid (None when there is none)."""
    found = [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) <= 1, gid
    return found[0] if found else None


def bars(fig, gid: str) -> list[float]:
    """Heights of the bars drawn with this gid (each bar of ``ax.bar`` carries it)."""
    return [p.get_height() for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


def segments(line) -> int:
    """Vertical ranges drawn as one NaN-broken line: x, x, NaN per range."""
    return len(line.get_xdata()) // 3


# --------------------------------------------------------------------------- timeseq


@pytest.mark.parametrize("path", [SACK / "sender.pcap", THIN / "sender.pcap", ARKIME, RECEIVER])
def test_timeseq_marks_equal_the_analysis(path):
    d = loaded(path).busiest()
    fig = timeseq.timeseq(d)
    loss = d.report.loss
    drawn = {trig: len(artist(fig, f"rexmit:{trig}").get_xdata()) for trig in loss.by_trigger}
    assert drawn == loss.by_trigger
    assert sum(drawn.values()) == loss.retransmissions
    spurious = artist(fig, "spurious")
    assert (0 if spurious is None else len(spurious.get_xdata())) == sum(loss.spurious.values())
    for where, count in (("downstream", loss.lost_downstream), ("upstream", loss.lost_upstream)):
        line = artist(fig, f"lost:{where}")
        assert (0 if line is None else len(line.get_xdata())) == count
    for cause in ("retransmission", "reordering", "ambiguous"):
        line = artist(fig, f"fill:{cause}")
        assert (0 if line is None else len(line.get_xdata())) == loss.fills.get(cause, 0)
    ev = d.events
    acks = ev.is_ack & (ev.ack >= 0)
    ack = artist(fig, "ack")
    np.testing.assert_allclose(ack.get_xdata(), d.seconds(ev.time_ns[acks]))
    np.testing.assert_array_equal(ack.get_ydata(), ev.ack[acks])
    data = artist(fig, "data")
    assert segments(data) == np.count_nonzero(ev.is_data)
    np.testing.assert_array_equal(data.get_ydata()[0::3], ev.start[ev.is_data])
    np.testing.assert_array_equal(data.get_ydata()[1::3], ev.end[ev.is_data])
    sack = artist(fig, "sack")
    dsack = artist(fig, "dsack")
    blocks = int(ev.nsack[ev.is_ack].sum())
    assert (0 if sack is None else segments(sack)) + (0 if dsack is None else segments(dsack)) == blocks
    assert (0 if dsack is None else segments(dsack)) == np.count_nonzero(ev.dsack & ev.is_ack & (ev.nsack > 0))
    ax = fig.axes[0]
    assert "(s)" in ax.get_xlabel() and "(bytes)" in ax.get_ylabel()
    assert f"connection {d.conn.id}" in ax.get_title() and d.direction.label in ax.get_title() and path.name in ax.get_title()
    assert ax.get_legend() is not None


def test_timeseq_marks_the_retransmissions_at_their_records():
    d = loaded(THIN / "sender.pcap").busiest()
    m = timeseq.marks(d)
    by_trigger = Counter()
    for r in d.loss.retransmissions:
        p = m.rexmit[r.trigger]
        k = int(np.flatnonzero(p.index == r.index)[0])
        assert p.x[k] == pytest.approx(float(d.seconds(r.time_ns)))
        assert p.y[k] == (r.start + r.end) / 2
        by_trigger[r.trigger] += 1
    assert {t: len(p) for t, p in m.rexmit.items()} == by_trigger


def test_timeseq_truth_drops_are_the_flows_data_drops():
    d = loaded(SACK / "sender.pcap").busiest()
    truth = truth_mod.load(SACK / "truth.json")
    fig = timeseq.timeseq(d, truth=truth)
    drops = truth.data_drops(flow_of(truth, d).id)
    assert drops
    assert len(artist(fig, "truth-drops").get_xdata()) == len(drops)
    # a sender-side capture sees each dropped segment: lost downstream, at the same place
    lost = artist(fig, "lost:downstream")
    assert sorted(artist(fig, "truth-drops").get_ydata()) == sorted(lost.get_ydata())


def test_timeseq_range_draws_only_that_range():
    d = loaded(SACK / "sender.pcap").busiest()
    fig = timeseq.timeseq(d, from_s=1.0, to_s=2.0)
    t = d.seconds(d.events.time_ns)
    inside = (t >= 1.0) & (t <= 2.0)
    ack = artist(fig, "ack")
    assert len(ack.get_xdata()) == np.count_nonzero(inside & d.events.is_ack)
    assert ack.get_xdata().min() >= 1.0 and ack.get_xdata().max() <= 2.0
    rx = [r for r in d.loss.retransmissions if 1.0 <= d.seconds(r.time_ns) <= 2.0]
    drawn = sum(len(artist(fig, f"rexmit:{trig}").get_xdata()) for trig in {r.trigger for r in rx})
    assert drawn == len(rx) > 0
    assert "1.000-2.000 s" in fig.axes[0].get_title()


def test_timeseq_range_without_packets_is_refused():
    d = loaded(SACK / "sender.pcap").busiest()
    with pytest.raises(PlotError, match="no packets from 100 s to 200 s"):
        timeseq.timeseq(d, from_s=100, to_s=200)


def test_around_loss_is_the_incidents_close_up():
    d = loaded(THIN / "sender.pcap").busiest()
    k = 1
    inc = d.loss.incidents[k]
    fig = timeseq.timeseq(d, around_loss=k)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    assert lo <= d.seconds(inc.first_ns) and d.seconds(inc.covered_ns) <= hi
    title = ax.get_title()
    assert f"loss incident {k}" in title and f"{inc.latency_rexmit_ns / 1e6:.1f} ms" in title and f"{inc.latency_ack_ns / 1e6:.1f} ms" in title
    for trig in inc.triggers:
        assert trig in title
    # the window starts CONTEXT events before the original transmission
    t = d.events.time_ns
    before = t[t < inc.first_ns]
    assert np.count_nonzero(d.seconds(before) >= lo) == timeseq.CONTEXT
    with pytest.raises(PlotError, match="no loss incident 99"):
        timeseq.timeseq(d, around_loss=99)


def test_thinned_graph_keeps_every_retransmission(monkeypatch):
    d = loaded(SACK / "sender.pcap").busiest()
    monkeypatch.setattr(timeseq, "THIN_ABOVE", 100)
    monkeypatch.setattr(timeseq, "COLUMNS", 50)
    m = timeseq.marks(d)
    assert m.thinned
    assert len(m.data) <= 50 < m.data_count == np.count_nonzero(d.events.is_data)
    assert len(m.ack) <= 4 * 50 < m.ack_count
    assert {t: len(p) for t, p in m.rexmit.items()} == d.report.loss.by_trigger
    # the thinned ticks still span every data segment
    assert m.data.lo.min() == d.events.start[d.events.is_data].min()
    assert m.data.hi.max() == d.events.end[d.events.is_data].max()
    fig = timeseq.draw(m)
    assert "thinned" in artist(fig, "data").get_label()


def test_decimation_helpers():
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(0, 1, 5000))
    y = np.cumsum(rng.integers(0, 3, 5000))
    keep = m4(x, y, 0, 1, 100)
    assert keep.size <= 400
    cols = (x * 100).astype(int).clip(0, 99)
    for c in (0, 37, 99):  # per column: first, last, min and max kept
        idx = np.flatnonzero(cols == c)
        kept = np.intersect1d(idx, keep)
        assert {idx[0], idx[-1]} <= set(kept.tolist())
        assert y[kept].min() == y[idx].min() and y[kept].max() == y[idx].max()
    ex, elo, ehi = envelope(x, y, y + 5, 0, 1, 100)
    assert ex.size == 100 and elo.min() == y.min() and ehi.max() == y.max() + 5
    ux, ulo, uhi = union_per_column(np.array([0.1, 0.1, 0.15, 0.9, 0.95]), np.array([10, 15, 30, 5, 1]), np.array([20, 25, 40, 6, 3]), 0, 1, 2)
    assert sorted(zip(ulo.tolist(), uhi.tolist())) == [(1, 3), (5, 6), (10, 25), (30, 40)]
    assert sorted(ux.tolist()) == [0.1, 0.1, 0.95, 0.95]  # each at an x of its own column


# --------------------------------------------------------------------------- rtd


def cdf_quantiles(line, qs=(0.5, 0.9, 0.99)):
    return [float(np.interp(q, line.get_ydata(), line.get_xdata())) for q in qs]


def test_rtd_cdf_quantiles_are_the_reports_percentiles():
    paths = [SACK / "sender.pcap", THIN / "sender.pcap", ARKIME]
    data = [loaded(p) for p in paths]
    fig = rtd.rtd(data)
    for cd in data:
        rep = cd.analysis.report.loss.rtd_ms
        line = artist(fig, f"cdf:{cd.path}")
        assert len(line.get_xdata()) == rep.count
        assert cdf_quantiles(line) == pytest.approx([rep.median, rep.p90, rep.p99])
        hist = artist(fig, f"hist:{cd.path}")
        assert hist is not None
        n = sum(len(d.loss.incidents) for d in cd.directions)
        assert len(artist(fig, f"latency-rexmit:{cd.path}").get_xdata()) == n
    # arkime: both directions retransmit, each gets its own CDF equal to its report
    arkime = data[2]
    for d in arkime.directions:
        line = artist(fig, f"cdf:{arkime.path}:{d.conn.id}:{d.direction.label}")
        s = d.report.loss.rtd_ms
        assert cdf_quantiles(line) == pytest.approx([s.median, s.p90, s.p99])
    assert fig.axes[0].get_xlabel() == "RTD (ms)" and fig.axes[0].get_legend() is not None
    assert "lab_thin_stream/sender.pcap" in fig.get_suptitle()


def test_rtd_histogram_counts_every_sample():
    cd = loaded(NOSACK / "sender.pcap")
    fig = rtd.rtd([cd])
    counts, edges, _ = artist(fig, f"hist:{cd.path}").get_data()
    assert counts.sum() == cd.analysis.report.loss.rtd_ms.count
    assert edges[0] == cd.analysis.report.loss.rtd_ms.min and edges[-1] == cd.analysis.report.loss.rtd_ms.max


def test_rtd_without_retransmissions_is_refused():
    cd = loaded(SAMPLES / "http_206_sack_recovery.pcap", 0)
    with pytest.raises(PlotError, match="no retransmissions"):
        rtd.rtd([cd])


# --------------------------------------------------------------------------- bursts


def test_bursts_bars_are_the_reports_histogram():
    data = [loaded(SACK / "sender.pcap"), loaded(NOSACK / "sender.pcap")]
    fig = bursts.bursts(data)
    for cd in data:
        d = cd.directions[0]
        pattern = d.report.loss.pattern
        key = f"{cd.path}:{d.conn.id}:{d.direction.label}"
        assert bars(fig, f"bursts:{key}") == [pattern.burst_histogram[b] for b in sorted(pattern.burst_histogram)]
        hist = pattern.losses_per_event_histogram
        assert bars(fig, f"windows:{key}") == [hist[k] for k in sorted(hist)]
        want = bursts.expected_bursts(pattern.gilbert_elliott, pattern.segments, max(pattern.burst_histogram) + 3)
        np.testing.assert_allclose(bars(fig, f"expected:{key}"), want)
    assert "burst length" in fig.axes[0].get_xlabel()


def test_expected_bursts_of_a_gilbert_chain():
    """loss_bad=1, loss_good=0: bursts are the bad runs, geometric with mean 1/r, and the
    expected lost transmissions are the segments times the stationary bad share."""
    fit = GilbertElliott(p=0.01, r=0.4, loss_good=0.0, loss_bad=1.0, log_likelihood=0.0, method="gilbert", iterations=0, converged=True)
    n = 1_000_000
    e = bursts.expected_bursts(fit, n, 60)
    lengths = np.arange(1, 61)
    per_place = e / (n - lengths + 1)
    np.testing.assert_allclose(per_place[1:] / per_place[:-1], 1 - fit.r)
    assert (e * lengths).sum() == pytest.approx(n * fit.p / (fit.p + fit.r), rel=1e-4)


def test_bursts_without_losses_is_refused():
    with pytest.raises(PlotError, match="no lost transmissions"):
        bursts.bursts([loaded(SAMPLES / "http_206_sack_recovery.pcap", 0)])


# --------------------------------------------------------------------------- throughput


def test_throughput_integrates_to_the_acked_data():
    cd = loaded(SAMPLES / "lab_bottleneck" / "sender.pcap")
    fig = throughput.throughput([cd])
    assert len(cd.directions) == 2
    for d in cd.directions:
        step = artist(fig, f"throughput:{cd.path}:{d.conn.id}:{d.direction.label}")
        values, edges, _ = step.get_data()
        acked = (values * np.diff(edges)).sum() * 1e6 / 8
        acks = d.events.ack[d.events.is_ack & (d.events.ack >= 0)]
        assert acked == pytest.approx(acks.max() - acks[0])
    ax = fig.axes[0]
    assert "Mbit/s" in ax.get_ylabel() and "(s)" in ax.get_xlabel() and ax.get_legend() is not None


def test_throughput_overlays_captures_and_refuses_an_empty_range():
    data = [loaded(SACK / "sender.pcap"), loaded(NOSACK / "sender.pcap")]
    fig = throughput.throughput(data, from_s=1.0, to_s=3.0)
    steps = [a for a in fig.axes[0].get_children() if str(a.get_gid()).startswith("throughput:")]
    assert len(steps) == 2
    assert steps[0].get_data()[1][0] == 1.0
    with pytest.raises(PlotError, match="no data acknowledged"):
        throughput.throughput(data, from_s=500, to_s=600)


# --------------------------------------------------------------------------- cwnd


def test_cwnd_draws_flight_pipe_rtos_and_kernel_truth():
    d = loaded(NOSACK / "sender.pcap").busiest()
    truth = truth_mod.load(NOSACK / "truth.json")
    model = cwnd.ModelCurve("model X", np.array([0.0, 1.0, 2.0]), np.array([10.0, 5.0, 1.0]))
    fig = cwnd.cwnd(d, truth=truth, models=[model])
    flight = artist(fig, "flight")
    # after the last event: what the report says is still outstanding
    assert flight.get_ydata()[-1] * d.mss == d.report.snd_max - d.report.snd_una
    # without SACK the pipe is the flight size (nothing is SACKed, nothing IsLost)
    np.testing.assert_array_equal(artist(fig, "pipe").get_ydata(), flight.get_ydata())
    rto = artist(fig, "rto")
    assert len(rto.get_segments()) == d.report.loss.by_trigger["rto"]
    kernel = artist(fig, "kernel-cwnd")
    probes = truth.probes_frame()
    mine = probes[probes.flow == flow_of(truth, d).id]
    np.testing.assert_array_equal(kernel.get_ydata(), mine.cwnd.to_numpy())
    assert f"{cwnd.falls_to_one(mine.cwnd.to_numpy())} falls to 1 segment" in kernel.get_label()
    assert artist(fig, "model:model X") is not None
    ax = fig.axes[0]
    assert "segments" in ax.get_ylabel() and "(s)" in ax.get_xlabel() and d.direction.label in ax.get_title()


def test_cwnd_pipe_leaves_out_sacked_data():
    d = loaded(SACK / "sender.pcap").busiest()
    fig = cwnd.cwnd(d)
    flight, pipe = artist(fig, "flight").get_ydata(), artist(fig, "pipe").get_ydata()
    assert (pipe <= flight + 1e-9).mean() > 0.9 and (pipe < flight).any()
    assert artist(fig, "kernel-cwnd") is None and artist(fig, "rto") is None


def test_falls_to_one():
    assert cwnd.falls_to_one(np.array([10, 1, 1, 2, 5, 1, 3])) == 2
    assert cwnd.falls_to_one(np.array([1, 2])) == 0


# --------------------------------------------------------------------------- choices


def test_load_refuses_unknown_connections_and_empty_directions():
    with pytest.raises(PlotError, match="no connection 7"):
        load(str(THIN / "sender.pcap"), 7)
    with pytest.raises(PlotError, match="no data sent in b2a of connection 0"):
        load(str(THIN / "sender.pcap"), 0, "b2a")
    cd = loaded(SAMPLES / "http_206_sack_recovery.pcap")
    assert {(d.conn.id, d.direction) for d in cd.directions} == {(0, Dir.A2B), (0, Dir.B2A), (1, Dir.A2B), (1, Dir.B2A)}
    assert cd.busiest().report.data_packets == 376


def test_events_pass_stops_after_the_range(monkeypatch):
    from tcpsack_analyze.plots import source

    path = str(SACK / "sender.pcap")
    full = loaded(SACK / "sender.pcap").busiest().events
    monkeypatch.setattr(source, "DEFAULT_CHUNK", 16384)  # many batches, so that the pass can stop early
    d = load(path, until_s=1.0).busiest()
    until = d.start_ns + 1_000_000_000
    n = len(d.events)
    assert np.count_nonzero(full.time_ns <= until) <= n < len(full)
    for col in ("time_ns", "kind", "start", "end", "ack"):
        np.testing.assert_array_equal(getattr(d.events, col), getattr(full, col)[:n])
    fig = timeseq.timeseq(d, from_s=0.5, to_s=1.0)
    assert len(artist(fig, "ack").get_xdata()) == np.count_nonzero(full.is_ack & (full.time_ns >= d.start_ns + 500_000_000) & (full.time_ns <= until))
