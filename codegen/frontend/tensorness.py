"""What an annotation says of a value: always a tensor, maybe one (walked and checked at trace time), or never.

``Tensor`` is a tensor; ``int``/``bool``/a class of the user's (attention metadata, a config) is not;
``Optional[Tensor]``, containers, torch's own types and a missing annotation may hold tensors. The collector reads
it for each parameter (``signature.py``), the planner for returns and locals (``tensors.py``, ``local_returns.py``).
"""

from __future__ import annotations

import ast
import enum

from codegen.index.unparsed import unparsed
from codegen.index.walked import per_node

__all__ = ["Tensorness", "annotation_tensorness"]

_SCALARS = frozenset({"int", "float", "bool", "str", "bytes", "None", "complex"})
_TENSORS = frozenset({"Tensor", "torch.Tensor"})


class Tensorness(enum.Enum):
    TENSOR = "tensor"  # annotated Tensor: always a tensor
    MAYBE = "maybe"  # unannotated, Optional, a container: walked and checked at trace time
    NO = "no"  # a scalar or another class: never passed to a stream call


def annotation_tensorness(annotation: ast.expr | None) -> Tensorness:
    if annotation is None:
        return Tensorness.MAYBE
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return Tensorness.MAYBE
    return _tensorness(annotation)


@per_node
def _tensorness(annotation: ast.expr) -> Tensorness:
    """What ``annotation`` says of a value, read once per node (a return annotation's elements are asked per use)."""
    text = unparsed(annotation)
    if text in _TENSORS:
        return Tensorness.TENSOR
    if text in _SCALARS or (isinstance(annotation, ast.Constant) and annotation.value is None):
        return Tensorness.NO
    if text.startswith(("torch.", "nn.")) or text in ("Any", "typing.Any", "object"):
        return Tensorness.MAYBE  # torch's own types (``torch.return_types.topk``) may hold tensors
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        return Tensorness.NO  # a class of the user's (metadata, config): its tensors outlive the call
    if isinstance(annotation, ast.BinOp) and all(
        annotation_tensorness(side) is Tensorness.NO for side in (annotation.left, annotation.right)
    ):
        return Tensorness.NO  # ``int | None``
    return Tensorness.MAYBE
