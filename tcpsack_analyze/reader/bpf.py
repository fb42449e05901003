"""BPF capture filters (tcpdump syntax), compiled and run by libpcap itself.

libpcap is loaded with ctypes: the system's ``libpcap.so`` when there is one, otherwise the
copy shipped inside the ``libpcap`` wheel (a dependency of this package), so that ``--filter``
works on machines where libpcap is not installed. The expression is compiled with
``pcap_compile`` once per link type and each record is tested with libpcap's ``bpf_filter``.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import platform
from pathlib import Path

import numpy as np

from tcpsack_analyze.reader.records import RecordBatch

PCAP_NETMASK_UNKNOWN = 0xFFFFFFFF
SNAPLEN = 262144


class FilterError(ValueError):
    """The filter expression does not compile (the message is libpcap's)."""


class _BpfProgram(ctypes.Structure):
    _fields_ = [("bf_len", ctypes.c_uint), ("bf_insns", ctypes.c_void_p)]


def _bundled_library() -> str | None:
    spec = importlib.util.find_spec("libpcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "_platform"
    machine = platform.machine().lower()
    for cand in (root / "linux" / machine / "tcpdump" / "libpcap.so", root / "macos" / machine / "tcpdump" / "libpcap.dylib"):
        if cand.exists():
            return str(cand)
    return None


def load_libpcap() -> ctypes.CDLL:
    """The libpcap shared library: the system's, else the one bundled with the libpcap wheel."""
    for name in (ctypes.util.find_library("pcap"), _bundled_library()):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.pcap_open_dead.restype = ctypes.c_void_p
        lib.pcap_open_dead.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.pcap_compile.argtypes = [ctypes.c_void_p, ctypes.POINTER(_BpfProgram), ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]
        lib.pcap_geterr.restype = ctypes.c_char_p
        lib.pcap_geterr.argtypes = [ctypes.c_void_p]
        lib.pcap_close.argtypes = [ctypes.c_void_p]
        lib.bpf_filter.restype = ctypes.c_uint
        lib.bpf_filter.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
        return lib
    raise FilterError("libpcap is not available: install libpcap (Debian: libpcap0.8) or the 'libpcap' Python package")


class BpfFilter:
    """A compiled filter expression, applied to record batches."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self._lib = load_libpcap()
        self._programs: dict[int, _BpfProgram] = {}
        self._check()

    def _check(self) -> None:
        """Reject, before any record is read, an expression that compiles for no usual link type.

        Programs are otherwise compiled on the first record of each link type, so a syntax error
        would go unnoticed in a capture without records (or one that cannot be read).
        """
        first: FilterError | None = None
        for linktype in (1, 101, 113, 276):  # Ethernet, raw IP, Linux SLL and SLL2
            try:
                self.program(linktype)
                return
            except FilterError as exc:
                first = first or exc
        assert first is not None
        raise first

    def program(self, linktype: int) -> _BpfProgram:
        prog = self._programs.get(linktype)
        if prog is None:
            handle = self._lib.pcap_open_dead(linktype, SNAPLEN)
            prog = _BpfProgram()
            try:
                if self._lib.pcap_compile(handle, ctypes.byref(prog), self.expression.encode(), 1, PCAP_NETMASK_UNKNOWN) != 0:
                    err = self._lib.pcap_geterr(handle).decode(errors="replace")
                    raise FilterError(f"invalid filter expression {self.expression!r}: {err}")
            finally:
                self._lib.pcap_close(handle)
            self._programs[linktype] = prog
        return prog

    def matches(self, rec: RecordBatch) -> np.ndarray:
        """Boolean mask of the records that pass the filter."""
        out = np.zeros(len(rec), dtype=bool)
        base = rec.buf.ctypes.data
        run = self._lib.bpf_filter
        for lt in np.unique(rec.linktype):
            insns = self.program(int(lt)).bf_insns
            rows = np.nonzero(rec.linktype == lt)[0]
            starts = (rec.start[rows] + base).tolist()
            caps = rec.caplen[rows].tolist()
            wires = rec.wirelen[rows].tolist()
            out[rows] = [run(insns, p, w, c) != 0 for p, w, c in zip(starts, wires, caps)]
        return out
