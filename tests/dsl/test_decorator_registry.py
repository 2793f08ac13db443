"""One registry of decorators (``npudsl.schedule.DECORATOR_FIELDS``): every list of them is made from it.

A decorator added to ``npudsl.decorators`` without its registry row, or a field of
the model without its decorator, fails here instead of being skipped silently by
the transformer's name resolution, argument parsing, collector or checks.
"""

from __future__ import annotations

import ast
import inspect

import attrs

import npudsl
from codegen.frontend import decorator_args
from codegen.frontend.collect import collect
from codegen.frontend.ir import StreamFunction
from codegen.frontend.names import bindings
from npudsl import decorators
from npudsl.schedule import DECORATOR_FIELDS, REPEATABLE, Schedule

_MODEL_FIELDS = ("stream", "waits", "records", "core_limit", "keep_output")
ALL_DECORATORS = """
from npudsl import after, core_limit, keep_output, on_stream, records

class M:
    @on_stream("side", when="self.a")
    @after("e", when="self.b")
    @after("f", when="self.c")
    @records("g", when="self.d")
    @core_limit(1, 2, when="self.e")
    @keep_output(when="self.f")
    def f(self, x):
        return x
"""


def test_the_registry_is_the_public_decorators_and_the_model_fields() -> None:
    public = [name for name in decorators.__all__ if inspect.isfunction(getattr(decorators, name))]
    assert set(DECORATOR_FIELDS) == set(public) <= set(npudsl.__all__)
    assert set(DECORATOR_FIELDS.values()) == {f.name for f in attrs.fields(Schedule)}
    assert set(DECORATOR_FIELDS.values()) <= {f.name for f in attrs.fields(StreamFunction)}
    assert set(DECORATOR_FIELDS.values()) == set(_MODEL_FIELDS)
    assert REPEATABLE == {"after", "records"}


def test_the_transformer_knows_every_decorator_of_the_registry() -> None:
    assert bindings.DECORATORS == set(DECORATOR_FIELDS)
    assert bindings.NPUDSL_EXPORTS == tuple(npudsl.__all__)
    assert set(decorator_args._SHAPES) == set(DECORATOR_FIELDS)


def test_the_static_shape_of_each_decorator_is_its_runtime_signature() -> None:
    for name, shape in decorator_args._SHAPES.items():
        runtime = inspect.signature(getattr(decorators, name)).parameters
        kept = [p for p in runtime if runtime[p].kind is not inspect.Parameter.POSITIONAL_ONLY]
        assert kept == list(shape.parameters)


def test_decorations_walks_every_decorator_of_a_function() -> None:
    found = collect(ast.parse(ALL_DECORATORS), ALL_DECORATORS, path="m.py", module_name="m")
    assert found.diagnostics == ()
    (fn,) = found.ir.functions
    assert [spec.when.dotted for spec in fn.decorations if spec.when] == [f"self.{c}" for c in "abcdef"]
