"""What the planner reads of one caller besides its function and its planned calls, and where each fact comes from.

The module's planning (:mod:`~codegen.lower.flow.callers`) makes one :class:`CallerContext` per caller with event
sync (:func:`event_context`); the planner (:mod:`~codegen.lower.flow.planner`) and the lowering
(:mod:`~codegen.lower.flow.wraps`) read it whole, so a new fact about the caller is one field here, not a parameter
threaded through both.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable

import attrs

from codegen.index.held_params import held_by_callers
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.caller_facts import SiteEvents
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.callsites import CallSite, find_calls
from codegen.lower.flow.distinct_items import distinct_lists
from codegen.lower.flow.event_fork import EventForks, event_forks
from codegen.lower.flow.held_where import held_where
from codegen.lower.flow.helper_writes import helper_writes
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.none_facts import never_none
from codegen.lower.flow.object_state import ObjectState, object_state
from codegen.lower.flow.own_joins import own_joins
from codegen.lower.flow.result_aliases import Pairs, result_aliases
from codegen.lower.flow.returned_inputs import returned_inputs
from codegen.lower.flow.returned_state import held_state
from codegen.lower.flow.sibling_fork import SiblingForks, sibling_forks
from codegen.lower.flow.site_sync import Flags
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state_writes import StateWrites, state_writes
from codegen.lower.flow.tensor_bindings import certain_tensors
from codegen.lower.flow.tensors import Returns
from codegen.lower.flow.uniform_guards import uniform_guards
from codegen.lower.plan import Cond, CurrentStream, EventRef

__all__ = ["CallerContext", "event_context"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class CallerContext:
    """What the planner reads of one caller besides its function and its planned calls (``callers.py``)."""

    current: CurrentStream  # how the caller names its own stream
    flags: Flags
    events: Callable[[Site], SiteEvents]
    own_joins: dict[int, int] = attrs.Factory(dict)  # calls with a join event of their own (``own_joins.py``)
    tensors: frozenset[str] = frozenset()  # the caller's names that certainly hold a tensor
    barriers: frozenset[ast.stmt] = frozenset()  # statements that may do anything (calls the run cannot see)
    methods: frozenset[str] = frozenset()  # the caller's class's methods
    receiver: str | None = None  # the caller's ``self``
    free: Callable[[ast.stmt], bool] | None = None  # the statement issues work on no side stream
    aliases: dict[str, str] = attrs.Factory(dict)  # a local holding a guard's value -> that guard
    returns: Returns = attrs.Factory(dict)  # the callables whose result is never None (``none_facts.py``)
    returned: dict[ast.expr, dict[str, frozenset[str]]] = attrs.Factory(dict)  # ``returned_inputs.py``
    held_state: dict[ast.expr, frozenset[str]] = attrs.Factory(dict)  # state keeps results hold (returned_state.py)
    helper_writes: dict[ast.stmt, frozenset[str]] = attrs.Factory(dict)  # ``helper_writes.py``
    held_params: frozenset[str] = frozenset()  # parameters every caller reads after the call (``held_params.py``)
    held_where: dict[str, str] = attrs.Factory(dict)  # ... where a test holds (``held_where.py``)
    object_state: ObjectState | None = None  # ``object_state.py``: what calls through its object change
    results: Pairs = attrs.Factory(list)  # names bound to an argument a call returns (``result_aliases.py``)
    event_forks: EventForks = attrs.Factory(EventForks)  # user events that may be calls' forks (``event_fork.py``)
    state_writes: Callable[[ast.stmt], frozenset[str]] = state_writes  # ``state_writes.py``
    uniform: dict[str, str] = attrs.Factory(dict)  # guards every layer of a loop holds equal (uniform_guards.py)
    slot_events: Callable[[Site], EventRef] | None = None  # a call's second join event (``item_slots.py``; events)
    sized: frozenset[str] = frozenset()  # its object's layer lists, of a length fixed after ``__init__`` (elements.py)
    distinct: frozenset[str] = frozenset()  # its locals holding lists of distinct objects (``distinct_items.py``)
    siblings: SiblingForks = attrs.Factory(SiblingForks)  # forks a sibling's fork serves (``sibling_fork.py``)


def event_context(
    module: CallerModule, qualname: str, fn: _Function, receiver: str | None, sites: list[Site]
) -> CallerContext:
    """The context of the caller ``fn`` (``qualname``) of ``module``, whose automatic calls are ``sites``."""
    returns = local_returns(module.tree, qualname, receiver)
    tensors = frozenset(certain_tensors(fn, method="." in qualname, returns=returns).values())
    found = find_calls(module.ir.module_name, module.tree, module.index)  # type: ignore[arg-type]  # searched once
    own = own_joins(fn, sites)
    helped = helper_writes(module.tree, qualname, fn, receiver, (module.index, module.ir.module_name))
    return CallerContext(
        current=_current(module, qualname),
        flags=module.flags(),
        events=module.site_events(own),
        own_joins=own,
        tensors=tensors,
        barriers=_barriers(found, module.index, qualname, fn),
        methods=_methods(module.tree, qualname),
        receiver=receiver,
        free=functools.partial(module.stream_free.statement, qualname=qualname),
        aliases=module.aliases(qualname.rpartition(".")[0], receiver, sites),
        returns=never_none(module.tree, qualname, receiver),
        returned=returned_inputs(module.tree, module.index, module.ir.module_name, module.ir.functions, sites),
        held_state=held_state(module.index, (module.ir.module_name, module.tree), fn, sites),
        helper_writes=helped,
        held_params=held_by_callers(module.index, (module.ir.module_name, module.tree), qualname, fn),
        held_where=held_where(module.index, (module.ir.module_name, module.tree), qualname, fn),
        object_state=_object_state(module, qualname, receiver),
        results=result_aliases(fn, module.tree, _scope(module, qualname, receiver)),
        event_forks=event_forks(module.ir, qualname, fn, receiver, sites),
        state_writes=_state_writes(module, qualname, fn, receiver, helped),
        uniform=uniform_guards(module.tree, module.index, module.ir.module_name, qualname, fn),
        siblings=sibling_forks(module, qualname, fn, receiver),
        distinct=distinct_lists(module.index, (module.ir.module_name, module.tree), qualname if receiver else None, fn),
        sized=frozenset(
            getattr(module.index, "elements", {}).get(f"{module.ir.module_name}:{qualname.rpartition('.')[0]}", {})
        ),
    )


def _state_writes(
    module: CallerModule, qualname: str, fn: _Function, receiver: str | None, helped: dict[ast.stmt, frozenset[str]]
) -> StateWrites:
    """What each statement of ``fn`` writes in place of objects' state (``state_writes.py``)."""
    return StateWrites(_scope(module, qualname, receiver), fn, helped)


