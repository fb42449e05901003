"""reader/heap.py: freed heap pages go back to the system between chunks, where glibc allows."""
from __future__ import annotations

import platform

import pytest

from tcpsack_analyze.reader import heap


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_trim_is_found_and_called() -> None:
    assert heap._malloc_trim() is not None
    blocks = [bytearray(200_000) for _ in range(200)]  # above and below the mmap threshold
    del blocks
    assert isinstance(heap.release_free_pages(), bool)


def test_without_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.release_free_pages() is False
