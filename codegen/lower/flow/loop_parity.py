"""A staging issued one iteration ahead records its join in the event of its iteration's parity, so the wait for
what the last iteration staged does not also wait for what this one just staged.

cann-recipes' LongCat-Flash layer loop stages layer ``i + 1``'s weights while layer ``i`` computes:
``w = self.stage(self.layers[0].qweight)`` before the loop, then in it ``if nxt is not None: w_next =
self.stage(nxt.qweight)``, work, ``h = layer(h, w)``, ``w = w_next``. With one join event, the wait for ``w`` stands
after the staging of ``w_next`` recorded that event again, so layer ``i`` waits for layer ``i + 1``'s staging too
(where no work separates the two, ``early.py`` waits before the new staging instead: this module then changes
nothing). Here the loop's call ``late`` records ``(J, J_2)[(i + 1) % 2]`` and the call before the loop, ``first``,
records ``J``: the value staged for iteration ``i`` is in slot ``i % 2``.

The analysis keeps the two apart (:func:`iteration_start`): as each iteration starts, what ``late`` left pending joins
``first``'s entry, which so stands for every call issued before the iteration (``first`` itself, ``late`` in
earlier iterations); ``late``'s entry holds this iteration's call only. A wait for ``first`` in the loop waits for
slot ``i % 2``: its latest record is ``late``'s of iteration ``i - 1`` (which ran: only the last iteration may skip
it), or ``first``'s when ``i == 0``, on the same stream after every call the entry stands for. A wait for ``late``
in the loop waits for ``(i + 1) % 2``, this iteration's record (where the iteration skipped the call, its flag says
whether a record was ever made; the entry then holds nothing pending). After the loop both wait for the last
record: ``n % 2`` when ``late`` runs in every iteration (``0``, ``first``'s, when none ran), ``(n - 1) % 2`` when the
last skips it, where the loop surely runs an iteration, else ``max(n - 1, 0) % 2``: ``first``'s slot where no
iteration ran, the last record's where some did (``for i in range(n)`` with ``n = len(self.layers)``: nothing
before the loop shows ``n >= 1``).

Which calls qualify, and the premises that make the slots exact: ``parity_loops.py``. A wait for ``first`` after
``late``'s statement keeps none of the names ``late`` binds (``trim``): where it ran they hold its new result, not
joined there; the rule takes only calls whose names are read by plain copies (``w = w_next``), whose keeps serve.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping

import attrs

from codegen.index.walked import walked
from codegen.lower.flow.compound_binds import unbound
from codegen.lower.flow.state import Pending, State
from codegen.lower.flow.transfer import Join, Relay, Step
from codegen.lower.plan import Anchor

__all__ = ["Parity", "iteration_start"]


@attrs.frozen(kw_only=True)
class Parity:
    """The call ``late`` in ``loop`` (``for index ...``, ``count`` iterations) and its callee's call ``first`` before
    it (site indexes); ``skipped``: the last iteration skips ``late``; ``entered``: the loop surely runs once;
    ``stable``: ``count`` means the same after the loop; ``late_end``: the last line of ``late``'s statement."""

    first: int
    late: int
    loop: ast.For
    index: str
    count: str
    skipped: bool
    entered: bool
    stable: bool
    late_end: int
    late_names: frozenset[str]  # the names ``late``'s statement binds to its result

    def records(self, site: int) -> str:
        """The slot ``site``'s call records ("": its callee's one event)."""
        return f"({self.index} + 1) % 2" if site == self.late else ""

    def waits(self, site: int, anchor: Anchor) -> str:
        """The slot a wait for ``site`` at ``anchor`` picks ("": the one event, before the loop)."""
        where = self._where(anchor)
        if site not in (self.first, self.late) or where == "before":
            return ""
        if where == "in":
            return f"{self.index} % 2" if site == self.first else f"({self.index} + 1) % 2"
        if not self.skipped:
            return f"{self.count} % 2"
        return f"({self.count} - 1) % 2" if self.entered else f"max({self.count} - 1, 0) % 2"

    def kept(self, steps: Mapping[Anchor, list[Step]]) -> bool:
        """The slots are needed (``needed``) and every wait can pick one (not ``invalid``)."""
        return self.needed(steps) and not self.invalid(steps)

    def trim(self, steps: dict[Anchor, list[Step]]) -> None:
        """The joins of ``first`` in the loop after ``late``'s statement keep none of the names that statement binds:
        where it ran they hold its new result, not yet joined; where it did not (the last iteration), they are only
        copied (``copied``), so the copies' keeps serve."""
        for anchor, found in steps.items():
            if self._where(anchor) == "in" and _line(anchor) > self.late_end:
                found[:] = [self._trimmed(step) for step in found]

    def _trimmed(self, step: Step) -> Step:
        if not isinstance(step, Join) or step.site != self.first:
            return step
        return attrs.evolve(step, names=step.names - self.late_names)

    def needed(self, steps: Mapping[Anchor, list[Step]]) -> bool:
        """Some wait for ``first`` stands in the loop after ``late``'s statement: with one event, it would wait for
        this iteration's call too."""
        return any(
            isinstance(step, Join)
            and step.site == self.first
            and self._where(anchor) == "in"
            and _line(anchor) > self.late_end
            for anchor, found in steps.items()
            for step in found
        )

    def invalid(self, steps: Mapping[Anchor, list[Step]]) -> bool:
        """A relay of either call, or a wait after the loop whose slot cannot be spelled there."""
        ours = {self.first, self.late}
        unspelled = not self.stable
        for anchor, found in steps.items():
            for step in found:
                if isinstance(step, Relay) and {step.site, step.to} & ours:
                    return True
                if step.site in ours and unspelled and self._where(anchor) == "past":
                    return True
        return False

    def stands_for(self, site: int) -> tuple[int, ...]:
        """The calls whose pending work the analysis's entry of ``site`` may hold: ``first``'s holds ``late``'s of
        earlier iterations."""
        return (site, self.late) if site == self.first else (site,)

    def recorders(self, waited: Collection[int]) -> set[int]:
        """Both calls' records are read wherever either is waited for (a wait's slot may be the other's record)."""
        ours = {self.first, self.late}
        return ours if ours & set(waited) else set()

    def _where(self, anchor: Anchor) -> str:
        """Where ``anchor`` stands: "before" the loop, "in" its body, or "past" it."""
        kind, node, _ = anchor
        if node is self.loop:
            return "in" if kind == "end" else "before"
        if any(node is n for n in walked(self.loop)):
            return "in"
        return "before" if _line(anchor) < self.loop.lineno else "past"


