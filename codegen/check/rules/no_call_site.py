"""NPD502 (warning): an automatic stream function with no visible call site runs on its caller's stream.

The call site switches streams, forks and joins when a plain statement binds (or drops) its result
and it resolves to the callee (see ``codegen.lower.flow.callees``): ``self.<method>(...)``,
``self.<submodule>(...)``, a module-level function here or imported, ``Class(...)(x)``.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for fn in ctx.ir.functions:
        if not fn.auto_sync or fn.stream is None or ctx.index.calls.get(ctx.key(fn)):
            continue
        yield Finding(
            loc=fn.stream.loc,
            message=f"{fn.qualname} has no visible call site, so it runs on its caller's stream, not on "
            f'"{fn.stream.tag}", and overlaps nothing',
            hint="bind its result in a caller of this run (out = self.name(...)), as a method of the same class, a "
            'submodule, or an imported function; or place the waits yourself with sync="manual"',
        )


RULE = Rule(code=codes.NO_CALL_SITE, find=_find)
