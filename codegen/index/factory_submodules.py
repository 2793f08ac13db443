"""A submodule a base class builds by calling a factory its subclass hands it: which class ``self.<attr>`` holds.

vllm-ascend's DeepSeek-V4 attention keeps its weights in a base class that makes the indexer from a callable parameter,
``self.indexer = indexer(shape)``, and the attention class passes it ``lambda s: DeepseekV4Indexer(s, multistream)``
from its own ``__init__`` (``super().__init__(shape, compress_ratio, lambda s: ...)``). In a method of that class,
``self.indexer(...)`` runs ``DeepseekV4Indexer.forward``: what the attention's own ``__init__`` passes is a fact about
its objects, whoever else subclasses the base. The premise is the one every submodule rests on (``scan.
submodule_assignments``): ``__init__`` makes the object's submodules, and nothing rebinds them unseen.

Only the plain shape is read: the class stores no ``attr`` itself, its ``__init__`` calls ``super().__init__(...)``
once, as a statement of its body, with no ``*``/``**``; its one base is held by the run; every store of ``attr`` in the
base's class is in the base's ``__init__``, each a call of one parameter that the ``__init__`` never rebinds, and no
class above the base stores it; and the argument passed there is a ``lambda`` whose body calls a class by name, or a
class named directly. Anything else is unknown, as before: calls through the attribute stay unresolved.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_homes import bases_of, class_of, home_of, unheld_base
from codegen.index.factory_made import made_by
from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import bound_names

__all__ = ["factory_class"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def factory_class(index: object, module: str, owner: str, attr: str) -> str | None:
    """The class name, as ``module`` spells it, whose instance ``self.<attr>`` holds in a method of class ``owner``, or
    the name of a factory function of the run that makes it (None: not built by a factory its ``__init__`` hands its
    base, or not known)."""
    cls = class_of(index, module, owner)
    init = _init(cls) if cls is not None else None
    if cls is None or init is None or attr in _stored_names(cls) or _calls_setattr(cls):
        return None
    homes = list(bases_of(index, module, cls))
    base = class_of(index, *homes[0]) if len(homes) == 1 and homes[0] is not None else None
    if base is None or homes[0] is None or unheld_base(index, module, owner) or _stored_above(index, homes[0], attr):
        return None
    param = _factory_param(base, attr)
    call = _super_init(init)
    given = _argument(call, _init(base), param) if call is not None and base is not None and param else None
    made = _made(given) if given is not None else None
    known = made is not None and (home_of(index, module, made) is not None or made_by(index, module, made) is not None)
    return made if known else None  # a class, or a factory function of the run (``factory_made.py``)


def _stored_above(index: object, home: tuple[str, str], attr: str) -> bool:
    """A base of the class ``home`` (or of its bases) stores ``attr`` itself."""
    cls = class_of(index, *home)
    above = [h for h in bases_of(index, home[0], cls) if h is not None] if cls is not None else []
    return any(_stores(index, h, attr) or _stored_above(index, h, attr) for h in above)


def _stores(index: object, home: tuple[str, str], attr: str) -> bool:
    cls = class_of(index, *home)
    return cls is not None and (attr in _stored_names(cls) or _calls_setattr(cls))


def _init(cls: ast.ClassDef | None) -> _Function | None:
    return next((f for f in scan.functions_of(cls) if f.name == "__init__"), None) if cls is not None else None


def _stored(cls: ast.ClassDef) -> list[ast.Attribute]:
    """Every ``self.<name>`` a method of ``cls`` stores (as attribute nodes)."""
    found: list[ast.Attribute] = []
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        found += [
            n
            for n in walked_of(fn, ast.Attribute)
            if not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) and n.value.id == receiver
        ]
    return found


def _stored_names(cls: ast.ClassDef) -> set[str]:
    """The attributes a method of ``cls`` stores on its object."""
    return {n.attr for n in _stored(cls)}


def _factory_param(base: ast.ClassDef, attr: str) -> str | None:
    """The parameter of the base's ``__init__`` whose call every store of ``self.<attr>`` in the class stores."""
    init = _init(base)
    if init is None or _calls_setattr(base):
        return None
    stores = [n for n in _stored(base) if n.attr == attr]
    inside = {id(n) for n in walked_of(init, ast.Attribute)}
    values = [_stored_value(init, n) for n in stores]
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    called = {_called_name(v) for v in values}
    if not stores or any(id(n) not in inside for n in stores) or len(called) != 1:
        return None
    param = called.pop()
    rebound = any(param in bound_names(s) for s in walked_of(init, ast.stmt) if s is not init)
    return param if param in params and not rebound else None


def _calls_setattr(cls: ast.ClassDef) -> bool:
    return any(scan.dotted_name(c.func) == "setattr" for f in scan.functions_of(cls) for c in walked_of(f, ast.Call))


def _stored_value(init: _Function, target: ast.Attribute) -> ast.expr | None:
    """The value a plain ``self.<attr> = value`` assigns (None: any other store)."""
    for stmt in walked_of(init, ast.Assign):
        if stmt.targets == [target] or (len(stmt.targets) == 1 and stmt.targets[0] is target):
            return stmt.value
    return None


def _called_name(value: ast.expr | None) -> str | None:
    """``p(...)``: the name called."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    return None


def _super_init(init: _Function) -> ast.Call | None:
    """The one ``super().__init__(...)`` statement of ``init``'s body (None: none, several, or spread arguments)."""
    calls = [c for c in walked_of(init, ast.Call) if _is_super_init(c)]
    statements = [s.value for s in init.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    if len(calls) != 1 or calls[0] not in statements:
        return None
    call = calls[0]
    spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    return None if spread else call


def _is_super_init(call: ast.Call) -> bool:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)):
        return False
    return isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and not func.value.args


def _argument(call: ast.Call, init: _Function | None, param: str) -> ast.expr | None:
    """What ``call`` (the subclass's ``super().__init__(...)``) passes the base's ``param``."""
    if init is None:
        return None
    given = next((k.value for k in call.keywords if k.arg == param), None)
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    if given is None and param in positional and positional.index(param) < len(call.args):
        given = call.args[positional.index(param)]
    return given


def _made(given: ast.expr) -> str | None:
    """``lambda ...: Cls(...)`` or ``Cls``: the class name."""
    if isinstance(given, ast.Lambda):
        body, own = given.body, {a.arg for a in (*given.args.posonlyargs, *given.args.args, *given.args.kwonlyargs)}
        called = body.func.id if isinstance(body, ast.Call) and isinstance(body.func, ast.Name) else None
        return called if called not in own else None
    return given.id if isinstance(given, ast.Name) else None
