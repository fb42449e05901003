"""BPF capture filters (tcpdump syntax), compiled and run by libpcap itself.

The compiled core calls libpcap (``src/bpf.rs``): the expression is compiled with
``pcap_compile`` once per link type and each record is tested with libpcap's ``bpf_filter``,
inside the reader's chunk loop. This module finds the library: the system's ``libpcap.so`` when
there is one, otherwise the copy shipped inside the ``libpcap`` wheel (a dependency of this
package), so that ``--filter`` works on machines where libpcap is not installed.
"""
from __future__ import annotations

from tcpsack_analyze import _core


class FilterError(ValueError):
    """The filter expression does not compile (the message is libpcap's)."""


def _bundled_library() -> str | None:
    import importlib.util
    import platform
    from pathlib import Path

    spec = importlib.util.find_spec("libpcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "_platform"
    machine = platform.machine().lower()
    for cand in (root / "linux" / machine / "tcpdump" / "libpcap.so", root / "macos" / machine / "tcpdump" / "libpcap.dylib"):
        if cand.exists():
            return str(cand)
    return None


def load_libpcap(expression: str) -> _core.Bpf:
    """``expression`` with libpcap loaded: the system's library, else the one bundled with the libpcap wheel."""
    import ctypes.util  # here: it imports subprocess, shutil and tempfile, which a run without --filter never needs

    for name in (ctypes.util.find_library("pcap"), _bundled_library()):
        if not name:
            continue
        try:
            return _core.Bpf(name, expression)
        except _core.BpfError:
            continue
    raise FilterError("libpcap is not available: install libpcap (Debian: libpcap0.8) or the 'libpcap' Python package")


class BpfFilter:
    """A filter expression, compiled by libpcap for each link type it meets (``core`` runs it)."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.core = load_libpcap(expression)
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

    def error(self, exc: _core.BpfError) -> FilterError:
        """The FilterError of libpcap's message in ``exc``."""
        return FilterError(f"invalid filter expression {self.expression!r}: {exc.args[0]}")

    def program(self, linktype: int) -> None:
        """Compile the expression for ``linktype`` (once); raise :class:`FilterError` with libpcap's message."""
        try:
            self.core.program(linktype)
        except _core.BpfError as exc:
            raise self.error(exc) from None
