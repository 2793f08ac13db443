"""The in-place, ``out=`` and view-then-write spellings the race checker must see, and models racing on each.

Two sources:

- the operator registry (``torch._C._jit_get_all_schemas``): every ATen op whose
  ``self`` or ``out`` argument is annotated ``Tensor(a!)`` and that Python spells as
  a tensor method (``h.sin_()``, ``h.add_(other)``) or as a ``torch`` function with
  ``out=`` (``torch.sin(x, out=h)``), when on a sample it really changes the values of
  ``h`` and keeps its shape and dtype (``t_``, ``squeeze_``, ``detach_`` only change
  metadata; ``bitwise_not_`` does not run on floats);
- :data:`HAND`: writes that no single schema names: through a view (``h.T``,
  ``h.data``, ``torch.hsplit``...), through a module or function flag
  (``nn.ReLU(inplace=True)``, ``F.relu(h, True)``), augmented assignment and item
  stores, ``torch._foreach_*_``, batch-norm running statistics.

:func:`model_source` writes one model holding a broken or correct pair per spelling:
the side stream reads ``h`` (``# P:<name>``), then the main stream writes it with the
spelling (``# C:<name>``), waiting for the read only in the correct variant.
"""

from __future__ import annotations

import functools
import warnings

import attrs
import torch

__all__ = ["HAND", "Spelling", "model_source", "registry_spellings"]

# Spellings dynamo cannot capture in one graph (a graph break): the checker never sees them.
_UNCAPTURED = frozenset({"h.random_()"})


@attrs.frozen
class Spelling:
    write: str  # one statement writing ``h`` (``{m}``: this spelling's submodule attribute)
    module: str = ""  # the submodule it needs, built in ``__init__``
    read: str = "h"  # what the side stream reads


def _modules(**found: str) -> dict[str, Spelling]:
    return {name: Spelling("h = self.{m}(h)", module=module) for name, module in found.items()}


def _plain(prefix: str, found: dict[str, str]) -> dict[str, Spelling]:
    return {f"{prefix}_{name}": Spelling(code) for name, code in found.items()}


HAND: dict[str, Spelling] = {
    **_plain(
        "view",
        {
            "T": "h.T.add_(1)",
            "mT": "h.mT.mul_(2)",
            "mH": "h.mH.sub_(1)",
            "H": "h.H.add_(1)",
            "ravel": "h.ravel().add_(1)",
            "view": "h.view(-1).add_(1)",
            "flatten": "h.flatten().add_(1)",
            "reshape": "h.reshape(12).add_(1)",
            "atleast_2d": "torch.atleast_2d(h).add_(1)",
            "atleast_3d": "torch.atleast_3d(h).add_(1)",
            "hsplit": "torch.hsplit(h, 2)[0].add_(1)",
            "vsplit": "torch.vsplit(h, 3)[1].mul_(2)",
            "chunk": "h.chunk(2, dim=1)[1].mul_(2)",
            "unbind": "h.unbind(0)[0].zero_()",
            "narrow": "h.narrow(1, 0, 2).add_(1)",
            "diagonal": "h.diagonal().add_(1)",
            "unsqueeze": "h.unsqueeze(0).add_(1)",
            "permute": "h.permute(1, 0).add_(1)",
            "swapaxes": "h.swapaxes(0, 1).add_(1)",
            "broadcast_to": "torch.broadcast_to(h, (3, 4)).add_(1)",
            "expand_as": "h.expand_as(h).add_(1)",
            "data": "h.data.add_(1)",
            "data_item": "h.data[0] = 1.0",
            "detach": "h.detach().zero_()",
            "index": "h[0].add_(1)",
            "slice": "h[:, 1:].mul_(2)",
            "step": "h[..., ::2].zero_()",
            "view_as": "h.view_as(h).add_(1)",
            "unflatten": "h.unflatten(1, (2, 2)).add_(1)",
            "movedim": "h.movedim(0, 1).add_(1)",
            "select": "h.select(0, 1).fill_(3)",
            "split": "h.split(2, dim=1)[0].add_(1)",
            "as_strided": "h.as_strided((2,), (1,)).add_(1)",
            "to_same_dtype": "h.to(torch.float32).add_(1)",
            "contiguous": "h.contiguous().add_(1)",
            "float": "h.float().add_(1)",
            "real": "h.real.add_(1)",
        },
    ),
    **_plain(
        "store",
        {
            "item": "h[0] = 0.0",
            "column_add": "h[:, 1] += 1",
            "mask": "h[x > 0] = 0.0",
            "masked_fill_": "h.masked_fill_(x > 0, 0.0)",
            "iadd": "h += 1",
            "imul": "h *= x",
            "isub": "h -= x",
            "itruediv": "h /= 2",
            "copy_": "h.copy_(x)",
            "init_zeros_": "torch.nn.init.zeros_(h)",
        },
    ),
    **_plain(
        "call",
        {
            "F_relu_positional": "F.relu(h, True)",
            "F_relu_": "F.relu_(h)",
            "F_leaky_relu": "F.leaky_relu(h, 0.1, True)",
            "F_elu_": "F.elu_(h)",
            "F_hardtanh_": "F.hardtanh_(h)",
            "F_dropout": "F.dropout(h, 0.5, True, True)",
            "F_threshold_": "F.threshold_(h, 0.0, 1.0)",
            "torch_relu_": "torch.relu_(h)",
            "foreach_add_": "torch._foreach_add_([h, other], 1.0)",
            "foreach_mul_": "torch._foreach_mul_([other, h], 2.0)",
            "foreach_zero_": "torch._foreach_zero_([h])",
            "out_add": "torch.add(x, 1, out=h)",
            "out_mul": "torch.mul(x, x, out=h)",
        },
    ),
    **_modules(
        ReLU="nn.ReLU(inplace=True)",
        ReLU6="nn.ReLU6(inplace=True)",
        LeakyReLU="nn.LeakyReLU(inplace=True)",
        ELU="nn.ELU(inplace=True)",
        CELU="nn.CELU(inplace=True)",
        SELU="nn.SELU(inplace=True)",
        Hardtanh="nn.Hardtanh(inplace=True)",
        SiLU="nn.SiLU(inplace=True)",
        Mish="nn.Mish(inplace=True)",
        Hardswish="nn.Hardswish(inplace=True)",
        Hardsigmoid="nn.Hardsigmoid(inplace=True)",
        Threshold="nn.Threshold(0.1, 0.0, inplace=True)",
        Dropout="nn.Dropout(inplace=True)",
        Dropout1d="nn.Dropout1d(inplace=True)",
        RReLU="nn.RReLU(inplace=True)",
    ),
    "module_batch_norm_running_mean": Spelling("y2 = self.{m}(h)", "nn.BatchNorm1d(4)", "self.{m}.running_mean"),
    "module_batch_norm_running_var": Spelling("y2 = self.{m}(h)", "nn.BatchNorm1d(4)", "self.{m}.running_var"),
    "module_batch_norm_count": Spelling("y2 = self.{m}(h)", "nn.BatchNorm1d(4)", "self.{m}.num_batches_tracked"),
}


