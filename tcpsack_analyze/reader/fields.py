"""Vectorised field extraction: read an integer at many byte offsets of one buffer at once.

Buffers handed to these helpers are padded (see :data:`PAD`) so that reading a few bytes past
the end of a truncated packet never raises; callers decide from ``caplen`` which values are
real.
"""
from __future__ import annotations

import numpy as np

PAD = 128  # zero bytes appended to every chunk buffer


def padded(data: bytes | bytearray | memoryview) -> np.ndarray:
    """Copy ``data`` into a uint8 array with :data:`PAD` zero bytes after it."""
    arr = np.zeros(len(data) + PAD, dtype=np.uint8)
    arr[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    return arr


def be16(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return (buf[pos].astype(np.int64) << 8) | buf[pos + 1]


def be32(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return (
        (buf[pos].astype(np.int64) << 24)
        | (buf[pos + 1].astype(np.int64) << 16)
        | (buf[pos + 2].astype(np.int64) << 8)
        | buf[pos + 3]
    )


def le32(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return (
        (buf[pos + 3].astype(np.int64) << 24)
        | (buf[pos + 2].astype(np.int64) << 16)
        | (buf[pos + 1].astype(np.int64) << 8)
        | buf[pos]
    )


def u32(buf: np.ndarray, pos: np.ndarray, big_endian: bool) -> np.ndarray:
    return be32(buf, pos) if big_endian else le32(buf, pos)


def take_bytes(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """An (n, width) uint8 array of the ``width`` bytes at each position."""
    return buf[pos[:, None] + np.arange(width, dtype=np.int64)]
