"""TCP option parsing, vectorised over a batch (RFC 9293 section 3.2, RFC 7323, RFC 2018).

The option area is walked one option at a time for all packets at once: each step reads the
kind byte of every packet still inside its option area, records the options of interest and
advances by that option's length. Headers-only captures can cut the option area short: an
option that runs past the captured bytes is flagged ``truncated``, never guessed at; one whose
length is impossible (below 2, or past the TCP header) is flagged ``malformed``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.reader.fields import be16, be32

KIND_EOL, KIND_NOP, KIND_MSS, KIND_WSCALE, KIND_SACK_PERM, KIND_SACK, KIND_TS = 0, 1, 2, 3, 4, 5, 8
MAX_SACK_BLOCKS = 4


@dataclass
class TcpOptions:
    """Per-packet option values (-1 where absent)."""

    mss: np.ndarray
    wscale: np.ndarray
    sack_permitted: np.ndarray  # bool
    tsval: np.ndarray
    tsecr: np.ndarray  # -1 when no timestamp option
    nsack: np.ndarray  # number of SACK blocks (0..4)
    sack: np.ndarray  # (n, 4, 2) raw 32-bit left/right edges
    sack_empty: np.ndarray  # bool: a SACK option with no blocks (malformed, length 2)
    truncated: np.ndarray  # bool: option area cut by the snap length
    malformed: np.ndarray  # bool


def parse_options(buf: np.ndarray, begin: np.ndarray, header_end: np.ndarray, captured_end: np.ndarray) -> TcpOptions:
    """Parse the option areas ``[begin, header_end)``, of which ``[begin, captured_end)`` was captured."""
    n = begin.shape[0]
    neg = np.full(n, -1, dtype=np.int64)
    out = TcpOptions(
        mss=neg.copy(),
        wscale=neg.copy(),
        sack_permitted=np.zeros(n, dtype=bool),
        tsval=neg.copy(),
        tsecr=neg.copy(),
        nsack=np.zeros(n, dtype=np.int64),
        sack=np.zeros((n, MAX_SACK_BLOCKS, 2), dtype=np.int64),
        sack_empty=np.zeros(n, dtype=bool),
        truncated=np.zeros(n, dtype=bool),
        malformed=np.zeros(n, dtype=bool),
    )
    end = np.minimum(header_end, captured_end)
    out.truncated |= (captured_end < header_end) & (begin >= end) & (begin < header_end)
    idx = np.nonzero(begin < end)[0]
    cur = begin.copy()
    for _ in range(40):  # at most 40 option bytes
        if idx.size == 0:
            break
        c = cur[idx]
        e = end[idx]
        kind = buf[c].astype(np.int64)
        eol = kind == KIND_EOL
        nop = kind == KIND_NOP
        other = ~(eol | nop)
        has_len = c + 1 < e
        length = np.where(has_len, buf[c + 1], 0).astype(np.int64)
        beyond_capture = other & (~has_len | (c + length > e)) & (e < header_end[idx])
        bad = other & ~beyond_capture & ((length < 2) | (c + length > header_end[idx]))
        ok = other & ~beyond_capture & ~bad
        out.truncated[idx[beyond_capture]] = True
        out.malformed[idx[bad]] = True
        for k, want in ((KIND_MSS, 4), (KIND_WSCALE, 3), (KIND_TS, 10)):
            m = ok & (kind == k) & (length == want)
            if m.any():
                p, ci = idx[m], c[m]
                if k == KIND_MSS:
                    out.mss[p] = be16(buf, ci + 2)
                elif k == KIND_WSCALE:
                    out.wscale[p] = buf[ci + 2]
                else:
                    out.tsval[p] = be32(buf, ci + 2)
                    out.tsecr[p] = be32(buf, ci + 6)
        out.sack_permitted[idx[ok & (kind == KIND_SACK_PERM)]] = True
        m = ok & (kind == KIND_SACK)
        if m.any():
            p, ci, ln = idx[m], c[m], length[m]
            blocks = np.minimum((ln - 2) // 8, MAX_SACK_BLOCKS)
            out.nsack[p] = blocks
            out.sack_empty[p[blocks == 0]] = True
            for b in range(MAX_SACK_BLOCKS):
                has = blocks > b
                if not has.any():
                    break
                q, cb = p[has], ci[has] + 2 + 8 * b
                out.sack[q, b, 0] = be32(buf, cb)
                out.sack[q, b, 1] = be32(buf, cb + 4)
        step = np.where(nop, 1, length)
        nxt = c + np.maximum(step, 1)
        cur[idx] = nxt
        keep = ~eol & ~bad & ~beyond_capture & (nxt < e)
        idx = idx[keep]
    return out
