"""What a call hands one parameter, by position or keyword, and where a ``*``/``**`` spread may hand it
(``call_arguments.passed_argument``: one reading for the functional table, the torch layer table and constructors).

A spread that may reach the parameter answers with everything it spreads: ``self.act(*xs)`` may hand ``input`` any
element of ``xs``, ``self.act(**kw)`` any value of ``kw``, so a layer writing its input writes ``xs``/``kw``'s
tensors, and a flag given through a spread may be given.
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.call_arguments import passed_argument
from codegen.lower.flow.constructor_args import given_flag
from codegen.lower.flow.torch_layer_writes import torch_layer_written
from codegen.lower.flow.view_roots import alias_sources


def _call(text: str) -> ast.Call:
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


@pytest.mark.parametrize(
    ("text", "position", "given"),
    [
        ("f(a, b)", 1, {"b"}),
        ("f(a, inplace=b)", 1, {"b"}),
        ("f(a)", 1, set()),
        ("f(a, *rest)", 1, {"a", "rest"}),
        ("f(a, b, *rest)", 1, {"b"}),
        ("f(a, **kw)", 1, {"kw"}),
        ("f(a, inplace=b, **kw)", 1, {"b"}),
        ("f(a, b)", None, set()),
    ],
)
def test_the_argument_a_parameter_gets(text: str, position: int | None, given: set[str]) -> None:
    assert alias_sources(passed_argument(_call(text), "inplace", position)) == given


def test_a_layer_called_through_a_spread_writes_what_the_spread_holds() -> None:
    built = _call("nn.ReLU(inplace=True)")
    layer = ("torch", "nn", "ReLU")
    assert torch_layer_written(_call("self.act(x)"), layer, built) == {"x"}
    assert torch_layer_written(_call("self.act(*xs)"), layer, built) == {"xs"}
    assert torch_layer_written(_call("self.act(**kw)"), layer, built) == {"kw"}
    assert torch_layer_written(_call("self.act(x)"), layer, _call("nn.ReLU()")) == set()


def test_a_flag_is_given_where_the_call_may_give_it() -> None:
    assert given_flag(_call("nn.ReLU6(True)"), "inplace", 0, True)
    assert not given_flag(_call("nn.ReLU6(False)"), "inplace", 0, True)
    assert not given_flag(_call("nn.ReLU6()"), "inplace", 0, True)
    assert given_flag(_call("nn.ReLU6(**options)"), "inplace", 0, True)
