"""What a connection keeps between batches is bounded by its live data, not by the packets seen.

Issue 2 asks for memory that grows with the live connections, not with the file; the benchmark
measures peak RSS (benchmarks/README.md), this pins the causes on synthetic captures
(benchmarks/gen_synthetic.py) four times longer than each other:

- loss-free: every array a connection holds (its directions with their RTT samples, loss
  trackers and RTT timing) stays about the same size;
- with 1% loss: the loss records a tracker keeps as objects stay about as many (they move into
  column tables, which grow by design, a few hundred bytes per resend).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcpsack_analyze.connection import Connection
from tcpsack_analyze.flows import FlowTable
from tcpsack_analyze.loss import tracker as tracker_mod
from tcpsack_analyze.reader import ReadStatus, read_capture
from tcpsack_analyze.stats import SampleBag

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "gen_synthetic.py"


def _array_bytes(obj: object) -> int:
    """Bytes of the numpy arrays an object holds directly, in lists/tuples, or in a SampleBag."""
    names = getattr(obj, "__dict__", {}).keys() | set(getattr(type(obj), "__slots__", ()))
    total = 0
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, SampleBag):
            total += _array_bytes(value)
            continue
        items = value if isinstance(value, (list, tuple)) else [value]
        total += sum(x.nbytes for x in items if isinstance(x, np.ndarray))
    return total


def _read(path: Path) -> tuple[FlowTable, int]:
    table = FlowTable(Connection)
    packets = 0
    for batch in read_capture(str(path), ReadStatus(str(path)), None, 256 << 10):
        packets += len(batch)
        for conn, rows in table.split(batch):
            conn.consume(batch, rows)  # type: ignore[attr-defined]
    return table, packets


def _capture(tmp: Path, packets: int, loss: float) -> Path:
    path = tmp / f"p{packets}_l{loss:g}.pcap"
    subprocess.run([sys.executable, str(GENERATOR), "-o", str(path), "--packets", str(packets),
                    "--connections", "4", "--seed", "3", "--loss", str(loss)], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[float, list[Path]]:
    tmp = tmp_path_factory.mktemp("bounds")
    return {loss: [_capture(tmp, n, loss) for n in (20_000, 80_000)] for loss in (0.0, 0.01)}


def test_arrays_kept_do_not_grow_with_packets(captures: dict[float, list[Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SampleBag, "FIRST_MERGE", 256)  # the real threshold needs longer captures
    out = []
    for path in captures[0.0]:
        table, packets = _read(path)
        held = samples = 0
        for conn in table.live:
            for part in (conn, *conn.dirs):  # type: ignore[attr-defined]
                held += _array_bytes(part)
            held += sum(t.held_bytes() for t in conn.loss)  # type: ignore[attr-defined]
            samples += sum(len(d.rtt.samples) for d in conn.dirs)  # type: ignore[attr-defined]
        out.append((held, packets, samples))
    (short, n_short, rtt_short), (long, n_long, rtt_long) = out
    assert n_long > 3.5 * n_short
    assert rtt_long > 3 * rtt_short  # four times the RTT samples, in about the same memory
    # bounded by a batch of each direction's outstanding data, whatever the capture's length
    assert long < 1.5 * short + 64 * 1024, (short, long)
    assert long < n_long  # well under a byte per packet


def test_loss_records_move_out_of_objects(captures: dict[float, list[Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    # these captures last 30 and 120 ms: a horizon of one SRTT (11 ms) lets records move
    monkeypatch.setattr(tracker_mod, "HORIZON", (1, 0))
    out = []
    for path in captures[0.01]:
        table, _ = _read(path)
        trackers = [t for conn in table.live for t in conn.loss]  # type: ignore[attr-defined]
        live = sum(sum(t.live_records()) for t in trackers)
        moved = sum(t.moved_retransmissions() for t in trackers)
        out.append((live, moved))
    (live_short, moved_short), (live_long, moved_long) = out
    assert moved_long > 3 * moved_short > 0, out  # the resends grow with the capture...
    assert live_long <= live_short + 32, out  # ...the objects kept for them do not
    assert live_long < 0.1 * (live_long + moved_long), out
