"""Rules: a small, safe expression grammar (no ``eval``) and the TOML rule file.

Grammar (whitespace between tokens is free)::

    rule    := metric OP value [ "or" "null" ]
    metric  := NAME "(" PATH ")" | PATH        NAME: an aggregate, see AGGREGATES
    PATH    := ident ( "." ( ident | integer ) )*
    OP      := "<=" | ">=" | "<" | ">" | "==" | "!="
    value   := number | "string" | 'string' | true | false

``or null`` lets a rule pass when the metric is null (no samples, e.g. an RTD percentile of a
direction without retransmissions); without it a null value cannot be evaluated and the check
fails closed. An aggregate pools the metric over every item of its scope in every capture
checked and applies the function to the non-null values.

A rule file is TOML: one ``[[rule]]`` table per rule with ``expr`` and optionally ``name``::

    [[rule]]
    name = "no timeouts"
    expr = "sender.loss.by_trigger.rto == 0"

The parser knows nothing of what the names mean: ``check`` resolves the path against the
report's schema (:mod:`.metrics`), ``compare`` against its own metric names.
"""
from __future__ import annotations

import operator
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}
AGGREGATES = ("min", "max", "sum", "mean", "median")
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<path>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
    | (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    | (?P<str>"[^"]*"|'[^']*')
    | (?P<op><=|>=|==|!=|<|>)
    | (?P<punct>[()])
    )""",
    re.VERBOSE,
)
_RULE_KEYS = {"expr", "name"}


class RuleError(ValueError):
    """A rule that cannot be parsed; the message is one line naming the rule."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``aggregate(metric) op threshold``, as written in ``text``."""

    name: str
    text: str
    metric: str  # the dotted path as written
    aggregate: str | None
    op: str
    threshold: float | int | str | bool
    null_ok: bool

    def holds(self, value: object) -> bool:
        """Whether a (non-null) value satisfies the comparison."""
        return OPERATORS[self.op](value, self.threshold)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise RuleError(f"rule '{text}': cannot read '{text[pos:].strip()}'")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _literal(kind: str, tok: str, text: str) -> float | int | str | bool:
    if kind == "num":
        number = float(tok)
        return int(number) if number.is_integer() and not re.search(r"[.eE]", tok) else number
    if kind == "str":
        return tok[1:-1]
    if kind == "path" and tok in ("true", "false"):
        return tok == "true"
    raise RuleError(f"rule '{text}': the threshold must be a number, a quoted string, true or false, not '{tok}'")


def parse_rule(text: str, name: str | None = None) -> Rule:
    """Parse one rule expression; raises :class:`RuleError` with a one-line reason."""
    toks = _tokens(text)
    aggregate = None
    if len(toks) >= 4 and toks[0][0] == "path" and toks[1] == ("punct", "(") and toks[3] == ("punct", ")"):
        aggregate = toks[0][1]
        if aggregate not in AGGREGATES:
            raise RuleError(f"rule '{text}': unknown aggregate '{aggregate}' (one of {', '.join(AGGREGATES)})")
        toks = [toks[2], *toks[4:]]
    if len(toks) < 3 or toks[0][0] != "path" or toks[1][0] != "op":
        raise RuleError(f"rule '{text}': expected METRIC OP VALUE, e.g. 'sender.loss.by_trigger.rto == 0'")
    null_ok = False
    rest = toks[3:]
    if rest == [("path", "or"), ("path", "null")]:
        null_ok = True
    elif rest:
        raise RuleError(f"rule '{text}': unexpected '{rest[0][1]}' after the threshold (only 'or null' may follow)")
    threshold = _literal(*toks[2], text)
    op = toks[1][1]
    numeric = isinstance(threshold, (int, float)) and not isinstance(threshold, bool)
    if op not in ("==", "!=") and not numeric:
        raise RuleError(f"rule '{text}': '{op}' compares numbers; use == or != for '{toks[2][1]}'")
    return Rule(name or text.strip(), text.strip(), toks[0][1], aggregate, op, threshold, null_ok)


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of a TOML rule file, in file order; raises :class:`RuleError` on any problem."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise RuleError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{path}: not valid TOML: {exc}") from None
    extra = set(doc) - {"rule"}
    if extra:
        raise RuleError(f"{path}: unknown top-level key(s) {', '.join(sorted(extra))}; rules are [[rule]] tables")
    tables = doc.get("rule", [])
    if not isinstance(tables, list) or not tables:
        raise RuleError(f"{path}: no [[rule]] table")
    rules = []
    for i, table in enumerate(tables, 1):
        bad = set(table) - _RULE_KEYS
        if bad:
            raise RuleError(f"{path}: rule {i}: unknown key(s) {', '.join(sorted(bad))} (allowed: expr, name)")
        if not isinstance(table.get("expr"), str):
            raise RuleError(f"{path}: rule {i}: 'expr' (a string) is required")
        name = table.get("name")
        if name is not None and not isinstance(name, str):
            raise RuleError(f"{path}: rule {i}: 'name' must be a string")
        try:
            rules.append(parse_rule(table["expr"], name))
        except RuleError as exc:
            raise RuleError(f"{path}: rule {i}: {exc}") from None
    return rules


def parse_rules(texts: Sequence[str]) -> list[Rule]:
    """Inline rules (``--rule EXPR``), each named by its text."""
    return [parse_rule(t) for t in texts]
