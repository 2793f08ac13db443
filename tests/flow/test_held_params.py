"""A private function's parameter needs no keep where every caller surely reads it again after the call.

``_held(x, c)`` reads ``c`` on "side", reads it on the caller's stream and allocates before the join, which comes before
it returns (vllm-ascend's DSV4 ``_mla_prolog``, whose ``forward`` reads ``cos`` and ``-sin`` after it). Its callers read
``c`` again after the call, each on its own stream: through a function of the module that surely reads it, through a
view, in an operand. ``c``'s memory lives past that read, which comes after the join: no ``record_stream``; so for an
element of a tuple parameter that the function unpacks (vllm-ascend's indexer caches, ``_, ..., k_cache, _ = kv_cache``)
where every caller reads that element after. Near-identical shapes keep it: a private function whose caller reads ``c``
only in some runs (a helper reading it under a flag: a captured graph frees ``c`` after its last use, inside the
function, before the join), a caller reading another element of the tuple, and a public function (a caller outside the
run may drop ``c``).
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def rotate(x, c):
    y = x.view(-1)
    return (y * c.view(-1)).view(x.shape)


def maybe_rotate(x, c, on):
    if on:
        return x * c
    return x


class Model(nn.Module):
    def __init__(self, again=True):
        super().__init__()
        self.again = again

    @on_stream("side")
    def side(self, c):
        return c * 2

    def _held(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def _maybe(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def public(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def by_helper(self, x):
        c = x * 1
        out = self._held(x, c)
        return rotate(out, c)

    def by_view(self, x):
        c = x * 1
        out = self._held(x, c)
        if self.again:
            out = out + 1
        return out - c.unsqueeze(0)[0]

    def by_flag(self, x):
        c = x * 1
        out = self._maybe(x, c)
        return maybe_rotate(out, c, self.again)

    def by_public(self, x):
        c = x * 1
        out = self.public(x, c)
        return out * c

    def _cached(self, x: torch.Tensor, caches: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        _, c = caches
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def _other_cached(self, x: torch.Tensor, caches: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        _, c = caches
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def by_element(self, x):
        caches = (x * 1, x * 1)
        out = self._cached(x, caches)
        return rotate(out, caches[1])

    def by_other_element(self, x):
        caches = (x * 1, x * 1)
        out = self._other_cached(x, caches)
        return rotate(out, caches[0])
""" + caller_source()

_KEEP = 'runtime.record_stream(c, "side")'
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _want(method: str, x: torch.Tensor, again: bool) -> torch.Tensor:
    out = x * 2 + (x + x) * 3
    if method in ("by_helper", "by_element", "by_other_element"):
        return out * x
    if method == "by_view":
        return (out + 1 if again else out) - x
    return out * x if again or method == "by_public" else out


@pytest.mark.parametrize("method", ["_held", "_cached"])
def test_no_keep_where_every_caller_reads_it_again(method: str) -> None:
    assert _KEEP not in method_source(_code(), method)


@pytest.mark.parametrize("method", ["_maybe", "public", "_other_cached"])
def test_the_keep_stays_where_a_caller_may_not_read_it_or_is_unseen(method: str) -> None:
    assert method_source(_code(), method).count(_KEEP) == 1


@pytest.mark.parametrize("again", [True, False])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", ["by_helper", "by_view", "by_flag", "by_public", "by_element", "by_other_element"])
def test_race_free_and_exact(method: str, target: str, again: bool) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    trace = trace_graph(_code(target), target, lambda m: m.Caller(method, again), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, _want(method, x, again))


def test_without_the_keep_a_caller_reading_another_element_races() -> None:
    code = _code()
    body = method_source(code, "_other_cached")
    without = code.replace(body, body.replace(_KEEP, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("by_other_element", True), (torch.randn(2, 3),))


def test_without_the_keep_a_caller_reading_it_under_a_flag_races() -> None:
    code = _code()
    body = method_source(code, "_maybe")
    without = code.replace(body, body.replace(_KEEP, "pass"))
    x = torch.randn(2, 3)
    torch.testing.assert_close(run_checked(without, "portable", lambda m: m.Caller("by_flag", True), (x,)), x * 8 * x)
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("by_flag", False), (x,))
