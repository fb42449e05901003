"""Ground truth of a lab run: what the emulator dropped and what the sender's kernel did.

``tcpsack-analyze lab run`` writes ``truth.json`` beside its captures; :func:`load` reads it
back for tests and notebooks, so that every inference of the toolkit (retransmissions and
their triggers, losses and bursts, cwnd) can be checked against the truth. The schema is
described field by field in ``docs/truth-schema.md``; in short:

- ``params``, ``sysctls``, ``topology``: how the run was set up, as read back from the kernel;
- ``captures``: the capture files, where they were taken, snap length, kernel drops;
- ``clock``: every time in the file is on the *capture clock* (CLOCK_REALTIME seconds, the
  clock of pcap timestamps); trace events were converted from CLOCK_MONOTONIC with the measured
  offset, and ``alignment`` gives the residual between traced retransmissions and the same
  segments in the sender-side capture;
- ``flows``: one per TCP connection, with its 4-tuple and initial sequence number (ISN);
- ``drops``: the emulator's drop log; the loss models drop TCP data segments only, while the
  bottleneck queue (reason ``queue``) drops any frame;
- ``retransmissions``: each segment the sender's kernel retransmitted: time, absolute and
  ISN-relative sequence number, length, congestion state, backoff, and the trigger;
- ``ca_states``: congestion state changes; ``probes``: cwnd/ssthresh/srtt per ACK.

Relative sequence numbers count from the ISN (the SYN is 0, the first data byte 1), as
Wireshark shows them; absolute ones are the 32-bit wire values.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from tcpsack_analyze.lab.droplog import Drop

__all__ = [
    "KINDS",
    "SCHEMA",
    "VERSION",
    "CaStateChange",
    "Flow",
    "Retransmission",
    "Truth",
    "TruthError",
    "load",
    "write",
]

SCHEMA = "tcpsack-analyze/lab-truth"
VERSION = 1

KINDS = ("rto", "tlp", "rack_timer", "fast", "recovery", "loss_recovery", "other")
"""Retransmission triggers: sent by the retransmission timer in Loss (``rto``), in Open,
Disorder or CWR (``tlp``: the tail loss probe, RFC 8985 section 7) or in Recovery
(``rack_timer``: RACK's reordering timer, RFC 8985 section 6.2); clocked by an ACK, the first of
a Recovery episode (``fast``: fast retransmit), a later one in Recovery (``recovery``), one in
Loss after an RTO (``loss_recovery``: the rest of the window resent as ACKs arrive), or outside
any of these (``other``: for instance a timer's work deferred to the application's
``release_sock``)."""


class TruthError(ValueError):
    """``truth.json`` does not follow the schema."""


@dataclass(frozen=True)
class Flow:
    """One TCP connection of the run, from the sender's side."""

    id: int
    src: str
    sport: int
    dst: str
    dport: int
    isn: int | None
    cc: str
    bytes_sent: int
    bytes_received: int | None
    start: float
    acked: float
    kernel_total_retrans: int


@dataclass(frozen=True)
class Retransmission:
    """One retransmitted segment as the sender's kernel reported it.

    ``t`` is the trace time on the capture clock; ``capture_t`` the time of the same segment
    in the sender-side capture (None without one, or when it was not found). ``backoff`` is
    ``icsk_backoff`` (RTOs already backed off in this episode); ``err`` is nonzero when the
    kernel failed to send it (such entries never reached the wire). ``segs`` is the number of
    wire segments (MSS-sized pieces) the kernel sent for it, starting at ``seq``: the sum of
    ``segs`` is what TCP_INFO's ``tcpi_total_retrans`` counts.
    """

    t: float
    flow: int
    seq: int
    rel_seq: int | None
    len: int
    segs: int
    flags: str
    ca_state: str
    backoff: int
    retransmits: int
    timer: bool
    kind: str
    err: int
    capture_t: float | None


@dataclass(frozen=True)
class CaStateChange:
    """The congestion state of a flow became ``state`` (Open, Disorder, CWR, Recovery, Loss)."""

    t: float
    flow: int
    state: str


PROBE_COLUMNS = ("t", "flow", "snd_una", "snd_nxt", "cwnd", "ssthresh", "srtt_us", "snd_wnd")
"""Columns of ``probes.rows``; snd_una and snd_nxt are ISN-relative, cwnd and ssthresh in
segments, srtt in microseconds; one row per ACK, the state before the ACK is processed."""


@dataclass
class Truth:
    """The contents of ``truth.json``."""

    params: dict[str, Any]
    sysctls: dict[str, dict[str, str]]
    topology: dict[str, Any]
    captures: list[dict[str, Any]]
    clock: dict[str, Any]
    emulator: dict[str, Any]
    trace: dict[str, Any]
    flows: list[Flow]
    drops: list[Drop]
    retransmissions: list[Retransmission]
    ca_states: list[CaStateChange]
    probes: list[list[float | int]]
    summary: str
    kernel: str = ""
    command: str = ""
    schema: str = SCHEMA
    version: int = VERSION
    path: Path | None = field(default=None, compare=False)

    def probes_frame(self) -> pd.DataFrame:
        """The per-ACK series as a DataFrame with :data:`PROBE_COLUMNS`."""
        return pd.DataFrame(self.probes, columns=list(PROBE_COLUMNS))

    @property
    def upstream_delay(self) -> float:
        """One-way delay sender -> mid point in seconds (0 on a path without a mid point)."""
        return float(self.params.get("upstream", {}).get("forward", {}).get("delay", 0.0))

    @property
    def max_late(self) -> float:
        """How late, at worst, the emulator released a frame against its due time, seconds."""
        return float(self.emulator.get("timing", {}).get("max_late_s", 0.0))

    def data_drops(self, flow: int | None = None) -> list[Drop]:
        """Drops of data segments sent by the flow's sender (all flows when None)."""
        senders: dict[tuple[str | None, int | None], int] = {(f.src, f.sport): f.id for f in self.flows}
        return [
            d for d in self.drops
            if d.len and (d.src, d.sport) in senders and (flow is None or senders[(d.src, d.sport)] == flow)
        ]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to ``truth.json``."""
        out: dict[str, Any] = {"schema": self.schema, "version": self.version}
        for f in fields(self):
            if f.name in ("schema", "version", "path"):
                continue
            value = getattr(self, f.name)
            if f.name in ("flows", "retransmissions", "ca_states"):
                value = [asdict(x) for x in value]
            elif f.name == "drops":
                value = [d.to_dict() for d in value]
            elif f.name == "probes":
                value = {"columns": list(PROBE_COLUMNS), "rows": value}
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> Truth:
        """Check and convert a parsed ``truth.json``; :class:`TruthError` says what is wrong."""
        if obj.get("schema") != SCHEMA:
            raise TruthError(f"not a lab truth file (schema {obj.get('schema')!r}, expected {SCHEMA!r})")
        if obj.get("version") != VERSION:
            raise TruthError(f"truth schema version {obj.get('version')!r} is not {VERSION}")
        expected = {f.name for f in fields(cls)} - {"path"}
        missing = expected - set(obj)
        unknown = set(obj) - expected
        if missing or unknown:
            raise TruthError(f"truth.json: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
        try:
            if tuple(obj["probes"]["columns"]) != PROBE_COLUMNS:
                raise TruthError(f"probes columns {obj['probes']['columns']} are not {list(PROBE_COLUMNS)}")
            retransmissions = [Retransmission(**r) for r in obj["retransmissions"]]
            bad = {r.kind for r in retransmissions} - set(KINDS)
            if bad:
                raise TruthError(f"unknown retransmission kinds {sorted(bad)}")
            return cls(
                **{k: v for k, v in obj.items() if k not in ("flows", "drops", "retransmissions", "ca_states", "probes")},
                flows=[Flow(**f) for f in obj["flows"]],
                drops=[Drop.from_dict(d) for d in obj["drops"]],
                retransmissions=retransmissions,
                ca_states=[CaStateChange(**c) for c in obj["ca_states"]],
                probes=obj["probes"]["rows"],
            )
        except TypeError as exc:  # a record with missing or unknown fields
            raise TruthError(f"truth.json: malformed record: {exc}") from None


def load(path: str | Path) -> Truth:
    """Read a ``truth.json`` (or the directory holding one) written by ``lab run``."""
    path = Path(path)
    if path.is_dir():
        path = path / "truth.json"
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TruthError(f"{path}: not JSON: {exc}") from None
    truth = Truth.from_dict(obj)
    truth.path = path
    return truth


def write(truth: Truth, path: str | Path) -> None:
    """Write ``truth`` as JSON after checking that it loads back identically."""
    obj = truth.to_dict()
    if Truth.from_dict(json.loads(json.dumps(obj))) != truth:
        raise TruthError("truth does not survive a JSON round trip")
    Path(path).write_text(_dumps(obj))


def _dumps(obj: dict[str, Any]) -> str:
    """JSON with one top-level key, and one list element, per line: readable and grep-able."""
    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    parts = []
    for key, value in obj.items():
        if key == "probes":
            rows = ",\n  ".join(compact(r) for r in value["rows"])
            text = f'{{"columns":{json.dumps(value["columns"])},"rows":[\n  {rows}]}}' if rows else json.dumps(value)
        elif isinstance(value, list) and value:
            text = "[\n  " + ",\n  ".join(compact(v) for v in value) + "]"
        else:
            text = compact(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