def _scope(module: CallerModule, qualname: str, receiver: str | None) -> Scope:
    """Where the calls of ``fn`` go: its module's functions (``imported_writes.py``), its class and receiver."""
    functions = module_functions(module.index, module.ir.module_name, module.tree)
    owner = (qualname.rpartition(".")[0] or None) if receiver is not None else None
    return Scope(functions, owner, receiver)


def _object_state(module: CallerModule, qualname: str, receiver: str | None) -> ObjectState | None:
    owner = qualname.rpartition(".")[0]
    if receiver is None or not owner:
        return None
    return object_state(module.index, module.ir.module_name, module.tree, owner, receiver)


def _current(module: CallerModule, qualname: str) -> CurrentStream:
    """How the caller names its own stream: the stream its own decorator puts it on, if any."""
    own = next((f for f in module.ir.functions if f.qualname == qualname), None)
    if own is None or own.stream is None or own.stream.is_default:
        return CurrentStream()
    return CurrentStream(tag=own.stream.tag, when=Cond.of(own.stream.when.dotted if own.stream.when else None))


def _barriers(found: Iterable[CallSite], index: object, qualname: str, fn: _Function) -> frozenset[ast.stmt]:
    """The statements of ``fn`` that call a function compiled apart (``torch.compiler.disable``): graph breaks."""
    calls = {
        id(s.call)
        for s in found
        if s.caller == qualname and index.callees[s.key].compiled_apart  # type: ignore[attr-defined]
    }
    return frozenset(
        stmt
        for stmt in walked_of(fn, ast.stmt)
        if not hasattr(stmt, "body") and any(id(node) in calls for node in walked(stmt))
    )


def _methods(tree: ast.Module, qualname: str) -> frozenset[str]:
    """The methods of the caller's class (a call of one may read any state of its object)."""
    owner = qualname.rpartition(".")[0]
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner]
    return frozenset(
        item.name for cls in classes for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
