"""Golden outputs of every capture in tests/data and sample_traces, frozen before a refactor.

One gzip-compressed JSON file per capture in ``tests/golden/``: the ``report --format json``
document, the ``details --format json`` regions, and every loss table of
:class:`~tcpsack_analyze.analysis.Analysis` (``*_df()``) as column lists. The test
(``test_golden.py``) recomputes them and compares; a refactor that must keep the numbers keeps
this file's output byte-for-byte, and a deliberate change regenerates the files and lists the
difference in its commit (``python3 tests/golden_outputs.py --write``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
GOLDEN = TESTS / "golden"
TABLES = ("retransmissions_df", "episodes_df", "incidents_df", "lost_df", "fills_df", "bursts_df")


def captures() -> list[Path]:
    """Every capture the golden files cover, in a stable order."""
    found = [p.resolve() for base in (TESTS / "data", ROOT / "sample_traces") for p in base.rglob("*") if p.suffix in (".pcap", ".pcapng")]
    return sorted(found, key=lambda p: p.relative_to(ROOT).as_posix())


def golden_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix().replace("/", "__") + ".json.gz"


def _plain(v: Any) -> Any:
    """A JSON-safe value: NA/NaN as None, numpy scalars as Python ones."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    try:
        import pandas as pd

        if v is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return v


def outputs(path: Path) -> dict[str, Any]:
    """What the golden file of ``path`` holds, computed with the current code."""
    from tcpsack_analyze.analysis import analyze
    from tcpsack_analyze.loss.regions import find_regions, region_dicts
    from tcpsack_analyze.report.render import render_json

    a = analyze(str(path))
    out: dict[str, Any] = {"report": json.loads(render_json(a.report))}
    out["details"] = region_dicts(find_regions(str(path), a))
    tables = {}
    for name in TABLES:
        df = getattr(a, name)()
        tables[name] = {c: [_plain(v) for v in df[c].tolist()] for c in df.columns}
    out["tables"] = tables
    return out


def encode(path: Path, doc: dict[str, Any]) -> bytes:
    """The golden bytes: sorted keys, and the capture named by its path in the repository."""
    text = json.dumps(doc, sort_keys=True, indent=0, default=str)
    return text.replace(json.dumps(str(path))[1:-1], path.relative_to(ROOT).as_posix()).encode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="(re)write the golden files")
    ap.add_argument("paths", nargs="*", help="only these captures")
    args = ap.parse_args()
    GOLDEN.mkdir(exist_ok=True)
    todo = [Path(p).resolve() for p in args.paths] or captures()
    for path in todo:
        target = GOLDEN / golden_name(path)
        data = encode(path, outputs(path))
        if args.write:
            target.write_bytes(gzip.compress(data, mtime=0))
            print(f"wrote {target.name} ({len(data)} bytes)")
        else:
            same = target.exists() and gzip.decompress(target.read_bytes()) == data
            print(f"{'same' if same else 'DIFFERENT'} {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
