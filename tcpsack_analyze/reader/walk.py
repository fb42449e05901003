"""The sequential inner loops of the format walkers, interpreted or compiled with numba.

Finding record ``k + 1`` needs the length field of record ``k``, so the walk from one record
(or block) header to the next cannot be vectorised; everything else about a record is gathered
afterwards for the whole chunk at once with numpy. A kernel here is plain Python that reads
32-bit words of a buffer by index (:func:`u32_views`) and writes into preallocated numpy
arrays, and runs one of two ways, from the same source:

- interpreted, reading the buffer through memoryviews (indexing gives Python ints): no
  start-up cost, 0.37 us (pcap) to 1.3 us (pcapng) per record;
- compiled by numba (``njit(cache=True)``), reading it through a numpy view: 30-40 ns per
  record, but importing numba (0.2-0.4 s) and loading the cached machine code (0.25-0.35 s)
  costs about 0.6-0.7 s per process, and the first compilation on a machine 0.7-1 s (pcap) and
  0.8-1.8 s (pcapng) more (figures of benchmarks/README.md).

So a capture is walked interpreted until it is known to be large (the kernel's
``compile_after`` records, counted or estimated from the file size: for pcapng about where the
interpreted walk would cost as much as loading numba; for pcap, whose interpreted walk is
cheaper, later, because numba also costs ~110 MB of RSS), then compiled. Small captures never
import numba. When numba is missing or fails to compile, the interpreted kernel is used
throughout.

Kernels must keep every index in bounds themselves: compiled code does not check them.
"""
from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# Records walked interpreted before the size of a capture is estimated from its file size.
PROBE_RECORDS = 4096


def _cache_dir() -> None:
    """Point numba's cache to a per-user directory when the package's own is not writable.

    numba caches compiled kernels in ``__pycache__`` next to this file; an installation in a
    read-only location gets ``$XDG_CACHE_HOME/tcpsack-analyze/numba`` (``~/.cache/...``)
    instead. A user's own ``NUMBA_CACHE_DIR`` is left alone, and so is a numba already imported.
    """
    if "NUMBA_CACHE_DIR" in os.environ or "numba" in sys.modules:
        return
    here = Path(__file__).resolve().parent / "__pycache__"
    target = here if here.exists() else here.parent
    if os.access(target, os.W_OK):
        return
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ["NUMBA_CACHE_DIR"] = str(root / "tcpsack-analyze" / "numba")


class Kernel:
    """A walker kernel, callable interpreted or compiled (see the module docstring).

    ``compile_after``: the number of records of a capture from which the compiled kernel is
    used (measured break-even: interpreted cost per record against numba's start-up).
    """

    def __init__(self, func: Callable[..., Any], compile_after: int) -> None:
        self.func = func
        self.compile_after = compile_after
        self._compiled: Callable[..., Any] | None = None
        self._compile_error: type[Exception] = Exception  # numba's error class, once imported
        self._failed = False

    def compiled(self) -> Callable[..., Any] | None:
        """The numba-compiled kernel (imported and compiled or loaded from cache on first use),
        or None when numba is unavailable or cannot compile it."""
        if self._compiled is None and not self._failed:
            try:
                _cache_dir()
                import numba

                try:
                    jit = numba.njit(cache=True, nogil=True)(self.func)
                except RuntimeError:  # no writable cache directory at all: compile every time
                    jit = numba.njit(nogil=True)(self.func)
                self._compiled, self._compile_error = jit, numba.core.errors.NumbaError
            except Exception as exc:  # noqa: BLE001 - ImportError or anything numba raises
                self._failure(exc)
        return self._compiled

    def _failure(self, exc: Exception) -> None:
        self._failed = True
        self._compiled = None
        if not isinstance(exc, ImportError):
            warnings.warn(f"numba could not compile the capture walker ({exc}); using the slower interpreted one", RuntimeWarning, stacklevel=3)

    def __call__(self, compiled: bool, buf: np.ndarray, *args: Any) -> Any:
        """Run over ``buf`` (a C-contiguous uint8 array), compiled when asked and possible."""
        if compiled:
            jit = self.compiled()
            if jit is not None:
                try:
                    return jit(u32_views(buf, True), *args)
                except self._compile_error as exc:  # compilation happens at the first call
                    self._failure(exc)
        # interpreted: output arrays as memoryviews too (storing a Python int is cheaper)
        return self.func(u32_views(buf, False), *(a.data if isinstance(a, np.ndarray) else a for a in args))


