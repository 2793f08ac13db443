"""NPD509 (warning): a call that looks like a stream method's, on an object whose type the caller does not say.

``experts.gate_up_phase(x)`` where ``experts`` is a parameter or local with no annotation, and
``gate_up_phase`` is the name of exactly one automatic stream method of the run: the call may well be
that method's, but nothing says so, so it runs on its caller's stream, as written (safe,
no overlap). Annotating the parameter (``experts: SharedMLP``) lets the caller join it later.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.info import RunIndex
from codegen.index.per_index import per_index
from codegen.index.walked import walked_of
from codegen.lower.flow.own_calls import aware_call
from npudsl import codes

__all__ = ["RULE"]


@per_index
def _methods(index: RunIndex) -> tuple[dict[str, str], re.Pattern[str] | None]:
    """Method name -> ``Class.method`` for the names that exactly one automatic stream method has; and a pattern
    that finds any of the names in a text (None: there is none)."""
    found: dict[str, list[str]] = {}
    for key, callee in index.callees.items():
        qualname = key.split(":", 1)[1]
        if "." in qualname and callee.auto and not callee.class_level:
            found.setdefault(qualname.rsplit(".", 1)[1], []).append(qualname)
    methods = {name: keys[0] for name, keys in found.items() if len(keys) == 1}
    return methods, re.compile("|".join(map(re.escape, methods))) if methods else None


def _find(ctx: Context) -> Iterator[Finding]:
    if ctx.tree is None or ctx.source is None:
        return
    methods, spelled = _methods(ctx.index)
    if spelled is None or spelled.search(ctx.source) is None:
        return  # a call of one must spell its name
    positions = Positions(ctx.source)
    for _, fn in scan.all_functions(ctx.tree):
        untyped = {a.arg for a in walked_of(fn.args, ast.arg) if a.annotation is None} - {"self"}
        if not untyped:
            continue
        for stmt in scan.statements_breadth_first(fn):  # the statements of ``ast.walk``, in its order
            call = aware_call(stmt) if isinstance(stmt, ast.stmt) else None
            func = call.func if call is not None else None
            if (
                call is not None
                and isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in untyped
                and func.attr in methods
            ):
                owner = methods[func.attr].split(".")[0]
                yield Finding(
                    loc=positions.loc(call),
                    message=f"{func.value.id}.{func.attr}(...) may call the stream method "
                    f"{methods[func.attr]}, but nothing says {func.value.id} is a {owner}: the "
                    "call runs on its caller's stream and overlaps nothing here",
                    hint=f"annotate the parameter ({func.value.id}: {owner}) so this call can join later",
                )


RULE = Rule(code=codes.UNTYPED_RECEIVER, find=_find)
