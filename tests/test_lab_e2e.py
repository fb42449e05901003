"""End-to-end lab runs: real namespaces, emulator, tcpdump and bpftrace (root only).

Skipped, with the reason, where the machine cannot run the lab (not Linux, not root, a tool
missing, namespaces refused). CI runs as root, so CI runs these. Each transfer lasts a few
seconds at most.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcpsack_analyze.lab.crosscheck import crosscheck
from tcpsack_analyze.lab.link import LinkConfig
from tcpsack_analyze.lab.runner import REQUIRED_TOOLS, RunConfig, run
from tcpsack_analyze.lab.settings import TcpSettings
from tcpsack_analyze.lab.traffic import Traffic
from tcpsack_analyze.truth import load


def _lab_unavailable() -> str | None:
    if sys.platform != "linux":
        return "the lab needs Linux"
    if os.geteuid() != 0:
        return "the lab needs root (namespaces, packet sockets, tracepoints)"
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    probe = f"tsaprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


_REASON = _lab_unavailable()
pytestmark = [pytest.mark.root, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tsa")}


def test_bursty_loss_run_agrees_with_itself(tmp_path: Path) -> None:
    before = _namespaces()
    config = RunConfig(
        forward=LinkConfig(delay=0.01, loss="bursty:0.02:2"),
        reverse=LinkConfig(delay=0.01),
        tcp=TcpSettings(cc="reno"),
        traffic=Traffic(bytes=600_000),
        capture=("sender", "receiver"),
        seed=7,
        timeout=30,
    )
    truth = run(config, tmp_path)
    assert _namespaces() == before, "namespaces left behind"
    assert (tmp_path / "sender.pcap").stat().st_size > 0 and (tmp_path / "receiver.pcap").exists()
    assert load(tmp_path) == truth
    assert truth.flows[0].bytes_received == 600_000 and truth.flows[0].isn is not None
    assert truth.sysctls["sender"]["net.ipv4.tcp_sack"] == "1" and truth.flows[0].cc == "reno"
    assert truth.data_drops(), "seed 7 drops some segments of 600 kB at P' = 2%"
    assert truth.retransmissions and truth.ca_states and truth.probes
    agreement = crosscheck(truth)
    assert agreement.problems == []
    assert agreement.repaired_by_kernel + agreement.redundant_drops == agreement.data_drops
    alignment = truth.clock["alignment"]
    assert alignment["unmatched"] == 0 and alignment["max_abs_us"] < 1000
    assert truth.trace["lost_events"] == 0
    assert (tmp_path / "summary.txt").read_text().strip() == truth.summary


def test_queue_drops_and_concurrent_flows(tmp_path: Path) -> None:
    config = RunConfig(
        forward=LinkConfig(delay=0.005, rate=8e6, queue=8),
        reverse=LinkConfig(delay=0.005),
        tcp=TcpSettings(cc="cubic"),
        traffic=Traffic(flows=2, bytes=400_000),
        timeout=30,
    )
    truth = run(config, tmp_path)
    assert len(truth.flows) == 2 and {f.cc for f in truth.flows} == {"cubic"}
    assert {d.reason for d in truth.drops} == {"queue"}
    assert crosscheck(truth).problems == []


def test_mid_point_capture_and_a_drop_log_split_by_section(tmp_path: Path) -> None:
    before = _namespaces()
    config = RunConfig(
        forward=LinkConfig(delay=0.01, loss="random:0.03"),
        reverse=LinkConfig(delay=0.01),
        tcp=TcpSettings(cc="cubic"),
        traffic=Traffic(bytes=400_000),
        capture=("sender", "mid"),
        seed=9,
        timeout=30,
        upstream=(LinkConfig(delay=0.005, loss="random:0.03"), LinkConfig(delay=0.005)),
    )
    truth = run(config, tmp_path)
    assert _namespaces() == before, "namespaces left behind"
    assert {c["point"]: c["file"] for c in truth.captures} == {"sender": "sender.pcap", "mid": "mid.pcap"}
    assert truth.params["upstream"]["forward"]["loss"] == "random:0.03" and "mid" in truth.topology["offloads"]
    places = [d.where for d in truth.data_drops()]
    assert set(places) == {"upstream", "downstream"}, "about 8 drops on each side of 276 segments at 3 %"
    assert truth.emulator["upstream"]["fwd"]["drops"]["loss"] == places.count("upstream")
    assert truth.emulator["fwd"]["drops"]["loss"] == places.count("downstream")
    assert crosscheck(truth).problems == []


def test_ctrl_c_removes_everything(tmp_path: Path) -> None:
    before = _namespaces()
    code = (
        "from pathlib import Path\n"
        "from tcpsack_analyze.lab.runner import RunConfig, run\n"
        "from tcpsack_analyze.lab.link import LinkConfig\n"
        "from tcpsack_analyze.lab.settings import TcpSettings\n"
        "from tcpsack_analyze.lab.traffic import Traffic\n"
        "run(RunConfig(LinkConfig(delay=0.01), LinkConfig(delay=0.01), TcpSettings(),"
        f" Traffic(seconds=60)), Path({str(tmp_path)!r}))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (tmp_path / "sender.pcap").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # the transfer is under way
    assert _namespaces() - before, "the run should have created its namespaces by now"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err
    assert _namespaces() == before, "namespaces left behind after Ctrl-C"
