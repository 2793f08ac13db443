"""What a torch function's or a torch_npu op's result may be of its arguments, read from the tables alone (no body
is read): an op writing ``self`` or returning a view of it (its ATen schema), one called with ``inplace=True``,
an op whose kernel hands back some arguments (``foreign_writes.foreign_results``); every argument where the tables
do not know the op (``torch.distributed.all_reduce``, a torch_npu op the table lacks). ``result_aliases.py`` asks it
for every call it names through the module's imports.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.aten_forms import aten_function
from codegen.lower.flow.foreign_writes import every_argument, foreign_results, npu_op
from codegen.lower.flow.npu_schema import written_params
from codegen.lower.flow.schema import aliases_self, writes_self
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Held", "known_results"]

Held = list[tuple[int | None, frozenset[str]]]  # (the element of a returned tuple, None: the whole; names held)


def known_results(call: ast.Call, dotted: tuple[str, ...]) -> Held:
    """A torch function's or torch_npu op's result, by its tables: every argument where they do not know it."""
    npu = npu_op(dotted)
    if npu is not None and written_params(*npu) is None:
        return [(None, every_argument(call))]  # an op the table lacks, or whose kernel writes what nothing declares
    if npu is None and writes_self(dotted[-1]) is None:
        return [(None, every_argument(call))]  # ``torch.distributed.all_reduce``, ``torch.ops.vllm.<op>``
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("self", "input")), None)
    inplace = any(k.arg == "inplace" and not _false(k.value) for k in call.keywords)
    if npu is None and first is not None and (inplace or aliases_self(aten_function(dotted) or "")):
        return [(None, alias_sources(first))]
    return [(at, alias_sources(arg)) for at, arg in foreign_results(call, dotted)]


def _false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not node.value
