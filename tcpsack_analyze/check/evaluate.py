"""Evaluate rules on the reports of captures: pass, fail, or cannot tell (error).

Sans-I/O: the input is each capture's report as the JSON renderer gives it (a dict) or the error
that kept it from being read; the output is frozen dataclasses that the CLI formats as a table,
JSON or JUnit XML. Fail closed (issue 12): a capture that could not be read completely, a metric
that is null (unless the rule says ``or null``), or a scope with nothing in it (a ``sender``
rule on a capture without payload) gives ``error``, never ``pass``.

Exit status of a check: 0 every rule held, 1 a rule failed, 2 a rule could not be evaluated or a
capture could not be read completely (2 wins over 1: a check that could not look is no result).
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tcpsack_analyze.check.metrics import Leaf, MetricError, lookup, resolve
from tcpsack_analyze.check.rules import Rule, RuleError

PASS, FAIL, ERROR = "pass", "fail", "error"
ALL_CAPTURES = "(all captures)"
EXIT_OK, EXIT_FAILED, EXIT_UNEVALUATED = 0, 1, 2
_AGGREGATE: dict[str, Callable[[list[Any]], Any]] = {"min": min, "max": max, "sum": sum, "mean": statistics.fmean, "median": statistics.median}


@dataclass(frozen=True)
class CaptureInput:
    """One capture to check: its report as a JSON dict, or why it could not be read."""

    path: str
    report: dict[str, Any] | None
    error: str | None = None


@dataclass(frozen=True)
class BoundRule:
    """A rule whose metric was found in the report's schema."""

    rule: Rule
    scope: str
    keys: tuple[str, ...]
    leaf: Leaf


@dataclass(frozen=True)
class Finding:
    """One item (capture, connection or direction) on which a rule failed or could not be read."""

    capture: str
    connection: int | None
    endpoints: str | None  # "a_addr:a_port-b_addr:b_port"
    direction: str | None  # "a2b" / "b2a"
    metric: str
    value: Any
    op: str
    threshold: Any
    status: str  # FAIL or ERROR
    message: str = ""


@dataclass(frozen=True)
class Outcome:
    """A rule on one capture (or, for an aggregate, on all of them): one JUnit test case."""

    rule: Rule
    capture: str
    status: str
    checked: int  # items the rule looked at
    findings: tuple[Finding, ...]
    message: str = ""


@dataclass(frozen=True)
class CheckResult:
    """Every outcome, in rule order within capture order, aggregates last."""

    outcomes: tuple[Outcome, ...]

    @property
    def exit_status(self) -> int:
        return exit_status(o.status for o in self.outcomes)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for o in self.outcomes for f in o.findings)


def exit_status(statuses: Iterable[str]) -> int:
    """2 when anything could not be evaluated, else 1 when anything failed, else 0."""
    seen = set(statuses)
    return EXIT_UNEVALUATED if ERROR in seen else EXIT_FAILED if FAIL in seen else EXIT_OK


def bind(rule: Rule) -> BoundRule:
    """Check the rule's metric against the report schema and its threshold against the metric's
    type; raises :class:`RuleError` (a misspelt metric is an error, never a pass)."""
    try:
        scope, keys, leaf = resolve(rule.metric)
    except MetricError as exc:
        raise RuleError(f"rule '{rule.text}': {exc}") from None
    numeric = isinstance(rule.threshold, (int, float)) and not isinstance(rule.threshold, bool)
    wanted = {"number": numeric, "bool": isinstance(rule.threshold, bool), "str": isinstance(rule.threshold, str)}
    if not wanted[leaf.kind]:
        raise RuleError(f"rule '{rule.text}': {rule.metric} is a {leaf.kind}, the threshold {rule.threshold!r} is not")
    if rule.aggregate and leaf.kind != "number":
        raise RuleError(f"rule '{rule.text}': {rule.aggregate}() needs a number, {rule.metric} is a {leaf.kind}")
    return BoundRule(rule, scope, keys, leaf)


