"""The lab's sample traces: each is small, documented, and its three witnesses agree.

For every ``sample_traces/lab_*`` directory: the emulator's drop log, the sender kernel's
traced retransmissions and the capture(s) must agree (every emulated data drop is followed by
a kernel retransmission of that range, visible on the capture, unless an earlier copy had
already delivered it; every traced retransmission is
on the sender capture; TCP_INFO's count equals the traced one). Runs everywhere: it only reads.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tcpsack_analyze.lab.crosscheck import crosscheck
from tcpsack_analyze.truth import load

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
LAB_SAMPLES = sorted(p for p in SAMPLES.glob("lab_*") if p.is_dir())
MAX_BYTES = 2 * 1024 * 1024


def test_the_issue_samples_exist() -> None:
    names = {p.name for p in LAB_SAMPLES}
    assert {"lab_reno_sack_bursty", "lab_reno_nosack_bursty", "lab_cubic_random2", "lab_thin_stream",
            "lab_bottleneck", "lab_receiver_side"} <= names


@pytest.mark.parametrize("sample", LAB_SAMPLES, ids=lambda p: p.name)
def test_sample_is_small_and_documented(sample: Path) -> None:
    size = sum(f.stat().st_size for f in sample.iterdir())
    assert size < MAX_BYTES, f"{sample.name} is {size} bytes"
    truth = load(sample)
    readme = (SAMPLES / "README.md").read_text()
    assert f"-o {sample.name} " in readme or f"-o {sample.name}\n" in readme
    assert truth.command in readme
    assert truth.trace["lost_events"] == 0
    assert all(c["dropped_by_kernel"] == 0 for c in truth.captures)


@pytest.mark.parametrize("sample", LAB_SAMPLES, ids=lambda p: p.name)
def test_drop_log_kernel_and_capture_agree(sample: Path) -> None:
    agreement = crosscheck(sample)
    assert agreement.problems == []
    assert agreement.repaired_by_kernel + agreement.redundant_drops == agreement.data_drops
    assert all(n == agreement.repaired_by_kernel for n in agreement.repaired_in_capture.values())
    assert agreement.retransmissions_in_capture == agreement.retransmissions


def test_samples_show_what_they_are_for() -> None:
    by_name = {p.name: load(p) for p in LAB_SAMPLES}
    assert by_name["lab_reno_sack_bursty"].params["forward"]["loss"] == "bursty:0.01:3"
    assert by_name["lab_reno_nosack_bursty"].sysctls["sender"]["net.ipv4.tcp_sack"] == "0"
    bottleneck = by_name["lab_bottleneck"]
    assert bottleneck.drops and {d.reason for d in bottleneck.drops} == {"queue"}
    assert any(c["point"] == "receiver" for c in by_name["lab_receiver_side"].captures)
    thin = by_name["lab_thin_stream"]
    assert thin.params["traffic"]["kind"] == "thin" and thin.data_drops()
