"""NPD302: two core limits on different streams add up to more cores than the device has (seed 004).

Two ``core_limit``-ed functions of one module on different streams are paired
when their calls may run at once by the schedule the module is transformed with
(:mod:`codegen.check.rules.core_overlap`): a call of one may be issued while a
call of the other is still pending. When any two concurrent streams together
may take more than every core, collectives on several cards can deadlock.
Counts given as dotted names are read at call time: a pair is only compared on
the kind of core (cube, vector) whose two counts are both known.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.core_overlap import may_overlap
from codegen.check.rules.core_range import out_of_range
from codegen.check.rules.scope import stream_of, where
from codegen.frontend.ir import CoreLimit, StreamFunction
from npudsl import codes
from npudsl.devices import Device

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    limited = [
        fn for fn in ctx.ir.functions if fn.core_limit is not None and not out_of_range(fn.core_limit, ctx.device)
    ]
    for i, fn in enumerate(limited):
        other = next((o for o in limited[:i] if _paired(o, fn, ctx)), None)
        if other is not None:
            yield _finding(fn, other, ctx.device)


def _paired(other: StreamFunction, fn: StreamFunction, ctx: Context) -> bool:
    """Different streams, too many cores together, and calls that may run at once (asked last: it plans)."""
    return stream_of(other) != stream_of(fn) and _too_many(other, fn, ctx.device) and may_overlap(ctx, other, fn)


def _limit(fn: StreamFunction) -> CoreLimit:
    assert fn.core_limit is not None
    return fn.core_limit


def _too_many(a: StreamFunction, b: StreamFunction, device: Device) -> bool:
    first, second = _limit(a), _limit(b)
    return _over(first.aicore, second.aicore, device.aic) or _over(first.vector, second.vector, device.aiv)


def _over(mine: int | str, theirs: int | str, cores: int) -> bool:
    return isinstance(mine, int) and isinstance(theirs, int) and mine + theirs > cores


def _sum(mine: int | str, theirs: int | str) -> str:
    return str(mine + theirs) if isinstance(mine, int) and isinstance(theirs, int) else f"{mine} + {theirs}"


def _finding(fn: StreamFunction, other: StreamFunction, device: Device) -> Finding:
    mine, theirs = _limit(fn), _limit(other)
    return Finding(
        loc=mine.loc,
        message=f'stream "{stream_of(fn)}" ({fn.qualname}: {mine.aicore}/{mine.vector}) and stream '
        f'"{stream_of(other)}" ({where(other)}: {theirs.aicore}/{theirs.vector}) may run concurrently '
        f"and together ask for {_sum(mine.aicore, theirs.aicore)} cube / "
        f"{_sum(mine.vector, theirs.vector)} vector "
        f"cores; {device.describe()}",
        hint=f"any two concurrent streams must fit the device together: lower the limits so that they add up "
        f"to at most {device.aic} cube and {device.aiv} vector cores",
    )


RULE = Rule(code=codes.CORE_SUM, find=_find)
