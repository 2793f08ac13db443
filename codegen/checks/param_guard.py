"""NPD503 (warning): an automatic stream function's ``when`` is rooted at one of its parameters.

The join at each call site reads the same guard, and a call site cannot see
the callee's parameters (``self`` is the exception: it becomes the receiver).
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.checks.base import Context, Finding, Rule
from codegen.diagnostics import Severity

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for fn in ctx.ir.functions:
        stream = fn.stream
        callee = ctx.index.callees.get(ctx.key(fn))
        if not fn.auto_sync or stream is None or stream.when is None or callee is None:
            continue
        root = stream.when.root
        if root != "self" and root in callee.params:
            yield Finding(
                loc=stream.loc,
                message=f'when="{stream.when.dotted}" on {fn.qualname} is rooted at its parameter "{root}", '
                        "which the call sites that join it cannot see",
                hint='root the guard at self (when="self.multistream") or at a module global '
                     '(when="config.MULTISTREAM")',
            )


RULE = Rule(code="NPD503", severity=Severity.WARNING, title="when rooted at a parameter", find=_find)
