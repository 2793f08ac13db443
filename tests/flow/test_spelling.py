"""The user's expressions the planner copies into generated code keep double-quoted string literals."""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.if_facts import spelled
from codegen.lower.flow.spelling import spelled_expr


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('d.get("pertoken_scale")', 'd.get("pertoken_scale")'),
        ("d.get('pertoken_scale')", 'd.get("pertoken_scale")'),
        ('w is None or w["q_a_proj_weight"] is None', 'w is None or w["q_a_proj_weight"] is None'),
        ('m["it\'s"]', 'm["it\'s"]'),
        ("m['say \"hi\"']", "m['say \"hi\"']"),  # a double quote inside: ast.unparse's choice stands
        ('f"{x}-{y}"', "f'{x}-{y}'"),  # f-strings as ast.unparse prints them
        ("x[1:2, ...]", "x[1:2, ...]"),
        ('"alone"', '"alone"'),
        ('{"a": [x, "b"]}', '{"a": [x, "b"]}'),
    ],
)
def test_spelled_expr(source: str, expected: str) -> None:
    node = ast.parse(source, mode="eval").body
    assert spelled_expr(node) == expected
    assert ast.dump(ast.parse(spelled_expr(node), mode="eval").body) == ast.dump(node)  # the same expression


def test_node_left_unchanged() -> None:
    node = ast.parse('d["k"]', mode="eval").body
    before = ast.dump(node)
    spelled_expr(node)
    assert ast.dump(node) == before


def test_reread_test_keeps_double_quotes() -> None:
    """A join decided by reading a fixed ``if`` test again spells that test the way the user did (omni-infer's
    ``next_attention_weights["q_a_proj_weight"]``)."""
    assert spelled(('w is None or w["k"] is None', False)) == 'w is not None and w["k"] is not None'