def _sample() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)


def _changes(write: str) -> bool:
    """``write`` runs eagerly on a sample, keeps ``h``'s shape and dtype, and changes its values."""
    x, h = _sample()
    before = h.clone()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(write, {"torch": torch, "x": x, "h": h, "other": x.clone()})  # noqa: S102 - our own generated line
    except Exception:  # noqa: BLE001 - an op that does not take these arguments has no spelling here
        return False
    return h.shape == before.shape and h.dtype == before.dtype and not torch.equal(h, before)


def _spelling(schema: torch._C.FunctionSchema) -> str | None:
    """How Python writes ``h`` with this overload, when it can (a method, or ``out=``)."""
    name, arguments = schema.name.removeprefix("aten::"), schema.arguments
    if not arguments or arguments[0].name != "self" or name.startswith("_"):
        return None
    needed = [a for a in arguments[1:] if not a.has_default_value() and a.name != "out"]
    written = [a.name for a in arguments if a.alias_info is not None and a.alias_info.is_write]
    if written == ["self"] and hasattr(torch.Tensor, name) and len(needed) <= 1:
        if not needed or (str(needed[0].type) == "Tensor" and not needed[0].kwarg_only):
            return f"h.{name}({'other' if needed else ''})"
    if written == ["out"] and not needed and hasattr(torch, name):
        return f"torch.{name}(x, out=h)"
    return None


@functools.cache
def registry_spellings() -> dict[str, Spelling]:
    """Every registry op with a write annotation and a method or ``out=`` spelling that writes ``h``'s values."""
    found = {}
    for schema in torch._C._jit_get_all_schemas():
        write = _spelling(schema) if schema.name.startswith("aten::") else None
        if write and write not in found.values() and write not in _UNCAPTURED:
            if _changes(write):
                found[f"registry_{write.split('(')[0].replace('.', '_')}{'_out' if 'out=' in write else ''}"] = write
    return {name: Spelling(write) for name, write in sorted(found.items())}


_HEAD = """import torch
import torch.nn.functional as F
from torch import nn

from npudsl import runtime


class Model(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed
"""
_SEGMENT = """        h = x * 1 + 0.25
        other = x * 2
        runtime.record("fork{k}")
        with runtime.stream("side"):
            runtime.wait("fork{k}")
            y = {read} * 2  # P:{name}
            runtime.record("read{k}")
        if self.fixed:
            runtime.wait("read{k}")
        {write}  # C:{name}
        runtime.wait("read{k}")
        total = total + y.sum() + h.sum() + other.sum()
"""


def model_source(spellings: dict[str, Spelling]) -> str:
    """A module with ``Model(fixed)``: one pair per spelling, in order."""
    lines = [_HEAD]
    lines += [f"        self.m{k} = {s.module}\n" for k, s in enumerate(spellings.values()) if s.module]
    lines.append("\n    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        total = x.sum() * 0\n")
    for k, (name, s) in enumerate(spellings.items()):
        lines.append(_SEGMENT.format(k=k, name=name, read=s.read.format(m=f"m{k}"), write=s.write.format(m=f"m{k}")))
    lines.append("        return total\n")
    return "".join(lines)
