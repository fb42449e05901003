"""Parse the long output of tcptrace (``tcptrace -l``, optionally with ``-r``).

Used by the agreement tests that compare tcpsack-analyze with tcptrace, and by the
benchmark generator's test. Written against tcptrace 6.6.7.

:func:`parse_long` returns one dict per ``TCP connection N:`` block::

    {
        "index": 1,                      # tcptrace's connection number
        "a_addr": "10.0.0.1", "a_port": 10977,   # first host line (tcptrace's "host a")
        "b_addr": "10.0.0.2", "b_port": 80,      # second host line
        "host_letters": ("a", "b"),      # tcptrace names later connections c/d, e/f, ...
        "complete_conn": "yes",          # "yes", "no" or "reset" (lower-cased)
        "syns": None, "fins": None,      # the "(SYNs: n)  (FINs: n)" counts when incomplete
        "first_packet": datetime, "last_packet": datetime,  # naive, tcptrace's local time
        "elapsed_time": 2.656717,        # seconds
        "total_packets": 44,
        "filename": "trace.pcap",
        "a2b": {...}, "b2a": {...},      # per direction, see below
    }

Direction dicts hold every ``label: value [unit]`` field of the two-column part, keyed by
the label in snake case: ``total_packets``, ``ack_pkts_sent``, ``sack_pkts_sent``,
``dsack_pkts_sent``, ``max_sack_blks_ack``, ``unique_bytes_sent``, ``actual_data_pkts``,
``rexmt_data_pkts``, ``rexmt_data_bytes``, ``rtt_avg``, ``rtt_min_last``, ``max_retrans``,
``post_loss_acks``, ... Normalisation: lower case, ``#`` dropped, ``(last)`` becomes
``_last``, other non-alphanumerics become ``_``. A label with an ``x/y`` word whose value is
``u/v`` gives two keys: ``SYN/FIN pkts sent: 1/1`` -> ``syn_pkts_sent``, ``fin_pkts_sent``;
``req 1323 ws/ts: Y/N`` -> ``req_1323_ws``, ``req_1323_ts``. The two ``initial window``
lines become ``initial_window_bytes`` and ``initial_window_pkts``.

Values: integers as ``int``, decimals as ``float`` in the unit tcptrace prints (``ms`` for RTT
and retransmission times, seconds for ``secs``, bytes per second for ``Bps``), ``Y``/``N`` as
``bool``, ``NA`` as ``None``, anything else as the printed string.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any

_CONN_RE = re.compile(r"^TCP connection (\d+):\s*$")
_HOST_RE = re.compile(r"^\s*host (\w+):\s+(\S+)\s*$")
_COMPLETE_RE = re.compile(r"^\s*complete conn:\s*(\w+)(?:\s*\(SYNs:\s*(\d+)\)\s*\(FINs:\s*(\d+)\))?")
_HEADER_RE = re.compile(r"^\s*(first packet|last packet|elapsed time|total packets|filename):\s*(.*?)\s*$")
_DIRS_RE = re.compile(r"^\s*(\w+)->(\w+):\s+(\w+)->(\w+):\s*$")
_FIELD_RE = re.compile(
    r"([A-Za-z][\w #/()\-]*?):[ \t]+(\S+)(?:[ \t]+(ms|secs|Bps|bytes|pkts|times)(?![\w:]))?"
)
_SEPARATOR = "================================"
_UNIT_SUFFIXED = {"initial_window"}
_TIME_FORMAT = "%a %b %d %H:%M:%S.%f %Y"


def _snake(label: str) -> str:
    """Normalise a tcptrace label to a snake_case key (see the module docstring)."""
    label = label.replace("(last)", "last").replace("#", "")
    return re.sub(r"[^0-9a-z]+", "_", label.lower()).strip("_")


def _value(text: str) -> Any:
    """Convert one printed value to int, float, bool, None (``NA``) or leave it a string."""
    if text == "NA":
        return None
    if text in ("Y", "N"):
        return text == "Y"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*|-?\d*\.\d+|-?(?:inf|nan)", text):
        return float(text)
    return text


def _store(fields: dict[str, Any], label: str, value: str, unit: str | None) -> None:
    """Add one ``label: value unit`` field to a direction dict, splitting ``x/y`` pairs."""
    words = label.split()
    pair = [i for i, w in enumerate(words) if "/" in w]
    if pair and value.count("/") == 1 and words[pair[0]].count("/") == 1:
        i = pair[0]
        for part_label, part_value in zip(words[i].split("/"), value.split("/")):
            key = _snake(" ".join(words[:i] + [part_label] + words[i + 1:]))
            fields[key] = _value(part_value)
        return
    key = _snake(label)
    if key in _UNIT_SUFFIXED and unit:
        key = f"{key}_{unit}"
    fields[key] = _value(value)


def _elapsed(text: str) -> float:
    """Seconds from tcptrace's ``H:MM:SS.ffffff`` elapsed time."""
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def _parse_block(index: int, lines: list[str]) -> dict[str, Any]:
    """Parse the lines of one ``TCP connection N:`` block."""
    conn: dict[str, Any] = {"index": index, "syns": None, "fins": None}
    hosts: list[tuple[str, str]] = []
    columns: tuple[dict[str, Any], dict[str, Any]] | None = None
    for line in lines:
        if columns is None:
            host = _HOST_RE.match(line)
            if host:
                hosts.append((host.group(1), host.group(2)))
                continue
            complete = _COMPLETE_RE.match(line)
            if complete:
                conn["complete_conn"] = complete.group(1).lower()
                if complete.group(2) is not None:
                    conn["syns"], conn["fins"] = int(complete.group(2)), int(complete.group(3))
                continue
            header = _HEADER_RE.match(line)
            if header:
                name, text = header.groups()
                if name in ("first packet", "last packet"):
                    conn[_snake(name)] = datetime.strptime(text, _TIME_FORMAT)
                elif name == "elapsed time":
                    conn["elapsed_time"] = _elapsed(text)
                elif name == "total packets":
                    conn["total_packets"] = int(text)
                else:
                    conn["filename"] = text
                continue
            if _DIRS_RE.match(line):
                columns = ({}, {})
            continue
        found = list(_FIELD_RE.finditer(line))
        if len(found) != 2:
            continue  # blank lines and the free text of the "ambiguous acks" note
        for side, match in zip(columns, found):
            _store(side, match.group(1).strip(), match.group(2), match.group(3))
    if len(hosts) != 2 or columns is None:
        raise ValueError(f"TCP connection {index}: host lines or direction columns missing")
    for (letter, endpoint), prefix in zip(hosts, ("a", "b")):
        addr, _, port = endpoint.rpartition(":")
        conn[f"{prefix}_addr"], conn[f"{prefix}_port"] = addr, int(port)
    conn["host_letters"] = (hosts[0][0], hosts[1][0])
    conn["a2b"], conn["b2a"] = columns
    return conn


def parse_long(text: str) -> list[dict[str, Any]]:
    """Parse ``tcptrace -l [-r]`` output into one dict per connection, in output order."""
    conns: list[dict[str, Any]] = []
    index: int | None = None
    block: list[str] = []
    for line in text.splitlines():
        start = _CONN_RE.match(line)
        if start or line.startswith(_SEPARATOR):
            if index is not None:
                conns.append(_parse_block(index, block))
            index = int(start.group(1)) if start else None
            block = []
        elif index is not None:
            block.append(line)
    if index is not None:
        conns.append(_parse_block(index, block))
    return conns
