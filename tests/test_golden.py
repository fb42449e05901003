"""Every capture's report, details and loss tables equal the frozen golden files (tests/golden),
and so do those of the 100k-packet benchmark capture, generated here (golden_outputs.BENCHMARK).

The files were written by ``tests/golden_outputs.py --write`` before the analysis was rebuilt as a
pipeline of stages (issue 11); a change that alters a number regenerates them and says in its
commit, and in a test of its own, which numbers changed and why.
"""
from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from golden_outputs import BENCHMARK, GOLDEN, benchmark_capture, captures, encode, golden_name, outputs

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
    names = {golden_name(p) for p in [*CAPTURES, Path(BENCHMARK)]}
    assert names == {p.name for p in GOLDEN.glob("*.json.gz")}
    assert len(names) >= 50


@pytest.mark.parametrize("path", CAPTURES, ids=[golden_name(p).removesuffix(".json.gz") for p in CAPTURES])
def test_outputs_equal_golden(path: Path) -> None:
    _check(path)


def test_benchmark_capture_equals_golden(tmp_path: Path) -> None:
    # 99,822 packets over 20 bulk transfers with 1% loss: every loss table has rows but the fills
    # (holes filled by a retransmission, which a capture at the sender does not see)
    path = benchmark_capture(tmp_path)
    want = _check(path)
    assert want["report"]["capture"]["tcp_packets"] == 99_822 and len(want["report"]["connections"]) == 20
    assert all(len(next(iter(columns.values()))) for name, columns in want["tables"].items() if name != "fills_df")


def _check(path: Path) -> dict[str, Any]:
    """Compare the outputs of ``path`` with its golden file; return the golden document."""
    want = json.loads(gzip.decompress((GOLDEN / golden_name(path)).read_bytes()))
    got = json.loads(encode(path, outputs(path)))
    for part in ("report", "details"):
        assert_same(got[part], want[part], part)
    for name, columns in want["tables"].items():
        assert_same(got["tables"][name], columns, name)
    return want


def test_golden_comparison_is_exact_but_for_float_noise() -> None:
    assert_same({"a": [1, 0.1 + 0.2]}, {"a": [1, 0.3]}, "x")
    for got, want in (({"a": [2, 0.3]}, {"a": [1, 0.3]}), ({"a": [1, 0.31]}, {"a": [1, 0.3]}), ({"b": 1}, {"a": 1})):
        with pytest.raises(AssertionError):
            assert_same(got, want, "x")
