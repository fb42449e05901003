"""Opening a capture: a path or ``-`` for standard input, plain or gzip-compressed."""
from __future__ import annotations

import gzip
import io
import sys
import zlib
from typing import BinaryIO

from tcpsack_analyze.errors import CaptureError

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
            buffered = io.BufferedReader(raw)  # type: ignore[arg-type]
            head = buffered.peek(2)[:2]
            raw = buffered
        self._raw = raw
        self.compressed = head == GZIP_MAGIC
        self._stream: BinaryIO = gzip.GzipFile(fileobj=raw) if self.compressed else raw  # type: ignore[assignment]
        self.offset = 0

    def read(self, n: int) -> bytes:
        """Read up to ``n`` bytes; fewer only at end of stream."""
        parts = []
        want = n
        while want > 0:
            try:
                data = self._stream.read(want)
            except (OSError, EOFError, zlib.error) as exc:
                raise CaptureError(self.path, self.offset, f"gzip stream is corrupt or truncated ({exc})") from None
            if not data:
                break
            parts.append(data)
            want -= len(data)
        out = b"".join(parts) if len(parts) != 1 else parts[0]
        self.offset += len(out)
        return out

    def close(self) -> None:
        if self._raw is not sys.stdin.buffer:
            self._raw.close()
