"""Printing a :class:`~tcpsack_analyze.replay.capture.CaptureReplay` as text or JSON.

The JSON document (schema ``tcpsack-analyze/replay``, version :data:`SCHEMA_VERSION`) has, per
direction, its status, the fitted path and what was measured or assumed, the loss process, and
every transfer (observed first) with all the :class:`~tcpsack_analyze.replay.outcome.Outcome`
fields.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from tcpsack_analyze.replay.capture import CaptureReplay, DirectionReplay
from tcpsack_analyze.replay.outcome import Outcome

SCHEMA = "tcpsack-analyze/replay"
SCHEMA_VERSION = 1


def _num(x: float | None, fmt: str) -> str:
    """``x`` in ``fmt`` (e.g. ``8.0f``), or ``-`` right-aligned to the same width."""
    return "-".rjust(int(fmt.split(".")[0] or 0)) if x is None else format(x, fmt)


def _row(o: Outcome) -> str:
    kbps = None if o.throughput_Bps is None else o.throughput_Bps * 8 / 1000
    return (f"  {o.label:<10} {o.duration_s:>9.2f}{'' if o.finished else '+'} {_num(kbps, '10.0f')} {o.timeouts:>5} "
            f"{o.slow_starts:>5} {o.retransmissions:>6} {_num(o.rtd_mean_ms, '8.0f')} {_num(o.rtd_p99_ms, '8.0f')} "
            f"{_num(o.rtd_max_ms, '8.0f')} {_num(o.recovery_mean_ms, '8.0f')} {_num(o.recovery_max_ms, '8.0f')}")


def _direction_text(d: DirectionReplay) -> list[str]:
    head = f"conn {d.conn} {d.direction} ({d.vantage})"
    if d.status != "ok" or d.fit is None:
        return [f"{head}: {d.status}"]
    lines = [f"{head}: {d.fit.octets} octets, SMSS {d.fit.smss}", "  path: " + "; ".join(d.fit.notes),
             f"  loss: {d.loss}",
             "  transfer   duration_s  kbit/s   RTOs  slow  rexmit  RTD mean   p99      max   recov mean   max (ms)"]
    lines += [_row(o) for o in d.outcomes]
    if any(not o.finished for o in d.outcomes):
        lines.append("  (+: not finished within the time limit; duration to the last ACK)")
    return lines


def render_text(r: CaptureReplay) -> str:
    lines = [f"{r.path}: replay with {', '.join(r.models)}, loss {r.loss}, seed {r.seed}"]
    for d in r.directions:
        lines += _direction_text(d)
    return "\n".join(lines) + "\n"


def _direction_dict(d: DirectionReplay) -> dict[str, Any]:
    return {
        "conn": d.conn, "direction": d.direction, "vantage": d.vantage, "status": d.status,
        "path": None if d.fit is None else {**asdict(d.fit.path), "smss": d.fit.smss, "octets": d.fit.octets,
                                            "notes": list(d.fit.notes)},
        "loss": d.loss or None,
        "transfers": [asdict(o) for o in d.outcomes],
    }


def render_json(r: CaptureReplay) -> str:
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "capture": r.path, "models": list(r.models),
           "loss": r.loss, "seed": r.seed, "complete": r.complete, "warnings": list(r.warnings),
           "directions": [_direction_dict(d) for d in r.directions]}
    return json.dumps(doc, indent=2) + "\n"


RENDERERS = {"text": render_text, "json": render_json}

__all__ = ["RENDERERS", "SCHEMA", "SCHEMA_VERSION", "render_json", "render_text"]
