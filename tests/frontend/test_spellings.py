"""Every spelling of the decorators: the run index, the collector and the rewriter agree on what is npudsl's."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

import npudsl
from codegen.check.diagnostics import Severity
from frontend_util import check, codes, transform

_CLASS = """

class M(nn.Module):
    @{spelled}("side")
    def f(self, x):
        return x * 2

    def forward(self, x):
        y = self.f(x)
        z = x + 1
        return y + z
"""

# (imports, how the decorator is spelled): npudsl's on_stream each time
OURS = {
    "alias": ("from npudsl import on_stream as S", "S"),
    "module_alias": ("import npudsl as n", "n.on_stream"),
    "submodule_import": ("import npudsl.decorators", "npudsl.decorators.on_stream"),
    "submodule_attribute": ("import npudsl", "npudsl.decorators.on_stream"),
    "from_submodule": ("from npudsl.decorators import on_stream", "on_stream"),
    "submodule_alias": ("from npudsl import decorators", "decorators.on_stream"),
    "star": ("from npudsl import *", "on_stream"),
    "type_checking": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from npudsl import on_stream",
        "on_stream",
    ),
    "under_if": ("USE = True\nif USE:\n    from npudsl import on_stream", "on_stream"),
    "import_guard": (
        "try:\n    from npudsl import on_stream\nexcept ImportError:\n"
        "    def on_stream(*args, **kwargs):\n        return lambda fn: fn",
        "on_stream",
    ),
    "assigned_alias": ("import npudsl\nstream = npudsl.on_stream", "stream"),
    "shadowed_after_use": ("from npudsl import on_stream", "on_stream"),  # + a def on_stream after the class
}

# npudsl is named (so the file is read), but the decorator is something else
NOT_OURS = {
    "other_library": ("import npudsl\nfrom otherlib import on_stream", "on_stream"),
    "own_function": ("import npudsl\n\n\ndef on_stream(tag):\n    return lambda fn: fn", "on_stream"),
    "import_in_function": ("def setup():\n    from npudsl import on_stream", "on_stream"),
    "shadowing_function": (
        "from npudsl import on_stream\n\n\ndef on_stream(tag):\n    return lambda fn: fn",
        "on_stream",
    ),
    "shadowing_class": (
        "from npudsl import on_stream\n\n\nclass on_stream:\n    def __init__(self, tag):\n"
        "        pass\n\n    def __call__(self, fn):\n        return fn",
        "on_stream",
    ),
    "other_module_attribute": ("import npudsl\nimport otherlib as n", "n.on_stream"),
}

UNSURE = {
    "type_checking_fallback": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from npudsl import on_stream\n"
        "else:\n    def on_stream(*args, **kwargs):\n        return lambda fn: fn",
        "on_stream",
    ),
    "star_after": ("from npudsl import on_stream\nfrom otherlib import *", "on_stream"),
    "star_only": ("import npudsl\nfrom otherlib import *", "on_stream"),
    "global_rebinding": (
        "from npudsl import on_stream\n\n\ndef patch():\n    global on_stream\n    on_stream = None",
        "on_stream",
    ),
}


def _module(imports: str, spelled: str, name: str = "") -> str:
    source = "from torch import nn\n" + imports + "\n" + _CLASS.format(spelled=spelled)
    if name == "shadowed_after_use":
        source += "\n\ndef on_stream(tag):\n    return lambda fn: fn\n"
    return source


def _errors(diagnostics: tuple) -> list[str]:
    return [d.code for d in diagnostics if d.severity is Severity.ERROR]


@pytest.mark.parametrize("name", OURS)
def test_npudsl_spellings_are_transformed(name: str) -> None:
    source = _module(*OURS[name], name=name)
    code, diagnostics = transform(source)
    assert _errors(diagnostics) == _errors(check(source)) == []
    assert 'npu_stream_switch("side", 0)' in code
    assert "tagged_event_wait(_F_JOIN)" in code.split("def forward")[1]  # the call site joins, later
    assert f"@{OURS[name][1]}(" not in code
    assert transform(code)[0] == code


@pytest.mark.parametrize("name", NOT_OURS)
def test_other_decorators_are_left_alone(name: str) -> None:
    source = _module(*NOT_OURS[name])
    code, diagnostics = transform(source)
    assert code == source
    assert diagnostics == check(source) == ()


@pytest.mark.parametrize("name", UNSURE)
def test_what_cannot_be_resolved_is_a_positioned_error(name: str) -> None:
    source = _module(*UNSURE[name])
    line = source.splitlines().index('    @on_stream("side")') + 1
    code, diagnostics = transform(source)
    assert code == source  # never half a transform
    assert codes(diagnostics) == codes(check(source)) == [f"{line}:6 NPD110"]


def test_one_spelling_with_two_meanings_is_an_error() -> None:
    source = _module("from npudsl import on_stream", "on_stream") + (
        "\n\ndef on_stream(tag):\n    return lambda fn: fn\n\n\n@on_stream('x')\ndef mine(x):\n    return x\n"
    )
    code, diagnostics = transform(source)
    assert code == source
    assert codes(diagnostics) == ["6:6 NPD110"]
    other = source.splitlines().index("@on_stream('x')") + 1
    assert f"something else at line {other}" in diagnostics[0].message


def test_a_local_of_the_same_name_is_not_npudsl() -> None:
    source = _module("from npudsl import on_stream", "on_stream").replace(
        "        y = self.f(x)\n",
        "        def on_stream(fn):\n            return fn\n\n        @on_stream\n        def g(v):\n"
        "            return v\n\n        y = self.f(g(x))\n",
    )
    code, diagnostics = transform(source)
    assert _errors(diagnostics) == []
    assert "        @on_stream\n        def g(v):" in code
    assert 'npu_stream_switch("side", 0)' in code


def test_keyword_arguments_follow_the_signatures() -> None:
    source = _module("from npudsl import core_limit, on_stream as S", "S").replace(
        '    @S("side")\n',
        '    @S(tag="side", priority=0, when="self.on", sync="auto")\n'
        '    @core_limit(aicore=8, vector=16, when="self.on")\n',
    )
    code, diagnostics = transform(source)
    assert _errors(diagnostics) == []
    assert 'torchair.scope.npu_stream_switch("side", 0) if self.on else nullcontext()' in code
    assert "torchair.scope.limit_core_num(8, 16) if self.on else nullcontext()" in code


def test_star_import_binds_what_npudsl_exports() -> None:
    from codegen.frontend.names.bindings import NPUDSL_EXPORTS

    assert NPUDSL_EXPORTS == tuple(sorted(npudsl.__all__))


def test_compile_reads_an_aliased_keyword_spelling(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    path = tmp_path / "aliased_model.py"
    path.write_text(
        "import torch\n" + _module("from npudsl import on_stream as S", "S").replace('@S("side")', '@S(tag="side")'),
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("aliased_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["aliased_model"] = module
    try:
        spec.loader.exec_module(module)
        model = module.M()
        x = torch.randn(3, 4)
        assert torch.equal(npudsl.compile(model, target="portable")(x), x * 2 + (x + 1))
    finally:
        del sys.modules["aliased_model"]
        torch._dynamo.reset()


def test_the_rewriter_strips_by_the_resolvers_spelling() -> None:
    source = _module("import npudsl as n\nfrom npudsl import records", "n.on_stream").replace(
        '    @n.on_stream("side")\n',
        '    @n.on_stream("side", sync="manual")\n    @records("done")\n    @property.getter\n',
    )
    code, _ = transform(source)
    tree = ast.parse(code)
    decorators = [ast.unparse(d) for node in ast.walk(tree) for d in getattr(node, "decorator_list", ())]
    assert decorators == ["property.getter"]
