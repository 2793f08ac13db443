"""Writes ``torch_layer_reads_table.py``: which inputs the ``forward`` of each of torch's module classes surely reads
in an op, read from the sources of ``torch.nn.modules`` in the installed torch.

    python -m codegen.lower.flow.torch_layer_reads_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_layer_reads_build --check  # exit 1 if the table differs

A caller that hands a tensor to ``self.proj(x)`` (an ``nn.Linear``) reads its memory on its own stream right there:
``Linear.forward`` is ``return F.linear(input, self.weight, self.bias)``, one ATen op on ``input``. Not every layer
does: ``Identity`` returns its input, ``Flatten`` returns a view of it (``input.flatten(...)``: the schema's
``Tensor(a)``), and ``Dropout`` hands ``self.training`` to ``F.dropout``, which in eval returns its input as it
came. So a forward surely reads a parameter where every path through its body, before it returns, passes the
parameter to an ATen op of torch (a function of a ``torch`` module the file imports, ``F.linear``, ``torch.tanh``,
``_VF.lstm``, named by an ATen schema that is no view and reads more than metadata) that is not handed the module's
mode (``self.training``), or to a method of its class that surely reads it in turn (``self._conv_forward(input,
...)``). A branch that raises, a loop, ``with`` or ``try``, and a rebinding of the parameter end the path without a
read: those classes are read as reading nothing. ``torch_layer_reads.py`` reads the table; ``tests/flow/
test_torch_layer_reads.py`` rebuilds it from the pinned torch and compares. It stands apart from
``torch_module_methods_table.py`` (which methods write a module's state): one question per table.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from codegen.index.scan import dotted_name
from codegen.lower.flow import schema
from codegen.lower.flow.table_files import table_main
from codegen.lower.flow.torch_module_sources import TorchClass, inherited_method, torch_classes

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("torch_layer_reads_table.py")
_HEADER = '''"""Which inputs the ``forward`` of each of torch's module classes surely reads in an op (written by
``torch_layer_reads_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["READS"]

'''
_DEPTH = 8  # methods followed one inside another at most


class _Reading:
    """Whether a method of a class surely reads one of its parameters in an op (module docstring)."""

    def __init__(self, classes: dict[str, TorchClass]) -> None:
        self.classes = classes

    def reads(self, cls: str, fn: ast.FunctionDef, param: str, depth: int = 0) -> bool:
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        return depth <= _DEPTH and self._block(cls, fn, body, param, depth) is True

    def _block(self, cls: str, fn: ast.FunctionDef, block: list[ast.stmt], param: str, depth: int) -> bool | None:
        """True: every path reads ``param``; False: some path ends or rebinds it first; None: all go on unread."""
        for stmt in block:
            found = self._statement(cls, fn, stmt, param, depth)
            if found is not None:
                return found
        return None

    def _statement(self, cls: str, fn: ast.FunctionDef, stmt: ast.stmt, param: str, depth: int) -> bool | None:
        if isinstance(stmt, ast.If):
            if self._reads(cls, fn, stmt.test, param, depth):
                return True
            found = [self._block(cls, fn, b, param, depth) for b in (stmt.body, stmt.orelse)]
            return False if False in found else (True if found == [True, True] else None)
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) and stmt.value is not None:
            if self._reads(cls, fn, stmt.value, param, depth):
                return True
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Pass)):
            stores = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            return False if param in stores else None
        return False  # a return without the read, raise, loop, with, try, ...

    def _reads(self, cls: str, fn: ast.FunctionDef, node: ast.expr, param: str, depth: int) -> bool:
        return any(self._call_reads(cls, fn, c, param, depth) for c in _surely_run(node) if isinstance(c, ast.Call))

    def _call_reads(self, cls: str, fn: ast.FunctionDef, call: ast.Call, param: str, depth: int) -> bool:
        """``call`` is handed ``param`` itself and surely reads it: an ATen op of torch, or a method of ``cls``."""
        given = [a for a in (*call.args, *(k.value for k in call.keywords))]
        slots = [k for k, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == param]
        named = [k.arg for k in call.keywords if isinstance(k.value, ast.Name) and k.value.id == param]
        if not slots and not named:
            return False
        own = fn.args.args[0].arg if fn.args.args else ""
        if any(dotted_name(a) == f"{own}.training" for a in given):
            return False  # the module's mode decides what the op does (``F.dropout`` in eval: its input back)
        dotted = dotted_name(call.func) or ""
        root, _, rest = dotted.partition(".")
        if root in self.classes[cls].file.torch_modules and rest:
            op = rest.rpartition(".")[2]
            return not op.startswith("_") and _reads_data(op)
        if root == own and rest and "." not in rest:
            return self._method_reads(cls, rest, slots, named, depth)
        return False

    def _method_reads(self, cls: str, name: str, slots: list[int], named: list[str | None], depth: int) -> bool:
        found = inherited_method(self.classes, cls, name)
        if found is None:
            return False
        home, method = found
        params = [a.arg for a in method.args.args][1:]
        targets = [params[k] for k in slots if k < len(params)] + [n for n in named if n in params]
        return any(self.reads(home, method, p, depth + 1) for p in targets)


def _surely_run(node: ast.AST) -> list[ast.AST]:
    """``node`` and what runs whenever it does: not the later operands of ``and``/``or``, the branches of a choice,
    a lambda's or a comprehension's body."""
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return [node]
    if isinstance(node, ast.BoolOp):
        return [node, *_surely_run(node.values[0])]
    if isinstance(node, ast.IfExp):
        return [node, *_surely_run(node.test)]
    return [node, *(n for child in ast.iter_child_nodes(node) for n in _surely_run(child))]


def _reads_data(op: str) -> bool:
    """An ATen op by this name reads its input's data: every overload makes tensors, none a view of its input."""
    made = schema.one_tensor(op) or schema.tensors_only(op)
    return bool(made) and not schema.aliases_self(op) and not schema.metadata_only(op)


def build() -> str:
    """The table's text for the installed torch."""
    reading = _Reading(torch_classes())
    rows = []
    for name in sorted(reading.classes):
        found = inherited_method(reading.classes, name, "forward")
        if found is None:
            continue
        params = [a.arg for a in found[1].args.args][1:]
        read = [p if reading.reads(found[0], found[1], p) else f"({p})" for p in params]
        while read and read[-1].startswith("("):
            read.pop()
        rows.append(f'    "{name}": "{" ".join(read)}",\n')
    return (
        _HEADER
        + "# class -> its forward's parameters after self, in order, to the last it surely reads; (p): not read\n"
        + "READS: dict[str, str] = {\n"
        + "".join(rows)
        + "}\n"
    )


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_layer_reads_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
