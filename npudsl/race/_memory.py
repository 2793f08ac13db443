"""Graph memory on any device: a replay overwrites what the previous replays left in it.

:class:`Replays` runs one captured FX graph the way torchair's reduce-overhead
runtime treats its memory (seed 003). Each call replays the *captured graph* of its
graph key (the values of the graph's size arguments; a static graph has one). The
outputs of a replay live in graph memory and stay valid until the next replay that
reuses that memory, which then expires them (:mod:`npudsl.race._stale`):

- mode 2 on (the default, no ``mempool``): the captured graphs of one FX graph share
  one memory, so any replay of the FX graph expires the outputs of the one before;
- mode 2 off, or a ``mempool`` (mode 1, which turns mode 2 off): each captured
  graph keeps its outputs, and only its own next replay expires them. FX graphs
  never overwrite each other's outputs (own pools, or retained outputs in a shared one);
- mode 3 off (``clone_inputs=False``): the user's tensors passed to the capturing
  call become the captured graph's input buffers; a later call with another tensor
  is copied into them, which expires them;
- ``clone_outputs=True``: outputs are the caller's (torchair clones them; here they
  already are fresh memory), nothing expires.

Outputs that share memory with an input, a parameter or a constant of the graph are
not graph memory, nor are outputs the model cloned. Which outputs are graph memory
is decided on the first call of each graph key, as torchair decides at capture.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import attrs
import torch

from npudsl.graph_config import GraphMemory
from npudsl.race._graph_io import GraphIO
from npudsl.race._source import caller_location
from npudsl.race._stale import Origin, expire

__all__ = ["Replays"]

_Live = tuple["weakref.ref[torch.Tensor]", Origin, int]  # a tensor, who it is, the call that made it
_Buffer = tuple[int, "weakref.ref[torch.Tensor]", int | None, Origin, int]  # position, tensor, address, who, call


def _address(value: Any) -> int | None:
    return value.untyped_storage().data_ptr() if isinstance(value, torch.Tensor) else None


@attrs.define(eq=False)
class _Memory:
    """Memory that replays overwrite; ``live``: what the latest replay left in it."""

    live: list[_Live] = attrs.Factory(list)

    def replay(self, fresh: tuple[Any, ...] | list[Any], tracked: list[_Live], call: int) -> None:
        """The replay ``call`` made ``fresh`` (``tracked`` of them are graph memory): expire what it overwrote."""
        for ref, origin, made_by in self.live:
            tensor = ref()
            if tensor is not None and all(tensor is not out for out in fresh):
                expire(tensor, origin, made_by, call)
        self.live = tracked


@attrs.define(eq=False)
class _Captured:
    """One captured graph: its graph memory outputs, its memory, and its input buffers (mode 3 off)."""

    memory_outputs: tuple[tuple[int, Origin], ...]
    memory: _Memory
    buffers: list[_Buffer]


class Replays:
    """The callable a backend returns for one FX graph: run it, then account for its memory."""

    def __init__(self, forward: Callable[..., Any], io: GraphIO, policy: GraphMemory, fixed: set[int]) -> None:
        self.forward, self.io, self.policy, self.fixed = forward, io, policy, fixed
        self.shared = _Memory() if policy.reuse_within_graph and policy.mempool is None else None
        self.captured: dict[tuple[Any, ...], _Captured] = {}
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        symbols = self.io.symbols
        key = tuple([args[i] for i in symbols]) if symbols else ()
        captured = self.captured.get(key)
        calls = self.calls = self.calls + 1
        if captured is not None and captured.buffers:
            self._copy_inputs(captured, args)
        outs = self.forward(*args)
        flat = outs if isinstance(outs, (tuple, list)) else (outs,)
        if captured is None:
            captured = self.captured[key] = self._capture(args, flat)
        tracked = [(weakref.ref(flat[i]), origin, calls) for i, origin in captured.memory_outputs]
        captured.memory.replay(flat, tracked, calls)
        return outs

    def _capture(self, args: tuple[Any, ...], outs: tuple[Any, ...] | list[Any]) -> _Captured:
        taken = self.fixed | {a for a in map(_address, args) if a}
        memory_outputs = (
            ()
            if self.policy.clone_outputs
            else tuple(
                (i, origin)
                for i, (origin, out) in enumerate(zip(self.io.outputs, outs))
                if origin is not None and type(out) is torch.Tensor and _address(out) not in taken | {0}
            )
        )
        buffers = [] if self.policy.clone_inputs else self._buffers(args)
        return _Captured(memory_outputs=memory_outputs, memory=self.shared or _Memory(), buffers=buffers)

    def _buffers(self, args: tuple[Any, ...]) -> list[_Buffer]:
        passed_at = caller_location()
        return [
            (
                i,
                weakref.ref(args[i]),
                _address(args[i]),
                Origin(what=f"input '{name}'", made_at=passed_at, graph=self.io.name, is_input=True),
                self.calls,
            )
            for i, name in self.io.user_inputs
        ]

    def _copy_inputs(self, captured: _Captured, args: tuple[Any, ...]) -> None:
        """Mode 3 off: an input at another address is copied into the captured one, which expires it."""
        for entry in list(captured.buffers):
            position, ref, address, origin, made_by = entry
            buffer = ref()
            if buffer is None or (args[position] is not buffer and _address(args[position]) != address):
                if buffer is not None:
                    expire(buffer, origin, made_by, self.calls)
                captured.buffers.remove(entry)
