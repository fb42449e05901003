"""Metric paths: a dotted path into the report's JSON, checked against the report's schema.

A rule names a metric the way ``report --format json`` spells it (docs/report.md), prefixed by
the *scope* it is read in: ``report.loss.retransmissions`` (the whole capture's report),
``connection.duration_s`` (each connection), ``direction.duplicate_acks`` (each direction) and
``sender.loss.rtd_ms.p99`` (each direction that sent payload). The schema is read from the
report's dataclasses (``report/model.py``) at run time, so every field the report has is
checkable without code here, and a misspelt field is an error naming the valid ones, never a
silent pass (issue 12: fail closed).

Counts kept as dicts (``by_trigger``, histograms) leave out the keys that did not occur; those
read as 0. The keys a count may have are ``analysis.LOSS_COUNT_KEYS`` where it names them.
"""
from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

# scope name -> what one item of the scope is (documented in docs/check.md)
SCOPES = ("report", "connection", "direction", "sender")


class MetricError(ValueError):
    """A metric path that the report's schema does not have; the message is one line."""


@dataclass(frozen=True)
class Leaf:
    """The type at the end of a valid metric path: what values and comparisons it admits."""

    kind: str  # "number", "bool" or "str"
    nullable: bool
    missing_is_zero: bool  # a key of a count dict, left out of the JSON when 0


def _scope_root(scope: str) -> type:
    from tcpsack_analyze.report.model import (
        CaptureReport,
        ConnectionReport,
        DirectionReport,
    )

    return {"report": CaptureReport, "connection": ConnectionReport}.get(scope, DirectionReport)


def _lazy_hint_names() -> dict[str, Any]:
    """Names the report's dataclasses import only for type checking (report/model.py keeps the
    sender models out of a plain report's start-up), for resolving their annotations here."""
    from tcpsack_analyze.models.section import SenderSection

    return {"SenderSection": SenderSection}


def _count_keys(field_name: str) -> tuple[str, ...] | None:
    """The keys a count dict can have (None: any key, e.g. a histogram's lengths)."""
    from tcpsack_analyze.analysis import LOSS_COUNT_KEYS

    return LOSS_COUNT_KEYS.get(field_name)


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return (args[0] if len(args) == 1 else tp), len(args) < len(typing.get_args(tp))
    return tp, False


def _unknown(path: str, name: str, where: str, choices: list[str]) -> MetricError:
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return MetricError(f"unknown metric '{path}': '{name}' is not a field of {where}{hint}; fields: {', '.join(choices)}")


def resolve(path: str) -> tuple[str, tuple[str, ...], Leaf]:
    """Split ``path`` into its scope and keys and check it against the schema.

    Returns ``(scope, keys, leaf)``; raises :class:`MetricError` for an unknown scope or field,
    or a path that stops at a group of fields rather than at one value.
    """
    parts = path.split(".")
    scope, keys = parts[0], tuple(parts[1:])
    if scope not in SCOPES:
        raise MetricError(f"unknown metric '{path}': it must start with a scope, one of {', '.join(SCOPES)}")
    if not keys or not all(keys):
        raise MetricError(f"unknown metric '{path}': name a field after the scope '{scope}.'")
    tp: Any = _scope_root(scope)
    nullable = False
    where = scope
    for i, key in enumerate(keys):
        tp, opt = _unwrap_optional(tp)
        nullable = nullable or opt
        origin = typing.get_origin(tp)
        if dataclasses.is_dataclass(tp):
            hints = typing.get_type_hints(tp, localns=_lazy_hint_names())
            if key not in hints:
                raise _unknown(path, key, where, list(hints))
            tp = hints[key]
        elif origin is dict:
            allowed = _count_keys(keys[i - 1])
            if allowed is not None and key not in allowed:
                raise _unknown(path, key, where, list(allowed))
            if allowed is None and not key.lstrip("-").isdigit() and typing.get_args(tp)[0] is int:
                raise MetricError(f"unknown metric '{path}': the keys of {where} are integers")
            if i != len(keys) - 1:
                raise MetricError(f"unknown metric '{path}': {where}.{key} is a count, it has no fields")
            return scope, keys, Leaf("number", nullable, True)
        elif origin is list:
            raise MetricError(f"unknown metric '{path}': {where} is a list; use the connection or direction scope")
        else:
            raise MetricError(f"unknown metric '{path}': {where} is a value, it has no field '{key}'")
        where = f"{where}.{key}"
    tp, opt = _unwrap_optional(tp)
    nullable = nullable or opt
    if typing.get_origin(tp) is list:
        raise MetricError(f"unknown metric '{path}': {where} is a list; use the connection or direction scope")
    if dataclasses.is_dataclass(tp) or typing.get_origin(tp) is dict:
        raise MetricError(f"unknown metric '{path}': {where} is a group of fields, name one of them")
    kind = "bool" if tp is bool else "number" if tp in (int, float) else "str"
    return scope, keys, Leaf(kind, nullable, False)


def lookup(item: dict[str, Any], keys: tuple[str, ...], leaf: Leaf) -> Any:
    """The value at ``keys`` in one scope item of the report's JSON (None when null on the way)."""
    value: Any = item
    for key in keys:
        if value is None:
            return None
        if key not in value:
            if leaf.missing_is_zero and key == keys[-1]:
                return 0
            raise MetricError(f"the report has no '{key}' where the schema has it (schema version mismatch?)")
        value = value[key]
    return value
