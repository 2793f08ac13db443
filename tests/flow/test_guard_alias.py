"""A layer's flag and its submodule's are one guard when both store the constructor argument the layer passes on."""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.guard_alias import guard_aliases

LAYER = """
class Shared(nn.Module):
    def __init__(self, hidden, multistream):
        super().__init__()
        self.multistream = multistream
        SHARED_EXTRA


class Layer(nn.Module):
    def __init__(self, hidden, multistream):
        super().__init__()
        self.dense, self.multistream = False, multistream
        LAYER_EXTRA
        self.shared = Shared(hidden, ARGUMENT)

    def forward(self, x):
        return x
"""


def _aliases(shared: str = "pass", layer: str = "pass", argument: str = "multistream") -> dict[str, str]:
    source = LAYER.replace("SHARED_EXTRA", shared).replace("LAYER_EXTRA", layer).replace("ARGUMENT", argument)
    return guard_aliases(ast.parse(source), "Layer", "self")


def test_one_constructor_argument_stored_by_both_is_one_guard() -> None:
    assert _aliases() == {"self.shared.multistream": "self.multistream"}
    assert _aliases(argument="multistream=multistream") == {"self.shared.multistream": "self.multistream"}


@pytest.mark.parametrize(
    ("shared", "layer", "argument"),
    [
        ("pass", "pass", "not multistream"),  # another value
        ("pass", "pass", "hidden"),  # another argument
        ("self.multistream = False", "pass", "multistream"),  # stored again: it may change
        ("pass", "multistream = multistream and hidden > 0", "multistream"),  # the argument rebound first
    ],
)
def test_anything_else_keeps_two_guards(shared: str, layer: str, argument: str) -> None:
    assert _aliases(shared, layer, argument) == {}
