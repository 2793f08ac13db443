"""The expressions whose memory a statement writes in place by its own spelling, for the caller's tensors and its
objects' state alike.

``h += 1`` and ``self.buf += 1`` write their target; ``h[0] = v`` and ``self.buf[0] = v`` the tensor stored into;
``h.add_(1)``, ``h.__iadd__(1)`` and ``self.buf[:, 0].copy_(t)`` the object of a method whose ATen op writes ``self``
(``Tensor(a!) self``, ``schema.py``; a name the table lacks when spelled as ATen spells its in-place ops, with a
trailing underscore), and ``torch.relu_(self.count)`` its first argument, that ``self`` in torch's function form
(the module it is reached through, ``torch``, is no tensor written); ``torch.add(a, b, out=h)`` what it takes as
``out=``; ``F.relu(h, inplace=True)`` its first argument where torch.nn.functional's table says the call's guards
hold (``F.dropout(h, 0.1, False, inplace=True)`` in eval writes nothing: ``torch_functional.py``). ``writes.py``
reads the names at the root of these (``h``, ``self``: a local written), ``state_writes.py`` the attribute chains
under them (``self.buf``: state written); what a function the call runs writes of its arguments is read in that
function (``param_writes.py``, ``call_state_writes.py``), and what a call at a chain's root hands out of an object's
state there too (``handed_results.py``: ``self.sub.buf().add_(1)``). One reading for both, so a spelling one of them
knows the other knows too.
"""

from __future__ import annotations

import ast

from codegen.index.scan import dotted_name
from codegen.lower.flow import schema
from codegen.lower.flow.aten_forms import aten_name, function_form
from codegen.lower.flow.torch_functional import guarded_writes
from codegen.lower.flow.torch_functional_table import FUNCTIONS
from codegen.lower.flow.view_roots import reads_attribute, view_base

__all__ = ["attribute_chain", "call_written", "node_written", "writes_in_place"]

_FUNCTIONAL = ("torch", "nn", "functional")


def writes_in_place(method: str) -> bool:
    """The tensor method ``method`` writes its object: the ATen schema of the op it runs says so (``__iadd__`` runs
    ``add_``: ``aten_forms.py``); a name the table does not hold (a custom op) does when spelled with a trailing
    underscore (``npu_op_``)."""
    known = schema.writes_self(aten_name(method))
    return known if known is not None else method.endswith("_") and not method.startswith("_")


def call_written(call: ast.Call) -> list[ast.expr]:
    """What ``call`` writes in place by its spelling: an in-place method's object, ``out=``, ``inplace=True``'s
    first argument."""
    receiver = _receiver(call)
    found = [receiver] if receiver is not None else []
    for keyword in call.keywords:
        if keyword.arg == "out":
            found += keyword.value.elts if isinstance(keyword.value, (ast.Tuple, ast.List)) else [keyword.value]
        elif keyword.arg == "inplace" and _is_true(keyword.value) and call.args:
            found += _inplace_written(call)
    return found


def _inplace_written(call: ast.Call) -> list[ast.expr]:
    """What a call given ``inplace=True`` writes: for a function of ``torch.nn.functional``'s table, what its body
    writes under the guards the call gives (``F.dropout(h, 0.1, False, inplace=True)``, in eval: nothing;
    ``torch_functional.py``), else its first argument (a function no table holds, as spelled)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in FUNCTIONS:
        return [call.args[0]]
    return [written for written, _ in guarded_writes(call, (*_FUNCTIONAL, name))]


def _receiver(call: ast.Call) -> ast.expr | None:
    """What an in-place op writes as its ``self`` (``schema.py``): the object of a method (``h.add_(1)``), or the
    first argument of torch's function form (``torch.relu_(h)``, ``torch.Tensor.add_(h, 1)``, ``torch.nn.init.
    zeros_(w)``), never the module it is reached through."""
    form, func = function_form(call), call.func
    if form is not None:  # ``torch.relu_(h)``, ``th.relu_(h)``, ``from torch import relu_``: the op's ``self``
        return form[1] if writes_in_place(form[0][-1]) else None
    return func.value if isinstance(func, ast.Attribute) and writes_in_place(func.attr) else None


def node_written(node: ast.AST) -> list[ast.expr]:
    """What ``node`` itself writes in place: an augmented target, an item stored into, a call's in-place write (an
    attribute stored, ``self.stash = t``, rebinds it: no memory written)."""
    if isinstance(node, ast.AugAssign):
        return [node.target]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t for t in targets if isinstance(t, ast.Subscript)]
    return call_written(node) if isinstance(node, ast.Call) else []


def attribute_chain(node: ast.expr) -> str | None:
    """The attribute chain under views and items (``self.buf`` of ``self.buf.view(-1)[0]``), if one; ``self.buf``
    of ``getattr(self, "buf")``, ``self.*`` where the name is computed."""
    while not isinstance(node, ast.Attribute) and (below := view_base(node)) is not None:
        if reads_attribute(node) and (root := dotted_name(below)):
            name = node.args[1]  # type: ignore[attr-defined]
            return (
                f"{root}.{name.value}"
                if isinstance(name, ast.Constant) and isinstance(name.value, str)
                else f"{root}.*"
            )
        node = below
    return dotted_name(node) if isinstance(node, ast.Attribute) else None


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True
