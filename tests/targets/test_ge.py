"""The ge target: switches and core limits as scopes, events as npu_wait_tensor edges, or positioned errors."""

from __future__ import annotations

from common_sources import AUTO, MANUAL
from targets_util import diagnostics, transform

MANUAL_OUT = '''import torch
import torchair
from contextlib import nullcontext


class Block(torch.nn.Module):
    def produce(self, x):
        with (
            torchair.scope.npu_stream_switch("side", 1) if self.multistream else nullcontext(),
            torchair.scope.limit_core_num(8, 16) if self.limit else nullcontext(),
        ):
            out = x * 2
            self._event_ready = out
            return out

    def consume(self, x, scale: float = 2.0):
        with torchair.scope.npu_stream_switch("late", 0):
            x = torchair.scope.npu_wait_tensor(x, self._event_ready)
            out = x * scale
            out = out.clone()
            return out

    def back(self, x):
        x = torchair.scope.npu_wait_tensor(x, self._event_ready)
        return x + 1
'''

AUTO_OUT = '''import torch
import torchair


class Shared(torch.nn.Module):
    def forward(self, x):
        with torchair.scope.npu_stream_switch("shared", 0):
            return x * 2
'''

SEVERAL = '''
import torch
from npudsl import after, on_stream, records


class Pair(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("both", when="self.overlap")
    def split(self, x):
        return x * 2, x + 1

    @after("both", when="self.overlap")
    def merge(self, a, b, *rest, dim: int = 0):
        return torch.cat([a, b], dim)
'''

SEVERAL_OUT = '''class Pair(torch.nn.Module):
    def split(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = x * 2
            out_1 = x + 1
            if self.overlap:
                self._event_both = torchair.scope.npu_wait_tensor(out, out_1)
            return out, out_1

    def merge(self, a, b, *rest, dim: int = 0):
        if self.overlap:
            a = torchair.scope.npu_wait_tensor(a, self._event_both)
            b = torchair.scope.npu_wait_tensor(b, self._event_both)
        return torch.cat([a, b], dim)
'''

UNEXPRESSIBLE = '''
import torch
from npudsl import after, on_stream, records


@on_stream("copy", sync="manual")
@records("copied")
def copy_out(x):
    return x.clone()


@after("copied")
def use(x):
    return x + 1


class Log(torch.nn.Module):
    @records("logged")
    def log(self, x):
        print(x.shape)

    @after("logged")
    def tick(self, step: int):
        return step + 1
'''


def test_switch_core_limit_events_clone_and_guards() -> None:
    assert transform(MANUAL, "ge") == MANUAL_OUT


def test_automatic_fork_join_and_keep_output_need_no_call() -> None:
    assert transform(AUTO, "ge").startswith(AUTO_OUT)
    assert "npu_wait_tensor" not in transform(AUTO, "ge")


def test_several_returned_tensors_make_one_dependency() -> None:
    assert transform(SEVERAL, "ge").split("\n\n\n", 1)[1] == SEVERAL_OUT


def test_orderings_ge_cannot_express_are_positioned_errors() -> None:
    found = [d for d in diagnostics(UNEXPRESSIBLE, "ge") if d.endswith("error")]
    assert found == ["6:2: NPD401 error", "11:2: NPD401 error", "17:6: NPD402 error", "21:6: NPD403 error"]


def test_other_targets_accept_what_ge_rejects() -> None:
    for target in ("aclgraph", "portable", "cuda", "npugraph_ex"):
        assert not [d for d in diagnostics(UNEXPRESSIBLE, target) if d.endswith("error")]
