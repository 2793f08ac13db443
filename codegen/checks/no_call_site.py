"""NPD502 (warning): an automatic stream function with no visible call site joins itself and overlaps nothing.

Call sites are visible when they are ``self.<method>(...)`` in the same class,
``self.<submodule>(...)`` of a decorated class in any file of the run, or a
call of a module-level stream function in its own module.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.checks.base import Context, Finding, Rule
from codegen.diagnostics import Severity

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for fn in ctx.ir.functions:
        if not fn.auto_sync or fn.stream is None or ctx.index.calls.get(ctx.key(fn)):
            continue
        yield Finding(
            loc=fn.stream.loc,
            message=f'{fn.qualname} has no visible call site, so it waits for stream "{fn.stream.tag}" before '
                    "it returns and overlaps nothing",
            hint="call it from a method of the same class (self.name(...)) or as a submodule, in a file of this "
                 'run; or place the waits yourself with sync="manual"',
        )


RULE = Rule(code="NPD502", severity=Severity.WARNING, title="stream function with no visible call site",
            find=_find)
