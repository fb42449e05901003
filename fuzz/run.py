"""Fuzz ``report`` and ``details`` with mutated captures; record every traceback, hang and RSS blow-up.

Run on demand, not in CI (see fuzz/README.md)::

    PYTHONPATH=$PWD timeout 1900 python3 -m fuzz.run --minutes 30 --out fuzz/findings

Why hypothesis and not atheris: the inputs worth trying are structural (records swapped,
timestamps set to 0, 2**32-1 or 2**64-1, years added, block lengths off by a few), not the
byte-level novelty coverage feedback finds, and hypothesis draws integers with a bias to exactly
those boundary values; it needs no instrumented build, and the plan it draws is a short list of
named mutations (``fuzz/mutate.py``) that says how an input was made. Hypothesis stops at the
first failing example, so the test body never raises: it records the failure and goes on.

Each input runs in a forked child (everything is imported once, before the fork), under an
address-space limit (MEMORY_LIMIT) and an alarm (HANG_S): the child runs ``report`` with one
output format and ``details`` with another through click's CliRunner and writes back the
traceback, if any. The parent reads the child's peak RSS from ``os.wait4``. A finding is kept
as ``<out>/<kind>-<signature hash>/input.pcap`` with ``finding.txt`` (seed, plan, traceback,
RSS), once per distinct signature (exception type and innermost frame of the package).
``--replay DIR`` runs every kept input through the installed console script instead
(``subprocess`` with a 30 s timeout, peak RSS from ``/usr/bin/time -v``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tcpsack_analyze.cli.details  # imported before the fork: every child runs the code as it was at start
import tcpsack_analyze.cli.report  # noqa: F401
from fuzz.mutate import Mutation, apply, crc
from tcpsack_analyze.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
SEED_DIRS = (ROOT / "sample_traces", ROOT / "tests" / "data" / "public")
SEED_MAX_BYTES = 450_000  # small seeds: many inputs per minute
HANG_S = 30  # an input that runs longer is a hang
RSS_LIMIT_KB = 1 << 20  # 1 GB: more is a finding
MEMORY_LIMIT = 4 << 30  # address space of a child: a runaway allocation fails there, not the machine
PACKAGE = "tcpsack_analyze"

BOUNDARY = st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1])
ANY_INT = st.one_of(BOUNDARY, st.integers(min_value=-(2**64), max_value=2**64))
SMALL = st.integers(min_value=0, max_value=1 << 20)


def seeds() -> dict[str, bytes]:
    """The seed corpus: the captures of sample_traces/ and tests/data/public up to SEED_MAX_BYTES."""
    out = {}
    for folder in SEED_DIRS:
        for path in sorted(folder.rglob("*.pcap*")):
            if path.stat().st_size <= SEED_MAX_BYTES:
                out[str(path.relative_to(ROOT))] = path.read_bytes()
    return out


def mutation() -> st.SearchStrategy[Mutation]:
    """One named mutation with its integer arguments (see fuzz/mutate.py)."""
    years = st.one_of(st.sampled_from([-60, -30, -1, 1, 30, 100, 500]), st.integers(-600, 600))
    return st.one_of(
        st.tuples(st.just("ts_shift"), SMALL, st.integers(-(10**10), 10**10), st.integers(1, 50)),
        st.tuples(st.just("ts_set"), SMALL, ANY_INT),
        st.tuples(st.just("ts_jump"), SMALL, years),
        st.tuples(st.just("ts_backwards"), SMALL, st.integers(1, 10**9)),
        st.tuples(st.just("ts_wobble"), SMALL, SMALL, st.integers(1, 10**6), SMALL),
        st.tuples(st.just("swap_records"), SMALL, SMALL),
        st.tuples(st.just("shuffle_window"), SMALL, SMALL, SMALL),
        st.tuples(st.just("drop_records"), SMALL, SMALL),
        st.tuples(st.just("duplicate_record"), SMALL),
        st.tuples(st.just("record_length"), SMALL, ANY_INT),
        st.tuples(st.just("block_type"), SMALL, st.one_of(st.sampled_from([1, 2, 3, 5, 6, 0x0A0D0D0A]), ANY_INT)),
        st.tuples(st.just("epb_interface"), SMALL, st.one_of(st.integers(0, 4), ANY_INT)),
        st.tuples(st.just("idb_timestamps"), st.one_of(st.sampled_from([0, 3, 6, 9, 0x80 | 20, 19, 0xFF]), st.integers(0, 255)),
                  st.one_of(st.sampled_from([-(2**40), -(10**9), -1, 10**9, 2**40]), ANY_INT)),
        st.tuples(st.just("pcap_header"), SMALL, ANY_INT),
        st.tuples(st.just("as_pcapng"), st.integers(0, 1)),
        st.tuples(st.just("truncate"), SMALL),
        st.tuples(st.just("bit_flip"), SMALL, SMALL),
        st.tuples(st.just("byte_set"), SMALL, ANY_INT),
        st.tuples(st.just("gzip_damage"), SMALL, SMALL),
    )


@dataclass
class Outcome:
    """What one input did: ``kind`` is "ok", "traceback", "hang" or "rss"."""

    kind: str
    command: str
    detail: str  # the traceback, or what was exceeded
    rss_kb: int
    seconds: float

    def signature(self) -> str:
        """Exception type and the innermost frame inside the package: one finding per signature."""
        if self.kind != "traceback":
            return self.kind
        frames = [line.strip() for line in self.detail.splitlines() if line.strip().startswith("File ") and PACKAGE in line]
        last = self.detail.strip().splitlines()[-1] if self.detail.strip() else ""
        where = frames[-1] if frames else ""
        return f"{last.split(':')[0]} @ {where.split(', in ')[0].split(PACKAGE)[-1]}"


def _child(path: str, args: list[list[str]], pipe_w: int) -> None:
    """In the forked child: run the commands, write the first traceback (or nothing) to the pipe."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.alarm(HANG_S)  # the default action ends the child: the parent sees SIGALRM
    message = b""
    for argv in args:
        result = CliRunner().invoke(cli_main, [argv[0], path, *argv[1:]])
        if result.exc_info is not None and not issubclass(result.exc_info[0], SystemExit):
            text = "".join(traceback.format_exception(*result.exc_info))
            message = json.dumps({"command": " ".join(argv), "traceback": text}).encode()
            break
    os.write(pipe_w, message)
    os._exit(0)