HOST_BIG_ENDIAN = sys.byteorder == "big"


def u32_views(buf: np.ndarray, compiled: bool) -> Any:
    """``buf`` as host-order 32-bit words at every byte offset, for the kernels: the word at
    byte ``i`` is ``w32[i & 3][i >> 2]`` (one index per read instead of four bytes to combine).

    For compiled kernels a (4, m) uint32 array whose row ``r`` starts at byte ``r`` (strides 1
    and 4: unaligned); interpreted, four memoryviews cast to unsigned int, whose indexing gives
    Python ints. The last 3 bytes start no word.
    """
    m = max(buf.shape[0] - 3, 0) // 4
    if compiled:
        return np.ndarray(shape=(4, m), dtype=np.uint32, buffer=buf, strides=(1, 4))
    data = buf.data
    return tuple(data[r : r + 4 * m].cast("I") for r in range(4))


class Mode:
    """When to switch a capture's walk with ``kernel`` from interpreted to compiled."""

    def __init__(self, kernel: Kernel, file_size: int | None) -> None:
        self.threshold = kernel.compile_after
        self.file_size = file_size
        self.compiled = self.threshold <= 0

    def room(self, out: np.ndarray, count: int) -> np.ndarray:
        """Where a kernel may store its next records: the rest of ``out`` (from ``count``) when
        compiled, else a probe's worth of it, so the decision can be revisited soon."""
        return out[count:] if self.compiled else out[count : count + PROBE_RECORDS]

    def update(self, records: int, consumed: int) -> bool:
        """Decide after ``records`` records in ``consumed`` bytes of the stream; True once
        compiled kernels are to be used from now on."""
        if not self.compiled:
            if records >= self.threshold:
                self.compiled = True
            elif self.file_size and records >= PROBE_RECORDS and consumed > 0:
                self.compiled = records * self.file_size / consumed >= self.threshold
        return self.compiled


def _pcap_walk(w32, pos, n, swap, limit, out):
    """Walk classic pcap record headers in bytes ``[pos, n)`` of the buffer read through ``w32``
    (see :func:`u32_views`), storing each header's offset in ``out``; ``swap``: the file's byte
    order is not the host's.

    Stops at the first record not wholly inside the first ``n`` bytes or when ``out`` is full.
    Returns (records stored, offset where the walk stopped, True if it stopped at a record whose
    captured length exceeds ``limit``).
    """
    k = 0
    cap = len(out)
    while pos + 16 <= n and k < cap:
        i = pos + 8
        cl = w32[i & 3][i >> 2]
        if swap:
            cl = ((cl >> 24) & 0xFF) | ((cl >> 8) & 0xFF00) | ((cl & 0xFF00) << 8) | ((cl & 0xFF) << 24)
        if cl > limit:
            return k, pos, True
        nxt = pos + 16 + cl
        if nxt > n:
            break
        out[k] = pos
        k += 1
        pos = nxt
    return k, pos, False


# Time alone breaks even at ~1.8M records (0.37 us per record interpreted against ~0.7 s to
# import numba and load the kernel), but numba also adds ~110 MB to the peak RSS, half of a
# 1M-packet report's, while the walk is ~7% of a report's time per packet: so the compiled walk
# waits until a capture is big enough for the saving to matter (10M records: ~3 s of ~50 s) and
# for the step to be small beside what the analysis holds by then.
pcap_walk = Kernel(_pcap_walk, compile_after=10_000_000)
