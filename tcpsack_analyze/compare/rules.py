"""``check``-style rules on a comparison: ``throughput_ratio >= 0.9``, ``timeouts_moved <= 0``.

The grammar is ``check``'s (:mod:`tcpsack_analyze.check.rules`); the metric is a bare name of a
compared figure or change, checked against the names the comparison has (a typo is an error).
Side by side, a rule is judged on every item but the baseline; after a noise test, once, on
``throughput_ratio`` and, per tested metric M, ``M_moved`` (+1/0/-1) and ``M_difference``.
Results are ``check``'s outcomes, so the same table, JSON and JUnit formats apply.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from tcpsack_analyze.check.evaluate import (
    ERROR,
    PASS,
    CheckResult,
    Finding,
    Outcome,
    judge,
)
from tcpsack_analyze.check.rules import Rule, RuleError
from tcpsack_analyze.compare.metrics import FIGURES
from tcpsack_analyze.compare.noise import TESTED, NoiseTest
from tcpsack_analyze.compare.sidebyside import CHANGES, Comparison

SIDE_BY_SIDE_NAMES = tuple(n for n in FIGURES if n != "flows") + CHANGES
NOISE_NAMES = ("throughput_ratio", *(f"{m}_{s}" for m in TESTED for s in ("moved", "difference")))


def bind(rules: Sequence[Rule], names: Sequence[str]) -> list[Rule]:
    """The rules, each checked to name one of ``names`` without an aggregate."""
    for r in rules:
        if r.aggregate is not None or r.metric not in names:
            raise RuleError(f"rule '{r.text}': '{r.metric}' is not a compared metric; one of {', '.join(names)}")
        if isinstance(r.threshold, (str, bool)):
            raise RuleError(f"rule '{r.text}': compared metrics are numbers")
    return list(rules)


def _judge_rows(rules: Sequence[Rule], rows: Sequence[tuple[str, dict[str, Any]]]) -> CheckResult:
    outcomes = []
    for label, row in rows:
        for r in rules:
            status, message = judge(r, row[r.metric])
            finding = () if status == PASS else (Finding(label, None, None, None, r.metric, row[r.metric], r.op, r.threshold, status, message),)
            outcomes.append(Outcome(r, label, status, 1, finding, message if status == ERROR else ""))
    return CheckResult(tuple(outcomes))


def judge_comparison(rules: Sequence[Rule], comp: Comparison) -> CheckResult:
    """Each rule on each item after the baseline."""
    rows = [(x.label, {**asdict(x), **asdict(c)}) for x, c in zip(comp.items[1:], comp.changes)]
    return _judge_rows(rules, rows)


def judge_noise(rules: Sequence[Rule], test: NoiseTest) -> CheckResult:
    """Each rule once, on the noise test's verdicts."""
    row: dict[str, Any] = {"throughput_ratio": test.throughput_ratio}
    for s in test.shifts:
        row[f"{s.metric}_moved"], row[f"{s.metric}_difference"] = s.moved, s.difference
    return _judge_rows(rules, [("new vs baseline", row)])
