"""The idioms that broke real code under the old ``join=`` protocol: the user's code keeps its shape now."""

from __future__ import annotations

import ast

import pytest

from idioms.harness import check_idiom, generated

LLAMA4_FEED_FORWARD = """
import torch
from torch import nn
from npudsl import on_stream


@on_stream("mlp")
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 8)

    def forward(self, x):
        return self.up(x).relu()


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 2)

    def forward(self, x):  # a fixed signature: the old protocol passed join=False here and crashed
        return x * self.router(x).softmax(-1).sum(-1, keepdim=True)


class Layer(nn.Module):
    def __init__(self, moe: bool):
        super().__init__()
        self.feed_forward = MoE() if moe else MLP()

    def forward(self, x):
        y = self.feed_forward(x)
        z = x * 2
        return y + z


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(True), Layer(False)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def inputs():
    return (torch.randn(4, 8),)
"""

KWARGS = """
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x, **kw):
        return x * len(kw)

    def forward(self, x):
        s = self.side(x, join=1)  # the user's own keyword named join
        t = x + 1
        return s + t


def inputs():
    return (torch.randn(4, 8),)
"""

OVERRIDE_AND_DECORATORS = """
import functools

import torch
from torch import nn
from npudsl import on_stream


def logged(fn):
    @functools.wraps(fn)
    def wrapper(self, x):  # a user decorator with a fixed signature above @on_stream
        return fn(self, x)
    return wrapper


class Base(nn.Module):
    @logged
    @on_stream("side")
    def branch(self, x):
        return x.exp()

    @torch.compiler.disable
    @on_stream("side")
    def host_side(self, x):
        return x - 1

    def forward(self, x):
        b = self.branch(x)
        m = x * 3
        h = self.host_side(x)  # compiled apart: a graph break
        return b + m + h


class Model(Base):
    def branch(self, x):  # an undecorated override
        return x.sin()


def inputs():
    return (torch.randn(4, 8),)
"""


# transformers' Llama4TextDecoderLayer stores its feed-forward in two statements; the MLP reads its own flag
LLAMA4_BRANCHES = LLAMA4_FEED_FORWARD.replace(
    '@on_stream("mlp")\nclass MLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n',
    '@on_stream("mlp", when="self.multistream")\nclass MLP(nn.Module):\n    def __init__(self):\n'
    "        super().__init__()\n        self.multistream = True\n",
).replace(
    "        self.feed_forward = MoE() if moe else MLP()\n",
    "        if moe:\n            self.feed_forward = MoE()\n        else:\n            self.feed_forward = MLP()\n",
)

# two submodules stored in one statement: each is known, as if stored alone
PAIRED_SUBMODULES = LLAMA4_FEED_FORWARD.replace(
    "        self.feed_forward = MoE() if moe else MLP()\n",
    "        self.norm, self.feed_forward = nn.LayerNorm(8), MLP()\n",
)


def _signatures(code: str) -> dict[str, str]:
    return {
        f"{getattr(n, 'name', '')}": ast.unparse(n.args)
        for n in ast.walk(ast.parse(code))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


@pytest.mark.parametrize(
    "source",
    [LLAMA4_FEED_FORWARD, LLAMA4_BRANCHES, PAIRED_SUBMODULES, KWARGS, OVERRIDE_AND_DECORATORS],
    ids=["llama4_feed_forward", "llama4_branches", "paired_submodules", "user_kwargs", "override_and_decorators"],
)
def test_real_idioms_are_race_free_exact_and_keep_their_signatures(source: str) -> None:
    code = check_idiom(source, fullgraph="compiler.disable" not in source)
    assert "join" not in _signatures(code).values().__str__()
    for name, signature in _signatures(source).items():
        assert _signatures(code)[name] == signature, name


def test_a_call_compiled_apart_stays_on_its_callers_stream() -> None:
    code = generated(OVERRIDE_AND_DECORATORS)
    forward = code.split("def forward")[1]
    assert forward.count("runtime.stream(") == 1  # branch only
    before_break = forward.split("h = self.host_side(x)")[0]
    assert 'runtime.wait("idiom.Base.branch.join")' in before_break  # fork and join in one graph


def test_a_users_keyword_named_join_is_passed_once() -> None:
    assert "self.side(x, join=1)" in generated(KWARGS)
    compile(generated(KWARGS), "k.py", "exec")


def test_a_submodule_stored_two_classes_is_called_as_written() -> None:
    """``self.feed_forward`` may be the MoE: reading the MLP's flag through it would raise, so the call is left
    on its caller's stream (NPD502 says so)."""
    code = generated(LLAMA4_BRANCHES)
    assert "self.feed_forward.multistream" not in code and "runtime.stream(" not in code.split("class Layer")[1]


def test_submodules_stored_in_one_statement_are_known() -> None:
    layer = generated(PAIRED_SUBMODULES).split("class Layer")[1].split("class Model")[0]
    assert layer.count('runtime.stream("mlp"') == 1
