"""The stream functions of one module, as the index records them (``CalleeInfo``): what they are and what they touch.

The collector reads the decorators (so the index and the collector never disagree); this module adds what
a caller needs to know without reading the callee's file: its fork and join events (fresh names in its
module), its signature, what it writes or reads of its arguments and its object, whether it runs compiled
apart, whether it flips its own guard. A class's submodules are recorded for every module indexed; once all are,
what other modules say of each stream function is added (:meth:`settle`, ``across_files.py``).
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from codegen.driver import pyast
from codegen.frontend.collect import collect
from codegen.frontend.ir import StreamFunction
from codegen.frontend.signature import is_static, signature_of
from codegen.index import scan
from codegen.index.across_files import settled
from codegen.index.elements import element_classes
from codegen.index.info import CalleeInfo
from codegen.lower import naming
from codegen.lower.flow.apart_attributes import told_apart
from codegen.lower.flow.body_reads import body_read_paths
from codegen.lower.flow.guard_flips import changed_state, may_flip
from codegen.lower.flow.param_writes import param_writes
from codegen.lower.flow.state_access import reads_state, writes_state
from codegen.lower.hygiene import identifiers
from codegen.lower.plan import EventRef
from npudsl import forkjoin
from npudsl._rules import is_shared_event

__all__ = ["Definitions"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Definitions:
    """What the modules indexed so far define; grows as each module is added (a class's submodules first, so a
    subclass later in the run sees its base's)."""

    callees: dict[str, CalleeInfo] = attrs.Factory(dict)
    classes: dict[str, list[str]] = attrs.Factory(dict)  # class name -> forward keys of decorated classes
    submodules: dict[str, dict[str, str]] = attrs.Factory(dict)  # "module:Class" -> {attribute: class name}
    elements: dict[str, dict[str, str]] = attrs.Factory(dict)  # "module:Class" -> {list attribute: element class}
    shared: set[str] = attrs.Factory(set)  # the shared events some function recorded

    def add(self, module: str, tree: ast.Module, source: str, *, streams: bool = True) -> None:
        """The stream functions of one module, exactly as the collector reads them (the two never disagree); with
        ``streams`` false, only its classes' submodules (a file the run does not transform)."""
        _add_submodules(module, tree, self.submodules)
        self.elements.update(
            {f"{module}:{node.name}": element_classes(node) for node in tree.body if isinstance(node, ast.ClassDef)}
        )
        if streams and pyast.mentions_npudsl(source):
            self.shared.update(_add_streams(self, module, tree, source))

    def settle(self, index: object) -> None:
        """Once every module is added (``index``: the run's index so far): what other modules say of each stream
        function (``across_files.py``: submodules of bases there, parameters written through their functions)."""
        for key, info in list(self.callees.items()):
            owner = info.qualname.rpartition(".")[0]
            self.callees[key] = settled(index, info, self.submodules.get(f"{info.module}:{owner}", {}))


def _add_submodules(module: str, tree: ast.Module, submodules: dict[str, dict[str, str]]) -> None:
    """Each class's submodules; a subclass without its own assignment holds its base's submodule."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            inherited = [submodules.get(f"{module}:{b.id}", {}) for b in node.bases if isinstance(b, ast.Name)]
            submodules[f"{module}:{node.name}"] = {
                k: v for own in (*reversed(inherited), scan.submodule_assignments(node)) for k, v in own.items()
            }


def _add_streams(found: Definitions, module: str, tree: ast.Module, source: str) -> set[str]:
    """Record the module's stream functions; returns the shared events its functions record."""
    decorated = collect(tree, source, path=module, module_name=module).ir.functions
    recorded = {name for fn in decorated for spec in fn.records for name in spec.names if is_shared_event(name)}
    streams = [fn for fn in decorated if fn.stream is not None]
    nodes = scan.functions_by_qualname(tree) if streams else {}
    taken = set(identifiers(tree)) if streams else set()
    for fn in streams:
        if fn.class_level or (fn.owner is not None and fn.name == "forward"):  # calling the module calls forward
            found.classes.setdefault(fn.owner or "", []).append(f"{module}:{fn.qualname}")
        shared = any(o.name == fn.name and o.owner != fn.owner for o in streams)
        fork, join = (
            _sync_event(module, fn.owner, fn.name, role, fn.class_level, shared, taken) for role in forkjoin.ROLES
        )
        owned = found.submodules.get(f"{module}:{fn.owner}", {})
        apart = told_apart(tree, fn.owner, owned)  # the parts of its submodules a body's read names by path
        found.callees[f"{module}:{fn.qualname}"] = _callee(module, fn, nodes, (fork, join), (owned, apart))
    return recorded


def _callee(
    module: str,
    fn: StreamFunction,
    nodes: dict[str, _Function],
    events: tuple[EventRef, EventRef],
    submodules: tuple[dict[str, str], dict[str, frozenset[str]]],
) -> CalleeInfo:
    """What a caller needs to know of one stream function (``nodes``: the module's functions by qualname,
    ``submodules``: its class's, and the attributes of each that the run tells apart: ``apart_attributes.py``)."""
    node, (owned, apart) = nodes[fn.qualname], submodules
    signature = signature_of(node, method=fn.owner is not None)
    state = writes_state(node, signature.receiver)
    return CalleeInfo(
        key=f"{module}:{fn.qualname}",
        fork=events[0],
        join=events[1],
        **_stream_fields(fn),
        signature=signature,
        writes=param_writes(node, signature.names, nodes, fn.owner),
        compiled_apart=_compiled_apart(node),
        writes_state=state[0],
        flips_guard=_flips_guard(node, fn, nodes),
        changes_state=changed_state(node, nodes, fn.owner),
        state_in_place=state[1],
        reads_state=reads_state(node, signature.receiver, owned),
        read_paths=body_read_paths(node, signature.receiver, apart),
        class_level=fn.class_level,
        static=fn.owner is not None and is_static(node),
        user_events=bool(fn.waits or fn.records),
    )


def _flips_guard(node: _Function, fn: StreamFunction, nodes: dict[str, _Function]) -> bool:
    """The body may change what its guard reads (``self.multistream = False``, ``self.off()``: ``guard_flips.py``)."""
    when = fn.stream.when.dotted if fn.stream is not None and fn.stream.when else None
    return when is not None and may_flip(node, when, nodes, fn.owner)


def _compiled_apart(node: _Function) -> bool:
    """``@torch.compiler.disable`` (or ``torch._dynamo.disable``): the call breaks its caller's graph, so a stream
    switched around it would span two graphs; such a call stays on its caller's stream."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "disable":
            return True
    return False


def _stream_fields(fn: StreamFunction) -> dict[str, Any]:
    assert fn.stream is not None
    when = fn.stream.when.dotted if fn.stream.when else None
    return {
        "tag": fn.stream.tag,
        "priority": fn.stream.priority,
        "when": when,
        "auto": fn.auto_sync,
        "params": fn.params,
    }


def _sync_event(
    module: str, owner: str | None, name: str, role: str, class_level: bool, shared: bool, taken: set[str]
) -> EventRef:
    """The fork or join event of a stream function; its variable is fresh in the module (``taken`` grows)."""
    var = naming.fresh_name(naming.sync_var(owner, name, role, class_level=class_level, shared=shared), taken)
    taken.add(var)
    return EventRef(var=var, tag=forkjoin.event(naming.event_tag(module, owner, name), role))
