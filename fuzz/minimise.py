"""Shrink a failing capture to the fewest records that still fail the same way.

    PYTHONPATH=$PWD python3 -m fuzz.minimise INPUT OUTPUT --expect "send times" [--code DIR] [--command details]

Records (pcap) or blocks (pcapng; the section header and interface blocks are kept) are removed
in halves, then quarters, and so on (delta debugging, one record at the end), keeping every cut
after which ``tcpsack-analyze COMMAND`` still prints ``--expect`` on stderr or still runs past
``--timeout`` seconds (``--expect hang``). ``--code`` points PYTHONPATH at another copy of the
package: a regression input is minimised against the code that failed (e.g. ``git archive`` of
the commit before the fix), then kept as a test of the fixed one.
"""
from __future__ import annotations

import argparse
import os
import struct
import subprocess
import tempfile
from pathlib import Path

from fuzz.mutate import EPB, Capture, split

KEEP_MEMORY = "ulimit -v 4000000; "  # a runaway allocation fails at 4 GB instead of taking the machine


def fails(data: bytes, expect: str, command: str, code: str, timeout: float) -> bool:
    """True when the capture still fails as expected."""
    with tempfile.NamedTemporaryFile(suffix=".pcap") as f:
        f.write(data)
        f.flush()
        env = dict(os.environ, PYTHONPATH=code)
        script = f"{KEEP_MEMORY}exec python3 -c 'from tcpsack_analyze.cli import main; main()' {command} {f.name} > /dev/null"
        try:
            proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return expect == "hang"
        return expect != "hang" and expect in proc.stderr


def _removable(cap: Capture) -> list[int]:
    """Items that may go: every pcap record; the pcapng packet blocks (the headers stay)."""
    if cap.kind == "pcapng":
        return [i for i, b in enumerate(cap.items) if struct.unpack_from(cap.endian + "I", b, 0)[0] == EPB]
    return list(range(len(cap.items)))


def minimise(data: bytes, expect: str, command: str, code: str, timeout: float) -> bytes:
    """The smallest capture found by removing records from ``data`` that still fails."""
    cap = split(data)
    cap.tail = b""  # a trailing partial record: try without it first
    if not fails(cap.join(), expect, command, code, timeout):
        cap = split(data)
    candidates = _removable(cap)
    size = max(1, len(candidates) // 2)
    while size >= 1 and candidates:
        start = 0
        while start < len(candidates):
            drop = set(candidates[start : start + size])
            trial = Capture(cap.kind, cap.endian, cap.nsec, cap.head, [b for i, b in enumerate(cap.items) if i not in drop], cap.tail)
            if fails(trial.join(), expect, command, code, timeout):
                cap = trial
                candidates = _removable(cap)
                print(f"{len(candidates)} records", flush=True)
            else:
                start += size
        if size == 1:
            break
        size = max(1, size // 2)
    return cap.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--expect", required=True, help="text of the error on stderr, or 'hang'")
    parser.add_argument("--command", default="report", help="tcpsack-analyze subcommand and options")
    parser.add_argument("--code", default=os.getcwd(), help="PYTHONPATH of the package to run")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    data = args.input.read_bytes()
    if not fails(data, args.expect, args.command, args.code, args.timeout):
        raise SystemExit(f"{args.input} does not fail with {args.expect!r}")
    small = minimise(data, args.expect, args.command, args.code, args.timeout)
    args.output.write_bytes(small)
    print(f"{len(data)} -> {len(small)} bytes: {args.output}")


if __name__ == "__main__":
    main()
