"""Every capture's report, details and loss tables equal the frozen golden files (tests/golden).

The files were written by ``tests/golden_outputs.py --write`` before the analysis was rebuilt as a
pipeline of stages (issue 11); a change that alters a number regenerates them and says in its
commit, and in a test of its own, which numbers changed and why.
"""
from __future__ import annotations

import gzip
import json

import pytest
from golden_outputs import GOLDEN, captures, encode, golden_name, outputs

CAPTURES = captures()


def test_every_capture_has_a_golden_file() -> None:
    names = {golden_name(p) for p in CAPTURES}
    assert names == {p.name for p in GOLDEN.glob("*.json.gz")}
    assert len(names) >= 50


@pytest.mark.parametrize("path", CAPTURES, ids=[golden_name(p).removesuffix(".json.gz") for p in CAPTURES])
def test_outputs_equal_golden(path) -> None:
    want = json.loads(gzip.decompress((GOLDEN / golden_name(path)).read_bytes()))
    got = json.loads(encode(path, outputs(path)))
    for part in ("report", "details"):
        assert got[part] == want[part], part
    for name, columns in want["tables"].items():
        assert got["tables"][name] == columns, name