def _items(report: dict[str, Any], scope: str) -> Iterator[tuple[int | None, str | None, str | None, dict[str, Any]]]:
    """(connection id, endpoints, direction, item) for every item of the scope in one report."""
    if scope == "report":
        yield None, None, None, report
        return
    for conn in report["connections"]:
        ends = f"{conn['a_addr']}:{conn['a_port']}-{conn['b_addr']}:{conn['b_port']}"
        if scope == "connection":
            yield conn["id"], ends, None, conn
            continue
        for name in ("a2b", "b2a"):
            d = conn[name]
            if scope == "direction" or d["data_packets"] > 0:
                yield conn["id"], ends, name, d


def _unreadable(cap: CaptureInput) -> str | None:
    if cap.report is None:
        return f"capture could not be read: {cap.error}"
    info = cap.report["capture"]
    if not info["complete"]:
        return f"capture not read completely: {info['error'] or 'records skipped for their link type'}"
    return None


def judge(rule: Rule, value: Any) -> tuple[str, str]:
    """(status, message) of one value under one rule: a null value fails closed (ERROR)
    unless the rule accepts it with ``or null``."""
    if value is None:
        return (PASS, "") if rule.null_ok else (ERROR, "null: no value to compare (add 'or null' to accept)")
    return (PASS, "") if rule.holds(value) else (FAIL, "")


def _per_capture(b: BoundRule, cap: CaptureInput) -> Outcome:
    reason = _unreadable(cap)
    if reason is not None:
        return Outcome(b.rule, cap.path, ERROR, 0, (), reason)
    assert cap.report is not None
    findings, checked = [], 0
    for cid, ends, direction, item in _items(cap.report, b.scope):
        checked += 1
        value = lookup(item, b.keys, b.leaf)
        status, message = judge(b.rule, value)
        if status != PASS:
            findings.append(Finding(cap.path, cid, ends, direction, b.rule.metric, value, b.rule.op, b.rule.threshold, status, message))
    if checked == 0:
        return Outcome(b.rule, cap.path, ERROR, 0, (), f"nothing to check: no {b.scope} item in the capture")
    status = ERROR if any(f.status == ERROR for f in findings) else FAIL if findings else PASS
    return Outcome(b.rule, cap.path, status, checked, tuple(findings))


def _aggregated(b: BoundRule, captures: Sequence[CaptureInput]) -> Outcome:
    bad = [f"{c.path}: {r}" for c in captures if (r := _unreadable(c)) is not None]
    if bad:
        return Outcome(b.rule, ALL_CAPTURES, ERROR, 0, (), "; ".join(bad))
    values = [
        lookup(item, b.keys, b.leaf) for c in captures if c.report is not None for *_, item in _items(c.report, b.scope)
    ]
    present = [v for v in values if v is not None]
    assert b.rule.aggregate is not None
    value = _AGGREGATE[b.rule.aggregate](present) if present else None
    metric = f"{b.rule.aggregate}({b.rule.metric})"
    status, message = judge(b.rule, value)
    if not values:
        status, message = ERROR, f"nothing to check: no {b.scope} item in any capture"
    finding = () if status == PASS else (Finding(ALL_CAPTURES, None, None, None, metric, value, b.rule.op, b.rule.threshold, status, message),)
    return Outcome(b.rule, ALL_CAPTURES, status, len(values), finding, message)


def evaluate(rules: Sequence[BoundRule], captures: Sequence[CaptureInput]) -> CheckResult:
    """Every rule on every capture; aggregates once over all captures."""
    outcomes = [_guarded(b, c.path, _per_capture, b, c) for c in captures for b in rules if b.rule.aggregate is None]
    outcomes += [_guarded(b, ALL_CAPTURES, _aggregated, b, captures) for b in rules if b.rule.aggregate is not None]
    return CheckResult(tuple(outcomes))


def _guarded(b: BoundRule, capture: str, fn: Callable[..., Outcome], *args: Any) -> Outcome:
    """A report lacking a field its schema has (written by another version) cannot be judged."""
    try:
        return fn(*args)
    except MetricError as exc:
        return Outcome(b.rule, capture, ERROR, 0, (), str(exc))
