"""Writes ``torch_module_methods_table.py``: which methods of torch's module classes write their module's parameters
or buffers in place, read from the sources of ``torch.nn.modules`` in the installed torch.

    python -m codegen.lower.flow.torch_module_methods_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_module_methods_build --check  # exit 1 if the table differs

``self.norm.reset_running_stats()`` zeroes ``running_mean`` in place, ``self.proj.reset_parameters()`` refills
``weight``, ``model.to(...)`` and ``load_state_dict`` copy into every parameter: a method of a torch module may write
its state, and which one does is read from its body, not named by hand. A method writes when its body (nested functions
included) calls a tensor method whose ATen schema writes ``self`` (``zero_``, ``fill_``, ``copy_``, ``add_``:
``schema.writes_self``), a function named in place by torch's convention (``init.kaiming_uniform_``: a trailing
underscore), stores a tensor's ``data`` or ``grad``, calls a callable it was given for its effect (``apply(fn)`` runs
``fn(module)`` on each module, dropping the result), or calls a method that writes: ``self.m()`` resolved in its own
class and bases, any other object's ``.m()`` in ``Module``'s (``module._load_from_state_dict``). A method that calls
what a loop over the modules its object holds gives (``nn.Sequential``'s ``forward``: ``for module in self: input =
module(input)``) runs the module's children, and writes what they write: ``c``, unless its own body writes; one calling
the hooks or weak references it keeps (``Module._call_impl``, ``state_dict``) runs none, as torch's annotations say
(``torch_child_runs.py``). Both builders read the package once (``torch_module_sources.py``). The table lists each class
of the package with its bases there, and each of its own methods, ``w`` where it writes, ``c`` where it runs its
children; a call of ``torch.nn.functional`` writing the object's state only where the constructor was given an argument
(``nn.Embedding``'s ``forward`` and its ``max_norm``: ``functional_state_writes.py``) marks ``w:max_norm@3=``.
``torch_module_methods.py`` reads it. ``tests/flow/test_torch_module_methods.py`` rebuilds it from the pinned torch and
compares.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from codegen.lower.flow import schema
from codegen.lower.flow.functional_state_writes import functional_state_writes
from codegen.lower.flow.method_state_writes import method_state_writes, state_writes
from codegen.lower.flow.state_made_none import init_chain
from codegen.lower.flow.table_files import table_main
from codegen.lower.flow.torch_child_runs import runs_children
from codegen.lower.flow.torch_forward_runs import runs_forward
from codegen.lower.flow.torch_given_calls import given_through_calls
from codegen.lower.flow.torch_module_sources import TorchClass, method_home, torch_classes

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("torch_module_methods_table.py")
_HEADER = '''"""Which methods of torch's module classes write their parameters or buffers (written by
``torch_module_methods_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["BASES", "METHODS"]

