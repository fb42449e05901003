"""Errors raised for captures that cannot be read, with the file and byte offset at fault."""
from __future__ import annotations


class CaptureError(Exception):
    """A capture file (or part of it) cannot be read.

    ``offset`` is the byte offset in the (decompressed) capture stream where reading failed.
    The message is meant to be shown to the user as a single line.
    """

    def __init__(self, path: str, offset: int | None, message: str) -> None:
        self.path = path
        self.offset = offset
        self.message = message
        where = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"{path}{where}: {message}")