def run_one(data: bytes, commands: list[list[str]], workdir: str) -> Outcome:
    """Run ``commands`` on ``data`` in a forked child; its outcome, with peak RSS and wall time."""
    path = os.path.join(workdir, "input.pcap")
    Path(path).write_bytes(data)
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _child(path, commands, write_fd)
        finally:
            os._exit(70)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - start
    rss = usage.ru_maxrss
    names = " ; ".join(" ".join(c) for c in commands)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
        return Outcome("hang", names, f"still running after {HANG_S} s", rss, seconds)
    if chunks:
        found = json.loads(b"".join(chunks))
        kind = "rss" if "MemoryError" in found["traceback"].splitlines()[-1] else "traceback"
        return Outcome(kind, found["command"], found["traceback"], rss, seconds)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return Outcome("traceback", names, f"child died with status {status}", rss, seconds)
    if rss > RSS_LIMIT_KB:
        return Outcome("rss", names, f"peak RSS {rss / 1024:.0f} MB", rss, seconds)
    return Outcome("ok", names, "", rss, seconds)


class Recorder:
    """Counts the inputs and keeps the first input of each distinct failure signature."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.tried = 0
        self.kinds: dict[str, int] = {}
        self.signatures: dict[str, int] = {}
        self.max_rss_kb = 0
        self.max_seconds = 0.0

    def add(self, seed_name: str, plan: list[Mutation], data: bytes, outcome: Outcome) -> None:
        self.tried += 1
        self.kinds[outcome.kind] = self.kinds.get(outcome.kind, 0) + 1
        self.max_rss_kb = max(self.max_rss_kb, outcome.rss_kb)
        self.max_seconds = max(self.max_seconds, outcome.seconds)
        if outcome.kind == "ok":
            return
        sig = outcome.signature()
        seen = self.signatures.get(sig, 0)
        self.signatures[sig] = seen + 1
        if seen:
            return
        folder = self.out / f"{outcome.kind}-{hashlib.sha1(sig.encode()).hexdigest()[:10]}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "input.pcap").write_bytes(data)
        (folder / "finding.txt").write_text(
            f"signature: {sig}\nseed: {seed_name}\nplan: {json.dumps(plan)}\ncommand: {outcome.command}\n"
            f"input: {len(data)} bytes, crc {crc(data)}\npeak RSS: {outcome.rss_kb} KB\nseconds: {outcome.seconds:.1f}\n\n"
            f"{outcome.detail}\n"
        )
        print(f"[{self.tried}] {outcome.kind}: {sig} ({seed_name})", flush=True)

    def summary(self) -> dict[str, object]:
        return {
            "inputs": self.tried,
            "outcomes": self.kinds,
            "distinct_failures": self.signatures,
            "max_rss_mb": round(self.max_rss_kb / 1024, 1),
            "max_seconds": round(self.max_seconds, 2),
        }


REPORT_FORMATS = ["text", "json", "csv"]
DETAILS_FORMATS = ["text", "json"]


def fuzz(minutes: float, out: Path, max_examples: int) -> dict[str, object]:
    """Draw inputs with hypothesis until ``minutes`` have passed (or ``max_examples``)."""
    corpus = seeds()
    names = sorted(corpus)
    recorder = Recorder(out)
    deadline = time.monotonic() + 60 * minutes
    workdir = tempfile.mkdtemp(prefix="tcpsack-fuzz-")

    @settings(max_examples=min(max_examples, 500), deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(names), plan=st.lists(mutation(), min_size=1, max_size=4),
           report_fmt=st.sampled_from(REPORT_FORMATS), details_fmt=st.sampled_from(DETAILS_FORMATS))
    def one(seed: str, plan: list[Mutation], report_fmt: str, details_fmt: str) -> None:
        if time.monotonic() > deadline or recorder.tried >= max_examples:
            return
        data = apply(corpus[seed], plan)
        commands = [["report", "--format", report_fmt], ["details", "--format", details_fmt]]
        recorder.add(seed, plan, data, run_one(data, commands, workdir))
        if recorder.tried % 200 == 0:
            print(json.dumps(recorder.summary()), flush=True)

    while time.monotonic() < deadline and recorder.tried < max_examples:
        one()  # 500 examples a call: hypothesis draws afresh each time (no database)
    summary = recorder.summary()
    (out / "summary.json").parent.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def replay(folder: Path) -> int:
    """Run every capture under ``folder`` through the console script under ``/usr/bin/time -v``
    (its peak RSS) with a HANG_S timeout; print one line per run and count the failures."""
    failures = 0
    captures = sorted(p for p in folder.rglob("*") if p.suffix in (".pcap", ".pcapng", ".gz"))
    for path in captures:
        for argv in (["report", "--format", "json"], ["details"]):
            cmd = ["/usr/bin/time", "-v", "tcpsack-analyze", argv[0], str(path), *argv[1:]]
            try:
                proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=HANG_S)
            except subprocess.TimeoutExpired:
                print(f"HANG {path} {argv[0]}")
                failures += 1
                continue
            rss = int(next((line.split()[-1] for line in proc.stderr.splitlines() if "Maximum resident set size" in line), "0"))
            messages = [line for line in proc.stderr.splitlines() if line.startswith(("warning:", "error:"))]
            bad = "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2, 3) or rss > RSS_LIMIT_KB
            failures += bad
            print(f"{'FAIL' if bad else 'ok  '} {path} {argv[0]}: exit {proc.returncode}, peak RSS {rss // 1024} MB; {' | '.join(messages)[:200]}")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to draw inputs")
    parser.add_argument("--max-examples", type=int, default=10**9, help="stop after this many inputs")
    parser.add_argument("--out", type=Path, default=ROOT / "fuzz" / "findings", help="where findings are kept")
    parser.add_argument("--replay", type=Path, metavar="DIR", help="run the inputs under DIR through the console script")
    args = parser.parse_args()
    if args.replay:
        sys.exit(1 if replay(args.replay) else 0)
    print(json.dumps(fuzz(args.minutes, args.out, args.max_examples), indent=1))


if __name__ == "__main__":
    main()
