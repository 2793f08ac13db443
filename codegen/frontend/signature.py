"""What a decorated function's signature says: its parameters, which of them may carry tensors, its returns.

Tensor-ness comes from annotations where they exist (``tensorness.py``: ``Tensor`` is a tensor, ``int``/``bool``/a
class of the user's is not); ``Optional[Tensor]``, containers and unannotated parameters may hold tensors, so
generated code checks them at trace time (free under dynamo), and an unannotated flag with a literal default holds
none.
"""

from __future__ import annotations

import ast
import enum

import attrs

from codegen.frontend.tensorness import Tensorness, annotation_tensorness
from codegen.index.children import children
from codegen.index.walked import per_node

__all__ = [
    "NO_DEFAULT",
    "Param",
    "ParamKind",
    "Signature",
    "Tensorness",
    "annotation_tensorness",
    "is_static",
    "required_tensor_inputs",
    "returns_value",
    "signature_of",
    "tensor_inputs",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
NO_DEFAULT = "<no default>"
UNKNOWN_DEFAULT = "<unknown default>"


class ParamKind(enum.Enum):
    POSITIONAL_ONLY = "positional_only"
    POSITIONAL = "positional"
    VAR_POSITIONAL = "var_positional"
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"


@attrs.frozen(kw_only=True)
class Param:
    name: str
    kind: ParamKind
    tensor: Tensorness
    default: object = NO_DEFAULT  # a literal value, NO_DEFAULT, or UNKNOWN_DEFAULT (an expression)

    @property
    def has_default(self) -> bool:
        return self.default != NO_DEFAULT


@attrs.frozen(kw_only=True)
class Signature:
    """The parameters after the receiver (``self``/``cls``; a staticmethod has none)."""

    params: tuple[Param, ...]
    receiver: str | None = None

    def get(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.tensor is not Tensorness.NO)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


def is_static(fn: _Function) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def signature_of(fn: _Function, *, method: bool) -> Signature:
    """``fn``'s parameters; ``method``: it is defined in a class (a staticmethod then has no receiver).

    Read once per function node and ``method`` while the tree lives (the collector, the index and the
    planner all ask for the same functions): trees are never changed after parsing, and a signature is
    frozen.
    """
    return _method_signature(fn) if method else _function_signature(fn)


@per_node
def _method_signature(fn: _Function) -> Signature:
    return _read_signature(fn, method=True)


@per_node
def _function_signature(fn: _Function) -> Signature:
    return _read_signature(fn, method=False)


def _read_signature(fn: _Function, *, method: bool) -> Signature:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [
        _param(a, d, ParamKind.POSITIONAL_ONLY if i < len(args.posonlyargs) else ParamKind.POSITIONAL)
        for i, (a, d) in enumerate(zip(positional, defaults))
    ]
    if args.vararg:
        params.append(_container(_param(args.vararg, None, ParamKind.VAR_POSITIONAL)))
    params += [_param(a, d, ParamKind.KEYWORD_ONLY) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        params.append(_container(_param(args.kwarg, None, ParamKind.VAR_KEYWORD)))
    receiver = None
    if method and not is_static(fn) and params and params[0].kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL):
        receiver = params.pop(0).name
    return Signature(params=tuple(params), receiver=receiver)


def _container(param: Param) -> Param:
    """``*args: Tensor`` annotates each element: the parameter itself is a tuple (or dict) to walk."""
    return attrs.evolve(param, tensor=Tensorness.MAYBE) if param.tensor is Tensorness.TENSOR else param


def _param(arg: ast.arg, default: ast.expr | None, kind: ParamKind) -> Param:
    tensor = annotation_tensorness(arg.annotation)
    if default is not None and tensor is Tensorness.MAYBE and _literal(default) not in (None, UNKNOWN_DEFAULT):
        tensor = Tensorness.NO  # an unannotated flag with a literal default (``scale=2.0``)
    value = NO_DEFAULT if default is None else _literal(default)
    return Param(name=arg.arg, kind=kind, tensor=tensor, default=value)


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN_DEFAULT


def tensor_inputs(fn: _Function, *, method: bool) -> tuple[str, ...]:
    """Parameters that may carry tensors (``*args``/``**kwargs`` included: they are walked)."""
    return tuple(p.name for p in signature_of(fn, method=method).tensor_params)


def required_tensor_inputs(fn: _Function, *, method: bool) -> tuple[str, ...]:
    """The tensor inputs without a default that are not ``*args``/``**kwargs``."""
    return tuple(
        p.name
        for p in signature_of(fn, method=method).tensor_params
        if not p.has_default and p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
    )


def returns_value(fn: _Function) -> bool:
    """Whether some ``return`` of the body (not of a nested scope) gives a value other than None."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
        if not isinstance(node, _SCOPES):
            stack.extend(children(node))
    return False
