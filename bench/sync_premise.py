"""Who makes the forward's tensor inputs: the capture premise of the sync benchmark.

A model compiled on its own receives its tensors as *graph inputs*: ready on every
stream before the graph starts and alive until it ends, so a side stream may read
them with no fork and no ``record_stream``. The transformer cannot count on that
(CONTRACT section 2): a file transformed alone may be a submodule whose caller makes
a tensor right before the call and drops it after, and a reusable block written by
hand (vllm-ascend's shared expert waits for the current stream) cannot either.

Under the premise "inputs from a caller" (the default of ``bench.sync_minimal``)
the model under test, whether the reference, the generated code or the hand
version, is called from :class:`Caller`, whose forward makes each tensor argument
(also inside a tuple, list or dict) on the main stream right before the call, as a
clone, and never reads it after; then it goes on, allocating on the main stream
(as the rest of a larger model would), so a made tensor dropped while another
stream may still read it is reused: its readiness and its lifetime matter. Other
objects (an attention-metadata object) pass as they are; a runner builds those
once per step, before the graph. A hand version spells the calls that exist only
because of this premise under :func:`from_caller`, so the premise of the old
table (``--graph-inputs``) stays reachable with the same files.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

__all__ = ["Caller", "from_caller", "premise", "wrap"]

_STATE = {"caller": True}


def from_caller() -> bool:
    """Whether the hand versions are written for inputs made by a caller (else: graph inputs)."""
    return _STATE["caller"]


@contextlib.contextmanager
def premise(caller: bool) -> Iterator[None]:
    """Write the hand versions for ``caller`` (True: inputs from a caller; False: graph inputs) inside."""
    saved, _STATE["caller"] = _STATE["caller"], caller
    try:
        yield
    finally:
        _STATE["caller"] = saved


def _made(value: Any) -> Any:
    """``value`` with each tensor in it made anew (a clone on the current stream)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_made(item) for item in value)
    if isinstance(value, dict):
        return {key: _made(item) for key, item in value.items()}
    return value


class Caller(nn.Module):
    """Calls ``model`` on tensors made right before the call and dropped after it, then allocates again."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: Any) -> Any:
        outputs = self.model(*(_made(arg) for arg in args))
        return outputs, torch.zeros(1)  # the caller's next allocation on the main stream


def wrap(model: nn.Module, caller: bool) -> nn.Module:
    """``model`` as the premise calls it: from a :class:`Caller`, or alone (graph inputs)."""
    return Caller(model) if caller else model
