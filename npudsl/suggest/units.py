"""Stage 1: group a captured graph's ops into call units, the granularity a decorator can move.

A call unit is one call of a method or of a submodule's ``forward`` defined in
the model's file. Dynamo keeps, on every node, the Python stack it was traced
from (``stack_trace``) and the modules it ran in (``nn_module_stack``). The
frames of the model's file, read outermost first, give the chain of calls; each
``forward`` frame after the first is a submodule call, paired with the next
module of the file's own classes on the module stack. A unit instance is a
maximal run of ops (in program order) sharing a chain prefix; its :class:`Site`
is the call in the source (caller, line, callee) that a decorator changes for
every instance at once.
"""

from __future__ import annotations

import ast
import os
import re
import sysconfig
from collections.abc import Iterator

import attrs
import torch.fx

from npudsl.race._timeline import runtime_op

__all__ = [
    "Instance",
    "Site",
    "SourceDefs",
    "attribute_of",
    "call_units",
    "compute_nodes",
    "frames_of",
    "traced_methods",
]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\w+)')
_COMPUTE = ("call_function", "call_method", "call_module")
_TORCH = os.path.dirname(os.path.abspath(torch.fx.__file__)).rsplit(os.sep, 1)[0] + os.sep
# Installed packages (transformers' decorators, GradientCheckpointingLayer.__call__, ACT2FN...) are read like
# torch: dynamo traced them into the graph, which shows their ops; see docs/suggest.md ("Library frames").
_LIBRARIES = tuple(
    dict.fromkeys([_TORCH, *(os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("purelib", "platlib"))])
)


@attrs.frozen(kw_only=True)
class Site:
    """A call in the source: ``caller`` (``Class.method``) calls ``callee`` on ``line``."""

    caller: str
    line: int
    callee: str
    submodule: bool  # the callee is a submodule's forward (else a method of the caller's own module)


@attrs.frozen(kw_only=True)
class Instance:
    """One execution of a site: the ops it ran (indices into the graph's node list)."""

    site: Site
    module: str  # the callee's module path, "layers.0.shared"
    nodes: tuple[int, ...]
    depth: int


@attrs.frozen(kw_only=True)
class SourceDefs:
    """The methods of the model file's classes, by line span: ``(first, last, "Class.method")``."""

    path: str
    spans: tuple[tuple[int, int, str], ...]

    @classmethod
    def read(cls, path: str, source: str) -> SourceDefs:
        spans = [
            (f.lineno, f.end_lineno or f.lineno, f"{c.name}.{f.name}")
            for c in ast.parse(source).body
            if isinstance(c, ast.ClassDef)
            for f in c.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        return cls(path=os.path.abspath(path), spans=tuple(spans))

    def method_at(self, line: int) -> str | None:
        inner = [(first, name) for first, last, name in self.spans if first <= line <= last]
        return max(inner)[1] if inner else None


def attribute_of(site: Site, module: str) -> str | None:
    """The ``self.<attribute>`` the caller calls: the method, or the submodule's attribute (None: a list item)."""
    if not site.submodule:
        return site.callee.split(".")[-1]
    last = module.rsplit(".", 1)[-1]
    return last if last and not last.isdigit() else None


def compute_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """The graph's nodes in program order (indices used throughout the package)."""
    return list(graph.nodes)


def frames_of(node: torch.fx.Node, defs: SourceDefs) -> list[tuple[int, str]]:
    """``(line, "Class.method")`` of each frame in the model's file, outermost first."""
    found = []
    for match in _FRAME.finditer(node.meta.get("stack_trace") or ""):
        if os.path.abspath(match["file"]) == defs.path:
            method = defs.method_at(int(match["line"]))
            if method is not None and method.endswith("." + match["function"]):
                found.append((int(match["line"]), method))
    return found


def traced_methods(node: torch.fx.Node, defs: SourceDefs) -> list[str] | None:
    """The methods of the model's file ``node`` was traced through, outermost first (the frames of torch and of
    installed packages skipped); None if another frame is not one."""
    methods = []
    for match in _FRAME.finditer(node.meta.get("stack_trace") or ""):
        path = os.path.abspath(match["file"])
        if path != defs.path and path.startswith(_LIBRARIES):
            continue
        method = defs.method_at(int(match["line"])) if path == defs.path else None
        if method is None or not method.endswith("." + match["function"]):
            return None
        methods.append(method)
    return methods


def _own_modules(node: torch.fx.Node, classes: set[str]) -> list[tuple[str, set[str]]]:
    """``(path, class names in its MRO)`` of each module of the file's classes on ``node``'s module stack."""
    modules = []
    for path, cls in (node.meta.get("nn_module_stack") or {}).values():
        mro = {k.__name__ for k in getattr(cls, "__mro__", ())}
        if mro & classes:
            modules.append((re.sub(r"^L\['self'\]\.?", "", str(path)), mro))
    return modules


def _chain(node: torch.fx.Node, defs: SourceDefs, classes: set[str]) -> tuple[tuple[Site, str], ...]:
    """The calls ``node`` was made in below the model's ``forward``: ``(site, module path)`` each."""
    frames, modules = frames_of(node, defs), _own_modules(node, classes)
    chain: list[tuple[Site, str]] = []
    module = ""
    for (line, caller), (_, callee) in zip(frames, frames[1:]):
        submodule = callee.endswith(".forward")
        if submodule:
            if not modules or callee.split(".")[0] not in modules[0][1]:
                return tuple(chain)  # the stacks do not line up: stop at what is certain
            module = modules.pop(0)[0]
        chain.append((Site(caller=caller, line=line, callee=callee, submodule=submodule), module))
    return tuple(chain)


def _runs(chains: list[tuple[int, tuple[tuple[Site, str], ...]]]) -> Iterator[Instance]:
    open_: list[tuple[tuple[Site, str], list[int]]] = []
    for index, chain in [*chains, (-1, ())]:
        keep = 0
        while keep < len(open_) and keep < len(chain) and open_[keep][0] == chain[keep]:
            keep += 1
        for depth in range(len(open_) - 1, keep - 1, -1):
            (site, module), nodes = open_.pop()
            yield Instance(site=site, module=module, nodes=tuple(nodes), depth=depth)
        open_.extend((key, []) for key in chain[keep:])
        for _, nodes in open_:
            nodes.append(index)


def call_units(nodes: list[torch.fx.Node], defs: SourceDefs) -> list[Instance]:
    """Every call unit instance of the graph, in order of their first op."""
    classes = {name.split(".")[0] for _, _, name in defs.spans}
    chains = [(i, _chain(n, defs, classes)) for i, n in enumerate(nodes) if n.op in _COMPUTE and runtime_op(n) is None]
    return sorted(_runs(chains), key=lambda u: (u.nodes[0], u.depth))