def iteration_start(relations: object, loop: ast.For | ast.AsyncFor, state: State) -> State:
    """``state`` as an iteration of ``loop`` starts: the loop's target holds nothing it held
    (``compound_binds.py``), and where ``relations`` (the caller's) hold a staging's parity, what ``late`` left
    pending joins ``first``'s entry, and ``late`` has forked nowhere in this iteration yet."""
    state = unbound(state, [loop.target])
    parity: Parity | None = getattr(relations, "parity", None)
    if parity is None or loop is not parity.loop:
        return state
    late = next((p for p in state if p.site == parity.late), None)
    if late is None:
        return state
    rest = [p for p in state if p.site not in (parity.first, parity.late)]
    if not late.pending:
        return tuple(sorted([*rest, *(p for p in state if p.site == parity.first)], key=lambda p: p.site))
    first = next((p for p in state if p.site == parity.first), None)
    entry = _holding(parity.first, late, first)
    return tuple(sorted([*rest, entry], key=lambda p: p.site))


def _holding(site: int, late: Pending, first: Pending | None) -> Pending:
    """``first``'s entry holding what ``late`` left pending too (``first`` forked wherever the loop runs)."""
    held = first if first is not None and first.pending else None
    return Pending(
        site=site,
        forked=first.forked if first is not None else late.forked,
        names=late.names | (held.names if held else frozenset()),
        covers=(late.covers | (held.covers if held else frozenset())) - {site, late.site},
        inputs=late.inputs | (held.inputs if held else frozenset()),
        unsure=late.unsure | (held.unsure if held else frozenset()),
        where=late.where & held.where if held else late.where,
    )


def _line(anchor: Anchor) -> float:
    """Where ``anchor`` stands, by line: before its statement, or just past the last statement of its block."""
    kind, node, field = anchor
    if kind == "end":
        block = getattr(node, field, None) or [node]
        return (block[-1].end_lineno or block[-1].lineno) + 0.5
    return float(getattr(node, "lineno", 0))
