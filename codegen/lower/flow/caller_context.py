"""What the planner reads of one caller besides its function and its planned calls.

The module's planning (:mod:`~codegen.lower.flow.callers`) makes one :class:`CallerContext` per caller; the
planner (:mod:`~codegen.lower.flow.planner`) and the lowering (:mod:`~codegen.lower.flow.wraps`) read it whole,
so a new fact about the caller is one field here, not a parameter threaded through both.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow.caller_facts import SiteEvents
from codegen.lower.flow.site_sync import Flags
from codegen.lower.flow.sites import Site
from codegen.lower.flow.tensors import Returns
from codegen.lower.plan import CurrentStream

__all__ = ["CallerContext"]


@attrs.frozen(kw_only=True)
class CallerContext:
    """What the planner reads of one caller besides its function and its planned calls (``callers.py``)."""

    current: CurrentStream  # how the caller names its own stream
    flags: Flags
    events: Callable[[Site], SiteEvents]
    tensors: frozenset[str] = frozenset()  # the caller's names that certainly hold a tensor
    barriers: frozenset[ast.stmt] = frozenset()  # statements that may do anything (calls the run cannot see)
    methods: frozenset[str] = frozenset()  # the caller's class's methods
    receiver: str | None = None  # the caller's ``self``
    free: Callable[[ast.stmt], bool] | None = None  # the statement issues work on no side stream
    aliases: dict[str, str] = attrs.Factory(dict)  # a local holding a guard's value -> that guard
    returns: Returns = attrs.Factory(dict)  # the callables whose result is never None (``none_facts.py``)
    returned: dict[ast.expr, dict[str, frozenset[str]]] = attrs.Factory(dict)  # ``returned_inputs.py``
