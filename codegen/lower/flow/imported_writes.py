"""Which function a call of a module reaches in another module of the run, or what it may write where the run
cannot read it.

``from .helpers import bump`` (or ``from pkg.helpers import bump``, ``from . import helpers`` then
``helpers.bump(x)``, ``import pkg.helpers as helpers``), where ``helpers.py`` holds ``def bump(t): t.add_(1)``,
writes ``x`` as surely as a helper of the caller's own module (``param_writes.py``); so does ``self.norm(x)``
where ``__init__`` makes ``self.norm`` of a class whose ``forward`` writes its input, and ``self.cache.update(x)``
where it makes ``self.cache`` of a class whose ``update`` does, the class defined in the module or imported
from the run. A helper read there is read with the same rule, its own calls into a third module too (a name an
``__init__`` re-exports is followed to where it is defined). The other module's tree is the one the run's index
holds (``codegen/index/pending.py``: parsed on the first question, asked of the run where no file imported it
relatively).

Safety never depends on which files a run sees: a call into a module of the caller's own package the run does
not hold (a file transformed alone) is taken to write every argument; a function of a module outside the run
and the package writes what ``foreign_writes.py`` says (its ATen schema for torch, every argument otherwise). A
class from outside the run is not read: calling it or one of its methods writes nothing of the caller's, as
everywhere in the planner (``nn.Linear``'s ``forward`` writes nothing of its input).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

from codegen.index import scan
from codegen.index.class_chain import forward_of, unknown_attribute
from codegen.index.factory_made import made_by
from codegen.index.per_index import per_run
from codegen.lower.flow.foreign_writes import every_argument, foreign_writes
from codegen.lower.flow.import_chains import absolute_imports, call_chain, run_package
from codegen.lower.flow.inherited_methods import base_method
from codegen.lower.flow.init_builds import built_call
from codegen.lower.flow.torch_layer_writes import torch_layer_written

if TYPE_CHECKING:
    from codegen.lower.flow.known_writes import Reading

__all__ = ["ModuleFunctions", "Reached", "module_functions"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_DEPTH = 8  # modules followed through re-exports at most; past it a call may write every argument


@attrs.frozen(eq=False)
class Reached:
    """The function a call runs, in the module that defines it (a method of ``owner`` there)."""

    fn: _Function
    functions: ModuleFunctions
    owner: str | None


class ModuleFunctions(Mapping[str, _Function]):
    """The functions of one module of the run by qualname (``Class.method``), and where its calls of names it
    imports, or of its objects' attributes, go (:meth:`reached`)."""

    def __init__(self, index: object, key: str, tree: ast.Module) -> None:
        self.index, self.key, self.tree = index, key, tree
        self._held: dict[str, ModuleFunctions | None] = {}  # the run's modules by dotted name, read so far
        self._forwards: dict[tuple[str, str], tuple[str, str] | None] = {}  # ``forward_of``, asked so far
        self._functions = scan.functions_by_qualname(tree)
        self._classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        self._bindings: dict[str, tuple[str, ...] | None] | None = None
        self.known_writes: dict[tuple[_Function, str | None], Reading] = {}  # ``known_writes.py``: kept readings
        self._reached: dict[tuple[int, str | None, str | None], tuple[ast.Call, object]] = {}  # by call, once

    def __getitem__(self, qualname: str) -> _Function:
        return self._functions[qualname]

    def __iter__(self) -> Iterator[str]:
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)

    def reached(self, call: ast.Call, owner: str | None, receiver: str | None) -> Reached | frozenset[str] | None:
        """Where ``call`` (in a method of ``owner`` called on ``receiver``) goes outside the module's own
        functions: a function of the run, or the caller's names it may write where the run cannot read it (see
        above); None for a call of nothing the module imports or made (a local, a builtin, a tensor method). Read
        once per call, owner and receiver (callers and callees of the run ask of the same calls)."""
        kept = self._reached.get((id(call), owner, receiver))
        if kept is None or kept[0] is not call:
            kept = self._reached[(id(call), owner, receiver)] = (call, self._reach(call, owner, receiver))
        return kept[1]  # type: ignore[return-value]

    def _reach(self, call: ast.Call, owner: str | None, receiver: str | None) -> Reached | frozenset[str] | None:
        chain = call_chain(call.func)
        if chain is None:
            return None
        if owner is not None and chain[0] == receiver and len(chain) > 1:
            return self._of_object(call, owner, chain[1:])
        if chain[0] in self._classes:
            return self._inside(call, chain, 0)
        return self._imported(call, chain, 0)

    def _of_object(self, call: ast.Call, owner: str, rest: tuple[str, ...]) -> Reached | frozenset[str] | None:
        """``self.norm(x)`` (its class's ``forward``) or ``self.cache.update(x)``, for an attribute ``__init__``
        makes of one class (``codegen/index/definitions.py``)."""
        made = self.index.submodules.get(f"{self.key}:{owner}", {}).get(rest[0])  # type: ignore[attr-defined]
        if made is None or scan.own_call(made):  # a base's in another module, one the run lacks, a factory handed
            return self._inherited(call, owner, rest)
        factory = made_by(self.index, self.key, made)
        home, made = factory or (self.key, made)  # a factory's class, named at home
        held = self if home == self.key else self._by_key(home)
        if held is None:
            return every_argument(call)
        layer = held._import_of(made.split(".")[0]) if rest[1:] in ((), ("forward",)) else None
        if layer is not None:  # a torch layer: ``nn.ReLU(inplace=True)`` writes its input
            built = None if factory else built_call(self.index, self.key, owner, rest[0])
            written = torch_layer_written(call, (*layer, *made.split(".")[1:]), built)
            if written is not None:
                return written
        return held._made(call, made, rest)

    def _made(self, call: ast.Call, made: str, rest: tuple[str, ...]) -> Reached | frozenset[str] | None:
        """``self.norm(x)`` / ``self.cache.update(x)`` for an attribute holding the class ``made`` names here."""
        parts = tuple(made.split("."))  # ``Norm``, or ``layers.Norm`` through ``from . import layers``
        if made in self._functions or (made not in self._classes and self._import_of(parts[0]) is None):
            return every_argument(call)  # a factory whose class is not known, an alias, a local: any class
        method = (*parts, *rest[1:]) if len(rest) > 1 else (*parts, "forward")
        return self._inside(call, method, 0) if made in self._classes else self._imported(call, method, 0, True)

    def _inherited(self, call: ast.Call, owner: str, rest: tuple[str, ...]) -> Reached | frozenset[str] | None:
        """``self.norm(x)`` / ``self.cache.update(x)`` for an attribute a base class in another module assigns
        (``class_chain.py``); a base of the package the run does not hold may assign anything: every argument."""
        if (owner, rest[0]) not in self._forwards:
            self._forwards[(owner, rest[0])] = forward_of(self.index, self.key, owner, rest[0])
        found = self._forwards[(owner, rest[0])]
        if found is None:  # no attribute a base assigns: a method a base of the run defines (``inherited_methods``)
            inherited = base_method(self.index, self.key, owner, rest)
            if inherited is None:  # an attribute the object stores, of a class not known: any class
                return every_argument(call) if unknown_attribute(self.index, self.key, owner, rest[0]) else None
            held = self if inherited[0] == self.key else self._by_key(inherited[0])
            return held._inside(call, inherited[1:], 0) if held is not None else None
        home, qualname = found
        held = self._by_key(home) if home else None
        if held is None:
            return every_argument(call)
        return held._inside(call, (qualname.rpartition(".")[0], *(rest[1:] or ("forward",))), 0)

    def _imported(
        self, call: ast.Call, chain: tuple[str, ...], depth: int, a_class: bool = False
    ) -> Reached | frozenset[str] | None:
        if chain[0] in self._functions or chain[0] in self._classes:
            return None  # the module's own (``param_writes.py`` reads it)
        bound = self._import_of(chain[0])
        if bound is None:
            return every_argument(call) if chain[0] in self._bindings_read() else None
        return self._dotted(call, (*bound, *chain[1:]), depth, a_class)

    def _dotted(
        self, call: ast.Call, dotted: tuple[str, ...], depth: int, a_class: bool
    ) -> Reached | frozenset[str] | None:
        """``dotted`` (``pkg.helpers.bump``) in the longest module of it the run holds; in no module of it: a
        module of the caller's package the run lacks writes every argument, any other what torch's schema or
        nothing known says (``foreign_writes.py``); a class from outside the run is not read."""
        for cut in range(len(dotted) - 1, 0, -1):
            held = self._module_functions(".".join(dotted[:cut]))
            if held is not None:
                return held._inside(call, dotted[cut:], depth)
        own = run_package(self.index, self.key).partition(".")[0]
        if own and dotted[0] == own:
            return every_argument(call)
        return None if a_class else foreign_writes(call, dotted)

    def _inside(self, call: ast.Call, rest: tuple[str, ...], depth: int) -> Reached | frozenset[str] | None:
        """``rest`` (``bump``, ``Ops.scale``, ``Bump.forward``) as this module defines it, or imports it from
        another (a re-export)."""
        fn = self._functions.get(".".join(rest))
        if fn is not None:
            return Reached(fn, self, rest[0] if len(rest) == 2 else None)
        if rest[0] in self._classes:  # a class made (``Bump(x)``), or a submodule its ``__init__`` makes, if one
            made = self.index.submodules.get(f"{self.key}:{rest[0]}", {})  # type: ignore[attr-defined]
            if rest[1:2] and rest[1] in made:
                return self._of_object(call, rest[0], rest[1:])
            inherited = base_method(self.index, self.key, rest[0], rest[1:]) if depth < _DEPTH else None
            held = self if inherited is None or inherited[0] == self.key else self._by_key(inherited[0])
            return held._inside(call, inherited[1:], depth + 1) if inherited is not None and held else None
        if depth >= _DEPTH or rest[0] not in self._bindings_read():
            return every_argument(call)  # a submodule the run lacks, a name bound otherwise, a long chain
        return self._imported(call, rest, depth + 1)

    def _module_functions(self, dotted: str) -> ModuleFunctions | None:
        """The functions of the module ``dotted`` where the run holds it (each looked up once per module)."""
        if dotted not in self._held:
            self._held[dotted] = self._by_key(self.index.key_of(dotted))  # type: ignore[attr-defined]
        return self._held[dotted]

    def _by_key(self, key: str) -> ModuleFunctions | None:
        """The functions of the module whose run key is ``key``, where the run holds it: the run's one
        ``ModuleFunctions`` of it (``module_functions``)."""
        tree_of = getattr(self.index.returns, "tree_of", None)  # type: ignore[attr-defined]
        tree = tree_of(key) if tree_of is not None else None
        return module_functions(self.index, key, tree) if tree is not None else None

    def binding(self, local: str) -> tuple[str, ...] | None:
        """What the module's one import of ``local`` names, absolute (``("extlib", "ExtBase")``), if one."""
        return self._import_of(local)

    def _import_of(self, local: str) -> tuple[str, ...] | None:
        """What the import that binds ``local`` names, absolute (``("pkg", "helpers", "bump")``); None where no
        import binds it, or more than one, or another statement too."""
        return self._bindings_read().get(local)

    def _bindings_read(self) -> dict[str, tuple[str, ...] | None]:
        if self._bindings is None:
            self._bindings = absolute_imports(self.tree, run_package(self.index, self.key))
        return self._bindings


@per_run
def _shared(index: object) -> dict[str, ModuleFunctions]:
    """The modules' ``ModuleFunctions`` made for the run ``index`` (the last run asked about only)."""
    return {}


def module_functions(index: object, key: str, tree: ast.Module) -> ModuleFunctions:
    """The module's ``ModuleFunctions`` for this run index, made once and shared by every caller of the module (its
    imports and the other modules it reads are then read once per run, not once per caller)."""
    made = _shared(index)
    found = made.get(key)
    if found is None or found.tree is not tree:
        found = made[key] = ModuleFunctions(index, key, tree)
    return found
