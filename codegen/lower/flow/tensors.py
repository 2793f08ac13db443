"""Which of a caller's locals certainly hold a tensor, read from how each is made.

GE's fork edge, ``npu_wait_tensor(a, b)``, takes two tensors: a flag, a shape, a tuple or a config object there
fails the capture. The caller's locals carry no types, so a name counts only when its value is certainly a tensor:
a parameter annotated ``torch.Tensor``, an arithmetic or slice of one, a tensor method or ``torch.*`` function
whose ATen schema returns one tensor (``schema.py``), a function or method of the same module annotated to return
one (or a tuple of them, unpacked), or a function of another file of the run that the module imports
(``codegen/index/returns.py``). Anything else (calls the module cannot see, flags) is left out; the edge is
then put on an earlier tensor, or not at all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.frontend.signature import Tensorness, annotation_tensorness, signature_of
from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow import schema

__all__ = [
    "Returns",
    "certain_bindings",
    "certain_tensors",
    "in_order",
    "is_tensor_expr",
    "local_returns",
    "tuple_element",
    "tuple_elements",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Known = frozenset[str] | set[str]
Returns = dict[str, ast.expr]  # a callable as spelled in the caller -> its return annotation

# Python-level names that the ATen table does not hold and that return no tensor (``x.tolist()``, ``torch.finfo``).
_NOT_ATEN = frozenset(
    {
        "Size",
        "compile",
        "cuda",
        "data_ptr",
        "device",
        "dtype",
        "finfo",
        "get_default_dtype",
        "iinfo",
        "is_tensor",
        "nelement",
        "no_grad",
        "npu",
        "tolist",
    }
)
_TORCH_ROOTS = frozenset({"torch", "F"})
_TUPLES = ("tuple", "typing.Tuple", "Tuple")


def is_tensor_expr(node: ast.expr, known: Known, returns: Returns) -> bool:
    """``node`` certainly evaluates to one tensor, given the names ``known`` to hold tensors."""
    if isinstance(node, ast.Name):
        return node.id in known
    if isinstance(node, ast.BinOp):
        return is_tensor_expr(node.left, known, returns) or is_tensor_expr(node.right, known, returns)
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return is_tensor_expr(node.operand, known, returns)
    if isinstance(node, ast.Subscript) and tuple_element(node, returns) is not None:
        return annotation_tensorness(tuple_element(node, returns)) is Tensorness.TENSOR
    if isinstance(node, ast.Subscript):
        return is_tensor_expr(node.value, known, returns)
    if isinstance(node, ast.IfExp):
        return is_tensor_expr(node.body, known, returns) and is_tensor_expr(node.orelse, known, returns)
    if isinstance(node, ast.Call) and ast.unparse(node.func) in returns:
        return annotation_tensorness(returns[ast.unparse(node.func)]) is Tensorness.TENSOR
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _one_tensor(node.func.attr) and _tensor_callable(node.func.value, known, returns)
    return False


def tuple_elements(call: ast.expr, returns: Returns) -> list[ast.expr] | None:
    """The element annotations of a call annotated ``-> tuple[...]``, as written; None for any other."""
    annotation = returns.get(ast.unparse(call.func)) if isinstance(call, ast.Call) else None
    if not isinstance(annotation, ast.Subscript) or ast.unparse(annotation.value) not in _TUPLES:
        return None
    return annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]


def tuple_element(node: ast.Subscript, returns: Returns) -> ast.expr | None:
    """The annotation of ``call(...)[i]``, a constant index of a call annotated ``-> tuple[...]``."""
    elements = tuple_elements(node.value, returns)
    index = node.slice.value if isinstance(node.slice, ast.Constant) else None
    if elements is None or not isinstance(index, int) or not -len(elements) <= index < len(elements):
        return None
    return None if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements) else elements[index]


def _one_tensor(name: str) -> bool:
    """Its schema returns one tensor; a name outside the ATen table does unless it is a known Python-level one."""
    known = schema.one_tensor(name)
    return known if known is not None else name not in _NOT_ATEN


def _tensor_callable(owner: ast.expr, known: Known, returns: Returns) -> bool:
    """``owner.<fn>(...)`` is a tensor method or a function of ``torch`` (``torch.nn.functional`` too)."""
    root = owner
    while isinstance(root, ast.Attribute):
        root = root.value
    torch_like = isinstance(root, ast.Name) and root.id in _TORCH_ROOTS
    return torch_like or is_tensor_expr(owner, known, returns)


# torch.nn layers whose forward returns one tensor, as ``__init__`` makes them (``self.norm = nn.LayerNorm(h)``).
_ONE_TENSOR_LAYERS = frozenset(
    {
        "Linear",
        "LayerNorm",
        "RMSNorm",
        "GroupNorm",
        "BatchNorm1d",
        "BatchNorm2d",
        "Embedding",
        "Conv1d",
        "Conv2d",
        "Dropout",
        "Identity",
        "GELU",
        "SiLU",
        "ReLU",
        "Tanh",
        "Sigmoid",
        "Softmax",
    }
)
_TENSOR = ast.parse("torch.Tensor", mode="eval").body


def local_returns(tree: ast.Module, qualname: str, receiver: str | None, imported: Returns | None = None) -> Returns:
    """The return annotations a caller can see by spelling: the module's functions (``f``), in a method its
    class's methods (``self.f``) and the torch.nn layers its ``__init__`` assigns (``self.norm``); ``imported``:
    those of the run's functions the module imports (``codegen/index/returns.py``)."""
    owner = qualname.rpartition(".")[0]
    found: dict[str, ast.expr] = dict(imported or {})
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner]
    if receiver is not None and classes:
        for attr, made in scan.submodule_assignments(classes[0]).items():
            layer = made.split("(", 1)[0].rpartition(".")[2]
            if made.startswith(("nn.", "torch.nn.")) and layer in _ONE_TENSOR_LAYERS:
                found[f"{receiver}.{attr}"] = _TENSOR
    for name, fn in scan.functions_by_qualname(tree).items():
        if fn.returns is None:
            continue
        if "." not in name:
            found[name] = fn.returns
        elif receiver is not None and name.rpartition(".")[0] == owner:
            found[f"{receiver}.{name.rpartition('.')[2]}"] = fn.returns
    return found


