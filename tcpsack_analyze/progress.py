"""A progress bar of bytes read for one long capture, on a terminal only.

The reader is not told about it: a thread watches how far this process has read the file, from
the file offset the kernel keeps for the open descriptor (``/proc/self/fdinfo/N``, ``pos:``;
Linux, see proc(5)), against the file's size. Nothing is drawn when stderr is not a terminal, for
stdin, on systems without ``/proc``, or for files too small to need it.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

MIN_BYTES = 32 << 20  # smaller captures are read in about a second: no bar
POLL_S = 0.25


def read_position(path: str) -> int | None:
    """How far this process has read ``path`` (the largest offset of its open descriptors on
    it), or None when it is not open or /proc cannot tell."""
    try:
        target = os.path.realpath(path)
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    best = None
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != target:
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                pos = next(int(line.split()[1]) for line in fh if line.startswith("pos:"))
        except (OSError, StopIteration, ValueError):
            continue
        best = pos if best is None else max(best, pos)
    return best


@contextmanager
def byte_progress(path: str, *, enabled: bool = True) -> Iterator[None]:
    """Draw a bar of bytes read of ``path`` while the body runs (terminal and large file only)."""
    try:
        size = os.stat(path).st_size if path != "-" else 0
    except OSError:
        size = 0
    if not enabled or size < MIN_BYTES or not sys.stderr.isatty() or not os.path.isdir("/proc/self/fdinfo"):
        yield
        return
    from tqdm import tqdm

    stop = threading.Event()
    bar = tqdm(total=size, unit="B", unit_scale=True, file=sys.stderr, leave=False, desc=os.path.basename(path))

    def watch() -> None:
        while not stop.wait(POLL_S):
            pos = read_position(path)
            if pos is not None and pos > bar.n:
                bar.update(min(pos, size) - bar.n)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()
