"""Hand the heap's free pages back to the operating system between chunks (glibc only).

Every chunk of a capture allocates some 40 MB of short-lived numpy arrays next to the
analysis's long-lived small objects. glibc serves large arrays from the heap once freeing an
earlier mapping of that size has raised its (dynamic) mmap threshold, and freed heap pages stay
resident until the top of the heap is free, which a live object allocated later prevents. So
RSS grew with the capture faster than the analysis's live data did: reading the 5M-packet
benchmark capture, 212 MB after 650k packets and 337 MB after 4.6M, against 141 and 209 MB
with ``malloc_trim(0)`` after every chunk; the 1M-packet report's peak went from 249 to 224 MB
(benchmarks/README.md). ``malloc_trim`` also releases free
pages inside the heap (madvise), not only its top; a call costs about a millisecond, once per
chunk (2 MB by default, reader.DEFAULT_CHUNK). Where the C library has no ``malloc_trim`` (musl, macOS) nothing is done.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the symbols already loaded in the process, or None."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # no such symbol; Windows has no CDLL(None)
        return None


def release_free_pages() -> bool:
    """Return the C heap's free pages to the system; True when glibc did release some."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
