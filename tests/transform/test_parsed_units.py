"""Only the statements a rewrite can change go through libcst; the output is the one of parsing them all.

A docstring is told from its ``ast`` (libcst is asked only for ``"a" f"b"``, which ``ast`` cannot tell
from ``f"ab"``), and a name of npudsl or of a planned function spelled only in a string or a comment
does not make its statement parsed.
"""

from __future__ import annotations

import ast

import pytest

from codegen.driver.api import transform_source
from codegen.rewrite import splice
from codegen.rewrite.segments import layout

_MODEL = (
    "import torch\nfrom torch import nn\nfrom npudsl import on_stream\n\n"
    'NOTE = "on_stream and M are named here in a string only"  # on_stream, M\n\n\n'
    "class M(nn.Module):\n"
    '    @on_stream("side")\n    def f(self, x):\n        return x * 2\n\n    def forward(self, x):\n'
    "        y = self.f(x)\n        z = x + 1\n        return y + z\n"
)
_FIRSTS = ['"""doc"""', 'b"doc"', '("doc")', '"a" "b"', '"a" f"{1}"', 'f"doc"', "x = 1", '"doc"; y = 2', "# on_stream"]
_TARGETS = ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"]


def _every_unit(units: object, _plan: object, _names: object) -> set[int]:
    return set(range(len(units)))  # type: ignore[arg-type]


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("first", _FIRSTS)
def test_output_is_that_of_parsing_every_statement(first: str, target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = f"{first}\n{_MODEL}"
    chosen = transform_source(source, path="m.py", target=target)
    monkeypatch.setattr(splice, "_to_parse", _every_unit)
    assert chosen == transform_source(source, path="m.py", target=target)
    assert chosen != source


def test_statements_naming_npudsl_only_in_text_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = splice._parse
    monkeypatch.setattr(splice, "_parse", lambda unit, style: parsed.append(unit.text) or real(unit, style))
    monkeypatch.setattr(splice, "rewrite_unit", lambda *_: None)  # every chosen unit through libcst
    transform_source(f'"""A model; on_stream and M in a docstring."""\n{_MODEL}', path="m.py")
    assert [text.split()[0] for text in parsed] == ["class"]  # the npudsl import goes whole: told from its ast


@pytest.mark.parametrize(
    ("first", "docstring"),
    [
        ('"""doc"""', True),
        ('b"doc"', True),
        ('("doc")', True),
        ('"a" "b"', True),
        ('"a" f"{1}"', None),
        ('f"doc"', None),
        ("x = 1", False),
        ('"doc"; y = 2', False),
        ("print('doc')", False),
    ],
)
def test_a_docstring_is_told_from_the_ast_unless_only_libcst_can(first: str, docstring: bool | None) -> None:
    source = f"{first}\nimport torch\n"
    assert layout(source, ast.parse(source)).units[0].docstring is docstring
