"""What the lowering of one caller reads before it decides anything: what the planner decided of it (its planned
calls, how each one's fork is read at its joins, the analysis), each call's events, and the caller's facts that no
decision changes.

The decisions (:mod:`~codegen.lower.flow.fork`, :mod:`~codegen.lower.flow.keep_alive`,
:mod:`~codegen.lower.flow.quiet`, :mod:`~codegen.lower.flow.fold`) take :class:`CallerFacts` instead of the whole
lowering, so each sees only what it reads.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.local_alias import guard_aliases
from codegen.lower.flow.object_state import ObjectState
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import in_loops, simple_statements, statement_blocks
from codegen.lower.flow.transfer import Relations, SiteView
from codegen.lower.plan import Cond, EventRef

if TYPE_CHECKING:
    from codegen.lower.flow.caller_context import CallerContext

__all__ = ["CallerFacts", "Narrowed", "Planned", "SiteEvents", "SiteSync", "any_may", "facts_of"]

_BLOCKS = ("body", "orelse", "finalbody")
_Function = ast.FunctionDef | ast.AsyncFunctionDef
Narrowed = Callable[[int], _Function | None]  # a site -> its caller as it runs where the site's guard holds


@attrs.frozen(kw_only=True)
class SiteEvents:
    """The fork and join events the caller's module defines for one planned call."""

    fork: EventRef
    join: EventRef


@attrs.frozen(kw_only=True)
class SiteSync:
    """How one site's fork is read at its joins."""

    cond: Cond | None  # the guard (or the flag) a must-join reads
    flag: str | None  # the local that says the call forked (set at the call)
    guard_text: str | None  # the guard's value as spelled at the call (after any bound argument)
    hoisted: tuple[tuple[int | str, str], ...]


@attrs.frozen(kw_only=True)
class Planned:
    """What the planner decided of one caller, for its lowering."""

    sites: list[Site]
    syncs: list[SiteSync]  # by site index
    result: Analysis
    relations: Relations
    splits: dict[ast.stmt, tuple[str, ast.expr]] = attrs.Factory(dict)  # statement -> (name, its first operand)
    narrowed: Narrowed | None = None  # the caller as it runs where a site's guard holds
    views: dict[ast.stmt, SiteView] = attrs.Factory(dict)  # each call as the analysis saw it (``planner._view``)
    groups: dict[str, frozenset[str]] = attrs.Factory(dict)  # names that may share memory (binding_aliases.py)


@attrs.frozen(kw_only=True)
class CallerFacts:
    """One caller, as the lowering's decisions read it: the planner's decisions and the caller's own facts."""

    planned: Planned
    blocks: dict[ast.stmt, list[ast.stmt]]  # each statement's block (``statement_blocks``)
    receiver: str | None = None  # the caller's ``self`` (its state lives on: never kept alive)
    tensors: frozenset[str] = frozenset()  # the caller's names that certainly hold a tensor
    free: Callable[[ast.stmt], bool] | None = None  # the statement issues work on no side stream (stream_free.py)
    simple: list[ast.stmt] = attrs.Factory(list)  # the function's statements that are not compound
    looped: set[ast.stmt] = attrs.Factory(set)  # the statements inside a loop of the function
    guard_aliases: dict[str, str] = attrs.Factory(dict)  # a local holding a guard's value -> that guard
    returned: dict[ast.expr, dict[str, frozenset[str]]] = attrs.Factory(dict)  # returned_inputs.py, by call
    held_params: frozenset[str] = frozenset()  # parameters every caller reads after the call (held_params.py)
    object_state: ObjectState | None = None  # what calls through the caller's object change (object_state.py)

    @property
    def sites(self) -> list[Site]:
        return self.planned.sites

    @property
    def syncs(self) -> list[SiteSync]:
        return self.planned.syncs

    @property
    def result(self) -> Analysis:
        return self.planned.result

    @property
    def relations(self) -> Relations:
        return self.planned.relations

    def block(self, stmt: ast.stmt) -> list[ast.stmt]:
        return self.blocks.get(stmt, [stmt])

    def owner(self, stmt: ast.stmt) -> ast.stmt | None:
        """The compound statement whose ``body``, ``orelse`` or ``finalbody`` holds ``stmt`` (None: the
        function's body, or a handler's or a case's)."""
        block = self.blocks.get(stmt)
        return self._owners.get(id(block)) if block is not None else None

    @functools.cached_property
    def _owners(self) -> dict[int, ast.stmt]:
        """Each block of a compound statement (by identity) -> that statement: one look at each statement."""
        found: dict[int, ast.stmt] = {}
        for stmt in self.blocks:
            for field in _BLOCKS:
                block = getattr(stmt, field, None)
                if isinstance(block, list):
                    found.setdefault(id(block), stmt)
        return found

    def same_guard(self, first: str | None, second: str | None) -> bool:
        """Two guards, as spelled at their calls, read one value (spelled alike, or through a local holding it)."""
        return (
            first == second
            or (first is not None and self.guard_aliases.get(first, first) == second)
            or (second is not None and self.guard_aliases.get(second, second) == first)
        )


def any_may(result: Analysis, site: int) -> bool:
    return any(s.site == site and s.may for found in result.steps.values() for s in found)


def facts_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, planned: Planned, context: CallerContext) -> CallerFacts:
    """What the lowering of one caller reads: ``planned``, the planner's decisions, with the caller's blocks and
    what ``context`` says of it."""
    return CallerFacts(
        planned=planned,
        blocks=statement_blocks(fn),
        receiver=context.receiver,
        tensors=context.tensors,
        free=context.free,
        simple=simple_statements(fn),
        looped=in_loops(fn),
        guard_aliases=guard_aliases(fn),
        returned=context.returned,
        held_params=context.held_params,
        object_state=context.object_state,
    )
