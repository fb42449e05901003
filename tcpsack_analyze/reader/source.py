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
        self.error: CaptureError | None = None  # set when the stream broke off (see read)

    def read(self, n: int) -> bytes:
        """Read up to ``n`` bytes; fewer only at end of stream.

        A gzip stream that is truncated or corrupt ends where the decompressor stops: the bytes
        decompressed before that point are returned (read piecewise with ``read1`` so none are
        lost) and the error is kept in :attr:`error`, for the format walkers to raise once they
        have handed out the records before it. A read that cannot return any byte raises it.
        """
        if self.error is not None:
            raise self.error
        parts = []
        want = n
        read = self._stream.read1 if self.compressed else self._stream.read  # type: ignore[attr-defined]
        while want > 0:
            try:
                data = read(want)
            except (OSError, EOFError, zlib.error) as exc:
                what = "gzip stream is corrupt or truncated" if self.compressed else "read error"
                self.error = CaptureError(self.path, self.offset + n - want, f"{what} ({exc})")
                if not parts:
                    raise self.error from None
                break
            if not data:
                break
            parts.append(data)
            want -= len(data)
        out = b"".join(parts) if len(parts) != 1 else parts[0]
        self.offset += len(out)
        return out

    def end_of_records(self, leftover: bytes, offset: int, unit: str) -> None:
        """At the end of the stream: raise the error that cut it short, if any.

        That is the stream's own error (a gzip stream that broke off) or, when ``leftover`` bytes
        remain that do not make a whole ``unit`` (record, block), a truncated-capture error at
        ``offset``.
        """
        if self.error is not None:  # a gzip stream broke off: that is where the capture ends
            raise self.error
        if leftover:
            raise CaptureError(self.path, offset, f"file ends in the middle of a {unit} (truncated capture)")

    def close(self) -> None:
        if self._raw is not sys.stdin.buffer:
            self._raw.close()
