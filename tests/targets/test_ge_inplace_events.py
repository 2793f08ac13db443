"""GE: a user event recorded by a body whose last work writes a tensor in place orders on that tensor (issue 26).

``flow/ge_written.py``: ``kv_cache[1].index_copy_(...)`` then ``return k_pe, kv_a, latent.shape[0]``, or
``dist.all_reduce(grad)`` then ``return grad``, stores the written tensor as the event's token, and the waiter's
``torchair.ops.wait([...])`` orders after the write (functionalization hands the wait the write's result:
``test_standin_inplace.py``): one call instead of ``record()`` and ``wait``. The race checker, trusting only the
waits the code states (``data_edges="explicit"``), sees the waiter ordered after the whole body. Where the write is
not the body's last work (other work follows, it is guarded, or the return computes), the token stays, and the
written tensor in its place would race.
"""

from __future__ import annotations

import pytest
import torch

from bench.sync_count import count_graph
from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph
from targets_util import transform

SOURCE = """
import torch
import torch.distributed as dist
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("cached")
    def cache(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor], slots: torch.Tensor
              ) -> tuple[torch.Tensor, int]:
        y = x * 2
        kv[0].index_copy_(0, slots, y)
        kv[1].index_copy_(0, slots, y + 1)
        return y, x.shape[0]

    @records("ready")
    def prepare(self, x: torch.Tensor) -> torch.Tensor:
        return x * 1

    @on_stream("side", sync="manual")
    @after("ready")
    @records("reduced")
    def reduce(self, grad: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(grad)
        return grad

    @on_stream("side", sync="manual")
    @records("viewed")
    def view(self, x: torch.Tensor, buf: torch.Tensor) -> int:
        buf[0] = x[0] * 3
        rows = buf[1:]
        rows.mul_(2)
        return x.shape[0]

    @after("cached", "reduced", "viewed")
    def read(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor], buf: torch.Tensor) -> torch.Tensor:
        return kv[0].sum() + kv[1].sum() + buf.sum() + x.sum()

    def forward(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor], slots: torch.Tensor,
                buf: torch.Tensor) -> torch.Tensor:
        y, n = self.cache(x, kv, slots)
        grad = self.reduce(self.prepare(x))
        m = self.view(x, buf)
        return self.read(grad, kv, buf) + y.sum() + n + m
"""

_TOKENS = "_EVENT_TOKENS"


def _inputs() -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor, torch.Tensor]:
    x = torch.arange(8.0).reshape(2, 4)
    return x, (torch.zeros(4, 4), torch.zeros(4, 4)), torch.tensor([3, 1]), torch.ones(3, 4)


def _local_all_reduce(monkeypatch: pytest.MonkeyPatch) -> None:
    """One process: the collective writes its tensor in place, as ``bench.sync_sources`` runs it."""
    monkeypatch.setattr(torch.distributed, "all_reduce", lambda tensor, *args, **kwargs: tensor.mul_(1))


def test_each_body_orders_on_the_tensor_it_writes_last() -> None:
    code = transform(SOURCE, "ge")
    assert f'{_TOKENS}["m.M.cached"] = kv[1]\n' in code
    assert f'{_TOKENS}["m.M.reduced"] = grad\n' in code
    assert f'{_TOKENS}["m.M.viewed"] = rows\n' in code
    assert "torchair.ops.record()" not in code


def test_the_written_tensor_orders_the_whole_body(monkeypatch: pytest.MonkeyPatch) -> None:
    _local_all_reduce(monkeypatch)
    model = lambda m: m.M()  # noqa: E731
    traced = trace_graph(transform(SOURCE, "ge"), "ge", model, _inputs(), data_edges="explicit")
    want = run_checked(transform(SOURCE, "portable"), "portable", model, _inputs())
    assert torch.equal(traced.outputs, want)
    assert count_graph(traced.dynamo[0])["record"] == 0
    assert count_graph(traced.dynamo[0])["wait"] == 4  # "ready" too


