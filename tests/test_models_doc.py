"""docs/models.md: its example of a user's own model runs and prints what the page says."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "models.md"


def test_the_user_model_example_runs() -> None:
    text = DOC.read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "class HalfOnLoss" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation
    expected = re.search(r"# (HalfOnLoss .*)", block)
    assert expected is not None and out.getvalue().strip() == expected.group(1)
