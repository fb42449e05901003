"""TCP option parsing, vectorised over a batch (RFC 9293 section 3.2, RFC 7323, RFC 2018).

The option area is walked one option at a time for all packets at once: each step reads the
kind byte of every packet still inside its option area, records the options of interest and
advances by that option's length. Headers-only captures can cut the option area short: an
option that runs past the captured bytes is flagged ``truncated``, never guessed at; one whose
length is impossible (below 2, or past the TCP header) is flagged ``malformed``.

Most option areas of a capture have one of a few layouts (NOP NOP TS, the same plus SACK
blocks, Linux's SYN options): those are recognised by comparing whole 32-bit words and decoded
without the walk, which then runs over the remaining rows only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.reader.fields import be16, be32, gather

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


def parse_options(
    buf: np.ndarray, begin: np.ndarray, header_end: np.ndarray, captured_end: np.ndarray, *, fast: bool = True
) -> TcpOptions:
    """Parse the option areas ``[begin, header_end)``, of which ``[begin, captured_end)`` was captured.

    With ``fast`` (the default), areas laid out in one of the :func:`_common_layouts` are decoded
    directly and only the others are walked option by option; the result is the same.
    """
    n = begin.shape[0]
    neg = np.full(n, -1, dtype=np.int64)
    out = TcpOptions(
        mss=neg.copy(),
        wscale=neg.copy(),
        sack_permitted=np.zeros(n, dtype=bool),
        tsval=neg.copy(),
        tsecr=neg,
        nsack=np.zeros(n, dtype=np.int64),
        sack=np.zeros((n, MAX_SACK_BLOCKS, 2), dtype=np.int64),
        sack_empty=np.zeros(n, dtype=bool),
        truncated=np.zeros(n, dtype=bool),
        malformed=np.zeros(n, dtype=bool),
    )
    end = np.minimum(header_end, captured_end)
    out.truncated |= (captured_end < header_end) & (begin >= end) & (begin < header_end)
    todo = begin < end
    if fast:
        todo &= ~_common_layouts(buf, begin, header_end, captured_end, out)
    _walk(buf, np.nonzero(todo)[0], begin, end, header_end, out)
    return out


# an option area as big-endian 32-bit words (option areas are multiples of 4 bytes, at most 40)
_WORDS = np.dtype([("w", ">u4", (10,))])
_NOP_NOP_TS = 0x0101080A  # NOP, NOP, kind 8, length 10
_NOP_NOP_SACK = 0x01010500  # NOP, NOP, kind 5; plus the length in the low byte
# By area length (44: none of the layouts), the word that makes a layout, or -1 (no 32-bit word
# is -1): word 3 of NOP NOP TS NOP NOP SACK (1-3 blocks, 24-40 bytes), word 0 of NOP NOP SACK
# (1-4 blocks, 12-36 bytes).
_NO_LAYOUT = 44
_TS_SACK_WORD3 = np.full(_NO_LAYOUT + 1, -1, dtype=np.int64)
_TS_SACK_WORD3[[24, 32, 40]] = [_NOP_NOP_SACK + a - 14 for a in (24, 32, 40)]
_SACK_WORD0 = np.full(_NO_LAYOUT + 1, -1, dtype=np.int64)
_SACK_WORD0[[12, 20, 28, 36]] = [_NOP_NOP_SACK + a - 2 for a in (12, 20, 28, 36)]


def _common_layouts(buf: np.ndarray, begin: np.ndarray, header_end: np.ndarray, captured_end: np.ndarray, out: TcpOptions) -> np.ndarray:
    """Decode the option areas laid out in the usual ways; return a mask of the rows done.

    The layouts (Linux's, the bulk of any capture; other stacks' SYNs are left to the walk):

    - NOP NOP TS (12 bytes): every segment once timestamps are on;
    - NOP NOP TS NOP NOP SACK with 1-3 blocks (24, 32, 40 bytes);
    - NOP NOP SACK with 1-4 blocks (12, 20, 28, 36 bytes): SACK without timestamps;
    - MSS SACK-permitted TS NOP WS (20 bytes): SYN and SYN-ACK.

    Only wholly captured areas whose bytes match a layout exactly are decoded here, so what is
    stored is what the option-by-option walk would store (tests check this on random bytes).
    """
    n = begin.shape[0]
    area = header_end - begin
    full = captured_end >= header_end
    # the first 40 bytes of every area as big-endian words: (n, 10) uint32, a strided view. Bytes
    # past an area are read (they lie in the padded buffer) but never decide a match.
    w = gather(buf, begin, _WORDS)["w"]
    w0 = w[:, 0]
    a = np.clip(area, 0, _NO_LAYOUT)  # for the tables below: one entry per area length
    ts = full & (w0 == _NOP_NOP_TS)
    ts_only = ts & (area == 12)
    ts_sack = ts & (w[:, 3] == _TS_SACK_WORD3.take(a))
    sack_only = full & (w0 == _SACK_WORD0.take(a))
    syn = full & (area == 20) & ((w0 >> 16) == 0x0204) & (w[:, 1] == 0x0402080A) & ((w[:, 4] >> 8) == 0x010303)

    # out is fresh (every value absent): whole columns can be written at once
    m = ts_only | ts_sack
    out.tsval = np.where(m, w[:, 1], out.tsval)
    out.tsecr = np.where(m, w[:, 2], out.tsecr)
    if syn.any():
        rows = np.nonzero(syn)[0]
        out.mss[rows] = w0[rows] & 0xFFFF
        out.sack_permitted[rows] = True
        out.tsval[rows] = w[rows, 2]
        out.tsecr[rows] = w[rows, 3]
        out.wscale[rows] = w[rows, 4] & 0xFF
    edges = out.sack.reshape(n, 2 * MAX_SACK_BLOCKS)
    # (rows, word of the first edge, area length with 1 block): the areas grow by 8 per block
    for m, first, one_block in ((ts_sack, 4, 24), (sack_only, 1, 12)):
        rows = np.nonzero(m)[0]
        if rows.size == 0:
            continue
        a = area[rows]
        for k in range(1, MAX_SACK_BLOCKS + 1):
            rk = rows[a == one_block + 8 * (k - 1)]
            if rk.size:
                out.nsack[rk] = k
                edges[rk, : 2 * k] = w[rk, first : first + 2 * k]
    return ts_only | ts_sack | sack_only | syn


def _walk(buf: np.ndarray, idx: np.ndarray, begin: np.ndarray, end: np.ndarray, header_end: np.ndarray, out: TcpOptions) -> None:
    """Walk the option areas of rows ``idx`` one option at a time (all rows at once per step)."""
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
