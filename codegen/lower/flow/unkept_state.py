"""Calls that read object state the caller changes through a local holding its module's state, unless it is named.

vllm-ascend's dual-batch overlap binds ``token_dispatchers = self.experts.token_dispatchers`` and calls
``token_dispatchers[i].preprocess_and_permtute1(...)``: tensors made on the caller's stream are left only on
the dispatcher, and the dispatch (given ``token_dispatchers[i]``) and the combine (whose body reads
``self.experts.token_dispatchers[i]``) read them on the communication stream. Run apart, the side stream's read
races with the caller's next allocation unless those tensors are kept alive for it, and no keep reaches them
without naming them: a state attribute of the module is never walked, and walking the dispatcher (an object of
the module's state, whose attributes appear on the first call) makes ``torch.compile`` guard on how many it has,
so the second call compiles again. :func:`named_state` names them from the dispatcher's class
(``state_keeps.py``): kept so, the call runs apart, and the caller's names holding the objects are inputs of the
call (its fork comes after the caller's change). Where they cannot be named (the class is not in the run, the body
passes the object on), the call runs on its caller's stream, as written (NPD501 says so).
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from codegen.frontend.signature import Tensorness
from codegen.index.per_index import per_run
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow import schema
from codegen.lower.flow.body_reads import callee_reads
from codegen.lower.flow.changed_objects import changed_roots, kept_names, own_changed
from codegen.lower.flow.exprs import chain_root
from codegen.lower.flow.held_paths import held_paths
from codegen.lower.flow.kept_locals import through_locals
from codegen.lower.flow.paths_meet import meets
from codegen.lower.flow.state_keeps import Asked, state_keeps
from codegen.lower.flow.state_reach import reached_apart
from codegen.lower.flow.view_roots import alias_root

__all__ = ["Named", "changed_state", "named_state", "reads_changed_state"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_STORES = (ast.AnnAssign, ast.AugAssign)


def changed_state(fn: _Function, receiver: str | None) -> dict[str, frozenset[str]]:
    """The locals of ``fn`` that hold state of ``receiver`` and whose object ``fn`` changes (a method called on
    it or an item of it that is no tensor op, an attribute stored on it), with the paths of ``receiver``'s state
    they hold (``held_paths``: ``a.d`` of ``d = self.a.d``, ``"*"`` the object); read once per function (the
    index's call search and the planner ask of every caller)."""
    if receiver is None:
        return {}
    known = _changed_states(fn)
    if receiver not in known:
        roots = changed_roots(fn, receiver)
        held = held_paths(fn, receiver) if roots else {}  # most callers change no object: nothing to hold
        known[receiver] = {name: held[name] for name in roots & held.keys() if _changes(fn, name)}
    return known[receiver]


@per_node
def _changed_states(fn: _Function) -> dict[str, dict[str, frozenset[str]]]:
    """``changed_state`` of ``fn`` by receiver, so far (names only: nothing of the tree)."""
    return {}


def _changes(fn: _Function, name: str) -> bool:
    """``fn`` stores an attribute on (an item of) ``name``, or calls a method of it that the ATen table does not
    hold (``ds[i].prepare(x)``; not ``x.relu()``: a tensor op leaves its object's attributes alone)."""
    for node in walked_of(fn, (ast.Call, ast.Assign, *_STORES)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and chain_root(node.func.value) == name:
            if schema.writes_self(node.func.attr) is None:
                return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, _STORES) else []
        if any(isinstance(t, ast.Attribute) and chain_root(t.value) == name for t in targets):
            return True
    return False


def reads_changed_state(call: ast.Call, reads_state: frozenset[str], changed: dict[str, frozenset[str]]) -> bool:
    """The call is given (an item or attribute of) such a local, or its body reads of its object a path that meets
    one they hold (``reads_state``: the callee's, as paths: ``body_reads.refined``; ``"*"`` any): a body reading
    ``self.a.e`` reads nothing a change through ``d = self.a.d`` makes."""
    if not changed:
        return False
    values = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    if any(alias_root(v) in changed for v in [*values, *(k.value for k in call.keywords)]):
        return True
    held = frozenset().union(*changed.values())
    return _meet(reads_state, held) or ("*" in reads_state) or ("*" in held and bool(reads_state))


def _meet(reads: frozenset[str], held: frozenset[str]) -> bool:
    """A path read meets a path held, as named (``"*"`` meets ``"*"`` only, as the sets of first attributes were
    compared): ``a.e`` meets ``a`` and ``a.e.buf``, not ``a.d``."""
    named = [(r, h) for r in reads for h in held if "*" not in (r, h)]
    return ("*" in reads and "*" in held) or any(meets(r, h) for r, h in named)


def _firsts(paths: frozenset[str]) -> frozenset[str]:
    """The first attributes of ``paths`` (``a`` of ``a.d``; ``"*"`` stays)."""
    return frozenset(p.partition(".")[0] for p in paths)


@attrs.frozen
class Named:
    """A call's tensors read through objects the caller changes, in the caller's terms, and the caller's names
    that hold those objects."""

    keeps: tuple[str, ...]
    inputs: frozenset[str]
    held: frozenset[str] = frozenset()  # the caller's own state it reads them through (``self.experts``)


@per_run
def _named_calls(index: object) -> dict[ast.Call, Named | None]:
    """What each call was found to read, for the run ``index`` (the last run asked about only)."""
    return {}


@per_run
def _apart(index: object) -> dict[tuple[_Function, str, str], bool]:
    """``reached_apart`` of a caller, its receiver and an attribute, for the run of ``index`` (the last asked about)."""
    return {}


def named_state(
    index: Any, here: tuple[str, ast.Module], fn: _Function, receiver: str | None, call: ast.Call, resolved: Any
) -> Named | None:
    """What ``call`` (resolved to ``resolved``) in ``fn`` reads of objects ``fn`` changes, named (None: not
    nameable); asked by the index (which calls stay at once) and the planner (their keeps), once per call."""
    known = _named_calls(index)  # per index: the index's own search may see less of the run than the planner
    if call not in known:
        known[call] = _named(index, here, fn, receiver, call, resolved)
    return known[call]


def _named(
    index: Any, here: tuple[str, ast.Module], fn: _Function, receiver: str | None, call: ast.Call, resolved: Any
) -> Named | None:
    callee = index.callees.get(resolved.key)
    if callee is None:
        return None
    changed = changed_state(fn, receiver)
    reads = callee_reads(callee)
    own = resolved.receiver is not None and resolved.receiver == receiver
    if not own and _meet(reads, frozenset().union(*changed.values(), frozenset())):
        return None  # the body reads the caller's state from another object's side: not followed
    attributes = _firsts(frozenset().union(*changed.values(), frozenset())) if own else frozenset()
    classed = frozenset(p.name for p in callee.signature.params if p.tensor is Tensorness.NO)
    found = state_keeps(_asked(index, here, fn, receiver, call, resolved, attributes, classed))
    if found is None:
        return None
    keeps, given = found
    inputs = set(given) | {n for n, held in changed.items() if _meet(reads, held)}
    state = (attributes & _firsts(reads)).union(*(_firsts(changed[n]) for n in inputs if n in changed))  # reached
    # through the locals
    apart = {a for a in state if receiver and _reached_apart(index, here, fn, receiver, a)}
    held = frozenset(f"{receiver}.{a}" for a in state - apart) if receiver else frozenset()
    return Named(keeps=through_locals(fn, call, keeps), inputs=frozenset(inputs - {receiver or ""}), held=held)


def _asked(
    index: Any,
    here: tuple[str, ast.Module],
    fn: _Function,
    receiver: str | None,
    call: ast.Call,
    resolved: Any,
    attributes: frozenset[str],
    classed: frozenset[str],
) -> Asked:
    """The call as ``state_keeps`` asks it, with what ``fn`` changes and which of its names outlive it."""
    return Asked(
        index=index,
        here=here,
        call=call,
        key=resolved.key,
        receiver=resolved.receiver,
        objects=changed_roots(fn, receiver),
        own=own_changed(fn, receiver),
        attributes=attributes,
        classed=classed,
        kept=kept_names(fn),
    )


def _reached_apart(index: Any, here: tuple[str, ast.Module], fn: _Function, receiver: str, attribute: str) -> bool:
    """``state_reach.reached_apart``, read once per caller, receiver and attribute in a run (a caller asks it of
    each of its calls that reads the attribute)."""
    known = _apart(index)
    if (fn, receiver, attribute) not in known:
        known[(fn, receiver, attribute)] = reached_apart(index, here, fn, receiver, attribute)
    return known[(fn, receiver, attribute)]
