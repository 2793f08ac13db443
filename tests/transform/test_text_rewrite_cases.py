"""Hand-written cases for the text rewrite: each prints, for every target, what libcst prints.

The sources (``text_rewrite_cases/*.py.txt``, not modules of the suite): comments and blank lines
around decorators, a class without ``__init__`` (targets that make streams when the model is
built add one), strings and brackets over several lines, returns in every kind of block,
hoisted arguments, ``try ... finally``, ``match``, and constructs the text path leaves to libcst
(a footer comment, ``;``, a one-line block).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.driver.api import transform_source
from codegen.rewrite import splice

_TARGETS = ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"]
_CASES = sorted((Path(__file__).parent / "text_rewrite_cases").glob("*.py.txt"))


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("path", _CASES, ids=lambda p: p.name.split(".")[0])
def test_text_rewrite_prints_as_libcst(path: Path, target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = path.read_text(encoding="utf-8")
    text = transform_source(source, path="m.py", target=target)
    monkeypatch.setattr(splice, "rewrite_unit", lambda *_: None)
    assert text == transform_source(source, path="m.py", target=target)
