"""Overlap an all-reduce with compute, written with npudsl decorators.

Two processes (gloo on CPU; NCCL/HCCL behave the same way on devices) each run
one step of :class:`OverlapStep`:

* main stream: ``local_grad`` makes this rank's gradient and records ``grad_ready``;
* "comm" stream: ``all_reduce`` waits for ``grad_ready`` and sums the gradient over
  the ranks, then records ``reduced``;
* main stream, at the same time: ``compute`` runs the next matmuls, which do not
  need the reduced gradient, so they overlap the communication;
* main stream: ``combine`` waits for ``reduced`` and adds the averaged gradient.

The stream method uses ``sync="manual"``: its ``@after``/``@records`` events are
the whole ordering, so the caller is not joined until ``combine``. Run it with
``python examples/distributed_overlap.py``; it checks every rank's result against
the same computation on one stream.
"""

from __future__ import annotations

import datetime
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for

__all__ = ["OverlapStep", "example_inputs", "main", "single_stream"]

WORLD = 2
FEATURES = 64


def _inputs(rank: int) -> torch.Tensor:
    return torch.randn(32, FEATURES, generator=torch.Generator().manual_seed(rank))


class OverlapStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        weights = torch.Generator().manual_seed(1234)
        self.w_grad = nn.Parameter(torch.randn(FEATURES, FEATURES, generator=weights) / FEATURES**0.5)
        self.w_next = nn.Parameter(torch.randn(FEATURES, FEATURES, generator=weights) / FEATURES**0.5)

    def local_grad(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.tanh(x @ self.w_grad)
        _EVENT_TOKENS["distributed_overlap.OverlapStep.grad_ready"] = out
        return out

    def all_reduce(self, grad: torch.Tensor) -> torch.Tensor:
        if "distributed_overlap.OverlapStep.grad_ready" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("distributed_overlap.OverlapStep.grad_ready")])
        dist.all_reduce(grad)
        _EVENT_TOKENS["distributed_overlap.OverlapStep.reduced"] = grad
        return grad

    def compute(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.w_next) @ self.w_next

    def combine(self, hidden: torch.Tensor, reduced: torch.Tensor) -> torch.Tensor:
        if "distributed_overlap.OverlapStep.reduced" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("distributed_overlap.OverlapStep.reduced")])
        return hidden + reduced / WORLD

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grad_1 = self.local_grad(x)
        with torchair.scope.npu_stream_switch("comm", 0):
            reduced = self.all_reduce(grad_1)
        hidden = self.compute(x)
        return self.combine(hidden, reduced)


def example_inputs() -> tuple[torch.Tensor, ...]:
    """Rank 0's input (for ``npudsl schedule``, which captures one rank)."""
    return (_inputs(0),)


def single_stream(model: OverlapStep, rank: int) -> torch.Tensor:
    """The same step on one stream, with the all-reduce done locally."""
    with torch.no_grad():
        grads = [torch.tanh(_inputs(r) @ model.w_grad) for r in range(WORLD)]
        total = grads[0]
        for grad in grads[1:]:
            total = total + grad
        return model.compute(_inputs(rank)) + total / WORLD


def _worker(rank: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=30))
    try:
        model = OverlapStep()
        with torch.no_grad():
            result = model(_inputs(rank))
        torch.testing.assert_close(result, single_stream(model, rank))
        print(f"rank {rank}: overlapped all-reduce matches the single-stream result")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(timeout_s: float = 50.0) -> int:
    """Run both ranks; 0 when both match, 1 on a mismatch, an error or a timeout."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(_free_port())
    context = mp.spawn(_worker, nprocs=WORLD, join=False)
    deadline = time.monotonic() + timeout_s
    try:
        while not context.join(timeout=1.0):
            if time.monotonic() > deadline:
                print("timed out", file=sys.stderr)
                return 1
    except mp.ProcessRaisedException as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        for process in context.processes:
            if process.is_alive():
                process.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
