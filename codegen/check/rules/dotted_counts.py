"""NPD510 (warning): a ``core_limit`` count is a dotted name, read at call time, so ``check`` cannot verify it.

The range (NPD301) and the sum of concurrent limits (NPD302) are checked only
for counts written as numbers; this says which counts were left out.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for fn in ctx.ir.functions:
        limit = fn.core_limit
        if limit is None or limit.known:
            continue
        read = [
            f'{kind} = "{count}"'
            for kind, count in (("aicore", limit.aicore), ("vector", limit.vector))
            if isinstance(count, str)
        ]
        yield Finding(
            loc=limit.loc,
            message=f"core_limit on {fn.qualname} reads {' and '.join(read)} when it is called; npudsl check "
            f"cannot verify {'it' if len(read) == 1 else 'them'} against {ctx.device.describe()} "
            f"({codes.CORE_RANGE}, {codes.CORE_SUM} skip unknown counts)",
            hint="make sure the values are in 1..cores of the device and that concurrent streams fit together; "
            "or write the counts as numbers",
        )


RULE = Rule(code=codes.DOTTED_COUNTS, find=_find)
