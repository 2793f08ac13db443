"""What a run knows across files: stream functions, submodules and their call sites.

Built with the standard ``ast`` module (several times faster than a libcst parse),
before any file is rewritten, so a decorated class in one file is known at its
call sites in another.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from codegen.driver import pyast
from codegen.driver.modules import ModuleId
from codegen.frontend.collect import collect
from codegen.frontend.ir import Loc, StreamFunction
from codegen.frontend.positions import Positions
from codegen.frontend.signature import Signature, is_static, signature_of
from codegen.index import scan
from codegen.index.returns import function_returns, imported_relatively
from codegen.lower import naming
from codegen.lower.flow.callsites import find_calls
from codegen.lower.flow.writes import param_writes, reads_state, writes_state
from codegen.lower.hygiene import identifiers
from codegen.lower.plan import EventRef
from npudsl import forkjoin
from npudsl._rules import is_shared_event

__all__ = ["CalleeInfo", "CallInfo", "ModuleId", "RunIndex", "build_index"]


@attrs.frozen(kw_only=True)
class CalleeInfo:
    key: str  # "module:Class.method" or "module:function"
    tag: str
    priority: int
    when: str | None
    auto: bool  # automatic fork/join
    fork: EventRef
    join: EventRef
    params: tuple[str, ...] = ()  # the function's parameter names (a decorated class: its forward's)
    signature: Signature = Signature(params=())
    writes: tuple[str, ...] = ()  # parameters whose memory the body may write in place (``codegen.lower.flow.writes``)
    compiled_apart: bool = False  # under ``torch.compiler.disable``: its graph is not its caller's
    writes_state: frozenset[str] = frozenset()  # the attributes of its object the body changes ("*": unnamed)
    state_in_place: frozenset[str] = frozenset()  # those of them it only writes in place (made elsewhere)
    reads_state: frozenset[str] = frozenset({"*"})  # the attributes of its object the body reads ("*": any)
    flips_guard: bool = False  # the body assigns what its ``when`` reads: the call site reads it once
    class_level: bool = False  # a decorated class: the key names its forward
    static: bool = False  # a staticmethod

    @property
    def module(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def qualname(self) -> str:
        return self.key.split(":", 1)[1]


@attrs.frozen(kw_only=True)
class CallInfo:
    callee: str
    module: str
    caller: str  # qualname of the calling function
    spelled: str  # the call as written, up to its arguments (``self.shared``), for messages
    caller_stream: str  # the stream the caller runs on ("default" unless decorated)
    bindable: bool  # a plain statement binds (or drops) the result, so the caller can join later
    loc: Loc | None = None  # the call's position in the caller's module


@attrs.frozen(kw_only=True)
class RunIndex:
    callees: dict[str, CalleeInfo]
    classes: dict[str, tuple[str, ...]]  # class name -> forward keys of decorated classes
    submodules: dict[str, dict[str, str]]  # "module:Class" -> {attribute: class name}
    calls: dict[str, tuple[CallInfo, ...]]  # callee key -> visible call sites
    imports: dict[str, dict[str, tuple[str, str]]]  # module -> {local name: (import spec, name imported)}
    stream_calls: dict[str, tuple[CallInfo, ...]] = attrs.Factory(dict)  # like calls, for every stream function
    modules: dict[str, ModuleId] = attrs.Factory(dict)  # module key -> its identity (see codegen.driver.modules)
    shared_records: frozenset[str] = frozenset()  # the shared events ("ns:name") some function of the run records
    returns: dict[str, dict[str, str]] = attrs.Factory(dict)  # module -> {function: its return annotation}

    def package_of(self, module: str) -> str:
        """The package that relative imports in ``module`` (a run key) resolve against."""
        found = self.modules.get(module) or ModuleId.of(module)
        return found.dotted if found.package else found.dotted.rpartition(".")[0]

    def key_of(self, dotted: str) -> str:
        """The run key of the module imported as ``dotted``: itself, or the one file of the run it names."""
        if dotted in self.modules or not self.modules:
            return dotted
        keys = [key for key, found in self.modules.items() if found.dotted == dotted]
        return keys[0] if len(keys) == 1 else dotted


def build_index(
    files: Iterable[tuple[str | ModuleId, str]],
    callers: Callable[[frozenset[str]], Iterable[tuple[str | ModuleId, str]]] | None = None,
) -> RunIndex:
    """Index ``(module, source)`` pairs (a module is its run key, or its :class:`ModuleId`); sources that
    fail to parse are skipped.

    ``callers``, when given, is asked once the stream functions of ``files`` are known, with the names
    their modules define them under (a class, a function) and the names they import from their own package
    (``from .ops import f``): the files it returns are indexed too, for their calls, submodules and what their
    functions return. One pass, as if every file had been given at once.
    """
    modules: dict[str, ModuleId] = {}
    callees: dict[str, CalleeInfo] = {}
    classes: dict[str, list[str]] = {}
    submodules: dict[str, dict[str, str]] = {}
    shared: set[str] = set()
    trees = _parsed(files, modules)
    for module, tree, source in trees:
        shared |= _collect_definitions(module, tree, source, callees, classes, submodules)
    asked = _defined(callees) | imported_relatively(tree for _, tree, _ in trees)
    more = _parsed(callers(asked), modules) if callers is not None and callees else []
    for module, tree, source in more:
        shared |= _collect_definitions(module, tree, source, callees, classes, submodules)
    trees += more
    partial = RunIndex(
        callees=callees,
        classes={k: tuple(v) for k, v in classes.items()},
        submodules=submodules,
        calls={},
        modules=modules,
        shared_records=frozenset(shared),
        imports={module: scan.imported_names(tree) for module, tree, _ in trees},
        returns={module: function_returns(tree) for module, tree, _ in trees},
    )
    calls: dict[str, list[CallInfo]] = {}
    stream_calls: dict[str, list[CallInfo]] = {}
    for module, tree, source in trees:
        for callee, info in _collect_calls(module, tree, partial, Positions(source)):
            stream_calls.setdefault(callee, []).append(info)
            if partial.callees[callee].auto:
                calls.setdefault(callee, []).append(info)
    return attrs.evolve(
        partial,
        calls={k: tuple(v) for k, v in calls.items()},
        stream_calls={k: tuple(v) for k, v in stream_calls.items()},
    )


def _parsed(
    files: Iterable[tuple[str | ModuleId, str]], modules: dict[str, ModuleId]
) -> list[tuple[str, ast.Module, str]]:
    """(key, tree, source) of each file that parses; ``modules`` learns their identities."""
    found = []
    for module, source in files:
        identity = ModuleId.of(module)
        source = pyast.without_bom(source)
        try:
            found.append((identity.key, pyast.parse(source), source))
        except (SyntaxError, ValueError):
            continue
        modules[identity.key] = identity
    return found


def _defined(callees: dict[str, CalleeInfo]) -> frozenset[str]:
    """The module-level names (a class, a function) the stream functions are defined under."""
    return frozenset(key.split(":", 1)[1].split(".", 1)[0] for key in callees)


def _collect_definitions(
    module: str,
    tree: ast.Module,
    source: str,
    callees: dict[str, CalleeInfo],
    classes: dict[str, list[str]],
    submodules: dict[str, dict[str, str]],
) -> set[str]:
    """The stream functions of one module, exactly as the collector reads them (the two never disagree); returns
    the shared events the module records."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):  # a subclass without its own assignment holds its base's submodule
            inherited = [submodules.get(f"{module}:{b.id}", {}) for b in node.bases if isinstance(b, ast.Name)]
            submodules[f"{module}:{node.name}"] = {
                k: v for own in (*reversed(inherited), scan.submodule_assignments(node)) for k, v in own.items()
            }
    if not pyast.mentions_npudsl(source):
        return set()
    decorated = collect(tree, source, path=module, module_name=module).ir.functions
    recorded = {name for fn in decorated for spec in fn.records for name in spec.names if is_shared_event(name)}
    streams = [fn for fn in decorated if fn.stream is not None]
    nodes = scan.functions_by_qualname(tree) if streams else {}
    taken = set(identifiers(tree)) if streams else set()
    for fn in streams:
        if fn.class_level or (fn.owner is not None and fn.name == "forward"):  # calling the module calls forward
            classes.setdefault(fn.owner or "", []).append(f"{module}:{fn.qualname}")
        shared = any(o.name == fn.name and o.owner != fn.owner for o in streams)
        node = nodes[fn.qualname]
        fork, join = (
            _sync_event(module, fn.owner, fn.name, role, fn.class_level, shared, taken) for role in forkjoin.ROLES
        )
        signature = signature_of(node, method=fn.owner is not None)
        state = writes_state(node, signature.receiver)
        callees[f"{module}:{fn.qualname}"] = CalleeInfo(
            key=f"{module}:{fn.qualname}",
            fork=fork,
            join=join,
            **_stream_fields(fn),
            signature=signature,
            writes=param_writes(node, signature.names),
            compiled_apart=_compiled_apart(node),
            writes_state=state[0],
            flips_guard=_flips_guard(node, fn),
            state_in_place=state[1],
            reads_state=reads_state(node, signature.receiver, submodules.get(f"{module}:{fn.owner}", {})),
            class_level=fn.class_level,
            static=fn.owner is not None and is_static(node),
        )
    return recorded


def _flips_guard(node: ast.FunctionDef | ast.AsyncFunctionDef, fn: StreamFunction) -> bool:
    """The body assigns the guard's root or an attribute along its path (``self.multistream = False``)."""
    when = fn.stream.when.dotted if fn.stream is not None and fn.stream.when else None
    return when is not None and scan.assigns_path(node, when)


def _compiled_apart(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
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


def _collect_calls(
    module: str, tree: ast.Module, index: RunIndex, positions: Positions
) -> Iterable[tuple[str, CallInfo]]:
    """Resolved calls of every stream function (automatic or not), with their positions."""
    for site in find_calls(module, tree, index):  # type: ignore[arg-type]  # flow._Index: settable dicts
        own = index.callees.get(f"{module}:{site.caller}")
        info = CallInfo(
            callee=site.key,
            module=module,
            caller=site.caller,
            spelled=site.spelled,
            caller_stream=own.tag if own is not None else "default",
            bindable=site.bindable,
            loc=positions.loc(site.call),
        )
        yield site.key, info
