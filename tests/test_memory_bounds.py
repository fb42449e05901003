"""What a connection keeps between batches is bounded by its live data, not by the packets seen.

Issue 2 asks for memory that grows with the live connections, not with the file; the benchmark
measures peak RSS (benchmarks/README.md), this pins the causes on synthetic captures
(benchmarks/gen_synthetic.py) four times longer than each other:

- loss-free: every array a connection holds (its directions with their RTT samples in the core,
  ``FlowPipeline.held_bytes``, and its loss trackers and RTT timing) stays about the same size;
- with 1% loss: the loss records a tracker keeps as objects stay about as many (they move into
  column tables, which grow by design, a few hundred bytes per resend).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tcpsack_analyze.analysis import _Pipeline
from tcpsack_analyze.loss import tracker as tracker_mod
from tcpsack_analyze.reader import ReadStatus

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "gen_synthetic.py"


class Read:
    """A capture read through the pipeline up to its end, its connections still live: what the
    core's working state holds (flow table, flow stage and RTT samplers: ``core_bytes``; the loss
    trackers: ``loss_bytes`` that grow with outstanding data, records held as objects and moved
    into tables), and, once finished, the RTT samples each kept."""

    def __init__(self, path: Path, first_merge: int | None = None) -> None:
        pipe = _Pipeline(str(path), ReadStatus(str(path)), None, 256 << 10, 60.0, (1e9, 1e9))  # none finished early
        core = pipe.flows.core
        if first_merge is not None:
            core.set_first_merge(first_merge)
        self.packets = self.core_bytes = self.loss_bytes = self.moved = self.rtt_samples = 0
        self.live = (0, 0, 0)
        for chunk in pipe.flows.chunks():
            if chunk.batch is not None:
                self.packets += len(chunk.batch)
                self.core_bytes = core.held_bytes()
                self.live, self.loss_bytes, self.moved = core.loss_state()
            else:  # the end: the finished results
                self.rtt_samples = sum(len(r.samples) for f in chunk.finished for r in f.rtt)


def _capture(tmp: Path, packets: int, loss: float) -> Path:
    path = tmp / f"p{packets}_l{loss:g}.pcap"
    subprocess.run([sys.executable, str(GENERATOR), "-o", str(path), "--packets", str(packets),
                    "--connections", "4", "--seed", "3", "--loss", str(loss)], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[float, list[Path]]:
    tmp = tmp_path_factory.mktemp("bounds")
    return {loss: [_capture(tmp, n, loss) for n in (20_000, 80_000)] for loss in (0.0, 0.01)}


def test_arrays_kept_do_not_grow_with_packets(captures: dict[float, list[Path]]) -> None:
    # the RTT bags first merge at 256 samples (the real threshold needs longer captures)
    out = []
    for path in captures[0.0]:
        read = Read(path, first_merge=256)
        held = read.core_bytes + read.loss_bytes
        out.append((held, read.packets, read.rtt_samples))
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
        read = Read(path)
        live, moved = sum(read.live), read.moved
        out.append((live, moved))
    (live_short, moved_short), (live_long, moved_long) = out
    assert moved_long > 3 * moved_short > 0, out  # the resends grow with the capture...
    assert live_long <= live_short + 32, out  # ...the objects kept for them do not
    assert live_long < 0.1 * (live_long + moved_long), out
