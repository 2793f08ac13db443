"""The cuda target: torch.cuda streams and events made lazily, core limits warned about and dropped."""

from __future__ import annotations

import pytest

from codegen.check.rules.pipeline import check_file
from codegen.driver.run import index_run, source_of
from common_sources import AUTO, MANUAL
from npudsl.devices import DEFAULT_DEVICE
from targets_util import diagnostics, transform, user_code

AUTO_OUT = '''import functools

import torch

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
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


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.cuda.is_available():
        _stream("shared", 0)
        _SHARED_FORK()
        _SHARED_JOIN()


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


_SHARED_FORK = functools.partial(_event, _EVENTS, "m.Shared.forward.fork")
_SHARED_JOIN = functools.partial(_event, _EVENTS, "m.Shared.forward.join")


class Shared(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()
        _create_streams()

    def forward(self, x):
        _SHARED_FORK().record()
        with torch.cuda.stream(_stream("shared", 0)):
            torch.cuda.current_stream().wait_event(_SHARED_FORK())
            _record_stream(x, _stream("shared"))
            s = self.shared(x)
            _SHARED_JOIN().record()
        y = x + 1
        torch.cuda.current_stream().wait_event(_SHARED_JOIN())
        return y + s
'''

MANUAL_OUT = """class Block(torch.nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def produce(self, x):
        out = x * 2
        _READY().record()
        return out

    def consume(self, x, scale: float = 2.0):
        torch.cuda.current_stream().wait_event(_READY())
        out = x * scale
        out = _clone(out)
        return out

    def back(self, x):
        torch.cuda.current_stream().wait_event(_READY())
        return x + 1

    def forward(self, x):
        with torch.cuda.stream(_stream("side", 1)) if self.multistream else nullcontext():
            y = self.produce(x)
        with torch.cuda.stream(_stream("late", 0)):
            _record_stream(y, _stream("late"))
            z = self.consume(y)
        return self.back(z)
"""


def test_automatic_fork_join_keep_output_and_helpers() -> None:
    assert transform(AUTO, "cuda") == AUTO_OUT


def test_switch_events_clone_guards_and_no_core_limit() -> None:
    code = transform(MANUAL, "cuda")
    assert user_code(code) == MANUAL_OUT
    assert '_READY = functools.partial(_event, _EVENTS, "m.Block.ready")\n' in code


def test_core_limit_is_a_positioned_warning() -> None:
    assert "7:6: NPD590 warning" in diagnostics(MANUAL, "cuda")


@pytest.mark.parametrize(
    "target, expected", [("cuda", ["14:6 NPD511"]), ("aclgraph", []), ("npugraph_ex", ["14:6 NPD511"])]
)
def test_an_unjoined_manual_stream_is_reported_for_native_streams_only(target: str, expected: list[str]) -> None:
    """ "late" waits for "side" but nothing waits for "late": CUDA graph capture would fail."""
    files = [source_of(MANUAL, path="m.py", module="m")]
    report = check_file(files[0], index_run(files), target=target, device=DEFAULT_DEVICE)
    assert [f"{d.line}:{d.col} {d.code}" for d in report.diagnostics if d.code == "NPD511"] == expected
