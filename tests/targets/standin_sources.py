"""Generated code of one automatic fork and join, spelled exactly as each target's golden files spell it.

The case ``auto_sync_used_at_once`` of tests/golden/<target>/ when these tests were written, module
``m``. ``JOIN[target]`` is the line that makes the caller wait for the side stream: without it, the
caller reads the side stream's result unsynchronized.
"""

from __future__ import annotations

__all__ = ["JOIN", "SOURCES"]

PORTABLE = """\
import torch
from torch import nn
from npudsl import runtime


class AtOnce(nn.Module):
    def side(self, x):
        runtime.record("m.AtOnce.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("m.AtOnce.side.fork")
            runtime.record_stream(x, "side")
            out = x.cos()
            runtime.record("m.AtOnce.side.join")
        runtime.wait("m.AtOnce.side.join")
        return out

    def forward(self, x):
        return self.side(x) + x
"""

ACLGRAPH = """\
import torch
from torch import nn
import torchair



def _tagged_event(tag: str) -> str:
    try:
        torchair.ops.npu_create_tagged_event(tag=tag)
    except ValueError:
        pass
    return tag


_SIDE_FORK = _tagged_event(f"{__name__}.AtOnce.side.fork")
_SIDE_JOIN = _tagged_event(f"{__name__}.AtOnce.side.join")


class AtOnce(nn.Module):
    def side(self, x):
        torch.ops.air.tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torch.ops.air.tagged_event_wait(_SIDE_FORK)
            torchair.ops.npu_record_tagged_stream(x, "side")
            out = x.cos()
            torch.ops.air.tagged_event_record(_SIDE_JOIN)
        torch.ops.air.tagged_event_wait(_SIDE_JOIN)
        return out

    def forward(self, x):
        return self.side(x) + x
"""

GE = """\
import torch
from torch import nn
import torchair


class AtOnce(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            return x.cos()

    def forward(self, x):
        return self.side(x) + x
"""

NPUGRAPH_EX = '''\
import torch
from torch import nn
import functools

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(table: dict[str, torch.npu.Event], tag: str) -> torch.npu.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.npu.Event()
    return table[tag]


_SIDE_FORK = functools.partial(_event, _EVENTS, "m.AtOnce.side.fork")
_SIDE_JOIN = functools.partial(_event, _EVENTS, "m.AtOnce.side.join")


class AtOnce(nn.Module):
    def side(self, x):
        _SIDE_FORK().record()
        with torch.npu.stream(_stream("side", 0)):
            torch.npu.current_stream().wait_event(_SIDE_FORK())
            x.record_stream(_stream("side"))
            out = x.cos()
            _SIDE_JOIN().record()
        torch.npu.current_stream().wait_event(_SIDE_JOIN())
        return out

    def forward(self, x):
        return self.side(x) + x
'''

CUDA = '''\
import torch
from torch import nn
import functools

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(table: dict[str, torch.cuda.Event], tag: str) -> torch.cuda.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.cuda.Event()
    return table[tag]


def _record_stream(tensor: torch.Tensor, stream: torch.cuda.Stream) -> None:
    """``tensor.record_stream(stream)``."""
    tensor.record_stream(stream)


_SIDE_FORK = functools.partial(_event, _EVENTS, "m.AtOnce.side.fork")
_SIDE_JOIN = functools.partial(_event, _EVENTS, "m.AtOnce.side.join")


class AtOnce(nn.Module):
    def side(self, x):
        _SIDE_FORK().record()
        with torch.cuda.stream(_stream("side", 0)):
            torch.cuda.current_stream().wait_event(_SIDE_FORK())
            _record_stream(x, _stream("side"))
            out = x.cos()
            _SIDE_JOIN().record()
        torch.cuda.current_stream().wait_event(_SIDE_JOIN())
        return out

    def forward(self, x):
        return self.side(x) + x
'''

SOURCES = {"portable": PORTABLE, "aclgraph": ACLGRAPH, "ge": GE, "npugraph_ex": NPUGRAPH_EX, "cuda": CUDA}

JOIN = {
    "portable": '        runtime.wait("m.AtOnce.side.join")\n',
    "aclgraph": "        torch.ops.air.tagged_event_wait(_SIDE_JOIN)\n",
    "npugraph_ex": "        torch.npu.current_stream().wait_event(_SIDE_JOIN())\n",
    "cuda": "        torch.cuda.current_stream().wait_event(_SIDE_JOIN())\n",
}
