"""The link types the compiled core decodes (LINKTYPE_* of https://www.tcpdump.org/linktypes.html).

The decoding itself is in the crate (``src/decode.rs``); docs/link-types.md has the header
layout of each. Records of other link types are counted and skipped (pcapng), or make a pcap
file unreadable from its file header.
"""
from __future__ import annotations

from tcpsack_analyze import _core

SUPPORTED: frozenset[int] = frozenset(_core.SUPPORTED_LINKTYPES)
