"""TCP options of a batch of packets, as columns (RFC 9293 section 3.2, RFC 7323, RFC 2018).

The compiled core (``src/options.rs``) walks each option area one option at a time.
Headers-only captures can cut the option area short: an option that runs past the captured
bytes is flagged ``truncated``, never guessed at; one whose length is impossible (below 2, or
past the TCP header) is flagged ``malformed``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
