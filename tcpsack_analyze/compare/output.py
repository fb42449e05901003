"""A comparison as text (metrics down, items across) or JSON."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from tcpsack_analyze.check.evaluate import CheckResult
from tcpsack_analyze.check.output import result_dict
from tcpsack_analyze.compare.metrics import FIGURES
from tcpsack_analyze.compare.noise import NoiseTest
from tcpsack_analyze.compare.sidebyside import CHANGES, Comparison


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _grid(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in [header, *rows]]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_comparison(comp: Comparison) -> str:
    """A legend of the items ([0] is the baseline), then one row per figure and per change."""
    legend = [f"[{i}] {x.label}" + (" (baseline)" if i == 0 else "") for i, x in enumerate(comp.items)]
    header = ["metric", *(f"[{i}]" for i in range(len(comp.items)))]
    rows = [[name, *(_cell(getattr(x, name)) for x in comp.items)] for name in FIGURES]
    rows += [[name, "", *(_cell(getattr(c, name)) for c in comp.changes)] for name in CHANGES]
    jain = f"Jain's fairness index across the {len(comp.items)} items' throughputs: {_cell(comp.jain)}\n"
    return "\n".join(legend) + "\n\n" + _grid(header, rows) + "\n" + jain


def render_noise(test: NoiseTest) -> str:
    """One row per metric: medians, difference, interval and verdict; the method above."""
    verdict = {1: "up", -1: "down", 0: "within noise", None: "no interval (< 2 samples)"}
    header = ["metric", "n base", "n new", "median base", "median new", "difference", "CI low", "CI high", "verdict"]
    rows = [[s.metric, str(s.baseline_n), str(s.new_n),
             *(_cell(v) for v in (s.baseline_median, s.new_median, s.difference, s.ci_low, s.ci_high)), verdict[s.moved]]
            for s in test.shifts]
    head = (f"{test.baseline_captures} baseline and {test.new_captures} new captures; per-flow samples pooled\n"
            f"method: {test.method}\n")
    return head + "\n" + _grid(header, rows) + f"\nthroughput_ratio (median new / median baseline): {_cell(test.throughput_ratio)}\n"


def render_json(obj: Comparison | NoiseTest, rules: CheckResult | None = None) -> str:
    """The comparison or noise test as a dict, with the rules' outcomes under ``rules``."""
    doc: dict[str, Any] = asdict(obj)
    if rules is not None:
        doc["rules"] = result_dict(rules)
    return json.dumps(doc, indent=1, default=str) + "\n"
