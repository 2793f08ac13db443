"""Stage 5: say what the plan does: what overlaps with what, where the decorators go, the predicted saving."""

from __future__ import annotations

from collections.abc import Callable

from npudsl.suggest.dag import Unit
from npudsl.suggest.explain import candidates
from npudsl.suggest.plan import Move
from npudsl.suggest.run import Suggestion

__all__ = ["explanation", "report", "summary"]


def _beside(move: Move, units: tuple[Unit, ...]) -> str:
    """The sibling calls the main stream runs while the first call of ``move`` is on its stream."""
    first = move.units[0]
    fork = move.hoist.forks[0] if move.hoist else first.fork
    names = [
        u.instance.site.callee
        for u in units
        if u.parent == first.parent
        and u is not first
        and u.instance.depth == first.instance.depth
        and fork <= u.fork < (first.join or 0)
    ]
    return ", ".join(dict.fromkeys(names)) or f"the ops of {move.site.caller} that follow the call"


def _where(move: Move, suggestion: Suggestion) -> str:
    decorate = suggestion.edit.decorate
    owner = move.site.callee.split(".")[0]
    if move.site.submodule and decorate.get(owner) == move.stream:
        return f'@on_stream("{move.stream}") on class {owner}'
    if decorate.get(move.site.callee) == move.stream:
        return f'@on_stream("{move.stream}") on {move.site.callee}'
    wrap = next(w for w in suggestion.edit.wraps if w.site == move.site)
    return (
        f'@on_stream("{move.stream}") on a new method {move.site.caller.split(".")[0]}.{wrap.name}, which '
        f"line {suggestion.line(move.site.line)} now calls instead of self.{wrap.attribute}"
    )


def _moved(move: Move, line: Callable[[int], int]) -> list[str]:
    hoist = move.hoist
    if hoist is None:
        return []
    where = (
        f"after line {line(hoist.after)}"
        if hoist.after is not None
        else f"the top of its block (line {line(hoist.before)})"
    )
    first, *more = hoist.code.splitlines()
    return [f"    moved up from line {line(hoist.line)} to {where}: {first}{' ...' * bool(more)}"]


def summary(suggestion: Suggestion) -> str:
    """One line: the predicted saving, or that nothing is worth moving."""
    plan = suggestion.plan
    if not plan.moves:
        return (
            f"{suggestion.path}: nothing worth moving to a side stream in {suggestion.model} "
            f"({plan.before.serial:.4g} us on one stream)"
        )
    s = plan.schedule
    return (
        f"{suggestion.path}: {len(plan.moves)} call site(s) to {len(s.streams) - 1} side stream(s): "
        f"{s.makespan:.4g} us vs {s.serial:.4g} us on one stream: predicted saving {100 * s.saving:.1f}%"
    )


def report(suggestion: Suggestion) -> str:
    """The report ``npudsl suggest`` prints without ``--diff`` or ``--in-place``."""
    plan = suggestion.plan
    lines = [
        f"{suggestion.path}: {suggestion.model}",
        f"  {suggestion.note}",
        f"  per-sync cost {plan.sync_cost:g} us (a fork and a join per call moved)",
    ]
    for move in plan.moves:
        calls = len(move.units)
        lines += [
            f"  {move.site.callee} (called at line {suggestion.line(move.site.line)} of {move.site.caller}, "
            f'{calls} call{"s" * (calls != 1)}) on stream "{move.stream}"',
            f"    beside: {_beside(move, suggestion.units)}",
            f"    saves {move.gain:.4g} us for {2 * calls} syncs ({2 * calls * plan.sync_cost:.4g} us)",
            f"    {_where(move, suggestion)}",
        ] + _moved(move, suggestion.line)
    lines.append(summary(suggestion).split(": ", 1)[1])
    return "\n".join(lines) + "\n"


def explanation(suggestion: Suggestion) -> str:
    """``--explain``: every call site considered, moved or not, and why."""
    lines = [f"{suggestion.path}: the call sites considered in {suggestion.model}"]
    for found in candidates(suggestion.plan, suggestion.units):
        calls = f"{found.calls} call{'s' * (found.calls != 1)}"
        lines.append(
            f"  {'moved' if found.moved else 'kept '} {found.site.callee} (line "
            f"{suggestion.line(found.site.line)} of {found.site.caller}, {calls}): {found.why}"
        )
    # a move up declined for an effect or a write (a plain data dependency is the kept line's own reason)
    lines += [f"  stopped {why}" for why in suggestion.declined if "binds or changes a name" not in why]
    return "\n".join(lines) + "\n"
