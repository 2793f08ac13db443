"""GE: a user event orders on the tensors of a container its recording body returns (issue 26).

``torchair.ops.wait`` takes a list of tensors: where a body's last work makes every tensor of a returned list
(``list(t.split(n))``), or a dict whose every value is certainly a tensor (a comprehension that is the whole
body, a call annotated ``-> dict[str, torch.Tensor]``), the waiter waits for those tensors, one call instead
of ``record()`` and ``wait``. Such an event's tokens are lists (``_EVENT_TOKEN_LISTS``). A body whose last work
is an in-place write, or whose comprehension filters, keeps the token: ordering on the container after a write
races, as a test shows. ``wait`` takes at least one tensor: an empty dict falls back to a token.
"""

from __future__ import annotations

import pytest
import torch

from bench.sync_count import count_graph
from codegen.driver.api import transform_with_index
from codegen.index.index import build_index
from npudsl.race import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph
from targets_util import transform

SOURCE = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("split")
    def chunks(self, x: torch.Tensor) -> list[torch.Tensor]:
        return list(torch.mm(x, x).split(2))

    @on_stream("side", sync="manual")
    @records("gathered")
    def gather(self, quant: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {name: torch.cat([t, t]) for name, t in quant.items()}

    @on_stream("side", sync="manual")
    @records("after_work")
    def after_work(self, x: torch.Tensor, quant: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        x.mul_(2)
        return {name: torch.mul(t, 2) for name, t in quant.items()}

    @on_stream("side", sync="manual")
    @records("filtered")
    def filtered(self, quant: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {name: torch.mul(t, 2) for name, t in quant.items() if name != "skip"}

    @on_stream("side", sync="manual")
    @records("unbound")
    def unbound(self, x: torch.Tensor) -> list[torch.Tensor]:
        return list(torch.mm(x, x).unbind(0))

    @after("split", "gathered", "after_work", "filtered", "unbound")
    def combine(self, x: torch.Tensor, parts: list[torch.Tensor], rows: dict[str, torch.Tensor]) -> torch.Tensor:
        return x.sum() + torch.cat(parts).sum() + rows["a"].sum()

    def forward(self, x: torch.Tensor, y: torch.Tensor, quant: dict[str, torch.Tensor]) -> torch.Tensor:
        parts = self.chunks(x)
        rows = self.gather(quant)
        more = self.after_work(y, quant)
        kept = self.filtered(quant)
        rows2 = self.unbound(x)
        return self.combine(x, parts, rows) + more["b"].sum() + kept["a"].sum() + torch.stack(rows2).sum()
"""

_LISTS = "_EVENT_TOKEN_LISTS"


def test_a_container_made_last_is_the_token() -> None:
    code = transform(SOURCE, "ge")
    assert f'        {_LISTS}["m.M.split"] = [*out]\n        return out\n' in code
    values = "[*out.values()] or [torchair.ops.record()]"  # the record is traced only for an empty dict
    assert f'        {_LISTS}["m.M.gathered"] = {values}\n        return out\n' in code
    assert f'    torchair.ops.wait({_LISTS}.pop("m.M.split"))' in code
    assert f'{_LISTS}["m.M.after_work"] = {values}' in code  # the last iteration's op runs after ``mul_``
    assert '_EVENT_TOKENS["m.M.filtered"] = torchair.ops.record()' in code  # a filter may leave it empty
    assert '_EVENT_TOKENS["m.M.unbound"] = torchair.ops.record()' in code  # ``unbind`` may return ()


def test_the_container_token_orders_the_whole_body() -> None:
    x, quant = torch.randn(4, 4), {"a": torch.randn(4, 4), "b": torch.randn(2, 4)}
    model = lambda m: m.M()  # noqa: E731
    got = run_checked(transform(SOURCE, "ge"), "ge", model, (x, x.clone(), quant), data_edges="explicit")
    want = run_checked(transform(SOURCE, "portable"), "portable", model, (x, x.clone(), quant))
    assert torch.equal(got, want)


OPS = """
import torch


def dynamic_quant(x: torch.Tensor) -> dict[str, torch.Tensor]:
    scale = x.abs().amax(dim=-1)
    return {"x_int8": torch.round(x / scale.unsqueeze(-1)), "scale": scale}


def loose(x: torch.Tensor) -> dict:
    return {"x": x * 2}
"""

MODEL = """
import torch
from npudsl import after, on_stream, records

from ge_container_ops import dynamic_quant, loose


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("quant")
    def quantize(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return dynamic_quant(x)

    @on_stream("side", sync="manual")
    @records("loose")
    def untyped(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return loose(x)

    @after("quant", "loose")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""


def test_a_dict_of_tensors_by_annotation_is_the_token() -> None:
    index = build_index([("ge_container_ops", OPS), ("model", MODEL)])
    code, _ = transform_with_index(MODEL, path="model.py", module_name="model", index=index, target="ge")
    assert f'{_LISTS}["model.M.quant"] = [*out.values()] or [torchair.ops.record()]' in code
    assert '_EVENT_TOKENS["model.M.loose"] = torchair.ops.record()' in code  # ``dict``: values unknown
    alone, _ = transform_with_index(
        MODEL, path="model.py", module_name="model", index=build_index([("model", MODEL)]), target="ge"
    )
    assert '_EVENT_TOKENS["model.M.quant"] = torchair.ops.record()' in alone


WRITES = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("written")
    def write(self, x: torch.Tensor, cache: torch.Tensor) -> list[torch.Tensor]:
        parts = list(torch.mm(x, x).split(2))
        cache.add_(1)
        return parts

    @after("written")
    def read(self, cache: torch.Tensor, parts: list[torch.Tensor]) -> torch.Tensor:
        return cache * 2 + parts[0].sum()

    def forward(self, x: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        parts = self.write(x, cache)
        return self.read(cache, parts)
"""


def test_ordering_after_a_write_in_place_on_the_container_races() -> None:
    """The body's last work writes ``cache`` in place: the event orders on ``cache`` (``ge_written.py``), not on the
    container; waiting for the split's tensors instead leaves the waiter's read of ``cache`` unordered after the
    write."""
    code = transform(WRITES, "ge")
    token = '_EVENT_TOKENS["m.M.written"] = cache'
    assert token in code
    x = torch.randn(4, 4)
    model = lambda m: m.M()  # noqa: E731
    run_checked(code, "ge", model, (x, x * 5), data_edges="explicit")
    listed = code.replace(token, '_EVENT_TOKENS["m.M.written"] = parts[0]')
    assert listed != code
    with pytest.raises(StreamRaceError, match="'cache'"):
        run_checked(listed, "ge", model, (x, x * 5), data_edges="explicit")


EMPTIED = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("emptied")
    def scale(self, x: torch.Tensor, quant: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        x.mul_(2)
        return {name: torch.mul(t, 2) for name, t in quant.items()}

    @after("emptied")
    def read(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    def forward(self, x: torch.Tensor, quant: dict[str, torch.Tensor]) -> torch.Tensor:
        rows = self.scale(x, quant)
        return self.read(x) + sum(t.sum() for t in rows.values())
"""


def test_an_empty_dict_falls_back_to_a_token() -> None:
    """``torchair.ops.wait`` takes at least one tensor: an empty dict records a token instead, which orders the
    waiter's read of ``x`` after the side stream's write; with one value the wait is for that value alone."""
    code = transform(EMPTIED, "ge")
    listed = f'{_LISTS}["m.M.emptied"] = [*out.values()] or [torchair.ops.record()]'
    assert listed in code
    model = lambda m: m.M()  # noqa: E731
    x = torch.randn(4, 4)
    traced = trace_graph(code, "ge", model, (x.clone(), {}), data_edges="explicit")
    assert torch.equal(traced.outputs, x * 6)
    assert count_graph(traced.dynamo[0])["record"] == 1
    traced = trace_graph(code, "ge", model, (x.clone(), {"a": x}), data_edges="explicit")
    assert count_graph(traced.dynamo[0])["record"] == 0
    bare = code.replace(listed, f'{_LISTS}["m.M.emptied"] = [*out.values()]')
    with pytest.raises(Exception, match="at least one tensor"):
        run_checked(bare, "ge", model, (x.clone(), {}), data_edges="explicit")