NOT_LAST = {
    "work after the write": ("        rows.mul_(2)\n", "        rows.mul_(2)\n        self.scaled = x * 5\n"),
    "a guarded write": ("        rows.mul_(2)\n", "        if x.shape[0] > 1:\n            rows.mul_(2)\n"),
    "a return that computes": ("        return x.shape[0]\n", "        return x.shape[0] + buf[0, 0] * 0\n"),
}


@pytest.mark.parametrize("edit", NOT_LAST.values(), ids=NOT_LAST.keys())
def test_a_write_that_is_not_the_last_work_is_no_token(edit: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _local_all_reduce(monkeypatch)
    source = SOURCE.replace(*edit)
    code = transform(source, "ge")
    assert f'{_TOKENS}["m.M.viewed"] = rows\n' not in code  # the token, or what the return makes (``out``)
    model = lambda m: m.M()  # noqa: E731
    want = run_checked(transform(source, "portable"), "portable", model, _inputs())
    assert torch.equal(run_checked(code, "ge", model, _inputs(), data_edges="explicit"), want)


def test_work_after_the_write_would_race_on_the_written_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule must not apply there: waiting for the write does not order what the body makes after it."""
    _local_all_reduce(monkeypatch)
    source = SOURCE.replace(*NOT_LAST["work after the write"]).replace(
        "        return kv[0].sum() + kv[1].sum() + buf.sum() + x.sum()\n",
        "        return kv[0].sum() + kv[1].sum() + buf.sum() + x.sum() + self.scaled.sum()\n",
    )
    code = transform(source, "ge")
    model = lambda m: m.M()  # noqa: E731
    run_checked(code, "ge", model, _inputs(), data_edges="explicit")  # the token orders it
    forced = code.replace(f'{_TOKENS}["m.M.viewed"] = torchair.ops.record()', f'{_TOKENS}["m.M.viewed"] = rows')
    assert forced != code
    with pytest.raises(StreamRaceError, match="made on stream 'side'"):
        run_checked(forced, "ge", model, _inputs(), data_edges="explicit")


def test_an_in_place_change_of_metadata_only_keeps_the_token() -> None:
    """``rows.unsqueeze_(0)`` writes no data (functionalization makes it a view op, which GE may fold away): the
    rule does not count on waiting for ``rows`` to order the work issued before it."""
    code = transform(
        SOURCE.replace("        rows.mul_(2)\n", "        rows.mul_(2)\n        rows.unsqueeze_(0)\n"), "ge"
    )
    assert f'{_TOKENS}["m.M.viewed"] = torchair.ops.record()\n' in code


UNCERTAIN = {
    "a tuple of unknown elements": ("kv: tuple[torch.Tensor, torch.Tensor], slots", "kv: tuple, slots"),
    "a rebound parameter": ("        y = x * 2\n", "        y = x * 2\n        kv = (kv[0], kv[1])\n"),
    "an asynchronous collective": ("dist.all_reduce(grad)", "dist.all_reduce(grad, async_op=False)"),
    "a module name rebound": (
        "import torch.distributed as dist\n",
        "import torch.distributed as dist\n\ndist = dist\n",
    ),
}


@pytest.mark.parametrize("edit", UNCERTAIN.values(), ids=UNCERTAIN.keys())
def test_a_written_value_not_certainly_a_tensor_keeps_the_token(edit: tuple[str, str]) -> None:
    code = transform(SOURCE.replace(*edit), "ge")
    assert code.count("torchair.ops.record()") == 1


LISTED = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("done")
    def split(self, x: torch.Tensor) -> list[torch.Tensor]:
        return list(torch.mm(x, x).split(2))

    @on_stream("side", sync="manual")
    @records("done")
    def write(self, x: torch.Tensor, cache: torch.Tensor) -> int:
        cache.add_(x)
        return x.shape[0]

    @after("done")
    def read(self, cache: torch.Tensor) -> torch.Tensor:
        return cache * 2
"""


def test_an_event_another_record_lists_takes_the_written_tensor_in_a_list() -> None:
    code = transform(LISTED, "ge")
    assert '_EVENT_TOKEN_LISTS["m.M.done"] = [*out]\n' in code
    assert '_EVENT_TOKEN_LISTS["m.M.done"] = [cache]\n' in code