def certain_tensors(fn: _Function, *, method: bool, returns: Returns) -> dict[ast.stmt, str]:
    """Each assignment of ``fn`` that binds a certain tensor, with the last name it binds one to."""
    return {stmt: kept[-1] for stmt, kept in certain_bindings(fn, method=method, returns=returns).items()}


def certain_bindings(fn: _Function, *, method: bool, returns: Returns) -> dict[ast.stmt, list[str]]:
    """Each assignment of ``fn`` that binds certain tensors, with the names it binds them to.

    A name bound anywhere else in ``fn`` to anything that is not certainly a tensor (another assignment,
    a loop variable, ``with ... as``) is left out everywhere: a later read of it may see that other value.
    """
    known = {p.name for p in signature_of(fn, method=method).params if p.tensor is Tensorness.TENSOR}
    found: dict[ast.stmt, list[ast.Name]] = {}
    for stmt in in_order(fn.body):
        for target, tensor in _bindings(stmt, known, returns):
            if tensor:
                known.add(target.id)
                found.setdefault(stmt, []).append(target)
            else:
                known.discard(target.id)
    sure = {id(t) for targets in found.values() for t in targets}
    unsure = {
        node.id
        for node in walked_of(fn, ast.Name)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in sure
    }
    names = {stmt: [t.id for t in targets if t.id not in unsure] for stmt, targets in found.items()}
    return {stmt: kept for stmt, kept in names.items() if kept}


def _bindings(stmt: ast.stmt, known: Known, returns: Returns) -> list[tuple[ast.Name, bool]]:
    """The names a plain assignment binds, each with whether the value it gets is certainly a tensor."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        target = stmt.target
        value = (
            ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value) if isinstance(stmt, ast.AugAssign) else stmt.value
        )
    else:
        return []
    if isinstance(target, ast.Name):
        return [(target, is_tensor_expr(value, known, returns))]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        kinds = _tuple_kinds(value, len(target.elts), returns, known)
        return list(zip(target.elts, kinds))  # type: ignore[arg-type]
    return []


def _tuple_kinds(value: ast.expr, width: int, returns: Returns, known: Known = frozenset()) -> list[bool]:
    """Which elements of a call annotated ``-> tuple[...]`` (or of a tensor method that returns tensors only)
    are tensors."""
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute) and schema.tensors_only(func.attr):
        if _tensor_callable(func.value, known, returns):
            return [True] * width
    elements = tuple_elements(value, returns)
    if elements is not None and len(elements) == width:
        return [annotation_tensorness(e) is Tensorness.TENSOR for e in elements]
    return [False] * width


def in_order(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements in source order, nested blocks included, not entering nested functions or classes."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                yield from in_order(block)
        for handler in getattr(stmt, "handlers", []):
            yield from in_order(handler.body)
