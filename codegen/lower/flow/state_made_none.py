"""Which constructor parameter a torch module's attribute needs to hold a tensor rather than None.

``nn.InstanceNorm1d(3)``'s ``forward`` hands ``self.running_mean`` to ``F.instance_norm``, which updates it in place;
but ``_NormBase.__init__``, reached through ``_InstanceNorm.__init__``'s ``super().__init__(num_features, eps,
momentum, affine, track_running_stats, ...)``, registers it as None unless ``track_running_stats``
(``self.track_running_stats = track_running_stats``, then ``if self.track_running_stats: register_buffer(
"running_mean", torch.zeros(...))`` ``else: register_buffer("running_mean", None)``), and a write through None
writes nothing. So that write needs ``track_running_stats`` given (not None, not False), read here from the chain of
``__init__`` bodies: the one that binds the attribute (``self.x = ...``, ``register_buffer``/``register_parameter``
with a literal name) binds it only inside one ``if`` at its top level, a tensor where the test holds and None where it
fails; the test is a parameter, or an attribute that ``__init__`` stores whole from one (``self.p = p``); and each
``super().__init__(...)`` on the way passes that parameter on by name. Anything else says nothing (the write stands).
``functional_state_writes.py`` (a write through ``torch.nn.functional``) and ``method_state_writes.py`` (through an
in-place tensor method: ``self.num_batches_tracked.add_(1)``) ask at table-build time
(``torch_module_methods_build.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence

from codegen.lower.flow.torch_module_sources import TorchClass, method_home

__all__ = ["Needed", "guard_text", "init_chain", "passed_down", "tensor_needs"]

Needed = tuple[str, int, bool]  # the first ``__init__``'s parameter, its position after the object, default falsy
_REGISTERS = ("register_buffer", "register_parameter")


def init_chain(classes: Mapping[str, TorchClass], cls: str, depth: int = 0) -> list[ast.FunctionDef]:
    """The ``__init__`` bodies an object of ``cls`` runs, each reached from the one before by ``super().__init__``
    (the first base defining one: single inheritance, as torch's norm classes are)."""
    home = method_home(classes, cls, "__init__")
    if home is None or depth > 16:
        return []
    first = classes[home].methods["__init__"]
    later = (init_chain(classes, b, depth + 1) for b in classes[home].bases)
    return [first, *next((chain for chain in later if chain), [])]


def tensor_needs(chain: Sequence[ast.FunctionDef], attr: str) -> Needed | None:
    """The parameter of ``chain[0]`` that must be given for ``attr`` to hold a tensor (see above), if one."""
    for depth, init in enumerate(chain):
        binds = [s for s in init.body if any(_binding(n, init, attr) for n in ast.walk(s))]
        if binds:
            param = _flag(init, binds[0], attr) if len(binds) == 1 else None
            return passed_down(chain[: depth + 1], param) if param is not None else None
    return None


def guard_text(needed: Needed) -> str:
    """The table's spelling of a needed parameter: ``track_running_stats@4`` (``=``: its default is None or False)."""
    return f"{needed[0]}@{needed[1]}" + "=" * needed[2]


def _binding(node: ast.AST, init: ast.FunctionDef, attr: str) -> bool:
    """``node`` binds the object's ``attr``: stores it, or registers it by name."""
    own = init.args.args[0].arg if init.args.args else ""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return node.value is not None and any(_own_attr(t, own) == attr for t in targets)
    return isinstance(node, ast.Call) and _registered(node, own) == attr


def _own_attr(node: ast.expr, own: str) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == own:
        return node.attr
    return None


def _registered(call: ast.Call, own: str) -> str | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in _REGISTERS and _name(func.value) == own):
        return None
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _flag(init: ast.FunctionDef, stmt: ast.stmt, attr: str) -> str | None:
    """The parameter of ``init`` whose truth the one ``if`` binding ``attr`` tests: a tensor where it holds, None
    where it fails."""
    if not isinstance(stmt, ast.If):
        return None
    test, body, orelse = stmt.test, stmt.body, stmt.orelse
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, body, orelse = test.operand, orelse, body
    made = [v for s in body for v in _bound_values(s, init, attr)]
    left = [v for s in orelse for v in _bound_values(s, init, attr)]
    if not made or not left or any(_none(v) for v in made) or not all(_none(v) for v in left):
        return None
    return _param_of(init, test)


def _bound_values(stmt: ast.stmt, init: ast.FunctionDef, attr: str) -> Iterator[ast.expr]:
    for node in ast.walk(stmt):
        if _binding(node, init, attr):
            yield node.args[1] if isinstance(node, ast.Call) and len(node.args) > 1 else _value(node)


def _value(node: ast.AST) -> ast.expr:
    return node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value else ast.Constant(value=...)


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _param_of(init: ast.FunctionDef, test: ast.expr) -> str | None:
    """``p`` for a test ``p`` or ``self.p`` where ``init`` runs ``self.p = p`` once at its top level."""
    params = _params(init)
    own = init.args.args[0].arg if init.args.args else ""
    if isinstance(test, ast.Name):
        return test.id if test.id in params else None
    attr = _own_attr(test, own)
    stores = [s for s in init.body if isinstance(s, ast.Assign) and any(_own_attr(t, own) == attr for t in s.targets)]
    value = stores[0].value if len(stores) == 1 and attr is not None else None
    return value.id if isinstance(value, ast.Name) and value.id in params else None


def _params(init: ast.FunctionDef) -> list[str]:
    """The parameters after the object, positional first, then keyword-only."""
    return [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:] + [a.arg for a in init.args.kwonlyargs]


def passed_down(chain: Sequence[ast.FunctionDef], param: str) -> Needed | None:
    """``param`` of ``chain[-1]`` as the parameter of ``chain[0]`` that each ``super().__init__`` passes on."""
    for outer, inner in zip(reversed(chain[:-1]), reversed(chain[1:]), strict=True):
        given = _super_argument(outer, inner, param)
        if given is None or given not in _params(outer) or _rebinds(outer, given):
            return None
        param = given
    first = chain[0]
    positional = [a.arg for a in (*first.args.posonlyargs, *first.args.args)][1:]
    position = positional.index(param) if param in positional else -1
    return (param, position, _falsy_default(first, param)) if position >= 0 else None


def _super_argument(outer: ast.FunctionDef, inner: ast.FunctionDef, param: str) -> str | None:
    """The name ``outer``'s one ``super().__init__(...)`` passes to ``inner``'s ``param``."""
    calls = [c for c in ast.walk(outer) if isinstance(c, ast.Call) and _super_init(c)]
    if len(calls) != 1:
        return None
    call, positional = calls[0], [a.arg for a in (*inner.args.posonlyargs, *inner.args.args)][1:]
    at = positional.index(param) if param in positional else len(call.args)
    if any(isinstance(a, ast.Starred) for a in call.args[: at + 1]):
        return None
    given = call.args[at] if at < len(call.args) else next((k.value for k in call.keywords if k.arg == param), None)
    return _name(given) if given is not None else None


def _super_init(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and _name(func.value.func) == "super"
    )


def _rebinds(fn: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(fn))


def _falsy_default(fn: ast.FunctionDef, param: str) -> bool:
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    defaults = dict(zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
    default = defaults.get(param)
    return isinstance(default, ast.Constant) and default.value in (None, False)
