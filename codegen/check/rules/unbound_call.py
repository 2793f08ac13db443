"""NPD501 (warning): a stream call whose result is used at once, so the side stream overlaps nothing there.

The join waits just before the first use of the result; when the call is not
a plain statement (``x = self.f(...)``, ``a, b = ...``, ``xs[i] = ...`` into a list or dict only the caller
reaches, or a bare call), the use is the call itself: the call then runs on its caller's stream. So does a bound
call that reads tensors the caller left on its module's state through a local (``unkept_state.py``), or on an object
it changes and gives to a parameter annotated with a class the run cannot name (``given_changed.py``): no keep
reaches them.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.frontend.ir import Loc
from codegen.index.info import CallInfo, RunIndex
from codegen.index.per_index import per_index
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for call, loc, tag in _unbound_calls(ctx.index).get(ctx.ir.module_name, ()):
        spelled = call.spelled
        if call.unkept:
            yield Finding(
                loc=loc,
                message=f"{spelled} in {call.caller} reads tensors its caller left on an object it changes, so it "
                f'runs on the caller\'s stream and stream "{tag}" overlaps nothing here',
                hint="pass those tensors as arguments: they are then kept alive for the stream",
            )
            continue
        yield Finding(
            loc=loc,
            message=f'the result of {spelled} in {call.caller} is used at once, so stream "{tag}" overlaps '
            "nothing here",
            hint=f"bind it first (`out = {spelled}`) and use it later; the join then waits just before the first use",
        )


@per_index
def _unbound_calls(index: RunIndex) -> dict[str, list[tuple[CallInfo, Loc, str]]]:
    """Module -> (call, its position, its callee's stream) for each positioned call of the run that is not a
    plain statement, in the index's order."""
    found: dict[str, list[tuple[CallInfo, Loc, str]]] = {}
    for key, calls in index.calls.items():
        tag = index.callees[key].tag
        for call in calls:
            if not call.bindable and call.loc is not None:
                found.setdefault(call.module, []).append((call, call.loc, tag))
    return found


RULE = Rule(code=codes.USED_AT_ONCE, find=_find)
