"""Vectorised field extraction: read an integer at many byte offsets of one buffer at once.

Buffers handed to these helpers are padded (see :data:`PAD`) so that reading a few bytes past
the end of a truncated packet never raises; callers decide from ``caplen`` which values are
real.

Each read is a single numpy gather: the buffer is viewed as an array of (unaligned,
byte-swapped where needed) integers or fixed-size byte strings starting at *every* byte offset
(stride 1), and indexed with the positions. That is 3-4 times faster than gathering byte by
byte and shifting. An index past the end of the view raises IndexError, as reading past the
buffer byte by byte would.
"""
from __future__ import annotations

import numpy as np

PAD = 128  # zero bytes appended to every chunk buffer


def padded(data: bytes | bytearray | memoryview) -> np.ndarray:
    """Copy ``data`` into a uint8 array with :data:`PAD` zero bytes after it."""
    arr = np.zeros(len(data) + PAD, dtype=np.uint8)
    arr[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    return arr


def at_every_byte(buf: np.ndarray, dtype: np.dtype | str) -> np.ndarray:
    """``buf`` (a contiguous uint8 array) seen as items of ``dtype`` starting at every byte offset."""
    dt = np.dtype(dtype)
    return np.ndarray(shape=(max(buf.shape[0] - dt.itemsize + 1, 0),), dtype=dt, buffer=buf, strides=(1,))


def gather(buf: np.ndarray, pos: np.ndarray, dtype: np.dtype | str) -> np.ndarray:
    """The ``dtype`` item (an integer, or a record of fields) at each position, as a new array."""
    dt = np.dtype(dtype)
    if dt.names is None:
        return at_every_byte(buf, dt)[pos]
    # records: gather raw byte strings (much faster than gathering a structured dtype), then view
    return at_every_byte(buf, f"V{dt.itemsize}")[pos].view(dt)


def be16(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return gather(buf, pos, ">u2").astype(np.int64)


def le16(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return gather(buf, pos, "<u2").astype(np.int64)


def be32(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return gather(buf, pos, ">u4").astype(np.int64)


def le32(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return gather(buf, pos, "<u4").astype(np.int64)


def u32(buf: np.ndarray, pos: np.ndarray, big_endian: bool) -> np.ndarray:
    return be32(buf, pos) if big_endian else le32(buf, pos)


def take_bytes(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """An (n, width) uint8 array of the ``width`` bytes at each position."""
    return gather(buf, pos, f"V{width}").view(np.uint8).reshape(-1, width)
