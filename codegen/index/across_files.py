"""A stream function's facts that other modules of the run decide, settled once every module is indexed.

The index records each stream function as its own module says (``definitions.py``); three facts need the run's
other files, which may be indexed after it (a base class's file is read once the decorated files are):

- what its body reads of its object: a call of ``self.kv_norm`` is a submodule's, reading ``kv_norm`` only, where a
  base class in another module assigns it (``class_chain.py``); before, such a call could read anything;
- which parameters its body writes in place through a function or a submodule of another module of the package
  (``dsa_kv_compress_scatter(swa_kv_cache, kv, slots)`` with the function in ``layers.py``), read there
  (``imported_writes.py``; a module the run does not hold writes every argument it is given): a caller that reads
  such an argument after the call waits for it first. Before, the function's own module alone was read, so the
  caller could read the tensor while the side stream still wrote it;
- what its body changes of its object through its calls (``self.sub.double()`` writing the submodule's ``scale``, a
  method of the object or a helper of the run given ``self.buf``, a function the run cannot read given it:
  ``call_state_writes.py``): the caller's read of that state waits for the call.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import signature_of
from codegen.index import class_chain, scan
from codegen.index.info import CalleeInfo
from codegen.index.walked import walked_of
from codegen.lower.flow.call_state_writes import method_state_writes
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.param_writes import call_writes
from codegen.lower.flow.state_access import reads_state
from codegen.lower.flow.view_roots import view_roots

__all__ = ["settled"]


def settled(index: object, info: CalleeInfo, submodules: dict[str, str]) -> CalleeInfo:
    """``info`` with what other modules of the run say (``submodules``: its class's, as its module records them)."""
    tree = index.returns.tree_of(info.module)  # type: ignore[attr-defined]
    node = scan.functions_by_qualname(tree).get(info.qualname) if tree is not None else None
    if tree is None or node is None:
        return info
    owner = info.qualname.rpartition(".")[0] or None
    state = info.reads_state
    if owner is not None and "*" in state:
        found = class_chain.origins(index, info.module, owner)
        state = (
            reads_state(node, info.signature.receiver, [*submodules, *found]) if found.keys() - submodules else state
        )
    writes = _imported(index, info, (tree, node), owner)
    changed = info.writes_state
    if owner is not None and info.signature.receiver is not None:  # also through its calls (``call_state_writes``)
        changed |= method_state_writes(node, module_functions(index, info.module, tree), owner)
    return attrs.evolve(info, reads_state=state, writes=writes, writes_state=changed)


def _imported(index: object, info: CalleeInfo, found: tuple[ast.Module, ast.AST], owner: str | None) -> tuple:
    """Its parameters written in place, those it passes to another module's function or submodule included."""
    tree, node = found
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    receiver = signature_of(node, method=owner is not None).receiver
    functions = module_functions(index, info.module, tree)
    names = set().union(*(call_writes(c, functions, owner, receiver) for c in walked_of(node, ast.Call)))
    roots = view_roots(node, info.signature.names) if names else {}  # nothing written: no roots to read
    written = frozenset().union(*(roots.get(name, frozenset()) for name in names))
    return tuple(p for p in info.signature.names if p in written or p in info.writes)
