"""The caller's objects whose state it changes itself: their tensors may be made on its stream and dropped.

A stream function's parameter annotated with one of the user's classes (a metadata or config object) is not kept
alive for the side stream: such an object's tensors are made where it was built and outlive the call. That holds
for an object the caller only passes on, not for one whose state the caller changes: a method called on it (or on
an item of it: ``token_dispatchers[i].preprocess_and_permtute1(h, w, ids)``, vllm_qwen3_dbo) or an attribute stored
on it (``box.t = x * 2``) may make a tensor on the caller's stream that the side body reads through the object and
drops; the next allocation on the caller's stream may then reuse its memory while the side stream still reads it.
Such an object's tensors are kept by name where its class is in the run (``state_keeps.py``:
``record_stream(box.t)``); where they cannot be named the call stays on its caller's stream (NPD501,
``given_changed.py``: walking the object would make ``torch.compile`` compile again where the first call adds
attributes to it). An argument at a parameter not annotated with a class is kept like any value that may hold
tensors.

Objects are named by paths, as other state is (``paths_meet.py``): the chain of attributes down from a name, an item
standing for its container (``h.box`` of ``h.box.fill(x)``, ``boxes`` of ``boxes[0].fill(x)``), and a change is read
through the locals that hold the object (``view_roots.spread``, rerooted as ``aliasing.rerooted`` reroots state):
``o = box; o.fill(x)`` changes ``box``, ``b = h.box; b.fill(x)`` changes ``h.box``, and ``h.box.fill(x)`` changes
``b``. Read by root names alone, those three gave the side stream the object unkept (``self.side(box)``,
``self.side(h.box)``: the race checker saw the caller's stream allocate over the tensor the side stream still read).
An object the caller builds (``h = Holder()``: a local bound to what a call returns) is changed by its building: its
tensors were made on the caller's stream and die with it, unlike those of an object the caller was given. The
receiver's own state is none of these: it lives on as the module's (``arguments`` never keeps ``self.a`` either).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable

from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.paths_meet import meets, under
from codegen.lower.flow.view_roots import alias_root, reads_attribute, spread, view_base

__all__ = [
    "changed_below",
    "changed_objects",
    "changed_roots",
    "gives_own_changed",
    "kept_names",
    "object_path",
    "outside",
    "own_changed",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_DEPTH = 4  # a longer path is cut to its first parts: the whole of what they name (a cycle ``a = a.next`` ends)


def changed_objects(fn: _Function, receiver: str | None) -> frozenset[str]:
    """Paths of the objects ``fn`` changes: a method called on one or on an item of it, an attribute stored on it,
    itself or through a local that holds it; not the receiver's state, which lives on as the module's (a local
    holding it is not changed by ``self.f()``, as ``arguments`` never keeps ``self.a``); read once per function and
    receiver (the planner and the index ask it for each call)."""
    known = _known(fn)
    if receiver not in known:
        own = frozenset({receiver}) if receiver else frozenset()
        known[receiver] = outside(_through_holders(fn, set(outside(_changed(fn), own))), own)
    return known[receiver]


def changed_roots(fn: _Function, receiver: str | None) -> frozenset[str]:
    """The names at the roots of ``changed_objects``' paths (``box`` of ``box.t``)."""
    return frozenset(p.partition(".")[0] for p in changed_objects(fn, receiver))


def own_changed(fn: _Function, receiver: str | None) -> frozenset[str]:
    """The paths of the receiver's own state that ``fn`` changes (``self.a.b`` of ``self.a.b.load(x)``), which
    ``changed_objects`` leaves out: they matter where ``fn`` gives such an object to a stream call
    (``state_keeps.py``)."""
    found = changed_objects(fn, None)
    return frozenset(p for p in found if receiver and p.partition(".")[0] == receiver)


