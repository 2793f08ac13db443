"""What a call of a torch layer writes of the tensors its caller hands it: ``self.act(h)`` with ``self.act =
nn.ReLU(inplace=True)`` writes ``h``, with ``nn.ReLU()`` nothing (``torch_layer_writes_table.py``, built by
``torch_layer_writes_build.py`` from torch's sources).

The layer's constructor call (``init_builds.built_call``: the one store of the attribute in ``__init__``)
says which conditions hold; where it cannot be read (no such call, a ``*``/``**`` argument), every write is taken
to happen. A class the table does not list writes none of its inputs through ``torch.nn.functional``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence

from codegen.lower.flow.call_arguments import passed_argument
from codegen.lower.flow.constructor_args import given_flag
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["torch_layer_written"]


def torch_layer_written(call: ast.Call, dotted: Sequence[str], built: ast.Call | None) -> frozenset[str] | None:
    """The caller's names whose memory ``call`` of the torch layer class ``dotted`` (``("torch", "nn", "ReLU")``)
    built by ``built`` (None: not known) may write in place; None for a class the table does not list."""
    rows = _table().get(dotted[-1]) if tuple(dotted[:2]) == ("torch", "nn") else None
    if rows is None:
        return None
    written: set[str] = set()
    for param, position, needs in rows:
        if needs is None or built is None or given_flag(built, *needs):
            written |= alias_sources(passed_argument(call, param, position))
    return frozenset(written)


@functools.cache
def _table() -> dict[str, list[tuple[str, int, tuple[str, int, bool] | None]]]:
    """class -> (forward parameter, its position, the constructor parameter that must be given, or None)."""
    from codegen.lower.flow.torch_layer_writes_table import WRITES

    found: dict[str, list[tuple[str, int, tuple[str, int, bool] | None]]] = {}
    for cls, row in WRITES.items():
        for entry in row.split():
            written, _, needs = entry.partition(":")
            param, _, position = written.partition("@")
            flag, _, at = needs.rstrip("=").partition("@")
            found.setdefault(cls, []).append(
                (param, int(position), (flag, int(at), needs.endswith("=")) if needs else None)
            )
    return found
