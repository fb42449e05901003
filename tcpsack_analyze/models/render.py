"""Printing a :class:`~tcpsack_analyze.models.infer.CaptureInference` as text or JSON.

The JSON document (schema ``tcpsack-analyze/infer``, version :data:`SCHEMA_VERSION`) has, per
direction, the verdict, the naive flight-size bound and, per model in rank order, the counts,
the cwnd summary, the time share per limiting factor, the violations counted by kind and the
first :data:`JSON_VIOLATIONS` of them (all of them with ``all_violations``: a sender that no
model explains has one per send, and a million of them is no summary). The per-ACK series and
every violation are also in :meth:`~tcpsack_analyze.models.infer.CaptureInference.cwnd_df` and
:meth:`~tcpsack_analyze.models.infer.CaptureInference.violations_df`.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from tcpsack_analyze.models.infer import CaptureInference, DirectionInference, ModelRun
from tcpsack_analyze.models.rto import NS

SCHEMA = "tcpsack-analyze/infer"
SCHEMA_VERSION = 2  # 2: violations counted by kind, the first JSON_VIOLATIONS listed
SHOWN_VIOLATIONS = 5  # per model in the text output
JSON_VIOLATIONS = 20  # per model in the JSON document, unless all are asked for


def _cwnd_summary(run: ModelRun, smss: int) -> dict[str, float] | None:
    if not run.cwnd.size:
        return None
    seg = run.cwnd / smss
    return {"min": float(seg.min()), "median": float(np.median(seg)), "max": float(seg.max())}


def _run_dict(run: ModelRun, d: DirectionInference, all_violations: bool) -> dict[str, Any]:
    start = d.first_ns or 0
    kinds: dict[str, int] = {}
    for v in run.violations:
        kinds[v.kind] = kinds.get(v.kind, 0) + 1
    shown = run.violations if all_violations else run.violations[:JSON_VIOLATIONS]
    return {
        "model": run.model, "sends": run.sends, "nonconforming": run.nonconforming,
        "conformance": run.conformance, "cwnd_error_segments": run.cwnd_error,
        "cwnd_segments": _cwnd_summary(run, d.smss), "timeouts": run.timeouts, "recoveries": run.recoveries,
        "falling_edges": run.falling_edges, "limiting": run.limiting,
        "violation_count": len(run.violations), "violations_by_kind": kinds,
        "violations": [{"time_s": (v.time_ns - start) / NS, "index": v.index, "kind": v.kind, "text": v.text}
                       for v in shown],
    }


def to_dict(inf: CaptureInference, all_violations: bool = False) -> dict[str, Any]:
    """The JSON document (module docstring)."""
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "capture": inf.path, "models": list(inf.models),
        "complete": inf.complete,
        "directions": [{
            "conn": d.conn, "direction": d.direction, "vantage": d.vantage, "smss": d.smss,
            "ack_shift_ms": d.ack_shift_ns / 1e6, "status": d.status, "verdict": d.verdict,
            "best": d.best.model if d.best else None, "confidence": d.confidence,
            "naive_bound_segments": None if d.naive_segments is None else dict(zip(("min", "median", "max"), d.naive_segments)),
            "runs": [_run_dict(r, d, all_violations) for r in d.runs],
        } for d in inf.directions],
    }


def render_json(inf: CaptureInference, all_violations: bool = False) -> str:
    return json.dumps(to_dict(inf, all_violations), indent=1) + "\n"


def render_text(inf: CaptureInference, all_violations: bool = False) -> str:
    """One block per direction: verdict, naive bound, a line per model, the best's violations."""
    out = [f"{inf.path}: sender models {', '.join(inf.models)}"]
    for d in inf.directions:
        out.append("")
        out.append(f"conn {d.conn} {d.direction} ({d.vantage}, SMSS {d.smss}): {d.verdict}")
        if d.status != "ok":
            continue
        if d.ack_shift_ns:
            out.append(f"  ACK times shifted by {d.ack_shift_ns / 1e6:.3f} ms to the sender's view")
        if d.naive_segments is not None:
            lo, med, hi = d.naive_segments
            out.append(f"  naive bound (flight size after each ACK's sends), segments: min {lo:.1f}  median {med:.1f}  max {hi:.1f}")
        out.append(f"  {'model':<9}{'conform':>8}{'bad/sends':>12}{'cwnd min/med/max':>20}{'RTO':>5}{'FR':>5}{'edges':>6}"
                   f"   limited by cwnd/rwnd/app")
        for r in d.runs:
            c = _cwnd_summary(r, d.smss)
            cw = "-" if c is None else f"{c['min']:.0f}/{c['median']:.0f}/{c['max']:.0f}"
            lim = "/".join(f"{100 * r.limiting[k]:.0f}%" for k in ("cwnd", "receive window", "application"))
            out.append(f"  {r.model:<9}{100 * r.conformance:>7.1f}%{f'{r.nonconforming}/{r.sends}':>12}{cw:>20}"
                       f"{r.timeouts:>5}{r.recoveries:>5}{r.falling_edges:>6}   {lim}")
        for r in d.runs[:1]:
            if r.violations:
                out.append(f"  where {r.model} departs from the sender ({len(r.violations)} violations):")
                for v in (r.violations if all_violations else r.violations[:SHOWN_VIOLATIONS]):
                    out.append(f"    {(v.time_ns - (d.first_ns or 0)) / NS:10.6f} s  #{v.index:<8} {v.text}")
    return "\n".join(out) + "\n"


RENDERERS = {"text": render_text, "json": render_json}

__all__ = ["RENDERERS", "SCHEMA", "SCHEMA_VERSION", "JSON_VIOLATIONS", "render_json", "render_text", "to_dict"]