def changed_below(path: str, changed: Iterable[str]) -> bool:
    """Some path of ``changed`` is ``path`` or lies under it: the object at ``path`` was changed (``self.a.b`` by a
    change of ``self.a.b`` or ``self.a.b.t``, not by one of ``self``)."""
    return any(c == path or under(c, path) for c in changed)


def gives_own_changed(fn: _Function, receiver: str | None, call: ast.Call) -> bool:
    """``call`` is given a chain of the receiver's state (``self.a.b``) that ``fn`` changes at or below it."""
    own = own_changed(fn, receiver)
    given = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Attribute)]
    return bool(own) and any(changed_below(p, own) for p in map(object_path, given) if p is not None)


def kept_names(fn: _Function) -> frozenset[str]:
    """The parameters of ``fn`` it never binds again: the objects they hold were given to it and outlive the call
    (their caller holds them), unlike one it builds."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    bound = {n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)}
    return frozenset(params) - bound


def outside(paths: Iterable[str], names: Collection[str]) -> frozenset[str]:
    """The paths of ``paths`` not rooted at one of ``names``."""
    return frozenset(p for p in paths if p.partition(".")[0] not in names)


def object_path(node: ast.expr) -> str | None:
    """The path of the object ``node`` names: its attributes down from a name, an item or a view standing for what
    it is taken of (``h.box`` of ``h.box``, ``boxes`` of ``boxes[0].t``, ``getattr(h, k)``: ``h.*``)."""
    parts: list[str] = []
    while (below := view_base(node)) is not None:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif reads_attribute(node):
            name = node.args[1]  # type: ignore[attr-defined]
            parts.append(name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*")
        else:  # an item, or a view: the container's (the tensor's) path
            parts.clear()
        node = below
    return _cut(".".join([node.id, *reversed(parts)])) if isinstance(node, ast.Name) else None


@per_node
def _known(fn: _Function) -> dict[str | None, frozenset[str]]:
    """``changed_objects`` of ``fn`` by receiver, so far (paths only: nothing of the tree)."""
    return {}


def _changed(fn: _Function) -> set[str]:
    """The paths of the objects ``fn`` calls a method of, stores an attribute on, or builds (a local bound to what a
    call returns, not a view: ``h = Holder()``), as spelled."""
    found: list[ast.expr] = []
    for node in walked_of(fn, (ast.Call, ast.Attribute, ast.AugAssign, ast.Assign)):  # the kinds asked below
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found.append(node.func.value)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            found.append(node.target.value)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and view_base(node.value) is None:
            found += [t for t in node.targets if isinstance(t, ast.Name)]  # built here: its state is the caller's
    return {p for p in map(object_path, found) if p is not None}


def _through_holders(fn: _Function, changed: set[str]) -> set[str]:
    """``changed`` with what holders of its objects change: through a local, what it holds (``o.fill(x)`` of ``o =
    box``: ``box``); then a local holding what changed (``b`` of ``b = h.box`` where ``h.box.fill(x)``)."""
    holders = spread(fn, {}, _held)
    held = [(name, path) for name, paths in holders.items() for path in paths]
    forward = changed | {_cut(p + c[len(n) :]) for n, p in held for c in changed if c == n or c.startswith(f"{n}.")}
    return forward | {_holder(n, p, c) for n, p in held for c in forward if meets(c, p)}


def _held(part: ast.expr, found: dict[str, frozenset[str]]) -> frozenset[str]:
    """The paths of objects a local bound to ``part`` holds: its own, and what its root holds, rerooted."""
    path, root = object_path(part), alias_root(part)
    if path is None or root is None:
        return frozenset()
    rest = path[len(root) :]
    return frozenset({path, *(_cut(p + rest) for p in found.get(root, frozenset()))})


def _holder(name: str, held: str, changed: str) -> str:
    """What of the local ``name``, holding the object at ``held``, a change of ``changed`` changes."""
    return _cut(name + changed[len(held) :]) if changed.startswith(f"{held}.") or changed == held else name


def _cut(path: str) -> str:
    return ".".join(path.split(".")[:_DEPTH])
