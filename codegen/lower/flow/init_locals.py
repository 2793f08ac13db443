"""The call that builds a container, read through the locals ``__init__`` made its children in.

``layer = Layer(d); self.enc = nn.TransformerEncoder(layer, 6)`` and ``blocks = [Block() for _ in range(n)];
self.seq = nn.Sequential(*blocks)`` build their containers from children held by a local first, as real encoders do.
Read as written, a name or a ``*blocks`` is a child nothing says of (``container_children.py``), so the container's
call was taken to write every state under it, and a side call reading ``self.enc.layers[0].lin.weight`` was joined
before it. A local ``__init__`` binds once, to a call, holds an object of that call's class whatever else reads it;
a local bound once to a list or tuple display or a list comprehension, read nowhere but in the container's call (no
``append`` or store can change what it holds), holds its elements. The call is read with those values in place of
the names; a local bound otherwise, twice, or read elsewhere stays a child nothing says of.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of

__all__ = ["through_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def through_locals(call: ast.Call, init: _Function) -> ast.Call:
    """``call`` (a statement of ``init`` building a container) with each argument that is a local made as above
    replaced by what it holds; ``call`` itself where none is."""
    params = {a.arg for a in walked_of(init.args, ast.arg)}
    bound = {n: v for n, v in _bound_once(init).items() if n not in params and v.lineno < call.lineno}
    args = [part for arg in call.args for part in _held(arg, bound, init)]
    if all(a is b for a, b in zip(args, call.args, strict=False)) and len(args) == len(call.args):
        return call
    return ast.copy_location(ast.Call(func=call.func, args=args, keywords=call.keywords), call)


def _held(arg: ast.expr, bound: dict[str, ast.expr], init: _Function) -> list[ast.expr]:
    """What the argument ``arg`` gives the call, through a local bound once (see above)."""
    if isinstance(arg, ast.Name) and isinstance(bound.get(arg.id), ast.Call):
        return [bound[arg.id]]
    if not isinstance(arg, ast.Starred) or not isinstance(arg.value, ast.Name) or _reads(init, arg.value.id) != 1:
        return [arg]
    held = bound.get(arg.value.id)
    if isinstance(held, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in held.elts):
        return list(held.elts)
    return [held.elt] if isinstance(held, ast.ListComp) else [arg]


def _bound_once(fn: _Function) -> dict[str, ast.expr]:
    """Each local ``fn`` binds exactly once, by a plain assignment to the name alone, with its value."""
    stores = [n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)]
    plain = [
        (t.id, s.value)
        for s in walked_of(fn, ast.Assign)
        if len(s.targets) == 1 and isinstance(t := s.targets[0], ast.Name)
    ]
    return {name: value for name, value in plain if stores.count(name) == 1}


def _reads(fn: _Function, name: str) -> int:
    return sum(1 for n in walked_of(fn, ast.Name) if n.id == name and isinstance(n.ctx, ast.Load))
