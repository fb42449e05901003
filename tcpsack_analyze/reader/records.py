"""A batch of capture records: the raw bytes of many packets plus their record headers.

The compiled core cuts the stream into chunks of records and decodes them itself; this copy of
a chunk's records is handed to Python only where Python needs the raw bytes: the reader's tests
and benchmarks (``reader.chunk_records``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RecordBatch:
    """Records of one chunk of a capture, in file order.

    ``buf`` holds the chunk's bytes; record ``i``'s captured bytes are
    ``buf[start[i] : start[i] + caplen[i]]``.
    """

    buf: np.ndarray  # uint8
    start: np.ndarray  # int64, offset of the packet bytes in buf
    caplen: np.ndarray  # int64, captured length
    wirelen: np.ndarray  # int64, original length on the wire
    ts_ns: np.ndarray  # int64, nanoseconds since the epoch
    linktype: np.ndarray  # int32, LINKTYPE_* of each record
    file_offset: np.ndarray  # int64, offset of the record header in the capture stream
    first_index: int  # index (0-based, over the whole capture) of the first record

    def __len__(self) -> int:
        return int(self.start.shape[0])
