"""Which parameters every caller reads again after the call where a test of its object's fixed state holds, so the
side stream keeps them only where that test fails.

A parameter every caller surely reads in an op after the call needs no ``record_stream`` (``codegen/index/
held_params.py``): the function joins before it returns, so the caller's read comes after the join. vllm-ascend's
DeepSeek-V4 attention reads ``hidden_states`` after ``self._mla_prolog(...)`` only in a layer with an indexer:
``if self.compress_ratio == 4:`` runs the indexer, whose compressor hands it to an ``nn.Linear``
(``torch_layer_reads.py``). There the prolog's keep is not needed; in a window-only layer it is. So the keep is
made only where the test fails (``if self.multistream_dsv4_dsa_overlap and self.compress_ratio != 4:``), as the
hand-written version does.

The test is read again in the function, on the same object: each caller calls it through its own ``self``, which
the caller never rebinds, and the test reads only that object's attributes and constants (comparisons, ``not``,
``and``/``or``), each attribute stored by a statement at the top of an ``__init__`` of the object's classes (the
run reading them all, torch's aside) and by no other statement of those classes or of any class of the module
(``setattr`` with a computed name counts as a store of every attribute). Like the planner's other guard facts, it
assumes that code outside the module stores none of them. On the caller's path from the call, every statement
before that ``if`` goes on without ending the path or rebinding the name, and its body surely reads the name in
an op (``used_params.py``); callers differing in their tests, or one without such an ``if``, leave the keep whole.
"""

from __future__ import annotations

import ast

from codegen.index.held_params import Callers, callers_of, path_after
from codegen.index.used_calls import Scope
from codegen.index.used_params import READ, block_reads
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.read_classes import read_chain

__all__ = ["held_where", "unless"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_ALWAYS = ""  # the caller reads the name after the call on every path
_PLAIN = (
    ast.Compare,
    ast.BoolOp,
    ast.Constant,
    ast.Attribute,
    ast.Name,
    ast.expr_context,
    ast.cmpop,
    ast.boolop,
    ast.Not,
)
_INVERSE = {ast.Eq: "!=", ast.NotEq: "==", ast.Lt: ">=", ast.GtE: "<", ast.Gt: "<=", ast.LtE: ">"}


def held_where(index: object, module: tuple[str, ast.Module], qualname: str, fn: _Function) -> dict[str, str]:
    """For the method ``fn`` (``qualname`` in ``module``): each key some caller reads again after the call only
    where one test holds, and every other caller then too, with that test spelled with ``fn``'s ``self``."""
    found = callers_of(index, module, qualname, fn)
    receiver = fn.args.args[0].arg if fn.args.args else None
    if found is None or found.scope.owner is None or receiver is None or _rebinds(fn, receiver):
        return {}
    held: dict[str, str] = {}
    for key in found.candidates:
        tests = {_read_where(found, caller, stmt, call, key, receiver) for caller, stmt, call in found.calls}
        tests.discard(_ALWAYS)
        if len(tests) == 1 and None not in tests:
            held[key] = str(tests.pop())
    return held


def unless(test: str) -> str:
    """The condition under which a keep held where ``test`` holds is still made: ``test`` negated."""
    node = ast.parse(test, mode="eval").body
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _INVERSE:
        return f"{ast.unparse(node.left)} {_INVERSE[type(node.ops[0])]} {ast.unparse(node.comparators[0])}"
    return f"not ({test})"


def _read_where(
    found: Callers, caller: _Function, stmt: ast.stmt, call: ast.Call, key: str, receiver: str
) -> str | None:
    """``_ALWAYS``, the test under which ``caller`` surely reads the name it passes for ``key`` after ``stmt``
    (spelled with ``receiver``), or None."""
    name = found.passed(call, key)
    path = path_after(found.scope, caller, stmt, name)
    if name is None or path is None:
        return None
    here, blocks = path
    names, test = {name}, None
    for block in blocks:
        for later in block:
            if block_reads(here, [later], set(names)) == READ:
                return _ALWAYS
            if test is None and isinstance(later, ast.If) and block_reads(here, later.body, set(names)) == READ:
                test = _fixed_test(here, caller, later.test, receiver) or ""
            if block_reads(here, [later], names) != "through":
                return test or None
    return test or None


def _fixed_test(here: Scope, caller: _Function, test: ast.expr, receiver: str) -> str | None:
    """``test`` spelled with ``receiver`` where it reads only fixed attributes of the caller's ``self``."""
    own = here.receiver
    if own is None or here.owner is None or _rebinds(caller, own):
        return None
    attributes: set[str] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id == own):
            return None
        if isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        elif isinstance(node, ast.Name) and node.id != own or not _plain(node):
            return None
    if not attributes or not _fixed(here, here.owner, attributes):
        return None
    return ast.unparse(_Renamed(own, receiver).visit(ast.parse(ast.unparse(test), mode="eval")).body)


def _plain(node: ast.AST) -> bool:
    """A comparison, ``and``/``or``/``not``, a constant or a name read (the attributes are asked apart)."""
    return isinstance(node, _PLAIN) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))


def _fixed(here: Scope, owner: str, attributes: set[str]) -> bool:
    """Each attribute is stored at the top of an ``__init__`` of ``owner``'s classes and nowhere else there or in
    the module's classes."""
    chain = read_chain(module_functions(here.index, here.module, here.tree), owner)
    if chain is None:
        return False
    classes = {id(c): c for c in [*chain, *(n for n in here.tree.body if isinstance(n, ast.ClassDef))]}
    stored: set[str] = set()
    for cls in classes.values():
        for method in (f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))):
            top = {id(t) for s in method.body if isinstance(s, ast.Assign) for t in walked(s)}
            for store in object_stores(method, method.args.args[0].arg if method.args.args else ""):
                at_top = method.name == "__init__" and id(store.node) in top
                if store.attr == "*" or (store.attr in attributes and not at_top):
                    return False
                stored.add(store.attr)
    return attributes <= stored


def _rebinds(fn: _Function, name: str) -> bool:
    return any(n.id == name and not isinstance(n.ctx, ast.Load) for n in walked_of(fn, ast.Name))


class _Renamed(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(id=self.new, ctx=node.ctx) if node.id == self.old else node
