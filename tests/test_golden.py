"""Every capture's report, details and loss tables equal the frozen golden files (tests/golden).

The files were written by ``tests/golden_outputs.py --write`` before the analysis was rebuilt as a
pipeline of stages (issue 11); a change that alters a number regenerates them and says in its
commit, and in a test of its own, which numbers changed and why.
"""
from __future__ import annotations

import gzip
import json
import math
from typing import Any

import pytest
from golden_outputs import GOLDEN, captures, encode, golden_name, outputs

CAPTURES = captures()

#: Floats from iterative fits (Gilbert-Elliott's EM) move in their last bits with the numpy build
#: and the CPU's SIMD paths; everything else (counts, sequence numbers, names) must be exact.
REL_TOL = 1e-9


def assert_same(got: Any, want: Any, where: str) -> None:
    """``got`` equals ``want`` exactly, except floats, which agree to :data:`REL_TOL`."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=REL_TOL, abs_tol=1e-12), f"{where}: {got!r} != {want!r}"
    elif isinstance(want, dict) and isinstance(got, dict):
        assert got.keys() == want.keys(), f"{where}: keys {sorted(got.keys() ^ want.keys())}"
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), f"{where}: {len(got)} items != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def test_every_capture_has_a_golden_file() -> None:
    names = {golden_name(p) for p in CAPTURES}
    assert names == {p.name for p in GOLDEN.glob("*.json.gz")}
    assert len(names) >= 50


@pytest.mark.parametrize("path", CAPTURES, ids=[golden_name(p).removesuffix(".json.gz") for p in CAPTURES])
def test_outputs_equal_golden(path) -> None:
    want = json.loads(gzip.decompress((GOLDEN / golden_name(path)).read_bytes()))
    got = json.loads(encode(path, outputs(path)))
    for part in ("report", "details"):
        assert_same(got[part], want[part], part)
    for name, columns in want["tables"].items():
        assert_same(got["tables"][name], columns, name)


def test_golden_comparison_is_exact_but_for_float_noise() -> None:
    assert_same({"a": [1, 0.1 + 0.2]}, {"a": [1, 0.3]}, "x")
    for got, want in (({"a": [2, 0.3]}, {"a": [1, 0.3]}), ({"a": [1, 0.31]}, {"a": [1, 0.3]}), ({"b": 1}, {"a": 1})):
        with pytest.raises(AssertionError):
            assert_same(got, want, "x")
