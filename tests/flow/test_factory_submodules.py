"""A submodule a base builds by calling a factory its subclass hands it is followed: the caller reads through it.

vllm-ascend's DeepSeek-V4 attention keeps its weights in a base class that makes the indexer from a callable parameter
(``self.indexer = indexer(shape)``), and the attention passes ``lambda s: DeepseekV4Indexer(s, multistream)`` from its
own ``__init__``. Here ``Weights`` makes ``self.inner = make(3)`` and ``Model`` passes ``lambda n: Inner()``:
``self.inner(c)`` runs ``Inner.forward``, which reads ``c`` in an op, so ``by_factory`` reads ``c`` again after
``self._held(x, c)`` and ``_held``'s fork needs no ``record_stream(c)`` (``held_params.py`` over ``used_calls.py``,
``submodule_forward.py``, ``factory_submodules.py``). ``self.spare``, which another method stores again, stays
unknown, and ``_kept`` keeps ``c``. Race-checked and exact on every target; without that keep, ``Zero`` (which reads
nothing) races.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.driver.run import index_run, read_sources
from codegen.index.factory_submodules import factory_class
from codegen.index.submodule_forward import submodule_forward
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Inner(nn.Module):
    def forward(self, t):
        return t * 2


class Zero(nn.Module):
    def forward(self, t):
        return torch.zeros(2, 3)


class Weights(nn.Module):
    def __init__(self, make, again):
        super().__init__()
        self.again = again
        self.inner = make(3)
        self.spare = make(4)

    def reset(self):
        self.spare = Zero()


class Model(Weights):
    def __init__(self, again=True):
        super().__init__(lambda n: Inner(), again)

    @on_stream("side")
    def side(self, c):
        return c * 2

    def _held(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def _kept(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def by_factory(self, x):
        c = x * 1
        out = self._held(x, c)
        return out * self.inner(c)

    def by_spare(self, x):
        c = x * 1
        out = self._kept(x, c)
        if self.again:
            self.reset()
        return out * self.spare(c)
""" + caller_source()

_KEEP = 'runtime.record_stream(c, "side")'
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _want(method: str, x: torch.Tensor, again: bool) -> torch.Tensor:
    out = x * 2 + (x + x) * 3
    return out * (torch.zeros_like(x) if method == "by_spare" and again else x * 2)


def test_no_keep_where_the_caller_reads_through_the_factory_made_submodule() -> None:
    assert _KEEP not in method_source(_code(), "_held")


def test_the_keep_stays_where_the_submodule_is_stored_again() -> None:
    assert method_source(_code(), "_kept").count(_KEEP) == 1


@pytest.mark.parametrize("again", [True, False])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", ["by_factory", "by_spare"])
def test_race_free_and_exact(method: str, target: str, again: bool) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    trace = trace_graph(_code(target), target, lambda m: m.Caller(method, again), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, _want(method, x, again))


def test_without_the_keep_the_unknown_submodule_races() -> None:
    code = _code()
    body = method_source(code, "_kept")
    without = code.replace(body, body.replace(_KEEP, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("by_spare", True), (torch.randn(2, 3),))


def test_the_dsv4_indexer_is_the_class_its_factory_makes() -> None:
    """vllm-ascend's DSV4 attention: ``self.indexer`` holds a ``DeepseekV4Indexer`` (``lambda s: ...``); the
    compressor its base makes in another module is ``Compressor``'s (``class_chain.forward_of``)."""
    folder = Path(__file__).parents[1] / "corpus" / "vllm_dsv4_dsa_overlap"
    index = index_run(read_sources([(str(p), str(folder)) for p in sorted(folder.glob("*.py"))]))
    dsa, indexer = "corpus.vllm_dsv4_dsa_overlap.dsa", "corpus.vllm_dsv4_dsa_overlap.indexer"
    assert factory_class(index, dsa, "AscendDSAImpl", "indexer") == "DeepseekV4Indexer"
    assert factory_class(index, dsa, "AscendDSAImpl", "compressor") is None
    assert (submodule_forward(index, dsa, "AscendDSAImpl", "indexer") or ())[:2] == (indexer, "DeepseekV4Indexer")
    found = submodule_forward(index, indexer, "DeepseekV4Indexer", "compressor") or ()
    assert found[:2] == ("corpus.vllm_dsv4_dsa_overlap.layers", "Compressor")
