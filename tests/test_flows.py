"""The flow table's grouping of a chunk's packets by flow (src/flow/table.rs, run through
``_core.FlowPipeline``): packets of the same unordered endpoint pair are one connection (no SYN,
no silence: one epoch), whatever their direction; connections are numbered by their first
packet; direction a->b is the first packet's sender. Against a brute-force grouping."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze import _core
from tcpsack_analyze.reader.decode import ACK, PacketBatch
from tcpsack_analyze.reader.options import TcpOptions


def batch_of(endpoints: list[tuple[bytes, int]], packets: list[tuple[int, int]]) -> PacketBatch:
    """ACK-only packets from ``endpoints[src]`` to ``endpoints[dst]``, 1 ms apart."""
    n = len(packets)
    addr = np.array([np.frombuffer(a, np.uint8) for a, _ in endpoints], dtype=np.uint8).reshape(len(endpoints), 16)
    port = np.array([p for _, p in endpoints], dtype=np.int64)
    src = np.array([s for s, _ in packets], dtype=np.int64)
    dst = np.array([d for _, d in packets], dtype=np.int64)
    full = np.full(n, -1, np.int64)
    zeros = np.zeros(n, np.int64)
    no = np.zeros(n, bool)
    opts = TcpOptions(mss=full, wscale=full, sack_permitted=no, tsval=full, tsecr=full, nsack=zeros, sack=np.zeros((n, 4, 2), np.int64),
                      sack_empty=no, truncated=no, malformed=no)
    return PacketBatch(index=np.arange(n, dtype=np.int64), ts_ns=1_000_000 * np.arange(n, dtype=np.int64), ipver=np.full(n, 6, np.int64),
                       src=addr[src], dst=addr[dst], sport=port[src], dport=port[dst], seq=zeros + 1000, ack=zeros + 5000,
                       flags=np.full(n, ACK, np.int64), win=zeros + 1000, hdrlen=zeros + 20, paylen=zeros, vlan=no, opts=opts)


def brute_groups(packets: list[tuple[int, int]]) -> list[list[int]]:
    groups: dict[frozenset[int], list[int]] = {}
    for i, (s, d) in enumerate(packets):
        groups.setdefault(frozenset((s, d)), []).append(i)
    return sorted(groups.values())


endpoint = st.tuples(st.binary(min_size=16, max_size=16), st.integers(0, 65535))
cases = st.lists(endpoint, min_size=2, max_size=6, unique=True).flatmap(
    lambda eps: st.tuples(st.just(eps), st.lists(st.tuples(st.integers(0, len(eps) - 1), st.integers(0, len(eps) - 1)), min_size=1, max_size=120))
)


@settings(max_examples=150, deadline=None)
@given(cases)
def test_packets_group_by_unordered_endpoint_pair(case: tuple[list[tuple[bytes, int]], list[tuple[int, int]]]) -> None:
    endpoints, packets = case
    out = _core.FlowPipeline(60.0, 5.0, 240.0, False).feed(batch_of(endpoints, packets), np.empty(0, np.int64))
    conn, direction = out["row_conn"].tolist(), out["row_dir"].tolist()
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(conn):
        groups.setdefault(c, []).append(i)
    assert sorted(groups.values()) == brute_groups(packets)
    firsts = [rows[0] for _, rows in sorted(groups.items())]
    assert firsts == sorted(firsts)  # numbered by their first packet
    for rows in groups.values():
        opener = packets[rows[0]][0]
        assert [direction[i] for i in rows] == [0 if packets[i][0] == opener else 1 for i in rows]


def test_more_flows_than_a_chunk_holds_twice() -> None:
    """Many flows, each met in two chunks: the second chunk's packets find their connection."""
    endpoints = [(bytes(12) + i.to_bytes(4, "big"), 1000 + i) for i in range(3000)]
    pipe = _core.FlowPipeline(60.0, 5.0, 240.0, False)
    first = pipe.feed(batch_of(endpoints, [(i, i + 1) for i in range(0, 3000, 2)]), np.empty(0, np.int64))
    second = pipe.feed(batch_of(endpoints, [(i + 1, i) for i in range(0, 3000, 2)]), np.empty(0, np.int64))
    assert second["row_conn"].tolist() == first["row_conn"].tolist() == list(range(1500))
    assert set(second["row_dir"].tolist()) == {1}
    assert pipe.live == 1500
