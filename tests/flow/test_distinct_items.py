"""A write to this micro-batch's object in a slotted call's loop does not wait for the previous micro-batch's call.

``codegen/lower/flow/distinct_items.py`` and ``item_apart.py``: ``self.dispatchers`` holds one object per
micro-batch, each built by its own constructor call; the loop fills ``ds[i]``'s buffer in place, then reads it on
"comm". Micro-batch ``i - 1``'s call read ``ds[i - 1]``, another object: micro-batch ``i`` no longer waits for it
(vllm_qwen3_dbo's ``preprocess_and_permtute1``), and each call takes its parity's join event. Where the items may
be one object (``[D(w)] * 2``, a list the function changes, a constructor given a tensor, a factory) the wait stays,
and dropping it races: the checker says so.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Dispatcher:
    def __init__(self, width: int) -> None:
        self.buf = torch.zeros(2, width)

    def prepare(self, h):
        self.buf.copy_(h)


def make(width: int) -> Dispatcher:
    return Dispatcher(width)


class Model(nn.Module):
    def __init__(self, width: int = 3, shared: torch.Tensor | None = None) -> None:
        super().__init__()
        self.dispatchers = BUILD

    @on_stream("comm")
    def dispatch(self, d: Dispatcher):
        return d.buf * 2

    def forward(self, hs: list[torch.Tensor]):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        ds = self.dispatchers
        CHANGE
        for i in range(n):
            h = hs[i] + 1
            BEFORE
            ds[i].prepare(h)
            out[i] = self.dispatch(ds[i])
        for i in range(n):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
DISTINCT = "[Dispatcher(width) for _ in range(2)]"
PAIR = '("m.Model.dispatch.join", "m.Model.dispatch.join.2")'
WAIT = 'runtime.wait("m.Model.dispatch.join")'


def _code(build: str = DISTINCT, change: str = "pass", target: str = "portable", before: str = "pass") -> str:
    source = SOURCE.replace("BUILD", build).replace("CHANGE", change).replace("BEFORE", before)
    return transform_source(source, path="m.py", target=target)


def _first_loop(code: str) -> list[str]:
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    start = lines.index("for i in range(n):")
    return lines[start : lines.index("for i in range(n):", start + 1)]


@pytest.mark.parametrize("build", [DISTINCT, "[Dispatcher(width), Dispatcher(3)]", f"list({DISTINCT})"])
def test_distinct_objects_do_not_wait_for_the_previous_call(build: str) -> None:
    loop = _first_loop(_code(build))
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]
    assert f"runtime.record({PAIR}[i % 2])" in loop


@pytest.mark.parametrize(
    ("build", "change"),
    [
        ("[Dispatcher(width)] * 2", "pass"),  # one object twice
        ("[Dispatcher(width) for _ in range(2)]", "ds[1] = ds[0]"),  # the function puts one object in twice
        ("[Dispatcher(width) for _ in range(2)]", "ds.append(ds[0])"),
        ("[make(width) for _ in range(2)]", "pass"),  # a factory may hand back one object
        ("[Dispatcher(shared) for _ in range(2)]", "pass"),  # a constructor given a tensor
    ],
)
def test_items_that_may_be_one_object_keep_the_wait(build: str, change: str) -> None:
    loop = _first_loop(_code(build, change))
    assert loop.index(WAIT) < loop.index("ds[i].prepare(h)")


def test_a_list_the_function_builds_is_read_there() -> None:
    """``ds`` built in ``forward`` itself, one ``Dispatcher`` per element."""
    code = transform_source(
        SOURCE.replace("BUILD", DISTINCT)
        .replace("ds = self.dispatchers", "ds = [Dispatcher(3) for _ in range(n)]")
        .replace("CHANGE", "pass")
        .replace("BEFORE", "pass"),
        path="m.py",
        target="portable",
    )
    loop = _first_loop(code)
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]
    assert f"runtime.record({PAIR}[i % 2])" in loop


def test_an_item_read_at_this_index_waits_for_no_earlier_call() -> None:
    """``out[i]`` before the call holds what this iteration or the code before the loop stored, never an earlier
    call's result."""
    loop = _first_loop(_code(before="h = h if out[i] is None else out[i]"))
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]


@pytest.mark.parametrize(
    "before",
    [
        "h = h + (0 if i == 0 else out[i - 1].sum())",  # the previous micro-batch's result
        "(lambda i: ds[i].prepare(h))(0)",  # ``i`` in a lambda is another value
    ],
)
def test_another_item_waits(before: str) -> None:
    loop = _first_loop(_code(before=before))
    assert loop.index(WAIT) < loop.index(before.strip())


def test_another_item_written_in_a_lambda_is_race_free() -> None:
    _run(_code(before="(lambda i: ds[i].prepare(h))(0)"), DISTINCT, 2)


def _run(code: str, build: str, count: int, target: str = "portable") -> torch.Tensor:
    hs = [torch.randn(2, 3) for _ in range(count)]
    native = target == "cuda"  # native events are made at their first eager use
    got = trace_graph(code, target, lambda m: m.Model(), (hs,), eager_first=native).outputs
    torch.testing.assert_close(got, torch.cat([(h + 1) * 6 for h in hs]))
    return got


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
def test_race_free_and_exact(target: str, count: int) -> None:
    _run(_code(target=target), DISTINCT, count, target)


def test_one_object_twice_races_without_the_wait() -> None:
    """The distinct list's code, given one object twice: micro-batch 1 overwrites the buffer micro-batch 0's call
    still reads on "comm"."""
    code = _code().replace(DISTINCT, "[Dispatcher(width)] * 2")
    with pytest.raises(StreamRaceError):
        _run(code, DISTINCT, 2)
