"""Opening a capture: a path or ``-`` for standard input, plain or gzip-compressed."""
from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from typing import BinaryIO

import numpy as np

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.fields import PAD

GZIP_MAGIC = b"\x1f\x8b"


class ByteSource:
    """A forward-only byte stream with an exact offset, tolerant of short reads.

    Wraps a file, stdin or a gzip stream. ``read(n)`` returns fewer than ``n`` bytes only at
    the end of the stream. Decompression errors become :class:`CaptureError`.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        raw: BinaryIO
        if path == "-":
            raw = sys.stdin.buffer
        else:
            try:
                raw = open(path, "rb")  # noqa: SIM115 - closed in close()
            except OSError as exc:
                raise CaptureError(path, None, f"cannot open: {exc.strerror or exc}") from None
        head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
        if not head and path == "-":
            buffered = io.BufferedReader(raw)  # type: ignore[type-var]
            head = buffered.peek(2)[:2]
            raw = buffered
        self._raw = raw
        self.compressed = head == GZIP_MAGIC
        self._stream: BinaryIO = gzip.GzipFile(fileobj=raw) if self.compressed else raw  # type: ignore[assignment]
        self.offset = 0
        self.error: CaptureError | None = None  # set when the stream broke off (see read)

    @property
    def size(self) -> int | None:
        """Size in bytes of an uncompressed regular file (None for pipes, stdin and gzip)."""
        if self.compressed:
            return None
        try:
            st = os.fstat(self._raw.fileno())
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def read(self, n: int) -> bytes:
        """Read up to ``n`` bytes; fewer only at end of stream (see :meth:`readinto`)."""
        out = bytearray(n)
        got = self.readinto(memoryview(out))
        del out[got:]
        return bytes(out)

    def readinto(self, out: memoryview) -> int:
        """Fill ``out`` and return how many bytes were read; fewer than asked only at end of stream.

        A gzip stream that is truncated or corrupt ends where the decompressor stops: the bytes
        decompressed before that point are returned (read piecewise with ``readinto1`` so none
        are lost) and the error is kept in :attr:`error`, for the format walkers to raise once
        they have handed out the records before it. A read that cannot return any byte raises it.
        """
        if self.error is not None:
            raise self.error
        n = len(out)
        got = 0
        fill = self._stream.readinto1 if self.compressed else self._stream.readinto  # type: ignore[attr-defined]
        while got < n:
            try:
                r = fill(out[got:])
            except (OSError, EOFError, zlib.error) as exc:
                what = "gzip stream is corrupt or truncated" if self.compressed else "read error"
                self.error = CaptureError(self.path, self.offset + got, f"{what} ({exc})")
                if not got:
                    raise self.error from None
                break
            if not r:
                break
            got += r
        self.offset += got
        return got

    def chunk(self, carry: np.ndarray, size: int) -> tuple[np.ndarray, int, bool]:
        """A new chunk buffer for the format walkers: the ``carry`` bytes (the unfinished record
        of the previous chunk), then up to ``size`` bytes read from the stream, then
        :data:`~tcpsack_analyze.reader.fields.PAD` zero bytes.

        Returns (buffer, length of the data in it, True when the stream ended). The data is read
        straight into the buffer: no other copy of a chunk is made.
        """
        kept = carry.shape[0]
        buf = np.empty(kept + size + PAD, dtype=np.uint8)
        buf[:kept] = carry
        got = self.readinto(buf.data[kept : kept + size])
        n = kept + got
        buf[n : n + PAD] = 0
        return buf[: n + PAD], n, got < size

    def end_of_records(self, leftover: bytes | np.ndarray, offset: int, unit: str) -> None:
        """At the end of the stream: raise the error that cut it short, if any.

        That is the stream's own error (a gzip stream that broke off) or, when ``leftover`` bytes
        remain that do not make a whole ``unit`` (record, block), a truncated-capture error at
        ``offset``.
        """
        if self.error is not None:  # a gzip stream broke off: that is where the capture ends
            raise self.error
        if len(leftover):
            raise CaptureError(self.path, offset, f"file ends in the middle of a {unit} (truncated capture)")

    def close(self) -> None:
        if self._raw is not sys.stdin.buffer:
            self._raw.close()
