"""Which of a caller's names a call of a function or submodule of another module of its package writes in place.

``from .helpers import bump`` then ``bump(x)`` (or ``from . import helpers`` then ``helpers.bump(x)``), where
``helpers.py`` holds ``def bump(t): t.add_(1)``, writes ``x`` as surely as a helper of the caller's own module
(``helper_writes.py``); so does ``self.norm(x)`` where ``__init__`` makes ``self.norm`` of a class whose
``forward`` writes its input, defined in the module or imported from the package. The other module's tree is the
one the run's index holds for what its functions return (``codegen/index/pending.py``: parsed on the first
question), read with the same rule (``param_writes.py``).

Safety never depends on which files a run sees: where a call goes into a module of the package the run does not
hold (a file transformed alone), the call is taken to write every argument. A function imported from outside the
package (an absolute import: ``torch``, a third-party library) is taken to write none, as everywhere in the
planner: only what the user's package spells is read.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import forward_of
from codegen.index.returns import home_of
from codegen.lower.flow.imports import resolve_spec
from codegen.lower.flow.param_writes import callee_writes
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["imported_writes"]

_UNKNOWN = ""  # a module of the package the run does not hold


def imported_writes(
    call: ast.Call, index: object, module: tuple[str, ast.Module], owner: str | None, receiver: str | None
) -> set[str]:
    """The caller's names whose memory ``call`` (in ``module``: its run key and tree; in a method of ``owner``
    called on ``receiver``) writes through another module's function, or a submodule's ``forward`` (see above)."""
    target = _target(call.func, index, module[0], owner, receiver)
    if target is None:
        return set()
    tree = module[1] if target[0] == module[0] else _held(index, target[0])
    if tree is None:
        return set().union(*(alias_sources(a.value if isinstance(a, ast.Starred) else a) for a in _arguments(call)))
    functions = scan.functions_by_qualname(tree)
    fn = functions.get(target[1])
    if fn is None:
        return set()  # a class made (``Bump(x)``), or a name the module does not define as a function
    return callee_writes(call, fn, functions, target[1].rpartition(".")[0] or None)


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _held(index: object, home: str) -> ast.Module | None:
    """The tree of the module ``home`` (a run key) where the run holds it."""
    tree_of = getattr(index.returns, "tree_of", None)  # type: ignore[attr-defined]
    return tree_of(home) if tree_of is not None else None


def _target(
    func: ast.expr, index: object, module: str, owner: str | None, receiver: str | None
) -> tuple[str, str] | None:
    """(the run key of the module the call goes to, the function's qualname there), for a call of a function
    imported from the package (or of a module of the package, ``helpers.bump``) or of a submodule of the
    caller's object; None for any other call."""
    imports = _relative(index, module)
    if isinstance(func, ast.Name):
        return (home_of(index, module, func.id), imports[func.id]) if func.id in imports else None
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.value.id in imports:
        return _attribute_of(index, module, func.value.id, func.attr)
    if owner is None or func.value.id != receiver:
        return None
    made = index.submodules.get(f"{module}:{owner}", {}).get(func.attr)  # type: ignore[attr-defined]
    if made is None:  # assigned by a base in another module, or by one the run does not hold
        return forward_of(index, module, owner, func.attr)
    if made in index.imports.get(module, {}) and made not in imports:  # type: ignore[attr-defined]
        return None  # its class comes from outside the package
    return home_of(index, module, made), f"{imports.get(made, made)}.forward"


def _relative(index: object, module: str) -> dict[str, str]:
    """The names ``module`` imports from its package -> the names they are imported as."""
    imports = index.imports.get(module, {})  # type: ignore[attr-defined]
    return {local: name for local, (spec, name) in imports.items() if spec.startswith(".")}


def _attribute_of(index: object, module: str, local: str, attr: str) -> tuple[str, str]:
    """``local.attr`` for a name imported from the package: ``attr`` of the class ``local`` names where the run
    holds it (``Ops.scale``); else a function of the module it names (``from . import helpers``)."""
    spec, name = index.imports[module][local]  # type: ignore[attr-defined]
    home = home_of(index, module, local)
    tree = _held(index, home)
    if tree is not None and any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body):
        return home, f"{name}.{attr}"
    package = resolve_spec(spec, index.package_of(module))  # type: ignore[attr-defined]
    return index.key_of(f"{package}.{name}" if package else name), attr  # type: ignore[attr-defined]
