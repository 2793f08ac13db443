"""NPD501 (warning): a stream call whose result is used at once, so the side stream overlaps nothing there.

The join waits just before the first use of the result; when the call is not
a plain statement (``x = self.f(...)``, ``a, b = ...`` or a bare call), the use
is the call itself: the call then runs on its caller's stream.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for key, calls in ctx.index.calls.items():
        tag = ctx.index.callees[key].tag
        for call in calls:
            if call.module != ctx.ir.module_name or call.bindable or call.loc is None:
                continue
            spelled = call.spelled
            yield Finding(
                loc=call.loc,
                message=f'the result of {spelled} in {call.caller} is used at once, so stream "{tag}" overlaps '
                "nothing here",
                hint=f"bind it first (`out = {spelled}`) and use it later; the join then waits just before the "
                "first use",
            )


RULE = Rule(code=codes.USED_AT_ONCE, find=_find)
