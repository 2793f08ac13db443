"""GE: a user event orders on the returned value its recording body makes last, a tuple's element too (issue 26).

``@records("e")`` stores a token for the waiter's ``torchair.ops.wait``; a returned tensor whose producer is the
body's last work serves as that token (one call, not ``record()`` and ``wait``). In a returned tuple that is the
element whose op runs last when every element after it is a name or a constant; a tuple whose last op may not
make a tensor, or that returns only names made earlier, keeps the token. The race checker, told to trust only
the waits the code states (``data_edges="explicit"``), sees the waiter ordered after the whole body. A function
of another module of the run says what it returns by its annotation; transformed alone, the caller keeps the
token.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch

from codegen.driver.api import transform_with_index
from codegen.index.index import build_index
from npudsl.testing.targets import run_checked
from targets_util import transform

SOURCE = """
import torch
from npudsl import after, on_stream, records


def helper(x):
    return x


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("routed")
    def route(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, ids = logits.softmax(dim=-1).topk(2, dim=-1)
        return weights / weights.sum(dim=-1, keepdim=True), ids

    @on_stream("side", sync="manual")
    @records("scaled")
    def scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x * 2
        z = torch.mm(y, y)
        return y, z

    @on_stream("side", sync="manual")
    @records("constant")
    def constant(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return torch.mm(x, x), None

    @on_stream("side", sync="manual")
    @records("unknown")
    def unknown(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.mm(x, x), helper(x)

    @on_stream("side", sync="manual")
    @records("names")
    def names(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x + 1
        self.calls = 1
        return y, x

    @after("routed", "scaled", "constant", "unknown", "names")
    def combine(self, x: torch.Tensor, weights: torch.Tensor, ids: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x * weights.sum() + ids.sum() + z.sum()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights, ids = self.route(x)
        y, z = self.scale(x)
        e, _ = self.constant(x)
        a, b = self.unknown(x)
        c, d = self.names(x)
        return self.combine(x, weights, ids, z) + a.sum() + b.sum() + c.sum() + d.sum() + e.sum()
"""


def test_a_tuple_orders_on_the_element_made_last() -> None:
    code = transform(SOURCE, "ge")
    made = "        out = weights / weights.sum(dim=-1, keepdim=True)\n"
    assert made + '        _EVENT_TOKENS["m.M.routed"] = out\n        return out, ids\n' in code
    assert '        _EVENT_TOKENS["m.M.scaled"] = z\n        return y, z\n' in code  # bound by the last statement
    assert '_EVENT_TOKENS["m.M.constant"] = torchair.ops.record()' in code  # no name for ``None``
    assert '_EVENT_TOKENS["m.M.unknown"] = torchair.ops.record()' in code  # ``helper`` may not make a tensor
    assert '_EVENT_TOKENS["m.M.names"] = torchair.ops.record()' in code  # a name made before other work


def test_the_element_token_orders_the_whole_body() -> None:
    x = torch.randn(4, 4)
    model = lambda m: m.M()  # noqa: E731
    got = run_checked(transform(SOURCE, "ge"), "ge", model, (x,), data_edges="explicit")
    want = run_checked(transform(SOURCE, "portable"), "portable", model, (x,))
    assert torch.equal(got, want)


OPS = """
import torch


def grouped(rows: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return torch.mm(rows, weights)


def unannotated(rows):
    return rows * 2
"""

MODEL = """
import torch
from npudsl import after, on_stream, records

from ge_returned_ops import grouped, unannotated


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("done")
    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return grouped(x, x)

    @on_stream("side", sync="manual")
    @records("doubled")
    def double(self, x: torch.Tensor) -> torch.Tensor:
        return unannotated(x)

    @after("done", "doubled")
    def combine(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x + y + z

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.combine(x, self.mlp(x), self.double(x))
"""


def _in_run(files: list[tuple[str, str]], target: str = "ge") -> str:
    index = build_index(files)
    code, found = transform_with_index(MODEL, path="model.py", module_name="model", index=index, target=target)
    assert not [d for d in found if d.severity.value == "error"]
    return code


def test_a_function_of_another_module_of_the_run_says_what_it_returns() -> None:
    together = _in_run([("ge_returned_ops", OPS), ("model", MODEL)])
    assert '_EVENT_TOKENS["model.M.done"] = out' in together
    assert '_EVENT_TOKENS["model.M.doubled"] = torchair.ops.record()' in together  # no annotation
    alone = _in_run([("model", MODEL)])  # the function is not in the run: the token stays
    assert '_EVENT_TOKENS["model.M.done"] = torchair.ops.record()' in alone


def test_the_imported_tensor_orders_the_waiter(monkeypatch: pytest.MonkeyPatch) -> None:
    ops = types.ModuleType("ge_returned_ops")
    exec(compile(OPS, "ge_returned_ops.py", "exec"), ops.__dict__)  # noqa: S102 (the test's own source)
    monkeypatch.setitem(sys.modules, "ge_returned_ops", ops)
    x = torch.randn(4, 4)
    together = _in_run([("ge_returned_ops", OPS), ("model", MODEL)])
    got = run_checked(together, "ge", lambda m: m.M(), (x,), data_edges="explicit")
    assert torch.equal(got, x + torch.mm(x, x) + x * 2)


def test_the_index_reads_what_a_decorated_module_imports_from_its_package() -> None:
    """A run reads the files of its non-decorated helpers only where a decorated file names them; what it
    imports from its own package is named, so the index knows what those functions return."""

    def callers(names: frozenset[str]) -> list[tuple[str, str]]:
        return [("pkg.ops", OPS)] if "grouped" in names else []

    model = MODEL.replace("from ge_returned_ops import", "from .ops import")
    index = build_index([("pkg.model", model)], callers)
    assert index.returns["pkg.ops"] == {"grouped": "torch.Tensor"}  # ``unannotated`` says nothing
    code, _ = transform_with_index(model, path="model.py", module_name="pkg.model", index=index, target="ge")
    assert '_EVENT_TOKENS["pkg.model.M.done"] = out' in code


LAYERS = """
import torch
from torch import nn


class Linear(nn.Linear):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return super().forward(x), None


class Pair(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2, x + 1


class Weights(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = Linear(4, 4)
        self.pair = Pair()
"""

SUBMODULES = """
import torch
from npudsl import after, on_stream, records

from .layers import Weights


class M(Weights):
    @on_stream("side", sync="manual")
    @records("projected")
    def project(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)[0]

    @on_stream("side", sync="manual")
    @records("paired")
    def first(self, x: torch.Tensor) -> torch.Tensor:
        return self.pair(x)[0]

    @after("projected", "paired")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""


def test_a_submodule_of_a_base_class_in_another_file_says_what_it_returns() -> None:
    """``self.proj(x)[0]``: the base class of another file assigns ``proj``, a ``Linear`` returning ``(out, None)``;
    ``self.pair(x)[0]`` keeps the token (which of two tensors ``Pair`` made last is its own)."""
    files = [("pkg.layers", LAYERS), ("pkg.model", SUBMODULES)]
    index = build_index(files)
    code, _ = transform_with_index(SUBMODULES, path="model.py", module_name="pkg.model", index=index, target="ge")
    assert '_EVENT_TOKENS["pkg.model.M.projected"] = out' in code
    assert '_EVENT_TOKENS["pkg.model.M.paired"] = torchair.ops.record()' in code
    alone = build_index([("pkg.model", SUBMODULES)])
    code, _ = transform_with_index(SUBMODULES, path="model.py", module_name="pkg.model", index=alone, target="ge")
    assert '_EVENT_TOKENS["pkg.model.M.projected"] = torchair.ops.record()' in code


EARLY = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.buf = torch.zeros(4, 4)

    @on_stream("side", sync="manual")
    @records("made")
    def make(self, x: torch.Tensor, mode: int) -> torch.Tensor:
        match mode:
            case 0:
                self.buf.copy_(x * 3)
                return x
        return torch.mm(x, x)

    @after("made")
    def combine(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y + self.buf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.combine(x, self.make(x, 0))
"""


def test_a_return_in_a_match_case_keeps_the_token() -> None:
    """The body's last return is not its only one (one stands in a ``case``): the path through the case returns an
    input, made before the body's work, so only ``record()`` orders the waiter after the write of ``self.buf``."""
    code = transform(EARLY, "ge")
    assert '_EVENT_TOKENS["m.M.made"] = x' not in code
    assert code.count('_EVENT_TOKENS["m.M.made"] = torchair.ops.record()') == 2
    x = torch.randn(4, 4)
    got = run_checked(code, "ge", lambda m: m.M(), (x,), data_edges="explicit")
    assert torch.equal(got, x + x + x * 3)
