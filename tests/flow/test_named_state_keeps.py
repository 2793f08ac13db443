"""The tensors a stream call reads through an object the caller changes are kept by name, not by walking the object.

``state_keeps.py``: a parameter annotated with the user's class (``box: Box``), given an object the caller fills
(``box.load(x)``), is kept as ``record_stream(box.t, ...)``: the attributes the callee's body reads (through the
class's methods, ``box.take()`` reads ``self.t``) before storing them itself, that a method stores per call.
Walking the object instead (what main did) made ``torch.compile`` guard on which attributes the object has: a
``Box()`` built without ``t``, filled by the first call, compiled again on the second. Named, two calls trace one
graph, race-free, with the same numerics. Where the class is not in the run, the call stays on the caller's stream
(NPD501: module state here, an object given or made by the caller in ``test_given_changed_unnamed.py``).
"""

from __future__ import annotations

import re

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.cli import main
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream
from elsewhere import Remote


class Box:
    def __init__(self):
        self.k = 2

    def load(self, x):
        self.t = x * self.k
        self.n = x.shape[0]

    def take(self):
        t = self.t * self.n
        self.t = None
        return t + 3


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.remotes = [Remote(), Remote()]
        self.boxes = [Box(), Box()]

    @on_stream("side")
    def side(self, box: Box):
        return box.take()

    @on_stream("side")
    def remote_side(self, y, i: int):
        return y * self.remotes[i].t

    def passed(self, x, box):
        box.load(x)
        y = self.side(box)
        z = x * 3
        return y + z

    @on_stream("side")
    def double(self, x):
        return x * 2

    @on_stream("side")
    def scaled(self, y, i: int):
        return y * self.boxes[i].t

    def ordered(self, x):
        bs = self.boxes
        y = self.double(x)
        bs[0].load(x + 1)
        z = self.scaled(y, 0)
        w = x * 5
        return z + w

    def remote(self, x):
        rs = self.remotes
        rs[0].load(x)
        y = self.remote_side(x * 2, 0)
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self, method="passed"):
        super().__init__()
        self.model, self.box, self.method = Model(), Box(), method  # no ``t`` until the first call fills it

    def forward(self, x):
        if self.method == "ordered":
            return self.model.ordered(x * 1)
        return self.model.passed(x * 1, self.box)
"""

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]
_LOCAL = "class Remote:\n    def load(self, x):\n        self.t = x\n"


def _code(target: str) -> str:
    return transform_source(SOURCE.replace("from elsewhere import Remote\n", _LOCAL), path="m.py", target=target)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "npugraph_ex", "cuda"])
def test_the_tensors_are_named(target: str) -> None:
    code = _code(target)
    assert re.search(r"record\w*\(box\.t, ", code), code
    assert not re.search(r"record\w*\(box, ", code)  # no walk of the object
    assert not re.search(r"record\w*\(box\.(n|k), ", code)  # a number, and construction state


@pytest.mark.parametrize("target", _TARGETS)
def test_two_calls_trace_one_graph_race_free(target: str) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    trace = trace_graph(_code(target), target, lambda m: m.Caller(), (x,), calls=2, eager_first=native)
    torch.testing.assert_close(trace.outputs, x * 2 * 2 + 3 + x * 3)
    assert len(trace.dynamo) == 1, f"{len(trace.dynamo)} graphs for two calls (a recompile)"


def test_a_class_the_run_cannot_read_keeps_the_call_at_once(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """``Remote`` comes from outside the run: which of its attributes the body reads is unknown (NPD501)."""
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    main(["check", str(tmp_path / "m.py")])
    assert re.search(r"NPD501 warning: self\.remote_side\(\.\.\.\)", capsys.readouterr().out)
    code = transform_source(SOURCE, path="m.py", target="portable")
    remote = code[code.index("    def remote(") :]
    assert "runtime.stream" not in remote[: remote.index("return")]
    assert re.search(r"record_stream\(box\.t, ", code)  # ``Box`` is in the run: ``passed`` still runs apart


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_the_fork_orders_a_read_of_state_the_caller_changed(target: str) -> None:
    """``scaled`` reads only its own stream's result ``y`` as an argument, but its body reads ``self.boxes[0].t``,
    which the caller's stream made after ``double`` forked (``bs[0].load(x + 1)``): the caller's name holding the
    object is an input of the call, so it forks after that change (without the fork the side stream reads ``t``
    before the caller's stream has made it: the checker reports the race)."""
    code = _code(target)
    ordered = code[code.index("    def ordered(") : code.index("    def remote(")]
    assert re.search(r"(Model\.scaled\.fork|_SCALED_FORK)\W+\n.*\n.*wait\(", ordered), ordered  # a fork of its own
    x = torch.randn(2, 3)
    trace = trace_graph(code, target, lambda m: m.Caller("ordered"), (x,), calls=2)
    torch.testing.assert_close(trace.outputs, x * 2 * ((x + 1) * 2) + x * 5)
    assert len(trace.dynamo) == 1


AGAIN = """\
import torch
from torch import nn
from npudsl import on_stream


class Dispatcher:
    def __init__(self):
        self.k = 2

    def prepare(self, x):
        self.t = x * self.k

    def send(self):
        return self.t + 1

    def bump(self):
        self.t.mul_(3)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dispatchers = [Dispatcher(), Dispatcher()]

    @on_stream("side")
    def dispatch(self, d: Dispatcher):
        return d.send()

    def again(self, x):
        ds = self.dispatchers
        ds[0].prepare(x)
        y = self.dispatch(ds[0])
        CHANGE
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Model()

    def forward(self, x):
        return self.model.again(x * 1)
"""


_STATE_READ = (
    (
        "    def dispatch(self, d: Dispatcher):\n        return d.send()",
        "    def dispatch(self, y, i: int):\n        return y * self.dispatchers[i].t + 1",
    ),
    ("y = self.dispatch(ds[0])", "y = self.dispatch(x * 0 + 1, 0)"),
)


@pytest.mark.parametrize("read", ["given", "state"])
@pytest.mark.parametrize(
    "change", ["ds[0].t.add_(1)", "ds[0].bump()", "ds[0].prepare(x * 5)", "self.dispatchers[0].t.add_(1)"]
)
def test_the_callers_next_use_of_the_object_waits(change: str, read: str) -> None:
    """The caller's stream writing in place what the call reads through the object (``ds[0].t.add_(1)``, or a method
    that does, ``ds[0].bump()``) is ordered after the call: the object's holder is joined at its next use, as a
    result is; the same through the module's state (``self.dispatchers[0]``, read by the call's body as
    ``self.dispatchers[i]``). Named keeps alone let both race (the checker said so)."""
    source = AGAIN.replace("CHANGE", change)
    for before, after in _STATE_READ if read == "state" else ():
        source = source.replace(before, after)
    code = transform_source(source, path="m.py", target="portable")
    assert "def again" in code
    x = torch.randn(2, 3)
    trace = trace_graph(code, "portable", lambda m: m.Caller(), (x,), calls=2)
    torch.testing.assert_close(trace.outputs, x * 2 + 1 + x * 3)
