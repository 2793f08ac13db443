"""The npugraph_ex target: torch.npu streams and events made lazily, core limits through set_stream_limit."""

from __future__ import annotations

from common_sources import AUTO, MANUAL
from targets_util import diagnostics, transform, user_code

HELPERS = '''import functools

import torch

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
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


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        _stream("side", 1)
        _stream("late", 0)
        _READY()


def _record_stream(value, stream, objects=True) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_stream(item, stream, False)


def _clone(value):
    """``value`` with each tensor in it cloned, rebuilding tuples, named tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_clone(item) for item in value])
    if isinstance(value, (tuple, list)):
        return type(value)([_clone(item) for item in value])
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    return value


_READY = functools.partial(_event, _EVENTS, "m.Block.ready")


'''

MANUAL_OUT = """class Block(torch.nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def produce(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(8, 16) if self.limit else nullcontext():
            out = x * 2
            _READY().record()
            return out

    def consume(self, x, scale: float = 2.0):
        torch.npu.current_stream().wait_event(_READY())
        out = x * scale
        out = _clone(out)
        return out

    def back(self, x):
        torch.npu.current_stream().wait_event(_READY())
        return x + 1

    def forward(self, x):
        with torch.npu.stream(_stream("side", 1)) if self.multistream else nullcontext():
            y = self.produce(x)
        with torch.npu.stream(_stream("late", 0)):
            _record_stream(y, _stream("late"))
            z = self.consume(y)
        return self.back(z)
"""

AUTO_OUT = """class Shared(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()
        _create_streams()

    def forward(self, x):
        _SHARED_FORK().record()
        with torch.npu.stream(_stream("shared", 0)):
            torch.npu.current_stream().wait_event(_SHARED_FORK())
            _record_stream(x, _stream("shared"))
            s = self.shared(x)
            _SHARED_JOIN().record()
        y = x + 1
        torch.npu.current_stream().wait_event(_SHARED_JOIN())
        return y + s
"""


def test_helpers_core_limit_and_events() -> None:
    code = transform(MANUAL, "npugraph_ex")
    assert code.replace("from contextlib import nullcontext\n", "", 1) == HELPERS + MANUAL_OUT
    assert "NPD590 warning" not in " ".join(diagnostics(MANUAL, "npugraph_ex"))


def test_automatic_fork_join_and_keep_output() -> None:
    code = transform(AUTO, "npugraph_ex")
    assert user_code(code) == AUTO_OUT
    assert "_core_limit" not in code and "import contextlib" not in code
