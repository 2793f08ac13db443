"""A private function's parameter needs no keep where its caller reads it through a submodule of an object it was
given, annotated with the object's class.

``_run(self, block: Block, x)`` calls ``self._held(x, c)``, which reads ``c`` on "side", then reads ``c`` again through
``block.indexer(c)``, where ``Block.__init__`` makes ``self.indexer = Indexer()`` and ``Indexer.forward`` surely reads
its input. ``used_calls.py`` followed ``self.<submodule>`` only, so ``_held`` kept ``c`` with a ``record_stream`` (fails
on main); now the annotation names the class (``codegen/index/annotated_receivers.py``) and the keep goes, race-free and
exact on every target. It stays where nothing names the class surely (no annotation, a class from outside the
package, the parameter rebound) or where the submodule reads ``c`` only under a flag; there, taking it out races. A
read in one branch of a conditional expression (``c * 3 if self.on else ...``) was a sure read (``used_params.py``),
so a private function whose caller's submodule reads ``c`` so dropped its keep: racy on main, kept here.
"""

from __future__ import annotations

import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Indexer(nn.Module):
    def __init__(self, on: bool) -> None:
        super().__init__()
        self.on = on

    def forward(self, c: torch.Tensor) -> torch.Tensor:
        READ


class Block(nn.Module):
    def __init__(self, on: bool) -> None:
        super().__init__()
        self.indexer = Indexer(on)


class Model(nn.Module):
    def __init__(self, on: bool = True) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(on), Block(on)])

    @on_stream("side")
    def side(self, c):
        return c * 2

    def _held(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def _run(self, PARAM, x: torch.Tensor) -> torch.Tensor:
        REBIND
        c = x * 1
        out = self._held(x, c)
        return out + block.indexer(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = self._run(block, x)
        return x
"""
SURE = "return c * 3"
FLAG = "return c * 3 if self.on else torch.zeros(2, 3)"
KEEP = 'runtime.record_stream(c, "side")'
TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _source(param: str = "block: Block", read: str = SURE, rebind: str = "pass") -> str:
    return SOURCE.replace("PARAM", param).replace("READ", read).replace("REBIND", rebind)


def _own_indexer(source: str) -> str:
    """The caller reads ``c`` through its own submodule ``self.indexer`` instead."""
    built = "self.blocks = nn.ModuleList([Block(on), Block(on)])"
    source = source.replace(built, f"{built}\n        self.indexer = Indexer(on)")
    return source.replace("block.indexer(c)", "self.indexer(c)")


def _eager(source: str, x: torch.Tensor, on: bool) -> torch.Tensor:
    module = types.ModuleType("eager_annotated")
    exec(compile(source, "<eager_annotated.py>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(on)(x)


def test_no_keep_where_the_given_objects_submodule_reads_it() -> None:
    code = transform_source(_source(), path="m.py", target="portable")
    assert KEEP not in method_source(code, "_held")


@pytest.mark.parametrize(
    ("param", "read", "rebind"),
    [
        ("block", SURE, "pass"),  # no annotation: any object
        ("block: nn.Module", SURE, "pass"),  # a class from outside the package
        ("block: Block", SURE, "block = self.blocks[0] if x is None else block"),  # rebound
        ("block: Block", FLAG, "pass"),  # read only under a flag
    ],
)
def test_the_keep_stays_where_the_read_is_not_sure(param: str, read: str, rebind: str) -> None:
    code = transform_source(_source(param, read, rebind), path="m.py", target="portable")
    assert method_source(code, "_held").count(KEEP) == 1


@pytest.mark.parametrize("target", TARGETS)
def test_race_free_and_exact(target: str) -> None:
    source, x = _source(), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = trace_graph(code, target, lambda m: m.Model(), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, x, True))


def test_without_the_keep_a_read_under_a_flag_races() -> None:
    source, x = _source(read=FLAG), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target="portable")
    body = method_source(code, "_held")
    without = code.replace(body, body.replace(KEEP, "pass"))
    torch.testing.assert_close(run_checked(without, "portable", lambda m: m.Model(True), (x,)), _eager(source, x, True))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Model(False), (x,))


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
def test_a_read_in_one_branch_of_a_conditional_expression_keeps(target: str) -> None:
    source, x = _own_indexer(_source(read=FLAG)), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target == "cuda"
    got = trace_graph(code, target, lambda m: m.Model(False), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, x, False))
