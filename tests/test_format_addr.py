"""report.model.format_addr: v4-mapped addresses written directly, the same text as ipaddress gives."""
from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from tcpsack_analyze.report.model import format_addr


def _ipaddress(raw: bytes) -> str:
    ip = ipaddress.IPv6Address(raw)
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else str(ip)


@given(st.binary(min_size=4, max_size=4))
def test_v4_mapped_as_ipaddress_writes_it(v4: bytes) -> None:
    raw = bytes(10) + b"\xff\xff" + v4
    assert format_addr(raw) == _ipaddress(raw) == str(ipaddress.IPv4Address(v4))


@given(st.binary(min_size=16, max_size=16))
def test_any_address_as_ipaddress_writes_it(raw: bytes) -> None:
    assert format_addr(raw) == _ipaddress(raw)


def test_near_v4_mapped_prefixes_stay_ipv6() -> None:
    for raw, text in ((bytes(10) + b"\xff\xfe" + bytes([10, 0, 0, 1]), "::fffe:a00:1"), (bytes(16), "::"),
                      (bytes(10) + b"\xff\xff" + bytes([192, 0, 2, 1]), "192.0.2.1")):
        assert format_addr(raw) == text
