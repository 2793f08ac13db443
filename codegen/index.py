"""What a run knows across files: stream functions, submodules and their call sites.

Built with the standard ``ast`` module (several times faster than a libcst parse),
before any file is rewritten, so a decorated class in one file is known at its
call sites in another.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen import naming, pyast, scan
from codegen.flow.callsites import find_calls
from codegen.ir import Loc
from codegen.plan import EventRef
from codegen.hygiene import identifiers
from codegen.positions import Positions
from codegen.signature import Signature, is_static, signature_of

__all__ = ["CalleeInfo", "CallInfo", "RunIndex", "build_index"]


@attrs.frozen(kw_only=True)
class CalleeInfo:
    key: str  # "module:Class.method" or "module:function"
    tag: str
    when: str | None
    auto: bool  # automatic fork/join
    fork: EventRef
    join: EventRef
    params: tuple[str, ...] = ()  # the function's parameter names (a decorated class: its forward's)
    signature: Signature = Signature(params=())
    join_kw: str = "join"  # the keyword by which a caller that joins says so (``join=False``)
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
    imports: dict[str, dict[str, str]]  # module -> {name: "from" module spec it is imported from}
    stream_calls: dict[str, tuple[CallInfo, ...]] = attrs.Factory(dict)  # like calls, for every stream function

    packages: frozenset[str] = frozenset()  # modules that are packages (``__init__.py``)

    def package_of(self, module: str) -> str:
        """The package that relative imports in ``module`` resolve against."""
        return module if module in self.packages else module.rpartition(".")[0]


def build_index(files: Iterable[tuple[str, str]], *, packages: Iterable[str] = ()) -> RunIndex:
    """Index ``(module_name, source)`` pairs; sources that fail to parse are skipped. ``packages`` names the
    modules that are a package's ``__init__.py`` (relative imports resolve against them)."""
    trees = []
    positions = []
    for module, source in files:
        try:
            trees.append((module, pyast.parse(source)))
        except (SyntaxError, ValueError):
            continue
        positions.append(Positions(source))
    callees: dict[str, CalleeInfo] = {}
    classes: dict[str, list[str]] = {}
    submodules: dict[str, dict[str, str]] = {}
    for module, tree in trees:
        _collect_definitions(module, tree, callees, classes, submodules)
    partial = RunIndex(callees=callees, classes={k: tuple(v) for k, v in classes.items()},
                       submodules=submodules, calls={},
                       imports={module: scan.imported_names(tree) for module, tree in trees},
                       packages=frozenset(packages))
    calls: dict[str, list[CallInfo]] = {}
    stream_calls: dict[str, list[CallInfo]] = {}
    for (module, tree), where in zip(trees, positions):
        for callee, info in _collect_calls(module, tree, partial, where):
            stream_calls.setdefault(callee, []).append(info)
            if partial.callees[callee].auto:
                calls.setdefault(callee, []).append(info)
    return attrs.evolve(partial, calls={k: tuple(v) for k, v in calls.items()},
                        stream_calls={k: tuple(v) for k, v in stream_calls.items()})


def _collect_definitions(module: str, tree: ast.Module, callees: dict[str, CalleeInfo],
                         classes: dict[str, list[str]], submodules: dict[str, dict[str, str]]) -> None:
    found: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef, bool, dict[str, object]]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            stream = scan.stream_of(node.decorator_list)
            forward = next((fn for fn in scan.functions_of(node) if fn.name == "forward"), None)
            if stream is not None and forward is not None:
                found.append((node.name, forward, True, stream))
                classes.setdefault(node.name, []).append(f"{module}:{node.name}.forward")
            submodules[f"{module}:{node.name}"] = scan.submodule_assignments(node)
            found.extend((node.name, fn, False, stream)
                         for fn in scan.functions_of(node) if (stream := scan.stream_of(fn.decorator_list)) is not None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stream = scan.stream_of(node.decorator_list)
            if stream is not None:
                found.append((None, node, False, stream))
    taken = set(identifiers(tree)) if found else set()
    for owner, fn, class_level, stream in found:
        shared = sum(1 for o, f, _, _ in found if f.name == fn.name and o != owner) > 0
        key = f"{module}:{owner}.{fn.name}" if owner else f"{module}:{fn.name}"
        signature = signature_of(fn, method=owner is not None)
        fork, join = (_sync_event(module, owner, fn.name, role, class_level, shared, taken) for role in ("fork", "join"))
        callees[key] = CalleeInfo(key=key, fork=fork, join=join, params=scan.params_of(fn), signature=signature,
                                  join_kw=_join_keyword(fn), class_level=class_level,
                                  static=owner is not None and is_static(fn), **stream)


def _join_keyword(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``join``, unless the function already binds or reads that name."""
    return naming.fresh_name("join", {*scan.params_of(fn), *(n.id for n in ast.walk(fn) if isinstance(n, ast.Name))})


def _sync_event(module: str, owner: str | None, name: str, role: str, class_level: bool, shared: bool,
                taken: set[str]) -> EventRef:
    """The fork or join event of a stream function; its variable is fresh in the module (``taken`` grows)."""
    var = naming.fresh_name(naming.sync_var(owner, name, role, class_level=class_level, shared=shared), taken)
    taken.add(var)
    return EventRef(var=var, tag=naming.event_tag(module, owner, name, role))


def _collect_calls(module: str, tree: ast.Module, index: RunIndex,
                   positions: Positions) -> Iterable[tuple[str, CallInfo]]:
    """Resolved calls of every stream function (automatic or not), with their positions."""
    for site in find_calls(module, tree, index):
        own = index.callees.get(f"{module}:{site.caller}")
        info = CallInfo(callee=site.key, module=module, caller=site.caller, spelled=site.spelled,
                        caller_stream=own.tag if own is not None else "default", bindable=site.bindable,
                        loc=positions.loc(site.call))
        yield site.key, info
