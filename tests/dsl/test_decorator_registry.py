"""One registry of decorators (``npudsl.schedule.DECORATORS``): every list of them is made from it.

A decorator added to ``npudsl.decorators`` without its registry entry, an entry
without its public function, an argument without its rule, or an entry that the
eager runtime or the lowering ignores fails here instead of being skipped
silently by the transformer's name resolution, argument parsing, collector,
checks or code generation.
"""

from __future__ import annotations

import ast
import inspect
import types

import attrs
import pytest
import torch

import npudsl
from codegen.driver.api import transform_source
from codegen.frontend import decorator_args
from codegen.frontend.collect import collect
from codegen.frontend.ir import StreamFunction
from codegen.frontend.names import bindings
from codegen.lower.lower import LOWERINGS
from npudsl import decorators
from npudsl.runtime import _ops
from npudsl.schedule import DECORATOR_FIELDS, DECORATORS, REPEATABLE, Loc, Schedule

_MODEL_FIELDS = ("stream", "waits", "records", "core_limit", "keep_output")
ALL_DECORATORS = """
from npudsl import after, core_limit, keep_output, on_stream, records

class M:
    @on_stream("side", when="self.a")
    @after("e", when="self.b")
    @after("f", "g", when="self.c")
    @records("g", when="self.d")
    @core_limit(1, "self.n", when="self.e")
    @keep_output(when="self.f")
    def f(self, x):
        return x
"""


def test_the_registry_is_the_public_decorators_and_the_model_fields() -> None:
    public = [name for name in decorators.__all__ if inspect.isfunction(getattr(decorators, name))]
    assert list(DECORATORS) == list(DECORATOR_FIELDS) and set(DECORATORS) == set(public) <= set(npudsl.__all__)
    assert set(DECORATOR_FIELDS.values()) == {f.name for f in attrs.fields(Schedule)} == set(_MODEL_FIELDS)
    assert issubclass(StreamFunction, Schedule)
    assert REPEATABLE == {"after", "records"}


def test_every_argument_of_every_decorator_has_its_rule() -> None:
    for name, entry in DECORATORS.items():
        shape = decorator_args._SHAPES[name].parameters
        assert set(shape) == {*entry.rules, "when"}, name
        runtime = inspect.signature(getattr(npudsl, name)).parameters.values()
        assert entry.bare == any(p.kind is p.POSITIONAL_ONLY for p in runtime)  # only a bare decorator has the slot


def test_the_transformer_knows_every_decorator_of_the_registry() -> None:
    assert bindings.DECORATORS == set(DECORATORS)
    assert bindings.NPUDSL_EXPORTS == tuple(npudsl.__all__)
    assert set(decorator_args._SHAPES) == set(DECORATORS) == set(LOWERINGS)


def test_decorations_walks_every_decorator_of_a_function() -> None:
    found = collect(ast.parse(ALL_DECORATORS), ALL_DECORATORS, path="m.py", module_name="m")
    assert found.diagnostics == ()
    (fn,) = found.ir.functions
    assert [spec.when.dotted for spec in fn.decorations if spec.when] == [f"self.{c}" for c in "abcdef"]


def test_the_transformer_and_the_runtime_build_one_model() -> None:
    """The specs ``collect`` reads from the source are those the decorators attach, plus where each is written."""
    (fn,) = collect(ast.parse(ALL_DECORATORS), ALL_DECORATORS, path="m.py", module_name="m").ir.functions
    assert all(fn.said_by(name) for name in DECORATORS), "ALL_DECORATORS uses every decorator of the registry"
    namespace: dict[str, object] = {"__name__": "m"}
    exec(compile(ALL_DECORATORS, "m.py", "exec"), namespace)
    runtime = namespace["M"].f.__npudsl__  # type: ignore[attr-defined]
    static = {field: getattr(fn, field) for field in DECORATOR_FIELDS.values()}
    for field, said in static.items():
        specs = said if isinstance(said, tuple) else (said,)
        assert all(isinstance(spec.loc, Loc) for spec in specs)
        unplaced = tuple(attrs.evolve(spec, loc=None) for spec in specs)
        assert unplaced == (getattr(runtime, field) if isinstance(said, tuple) else (getattr(runtime, field),))
    assert [spec.loc.line for spec in fn.decorations] == [5, 6, 7, 8, 9, 10]


@pytest.mark.parametrize(
    "call,argument",
    [
        ('on_stream("a b")', '"a b"'),
        ('on_stream("s", sync="later")', '"later"'),
        ('on_stream("s", 1, when="self.x()")', '"self.x()"'),
        ("after()", "after()"),
        ('after("ok", "not ok")', '"not ok"'),
        ("records(3)", "3"),
        ("core_limit(4, 0)", "0"),
        ('keep_output(clone="yes")', '"yes"'),
    ],
)
def test_both_halves_reject_a_bad_argument_alike(call: str, argument: str) -> None:
    """The same rule, the same message and hint, at decoration time and statically (there at the argument)."""
    with pytest.raises(npudsl.DecoratorError) as raised:
        eval(call, vars(npudsl))
    source = f"from npudsl import *\n\n@{call}\ndef f(x):\n    return x\n"
    (bad,) = collect(ast.parse(source), source, path="m.py", module_name="m").diagnostics
    assert str(raised.value) == f"{bad.code} {bad.message} (hint: {bad.hint})"
    assert (bad.line, bad.col) == (3, 2 + call.index(argument))


# A use of each decorator, with which it must change what runs untransformed and what the transformer writes.
EXAMPLES = {
    "on_stream": '@on_stream("side")',
    "after": '@after("ready")',
    "records": '@records("done")',
    "core_limit": "@core_limit(2, 4)",
    "keep_output": "@keep_output(clone=True)",
}
MODEL = """
import torch
from npudsl import *


class M(torch.nn.Module):
    @records("ready")
    def first(self, x):
        return x + 1

    {decorator}
    def part(self, x):
        return x * 2

    def forward(self, x):
        y = self.first(x)
        z = self.part(y)
        w = x * 3
        return z - w
"""


def test_every_decorator_has_an_example() -> None:
    assert set(EXAMPLES) == set(DECORATORS)


def _eager_trace(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], torch.Tensor]:
    trace: list[object] = []
    for name in list(_ops.OPS):
        monkeypatch.setitem(_ops.OPS, name, lambda *args, name=name: trace.append((name, *args)))
    clone = torch.Tensor.clone
    monkeypatch.setattr(torch.Tensor, "clone", lambda self, *a, **k: trace.append("clone") or clone(self, *a, **k))
    module = types.ModuleType("registry_model")
    exec(compile(source, "registry_model.py", "exec"), module.__dict__)
    out = module.M()(torch.ones(2))
    monkeypatch.undo()
    return trace, out


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_decorator_changes_what_runs_eagerly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, expected = _eager_trace(MODEL.format(decorator=""), monkeypatch)
    decorated, out = _eager_trace(MODEL.format(decorator=EXAMPLES[name]), monkeypatch)
    assert decorated != plain
    assert torch.equal(out, expected)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_decorator_changes_the_generated_code(name: str) -> None:
    def generated(decorator: str) -> set[str]:
        source = MODEL.format(decorator=decorator)
        return set(transform_source(source, path="m.py", target="portable").splitlines()) - set(source.splitlines())

    assert generated(EXAMPLES[name]) != generated("")
