"""What a method of the caller's object, or of one of its objects, writes where the run cannot read the method: any
of that object's state.

``class Model(ExtBase)`` with ``ExtBase`` from outside the run (a library, or a module of the package the run does
not hold: a file transformed alone, ``read_classes.py``): ``self.ext_update()``, which neither
``Model`` nor a base of the run defines, runs ``ExtBase``'s method, which may write any tensor of the object in
place (``self.buf.mul_(2)``); ``self.sub.reset()``, where ``__init__`` makes ``self.sub`` of a class from outside the
run (or by a factory of the module that may return anything but a class the run reads or knows: ``read_classes.py``),
may write any of ``self.sub``'s. Nothing the run reads says which,
so such a call writes ``self.*`` (``self.sub`` and ``self.sub.*``), and a pending call that reads any of that
state is joined before it (``crossing_writes.py``); one reading other state keeps its overlap. Before, such a call
wrote only its arguments (``foreign_writes.every_argument``). A method the run reads keeps its precise answer
(``call_state_writes.py``), and torch's classes are known: ``nn.Module``'s own methods and torch's modules
(``nn.Linear``'s ``forward``) write no tensor of their object, as the planner reads them everywhere. A tensor's own
methods are read by their spelling (``written_exprs.py``): an attribute ``__init__`` makes by a call of torch is
no object of this kind.
"""

from __future__ import annotations

import ast

from codegen.index.class_chain import class_of
from codegen.lower.flow import schema
from codegen.lower.flow.import_chains import call_chain
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.init_builds import stores
from codegen.lower.flow.read_classes import unread_bases, unread_class

__all__ = ["unread_method_writes"]


def unread_method_writes(call: ast.Call, functions: object, owner: str | None, receiver: str | None) -> frozenset[str]:
    """The caller's state ``call`` may write through a method of its object the run cannot read (see above), for a
    call in a method of class ``owner`` called on ``receiver``; none for any other call."""
    chain = call_chain(call.func)
    if not isinstance(functions, ModuleFunctions) or owner is None or chain is None or chain[0] != receiver:
        return frozenset()
    made = functions.index.submodules.get(f"{functions.key}:{owner}", {})  # type: ignore[attr-defined]
    if len(chain) == 3 and schema.writes_self(chain[2]) is not None:
        return frozenset()  # a tensor's method (``self.buf.sum()``): read by its spelling
    if len(chain) == 3 or (len(chain) == 2 and chain[1] in made):
        held = made.get(chain[1])
        unread = held is not None and unread_class(functions, held)
        return frozenset({f"{receiver}.{chain[1]}", f"{receiver}.{chain[1]}.*"}) if unread else frozenset()
    if len(chain) == 2 and not _stored(functions, owner, chain[1]) and unread_bases(functions, owner):
        return frozenset({f"{receiver}.*"})
    return frozenset()


def _stored(functions: ModuleFunctions, owner: str, attr: str) -> bool:
    """Some method of the class stores ``attr`` on its object: a call of it is of what it holds, not a method."""
    cls = class_of(functions.index, functions.key, owner)
    return cls is None or any(name in (attr, "*") for name, _ in stores(cls))