'''


class _Reading:
    """The written methods of every class, to a fixed point (a method writes where one it calls does)."""

    def __init__(self, classes: dict[str, TorchClass]) -> None:
        self.classes = classes
        self.written: set[tuple[str, str]] = set()
        changed = True
        while changed:
            before = len(self.written)
            for name, cls in classes.items():
                self.written |= {(name, m) for m, fn in cls.methods.items() if self._writes(name, fn)}
            changed = len(self.written) != before
        self.children = {
            (n, m) for n, c in classes.items() for m, fn in c.methods.items() if runs_children(classes, n, fn)
        }
        self.forwards = self._forward_runs()
        self.given = {  # written where the constructor is given an argument (``nn.Embedding(..., max_norm=1.0)``)
            (n, m): found
            for n, c in classes.items()
            for m, fn in c.methods.items()
            if (n, m) not in self.written and (found := state_writes(fn, init_chain(classes, n)))
        }
        self.given = given_through_calls(classes, self.resolved, self.written, self.given)

    def _forward_runs(self) -> set[tuple[str, str]]:
        """The methods running their own object's ``forward`` (``torch_forward_runs.py``), to a fixed point."""
        found: set[tuple[str, str]] = set()
        while True:
            more = {(n, m) for n, c in self.classes.items() for m, fn in c.methods.items() if self._runs(n, fn, found)}
            if more <= found:
                return found
            found |= more

    def _runs(self, cls: str, fn: ast.FunctionDef, found: set[tuple[str, str]]) -> bool:
        return runs_forward(fn, lambda called: (self.resolved(cls, called), called) in found)

    def resolved(self, cls: str, method: str) -> str | None:
        """The class of ``cls``'s bases (itself first) that defines ``method``."""
        return method_home(self.classes, cls, method)

    def _writes(self, cls: str, fn: ast.FunctionDef) -> bool:
        own = fn.args.args[0].arg if fn.args.args else ""
        params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} - {own}
        stored = any(
            isinstance(n, ast.Attribute) and n.attr in ("data", "grad") and isinstance(n.ctx, ast.Store)
            for n in ast.walk(fn)
        )
        dropped = {id(s.value) for s in ast.walk(fn) if isinstance(s, ast.Expr)}  # calls made for their effect
        guarded = method_state_writes(fn, init_chain(self.classes, cls))  # through state None unless made a tensor
        calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and id(c) not in guarded]
        if "" in (functional_state_writes(fn, init_chain(self.classes, cls)) or []):
            return True  # a call of ``torch.nn.functional`` writing its state whatever it was made with
        return stored or any(self._call_writes(cls, fn, c, params if id(c) in dropped else set()) for c in calls)

    def _call_writes(self, cls: str, fn: ast.FunctionDef, call: ast.Call, params: set[str]) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in params or _in_place(func.id)
        if not isinstance(func, ast.Attribute):
            return False
        if schema.writes_self(func.attr) or (schema.writes_self(func.attr) is None and _in_place(func.attr)):
            return True
        mine = isinstance(func.value, ast.Name) and fn.args.args and func.value.id == fn.args.args[0].arg
        home = self.resolved(cls if mine else "Module", func.attr)
        return home is not None and (home, func.attr) in self.written


def _in_place(name: str) -> bool:
    """Torch's naming of a function writing its first argument (``kaiming_uniform_``, ``_no_grad_fill_``)."""
    return name.endswith("_") and not name.endswith("__")


def build() -> str:
    """The table's text for the installed torch."""
    reading = _Reading(torch_classes())
    bases = "".join(
        f'    "{name}": "{" ".join(b for b in cls.bases if b in reading.classes)}",\n'
        for name, cls in sorted(reading.classes.items())
    )
    methods = "".join(
        f'    "{name}.{m}": "{_kind(reading, name, m)}",\n'
        for name, cls in sorted(reading.classes.items())
        for m in sorted(cls.methods)
    )
    return (
        _HEADER
        + "# class -> its bases among these classes\nBASES: dict[str, str] = {\n"
        + bases
        + "}\n\n# class.method -> w: writes its module's parameters or buffers in place; c: runs the module's"
        + " children\n# (writes what they write); f: runs the object's own forward (writes and reads what it does);"
        + "\n# w:p@i: writes where the constructor is given its parameter p (i-th"
        + " after the\n# object; =: its default is None or False)\nMETHODS: dict[str, str] = {\n"
        + methods
        + "}\n"
    )


def _kind(reading: _Reading, cls: str, method: str) -> str:
    """``w``: the method writes its module's state; ``c``: it runs the module's children; ``f``: it runs the
    object's own ``forward``; "": none of these."""
    if (cls, method) in reading.given:
        return "w:" + ",".join(sorted(set(reading.given[(cls, method)])))
    if (cls, method) in reading.written:
        return "w"
    return "c" if (cls, method) in reading.children else "f" if (cls, method) in reading.forwards else ""


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_module_methods_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
